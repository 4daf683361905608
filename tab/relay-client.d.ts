// Declarations of the tab end's relay client (./relay-client.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs.

/** The tab protocol version both ends speak (from the relay's bundle). */
export const PROTOCOL_VERSION: number;
/** The digest of the bundle this copy was written from. */
export const BUNDLE_DIGEST: string;
/** The relay's close codes of the tab's socket. */
export const CLOSE: Readonly<{ ORIGIN_REFUSED: number; PROOF_FAILED: number; PROTOCOL_ERROR: number; OUTDATED: number; TOO_MANY_TABS: number }>;
/** What the tab answers a call to a tool the person's settings refuse. */
export const TOOL_REFUSED: string;
/** The consent's sentences, in the relay's words. */
export const CONSENT: Readonly<{ APPROVE_ONLY_YOURS: string; PLACE_UNKNOWN: string; LOOKALIKE: string; TAIL_CHARS: number; TAIL_ASK: string; TAIL_WRONG: string }>;
/** The text a tab signs to prove its pairing. */
export function proofText(origin: string, challenge: string): string;

/** What the person's settings make of a tool in the list agents see. */
export type Setting = 'asks' | 'runs' | 'refused';
export const SETTINGS: readonly Setting[];
export const OLD_SECRET_KEY: string;
export const KEY_DB: string;
export const KEY_STORE: string;
export const CONNECT_FRAGMENT: string;

export function normalCode(code: string | null | undefined): string;
export function connectCodeFromFragment(hash: string | null | undefined): string | null;
export function maskedCode(code: string, hidden?: number): string;
export function tailMatches(code: string, typed: string, chars?: number): boolean;
export function lookalikeSentence(app: string): string;

/** A catalogue tool as the bundle carries it. */
export interface CatalogueTool {
  name: string;
  title: string;
  description: string;
  safety: 'read' | 'change' | 'destructive';
  input: Record<string, unknown>;
}
export function defaultSetting(tool: Pick<CatalogueTool, 'safety'>): Setting;

/** An MCP tool definition as a tab states it, with the person's setting. */
export interface TabTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  setting: Setting;
}
export function catalogueTools(settings?: Record<string, Setting>): TabTool[];

/** Where a browser keeps its pairing keys, by relay origin. */
export interface KeyStore {
  get(origin: string): Promise<CryptoKeyPair | null>;
  put(origin: string, keyPair: CryptoKeyPair): Promise<void>;
}
export function indexedDbKeys(idb?: IDBFactory): KeyStore;
export function pairingKey(keys: KeyStore, origin: string): Promise<CryptoKeyPair>;
export function publicKeyOf(keyPair: CryptoKeyPair): Promise<Uint8Array>;
export function pairingIdOf(publicKey: Uint8Array): Promise<string>;
export function signProof(keyPair: CryptoKeyPair, origin: string, challenge: string): Promise<string>;

/** The connection a call came through. */
export interface CallConnection {
  id: string;
  kind: string;
  client: string;
  host: string;
}

/** A tool call from an agent. */
export interface Call {
  id: number;
  tool: string;
  args: Record<string, unknown>;
  agent: string;
  connection: CallConnection;
  turn: number;
  input?: { responses: Record<string, unknown>; state?: unknown };
}

/** What a handler answers. */
export interface CallResult {
  data?: unknown;
  image?: { data: string; mimeType: string; width: number; height: number };
  audio?: unknown;
  resource?: unknown;
  inputRequired?: Record<string, { method: string; params?: unknown }>;
  state?: unknown;
}

/** A connection as the relay lists it. */
export interface ConnectionInfo {
  id: string;
  client: string;
  host: string;
  created_ms: number;
  used_ms: number;
  place?: string;
}

/** Who asks for a connect code. */
export interface CodeDescription {
  client: string;
  host: string;
  verified?: string;
  age_ms?: number;
  place?: string;
  lookalike?: string;
}

export type Status = 'idle' | 'connecting' | 'connected' | 'waiting' | 'refused';

export interface RelayClientOptions {
  relay: string;
  handle(call: Call): Promise<CallResult | void> | CallResult | void;
  keys?: KeyStore;
  storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  relayOrigin?: string;
  WebSocket?: unknown;
  headers?: Record<string, string>;
  onStatus?(status: Status, detail?: Record<string, unknown>): void;
  onCancel?(id: number): void;
  focused?: boolean;
  bundle?: string;
  tools?: TabTool[];
  dataset?: string | null;
  onToolsRefused?(sentence: string): void;
  onRefused?(call: Call): void;
}

export class RelayClient {
  constructor(options: RelayClientOptions);
  readonly relay: string;
  readonly origin: string;
  status: Status;
  /** What came with the last status (`wait` in ms while waiting, `reason`, `code` once refused). */
  statusDetail: Record<string, unknown>;
  /** The pairing id the socket names (the public key's SHA-256, hex), once known. */
  pairing: string | null;
  /** The public pairing key the hello carries (base64url of the raw key), once known. */
  key?: string;
  tools: TabTool[];
  dataset: string | null;
  toolsRefused: string | null;
  /** Calls `fn(relay)` after each change of `status` or `toolsRefused`; returns a function that stops it. */
  subscribe(fn: (relay: RelayClient) => void): () => void;
  setTools(tools: TabTool[]): void;
  setView(view?: { dataset?: string | null }): void;
  settingOf(name: string): Setting | undefined;
  start(): void;
  stop(): void;
  setFocused(focused: boolean): void;
  asking(id: number, sentence: string): void;
  answered(id: number): void;
  step(): void;
  connections(): Promise<ConnectionInfo[]>;
  forget(id: string): Promise<ConnectionInfo[]>;
  describe(code: string): Promise<CodeDescription>;
  approve(code: string): Promise<{ client: string; host: string }>;
  deny(code: string): Promise<{ client: string; host: string }>;
}
