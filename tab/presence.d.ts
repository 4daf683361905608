// Declarations of the presence module (./presence.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs.

export type Decision = 'allow' | 'ask' | 'deny';
export type Mode = 'careful' | 'undoable' | 'read-only';
export type Choice = 'once' | 'connection' | 'always' | 'deny';

export const DECISIONS: readonly Decision[];
export const BASE_KINDS: readonly ['change', 'heavy'];
export const HEAVY_MS: number;
export const MODES: Readonly<Record<Mode, Readonly<{ title: string; change: Decision; heavy: Decision; confirm: Decision }>>>;
export const DEFAULT_MODE: Mode;
export const CHOICES: Readonly<Record<Choice, string>>;
/** The scope of a grant kept for every agent: calls through no connection. */
export const ALL_AGENTS: '*';
/** A grant kept for a verified client is scoped to this and its domain. */
export const CLIENT_SCOPE: 'client:';
/** A grant kept for the chat bar: its every conversation in this app. */
export const CHAT_SCOPE: 'chat:';
/** Until when each kind of grant lasts, in words. */
export const UNTIL: Readonly<{ tab: string; revoked: string }>;
/** What choosing a mode does to the rules and the grants. */
export const MODE_CHOICE: string;
/** How the mode reads once a kind's rule was changed. */
export const CUSTOM_MODE: string;
export const KIND_WORDS: Readonly<Record<string, string>>;
export const KIND_NAMES: Readonly<Record<string, string>>;
export type Risk = 'read' | 'undoable' | 'irreversible';
export const RISKS: readonly Risk[];
export const DID_KEPT: number;
/** A kind's name in words ("Deletes items"). */
export function kindName(kind: string, names?: Record<string, string>): string;
/** How heavy a call of `tool` is: irreversible with a confirm kind, undoable for another change, read. */
export function riskOf(tool: PresenceTool | null | undefined, options?: { confirmKinds?: Record<string, string[]> }): Risk;
export const LINES_KEPT: number;
export const STEPPED_KEPT: number;
/** Said on a line whose steps were made on a dataset no longer shown (`{dataset}`: its name). */
export const UNDO_ELSEWHERE: string;
export const PERMISSIONS_KEY: string;
export const SENTENCES: Readonly<{ STOPPED: string; CANCELLED: string; STOPPED_RUNNING: string; CANCELLED_RUNNING: string; WITHDRAWN: string; FORGOTTEN: string; AGENT_STOPPED: string }>;

/** The person's permissions as kept. */
export interface Settings {
  mode: Mode;
  kinds: Record<string, Decision>;
  tools: Record<string, Decision>;
  /** Grants kept until revoked: scope (a connection id, CLIENT_SCOPE and a verified domain, or ALL_AGENTS) → who and the tools granted. */
  grants: Record<string, { who: string; tools: string[] }>;
}

/** A grant as listed: `until` 'tab' (this connection until the tab closes) or 'revoked' (kept). */
export interface Grant {
  scope: string;
  who: string;
  tool: string;
  title: string;
  until: 'tab' | 'revoked';
}

/** One of a card's choices and its button's words (what it grants, to whom, until when). */
export interface ChoiceWords {
  choice: Choice;
  words: string;
}

/** A tool as the presence reads it. */
export interface PresenceTool {
  name: string;
  title?: string;
  description?: string;
  safety: 'read' | 'change' | 'destructive';
}

export interface Decided {
  decision: Decision;
  asked: string[];
  denied: string[];
  /** The grant that answered the asks: 'tab' (this connection until the tab closes), 'revoked' (kept until revoked), else null. */
  grant: 'tab' | 'revoked' | null;
}

export function strictest(decisions: Iterable<Decision>): Decision;
export function modeDecision(mode: Mode, kind: string): Decision;
export function kindsOf(tool: PresenceTool, options?: { confirmKinds?: Record<string, string[]>; estimateMs?: number | null }): string[];
export function readSettings(text: string | object | null): Settings;
export function kindDecision(settings: Settings, kind: string): Decision;
export function decide(input: { kinds: string[]; tool?: string; settings: Settings; connection?: string; scope?: string; grants?: Map<string, Set<string>> }): Decided;
export function granted(input: { tool?: string; settings: Settings; connection?: string; scope?: string; grants?: Map<string, Set<string>> }): boolean;
/** Which grant lets the tool's asking calls run: 'tab', 'revoked', or null. */
export function grantOf(input: { tool?: string; settings: Settings; connection?: string; scope?: string; grants?: Map<string, Set<string>> }): 'tab' | 'revoked' | null;
export function isCustom(settings: Settings): boolean;
export function grantScopeOf(call: PresenceCall): string;
export function grantWho(call: PresenceCall): string;
export function choicesOf(question: { call: PresenceCall; title?: string }): ChoiceWords[];
export function settingFor(tool: PresenceTool, settings: Settings, options?: { confirmKinds?: Record<string, string[]> }): 'runs' | 'asks' | 'refused';
export function deniedSentence(title: string, kinds: string[], words?: Record<string, string>): string;

