// One call that wires the tab end: an app passes its relay address, its tools and the function
// that runs them, and gets the relay client, the person's presence, the data switch, the WebMCP
// bridge, the record of what agents did, the sign that the tab is driven, and the page's
// `<tabrelay-confirm-card>`, `<tabrelay-activity>` and `<tabrelay-agents>` wired together.
//
//   import { createTabrelay } from 'tabrelay-tab';
//   const tabrelay = createTabrelay({
//     relay: 'https://relay.example',        // the relay's address (never a link's)
//     app: 'orders',                          // the app's name: what the browser keeps is kept under it
//     tools,                                  // the catalogue's tools, or tools in WebMCP's shape
//     run: (name, input, client) => app.run(name, input, client.agent, client.signal),
//     dataset: 'orders-2026',                 // what the data switch and the relay's view are of
//   });
//   tabrelay.on('call', ({ agent, tool, outcome }) => log(agent, tool, outcome));
//
// Every call, a remote agent's (the relay's) or an in-browser one's (WebMCP's), goes through the
// same door: the record keeps it, the dataset's data switch guards it, then the person's
// permissions (the confirm card, the activity line with Stop and Undo turn). The app hears one
// way, `on(event, fn)` (returns a function that stops): `call` ({call, agent, tool, outcome, ok}
// once a call ended or was refused), `items` (the items the waiting card names; [] once none),
// `status` (the relay client, after each change of its status). The parts stay available one by
// one (`relay`, `presence`, `dataSwitch`, `bridge`, `record`, `driven`) and each module can be
// used alone, as before.

import { RelayClient } from './relay-client.js';
import { joinLocal, joinPresenceCheck, localAddressOf } from './local-relay.js';
import { createToolBridge } from './webmcp.js';
import { createPresence, NotRun, answerNeedsPresence } from './presence.js';
import { createDataSwitch, guardCall, refusalBefore } from './data-guard.js';
import './agents-panel.js';
import { createRecord } from './record.js';
import { createDrivenIndicator } from './driven.js';
import { createPresenceCheck } from './presence-check.js';

/** What a call's agent is called when it gave no name. */
export const SOME_AGENT = 'an agent';
/** What the `call` event says of a call refused by the person's settings. */
export const REFUSED_BY_SETTINGS = 'refused by your settings';
/** Why the questions waiting go when the tab closes, and (by default) when the dataset changes. */
export const WITHDRAWN = Object.freeze({ closing: 'the tab is closing', dataset: 'the app showed another dataset' });
/** Why the relay was not started (shown in the panel's status line). */
export const NOT_STARTED = Object.freeze({
  address: 'the relay address is not an http or https address',
  insecure: 'this page must be opened over https or from localhost',
});
/** The events `on` takes. */
export const EVENTS = Object.freeze(['call', 'items', 'status']);
/** The elements found in the page when the app names none. */
export const ELEMENT_TAGS = Object.freeze({ confirm: 'tabrelay-confirm-card', activity: 'tabrelay-activity', panel: 'tabrelay-agents' });

