// Declarations of the data guard (./data-guard.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs.

export type DataClass = 'cells' | 'summaries';
export const DATA_CLASSES: readonly DataClass[];
export const SINGLE_CELL_STATISTICS: readonly string[];
export const DATA_SWITCH_KEY: string;
export const DATA_SENTENCES: Readonly<{ SWITCH: string; REFUSED: string; UNCLASSIFIED: string; TURNED_ON: string; LEFT_OUT: string; NOTICE: string; NOTICE_ON: string; CAVEAT: string }>;

/** A tool as the guard reads it: its name and what its result carries. */
export interface GuardedTool {
  name: string;
  data?: DataClass | null;
}
export interface GuardedResult {
  data?: unknown;
  image?: unknown;
  [key: string]: unknown;
}

export function dataClassOf(tool: GuardedTool | null | undefined): DataClass | null;
export function refusalBefore(tool: GuardedTool | null | undefined, on: boolean): string | null;
export function leaveOut<T extends GuardedResult | null | undefined>(result: T, on: boolean): T;

export interface DataSwitch {
  readonly key: string;
  isOn(dataset: string): boolean;
  set(dataset: string, on: boolean): void;
  noticeSeen(dataset: string): boolean;
  seeNotice(dataset: string): void;
  subscribe(fn: () => void): () => void;
  follow(target: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>): () => void;
}
export function createDataSwitch(options: { app: string; storage?: Pick<Storage, 'getItem' | 'setItem'> | null }): DataSwitch;
export function guardCall<T extends GuardedResult>(call: { tool: GuardedTool | null | undefined; dataset: string; dataSwitch: DataSwitch }, run: () => T | Promise<T>): Promise<T>;
