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
/** Said for a call of a connection the person forgot (the relay says the same). */
export const FORGOTTEN: string;
/** Said for a call of an agent the person stopped, until they let it go on. */
export const AGENT_STOPPED: string;
/** The consent's sentences, in the relay's words. */
export const CONSENT: Readonly<{ APPROVE_ONLY_YOURS: string; LOOKALIKE: string; LINK_OPENED: string; LINK_CONFIRMING: string; LINK_WINDOW_BLOCKED: string; LINK_WINDOW_CLOSED: string; NOT_THIS_BROWSER: string; WARNINGS: Readonly<Record<NameWarning, string>> }>;
/** The text a tab signs to prove its pairing. */
export function proofText(origin: string, challenge: string): string;

/** What the person's settings make of a tool in the list agents see. */
export type Setting = 'asks' | 'runs' | 'refused';
export const SETTINGS: readonly Setting[];
export const OLD_SECRET_KEY: string;
export const KEY_DB: string;
export const KEY_STORE: string;
/** The fragment key of the waiting page's link (`#tabrelay-connect=REFERENCE`). */
export const CONNECT_FRAGMENT: string;
/** The `type` of what the relay's confirm page posts to the window that opened it. */
export const CONFIRM_MESSAGE: string;

/** A connect code as typed, read by the relay's rule (the bundle's `CODE_*`): its normal form, or null. */
export function connectCode(typed: string | null | undefined): string | null;
/** A waiting page's link reference, upper-cased as the relay reads it, or null. */
export function linkReference(text: string | null | undefined): string | null;
/** The key the relay's answer about a code or link is matched by (its normal form, else the text as sent). */
export function normalCode(code: string | null | undefined): string;
/** The waiting page's link reference in a URL fragment, or null. */
export function connectLinkFromFragment(hash: string | null | undefined): string | null;
/** `hash` without the link's key ('' when nothing else is left). */
export function fragmentWithoutLink(hash: string | null | undefined): string;
/** The link reference this page was loaded with, the first time it is asked; null after that. */
export function takeConnectLink(): string | null;
/** Opens a window for the relay's confirm page (from the person's press); null when blocked. */
export function openConfirmWindow(): Window | null;
/** Calls `fn(ok)` when the relay's confirm page reports; returns a function that stops listening. */
export function onConfirmed(relayOrigin: string, fn: (ok: boolean) => void): () => void;
export function lookalikeSentence(app: string): string;
/** The relay's warning about who asks for a code, or '' (`show` writes outside text as shown). */
export function nameWarningSentence(said: CodeDescription, show?: (text: string) => string): string;

/** A catalogue tool as the bundle carries it. */
/** A WebAuthn assertion of the person's presence, each part base64url. */
export interface PresenceAssertion {
  credential: string;
  client_data: string;
  authenticator: string;
  signature: string;
}
/** The pairing's presence credential: its id and raw P-256 public key, base64url. */
export interface PresenceKey {
  credential: string;
  key: string;
}

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

/**
 * Where a browser keeps its pairing keys, by relay origin: `put` keeps the pair stored first,
 * unless the stored one is unsound (`soundKey`), which it replaces.
 */
export interface KeyStore {
  get(origin: string): Promise<CryptoKeyPair | null>;
  put(origin: string, keyPair: CryptoKeyPair): Promise<void>;
}
export function indexedDbKeys(idb?: IDBFactory): KeyStore;
export function soundKey(pair: CryptoKeyPair | null | undefined): boolean;
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
  /** The domain that verified the client when the connection was made, if any. */
  verified?: string;
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
  /** The person stopped its agent: its calls are refused until they let it go on. */
  stopped?: boolean;
}

/** Who asks for a connect code. */
export interface CodeDescription {
  client: string;
  host: string;
  verified?: string;
  age_ms?: number;
  place?: string;
  /** The well-known app the name looks like or claims (with `name_warning`). */
  lookalike?: string;
  /** This browser's connections of the same client, each with when and where it started (absent: none). */
  connections?: ConnectionInfo[];
  /** What about the name should make the person look twice. */
  name_warning?: NameWarning;
}

