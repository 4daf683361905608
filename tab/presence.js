// The person's side of the tab end, without any UI: their permissions (pure decisions over
// kinds, the three modes, kept per browser and per app), the questions a call asks them, and
// the activity lines (one per agent turn, with Stop and Undo turn). No dependencies but the
// tab's copy of the bundle (the withdrawal's sentence), no DOM:
// it runs in Node and in browsers; ./presence-elements.js draws it.
//
//   import { createPresence } from './presence.js';
//   const presence = createPresence({ app: 'orders', tools, confirmKinds: { orders_delete: ['deletes-saved'] } });
//   const relay = new RelayClient({ relay, handle: (call) => presence.run(call, (signal) => runAction(call, signal)), onCancel: (id) => presence.cancel(id) });
//   presence.onAsking = (q) => relay.asking(q.call.id, q.sentence); presence.onAnswered = (q) => relay.answered(q.call.id);
//
// Kinds: `change` (any tool that is not a read: an undoable step), `heavy` (a call the app
// estimates at HEAVY_MS or longer, from its own measurements) and the confirm kinds the app
// declares per tool (deletes-saved, writes-file, publishes, …). Each kind is Ask, Allow or
// Deny; a call's strictest kind decides (deny over ask over allow). A mode is a preset of the
// kinds; the person's own choice of a kind overrides it (the mode then reads "Custom").
//
// Grants: a card's answer that lets a tool's asking calls run without a card, for one
// connection until the tab closes ("connection", never leaving the page), or kept until the
// person revokes it ("always": for that client's every connection when its domain is verified,
// for the chat bar's every conversation when the chat asks,
// else for that connection only: a name an app gives itself speaks for no other agent; never for
// all agents). Every grant is
// listed (`grants()`) with who it is for and until when, and revocable; choosing a mode takes
// every grant back (MODE_CHOICE says so), and forgetting a connection takes back its own.

import { WITHDRAWN, FORGOTTEN, AGENT_STOPPED, PRESENCE, CARD_CHOICES, ELICITED_CHOICES, shownText } from './generated/bundle.js';
import { createKeptStore } from './kept-store.js';

/** What the person may make of a kind, least strict first. */
export const DECISIONS = Object.freeze(['allow', 'ask', 'deny']);
/** The kinds every app has; confirm kinds are the app's own. */
export const BASE_KINDS = Object.freeze(['change', 'heavy']);
/** A call estimated at this many milliseconds or longer is heavy (the attention limit: ten seconds). */
export const HEAVY_MS = 10_000;
/** The modes: presets of each kind's decision (`confirm`: every confirm kind). */
export const MODES = Object.freeze({
  careful: Object.freeze({ title: 'Ask before heavy or irreversible', change: 'allow', heavy: 'ask', confirm: 'ask' }),
  undoable: Object.freeze({ title: 'Allow everything undoable', change: 'allow', heavy: 'allow', confirm: 'ask' }),
  'read-only': Object.freeze({ title: 'Read only', change: 'deny', heavy: 'ask', confirm: 'deny' }),
});
export const DEFAULT_MODE = 'careful';
/**
 * A question's choices, in the order the card shows them (each button's words: `choicesOf`): the
 * bundle's, whose names the local server's question in the agent app says too.
 */
export const CHOICES = CARD_CHOICES;
/** Who a grant kept for every agent is for (its scope is ALL_AGENTS): calls through no connection. */
export const ALL_AGENTS = '*';
/** A grant kept for a verified client is scoped to this and its domain. */
export const CLIENT_SCOPE = 'client:';
/**
 * A grant kept for the chat bar (./chat.js): its every conversation in this app, whichever model
 * (a conversation's id is new on each page load, so a grant kept for one would never apply again).
 */
export const CHAT_SCOPE = 'chat:';
/** Until when each kind of grant lasts, in words. */
export const UNTIL = Object.freeze({ tab: 'until this tab closes', revoked: 'until you revoke it' });
/** What choosing a mode does to the rules and the grants, said beside the mode. */
export const MODE_CHOICE = 'Choosing a mode sets every kind as the mode says and takes back every grant; each tool’s own choice stays.';
/** How the mode reads once the person changed a kind's rule. */
export const CUSTOM_MODE = 'Custom';
/** The words for the base kinds (a card's "why"); an app gives words for its confirm kinds. */
export const KIND_WORDS = Object.freeze({
  change: 'it changes what the tab shows (undoable)',
  heavy: 'it may take a while on this device',
  /** WebMCP's consequentialHint (./webmcp.js). */
  consequential: 'the page says it has consequences',
});
/** Each base kind's name, as the person reads it; an app's kind without a name reads as its words ("deletes-items" → "Deletes items"). */
export const KIND_NAMES = Object.freeze({ change: 'Changes', heavy: 'Heavy calls', consequential: 'Calls with consequences' });
/** How a card weighs a call: a read, an undoable change, or irreversible (a tool with a confirm kind). */
export const RISKS = Object.freeze(['read', 'undoable', 'irreversible']);
/** The most things an activity line keeps of what its turn read or changed. */
export const DID_KEPT = 20;
/** The most activity lines kept: beyond it, the oldest lines done acting leave by themselves. */
export const LINES_KEPT = 20;
/** Said on a line whose steps were made on a dataset no longer shown (`{dataset}`: its name). */
export const UNDO_ELSEWHERE = 'This turn changed “{dataset}”, which is no longer shown, so it cannot be undone here.';
/** The most lines that made steps remembered for Undo turn's question (dismissed ones too). */
export const STEPPED_KEPT = 200;
/** Where a browser keeps an app's permissions (`${PERMISSIONS_KEY}:${app}`). */
export const PERMISSIONS_KEY = 'tabrelay:permissions';
/** Said to the agent for a call that did not run because of what the person did. */
export const SENTENCES = Object.freeze({
  STOPPED: 'The person pressed Stop on this turn, so this call did not run; wait for them to ask again.',
  CANCELLED: 'The call was cancelled: the agent stopped waiting for it, so nothing was changed.',
  STOPPED_RUNNING: 'The person pressed Stop while this call ran, so the app stopped it before it finished; read the history to see what it did, and wait for them to ask again.',
  CANCELLED_RUNNING: 'The call was cancelled while it ran: the agent stopped waiting, so the app stopped it before it finished; read the history to see what it did.',
  /** The bundle's (bundle/src/agent.rs), so the live check knows it: `{reason}` says why. */
  WITHDRAWN,
  /** The bundle's too (the relay says the same): a call of a connection the person forgot. */
  FORGOTTEN,
  /** The bundle's too: a call of an agent the person stopped, until they let it go on. */
  AGENT_STOPPED,
});
/** Where each relay setting of a tool comes from: a decision without any grant. */
const SETTING_OF = Object.freeze({ allow: 'runs', ask: 'asks', deny: 'refused' });

