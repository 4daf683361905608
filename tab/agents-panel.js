// The Agents panel: the person's whole side of the relay as one drop-in element,
// `<tabrelay-agents>`, composed of the ready elements of ./presence-elements.js.
//
//   import { AgentsPanel } from './agents-panel.js';
//   const panel = document.querySelector('tabrelay-agents');
//   Object.assign(panel, { relay, presence, dataSwitch, datasetId: 'orders-2026' });
//
// It shows, in an open shadow root with stable `part`s an app styles
// (`tabrelay-agents::part(group)`, `::part(approve)`, and the composed elements' parts with a
// prefix: `::part(connections-forget)`, `::part(permissions-mode)`, `::part(data-switch)`):
// - the relay's status line and the connector address to paste into Claude or ChatGPT, with Copy;
//   when agents' calls went to another tab of this browser, it says so, with Take the calls back here;
// - the connect code entry and the approval dialog: once a whole code is typed (or, for a page
//   opened with the waiting page's link, once the person presses Show who asks), who asks (its
//   verified domain, or its name as the app gave it, not verified), how long ago and from where
//   the request started, this client's connections here already (when and where each started),
//   a warning when the name looks like a well-known app's (or claims one it is not verified
//   as, mixes alphabets, or has no Latin letter), in the relay's words;
//   Approve and Deny. A typed whole code approves with the press; a link approves only once
//   the relay's window, opened by the press, finds this is the browser that opened the waiting
//   page (else the relay asks for the whole code typed);
// - the connections (`<tabrelay-connections>`) with Forget, and every grant made on a card
//   (`<tabrelay-grants>`), under all agents or its connection, with Revoke;
// - the data switch (`<tabrelay-data-switch>`), the mode and each kind (`<tabrelay-permissions>`)
//   and each tool's own choice (as its kinds say, ask first, or refuse), with what its calls do now
//   (folded under Each tool unless the person has made one);
// - once the app sets `record` (./record.js), what agents did (`<tabrelay-record>`, parts
//   prefixed `record-`): filters, Export JSON and CSV, Clear.
// Every control has an accessible name and a visible focus. The relay's status comes from the
// RelayClient itself (`relay.subscribe`); `showStatus(state, {reason})` says why it is stopped
// when the app never started it. Nothing is approved without the person's press.

import { takeConnectLink, openConfirmWindow, onConfirmed, nameWarningSentence, connectCode, CONSENT } from './relay-client.js';
import { CODE_LEN, SETTING_WORDS, LOCAL_REACH, WHO_ASKS } from './generated/bundle.js';
import { ago, shown } from './presence-elements.js';
import { MODES, HEAVY_MS, kindDecision } from './presence.js';
import { DATA_SENTENCES } from './data-guard.js';
import { PRESENCE, PRESENCE_SENTENCES } from './presence-check.js';
import './record.js';

/** A tool's own choice beside its kinds: none (its kinds decide), ask first, or refuse. */
export const TOOL_CHOICES = Object.freeze({ kinds: 'As its kinds say', ask: 'Ask me first', deny: 'Refuse' });
/** What a tool's calls do now, in words, by its setting (the bundle's). */
export const NOW_WORDS = SETTING_WORDS;
/** What a tool refused by the dataset's switch does now. */
export const NOW_SWITCH_WORDS = `refused while “${DATA_SENTENCES.SWITCH}” is on`;

/** A request's age is said once it is this old: younger, it is the one the person just started. */
export const SAY_AGE_AFTER_MS = 60_000;

/**
 * When and where a request started, in words, only where it tells the person something: its age
 * once a minute old or more (a request the person did not just start), where it came from when the
 * relay knows; else nothing.
 */
export function startedWords(said, now = Date.now()) {
  const old = Number.isFinite(said.age_ms) && said.age_ms >= SAY_AGE_AFTER_MS;
  const place = said.place ? shown(said.place) : '';
  if (old && place) return ` It started ${ago(now - said.age_ms, now)}, from ${place}.`;
  if (old) return ` It started ${ago(now - said.age_ms, now)}.`;
  return place ? ` It came from ${place}.` : '';
}

/** Up to `n` titles, "A, B and C" or "A, B, … and 4 more". */
function titles(list, n = 12) {
  const head = list.slice(0, n);
  const more = list.length - head.length;
  if (more > 0) return `${head.join(', ')} and ${more} more`;
  return head.length < 2 ? head.join('') : `${head.slice(0, -1).join(', ')} and ${head[head.length - 1]}`;
}

/** How a tool's calls weigh (presence.riskOf), counted in the consent's short words. */
const RISK_COUNTS = Object.freeze({
  read: ['that reads', 'that read'],
  undoable: ['whose changes can be undone', 'whose changes can be undone'],
  irreversible: ['whose changes cannot be undone', 'whose changes cannot be undone'],
});

/** The tools under the presence's settings: runs, asks, refused (by the person), switched (by the dataset's switch). */
function toolGroups(presence) {
  const groups = { runs: [], asks: [], refused: [], switched: [] };
  for (const t of presence.tools()) {
    const setting = presence.settingOf(t.name);
    if (setting === 'refused' && presence.refusalOf?.(t.name)) groups.switched.push(t);
    else (groups[setting] || groups.refused).push(t);
  }
  return groups;
}

/** The mode's title, with ", with your own choices" once the person made some. */
function modeTitle(settings) {
  const own = Object.keys(settings.kinds || {}).length || Object.keys(settings.tools || {}).length;
  return `${MODES[settings.mode]?.title ?? settings.mode}${own ? ', with your own choices' : ''}`;
}

