// Declarations of the presence's elements (./presence-elements.js), checked by the TypeScript
// compiler in tests/js/package_types.test.mjs. Importing the module defines the elements.

import type { Presence, PresenceCall } from './presence.js';
import type { DataSwitch } from './data-guard.js';
import type { RelayClient, ConnectionInfo } from './relay-client.js';

export const CARD_ARM_MS: number;
export const RISK_WORDS: Readonly<Record<import('./presence.js').Risk, string>>;
/** A value given to a tool, in words (no JSON). */
export function valueInWords(value: unknown, depth?: number): string;
/** A call's arguments as [name, words] lines. */
export function argsInWords(args: unknown): Array<[string, string]>;
export function secondsWords(ms: number): string;
export function runningWords(line: { startedMs?: number | null; estimateMs?: number | null }, now?: number): string;
export function didWords(did: Array<{ words: string }> | null | undefined): string;
export const NAME_CHARS: number;
export const DECISION_WORDS: Readonly<Record<'allow' | 'ask' | 'deny', string>>;
export const CONNECTIONS_AGE_MS: number;
/** What a Forget asks before it acts (`{name}`: the agent app's). */
export const FORGET_ASK: string;
export function ago(ms: number, now?: number): string;
export function shown(text: unknown, chars?: number): string;
/** Whether the person is typing in `el`: a text field or editable text that holds something. */
export function typingIn(el: Element | null | undefined): boolean;
/** Gives the focus to `target` when it can take it; returns whether it did. */
export function focusOn(target: HTMLElement | (() => HTMLElement | null) | null | undefined): boolean;
export function askerOf(call: Pick<PresenceCall, 'agent' | 'connection'>): string;

declare class PresenceElement extends HTMLElement {
  presence: Presence | null;
  render(): void;
}
/** `<tabrelay-confirm-card>`: parts card, what, tool, risk, who, why, details, args, items, about, about-title, description, choices, once, connection, always, deny, presence, more. */
export class ConfirmCard extends PresenceElement {
  /** Where the focus goes once the card is answered, when it did not come from a field. */
  returnFocus: HTMLElement | (() => HTMLElement | null) | null;
  /** Brings the question shown into view with the focus on it; false when none shows. */
  showQuestion(): boolean;
}
/** `<tabrelay-activity>`: parts lines, line (acting or done), text, buttons, stop, go-on, undo, dismiss, ask-undo, keep, undo-anyway. */
export class ActivityLines extends PresenceElement {}
/** `<tabrelay-permissions>`: parts mode-row, mode, mode-hint, mode-result, kinds, kind-rows, kind-row, kind. */
export class PermissionSettings extends PresenceElement {}
/** `<tabrelay-grants>`: parts title, groups, group, who, grant, grant-text, revoke, revoke-all, revoke-all-ask, revoke-all-yes, revoke-all-no, empty, result. */
export class GrantsList extends PresenceElement {
  /** The connections as listed: a connection's grants are headed by its name. */
  connections: Pick<ConnectionInfo, 'id' | 'client' | 'host'>[];
}
/** `<tabrelay-connections>`: parts head, refresh, list, item, who, unverified, when, forget, forget-ask, forget-yes, forget-no, go-on, empty, result. */
export class ConnectionsList extends HTMLElement {
  relay: RelayClient | null;
  readonly list: ConnectionInfo[] | null;
  refresh(): Promise<void>;
  render(list: ConnectionInfo[]): void;
}

/** `<tabrelay-data-switch>`: parts switch-row, switch, now, notice, notice-text, got-it, caveat, dataset-changed. */
export class DataSwitchElement extends HTMLElement {
  dataSwitch: DataSwitch | null;
  datasetId: string | null;
  render(): void;
}

/** How many finished turns `<tabrelay-activity>` shows before the older ones fold (behind its part `fold`, which counts them). */
export const FINISHED_SHOWN: number;
/** The lines in the order they show (acting or stopped first, then finished, newest first), and how many finished ones fold. */
export function linesShown<L extends Pick<import('./presence.js').ActivityLine, 'key' | 'done' | 'held'>>(lines: L[], options?: { unfolded?: boolean; keep?: string[] }): { shown: L[]; folded: number };

declare global {
  interface HTMLElementTagNameMap {
    'tabrelay-confirm-card': ConfirmCard;
    'tabrelay-activity': ActivityLines;
    'tabrelay-permissions': PermissionSettings;
    'tabrelay-data-switch': DataSwitchElement;
    'tabrelay-connections': ConnectionsList;
    'tabrelay-grants': GrantsList;
  }
}
export {};