/** The fields of a call the presence reads. */
export interface PresenceCall {
  id: number | string;
  tool: string;
  args?: unknown;
  agent?: string;
  connection?: { id: string; kind?: string; client?: string; host?: string; verified?: string } | null;
  turn?: number | null;
}
export function lineKeyOf(call: PresenceCall): string;

export interface PermissionStore {
  readonly key: string;
  settings(): Settings;
  setMode(mode: Mode): void;
  setKind(kind: string, decision: Decision): void;
  setTool(name: string, decision: Decision | null): void;
  grant(scope: string, who: string, tool: string): void;
  revoke(scope: string, tool?: string): boolean;
  subscribe(fn: (settings: Settings) => void): () => void;
  follow(target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>): () => void;
}
export function createPermissionStore(options: { app: string; storage?: Pick<Storage, 'getItem' | 'setItem'> | null }): PermissionStore;

/** A change of the person's settings, as `loosens` weighs it. */
export type SettingChange = { mode: Mode } | { kind: string; decision: Decision } | { tool: string; decision: Decision | null };
/** Whether `change` lets more run without asking than `settings` do now (it needs the person's presence). */
export function loosens(settings: Settings, change: SettingChange, kinds?: readonly string[]): boolean;
/** Whether a card's answer needs the person's presence: "Always", or any Allow of an irreversible call. */
export function answerNeedsPresence(risk: Risk, choice: Choice): boolean;

export class NotRun extends Error {
  constructor(sentence: string, outcome: string);
  outcome: string;
}

/** A question to the person about one call. */
export interface Question {
  id: number;
  call: PresenceCall;
  title: string;
  action: string;
  kinds: string[];
  why: string[];
  lineKey: string;
  sentence: string;
  /** The tool's own words for what it does ('' when it gave none). */
  description: string;
  risk: Risk;
  /** The kinds asked about, by name. */
  kindNames: string[];
  /** The items the call names (`itemsOf`), shown on the app's view while the card waits. */
  items: Array<number | string>;
  /** The card's choices, each with what it grants, to whom and until when. */
  choices: ChoiceWords[];
  /** The app's estimate of the call in milliseconds, or null. */
  estimateMs: number | null;
  /** The person's device is being asked to confirm an answer. */
  proving?: boolean;
  /** Why the last answer that needed the person's presence did not count ('' when none). */
  presenceRefused?: string;
}

/** One activity line: an agent's turn. */
export interface ActivityLine {
  key: string;
  agent: string;
  connection: PresenceCall['connection'];
  turn: number | null;
  running: string | null;
  /** When the running call started (ms since the epoch), and the app's estimate of it. */
  startedMs: number | null;
  estimateMs: number | null;
  waiting: number;
  steps: unknown[];
  /** What the turn read and changed (or what did not run), in words, oldest first. */
  did: Array<{ what: 'read' | 'changed' | 'not-run' | 'failed'; words: string }>;
  /** Why Undo turn could not undo it, once tried (or at once when its steps were another dataset's). */
  undoSaid: string | null;
  /** Whether Undo turn can take its steps back here (false once they were another dataset's). */
  undoable: boolean;
  stopped: boolean;
  /** The person stopped this line's agent: its calls are refused until they let it go on. */
  held: boolean;
  done: boolean;
  undone: boolean;
}

/** One event of a call (`presence.watch`). */
export type CallEvent =
  | { type: 'started'; call: PresenceCall }
  /** `grant`: what let it run without a card ('tab' or 'revoked'), null when the settings did (or after a card). */
  | { type: 'running'; call: PresenceCall; grant: 'tab' | 'revoked' | null }
  | { type: 'asking'; call: PresenceCall; question: Question }
  | { type: 'decided'; call: PresenceCall; choice: Choice; via: 'tab' | 'app' }
  | { type: 'ended'; call: PresenceCall; outcome: string }
  | { type: 'undone'; calls: PresenceCall[] };