/** A kind's name in words: the app's (`names`), the base kinds', else its identifier as words. */
export function kindName(kind, names = {}) {
  if (Object.hasOwn(names, kind)) return names[kind];
  if (Object.hasOwn(KIND_NAMES, kind)) return KIND_NAMES[kind];
  const words = String(kind).replace(/[-_]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * How heavy the risk of a call of `tool` is: 'irreversible' when it has a confirm kind (what an
 * app declares it cannot take back), 'undoable' for any other change, 'read' for a read.
 */
export function riskOf(tool, { confirmKinds = {} } = {}) {
  if (((tool && confirmKinds[tool.name]) || []).length) return 'irreversible';
  return tool && tool.safety === 'read' ? 'read' : 'undoable';
}

/** The strictest of `decisions` (deny over ask over allow); allow for none. */
export function strictest(decisions) {
  let at = 0;
  for (const d of decisions) at = Math.max(at, DECISIONS.indexOf(d));
  return DECISIONS[at];
}

/** What `mode` makes of `kind` (a confirm kind: the mode's `confirm`). */
export function modeDecision(mode, kind) {
  const preset = MODES[mode] || MODES[DEFAULT_MODE];
  return Object.hasOwn(preset, kind) && kind !== 'title' ? preset[kind] : preset.confirm;
}

/**
 * The kinds of a call of `tool` ({name, safety}): `change` unless it reads, its confirm kinds
 * (`confirmKinds`: tool name → kinds), and `heavy` when `estimateMs` reaches HEAVY_MS.
 */
export function kindsOf(tool, { confirmKinds = {}, estimateMs = null } = {}) {
  const kinds = [];
  if (tool && tool.safety !== 'read') kinds.push('change');
  if (Number.isFinite(estimateMs) && estimateMs >= HEAVY_MS) kinds.push('heavy');
  for (const k of (tool && confirmKinds[tool.name]) || []) if (!kinds.includes(k)) kinds.push(k);
  return kinds;
}

/**
 * The person's settings as kept: {mode, kinds: {kind: decision}, tools: {name: decision}}; what
 * is not a known mode or decision is left out (its default then).
 */
export function readSettings(text) {
  let kept = null;
  try {
    kept = typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    kept = null;
  }
  const out = { mode: DEFAULT_MODE, kinds: {}, tools: {}, grants: {} };
  if (!kept || typeof kept !== 'object' || Array.isArray(kept)) return out;
  if (Object.hasOwn(MODES, kept.mode)) out.mode = kept.mode;
  for (const part of ['kinds', 'tools']) {
    const given = kept[part];
    if (!given || typeof given !== 'object') continue;
    for (const [name, d] of Object.entries(given)) if (DECISIONS.includes(d) && name !== '__proto__') out[part][name] = d;
  }
  const grants = kept.grants;
  if (grants && typeof grants === 'object' && !Array.isArray(grants)) {
    for (const [scope, g] of Object.entries(grants)) {
      if (scope === '__proto__' || !g || typeof g !== 'object' || !Array.isArray(g.tools)) continue;
      const tools = [...new Set(g.tools.filter((t) => typeof t === 'string' && t && t !== '__proto__'))];
      if (tools.length) out.grants[scope] = { who: typeof g.who === 'string' ? g.who : '', tools };
    }
  }
  return out;
}

/** Whether the person changed a kind's rule from what the mode says (the mode reads "Custom"). */
export function isCustom(settings) {
  return Object.entries(settings.kinds || {}).some(([kind, d]) => d !== modeDecision(settings.mode, kind));
}

/** What the settings make of `kind`: the person's own choice, else the mode's. */
export function kindDecision(settings, kind) {
  return settings.kinds?.[kind] ?? modeDecision(settings.mode, kind);
}

/**
 * Whether `tool`'s asking calls through `connection` are granted: by a grant of the page
 * (`grants`, a Map of connection id → Set of tool names) or one kept in `settings.grants`,
 * for the connection or for its client (`scope`, `grantScopeOf` its call); a call through no
 * connection by one kept for all agents, which grants no connection's calls.
 */
export function granted(args) {
  return grantOf(args) !== null;
}

/**
 * Which grant lets `tool`'s asking calls through `connection` run (as `granted` reads them):
 * 'revoked' (one kept until the person revokes it), 'tab' (one for this connection until the
 * tab closes), or null (none).
 */
export function grantOf({ tool, settings, connection, scope, grants }) {
  if (tool == null) return null;
  const kept = settings.grants || {};
  if (connection == null) return kept[ALL_AGENTS]?.tools.includes(tool) ? 'revoked' : null;
  if (scope != null && scope !== ALL_AGENTS && kept[scope]?.tools.includes(tool)) return 'revoked';
  const id = String(connection);
  if (kept[id]?.tools.includes(tool)) return 'revoked';
  return grants?.get(id)?.has(tool) ? 'tab' : null;
}

/**
 * Decides a call: each of its `kinds` and the person's choice for the tool itself, the
 * strictest winning; a grant of the tool for `connection` (see `granted`) answers the asks,
 * never a deny. Returns {decision, asked: the kinds that ask, denied: the kinds that deny,
 * grant: the grant that answered the asks ('tab' or 'revoked', see `grantOf`), else null}.
 */
export function decide({ kinds, tool, settings, connection, scope, grants }) {
  const asked = [];
  const denied = [];
  for (const kind of kinds) {
    const d = kindDecision(settings, kind);
    if (d === 'deny') denied.push(kind);
    else if (d === 'ask') asked.push(kind);
  }
  const own = tool != null ? settings.tools?.[tool] : undefined;
  if (own === 'deny') denied.push('tool');
  else if (own === 'ask') asked.push('tool');
  const grant = asked.length && !denied.length ? grantOf({ tool, settings, connection, scope, grants }) : null;
  if (grant) asked.length = 0;
  const decision = denied.length ? 'deny' : asked.length ? 'ask' : 'allow';
  return { decision, asked, denied, grant };
}

/**
 * Who a card's grant is for: the asking client (CLIENT_SCOPE and its domain, every connection
 * of it) when its domain is verified, the chat bar (CHAT_SCOPE: its every conversation) for the
 * chat's call, else that connection alone; all agents (ALL_AGENTS) only
 * for a call that came through no connection. Never every agent for a connection's card: a
 * verified domain names that client, not the others.
 */
export function grantScopeOf(call) {
  const c = call?.connection;
  if (c?.id == null) return ALL_AGENTS;
  if (c.kind === 'chat') return CHAT_SCOPE;
  return c.verified ? `${CLIENT_SCOPE}${c.verified}` : String(c.id);
}

/** Who a grant for `scope` is for, in its button's words. */
function scopeWho(scope, call) {
  if (scope === ALL_AGENTS) return 'all agents';
  if (scope === CHAT_SCOPE) return 'your chat in this app (every conversation)';
  if (scope.startsWith(CLIENT_SCOPE)) return `${short(scope.slice(CLIENT_SCOPE.length))}’s app (each of its connections)`;
  return grantWho(call);
}

/** A name from outside, short and on one line, for a button. */
function short(text, chars = 40) {
  return shownText(text, chars);
}

/** Who a connection is, in a grant's words: its agent's name and "this connection". */
export function grantWho(call) {
  return `${short(call?.agent || call?.connection?.client || 'this agent')} (${call?.connection?.kind === 'chat' ? 'this chat' : 'this connection'})`;
}

/**
 * The card's choices for question-like `{call, title}`, each with what its button grants, to
 * whom and until when: [{choice, words}], in the order the card shows them. "This connection"
 * is offered only for a call that came through a connection.
 */
export function choicesOf({ call, title }) {
  const what = `“${short(title || call?.tool)}”`;
  const scope = grantScopeOf(call);
  const out = [{ choice: 'deny', words: 'Deny this call' }];
  if (call?.connection?.id != null) out.push({ choice: 'connection', words: `Allow ${what} for ${grantWho(call)} ${UNTIL.tab}` });
  out.push({ choice: 'always', words: `Allow ${what} for ${scopeWho(scope, call)} ${UNTIL.revoked}` });
  out.push({ choice: 'once', words: 'Allow this call only' });
  return out;
}

/** What the settings make of a tool in the list agents see: 'runs', 'asks' or 'refused'. */
export function settingFor(tool, settings, { confirmKinds = {} } = {}) {
  return SETTING_OF[decide({ kinds: kindsOf(tool, { confirmKinds }), tool: tool.name, settings }).decision];
}

/** The sentence an agent reads for a call refused by the person's settings (`title`: the tool's). */
export function deniedSentence(title, kinds, words = KIND_WORDS) {
  const why = kinds.map((k) => (k === 'tool' ? 'this tool' : words[k] || k)).join('; ');
  return `The person's settings refuse “${title}” (${why}), so it did not run. Ask the person in plain words if they want to allow it.`;
}

/** The connection id of a call or a line (null: it came through none). */
function connectionOf(x) {
  return x?.connection?.id == null ? null : String(x.connection.id);
}

/** The key of an activity line: one per connection, agent and turn. */
export function lineKeyOf(call) {
  return `${call.connection?.id ?? ''}\u0000${call.agent ?? ''}\u0000${call.turn ?? ''}`;
}

/**
 * The person's permissions kept for `app` in `storage` (localStorage): `settings()`, `setMode`,
 * `setKind`, `setTool`, and `subscribe(fn)` to hear every change (another tab's too, once
 * `follow(window)` listens to storage events). Storage that is off keeps them for the page.
 */
export function createPermissionStore({ app, storage = globalThis.localStorage } = {}) {
  if (!app) throw new Error('createPermissionStore needs the app’s name: permissions are kept per app.');
  const kept = createKeptStore({ key: `${PERMISSIONS_KEY}:${app}`, storage, read: readSettings });
  return {
    key: kept.key,
    settings: kept.get,
    setMode(mode) {
      if (!Object.hasOwn(MODES, mode)) throw new Error(`There is no mode “${mode}”; the modes are ${Object.keys(MODES).join(', ')}.`);
      // A mode is a preset: choosing one clears the kinds chosen one by one and every grant kept.
      kept.set({ mode, kinds: {}, tools: kept.get().tools, grants: {} });
    },
    /** Keeps a grant of `tool` for `scope` (a connection id, or ALL_AGENTS) until it is revoked; `who`: its name. */
    grant(scope, who, tool) {
      const current = kept.get();
      const had = current.grants[scope]?.tools || [];
      if (had.includes(tool)) return;
      kept.set({ ...current, grants: { ...current.grants, [scope]: { who: String(who ?? ''), tools: [...had, tool] } } });
    },
    /** Revokes the kept grant of `tool` for `scope`, or all of `scope`'s grants without `tool`. */
    revoke(scope, tool) {
      const current = kept.get();
      const had = current.grants[scope];
      if (!had || (tool != null && !had.tools.includes(tool))) return false;
      const grants = { ...current.grants };
      const tools = tool == null ? [] : had.tools.filter((t) => t !== tool);
      if (tools.length) grants[scope] = { ...had, tools };
      else delete grants[scope];
      kept.set({ ...current, grants });
      return true;
    },
    setKind(kind, decision) {
      if (!DECISIONS.includes(decision)) throw new Error(`A kind is allow, ask or deny, not “${decision}”.`);
      const current = kept.get();
      kept.set({ ...current, kinds: { ...current.kinds, [kind]: decision } });
    },
    setTool(name, decision) {
      const current = kept.get();
      const tools = { ...current.tools };
      if (decision == null) delete tools[name];
      else if (!DECISIONS.includes(decision)) throw new Error(`A tool is allow, ask or deny, not “${decision}”.`);
      else tools[name] = decision;
      kept.set({ ...current, tools });
    },
    subscribe: kept.subscribe,
    /** Follows the changes other tabs of the browser make; returns a function that stops. */
    follow: kept.follow,
  };
}

/**
 * Whether `change` lets more run without asking than `settings` do now: a mode (`{mode}`) that
 * makes any of `kinds` less strict, a kind's rule (`{kind, decision}`) or a tool's own choice
 * (`{tool, decision}`, null: the tool follows its kinds) less strict than now. Such a change is
 * one of the person's decisions that needs their presence proven (./presence-check.js).
 */
export function loosens(settings, change, kinds = BASE_KINDS) {
  const rank = (d) => (d == null ? 0.5 : DECISIONS.indexOf(d));
  if (change.mode != null) return kinds.some((k) => rank(modeDecision(change.mode, k)) < rank(kindDecision(settings, k)));
  if (change.kind != null) return rank(change.decision) < rank(kindDecision(settings, change.kind));
  if (change.tool != null) return rank(change.decision) < rank(settings.tools?.[change.tool]);
  return false;
}

/** Whether a card's answer `choice` gives power enough to need the person's presence: "Always", or any Allow of an irreversible call. */
export function answerNeedsPresence(risk, choice) {
  return choice === 'always' || (choice !== 'deny' && risk === 'irreversible');
}

/** A call that did not run because of the person (declined, stopped, withdrawn) or the agent. */
export class NotRun extends Error {
  constructor(sentence, outcome) {
    super(sentence);
    this.outcome = outcome;
  }
}

/**
 * The presence: runs each call through the person's permissions, asks them when a kind asks,
 * and keeps the activity lines. `tools`: the tool definitions ({name, title, safety});
 * `confirmKinds`: tool name → kinds; `kindWords`: kind → why, in words; `estimate(call)`: the
 * app's estimate in milliseconds, or null; `undoTurn(steps)`: the app's undo of a turn's steps
 * (newest first); `stepOf(result)`: the step a result made, or null; `actionOf(call)`: what the
 * call would do, in words ("delete item 4"; default: the tool's title). Hooks the app or the relay
 * client sets: `onAsking(question)`, `onAnswered(question)`, `onStopped(line)` (the person stopped the line's
 * agent: the relay client's `stopAgent(line.connection?.id)`, which ends the turn too),
 * `onGoOn(connection)` (they let it go on: the relay client's `letGoOn`); `subscribe(fn)` hears
 * every change; `watch(fn)` hears each call's events, `{type, call, …}`: 'started', 'asking'
 * ({question}), 'decided' ({choice}), 'running' ({grant}: 'tab' or 'revoked' when a grant let it run without a card, else null), 'ended' ({outcome}: 'done', a NotRun's
 * outcome, or 'failed'), and 'undone' ({calls}: the calls whose steps Undo turn took back) —
 * what ./record.js keeps.
 *
 * Stop stops the agent, not only the turn: every line of its connection stops, and its later
 * calls are refused with AGENT_STOPPED until `goOn(connection)`. `forget(connection)` (the relay
 * said it was forgotten) drops its questions, refuses its queued calls, aborts its running ones,
 * drops what was allowed for it, and refuses any call of it that still comes.
 */
export function createPresence({ app, storage, store, tools = [], confirmKinds = {}, kindWords = {}, kindNames = {}, estimate = () => null, undoTurn = null, stepOf = () => null, actionOf = null, itemsOf = () => [], refuses = () => null, saidOf = null, confirmPresence = null, dataset = null, now = () => Date.now() } = {}) {
  const permissions = store || createPermissionStore({ app, storage });
  const words = { ...KIND_WORDS, ...kindWords };
  /** The items the shown card names, as last given to `onShowItems`. */
  let itemsShown = '[]';
  let byName = new Map(tools.map((t) => [t.name, t]));
  const appKinds = confirmKinds;
  /** Connection id → tools granted for the page's life ("This connection"). */
  const grants = new Map();
  /** Connection id → the name its page grants are listed under. */
  const grantNames = new Map();
  /** Each line's order of creation: Undo turn of any but the newest asks first. */
  let nextLine = 1;
  /**
   * The lines that made steps, kept after they are dismissed (their steps stay in the app), so
   * a turn under a later one's steps is known; the oldest go beyond STEPPED_KEPT.
   */
  const stepped = new Set();
  /** The questions waiting, oldest first. */
  const questions = [];
  /** Line key → line. */
  const lines = new Map();
  /** Connections whose agent the person stopped, until they let it go on. */
  const held = new Set();
  /** Connections the person forgot. */
  const forgotten = new Set();
  /** The dataset shown (`setDataset`): a line's steps are undone only on the dataset they were made on. */
  let shownDataset = dataset == null ? null : String(dataset);
  /** Whether line `line`'s steps were all made on a dataset no longer shown (one not known: no). */
  const elsewhere = (line) => shownDataset !== null && line.stepDatasets.length > 0 && line.stepDatasets.every((d) => d !== null && d !== shownDataset);
  const listeners = new Set();
  /** Who hears each call's events (`watch`). */
  const watchers = new Set();
  let nextQuestion = 1;

  /** Stops connection `connection`'s agent (held until goOn) and its unfinished lines here (line `line` alone when it has none). */
  function stopLines(connection, line) {
    if (connection !== null) held.add(connection);
    for (const other of lines.values()) {
      // A turn that had finished before the Stop stays as it ended.
      if (other !== line && (connection === null || connectionOf(other) !== connection || other.done)) continue;
      other.stopped = true;
      for (const entry of other.calls) {
        if (entry.state === 'running') entry.controller.abort(new NotRun(SENTENCES.STOPPED_RUNNING, 'stopped by the person while it ran'));
      }
      for (const q of questions.filter((x) => x.lineKey === other.key)) {
        drop(q);
        q.reject(new NotRun(SENTENCES.STOPPED, 'stopped by the person'));
      }
    }
  }

  const presence = {
    store: permissions,
    /** Whether the app gave an undo hook (Undo turn is offered only then). */
    canUndo: typeof undoTurn === 'function',
    onAsking: () => {},
    onAnswered: () => {},
    onStopped: () => {},
    onGoOn: () => {},
    /**
     * The items the oldest waiting card names (`itemsOf(call)`), for the app to show them on its
     * view while the card waits; [] once no card names any. Called on each change of them.
     */
    onShowItems: () => {},
    settings: () => permissions.settings(),
    /** The tool definitions, as given. */
    tools: () => [...byName.values()],
    questions: () => [...questions],
    lines: () => [...lines.values()].map((line) => ({ ...publicLine(line), held: connectionOf(line) !== null && held.has(connectionOf(line)), ...elsewhereOf(line) })),
    /** Whether the person stopped connection `id`'s agent (its calls are refused until goOn). */
    isStopped: (id) => id != null && held.has(String(id)),
    /** The tools granted for connection `id` until the tab closes. */
    grantsOf: (connection) => [...(grants.get(String(connection)) || [])],
    /**
     * Every grant, to list with Revoke: [{scope, who, tool, title, until}] (`scope`: a connection
     * id or ALL_AGENTS; `until`: 'tab' or 'revoked'), all agents' first.
     */
    grants() {
      const out = [];
      const titleOf = (tool) => byName.get(tool)?.title || tool;
      const kept = permissions.settings().grants;
      for (const scope of Object.keys(kept).sort((a, b) => (a === ALL_AGENTS ? -1 : b === ALL_AGENTS ? 1 : 0))) {
        const who = scope === ALL_AGENTS ? 'all agents' : kept[scope].who || 'an agent';
        for (const tool of kept[scope].tools) out.push({ scope, who, tool, title: titleOf(tool), until: 'revoked' });
      }
      for (const [scope, tools] of grants) {
        for (const tool of tools) out.push({ scope, who: grantNames.get(scope) || 'an agent', tool, title: titleOf(tool), until: 'tab' });
      }
      return out;
    },
    /** The person revokes a grant ({scope, tool, until} as `grants()` lists it); true when there was one. */
    revoke({ scope, tool, until }) {
      if (until === 'tab') {
        const had = grants.get(String(scope));
        if (!had?.delete(tool)) return false;
        if (!had.size) grants.delete(String(scope));
        emit();
        return true;
      }
      return permissions.revoke(String(scope), tool);
    },
    /** The person revokes every grant (the mode's rules stay); returns how many went. */
    revokeAll() {
      const count = presence.grants().length;
      grants.clear();
      for (const scope of Object.keys(permissions.settings().grants)) permissions.revoke(scope);
      emit();
      return count;
    },
    /** Whether the person changed a kind's rule from the mode's (the mode reads "Custom"). */
    isCustom: () => isCustom(permissions.settings()),
    /**
     * The person chose `mode` (the same one again too): every kind as the mode says, every grant
     * taken back (kept and for the tab); each tool's own choice stays. Returns how many grants went.
     */
    chooseMode(mode) {
      const count = presence.grants().length;
      grants.clear();
      permissions.setMode(mode);
      emit();
      return count;
    },
    /** Every kind a call here can have: the base kinds, then the app's confirm kinds. */
    kinds: () => [...new Set([...BASE_KINDS, ...Object.values(confirmKinds).flat()])],
    /** Why a kind asks, in words. */
    wordsOf: (kind) => words[kind] || kind,
    /** A kind's name, in words ("Deletes items", never "deletes-items"). */
    nameOf: (kind) => kindName(kind, kindNames),
    /** How a card weighs a call of tool `name`: 'read', 'undoable' or 'irreversible'. */
    riskOf: (name) => riskOf(byName.get(name) || { name, safety: 'change' }, { confirmKinds }),
    /**
     * The tool list setting the relay states for `name`: refused when the app refuses it before
     * the permissions (`refuses(tool)`: its data switch), else what the settings make of it.
     */
    settingOf(name) {
      const tool = byName.get(name);
      if (!tool || refuses(tool)) return 'refused';
      return settingFor(tool, permissions.settings(), { confirmKinds });
    },
    /** Why the app refuses tool `name` before the permissions (its data switch), or null. */
    refusalOf(name) {
      const tool = byName.get(name);
      return (tool && refuses(tool)) || null;
    },
    /** Something the app's refusal depends on changed (its data switch): the tools' settings follow. */
    refresh() {
      emit();
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    watch(fn) {
      watchers.add(fn);
      return () => watchers.delete(fn);
    },
    /**
     * The tools changed (one registered or withdrawn, ./webmcp.js): their definitions and the
     * confirm kinds their annotations give (the app's own `confirmKinds` win).
     */
    setTools(next, kinds = {}) {
      byName = new Map(next.map((t) => [t.name, t]));
      confirmKinds = { ...kinds, ...appKinds };
      emit();
    },

    /**
     * Runs `call` ({id, tool, args, agent, connection, turn}) with `fn(signal)` once the person's
     * permissions let it: calls of one turn one after another. Rejects with a NotRun sentence
     * when refused, denied, stopped or withdrawn. `signal` (an AbortSignal) aborts when the
     * person presses Stop or the agent cancels while the call runs: an `fn` that stops on it
     * rejects with the matching sentence; one that finishes anyway answers with its result.
     */
    async run(call, fn) {
      const connection = connectionOf(call);
      if (connection !== null && forgotten.has(connection)) throw new NotRun(SENTENCES.FORGOTTEN, 'its connection was forgotten');
      const line = lineOf(call);
      const entry = { call, state: 'queued', reject: null, controller: new AbortController() };
      line.calls.push(entry);
      tell({ type: 'started', call });
      let outcome = 'done';
      const before = line.tail;
      let release;
      line.tail = new Promise((r) => (release = r));
      emit();
      try {
        await before;
        if (connection !== null && forgotten.has(connection)) throw new NotRun(SENTENCES.FORGOTTEN, 'its connection was forgotten');
        if (line.stopped) throw new NotRun(SENTENCES.STOPPED, 'stopped by the person');
        if (connection !== null && held.has(connection)) throw new NotRun(SENTENCES.AGENT_STOPPED, 'the agent is stopped');
        if (entry.cancelled) throw new NotRun(SENTENCES.CANCELLED, 'cancelled: the agent stopped waiting');
        const tool = byName.get(call.tool) || { name: call.tool, title: call.tool, safety: 'change' };
        const estimateMs = estimate(call);
        const kinds = kindsOf(tool, { confirmKinds, estimateMs });
        const decided = decide({ kinds, tool: call.tool, settings: permissions.settings(), connection: call.connection?.id, scope: grantScopeOf(call), grants });
        if (decided.decision === 'deny') {
          throw new NotRun(deniedSentence(tool.title || tool.name, decided.denied, words), 'refused by the person’s settings');
        }
        if (decided.decision === 'ask') await ask(call, tool, decided.asked, line, entry, estimateMs);
        entry.state = 'running';
        line.running = tool.title || tool.name;
        line.startedMs = now();
        line.estimateMs = Number.isFinite(estimateMs) ? estimateMs : null;
        // What let it run without a card: a grant ('tab' or 'revoked'), else the settings.
        tell({ type: 'running', call, grant: decided.decision === 'allow' ? decided.grant : null });
        emit();
        const { signal } = entry.controller;
        const result = await Promise.resolve()
          .then(() => fn(signal))
          .catch((e) => {
            throw signal.aborted ? signal.reason : e;
          });
        const step = stepOf(result);
        if (step != null) {
          line.steps.push(step);
          line.stepCalls.push(call);
          line.stepDatasets.push(shownDataset);
          stepped.delete(line);
          stepped.add(line);
          if (stepped.size > STEPPED_KEPT) stepped.delete(stepped.values().next().value);
        }
        note(line, didOf(call, tool, result));
        return result;
      } catch (err) {
        outcome = err instanceof NotRun ? err.outcome : 'failed';
        if (err instanceof NotRun) note(line, { what: 'not-run', words: `“${shown(titleOf(call))}” not run: ${err.outcome}` });
        else note(line, { what: 'failed', words: `“${shown(titleOf(call))}” failed` });
        throw err;
      } finally {
        tell({ type: 'ended', call, outcome });
        line.calls.splice(line.calls.indexOf(entry), 1);
        if (!line.calls.find((e) => e.state === 'running')) {
          line.running = null;
          line.startedMs = null;
          line.estimateMs = null;
        }
        if (!line.calls.length) {
          line.done = true;
          trimLines();
        }
        release();
        emit();
      }
    },

    /**
     * The person's answer to question `id`: 'once', 'connection' (the tool for this connection
     * until the tab closes), 'always' (the tool until revoked, for `grantScopeOf(call)`) or 'deny'.
     */
    answer(id, choice) {
      const q = questions.find((x) => x.id === id);
      if (!q || !q.choices.some((c) => c.choice === choice) || q.proving) return false;
      if (confirmPresence && answerNeedsPresence(q.risk, choice)) {
        // Allow on an irreversible call, or Always: only once the person's device confirmed
        // it was them, for this call and this answer (an agent driving the page cannot).
        q.proving = true;
        q.presenceRefused = '';
        emit();
        return confirmPresence(PRESENCE.ANSWER, `${q.call.id}\n${choice}`).then(
          () => {
            q.proving = false;
            return questions.includes(q) ? settle(q, choice) : false;
          },
          (err) => {
            q.proving = false;
            q.presenceRefused = String(err?.message || err);
            emit();
            return false;
          },
        );
      }
      return settle(q, choice);
    },

    /**
     * The person answered call `id`'s card in the agent app (the local server asked it there:
     * elicitation): the card goes as if clicked, `choice` 'once' or 'deny', the record saying
     * so. Never an Allow that needs the person's presence (an irreversible call): that stays in
     * the tab. False when no card of the call waits (the first answer wins, once).
     */
    answerInApp(id, choice) {
      const q = questions.find((x) => String(x.call.id) === String(id));
      if (!q || q.proving || !ELICITED_CHOICES.includes(choice) || !q.choices.some((c) => c.choice === choice)) return false;
      if (answerNeedsPresence(q.risk, choice)) return false;
      return settle(q, choice, 'app');
    },

    /**
     * The person's presence, proven for `decision` (PRESENCE.SETTING: a looser mode or rule,
     * letting a stopped agent go on) about `subject`: resolves with '' once it is (or no check
     * is set), else with the sentence saying why not. Nothing is changed here: the caller
     * changes the setting once this resolved with ''.
     */
    async confirmed(decision, subject) {
      if (!confirmPresence) return '';
      try {
        await confirmPresence(decision, String(subject));
        return '';
      } catch (err) {
        return String(err?.message || err);
      }
    },
    /** Whether `change` ({mode} | {kind, decision} | {tool, decision}) loosens the person's settings. */
    loosens: (change) => loosens(permissions.settings(), change, presence.kinds()),

    /**
     * The agent no longer waits for call `id` (the relay's cancel): its question or queued run
     * goes, and a run under way is told to stop.
     */
    cancel(id) {
      for (const line of lines.values()) {
        for (const entry of line.calls) {
          if (String(entry.call.id) !== String(id)) continue;
          if (entry.state === 'running') {
            entry.controller.abort(new NotRun(SENTENCES.CANCELLED_RUNNING, 'cancelled while it ran'));
            continue;
          }
          entry.cancelled = true;
          const q = questions.find((x) => x.entry === entry);
          if (q) {
            drop(q);
            q.reject(new NotRun(SENTENCES.CANCELLED, 'cancelled: the agent stopped waiting'));
          }
        }
      }
      emit();
    },

    /**
     * The person pressed Stop on line `key`: its agent stops. Every line of its connection is
     * stopped (questions withdrawn, waiting calls refused, calls under way told to stop), and the
     * connection's later calls are refused until `goOn`.
     */
    stop(key) {
      const line = lines.get(key);
      if (!line) return;
      stopLines(connectionOf(line), line);
      presence.onStopped(publicLine(line));
      emit();
    },

    /**
     * Connection `id`'s agent was stopped elsewhere (Stop pressed in another tab of the pairing):
     * its lines here say so, with Let it go on, as in the tab where it was pressed; the relay is
     * not told again.
     */
    stoppedElsewhere(id) {
      if (id == null || held.has(String(id)) || forgotten.has(String(id))) return;
      stopLines(String(id), null);
      emit();
    },

    /** The person lets connection `id`'s stopped agent go on: its next call runs again. */
    goOn(id) {
      if (id == null || !held.delete(String(id))) return false;
      presence.onGoOn(String(id));
      emit();
      return true;
    },

    /**
     * Connection `id` was forgotten: its questions go, its queued calls are refused, its calls
     * under way told to stop, what was allowed for it dropped; no call of it runs again.
     */
    forget(id) {
      if (id == null) return;
      const connection = String(id);
      forgotten.add(connection);
      held.delete(connection);
      grants.delete(connection);
      permissions.revoke(connection);
      for (const q of questions.filter((x) => connectionOf(x.call) === connection)) {
        drop(q);
        q.reject(new NotRun(SENTENCES.FORGOTTEN, 'its connection was forgotten'));
      }
      for (const line of lines.values()) {
        if (connectionOf(line) !== connection) continue;
        for (const entry of line.calls) {
          if (entry.state === 'running') entry.controller.abort(new NotRun(SENTENCES.FORGOTTEN, 'its connection was forgotten while it ran'));
        }
      }
      emit();
    },

    /** Every question is moot (another dataset shown, the tab closing): withdrawn with `reason`. */
    withdrawAll(reason) {
      for (const q of [...questions]) {
        drop(q);
        q.reject(new NotRun(SENTENCES.WITHDRAWN.replace('{reason}', reason), 'withdrawn'));
      }
      emit();
    },

    /**
     * Whether Undo turn of line `key` asks first: a later turn (of any agent) made steps not
     * undone, so undoing this one reaches under them.
     */
    undoAsks(key) {
      const line = lines.get(key);
      if (!line || elsewhere(line)) return false;
      // A later turn on another dataset reaches nothing this one changed.
      for (const other of stepped) if (other.seq > line.seq && !other.undone && !elsewhere(other)) return true;
      return false;
    },

    /**
     * The app shows dataset `name`: a line whose steps were all made on another dataset can no
     * longer be undone here, and says so at once (`undoSaid`, no Undo turn).
     */
    setDataset(name) {
      shownDataset = name == null ? null : String(name);
      emit();
    },

    /**
     * Undo turn: the app's hook takes back line `key`'s steps, newest first. A turn that is not
     * the newest (`undoAsks`) is undone only with `{confirmed: true}`, the person's second yes.
     */
    async undoTurn(key, { confirmed = false } = {}) {
      const line = lines.get(key);
      if (!line || !undoTurn || !line.steps.length || line.undone || elsewhere(line)) return false;
      if (!confirmed && presence.undoAsks(key)) return false;
      try {
        await undoTurn([...line.steps].reverse(), publicLine(line));
      } catch (err) {
        // Said on the line: why its turn cannot be undone (its steps were another dataset's, say).
        line.undoSaid = String(err?.message || err || 'This turn could not be undone.');
        emit();
        return false;
      }
      line.undone = true;
      line.undoSaid = null;
      tell({ type: 'undone', calls: [...line.stepCalls] });
      emit();
      return true;
    },

    /** Dismiss: a line done acting leaves the activity. */
    dismiss(key) {
      const line = lines.get(key);
      if (!line || line.calls.length) return false;
      lines.delete(key);
      emit();
      return true;
    },
  };

  function emit() {
    showItems();
    for (const fn of listeners) fn(presence);
  }
  function tell(event) {
    for (const fn of watchers) {
      try {
        fn(event);
      } catch {
        // A watcher's failure is its own: the call goes on.
      }
    }
  }

  /** Tells the app which items the oldest card names, when they change. */
  function showItems() {
    const q = questions[0];
    const items = q ? q.items : [];
    const key = JSON.stringify(items);
    if (key === itemsShown) return;
    itemsShown = key;
    try {
      presence.onShowItems([...items]);
    } catch (err) {
      // The app's view failing must not stop the card.
      console.error(err);
    }
  }

  function titleOf(call) {
    const tool = byName.get(call.tool);
    return (tool && (tool.title || tool.name)) || String(call.tool);
  }

  /** What a call read or changed, in words: the app's (`saidOf`), else the result's summary or the tool's title. */
  function didOf(call, tool, result) {
    const said = saidOf ? saidOf(call, result) : null;
    const read = tool.safety === 'read';
    if (typeof said === 'string' && said) return { what: read ? 'read' : 'changed', words: shown(said) };
    const summary = result?.data?.summary;
    if (!read && typeof summary === 'string' && summary) return { what: 'changed', words: shown(summary) };
    return { what: read ? 'read' : 'changed', words: `${read ? 'read' : 'used'} “${shown(titleOf(call))}”` };
  }

  function note(line, did) {
    line.did.push(did);
    if (line.did.length > DID_KEPT) line.did.splice(0, line.did.length - DID_KEPT);
  }
  // A change of the permissions (here or in another tab) is a change of the presence.
  permissions.subscribe(emit);

  /** What a line says of its Undo turn when its steps are another dataset's: it cannot, at once. */
  function elsewhereOf(line) {
    if (line.undone || !elsewhere(line)) return {};
    const name = line.stepDatasets.find((d) => d !== null);
    return { undoable: false, undoSaid: UNDO_ELSEWHERE.replace('{dataset}', shown(name, 80)) };
  }

  function trimLines() {
    for (const [key, line] of lines) {
      if (lines.size <= LINES_KEPT) break;
      if (line.done) lines.delete(key);
    }
  }

  function lineOf(call) {
    const key = lineKeyOf(call);
    let line = lines.get(key);
    if (!line) {
      line = { key, seq: nextLine++, agent: call.agent || 'An agent', connection: call.connection || null, turn: call.turn ?? null, calls: [], steps: [], stepCalls: [], stepDatasets: [], did: [], tail: Promise.resolve(), running: null, startedMs: null, estimateMs: null, stopped: false, done: false, undone: false, undoSaid: null };
      lines.set(key, line);
    }
    line.done = false;
    return line;
  }

  function ask(call, tool, kinds, line, entry, estimateMs) {
    return new Promise((resolve, reject) => {
      const title = tool.title || tool.name;
      const action = (actionOf && actionOf(call)) || `${title.charAt(0).toLowerCase()}${title.slice(1)}`;
      let items = [];
      try {
        items = (itemsOf(call) || []).filter((x) => typeof x === 'number' || typeof x === 'string');
      } catch {
        items = [];
      }
      const q = {
        id: nextQuestion++,
        call,
        title,
        /** The tool's own words for what it does. */
        description: typeof tool.description === 'string' ? tool.description : '',
        risk: riskOf(tool, { confirmKinds }),
        /** The kinds asked about, by name. */
        kindNames: kinds.map((k) => (k === 'tool' ? 'This tool' : kindName(k, kindNames))),
        items: [...new Set(items)],
        kinds,
        why: kinds.map((k) => (k === 'tool' ? 'you chose to be asked before this tool' : k === 'heavy' ? heavyWords(words.heavy, estimateMs) : words[k] || k)),
        estimateMs: Number.isFinite(estimateMs) ? estimateMs : null,
        lineKey: line.key,
        action,
        sentence: `${call.agent || 'An agent'} asks to ${action}. Allow?`,
        choices: choicesOf({ call, title }),
        entry,
        resolve,
        reject,
      };
      entry.state = 'asking';
      questions.push(q);
      presence.onAsking(q);
      tell({ type: 'asking', call, question: q });
      emit();
    });
  }

  /** Applies the person's answer to question `q` (its presence proven where it must be), given in the tab or (`via` 'app') the agent app. */
  function settle(q, choice, via = 'tab') {
    drop(q);
    tell({ type: 'decided', call: q.call, choice, via });
    if (choice === 'deny') {
      // Nothing is said before the result: it says they declined (the step does not run).
      q.reject(new NotRun(`The person declined “${q.title}”, so nothing was changed.`, 'declined by the person'));
      emit();
      return true;
    }
    presence.onAnswered(q, choice);
    if (choice === 'connection') {
      const id = String(q.call.connection.id);
      if (!grants.has(id)) grants.set(id, new Set());
      grants.get(id).add(q.call.tool);
      grantNames.set(id, grantWho(q.call));
    }
    if (choice === 'always') {
      const scope = grantScopeOf(q.call);
      permissions.grant(scope, scopeWho(scope, q.call), q.call.tool);
    }
    q.resolve();
    return true;
  }

  function drop(q) {
    const at = questions.indexOf(q);
    if (at >= 0) questions.splice(at, 1);
  }

  return presence;
}

/** Why a heavy call asks, with the app's estimate: "… (about 40 s by this app's measurements)". */
export function heavyWords(words, estimateMs) {
  if (!Number.isFinite(estimateMs)) return words;
  return `${words} (about ${Math.round(estimateMs / 1000)} s by this app’s measurements)`;
}

/** Text from outside, one line and cut (the card's and the line's words). */
function shown(text, chars = 120) {
  return shownText(text, chars);
}

/** A line as the UI reads it. */
function publicLine(line) {
  return {
    key: line.key,
    agent: line.agent,
    connection: line.connection,
    turn: line.turn,
    running: line.running,
    startedMs: line.startedMs,
    estimateMs: line.estimateMs,
    waiting: line.calls.length,
    steps: [...line.steps],
    did: line.did.map((d) => ({ ...d })),
    undoSaid: line.undoSaid,
    /** Whether Undo turn can take its steps back here (false: they were another dataset's). */
    undoable: line.steps.length > 0 && !line.undone,
    stopped: line.stopped,
    done: line.done,
    undone: line.undone,
  };
}
