// Declarations of the record of what agents did (./record.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs. Importing the module defines `<tabrelay-record>`.

import type { Presence, PresenceCall } from './presence.js';
import type { CallResult } from './relay-client.js';

/** How much the record keeps: at most `entries` calls, none older than `ageMs` milliseconds. */
export interface RecordLimits {
  entries: number;
  ageMs: number;
}
export const RECORD_LIMITS: Readonly<RecordLimits>;
export const RECORD_DB: string;
export const RECORD_COLUMNS: readonly ['when', 'agent', 'connection', 'from', 'tool', 'decision', 'outcome', 'undone'];
export const DECISION_WORDS: Readonly<Record<'once' | 'connection' | 'always' | 'deny' | 'onceInApp' | 'denyInApp' | 'grantTab' | 'grantRevoked' | 'settings' | 'refused' | 'dataSwitch' | 'unanswered' | 'none', string>>;
/** The decisions of a call of the chat bar (a connection of kind 'chat') that differ: for this chat, or for the chat in this app. */
export const CHAT_DECISION_WORDS: Readonly<Record<'connection' | 'always' | 'grantTab' | 'grantRevoked', string>>;
/** The outcome of a call that did not run because of its decision. */
export const NOT_RUN: string;
export const SWITCH_OUTCOMES: Readonly<{ refused: string; withheld: string }>;
export const RECORD_SHOWS: Readonly<Record<'all' | 'asked' | 'refused' | 'undone', string>>;
export const RECORD_WORDS: Readonly<{ EMPTY: string; KEPT: string; CLEAR_ASK: string; CLEARED: string }>;

/** One call as the record keeps it: never its arguments, its result or an error's message. */
export interface RecordEntry {
  id: string;
  /** When the call came, in milliseconds since the epoch. */
  at: number;
  agent: string;
  connection: string | null;
  /** Where the connection was made from (its host, or "this browser"). */
  from: string | null;
  /** The tool's name (what an export keeps). */
  tool: string;
  /** The tool's title, shown in its place (null: none known, or kept by an older version). */
  title?: string | null;
  decision: string;
  /** The outcome in the tab end's words; null while the call is under way. */
  outcome: string | null;
  undone: boolean;
}
/** An export's row. */
export interface RecordRow {
  when: string;
  agent: string;
  connection: string;
  from: string;
  tool: string;
  decision: string;
  outcome: string;
  undone: boolean;
}
/** Where a record is kept. */
export interface RecordBackend {
  kind?: string;
  all(): Promise<RecordEntry[]>;
  put(entry: RecordEntry): Promise<void>;
  remove(ids: string[]): Promise<void>;
  clear(): Promise<void>;
}
export type RecordShow = 'all' | 'asked' | 'refused' | 'undone';

export function bounded(entries: RecordEntry[], now: number, limits?: RecordLimits): { keep: RecordEntry[]; drop: RecordEntry[] };
export function rowOf(entry: RecordEntry): RecordRow;
export function toJson(entries: RecordEntry[]): string;
export function toCsv(entries: RecordEntry[]): string;
export function csvCell(value: unknown): string;
export function filtered(entries: RecordEntry[], filter?: { agent?: string; show?: RecordShow }): RecordEntry[];
export function memoryBackend(): RecordBackend;
export function indexedDbBackend(indexedDB: IDBFactory, name: string): RecordBackend;

export interface AgentsRecord {
  readonly kind: string;
  readonly limits: RecordLimits;
  /** Resolves once the kept record is read. */
  readonly ready: Promise<void>;
  /** What it holds now, oldest first. */
  entries(): RecordEntry[];
  /** Resolves once what was kept so far is written. */
  written(): Promise<void>;
  subscribe(fn: (record: AgentsRecord) => void): () => void;
  /** Keeps the presence's calls (its `watch` events); returns a function that stops. */
  follow(presence: Pick<Presence, 'watch'>): () => void;
  /** The app's door as one that keeps every call, those it refuses before the presence too. */
  door<C extends PresenceCall, R = CallResult>(run: (call: C, fn: (signal: AbortSignal) => Promise<R>) => Promise<R>): (call: C, fn: (signal: AbortSignal) => Promise<R>) => Promise<R>;
  /** A call refused before the tab ran anything (the relay client's `onRefused`). */
  refused(call: PresenceCall, sentence?: string | null): void;
  /** Clears the record, in every tab of the app. */
  clear(): Promise<void>;
}
export function createRecord(options: { app: string; indexedDB?: IDBFactory | null; backend?: RecordBackend; limits?: RecordLimits; now?: () => number; channel?: typeof BroadcastChannel | null }): AgentsRecord;

/** `<tabrelay-record>`: the record with filters, Export JSON and CSV, and Clear. */
export class RecordElement extends HTMLElement {
  record: AgentsRecord | null;
  /** The entries the filters show, oldest first. */
  shown(): RecordEntry[];
}

declare global {
  interface HTMLElementTagNameMap {
    'tabrelay-record': RecordElement;
  }
}
