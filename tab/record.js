// The record of what agents did: every call of every agent (remote or in this browser), kept in
// the browser (IndexedDB, shared by the app's tabs, so a tab opened later shows the earlier
// record), bounded by count and age (RECORD_LIMITS, the one source), with `<tabrelay-record>`
// to read it with filters, export it (JSON, CSV) and clear it. The store runs without a DOM:
// without IndexedDB (Node, or storage off) it keeps the record in memory for the page.
//
//   import { createRecord } from './record.js';
//   const record = createRecord({ app: 'orders' });
//   record.follow(presence);                       // the person's decisions, the outcomes, Undo turn
//   const run = record.door((call, fn) => guardCall(…, () => presence.run(call, fn))); // also what never reached the presence
//   relay.onRefused = (call) => record.refused(call); // refused before the tab ran anything
//   document.querySelector('tabrelay-agents').record = record; // or <tabrelay-record>.record
//
// What is kept of a call: when, which agent (its name) and connection (its id and where it was
// made from), which tool (its name, and its title to show it by), what decided it (the person's
// answer on its card, a grant made on an earlier one, or the settings), the outcome in one line
// and whether Undo turn took it back. The record keeps only the tool's name and title, the
// decision and a short outcome made of the tab end's own fixed words: never a call's arguments,
// its result or an error's message (which can carry a value of the data). So nothing the data switch hid from an agent, and
// nothing else of the data, is ever in the record.

import { DATA_SENTENCES } from './data-guard.js';
import { shownText } from './generated/bundle.js';

/** How much the record keeps: at most `entries` calls, none older than `ageMs`. */
export const RECORD_LIMITS = Object.freeze({ entries: 500, ageMs: 30 * 24 * 60 * 60 * 1000 });
/** The IndexedDB database of an app's record (`${RECORD_DB}:${app}`), and the tabs' channel. */
export const RECORD_DB = 'tabrelay:record';
/** The columns of an export, in order. */
export const RECORD_COLUMNS = Object.freeze(['when', 'agent', 'connection', 'from', 'tool', 'decision', 'outcome', 'undone']);
/**
 * What decided a call, in words: the person's answer on its card (`once`, `connection`,
 * `always`, `deny`), a grant made on an earlier card (`grantTab`, `grantRevoked`), or the
 * settings alone.
 */
export const DECISION_WORDS = Object.freeze({
  once: 'allowed once',
  connection: 'allowed for this connection until the tab closes',
  always: 'allowed until you revoke it',
  deny: 'denied',
  onceInApp: 'allowed once in the agent app',
  denyInApp: 'denied in the agent app',
  grantTab: 'allowed by your grant for this connection until the tab closes',
  grantRevoked: 'allowed by your grant until you revoke it',
  settings: 'allowed by your settings',
  refused: 'refused by your settings',
  dataSwitch: 'refused by the data switch',
  unanswered: 'asked, not answered',
  none: 'not decided',
});
/**
 * The same decisions for a call of the chat bar (a connection of kind 'chat'), in its card's
 * words: *This chat* lasts until the tab closes; *Always* is kept for the chat in this app,
 * every conversation (presence.js CHAT_SCOPE).
 */
export const CHAT_DECISION_WORDS = Object.freeze({
  connection: 'allowed for this chat until the tab closes',
  always: 'allowed for your chat in this app until you revoke it',
  grantTab: 'allowed by your grant for this chat until the tab closes',
  grantRevoked: 'allowed by your grant for your chat in this app until you revoke it',
});
/** What decided `call`, in words, for DECISION_WORDS' key `key` (the chat's own words for a chat's call). */
function decisionWords(key, call) {
  return (call?.connection?.kind === 'chat' && CHAT_DECISION_WORDS[key]) || DECISION_WORDS[key];
}
/** The outcome of a call that did not run because of the decision (the decision says why). */
export const NOT_RUN = 'not run';
/** The outcome of a call refused or withheld by the data switch, in words. */
export const SWITCH_OUTCOMES = Object.freeze({ refused: 'refused: names and summaries only', withheld: 'result withheld: names and summaries only' });
/** What the record shows of a name from outside (an agent's, a tool's) at most. */
const NAME_CHARS = 80;
/** Filters of `<tabrelay-record>`'s "Show". */
export const RECORD_SHOWS = Object.freeze({ all: 'Every call', asked: 'Asked you', refused: 'Refused or denied', undone: 'Undone' });