/** "3 tools (2 that read, 1 whose changes cannot be undone)", or "2 tools that read". */
function counted(presence, tools) {
  const by = new Map();
  for (const t of tools) {
    const risk = presence.riskOf?.(t.name) ?? 'undoable';
    by.set(risk, (by.get(risk) || 0) + 1);
  }
  const risks = Object.keys(RISK_COUNTS).filter((r) => by.has(r));
  const many = tools.length === 1 ? 0 : 1;
  const count = `${tools.length} tool${many ? 's' : ''}`;
  // One kind: "3 tools that read"; several: "3 tools (2 that read, 1 whose changes …)".
  if (risks.length === 1) return `${count} ${RISK_COUNTS[risks[0]][many]}`;
  return `${count} (${risks.map((r) => `${by.get(r)} ${RISK_COUNTS[r][by.get(r) === 1 ? 0 : 1]}`).join(', ')})`;
}

/**
 * What a connection approved now will be able to do, short, from the presence's settings: how
 * many tools run without asking, how many ask first and how many are refused, each count by how
 * its calls weigh (read, undoable, cannot be undone). The titles are in `abilitiesList`. Null
 * without a presence or tools.
 */
export function abilitiesWords(presence) {
  if (!presence?.tools?.()?.length) return null;
  const groups = toolGroups(presence);
  const parts = [];
  if (groups.runs.length) parts.push(`${counted(presence, groups.runs)} without asking you`);
  if (groups.asks.length) parts.push(`${counted(presence, groups.asks)} only once you allow each call`);
  const can = parts.length ? `it can use ${parts.join('; ')}` : 'it cannot use any tool';
  const refused = groups.refused.length + groups.switched.length;
  return `Under your mode “${modeTitle(presence.settings())}”, ${can}${refused ? `; ${refused} refused` : ''}.`;
}

/**
 * What a connection approved now will be able to do, tool by tool, in words: which tools run
 * without asking, which ask first, which are refused (by the person's choice, or by the
 * dataset's switch while it is on). Null without a presence or tools.
 */
export function abilitiesList(presence) {
  if (!presence?.tools?.()?.length) return null;
  const settings = presence.settings();
  const groups = toolGroups(presence);
  const named = (list) => titles(list.map((t) => `“${shown(t.title || t.name)}”`));
  const parts = [];
  if (groups.runs.length) parts.push(`use without asking you: ${named(groups.runs)}`);
  if (groups.asks.length) parts.push(`use only once you allow each call: ${named(groups.asks)}`);
  const refused = [];
  if (groups.refused.length) refused.push(`${named(groups.refused)} (you refuse them)`);
  if (groups.switched.length) refused.push(`${named(groups.switched)} (refused while “${DATA_SENTENCES.SWITCH}” is on)`);
  const can = parts.length ? `It will be able to ${parts.join('; ')}.` : 'It will not be able to use any tool.';
  const cannot = refused.length ? ` It will not be able to use ${refused.join('; ')}.` : '';
  const heavy = kindDecision(settings, 'heavy');
  const heavyWords = heavy === 'allow' ? '' : ` A call the app estimates at ${Math.round(HEAVY_MS / 1000)} s or more ${heavy === 'ask' ? 'asks you first' : 'is refused'}.`;
  return `${can}${cannot}${heavyWords} You can change this under “What agents may do” at any time.`;
}
/** Said in a tab whose agents' calls went to another tab of the app in this browser. */
export const CALLS_ELSEWHERE = 'Agents’ calls now go to another tab of this app in this browser (the one opened or focused last), not to this one.';
/**
 * The connector address's hint: where agent apps reach it. A loopback address (this computer's)
 * is reached only by agent apps on this computer; Claude and ChatGPT on the web reach a relay
 * deployed at an https address.
 */
export const ADDRESS_WORDS = Object.freeze({
  REMOTE: 'Add this tab to Claude or ChatGPT as a connector with this address:',
  LOCAL: 'Connector address:',
  /** The relay's connector page says the same (the bundle's). */
  LOCAL_REACH,
});

/** Whether `address` names this computer (localhost, 127.0.0.0/8, ::1): only agent apps running here reach it. */
export function isLoopback(address) {
  let host;
  try {
    host = new URL(address).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]' || host === '0.0.0.0';
}
/** Said once the person took the calls back. */
export const CALLS_BACK = 'Agents’ calls come to this tab again.';
/** A connect code's letters and digits (dashes and spaces aside): the bundle's `CODE_LEN`. */
export const CODE_CHARS = CODE_LEN;
/** Said where who asks will be, while the relay is asked about the link. */
export const ASKING_WHO = 'Asking the relay who asks…';
/** A whole code is described once typing has paused this long. */
export const DESCRIBE_AFTER_MS = 300;

/** The composed elements' parts, exported by the panel with a prefix. */
const INNER_PARTS = {
  connections: ['head', 'refresh', 'list', 'item', 'who', 'unverified', 'when', 'forget', 'forget-ask', 'forget-yes', 'forget-no', 'go-on', 'empty', 'result'],
  data: ['switch-row', 'switch', 'now', 'notice', 'notice-text', 'got-it', 'caveat', 'dataset-changed'],
  permissions: ['mode-row', 'mode', 'mode-hint', 'mode-result', 'kinds', 'kind-rows', 'kind-row', 'kind'],
  record: ['kept', 'filters', 'agent-filter', 'show', 'list', 'entry', 'when', 'who', 'tool', 'decision', 'outcome', 'undone-mark', 'empty', 'actions', 'export-json', 'export-csv', 'clear', 'clear-ask', 'clear-yes', 'clear-no', 'result'],
  grants: ['title', 'groups', 'group', 'who', 'grant', 'grant-text', 'revoke', 'revoke-all', 'revoke-all-ask', 'revoke-all-yes', 'revoke-all-no', 'empty', 'result'],
};
const exported = (prefix) => INNER_PARTS[prefix].map((p) => `${p}: ${prefix}-${p}`).join(', ');

/**
 * A whole code as the relay reads it (capitals, no dashes or spaces, O as 0, I and L as 1), or
 * null: the relay client's `connectCode`, by the bundle's rule. The relay answers with this form,
 * and the relay client matches answers by it.
 */
export function wholeCode(text) {
  return connectCode(text);
}

