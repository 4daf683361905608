// Declarations of the driven indicator (./driven.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs. Importing the module defines `<tabrelay-driven>`.

import type { Presence } from './presence.js';

/** Where the focus goes: an element, or a function returning one (or null). */
type FocusTarget = HTMLElement | (() => HTMLElement | null) | null;

export const DRIVEN_TITLES: Readonly<{ running: string; asking: string }>;
export const DRIVEN_WORDS: Readonly<{ running: string; asking: string; STOP: string; SHOW: string }>;
export const DRIVEN_ICONS: Readonly<{ running: string; asking: string }>;

/** Who drives the tab now: one per activity line with a call under way or waiting. */
export interface DrivenState {
  state: null | 'running' | 'asking';
  agents: { agent: string; key: string; asking: boolean }[];
}
export function drivenState(presence: Pick<Presence, 'questions' | 'lines'>): DrivenState;
export function agentsWords(agents: { agent: string }[]): string;
export function drivenTitle(state: DrivenState, title: string): string;

export interface DrivenIndicator {
  state(): DrivenState;
  /** Restores the app's title and favicon, and stops following the presence. */
  stop(): void;
}
/** Shows in the page when agents drive the tab; `false` turns a part off. */
export function createDrivenIndicator(options: { presence: Presence; document?: Document; title?: boolean; favicon?: boolean; banner?: boolean | DrivenBanner;
  /** The confirm card "Show the question" brings into view and focuses. */
  card?: (HTMLElement & { showQuestion(): boolean }) | null;
  /** Where the focus goes once the banner's pressed Stop went with its row. */
  returnFocus?: FocusTarget;
}): DrivenIndicator;

/** `<tabrelay-driven>`: the quiet banner. Parts: banner, row (row asking), words, show, stop. */
export class DrivenBanner extends HTMLElement {
  presence: Presence | null;
  card: (HTMLElement & { showQuestion(): boolean }) | null;
  returnFocus: FocusTarget;
  show(state: DrivenState): void;
}

declare global {
  interface HTMLElementTagNameMap {
    'tabrelay-driven': DrivenBanner;
  }
}
