// Declarations of the one call that wires the tab end (./tabrelay.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs.

import type { RelayClient, Call, CatalogueTool, KeyStore } from './relay-client.js';
import type { Presence, PresenceCall, PresenceOptions } from './presence.js';
import type { DataSwitch, GuardedTool } from './data-guard.js';
import type { ToolBridge, WebMcpTool, ToolClient, ModelContextLike } from './webmcp.js';
import type { AgentsRecord } from './record.js';
import type { DrivenIndicator, DrivenBanner } from './driven.js';
import type { AgentsPanel } from './agents-panel.js';
import type { ConfirmCard, ActivityLines } from './presence-elements.js';
import type { PresenceCheck, PresenceCheckOptions } from './presence-check.js';
import type { Chat, ChatOptions } from './chat.js';

export const SOME_AGENT: string;
export const REFUSED_BY_SETTINGS: string;
export const WITHDRAWN: Readonly<{ closing: string; dataset: string }>;
export const NOT_STARTED: Readonly<{ address: string; insecure: string }>;
export const EVENTS: readonly ['call', 'items', 'status'];
export const ELEMENT_TAGS: Readonly<{ confirm: 'tabrelay-confirm-card'; activity: 'tabrelay-activity'; panel: 'tabrelay-agents' }>;

/** `address` when it is an http(s) URL (its href), else null. */
export function relayAddress(address: unknown): string | null;
/** A call's agent as the page names it (SOME_AGENT when it gave none). */
export function agentOf(call: Pick<PresenceCall, 'agent'> | null | undefined): string;

/** A tool as the catalogue describes it: its data class and allow-list guard it under the data switch. */
export type DescribedTool = CatalogueTool & Partial<GuardedTool>;
/** Runs a catalogue tool's call. */
export type RunTool = (name: string, input: Record<string, unknown>, client: ToolClient) => unknown;
export function webmcpToolOf(tool: DescribedTool | WebMcpTool, run?: RunTool): WebMcpTool;

/** What the `call` event carries: once a call ended, or was refused before it ran. */
export interface CallEvent {
  call: PresenceCall | Call;
  agent: string;
  tool: string;
  /** 'ok', the presence's outcome, `error: …`, or REFUSED_BY_SETTINGS. */
  outcome: string;
  ok: boolean;
}
export interface TabrelayEvents {
  call: CallEvent;
  /** The items the waiting card names; [] once none. */
  items: Array<number | string>;
  status: RelayClient;
}

export interface TabrelayOptions extends Pick<PresenceOptions, 'confirmKinds' | 'kindWords' | 'kindNames' | 'itemsOf' | 'estimate' | 'stepOf' | 'undoTurn' | 'actionOf' | 'saidOf'> {
  /** The relay's address (http or https); anything else leaves the relay off and the panel says why. */
  relay: string | null | undefined;
  /** The local server's address (`tabrelay-local` on the person's computer, such as `http://127.0.0.1:8790`; `localhost` is reached as 127.0.0.1): connected beside the relay, quietly retried while none runs. */
  local?: string | null;
  /** The app's name: permissions, data switches and the record are kept under it. */
  app: string;
  tools?: Array<DescribedTool | WebMcpTool>;
  run?: RunTool;
  dataset?: string | null;
  confirm?: ConfirmCard | string | null | false;
  activity?: ActivityLines | string | null | false;
  panel?: AgentsPanel | string | null | false;
  driven?: boolean | { title?: boolean; favicon?: boolean; banner?: boolean | DrivenBanner };
  record?: boolean;
  /** Where the browser has no platform authenticator: refuse the decisions that need the person's presence (default), or allow them with a warning. */
  withoutDevice?: 'refuse' | 'allow';
  credentials?: PresenceCheckOptions['credentials'];
  PublicKeyCredential?: PresenceCheckOptions['PublicKeyCredential'];
  modelContext?: ModelContextLike | null;
  /** The chat bar (./chat.js, loaded only then), drawn by the page's `<tabrelay-chat>` or `element`. */
  chat?: boolean | (Partial<Omit<ChatOptions, 'app' | 'presence' | 'handle' | 'tools'>> & { element?: HTMLElement | string | null });
  /** false: the relay waits for `start()`. */
  start?: boolean;
  window?: (Pick<Window, 'addEventListener' | 'removeEventListener'> & { isSecureContext?: boolean }) | null;
  document?: Document | null;
  storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  indexedDB?: IDBFactory | null;
  channel?: typeof BroadcastChannel | null;
  keys?: KeyStore;
  WebSocket?: unknown;
}

export interface Tabrelay {
  readonly relay: RelayClient | null;
  readonly presence: Presence;
  /** The person's presence check (null without a relay). */
  readonly presenceCheck: PresenceCheck | null;
  readonly dataSwitch: DataSwitch;
  readonly bridge: ToolBridge;
  readonly record: AgentsRecord | null;
  readonly driven: DrivenIndicator | null;
  readonly panel: AgentsPanel | null;
  /** The chat bar when the `chat` option asked for it, else null. */
  readonly chat: Promise<Chat> | null;
  /** Resolves once the tools given are registered (with the browser's WebMCP too). */
  readonly registered: Promise<unknown>;
  readonly dataset: string | null;
  register(tool: DescribedTool | WebMcpTool, options?: { signal?: AbortSignal }): Promise<void>;
  withdraw(name: string): void;
  /** Another dataset shown; one whose switch was never set starts on when `dataSwitch` is true, else as the one shown before. */
  setDataset(name: string | null, why?: string, options?: { dataSwitch?: boolean }): void;
  step(): void;
  start(): void;
  stop(): void;
  on<E extends keyof TabrelayEvents>(event: E, fn: (value: TabrelayEvents[E]) => void): () => void;
}

/** Wires the relay client, the presence, the data switch, the WebMCP bridge, the record, the driven sign and the page's elements. */
export function createTabrelay(options: TabrelayOptions): Tabrelay;