/**
 * The status line's words for a relay status, after "Relay <address>:" (only the connected
 * state says "connected", and says it is this tab, to the relay; with `detail.agents` 0, that it
 * waits for an agent app; while it waits to try again, what that means for the person).
 */
export function statusWords(state, detail = {}) {
  switch (state) {
    case 'connected':
      return detail.agents === 0 ? 'this tab is connected to it, waiting for an agent app' : 'this tab is connected to it';
    case 'connecting':
      return 'connecting…';
    case 'waiting':
      // What it means for the person, not the socket's state: who cannot reach the tab, what
      // still works without the relay, and that nothing is asked of them.
      return `out of reach: agent apps such as Claude or ChatGPT cannot reach this tab until it is back (trying again by itself in ${Math.max(1, Math.ceil((detail.wait || 0) / 1000))} s); a chat in this app or an agent in this browser still works`;
    case 'refused':
      return `refused: ${detail.reason || `the relay closed the connection (code ${detail.code})`}`;
    case 'stopped':
      return `stopped: ${detail.reason}`;
    case 'idle':
      return 'starting…';
    case 'absent':
      return 'not running';
    default:
      return 'stopped';
  }
}

const CSS = `
  :host { display: grid; gap: 1rem; align-content: start; color: #1d1d1f; }
  :host([hidden]) { display: none; }
  [part~=group] { background: #fff; border: 1px solid #d8d8dc; border-radius: .5rem; padding: 1rem; min-width: 0; }
  h2 { margin: 0 0 .5rem; font-size: 1.05rem; }
  summary { margin: .75rem 0 0; font-size: .95rem; font-weight: 600; cursor: pointer; }
  p { margin: .5rem 0 0; }
  code { font-family: ui-monospace, monospace; font-size: .9em; overflow-wrap: anywhere; }
  button { font: inherit; padding: .4rem .9rem; border-radius: .3rem; border: 1px solid #0b5cad; background: #0b5cad; color: #fff; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  button.quiet { background: #fff; color: #0b5cad; }
  button.small { padding: .2rem .6rem; font-size: .9rem; }
  :focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  input { flex: 1 1 10rem; min-width: 0; font: inherit; font-family: ui-monospace, monospace; padding: .4rem .5rem; border: 1px solid #8a8a90; border-radius: .3rem; }
  select { font: inherit; padding: .2rem .3rem; border: 1px solid #8a8a90; border-radius: .3rem; background: #fff; max-width: 100%; }
  [part=status] { font-weight: 600; }
  /* Where the person looks, wherever the page is scrolled: at the top of the window (beneath the
     driven banner and the card, z-index 10, which say more urgent things). */
  [part=calls-elsewhere] { position: fixed; top: .5rem; left: .5rem; right: .5rem; z-index: 9; max-width: 40rem; margin: 0 auto; padding: .5rem .75rem; border-left: 4px solid #f2a900; background: #fff9e6; box-shadow: 0 .25rem 1rem rgba(0,0,0,.25); border-radius: .3rem; }
  [part=calls-back]:empty { margin: 0; }
  [part=status][data-state=connected] { color: #0a7a3d; }
  [part=status][data-state=refused] { color: #b3261e; }
  .hint, [part=result], [part=tools-result] { color: #5b5b60; font-size: .9rem; }
  [part=tools-result] { min-height: 1.4em; }
  [part=tools-result]:empty { min-height: 0; margin: 0; }
  form { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .75rem; }
  form label { width: 100%; font-weight: 600; }
  form > p, form > div { width: 100%; margin: 0; }
  form > p:empty, form > [hidden] { display: none; }
  [part=decide] { display: flex; flex-wrap: wrap; gap: .5rem; }
  /* Scrolled into view with room around it, not flush with the window's edge. */
  [part=decide], form > [part=result] { scroll-margin: 1rem; }
  [part=asker], [part=already], [part=can-do] { overflow-wrap: anywhere; }
  [part=asker]:focus { outline: none; }
  [part=asker]:focus-visible { outline: 3px solid #f2a900; }
  [part=can-do] { font-size: .9rem; }
  [part=can-do] summary { display: inline; margin: 0; font-size: .9rem; font-weight: 400; color: #0b5cad; }
  [part=can-do] details[open] { display: block; }
  [part=can-do] details { display: inline; }
  [part=lookalike] { padding: .4rem .6rem; border-left: 4px solid #b3261e; background: #fff8f7; color: #7a1a14; }
  tabrelay-connections, tabrelay-grants { margin-top: 1rem; border-top: 1px solid #d8d8dc; padding-top: .75rem; }
  tabrelay-data-switch { margin: .75rem 0; padding-bottom: .75rem; border-bottom: 1px solid #d8d8dc; }
  tabrelay-permissions { font-size: .9rem; }
  ul { list-style: none; margin: .5rem 0 0; padding: 0; font-size: .9rem; }
  li { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: center; justify-content: space-between; padding: .3rem 0; border-top: 1px solid #d8d8dc; }
  li:first-child { border-top: 0; }
  li label { flex: 1 1 12rem; overflow-wrap: anywhere; }
  [part=tool-now] { width: 100%; color: #5b5b60; font-size: .85rem; }
`;

const Base = globalThis.HTMLElement || class {};