/** `address` when it is an http(s) URL (as a URL's href), else null. */
export function relayAddress(address) {
  try {
    const url = new URL(String(address));
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** A call's agent as the page names it. */
export function agentOf(call) {
  return typeof call?.agent === 'string' && call.agent.trim() ? call.agent : SOME_AGENT;
}

/**
 * A tool as the bridge registers it (WebMCP's shape): a tool with `execute` as it is; a
 * catalogue tool (`input`, `safety`) with `execute` calling `run(name, input, client)`: a read is
 * `readOnlyHint`, a destructive tool `consequentialHint`.
 */
export function webmcpToolOf(tool, run) {
  if (typeof tool?.execute === 'function') return tool;
  if (typeof run !== 'function') throw new TypeError(`The tool “${tool?.name}” has no execute function and no run(name, input, client) was given.`);
  const out = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema ?? tool.input,
    annotations: tool.annotations ?? { readOnlyHint: tool.safety === 'read', consequentialHint: tool.safety === 'destructive' },
    execute: (input, client) => run(tool.name, input, client),
  };
  if (tool.title) out.title = tool.title;
  return out;
}

/**
 * Wires the tab end. Options:
 * - `relay`: the relay's address (http or https; anything else leaves the relay off, and the
 *   panel says why); `local`: the local server's address (`tabrelay-local` on the person's
 *   computer, such as `http://127.0.0.1:8790`; none by default; `localhost` is reached as
 *   127.0.0.1, where its waiting page's cookie is), connected beside the relay
 *   with the same protocol and quietly retried while none runs (./local-relay.js); `app`: the app's name (permissions, switches and the record are kept under it);
 * - `tools`: the app's tools, catalogue-shaped (`name`, `title`, `description`, `input`,
 *   `safety`, `data`, `summaries_only`) or WebMCP-shaped (with `execute(input, client)`), each
 *   registered once for both kinds of agent; `run(name, input, client)`: runs a catalogue tool
 *   (`client`: `{agent, signal, call}`);
 * - `dataset`: the dataset shown (the data switch is kept per dataset; the relay is told);
 * - the presence's options, passed on: `confirmKinds`, `kindWords`, `kindNames`, `itemsOf`,
 *   `estimate`, `stepOf`, `undoTurn` (its steps; the tools stated follow after it), `actionOf`, `saidOf`;
 * - `confirm`, `activity`, `panel`: the elements (or selectors) to wire, by default the page's
 *   first `<tabrelay-confirm-card>`, `<tabrelay-activity>`, `<tabrelay-agents>`; null: none;
 * - `driven`: false turns the title, favicon and banner off, or `{title, favicon, banner}`;
 * - `chat`: true (or `{origins, providers, element, budget…}`, ./chat.js's options) adds the chat
 *   bar, loaded only then: the person's own agent, drawn by the page's `<tabrelay-chat>`;
 * - `record`: false keeps no record; `modelContext`: the bridge's (`frames` is gone: giving it
 *   throws the bridge's NO_FRAMES); `start`: false
 *   leaves the relay to `start()`; `window`, `document`, `storage`, `indexedDB`, `channel` (the record's), `keys`,
 *   `WebSocket`: for tests.
 */
export function createTabrelay(options = {}) {
  const {
    relay: address,
    local: localAddress,
    app,
    tools = [],
    run,
    dataset = null,
    confirmKinds,
    kindWords,
    kindNames,
    itemsOf,
    estimate,
    stepOf,
    undoTurn,
    actionOf,
    saidOf,
    withoutDevice = 'refuse',
    credentials,
    PublicKeyCredential,
    driven: drivenOptions = true,
    record: keepRecord = true,
    modelContext,
    frames,
    chat: chatOptions = null,
    start = true,
    window: win = globalThis.window ?? null,
    document: doc = globalThis.document ?? null,
    storage,
    indexedDB,
    channel,
    keys,
    WebSocket,
  } = options;
  if (!app) throw new Error('createTabrelay needs the app’s name: what the browser keeps is kept under it.');
  if (!Array.isArray(tools)) throw new TypeError('createTabrelay’s tools are a list.');
  const listeners = new Map(EVENTS.map((e) => [e, new Set()]));
  const emit = (event, value) => {
    for (const fn of listeners.get(event)) fn(value);
  };
  let shownDataset = dataset;
  /** Name → the tool as given (its data class and allow-list guard it). */
  const given = new Map(tools.map((t) => [t.name, t]));
  const described = (name) => given.get(name) || { name };
  const catalogued = tools.filter((t) => typeof t.execute !== 'function');
  const kept = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

  /** The person's switch "Agents see names and summaries only", kept per dataset. */
  const dataSwitch = createDataSwitch(kept({ app, storage }));
  const presence = createPresence(
    kept({
      app,
      storage,
      tools: catalogued,
      confirmKinds,
      kindWords,
      kindNames,
      // The dataset's switch refuses some tools before the permissions: the tools stated say so.
      refuses: (tool) => refusalBefore(described(tool.name), dataSwitch.isOn(shownDataset)),
      itemsOf,
      estimate,
      stepOf,
      undoTurn: undoTurn
        ? (steps) => {
            const out = undoTurn(steps);
            bridge.step();
            return out;
          }
        : undefined,
      actionOf,
      saidOf,
      // A turn's steps are undone only on the dataset they were made on.
      dataset: shownDataset,
      // Allow on an irreversible call and "Always" count once the person's device confirmed them.
      confirmPresence: (decision, subject) => (check ? check.confirm(decision, subject) : Promise.resolve({ verified: false })),
    }),
  );
  /** What every agent did, kept in this browser (IndexedDB). */
  const record = keepRecord === false ? null : createRecord(kept({ app, indexedDB, channel }));
  record?.follow(presence);
  const url = relayAddress(address);
  const localUrl = localAddress == null ? null : localAddressOf(localAddress);
  /** A relay client of `at` (the relay's, or the local server's: `quiet`). */
  const clientOf = (at, quiet) =>
    new RelayClient(
        kept({
          relay: at,
          quiet,
          storage,
          keys,
          WebSocket,
          handle: (call) => bridge.handle(call),
          onCancel: (id) => presence.cancel(id),
          // The person answered a card in the agent app (only the local server says so).
          onElicited: quiet ? (id, choice) => presence.answerInApp(id, choice) : undefined,
          // Forget and Stop are kept by the relay client too: its cards and calls go, its calls wait.
          onForgotten: (id) => presence.forget(id),
          onGoOn: (id) => presence.goOn(id),
          // The bridge states the tools.
          tools: [],
          dataset: shownDataset,
          onRefused: (call) => {
            const why = presence.refusalOf(call.tool);
            record?.refused(call, why);
            emit('call', { call, agent: agentOf(call), tool: call.tool, outcome: why ? `error: ${why}` : REFUSED_BY_SETTINGS, ok: false });
          },
          // A tool the data switch refuses says so (the relay lists it as refused meanwhile).
          refusalOf: (call) => presence.refusalOf(call.tool),
        }),
      );
  const local = localUrl ? clientOf(localUrl, true) : null;
  const relay = url ? clientOf(url, false) : local;
  if (relay && local && relay !== local) joinLocal(relay, local);
  /** The person's proven presence (./presence-check.js), checked where the relay or the tab decides. */
  const checkOf = (at) => createPresenceCheck(kept({ relay: at, withoutDevice, credentials, PublicKeyCredential }));
  const check = !relay ? null : local && relay !== local ? joinPresenceCheck(checkOf(relay), checkOf(local), relay) : checkOf(relay);
  /** What the person's side says of this browser's check: 'device', 'without', 'refused' or 'off' (no relay). */
  presence.presenceState = 'off';
  const followCheck = () =>
    check?.state().then((state) => {
      if (state !== presence.presenceState) {
        presence.presenceState = state;
        presence.refresh();
      }
    });
  followCheck();
  relay?.subscribe(() => followCheck());
  if (win) dataSwitch.follow(win);
  // The switch refuses tools: the tools stated, the panel and the consent follow it.
  dataSwitch.subscribe(() => presence.refresh());

  /** Every agent's door: the record, the dataset's switch, then the person's permissions. */
  async function door(call, fn) {
    const agent = agentOf(call);
    try {
      const result = await guardCall({ tool: described(call.tool), dataset: shownDataset, dataSwitch }, () => presence.run(call, fn));
      emit('call', { call, agent, tool: call.tool, outcome: 'ok', ok: true });
      return result;
    } catch (err) {
      emit('call', { call, agent, tool: call.tool, outcome: err instanceof NotRun ? err.outcome : `error: ${err.message}`, ok: false });
      throw err;
    }
  }
  const bridge = createToolBridge(kept({ relay, presence, run: record ? record.door(door) : door, modelContext, frames }));
  /** Each tool's registration: aborting one withdraws the tool from every agent. */
  const registrations = new Map();
  const register = (tool, { signal } = {}) => {
    const own = new AbortController();
    signal?.addEventListener('abort', () => own.abort(), { once: true });
    const shaped = webmcpToolOf(tool, run);
    registrations.set(shaped.name, own);
    if (!given.has(shaped.name)) given.set(shaped.name, tool);
    return bridge.registerTool(shaped, { signal: own.signal }).catch((err) => {
      if (registrations.get(shaped.name) === own) registrations.delete(shaped.name);
      throw err;
    });
  };
  const registered = Promise.all(tools.map((t) => register(t)));
  bridge.start();

  // The agent app may answer the card too where it can be asked (the local server): never an Allow needing presence.
  presence.onAsking = (q) => relay?.asking(q.call.id, q.sentence, !answerNeedsPresence(q.risk, 'once'));
  presence.onAnswered = (q) => relay?.answered(q.call.id);
  // While a card waits, the app marks the items it names on its view.
  presence.onShowItems = (items) => emit('items', items);
  // Stop stops the agent (the relay refuses a remote agent's calls) until the person lets it go
  // on; an in-browser agent's turn ends with it (the presence refuses its calls meanwhile).
  presence.onStopped = (line) => (line.connection?.kind === 'chat' ? chatEngine?.stoppedByLine(line) : line.connection?.kind === 'browser' ? bridge.step() : relay?.stopAgent(line.connection?.id));
  // The chat's agent goes on with the person's next message; the relay knows nothing of it.
  presence.onGoOn = (id) => (id === chatEngine?.id ? undefined : relay?.letGoOn(id));
  relay?.subscribe((r) => emit('status', r));
  // Stop pressed in another tab of the pairing: this tab's lines of that agent say so too.
  for (const client of new Set([relay, local])) {
    client?.subscribe(() => {
      for (const id of client.stoppedAgents) presence.stoppedElsewhere(id);
    });
  }

  const element = (named, tag) => (named === null || named === false ? null : typeof named === 'string' ? doc?.querySelector(named) : named || doc?.querySelector(tag) || null);
  const confirm = element(options.confirm, ELEMENT_TAGS.confirm);
  const activity = element(options.activity, ELEMENT_TAGS.activity);
  const panel = element(options.panel, ELEMENT_TAGS.panel);
  if (confirm) confirm.presence = presence;
  if (activity) activity.presence = presence;
  // Once a card is answered (or the banner's Stop pressed), the focus goes to the activity lines.
  if (confirm && activity && !confirm.returnFocus) confirm.returnFocus = activity;
  if (panel) Object.assign(panel, { relay, presence, dataSwitch, datasetId: shownDataset, record, presenceCheck: check });
  /**
   * The chat bar (./chat.js, loaded only when asked for): the person's own agent, whose calls go
   * through the same door (`bridge.handle`), drawn by the page's `<tabrelay-chat>` (or `element`).
   */
  let chatEngine = null;
  const chat = chatOptions
    ? Promise.all([import('./chat.js'), doc ? import('./chat-element.js') : null]).then(([{ createChat }]) => {
        const { element: named, ...rest } = chatOptions === true ? {} : chatOptions;
        chatEngine = createChat({ app, presence, handle: (call) => bridge.handle(call), tools: () => bridge.tools(), subscribeTools: (fn) => bridge.subscribe(fn), dataKeptOut: () => dataSwitch.isOn(shownDataset), ...rest });
        const el = element(named, 'tabrelay-chat');
        if (el) el.chat = chatEngine;
        return chatEngine;
      })
    : null;
  // While an agent's call runs or waits for the person: the title, the favicon and a banner with Stop.
  const driven = doc && drivenOptions !== false ? createDrivenIndicator({ presence, document: doc, card: confirm, returnFocus: activity, ...(typeof drivenOptions === 'object' ? drivenOptions : {}) }) : null;

  // The person's permissions changed (here or in another tab of the app): the tools stated follow.
  if (win) presence.store.follow(win);
  // The tab closing makes every question moot.
  win?.addEventListener('pagehide', () => presence.withdrawAll(WITHDRAWN.closing));

  const tabrelay = Object.freeze({
    relay,
    presence,
    /** The person's presence check (null without a relay). */
    presenceCheck: check,
    dataSwitch,
    bridge,
    record,
    driven,
    panel,
    /** The chat bar (a promise of ./chat.js's chat) when the `chat` option asked for it, else null. */
    chat,
    /** Resolves once the tools given are registered (with the browser's WebMCP too). */
    registered,
    /** Registers one more tool (either shape) for every agent; aborting `signal` withdraws it. */
    register,
    /** Withdraws tool `name` from every agent (remote listeners hear `list_changed`). */
    withdraw(name) {
      registrations.get(name)?.abort();
      registrations.delete(name);
    },
    /** The dataset shown now. */
    get dataset() {
      return shownDataset;
    },
    /**
     * The app shows another dataset: every question waiting is withdrawn (the agent told `why`),
     * the data switch, the panel, the activity lines and the relay follow it. A dataset whose
     * switch the person never set starts on when the app says so (`dataSwitch: true`), else as
     * the dataset shown before (never turned off unasked).
     */
    setDataset(name, why = WITHDRAWN.dataset, { dataSwitch: on } = {}) {
      presence.withdrawAll(why ?? WITHDRAWN.dataset);
      if (name != null) dataSwitch.carry(shownDataset, name, on);
      shownDataset = name;
      presence.setDataset(name);
      if (panel) panel.datasetId = name;
      presence.refresh(); // The data switch is the dataset's: what it refuses may change.
      relay?.setView({ dataset: name });
      bridge.step();
    },
    /** The app made a step of its own (the person's Undo): an agent's turn ends there. */
    step() {
      bridge.step();
    },
    /** Starts the relay client, or says in the panel why it cannot. */
    start() {
      if (!relay) panel?.showStatus?.('stopped', { reason: NOT_STARTED.address });
      else if (win && !win.isSecureContext) panel?.showStatus?.('stopped', { reason: NOT_STARTED.insecure });
      else relay.start();
    },
    /** Stops the relay client, the page's WebMCP tools and the driven indicator. */
    stop() {
      relay?.stop();
      bridge.stop();
      driven?.stop();
    },
    /** Hears `event` (`call`, `items`, `status`); returns a function that stops. */
    on(event, fn) {
      const set = listeners.get(event);
      if (!set) throw new Error(`No event “${event}”: the events are ${EVENTS.join(', ')}.`);
      set.add(fn);
      return () => set.delete(fn);
    },
  });
  if (start) tabrelay.start();
  return tabrelay;
}
