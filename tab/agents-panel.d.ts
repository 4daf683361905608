// Declarations of the Agents panel (./agents-panel.js), checked by the TypeScript compiler in
// tests/js/package_types.test.mjs. Importing the module defines `<tabrelay-agents>` (and the
// elements of ./presence-elements.js it is made of).

import type { Presence } from './presence.js';
import type { DataSwitch } from './data-guard.js';
import type { RelayClient } from './relay-client.js';
import type { ConnectionsList } from './presence-elements.js';
import type { AgentsRecord } from './record.js';
import type { PresenceCheck } from './presence-check.js';

/** A tool's own choice beside its kinds, in words: `kinds` (none), `ask`, `deny`. */
export const TOOL_CHOICES: Readonly<{ kinds: string; ask: string; deny: string }>;
/** Said in a tab whose agents' calls went to another tab of the app in this browser. */
export const CALLS_ELSEWHERE: string;
/** Said once the person took the calls back. */
export const CALLS_BACK: string;
/** What a tool's calls do now, in words. */
export const NOW_WORDS: Readonly<{ runs: string; asks: string; refused: string }>;
export const NOW_SWITCH_WORDS: string;
/** What a connection approved now will be able to do, short (counts by how calls weigh, no titles), or null. */
export function abilitiesWords(presence: import('./presence.js').Presence | null | undefined): string | null;
/** What a connection approved now will be able to do, tool by tool (titles), or null. */
export function abilitiesList(presence: import('./presence.js').Presence | null | undefined): string | null;
/** The connector address's hint: for an https relay (REMOTE), for a loopback one (LOCAL, then LOCAL_REACH). */
export const ADDRESS_WORDS: Readonly<{ REMOTE: string; LOCAL: string; LOCAL_REACH: string }>;
/** Whether an address names this computer (localhost, 127.0.0.0/8, ::1). */
export function isLoopback(address: string): boolean;
/** A request's age is said once it is this old (milliseconds). */
export const SAY_AGE_AFTER_MS: number;
/** When and where a request started, only where it tells the person something; '' or a sentence after a space. */
export function startedWords(said: { age_ms?: number; place?: string }, now?: number): string;
export const CODE_CHARS: number;
/** Said where who asks will be, while the relay is asked about the link. */
export const ASKING_WHO: string;
export const DESCRIBE_AFTER_MS: number;
/** A whole connect code as the relay reads it, or null. */
export function wholeCode(text: string | null | undefined): string | null;
/**
 * The status line's words for a relay status, after "Relay <address>:" (`stopped` with
 * `detail.reason` too; `connected` with `detail.agents` 0 says it waits for an agent app).
 */
export function statusWords(state: string, detail?: { wait?: number; reason?: string; code?: number; agents?: number }): string;

/**
 * `<tabrelay-agents>`: the relay's status and the connector address with Copy, the connect code
 * entry and approval, the connections with Forget, the data switch, the mode and each kind,
 * and each tool's own choice. Parts: group (with agents or rules), heading, status-line, relay,
 * status, calls-elsewhere (fixed at the window's top while shown), calls-elsewhere-text, take-calls,
 * calls-back, address-row, address-lead, address, copy, copy-result, address-reach, code-form,
 * code-label, code, link-box, link-opened, show-link, asker, lookalike, already, can-do,
 * can-do-text, can-do-details, can-do-title, can-do-list, decide, approve, deny (both disabled
 * until the panel says who asks), result, code-hint, confirm-link, connections, grants,
 * rules-hint, data-switch, permissions, tools-details, tools-title, tools, tool-row, tool-choice, tool-now,
 * tools-result, record; the composed elements' parts prefixed `connections-`, `data-`, `permissions-`,
 * `record-` (the record's section shows once `record` is set).
 */
export class AgentsPanel extends HTMLElement {
  relay: RelayClient | null;
  presence: Presence | null;
  dataSwitch: DataSwitch | null;
  datasetId: string | null;
  readonly connections: ConnectionsList;
  /** The record of what agents did (createRecord), shown in its own section. */
  record: AgentsRecord | null;
  /** The person's presence check (./presence-check.js): approvals carry its proof. */
  presenceCheck: PresenceCheck | null;
  /** Says the relay is stopped and why, when the app did not start it. */
  showStatus(state: 'stopped' | 'idle', detail?: { reason?: string }): void;
  /** Fills in the code of the waiting page's link (`#tabrelay-connect=CODE`), if any. */
}

declare global {
  interface HTMLElementTagNameMap {
    'tabrelay-agents': AgentsPanel;
  }
}
export {};