export class AgentsPanel extends Base {
  #root;
  #relay = null;
  #presence = null;
  /** The person's presence check (./presence-check.js), set by the app: approvals carry its proof. */
  presenceCheck = null;
  #unsubscribe = [];
  /** The state shown while the app has no relay to start (`showStatus`). */
  #stopped = null;
  /**
   * The codes described (normalized) and what the relay said: {client, host, …}, {sentence},
   * or null while it is asked. Each describe is one of a code's few tries: a code is asked once.
   */
  #described = new Map();
  #describeTimer = null;
  /** Counts Approve and Deny presses, so a late description does not talk over them. */
  #decisions = 0;
  /** The code requests one after another: the relay client keeps one per code. */
  #codeTurn = Promise.resolve();
  /** The waiting page's link reference this page was loaded with (never the code). */
  #linked = null;
  /** Whether the person pressed to see who asks for the link. */
  #linkShown = false;
  /** The person pressed Show who asks: the focus goes to who asks once it is said. */
  #focusAsker = false;
  /** Whether an Approve or Deny is being asked of the relay. */
  #deciding = false;
  /**
   * The link whose approval this browser could not give (not the waiting page's): what was said
   * about it stays while the person types the whole code, until a whole code is described.
   */
  #awaitingWhole = null;
  /** Connections calls came through that the list was refreshed for. */
  #seen = new Set();
  /** The relay's list last shown as it pushed it. */
  #pushed = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${CSS}</style>
    <section part="group agents" aria-labelledby="agents-title">
      <h2 part="heading" id="agents-title">Agents</h2>
      <p part="status-line">Relay <code part="relay" id="relay"></code>: <span part="status" id="status" role="status" tabindex="-1">starting…</span></p>
      <p part="local-line" id="local-line" hidden>Local server <code part="local" id="local"></code>: <span part="local-status" id="local-status" role="status">not running</span></p>
      <p part="calls-elsewhere" id="calls-elsewhere" role="status" hidden><span part="calls-elsewhere-text" id="calls-elsewhere-text"></span> <button part="take-calls" id="take-calls" class="small" type="button">Take the calls back here</button></p>
      <p part="calls-back" id="calls-back" class="hint" aria-live="polite"></p>
      <p part="address-row" class="hint"><span part="address-lead" id="address-lead"></span> <code part="address" id="connector-address"></code> <button part="copy" id="copy-address" class="quiet small" type="button" aria-label="Copy the connector address">Copy</button> <span part="copy-result" id="copy-result" aria-live="polite"></span> <span part="address-reach" id="address-reach"></span></p>
      <form part="code-form" id="approve-form" aria-label="Approve or deny a connect code">
        <label part="code-label" for="code">Connect code</label>
        <input part="code" id="code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="ABCDE-FGHJK" aria-describedby="code-asker code-lookalike code-can-do code-hint">
        <p part="link-box" id="link-box" hidden><span part="link-opened" id="link-opened"></span> <button part="show-link" id="show-link" class="quiet small" type="button">Show who asks</button></p>
        <p part="asker" id="code-asker" aria-live="polite" tabindex="-1"></p>
        <p part="lookalike" id="code-lookalike" role="alert" hidden></p>
        <p part="already" id="code-already" hidden></p>
        <div part="can-do" id="code-can-do" hidden><span part="can-do-text" id="can-do-text"></span> <details part="can-do-details" id="can-do-details"><summary part="can-do-title">Which tools</summary><p part="can-do-list" id="can-do-list"></p></details></div>
        <span part="decide" id="decide"><button part="approve" id="approve" type="submit" disabled>Approve</button> <button part="deny" id="deny" class="quiet" type="button" disabled>Deny</button></span>
        <p part="result" id="approve-result" aria-live="polite" tabindex="-1"></p>
        <p part="code-hint" id="code-hint" class="hint"></p>
      </form>
      <tabrelay-connections part="connections" id="connections" exportparts="${exported('connections')}"></tabrelay-connections>
      <tabrelay-grants part="grants" id="grants" exportparts="${exported('grants')}"></tabrelay-grants>
    </section>
    <section part="group rules" aria-labelledby="rules-title">
      <h2 part="heading" id="rules-title">What agents may do</h2>
      <p part="rules-hint" class="hint">Choose a mode, or Ask, Allow or Deny for each kind of call; the strictest of a call's kinds decides. Agents see the tools you refuse as unavailable.</p>
      <tabrelay-data-switch part="data-switch" id="data-switch" exportparts="${exported('data')}"></tabrelay-data-switch>
      <tabrelay-permissions part="permissions" id="permissions" exportparts="${exported('permissions')}"></tabrelay-permissions>
      <details part="tools-details" id="tools-details">
        <summary part="tools-title" id="tools-title">Each tool</summary>
        <ul part="tools" id="settings" aria-labelledby="tools-title"></ul>
      </details>
      <p part="tools-result" id="settings-result" aria-live="polite"></p>
    </section>
    <section part="group record" aria-labelledby="record-title" id="record-section" hidden>
      <h2 part="heading" id="record-title">What agents did</h2>
      <tabrelay-record part="record" id="record" exportparts="${exported('record')}"></tabrelay-record>
    </section>`;
    const $ = (id) => this.#root.getElementById(id);
    $('code-hint').textContent = `An agent that asks to use this tab shows a connect code on its waiting page. ${CONSENT.APPROVE_ONLY_YOURS}`;
    $('link-opened').textContent = CONSENT.LINK_OPENED;
    $('show-link').addEventListener('click', () => this.#showLink());
    $('approve-form').addEventListener('submit', (event) => this.#approve(event));
    $('deny').addEventListener('click', () => this.#deny());
    $('copy-address').addEventListener('click', () => this.#copyAddress());
    $('calls-elsewhere-text').textContent = CALLS_ELSEWHERE;
    $('take-calls').addEventListener('click', () => {
      this.#relay?.takeCalls();
      $('calls-back').textContent = CALLS_BACK;
      // The pressed button went: the focus stays on what says so, where the page is scrolled
      // (the notice was at the top of the window, wherever that was).
      $('status').focus({ preventScroll: true });
    });
    $('code').addEventListener('input', () => {
      // Typing in the field leaves the link: a whole code typed needs no extra step.
      if (this.#linked) this.#dropLink();
      this.#codeEdited(false);
    });
    $('settings').addEventListener('change', (event) => this.#toolChanged(event));
    // A Forget makes "Connected to …" stale: it goes.
    $('connections').addEventListener('tabrelay-forgot', () => {
      const result = $('approve-result');
      if (result.dataset.connected) {
        result.textContent = '';
        delete result.dataset.connected;
      }
    });
    // A connection's grants are headed by its name as the connections list shows it; the status
    // says whether an agent app is connected yet.
    $('connections').addEventListener('listed', () => {
      $('grants').connections = $('connections').list;
      this.#showRelay();
    });
    this.#showAddress();
  }

  #el(id) {
    return this.#root.getElementById(id);
  }

  /** The app's RelayClient: its status, its connections, and the codes it approves. */
  get relay() {
    return this.#relay;
  }
  set relay(relay) {
    this.#unsubscribe.forEach((f) => f());
    this.#unsubscribe = [];
    this.#relay = relay || null;
    this.#el('connections').relay = this.#relay;
    this.#listen();
    this.#showAddress();
    this.#showRelay();
  }

  /** The app's presence (./presence.js): the permissions, the tools' own choices. */
  get presence() {
    return this.#presence;
  }
  set presence(presence) {
    this.#presence = presence || null;
    this.#el('permissions').presence = this.#presence;
    this.#el('grants').presence = this.#presence;
    this.#el('connections').presence = this.#presence;
    this.#unsubscribe.forEach((f) => f());
    this.#unsubscribe = [];
    this.#listen();
    this.#renderTools(true);
  }

  /** The app's data switch (./data-guard.js createDataSwitch). */
  get dataSwitch() {
    return this.#el('data-switch').dataSwitch;
  }
  set dataSwitch(value) {
    this.#el('data-switch').dataSwitch = value;
  }
  /** The shown dataset's identity (the data switch is kept per dataset). */
  get datasetId() {
    return this.#el('data-switch').datasetId;
  }
  set datasetId(value) {
    this.#el('data-switch').datasetId = value;
  }
  /** The record of what agents did (./record.js createRecord), shown in its section. */
  get record() {
    return this.#el('record').record;
  }
  set record(value) {
    this.#el('record').record = value;
    this.#el('record-section').hidden = !value;
  }
  /** The connections list (`<tabrelay-connections>`). */
  get connections() {
    return this.#el('connections');
  }

  connectedCallback() {
    if (!this.#unsubscribe.length) this.#listen();
    this.#offerLink();
  }
  disconnectedCallback() {
    this.#unsubscribe.forEach((f) => f());
    this.#unsubscribe = [];
  }

  #listen() {
    if (this.#relay?.subscribe) {
      this.#unsubscribe.push(
        this.#relay.subscribe(() => {
          this.#showRelay();
          this.#showPushedList();
        }),
      );
    }
    if (this.#presence) {
      this.#unsubscribe.push(
        this.#presence.subscribe(() => {
          this.#renderTools(false);
          this.#noteConnections();
          this.#showCanDo();
        }),
      );
    }
  }

  /** Says the relay is stopped and why (the app did not start it: no address, not a secure page). */
  showStatus(state, detail = {}) {
    this.#stopped = { state, detail };
    this.#showRelay();
  }

  #showAddress() {
    const address = this.#relay ? `${new URL(this.#relay.relay).origin}/` : '';
    this.#el('relay').textContent = this.#relay ? shown(this.#relay.relay) : 'none';
    this.#el('connector-address').textContent = address || 'none (the page has no relay: its configured address is not an http or https address)';
    this.#el('copy-address').disabled = !address;
    // A loopback address is reached only by agent apps on this computer: the hint says which.
    const local = isLoopback(address);
    this.#el('address-lead').textContent = local ? ADDRESS_WORDS.LOCAL : ADDRESS_WORDS.REMOTE;
    this.#el('address-reach').textContent = local ? ADDRESS_WORDS.LOCAL_REACH : '';
  }

  #showRelay() {
    const status = this.#el('status');
    const relay = this.#relay;
    const useRelay = relay && !(this.#stopped && relay.status === 'idle');
    const state = useRelay ? relay.status : (this.#stopped?.state ?? 'idle');
    const detail = useRelay ? relay.statusDetail || {} : (this.#stopped?.detail ?? {});
    const was = status.dataset.state;
    status.dataset.state = state;
    // Whether an agent app is connected, once the connections were listed (unknown before).
    const agents = state === 'connected' ? this.#el('connections').list?.length : undefined;
    const words = statusWords(state, { ...detail, agents });
    if (status.textContent !== words) status.textContent = words;
    if (relay?.toolsRefused) this.#el('settings-result').textContent = relay.toolsRefused;
    // The local server beside the relay (./local-relay.js), when the app names one.
    const local = relay?.local;
    this.#el('local-line').hidden = !local;
    if (local) {
      this.#el('local').textContent = shown(local.relay);
      this.#el('local-status').dataset.state = local.status;
      this.#el('local-status').textContent = statusWords(local.status, local.statusDetail || {});
      if (local.status === 'connected' && this.#el('local-status').dataset.was !== 'connected') this.#el('connections').refresh();
      this.#el('local-status').dataset.was = local.status;
    }
    const elsewhere = Boolean(useRelay && relay.callsElsewhere);
    if (elsewhere) this.#el('calls-back').textContent = '';
    this.#el('calls-elsewhere').hidden = !elsewhere;
    if (state === 'connected' && was !== 'connected') {
      this.#el('connections').refresh();
      this.#describeCode(); // A code typed or linked before the tab was connected.
    }
  }

  /** The relay listed the connections unasked (one was just made): the list shows them at once. */
  #showPushedList() {
    const list = this.#relay?.connectionsList;
    if (!list || list === this.#pushed) return;
    this.#pushed = list;
    this.#el('connections').render(list);
  }

  /**
   * What the connection asked about will be able to do, while the dialog says who asks: the
   * counts, and the tools by title under Which tools.
   */
  #showCanDo() {
    const asking = Boolean(this.#el('code-asker').dataset.code);
    const words = asking ? abilitiesWords(this.#presence) : null;
    const list = asking ? abilitiesList(this.#presence) : null;
    const text = this.#el('can-do-text');
    if (text.textContent !== (words || '')) text.textContent = words || '';
    if (this.#el('can-do-list').textContent !== (list || '')) this.#el('can-do-list').textContent = list || '';
    if (!words) this.#el('can-do-details').open = false;
    this.#el('code-can-do').hidden = !words;
  }

  /**
   * Approve and Deny act only on a request the dialog says who asks for: off until then, and
   * while the relay is asked.
   */
  #armDecide() {
    const code = this.#fieldCode();
    const off = this.#deciding || !code || this.#el('code-asker').dataset.code !== code;
    this.#el('approve').disabled = off;
    this.#el('deny').disabled = off;
  }

  /** A call came through a connection the list does not show (made after it was drawn): list again. */
  #noteConnections() {
    const list = this.#el('connections').list;
    if (!list || !this.#presence || this.#relay?.status !== 'connected') return;
    for (const line of this.#presence.lines()) {
      const id = line.connection?.id;
      if (id == null || this.#seen.has(id) || list.some((c) => c.id === id)) continue;
      this.#seen.add(id);
      this.#el('connections').refresh();
      return;
    }
  }

  /** One row per tool: its title and name, its own choice, and what a call does now. */
  #renderTools(fresh) {
    const ul = this.#el('settings');
    const presence = this.#presence;
    const tools = presence?.tools?.() ?? [];
    if (fresh || ul.children.length !== tools.length) {
      ul.replaceChildren(
        ...tools.map((t) => {
          const li = document.createElement('li');
          li.setAttribute('part', 'tool-row');
          const label = document.createElement('label');
          label.htmlFor = `setting-${t.name}`;
          label.textContent = shown(t.title || t.name);
          const code = document.createElement('code');
          code.textContent = t.name;
          label.append(' ', code);
          const select = document.createElement('select');
          select.id = `setting-${t.name}`;
          select.dataset.tool = t.name;
          select.setAttribute('part', 'tool-choice');
          for (const [value, words] of Object.entries(TOOL_CHOICES)) select.append(new Option(words, value));
          const now = document.createElement('span');
          now.setAttribute('part', 'tool-now');
          now.id = `now-${t.name}`;
          select.setAttribute('aria-describedby', now.id);
          li.append(label, select, now);
          return li;
        }),
      );
    }
    if (!presence) return;
    const settings = presence.settings();
    // Each tool's own choice is folded away, unless the person has made one.
    if (fresh) this.#el('tools-details').open = Object.keys(settings.tools).length > 0;
    for (const select of ul.querySelectorAll('select[data-tool]')) {
      const name = select.dataset.tool;
      const value = settings.tools[name] || 'kinds';
      if (select.value !== value) select.value = value;
      const now = this.#el(`now-${name}`);
      const setting = presence.settingOf(name);
      const words = setting === 'refused' && presence.refusalOf?.(name) ? NOW_SWITCH_WORDS : NOW_WORDS[setting];
      if (now.textContent !== words) now.textContent = words;
    }
  }

  /** The person changed a tool's own choice: kept (the app states its tools again on the store's change). */
  #toolChanged(event) {
    const select = event.target.closest('select[data-tool]');
    if (!select || !this.#presence) return;
    const name = select.dataset.tool;
    const decision = select.value === 'kinds' ? null : select.value;
    const result = this.#el('settings-result');
    // A looser choice gives agents power: only once the person's device confirmed it.
    const looser = this.#presence.loosens({ tool: name, decision });
    if (looser) result.textContent = PRESENCE_SENTENCES.ASKING;
    const asked = looser ? this.#presence.confirmed(PRESENCE.SETTING, JSON.stringify({ tool: name, decision })) : Promise.resolve('');
    asked.then((refused) => {
      if (refused) {
        result.textContent = refused;
        this.#renderTools(true); // the select shows the choice kept
        return;
      }
      this.#presence.store.setTool(name, decision);
      const setting = this.#presence.settingOf(name);
      result.textContent = `${name} ${setting === 'refused' && this.#presence.refusalOf?.(name) ? NOW_SWITCH_WORDS : NOW_WORDS[setting]}.`;
    });
  }

  /**
   * Offers the waiting page's link this page was loaded with (taken once: a fragment set later
   * is never read). Nothing is asked of the relay until the person presses Show who asks.
   */
  #offerLink() {
    const link = takeConnectLink();
    if (!link) return;
    this.#linked = link;
    this.#linkShown = false;
    this.#el('link-box').hidden = false;
    this.#el('show-link').focus();
  }

  /** The person pressed Show who asks: the link is described (one of its few tries). */
  #showLink() {
    if (!this.#linked) return;
    this.#linkShown = true;
    // The pressed button goes: the focus waits on the line saying the relay is asked, then goes
    // to Deny, the safe answer beside who asks (never the page's body, nor Approve, where a second
    // Enter would connect the agent).
    this.#focusAsker = true;
    this.#el('link-box').hidden = true;
    this.#el('code').value = '';
    this.#codeEdited(true);
    const result = this.#el('approve-result');
    if (this.#focusAsker && !this.#el('code-asker').dataset.code) {
      result.textContent = ASKING_WHO;
      result.dataset.code = this.#linked; // goes once the relay said who asks
      result.focus({ preventScroll: true });
    }
  }

  /** The link is no longer offered (the person typed, or it was decided or refused). */
  #dropLink() {
    this.#linked = null;
    this.#linkShown = false;
    this.#focusAsker = false;
    this.#el('link-box').hidden = true;
    this.#armDecide();
  }

  /** What Approve and Deny act on: the whole code typed, else the link once shown: {kind, key}, or null. */
  #asked() {
    const typed = wholeCode(this.#el('code').value);
    if (typed) return { kind: 'code', key: typed };
    if (this.#linked && this.#linkShown) return { kind: 'link', key: this.#linked };
    return null;
  }

  /** The key of what the dialog is about: the whole code typed, or the link once shown. */
  #fieldCode() {
    return this.#asked()?.key ?? null;
  }

  /** The code field changed: what was said about another code goes; a whole code is described soon (or `now`). */
  #codeEdited(now) {
    clearTimeout(this.#describeTimer);
    const code = this.#fieldCode();
    const asker = this.#el('code-asker');
    // While the whole code is typed for a link this browser could not approve, who asks (and
    // the instruction to type it) stay: typing never wipes what is shown for the code asked.
    const kept = !code && this.#awaitingWhole !== null && asker.dataset.code === this.#awaitingWhole;
    if (asker.dataset.code !== code && !kept) {
      asker.textContent = '';
      delete asker.dataset.code;
      this.#showCanDo();
      // What was said with it goes with it: no warning or list stays for a code no longer there.
      this.#clearSaid();
    }
    const result = this.#el('approve-result');
    if (result.dataset.code && result.dataset.code !== code) {
      result.textContent = '';
      delete result.dataset.code;
    }
    this.#armDecide();
    if (!code) return;
    if (now) this.#describeCode();
    else this.#describeTimer = setTimeout(() => this.#describeCode(), DESCRIBE_AFTER_MS);
  }

  /** Says who asks for the code in the field: from what the relay said, or by asking it once. */
  async #describeCode() {
    clearTimeout(this.#describeTimer);
    const code = this.#fieldCode();
    if (!code) return;
    if (this.#described.has(code)) {
      this.#showDescription(code, this.#described.get(code));
      return;
    }
    const relay = this.#relay;
    if (!relay || relay.status !== 'connected') return; // Asked once the tab is connected.
    this.#described.set(code, null);
    const asked = this.#decisions;
    const link = this.#asked()?.kind === 'link';
    let said;
    try {
      said = await this.#inTurn(() => (link ? relay.describeLink(code) : relay.describe(code)));
    } catch (err) {
      // A request lost with the connection may not have reached the relay: ask again once connected.
      if (relay.status !== 'connected') {
        this.#described.delete(code);
        return;
      }
      said = { sentence: err.message };
    }
    this.#described.set(code, said);
    if (asked === this.#decisions) this.#showDescription(code, said);
  }

  /** Shows what the relay said about `code` if the field still holds it. */
  #showDescription(code, said) {
    if (!said || this.#fieldCode() !== code) return;
    const asker = this.#el('code-asker');
    const result = this.#el('approve-result');
    const lookalike = this.#el('code-lookalike');
    lookalike.textContent = nameWarningSentence(said, shown);
    lookalike.hidden = !lookalike.textContent;
    const already = this.#el('code-already');
    const connections = said.connections || [];
    already.hidden = connections.length === 0;
    already.textContent = connections.length
      ? `This app already has ${connections.length === 1 ? 'a connection' : `${connections.length} connections`} to this browser: ${connections
          .map((c) => `started ${ago(c.created_ms)}${c.place ? ` from ${shown(c.place)}` : ''}`)
          .join('; ')}. If you did not mean to add another, Deny this one.`
      : '';
    if (said.sentence) {
      asker.textContent = '';
      delete asker.dataset.code;
      this.#showCanDo();
      result.textContent = said.sentence;
      result.dataset.code = code;
      this.#armDecide();
      this.#toDecide(result);
      return;
    }
    // Named in the relay's waiting page's words (the bundle's).
    const calls = said.client && said.client !== said.verified ? WHO_ASKS.CALLS_ITSELF.replace('{name}', () => shown(said.client)) : '';
    const who = said.verified
      ? `${shown(said.verified)} ${WHO_ASKS.VERIFIED}${calls}`
      : said.client
        ? `“${shown(said.client)}” ${WHO_ASKS.NOT_VERIFIED}`
        : 'An agent app that gave no name';
    const back = said.host ? `; you will be sent back to ${shown(said.host)}` : '';
    asker.textContent = `${who} asks to act in this tab${back}.${startedWords(said)}`;
    asker.dataset.code = code;
    this.#showCanDo();
    if (this.#awaitingWhole !== null && code !== this.#awaitingWhole) {
      // The whole code typed is described: the instruction to type it is done.
      this.#awaitingWhole = null;
      result.textContent = '';
      delete result.dataset.code;
    }
    if (result.dataset.code) {
      result.textContent = '';
      delete result.dataset.code;
    }
    this.#armDecide();
    this.#toDecide(asker);
  }

  /**
   * Who asks was just said: the person at the consent sees it through to Approve (scrolled
   * into view if below the window); after Show who asks, the focus goes to Deny (or to `said`,
   * why not, when there is nothing to deny), not to the page.
   */
  #toDecide(said) {
    const here = this.#root.activeElement;
    if (this.#focusAsker) {
      this.#focusAsker = false;
      const to = this.#el('deny').disabled ? said : this.#el('deny');
      if (!here || here === this.#el('show-link') || here === this.#el('approve-result')) to.focus({ preventScroll: true });
    } else if (!here || !this.#el('approve-form').contains(here)) return;
    const decide = this.#el('approve-result').textContent ? this.#el('approve-result') : this.#el('decide');
    decide.scrollIntoView?.({ block: 'nearest' });
  }

  /** Runs `request` once the code requests before it have settled. */
  #inTurn(request) {
    const turn = this.#codeTurn.then(request);
    this.#codeTurn = turn.catch(() => {});
    return turn;
  }

  /**
   * `code` is decided: the field, what was said about it and the waiting page's link go; typed
   * again, the relay is asked again (and says the code is spent).
   */
  #codeDone(code) {
    this.#described.delete(wholeCode(code) ?? code);
    if (this.#linked === code) this.#dropLink();
    this.#el('code').value = '';
    this.#el('code-asker').textContent = '';
    delete this.#el('code-asker').dataset.code;
    this.#showCanDo();
    this.#awaitingWhole = null;
    this.#clearSaid();
    this.#armDecide();
  }

  /** The look-alike warning and the client's connections here go. */
  #clearSaid() {
    this.#el('code-lookalike').hidden = true;
    this.#el('code-lookalike').textContent = '';
    this.#el('code-already').hidden = true;
    this.#el('code-already').textContent = '';
  }

  /**
   * Approves what the dialog is about; never runs without the person's press. A whole code typed
   * is approved by the relay at once. The link is approved only once the relay's window, opened
   * here from the press, finds this is the browser that opened the waiting page.
   */
  #approve(event) {
    event.preventDefault();
    const check = this.presenceCheck;
    if (this.#asked()?.kind !== 'link') {
      return this.#decide('approve', 'Approving…', async (whole) => {
        const proof = check ? await this.#proof(check, whole) : null;
        const { client } = await this.#relay.approve(whole, proof);
        this.#el('connections').refresh();
        this.#el('approve-result').dataset.connected = 'yes';
        return `Connected to ${shown(client || 'the agent')}.`;
      });
    }
    // Opened now, while the press lets a page open a window; given its address once the relay
    // answered. With the person's presence to prove, the device is asked first: a window opened
    // before it would take the focus WebAuthn needs (the browser may then block the window: the
    // link to open it is offered instead).
    const early = this.#relay && !check ? openConfirmWindow() : null;
    return this.#decide('approve', CONSENT.LINK_CONFIRMING, async (link) => {
      const proof = check ? await this.#proof(check, link) : null;
      if (check) this.#el('approve-result').textContent = CONSENT.LINK_CONFIRMING;
      const win = early ?? (check && this.#relay ? openConfirmWindow() : null);
      let said;
      try {
        said = await this.#relay.approveLink(link, proof);
      } catch (err) {
        win?.close();
        throw err;
      }
      const confirmed = this.#confirmed(win, new URL(said.confirm).origin);
      if (win && !win.closed) win.location = said.confirm;
      else this.#offerConfirmLink(said.confirm);
      const ok = await confirmed;
      // The window went away without a word: the person may press Approve again.
      if (ok === null) throw new Error(CONSENT.LINK_WINDOW_CLOSED);
      if (!ok) {
        // Not the waiting page's browser: only the whole code, typed, approves. The focus goes
        // to the field for it; who asks stays shown while it is typed.
        this.#awaitingWhole = link;
        this.#dropLink();
        this.#el('code').focus();
        throw new Error(CONSENT.NOT_THIS_BROWSER);
      }
      this.#el('connections').refresh();
      this.#el('approve-result').dataset.connected = 'yes';
      return `Connected to ${shown(said.client || 'the agent')}.`;
    });
  }

