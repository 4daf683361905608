// Declarations of the data guard (./data-guard.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs.

export type DataClass = 'cells' | 'summaries';
export const DATA_CLASSES: readonly DataClass[];
export type ErrorWords = 'as_said' | 'withheld';
export const ERROR_WORDS: readonly ErrorWords[];
export const DATA_SWITCH_KEY: string;
export const DATA_SENTENCES: Readonly<{ SWITCH: string; REFUSED: string; UNCLASSIFIED: string; TURNED_ON: string; LEFT_OUT: string; ERROR_WITHHELD: string; NOTICE: string; NOTICE_ON: string; CAVEAT: string; DATASET_ON: string; DATASET_OFF: string }>;

/** What a summaries tool may send while the switch is on (the catalogue's `summaries_only`). */
export interface SummariesOnly {
  /** Paths in the result's data whose values may be sent: `column`, `groups[].mean`, `ids[]`. */
  result: string[];
  errors: ErrorWords;
}
/** A tool as the guard reads it: its name, what its result carries, and what it may send with the switch on. */
export interface GuardedTool {
  name: string;
  data?: DataClass | null;
  summaries_only?: SummariesOnly | null;
}
export interface GuardedResult {
  data?: unknown;
  image?: unknown;
  [key: string]: unknown;
}

export function dataClassOf(tool: GuardedTool | null | undefined): DataClass | null;
export function refusalBefore(tool: GuardedTool | null | undefined, on: boolean): string | null;
export function allowListOf(tool: GuardedTool | null | undefined): SummariesOnly | null;
export function leaveOut<T extends GuardedResult | null | undefined>(result: T, tool: GuardedTool | null | undefined, on: boolean): T;
export function errorSent(err: unknown, tool: GuardedTool | null | undefined, on: boolean): unknown;

export interface DataSwitch {
  readonly key: string;
  isOn(dataset: string): boolean;
  set(dataset: string, on: boolean): void;
  /** Dataset `to` shown after `from`: never set, it starts as the app says (`on`), else as `from`'s; returns whether it is on. */
  carry(from: string | null, to: string, on?: boolean): boolean;
  noticeSeen(dataset: string): boolean;
  seeNotice(dataset: string): void;
  subscribe(fn: () => void): () => void;
  follow(target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>): () => void;
}
export function createDataSwitch(options: { app: string; storage?: Pick<Storage, 'getItem' | 'setItem'> | null }): DataSwitch;
export function guardCall<T extends GuardedResult>(call: { tool: GuardedTool | null | undefined; dataset: string; dataSwitch: DataSwitch }, run: () => T | Promise<T>): Promise<T>;