export interface Presence {
  readonly store: PermissionStore;
  readonly canUndo: boolean;
  onAsking(question: Question): void;
  /** The person allowed the call asked about (never called after a Deny). */
  onAnswered(question: Question, choice: Choice): void;
  /** The items the oldest waiting card names; [] once none. */
  onShowItems(items: Array<number | string>): void;
  onStopped(line: ActivityLine): void;
  onGoOn(connection: string): void;
  settings(): Settings;
  /** The tool definitions, as given. */
  tools(): PresenceTool[];
  questions(): Question[];
  lines(): ActivityLine[];
  isStopped(connection: string): boolean;
  /** The tools granted for connection `id` until the tab closes. */
  grantsOf(connection: string): string[];
  /** Every grant, all agents' first. */
  grants(): Grant[];
  revoke(grant: Pick<Grant, 'scope' | 'tool' | 'until'>): boolean;
  /** Every grant revoked, the rules kept; returns how many went. */
  revokeAll(): number;
  isCustom(): boolean;
  /** Every kind as `mode` says, every grant taken back; returns how many went. */
  chooseMode(mode: Mode): number;
  /** Whether Undo turn of line `key` asks first (a later turn made steps). */
  undoAsks(key: string): boolean;
  /** The app shows dataset `name`: lines whose steps were another dataset's say at once they cannot be undone. */
  setDataset(name: string | null): void;
  kinds(): string[];
  wordsOf(kind: string): string;
  settingOf(name: string): 'runs' | 'asks' | 'refused';
  nameOf(kind: string): string;
  riskOf(name: string): Risk;
  /** Why the app refuses tool `name` before the permissions (its data switch), or null. */
  refusalOf(name: string): string | null;
  /** What the app's refusal depends on changed: the settings stated follow. */
  refresh(): void;
  subscribe(fn: (presence: Presence) => void): () => void;
  /** Hears each call's events (what ./record.js keeps); returns a function that stops. */
  watch(fn: (event: CallEvent) => void): () => void;
  /** The tools changed (./webmcp.js): their definitions and the confirm kinds their annotations give. */
  setTools(tools: PresenceTool[], kinds?: Record<string, string[]>): void;
  run<T>(call: PresenceCall, fn: (signal: AbortSignal) => T | Promise<T>): Promise<T>;
  /** The person's answer; a Promise where it needs their presence (`answerNeedsPresence`) and a check is set. */
  answer(id: number, choice: Choice): boolean | Promise<boolean>;
  /** The person answered call `id`'s card in the agent app (the local server's elicitation): as if clicked, never an Allow needing presence; false when no card of it waits. */
  answerInApp(id: number | string, choice: 'once' | 'deny'): boolean;
  /** The person's presence proven for `decision` about `subject`: '' once it is (or no check is set), else why not. */
  confirmed(decision: string, subject: string): Promise<string>;
  /** Whether `change` loosens the person's settings now. */
  loosens(change: SettingChange): boolean;
  /** What the person's side says of this browser's presence check (set by ./tabrelay.js). */
  presenceState?: 'device' | 'without' | 'refused' | 'off';
  cancel(id: number | string): void;
  stop(key: string): void;
  /** Connection `id`'s agent was stopped in another tab of the pairing: its lines here say so. */
  stoppedElsewhere(id: string | null | undefined): void;
  goOn(connection: string | null | undefined): boolean;
  forget(connection: string): void;
  withdrawAll(reason: string): void;
  undoTurn(key: string, options?: { confirmed?: boolean }): Promise<boolean>;
  dismiss(key: string): boolean;
}

/** Why a heavy call asks, with the app's estimate in seconds. */
export function heavyWords(words: string, estimateMs: number | null | undefined): string;

export interface PresenceOptions {
  app?: string;
  storage?: Pick<Storage, 'getItem' | 'setItem'> | null;
  store?: PermissionStore;
  tools?: PresenceTool[];
  confirmKinds?: Record<string, string[]>;
  kindWords?: Record<string, string>;
  kindNames?: Record<string, string>;
  /** The items a call names (ids), shown on the app's view while its card waits. */
  itemsOf?(call: PresenceCall): Array<number | string>;
  /** A refusal before the permissions (the data switch's sentence), or null. */
  refuses?(tool: PresenceTool): string | null;
  /** What a call read or changed, in words (default: its result's `data.summary`, or the tool's title). */
  saidOf?(call: PresenceCall, result: unknown): string | null;
  now?(): number;
  estimate?(call: PresenceCall): number | null;
  undoTurn?(steps: unknown[], line: ActivityLine): unknown;
  stepOf?(result: unknown): unknown;
  actionOf?(call: PresenceCall): string | null;
  /** Confirms the person's presence for `decision` about `subject` (./presence-check.js `confirm`); rejects with a sentence. */
  confirmPresence?: ((decision: string, subject: string) => Promise<unknown>) | null;
  /** The dataset shown (then `setDataset`): a turn's steps are undone only on the dataset they were made on. */
  dataset?: string | null;
}
export function createPresence(options: PresenceOptions): Presence;