/** The kinds of warning about a name. */
export type NameWarning = 'looks_like' | 'claims' | 'mixed_scripts' | 'not_latin';

/** `absent`: a quiet client's relay (the local server) is not running, or no longer. */
export type Status = 'idle' | 'connecting' | 'connected' | 'waiting' | 'refused' | 'absent';

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
  /** The person answered call `id`'s card in the agent app (only the local server says so). */
  onElicited?(id: number, choice: 'once' | 'deny'): void;
  /** The relay says connection `id` was forgotten (or revoked): drop its cards and calls. */
  onForgotten?(id: string): void;
  /** The person let connection `id`'s stopped agent go on (through `letGoOn`). */
  onGoOn?(id: string): void;
  focused?: boolean;
  bundle?: string;
  tools?: TabTool[];
  dataset?: string | null;
  onToolsRefused?(sentence: string): void;
  onRefused?(call: Call): void;
  /** Why a refused tool's call is refused, when the app says more than TOOL_REFUSED (its data switch). */
  refusalOf?(call: Call): string | null;
  /** A relay that may well not run (the local server): 'absent' until it answers, retried quietly. */
  quiet?: boolean;
}

/** The channel the browser's tabs of a relay say on which of them took agents' calls last. */
export const CALLS_CHANNEL: string;

export class RelayClient {
  constructor(options: RelayClientOptions);
  readonly relay: string;
  readonly origin: string;
  /** A relay that may well not run (the local server): 'absent' until it answers, retried quietly. */
  readonly quiet: boolean;
  /** The local server joined beside this relay (./local-relay.js `joinLocal`), if any. */
  local?: RelayClient;
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
  /** The relay's last list of this browser's connections (it also sends one unasked once a connection is made), as a stop, a go-on or a forgetting in any tab of the pairing changed it; null before the first. */
  connectionsList: ConnectionInfo[] | null;
  /** Calls `fn(relay)` after each change of `status` or `toolsRefused`; returns a function that stops it. */
  subscribe(fn: (relay: RelayClient) => void): () => void;
  setTools(tools: TabTool[]): void;
  setView(view?: { dataset?: string | null }): void;
  settingOf(name: string): Setting | undefined;
  start(): void;
  stop(): void;
  setFocused(focused: boolean): void;
  /** Whether agents' calls go to another tab of this browser's pairing (heard through `subscribe`). */
  readonly callsElsewhere: boolean;
  /** Brings agents' calls back to this tab (the person's press). */
  takeCalls(): void;
  /** `appMayAllow`: whether an agent app asked too (the local server's elicitation) may allow it, else only deny. */
  asking(id: number, sentence: string, appMayAllow?: boolean): void;
  answered(id: number): void;
  step(): void;
  connections(): Promise<ConnectionInfo[]>;
  forget(id: string): Promise<ConnectionInfo[]>;
  /** The person stopped connection `id`'s agent: its calls are refused until `letGoOn(id)`. */
  stopAgent(id: string | null | undefined): void;
  letGoOn(id: string): void;
  isStopped(id: string): boolean;
  describe(code: string): Promise<CodeDescription>;
  describeLink(link: string): Promise<CodeDescription>;
  /** `proof`: the person's presence proven for this code (./presence-check.js `approval`). */
  approve(code: string, proof?: PresenceAssertion | null): Promise<{ client: string; host: string }>;
  /** Resolves with the relay's confirm page (`confirm`), which this browser must open to approve. */
  approveLink(link: string, proof?: PresenceAssertion | null): Promise<{ client: string; confirm: string }>;
  /** Gives the relay the pairing's presence credential the person made; resolves with what it keeps. */
  enrolPresence(made: { credential: string; key: string; client_data: string; authenticator: string }): Promise<PresenceKey>;
  /** The pairing's presence credential as the relay holds it, or null. */
  presenceKey: PresenceKey | null;
  deny(code: string): Promise<{ client: string; host: string }>;
  denyLink(link: string): Promise<{ client: string; host: string }>;
  confirmAddress(ticket: string): string;
}