  /**
   * The person's presence proven on this device for approving `said` (./presence-check.js): the
   * assertion the relay checks, or null where the browser has no device and the app allows it;
   * throws the sentence the person reads.
   */
  async #proof(check, said) {
    this.#el('approve-result').textContent = PRESENCE_SENTENCES.ASKING;
    return check.approval(said);
  }

  /** Resolves with whether the confirm page at `origin` (the relay's that took the link: the local server's, for its agent app's) approved (what it posts), or null once its window closed without a word. */
  #confirmed(win, origin) {
    return new Promise((resolve) => {
      let watch = null;
      const done = (ok) => {
        stop();
        clearInterval(watch);
        this.#el('confirm-link')?.remove();
        resolve(ok);
      };
      const stop = onConfirmed(origin, done);
      if (win) watch = setInterval(() => win.closed && done(null), 500);
    });
  }

  /** The browser blocked the window: a link the person opens instead (it keeps this page as its opener). */
  #offerConfirmLink(address) {
    const a = document.createElement('a');
    Object.assign(a, { id: 'confirm-link', href: address, target: 'tabrelay-confirm', rel: 'opener', textContent: 'Confirm in a new window' });
    a.setAttribute('part', 'confirm-link');
    const result = this.#el('approve-result');
    result.after(a);
    setTimeout(() => (result.textContent = CONSENT.LINK_WINDOW_BLOCKED));
  }

  /** Denies the code in the field: the waiting page sends the agent app back refused. */
  #deny() {
    const link = this.#asked()?.kind === 'link';
    return this.#decide('deny', 'Denying…', async (whole) => {
      await (link ? this.#relay.denyLink(whole) : this.#relay.deny(whole));
      const client = this.#described.get(whole)?.client;
      return `Denied: ${client ? shown(client) : 'the agent app'} was refused.`;
    });
  }

  /** The person's decision on the code (`action`: approve or deny): both buttons off while the relay is asked. */
  async #decide(action, doing, run) {
    const result = this.#el('approve-result');
    const typed = this.#fieldCode() ?? this.#el('code').value.trim();
    if (!typed) {
      result.textContent = 'Type the connect code shown on the waiting page.';
      return;
    }
    if (!this.#relay) {
      result.textContent = `This page has no relay to ${action} the code with; its configuration names no valid relay address.`;
      return;
    }
    clearTimeout(this.#describeTimer);
    this.#decisions += 1;
    delete result.dataset.code;
    delete result.dataset.connected;
    this.#deciding = true;
    this.#armDecide();
    result.textContent = doing;
    try {
      result.textContent = await this.#inTurn(() => run(wholeCode(typed) ?? typed));
      this.#codeDone(typed);
    } catch (err) {
      result.textContent = err.message;
    } finally {
      this.#deciding = false;
      this.#armDecide();
    }
  }

  /** Copies the connector address; where the browser refuses, selects it for the person to copy. */
  async #copyAddress() {
    const address = this.#el('connector-address');
    try {
      await navigator.clipboard.writeText(address.textContent);
      this.#el('copy-result').textContent = 'Copied.';
    } catch {
      getSelection().selectAllChildren(address);
      this.#el('copy-result').textContent = 'Selected: press Ctrl+C (⌘C) to copy it.';
    }
  }
}

if (globalThis.customElements && !customElements.get('tabrelay-agents')) customElements.define('tabrelay-agents', AgentsPanel);