/** `text` from outside as the record keeps it: one line, at most NAME_CHARS characters. */
function cut(text) {
  return shownText(text, NAME_CHARS);
}

/** The entries `limits` keeps at `now` ({keep, drop}: drop by age, then the oldest past the count). */
export function bounded(entries, now, limits = RECORD_LIMITS) {
  const sorted = [...entries].sort(byTime);
  const young = sorted.filter((e) => now - e.at <= limits.ageMs);
  const keep = young.slice(Math.max(0, young.length - limits.entries));
  const kept = new Set(keep.map((e) => e.id));
  return { keep, drop: sorted.filter((e) => !kept.has(e.id)) };
}

function byTime(a, b) {
  return a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** An entry as an export's row: the RECORD_COLUMNS, `when` as an ISO time. */
export function rowOf(entry) {
  return {
    when: new Date(entry.at).toISOString(),
    agent: entry.agent,
    connection: entry.connection ?? '',
    from: entry.from ?? '',
    tool: entry.tool,
    decision: entry.decision,
    outcome: entry.outcome ?? 'under way',
    undone: Boolean(entry.undone),
  };
}

/** The entries as a JSON export: an array of rows, oldest first. */
export function toJson(entries) {
  return JSON.stringify([...entries].sort(byTime).map(rowOf), null, 2);
}

/** The entries as a CSV export (RFC 4180: a header, CRLF lines, quoted where needed), oldest first. */
export function toCsv(entries) {
  const lines = [RECORD_COLUMNS.join(',')];
  for (const row of [...entries].sort(byTime).map(rowOf)) lines.push(RECORD_COLUMNS.map((c) => csvCell(row[c])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * One CSV cell: quoted when it holds a comma, a quote or a line break (quotes doubled); a text
 * a spreadsheet would read as a formula (=, +, -, @ first) starts with an apostrophe.
 */
export function csvCell(value) {
  let text = value == null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The entries a filter shows: `agent` (a name, or '' for all) and `show` (a RECORD_SHOWS key). */
export function filtered(entries, { agent = '', show = 'all' } = {}) {
  return entries.filter((e) => {
    if (agent && e.agent !== agent) return false;
    if (show === 'asked') return [DECISION_WORDS.once, DECISION_WORDS.connection, DECISION_WORDS.always, CHAT_DECISION_WORDS.connection, CHAT_DECISION_WORDS.always, DECISION_WORDS.deny, DECISION_WORDS.unanswered].includes(e.decision);
    if (show === 'refused') return [DECISION_WORDS.deny, DECISION_WORDS.refused, DECISION_WORDS.dataSwitch].includes(e.decision) || /^refused/.test(e.outcome ?? '');
    if (show === 'undone') return Boolean(e.undone);
    return true;
  });
}

/** A store in memory: the record for the page's life. */
export function memoryBackend() {
  const kept = new Map();
  return {
    kind: 'memory',
    all: async () => [...kept.values()].map((e) => ({ ...e })),
    put: async (entry) => void kept.set(entry.id, { ...entry }),
    remove: async (ids) => ids.forEach((id) => kept.delete(id)),
    clear: async () => kept.clear(),
  };
}

/** A store in IndexedDB database `name` (one object store, `calls`, keyed by the entry's id). */
export function indexedDbBackend(indexedDB, name) {
  let opened = null;
  const db = () =>
    (opened ||= new Promise((resolve, reject) => {
      const request = indexedDB.open(name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore('calls', { keyPath: 'id' });
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    }));
  const tx = async (mode, work) => {
    const database = await db();
    return new Promise((resolve, reject) => {
      const t = database.transaction('calls', mode);
      const out = work(t.objectStore('calls'));
      t.oncomplete = () => resolve(out?.result);
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
  };
  return {
    kind: 'indexeddb',
    all: () => tx('readonly', (s) => s.getAll()),
    put: (entry) => tx('readwrite', (s) => void s.put(entry)),
    remove: (ids) => tx('readwrite', (s) => ids.forEach((id) => s.delete(id))),
    clear: () => tx('readwrite', (s) => void s.clear()),
  };
}

/**
 * The record of `app`'s agents. `indexedDB`: the browser's (default; none: kept in memory for
 * the page); `backend`: a store of one's own ({all, put, remove, clear}); `limits`: as
 * RECORD_LIMITS; `now()`: milliseconds; `channel`: BroadcastChannel, so the app's other tabs
 * show a change at once. `entries()` is what it holds now, newest last; `ready` resolves once
 * the kept record is read; `subscribe(fn)` hears every change.
 */
export function createRecord({ app, indexedDB = globalThis.indexedDB, backend, limits = RECORD_LIMITS, now = () => Date.now(), channel = globalThis.BroadcastChannel } = {}) {
  if (!app) throw new Error('createRecord needs the app’s name: the record is kept per app.');
  const name = `${RECORD_DB}:${app}`;
  const store = backend || (indexedDB ? indexedDbBackend(indexedDB, name) : memoryBackend());
  const listeners = new Set();
  /** The calls seen in this tab → their entries (a call is one object from the relay or WebMCP to its end). */
  const byCall = new WeakMap();
  /** This tab's entries by id: they stay the live objects when another tab's change is read. */
  const own = new Map();
  let entries = [];
  let writing = Promise.resolve();
  let seq = 0;
  const tabs = typeof channel === 'function' ? new channel(name) : null;
  const tabId = randomId();

  const record = {
    /** Where the record is kept: 'indexeddb' or 'memory' (or a given store's kind). */
    kind: store.kind || 'custom',
    limits,
    ready: null,
    entries: () => [...entries],
    /** Resolves once what was kept so far is written. */
    written: () => writing,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    /** Keeps the presence's calls: started, asked, the person's decision, the outcome, undone. */
    follow(presence) {
      followed = presence;
      return presence.watch((event) => {
        if (event.type === 'undone') {
          for (const call of event.calls) update(byCall.get(call), { undone: true });
          return;
        }
        const entry = entryOf(event.call);
        if (event.type === 'asking') update(entry, { decision: DECISION_WORDS.unanswered, asked: true });
        else if (event.type === 'decided') update(entry, { decision: decisionWords(event.via === 'app' ? `${event.choice}InApp` : event.choice, event.call) || DECISION_WORDS.none });
        else if (event.type === 'running' && !entry.asked) update(entry, { decision: decisionWords(GRANT_DECISIONS[event.grant], event.call) || DECISION_WORDS.settings });
        else if (event.type === 'ended') {
          // Refused by the settings: the decision says so, the outcome that it did not run.
          const refused = event.outcome === 'refused by the person’s settings';
          update(entry, refused ? { decision: DECISION_WORDS.refused, outcome: NOT_RUN } : { outcome: cut(event.outcome) });
        }
      });
    },

    /**
     * The app's door (`run(call, fn)`, the data switch around the presence) as one that keeps
     * every call, those it refuses before the presence sees them too.
     */
    door(run) {
      return async (call, fn) => {
        const entry = entryOf(call);
        try {
          const result = await run(call, fn);
          if (entry.outcome == null) update(entry, { outcome: 'done' });
          return result;
        } catch (err) {
          const message = String(err?.message ?? '');
          const switched = switchOutcome(message);
          if (switched === SWITCH_OUTCOMES.refused) update(entry, { decision: DECISION_WORDS.dataSwitch, outcome: switched });
          else if (switched) update(entry, { outcome: switched });
          else if (entry.outcome == null || entry.outcome === 'done') update(entry, { outcome: err?.outcome ? cut(err.outcome) : 'failed' });
          throw err;
        }
      };
    },

    /**
     * A call refused before anything in the tab ran (the relay client's `onRefused`); `sentence`:
     * what it was told, when the app refused it (the data switch's sentence says so).
     */
    refused(call, sentence = '') {
      if (switchOutcome(String(sentence ?? '')) === SWITCH_OUTCOMES.refused) update(entryOf(call), { decision: DECISION_WORDS.dataSwitch, outcome: SWITCH_OUTCOMES.refused });
      else update(entryOf(call), { decision: DECISION_WORDS.refused, outcome: NOT_RUN });
    },

    /** Clears the record, in every tab of the app. */
    async clear() {
      entries = [];
      own.clear();
      await (writing = writing.then(() => store.clear()).catch(() => {}));
      changed(true);
    },
  };

  record.ready = (async () => {
    let kept = [];
    try {
      kept = await store.all();
    } catch {
      kept = [];
    }
    // Calls this tab kept while the store was read are its own (the live objects).
    const ids = new Set(kept.map((e) => e.id));
    entries = bounded([...kept.map((e) => own.get(e.id) || e), ...[...own.values()].filter((e) => !ids.has(e.id))], now(), limits).keep;
    changed(false);
  })();

  if (tabs) {
    tabs.onmessage = async (event) => {
      if (event.data?.from === tabId) return;
      await writing;
      try {
        const kept = await store.all();
        const ids = new Set(kept.map((e) => e.id));
        // An entry of this tab another tab's bounds dropped is gone here too.
        for (const id of own.keys()) if (!ids.has(id)) own.delete(id);
        entries = kept.map((e) => own.get(e.id) || e).sort(byTime);
      } catch {
        return;
      }
      changed(false);
    };
  }

  /** The presence followed last: it names each tool by its title. */
  let followed = null;

  function entryOf(call) {
    let entry = byCall.get(call);
    if (entry) return entry;
    const connection = call?.connection;
    const title = followed?.tools?.().find((t) => t.name === call?.tool)?.title;
    entry = {
      id: `${now()}-${tabId}-${seq++}`,
      at: now(),
      agent: cut(call?.agent || 'an agent'),
      connection: connection?.id == null ? null : cut(connection.id),
      from: connection?.kind === 'browser' ? 'this browser' : connection?.kind === 'chat' ? 'the chat in this tab' : connection?.host ? cut(connection.host) : null,
      tool: cut(call?.tool),
      title: typeof title === 'string' && title ? cut(title) : null,
      decision: DECISION_WORDS.none,
      outcome: null,
      undone: false,
    };
    byCall.set(call, entry);
    own.set(entry.id, entry);
    entries.push(entry);
    keep(entry);
    return entry;
  }

  function update(entry, fields) {
    if (!entry) return;
    Object.assign(entry, fields);
    keep(entry);
  }

  /** Writes `entry` (its fields the record keeps) and drops what the bounds no longer keep. */
  function keep(entry) {
    const { keep: kept, drop } = bounded(entries, now(), limits);
    entries = kept;
    for (const e of drop) own.delete(e.id);
    const saved = { id: entry.id, at: entry.at, agent: entry.agent, connection: entry.connection, from: entry.from, tool: entry.tool, title: entry.title, decision: entry.decision, outcome: entry.outcome, undone: entry.undone };
    const dropped = drop.map((e) => e.id);
    writing = writing
      .then(async () => {
        if (!dropped.includes(entry.id)) await store.put(saved);
        if (dropped.length) await store.remove(dropped);
      })
      .catch(() => {});
    changed(true);
  }

  function changed(tell) {
    for (const fn of listeners) fn(record);
    if (tell && tabs) writing.then(() => tabs.postMessage({ from: tabId }));
  }

  return record;
}

/** The decision of a call a grant let run without a card, by the grant's `until`. */
const GRANT_DECISIONS = Object.freeze({ tab: 'grantTab', revoked: 'grantRevoked' });

/** What the data switch made of a call whose door threw `message`, or null. */
function switchOutcome(message) {
  const before = (sentence) => sentence.split('{tool}')[0];
  if (message.startsWith(before(DATA_SENTENCES.REFUSED)) || message.startsWith(before(DATA_SENTENCES.UNCLASSIFIED))) return SWITCH_OUTCOMES.refused;
  return message === DATA_SENTENCES.TURNED_ON ? SWITCH_OUTCOMES.withheld : null;
}

function randomId() {
  const bytes = new Uint8Array(6);
  globalThis.crypto?.getRandomValues?.(bytes);
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('') || String(Math.random()).slice(2, 14);
}

/** The words of `<tabrelay-record>`. */
export const RECORD_WORDS = Object.freeze({
  EMPTY: 'No agent has used this tab yet.',
  KEPT: 'Kept in this browser: the last {entries} calls, for up to {days} days. Never what a call read or sent.',
  CLEAR_ASK: 'Clear the record of every agent’s calls, in every tab of this app?',
  CLEARED: 'The record is cleared.',
});

const RECORD_CSS = `
  :host { display: block; font-size: .9rem; }
  :host([hidden]) { display: none; }
  p { margin: .5rem 0 0; }
  .hint { color: #5b5b60; }
  [part=filters], [part=actions] { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .5rem; }
  /* A long agent name never widens the page: its filter is as wide as the panel at most. */
  [part=filters] label { display: flex; gap: .35rem; align-items: center; min-width: 0; max-width: 100%; }
  [part=filters] select { min-width: 0; flex: 0 1 auto; text-overflow: ellipsis; }
  select { font: inherit; padding: .2rem .3rem; border: 1px solid #8a8a90; border-radius: .3rem; background: #fff; max-width: 100%; }
  button { font: inherit; font-size: .9rem; padding: .2rem .6rem; border-radius: .3rem; border: 1px solid #0b5cad; background: #fff; color: #0b5cad; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  :focus-visible { outline: 3px solid #f2a900; outline-offset: 2px; }
  ol { list-style: none; margin: .5rem 0 0; padding: 0; max-height: 16rem; overflow: auto; }
  li { padding: .3rem 0; border-top: 1px solid #d8d8dc; overflow-wrap: anywhere; }
  li:first-child { border-top: 0; }
  [part~=when] { color: #5b5b60; font-variant-numeric: tabular-nums; }
  [part~=undone] { font-style: italic; }
  [part=clear-ask][hidden] { display: none; }
`;

const ElementBase = globalThis.HTMLElement || class {};

/**
 * `<tabrelay-record>`: the record of what agents did, newest first, with filters (the agent,
 * and Every call / Asked you / Refused or denied / Undone), Export JSON and Export CSV (of the
 * calls the filters show) and Clear (asked once more first). Set `record` to a createRecord().
 * Parts: `head`, `kept`, `filters`, `agent-filter`, `show`, `list`, `entry`, `when`, `who`,
 * `tool`, `decision`, `outcome`, `undone`, `empty`, `actions`, `export-json`, `export-csv`,
 * `clear`, `clear-ask`, `clear-yes`, `clear-no`, `result`.
 */
export class RecordElement extends ElementBase {
  #root;
  #record = null;
  #unsubscribe = null;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    this.#root.innerHTML = `<style>${RECORD_CSS}</style>
      <p part="kept" id="kept" class="hint"></p>
      <div part="filters">
        <label>Agent <select part="agent-filter" id="agent-filter"><option value="">Every agent</option></select></label>
        <label>Show <select part="show" id="show">${Object.entries(RECORD_SHOWS).map(([k, v]) => `<option value="${k}">${v}</option>`).join('')}</select></label>
      </div>
      <ol part="list" id="list" aria-label="What agents did, newest first"></ol>
      <p part="empty" id="empty" class="hint"></p>
      <div part="actions">
        <button part="export-json" id="export-json" type="button">Export JSON</button>
        <button part="export-csv" id="export-csv" type="button">Export CSV</button>
        <button part="clear" id="clear" type="button">Clear…</button>
      </div>
      <p part="clear-ask" id="clear-ask" role="alertdialog" aria-labelledby="clear-words" hidden><span id="clear-words"></span> <button part="clear-yes" id="clear-yes" type="button">Clear</button> <button part="clear-no" id="clear-no" type="button">Keep it</button></p>
      <p part="result" id="result" class="hint" aria-live="polite"></p>`;
    const $ = (id) => this.#root.getElementById(id);
    $('empty').textContent = RECORD_WORDS.EMPTY;
    $('clear-words').textContent = RECORD_WORDS.CLEAR_ASK;
    $('agent-filter').addEventListener('change', () => this.#render());
    $('show').addEventListener('change', () => this.#render());
    $('export-json').addEventListener('click', () => this.#export('json'));
    $('export-csv').addEventListener('click', () => this.#export('csv'));
    $('clear').addEventListener('click', () => {
      $('clear-ask').hidden = false;
      $('clear-no').focus();
    });
    $('clear-no').addEventListener('click', () => {
      $('clear-ask').hidden = true;
      $('clear').focus();
    });
    $('clear-yes').addEventListener('click', async () => {
      $('clear-ask').hidden = true;
      await this.#record?.clear();
      $('result').textContent = RECORD_WORDS.CLEARED;
      // Clear is disabled once nothing is kept: the focus goes to the filter beside it, never the page.
      this.#render();
      ($('clear').disabled ? $('agent-filter') : $('clear')).focus();
    });
    this.#root.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || $('clear-ask').hidden) return;
      // The question shown takes the Escape (a confirm card's is not answered by it too).
      event.preventDefault();
      $('clear-no').click();
    });
  }

  get record() {
    return this.#record;
  }
  set record(record) {
    this.#unsubscribe?.();
    this.#record = record || null;
    this.#unsubscribe = this.#record?.subscribe(() => this.#render()) || null;
    this.#render();
  }

  /** The entries the filters show, oldest first. */
  shown() {
    const $ = (id) => this.#root.getElementById(id);
    return filtered(this.#record?.entries() || [], { agent: $('agent-filter').value, show: $('show').value });
  }

  #render() {
    const $ = (id) => this.#root.getElementById(id);
    const limits = this.#record?.limits || RECORD_LIMITS;
    $('kept').textContent = RECORD_WORDS.KEPT.replace('{entries}', String(limits.entries)).replace('{days}', String(Math.round(limits.ageMs / 86_400_000)));
    const all = this.#record?.entries() || [];
    const filter = $('agent-filter');
    const agents = [...new Set(all.map((e) => e.agent))].sort();
    const chosen = filter.value;
    filter.replaceChildren(new Option('Every agent', ''), ...agents.map((a) => new Option(a, a)));
    filter.value = agents.includes(chosen) ? chosen : '';
    const shown = this.shown();
    $('list').replaceChildren(...[...shown].reverse().map((e) => this.#line(e)));
    $('empty').hidden = shown.length > 0;
    $('empty').textContent = all.length ? 'No call matches these filters.' : RECORD_WORDS.EMPTY;
    for (const id of ['export-json', 'export-csv']) $(id).disabled = !shown.length;
    $('clear').disabled = !all.length;
  }

  #line(entry) {
    const li = document.createElement('li');
    li.setAttribute('part', entry.undone ? 'entry undone' : 'entry');
    const span = (part, text) => {
      const s = document.createElement('span');
      s.setAttribute('part', part);
      s.textContent = text;
      return s;
    };
    const when = new Date(entry.at);
    const time = span('when', when.toLocaleString([], { hour12: false, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }));
    time.title = when.toISOString();
    const who = entry.from ? `${entry.agent} (${entry.from})` : entry.agent;
    // The tool by its title (its name, which the export keeps, on hover).
    const tool = span('tool', entry.title ? `“${entry.title}”` : entry.tool);
    tool.title = entry.tool;
    li.append(time, ' · ', span('who', who), ' · ', tool, ' · ', span('decision', entry.decision), ' · ', span('outcome', entry.outcome ?? 'under way'));
    if (entry.undone) li.append(' · ', span('undone-mark', 'undone'));
    return li;
  }

  #export(format) {
    const shown = this.shown();
    const text = format === 'json' ? toJson(shown) : toCsv(shown);
    const type = format === 'json' ? 'application/json' : 'text/csv';
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `tabrelay-record-${new Date().toISOString().slice(0, 10)}.${format}`;
    this.#root.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    this.#root.getElementById('result').textContent = `Exported ${shown.length} call${shown.length === 1 ? '' : 's'} as ${format.toUpperCase()}.`;
  }
}

if (globalThis.customElements && !customElements.get('tabrelay-record')) customElements.define('tabrelay-record', RecordElement);
