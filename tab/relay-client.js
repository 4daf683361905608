// The tab end of Tabrelay: an ES module with no dependencies that an app embeds.
//
// It makes and keeps the browser's pairing key: a non-extractable ECDSA P-256 WebCrypto key
// pair, one per relay origin, kept in IndexedDB and shared by every tab of the browser (script
// on the page can use it, never read it). It connects to the relay's WebSocket naming the
// pairing id (the key's hash), and answers the relay's fresh challenge with a hello carrying
// the public key and its signature over the challenge, bound to the relay's origin (so a proof is
// worthless anywhere else or later), answers calls through the handler the app gives it,
// approves connect codes, says when the tab gains or loses focus, and reconnects by itself
// with growing, jittered waits. `keys` ({get(origin), put(origin, keyPair)}) replaces the
// IndexedDB store (Node has none; tests pass one in memory); `put` keeps the pair stored first,
// unless the stored one is unsound (`soundKey`), which it replaces. `relayOrigin` (default: the
// relay address's origin) is what the key is kept by and the proofs name.
//
//   import { RelayClient, takeConnectLink } from './relay-client.js';
//   const relay = new RelayClient({ relay: 'https://relay.example', handle: async (call) => ... });
//   relay.start();
//   await relay.approve('ABCDE-FGHJK');            // a whole code the person typed
//   const link = takeConnectLink();                 // the waiting page's link, once per page load
//   const { confirm } = await relay.approveLink(link); // then open `confirm` as a window (below)
//
// The waiting page's link (`APP_URL#tabrelay-connect=REFERENCE`) carries a reference, never the
// code. This module reads it once, when the page loads, and takes it off the address bar at
// once; a later fragment is never read. The relay approves a link's reference only once the
// browser confirms it opened the waiting page: `approveLink` resolves with the relay's
// `confirm` address, which the app opens as a top-level window from the person's press
// (`openConfirmWindow`); that window carries the waiting page's cookie, which only the browser
// that opened the waiting page has. Anywhere else the relay refuses it, and only the whole code,
// typed, approves.
//
// The tab states its tools: full MCP tool definitions, each with what the person's settings
// make of it (`setting`: 'asks', 'runs' or 'refused'). By default the bundle catalogue's tools
// (destructive ones ask); an app with its own tools or settings passes `tools` or calls
// `relay.setTools(tools)` whenever they change, and `relay.setView({ dataset })` when the shown
// dataset changes (the relay quotes its name to agents as data). The relay leaves refused tools
// out of the agents' list; a call to one anyway is refused here with TOOL_REFUSED, without
// reaching `handle`. Asking the person before a tool whose setting is 'asks' is the app's part
// (see `asking` below). A list the relay refuses comes back through `onToolsRefused(sentence)`
// (the relay keeps the list before it).
//
// `handle(call)` gets {id, tool, args, agent, connection, turn} and returns {data, image?}
// (image: {data, mimeType, width, height}), or throws an Error whose message is one
// sentence the agent reads. While the person is asked about a call, the app calls
// `relay.asking(call.id, sentence)` and, once they allowed it, `relay.answered(call.id)` (after a
// Deny, nothing: the result says they declined); a step
// the person takes themselves is `relay.step()`. `onCancel(id)` hears of calls no longer waited
// for (drop their card). `subscribe(fn)` hears every change of `status` (and its
// `statusDetail`) and of `toolsRefused`, for any number of listeners (the Agents panel is one).
//
// Forget and Stop are kept here, in the protocol, not only in the app's elements. When the
// relay says a connection was forgotten (by this tab or another, or revoked), `onForgotten(id)`
// hears it (drop its cards, queued and running calls: the presence's `forget`), `onCancel` hears
// each of its calls under way, and no call of it runs or answers from this tab again.
// `stopAgent(id)` (the person's Stop) tells the relay to refuse the connection's calls until
// `letGoOn(id)` (either is sent once the tab is connected, if it is not); meanwhile a call of it
// that still arrives is refused here with AGENT_STOPPED without reaching `handle`. The relay
// tells every tab of the pairing (`stopped {connection, stopped}`), so all of them agree, and
// `connectionsList` follows a stop, a go-on and a forgetting as the relay tells them.
//
// The relay sends agents' calls to the tab of the pairing focused (or opened) last. The tabs of
// a browser tell each other which took them last (a BroadcastChannel, CALLS_CHANNEL), so a tab
// knows when they went to another (`callsElsewhere`, heard through `subscribe`), and
// `takeCalls()` brings them back (the person's press: the relay counts it as this tab focused).
//
// The protocol version, bundle digest, close codes and ping come from ./generated/bundle.js,
// written from the relay's own bundle crate (scripts/bundle), so both ends agree.

import { SETTINGS, PROTOCOL_VERSION, BUNDLE_DIGEST, CLOSE, PING, PONG, PING_EVERY_MS, CATALOGUE, TOOL_REFUSED, CONSENT, TAB_PATH, TAB_PAIRING_PARAM, CHALLENGE_BYTES, FORGOTTEN, AGENT_STOPPED, proofText } from './generated/bundle.js';
import { CONNECT_FRAGMENT, CONFIRM_PATH, CONFIRM_TICKET_PARAM, CONFIRM_MESSAGE } from './generated/bundle.js';
import { CODE_ALPHABET, CODE_LEN, CODE_LINK_LEN, CODE_IGNORED, CODE_FOLD } from './generated/bundle.js';
// Every message on the socket is read and written by ./generated/wire.js, from the same
// declarations the relay and the local server read and write them by (bundle/src/protocol.rs).
import { readRelay, writeTab } from './generated/wire.js';
// What the relay told this tab and what the tab owes it, apart from the socket and its timers.
import { RelayState } from './relay-state.js';

export { PROTOCOL_VERSION, BUNDLE_DIGEST, CLOSE, TOOL_REFUSED, CONSENT, FORGOTTEN, AGENT_STOPPED, proofText };
/** What the person's settings may make of a tool. */
export { SETTINGS };
/** Where the first protocol kept a bearer tab secret; removed when found. */
export const OLD_SECRET_KEY = 'tabrelay:tab-secret';
/** The IndexedDB database and store of the pairing keys (key: the relay's origin). */
export const KEY_DB = 'tabrelay';
export const KEY_STORE = 'pairing-keys';
const KEY_ALGORITHM = Object.freeze({ name: 'ECDSA', namedCurve: 'P-256' });
const SIGNATURE_ALGORITHM = Object.freeze({ name: 'ECDSA', hash: 'SHA-256' });
/** A challenge as the relay makes it: base64url (no padding) of CHALLENGE_BYTES random bytes. */
const CHALLENGE = new RegExp(`^[A-Za-z0-9_-]{${Math.ceil((CHALLENGE_BYTES * 4) / 3)}}$`);
export { CONNECT_FRAGMENT, CONFIRM_MESSAGE };
/** After these close codes the client does not retry: retrying cannot help. */
const FINAL_CLOSES = [CLOSE.ORIGIN_REFUSED, CLOSE.PROOF_FAILED, CLOSE.PROTOCOL_ERROR, CLOSE.OUTDATED];

const APPROVE_WAIT_MS = 15_000;

/** `c` upper-cased as the relay does: ASCII letters only (ß or ı stay what they are, as the relay refuses them). */
const asciiUpper = (c) => (c >= 'a' && c <= 'z' ? c.toUpperCase() : c);

/**
 * A connect code as a person typed it, read by the relay's rule (bundle/src/code.rs, carried by
 * the generated bundle): any case, `CODE_IGNORED` left out, `CODE_FOLD` applied; null unless that
 * leaves `CODE_LEN` letters of `CODE_ALPHABET`. The relay answers with this form.
 */
export function connectCode(typed) {
  let out = '';
  for (const char of String(typed ?? '')) {
    const upper = asciiUpper(char);
    if (CODE_IGNORED.includes(upper)) continue;
    const c = CODE_FOLD[upper] ?? upper;
    if (!CODE_ALPHABET.includes(c) || out.length === CODE_LEN) return null;
    out += c;
  }
  return out.length === CODE_LEN ? out : null;
}

/** A waiting page's link reference, upper-cased as the relay reads it: null unless `CODE_LINK_LEN` letters of `CODE_ALPHABET` (any case). */
export function linkReference(text) {
  const upper = [...String(text ?? '')].map(asciiUpper).join('');
  return upper.length === CODE_LINK_LEN && [...upper].every((c) => CODE_ALPHABET.includes(c)) ? upper : null;
}

/**
 * The key the relay's answer about `code` is matched by: its normal form (a code typed, a link
 * reference), else the text as sent, which the relay echoes when it is neither.
 */
export function normalCode(code) {
  return connectCode(code) ?? linkReference(code) ?? String(code ?? '');
}

/** The waiting page's link reference in a URL fragment (`#tabrelay-connect=REFERENCE`), or null. */
export function connectLinkFromFragment(hash) {
  const params = new URLSearchParams(String(hash || '').replace(/^#/, ''));
  return linkReference(params.get(CONNECT_FRAGMENT));
}

/** `hash` without the link's key (the app's own fragment stays): '' when nothing else is left. */
export function fragmentWithoutLink(hash) {
  const params = new URLSearchParams(String(hash || '').replace(/^#/, ''));
  params.delete(CONNECT_FRAGMENT);
  const rest = params.toString();
  return rest ? `#${rest}` : '';
}

/**
 * The link this page was loaded with: read once, as this module loads with the page, and taken
 * off the address bar at once (so it is not bookmarked, shared or read again); a fragment set
 * later (a page that opened this one can rewrite it) is never read.
 */
const LOADED_LINK = (() => {
  if (typeof location === 'undefined' || typeof history === 'undefined') return null;
  const hash = location.hash;
  if (!new URLSearchParams(hash.replace(/^#/, '')).has(CONNECT_FRAGMENT)) return null;
  history.replaceState(history.state, '', location.pathname + location.search + fragmentWithoutLink(hash));
  return connectLinkFromFragment(hash);
})();
let loadedLinkTaken = false;

/** The waiting page's link reference this page was loaded with, the first time it is asked; null after that, or when none. */
export function takeConnectLink() {
  if (loadedLinkTaken) return null;
  loadedLinkTaken = true;
  return LOADED_LINK;
}

/**
 * Opens a window for the relay's confirm page; call it in the person's click handler before
 * anything is awaited (browsers open windows only then), and give the window its address once
 * the relay answered: `win.location = confirm`. Null when the browser blocked it (then show the
 * address as a link the person opens). The window tells this one what came of it: listen with
 * `onConfirmed`.
 */
export function openConfirmWindow() {
  return typeof window === 'undefined' ? null : window.open('about:blank', 'tabrelay-confirm', 'popup,width=480,height=360');
}

/**
 * Calls `fn(ok)` when the relay's confirm page (at `relayOrigin`) says whether this browser's
 * confirmation approved the link; returns a function that stops listening.
 */
export function onConfirmed(relayOrigin, fn) {
  const heard = (event) => {
    if (event.origin !== relayOrigin || event.data?.type !== CONFIRM_MESSAGE) return;
    fn(event.data.ok === true);
  };
  window.addEventListener('message', heard);
  return () => window.removeEventListener('message', heard);
}

/** The relay's warning for an unverified name that looks like `app`'s. */
export function lookalikeSentence(app) {
  return CONSENT.LOOKALIKE.replaceAll('{app}', String(app));
}

/**
 * The relay's warning about the name of who asks for a connect code (what `describe` resolved
 * with), in the relay's words, or '' when there is none: a name like a well-known app's that
 * nobody verified, a verified client claiming another app's name, a word in two alphabets, a
 * name with no Latin letter. `show` writes the name and the domain as the page shows text
 * from outside.
 */
export function nameWarningSentence(said, show = String) {
  const sentence = CONSENT.WARNINGS[said?.name_warning];
  if (!sentence) return '';
  return sentence.replaceAll('{app}', show(said.lookalike ?? '')).replaceAll('{domain}', show(said.verified ?? ''));
}

/** A catalogue tool's setting when the person chose none: destructive tools ask, others run. */
export function defaultSetting(tool) {
  return tool.safety === 'destructive' ? 'asks' : 'runs';
}

/**
 * The bundle catalogue's tools as MCP tool definitions, each with its setting from `settings`
 * (tool name → 'asks' | 'runs' | 'refused'), else its default.
 */
export function catalogueTools(settings = {}) {
  return CATALOGUE.tools.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.input,
    annotations: {
      title: t.title,
      readOnlyHint: t.safety === 'read',
      destructiveHint: t.safety === 'destructive',
      openWorldHint: false,
    },
    setting: SETTINGS.includes(settings[t.name]) ? settings[t.name] : defaultSetting(t),
  }));
}

function base64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** One IndexedDB request as a promise. */
function done(request) {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * The browser's pairing keys in IndexedDB, by relay origin. `put` keeps the pair stored first
 * for an origin (two tabs starting at once then agree on one).
 */
export function indexedDbKeys(idb = globalThis.indexedDB) {
  let db = null;
  const open = () => {
    if (!idb) return Promise.reject(new Error('This browser keeps no IndexedDB, so the tab cannot keep its pairing key.'));
    if (!db) {
      const request = idb.open(KEY_DB, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(KEY_STORE);
      db = done(request);
    }
    return db;
  };
  const store = async (mode) => (await open()).transaction(KEY_STORE, mode).objectStore(KEY_STORE);
  return {
    async get(origin) {
      return (await done((await store('readonly')).get(origin))) || null;
    },
    async put(origin, keyPair) {
      const s = await store('readwrite');
      if (!soundKey(await done(s.get(origin)))) await done(s.put(keyPair, origin));
    },
  };
}

/**
 * Whether `pair` is a pairing key pair as this module makes one: ECDSA P-256, its private key
 * not extractable and for signing only. A pair stored otherwise (planted by script on the page,
 * whose private half it can read) is never used.
 */
export function soundKey(pair) {
  const { privateKey: k, publicKey: p } = pair ?? {};
  const ecdsa = (key) => key?.algorithm?.name === KEY_ALGORITHM.name && key.algorithm.namedCurve === KEY_ALGORITHM.namedCurve;
  return ecdsa(k) && ecdsa(p) && k.type === 'private' && p.type === 'public' && k.extractable === false && k.usages.length === 1 && k.usages[0] === 'sign';
}

/**
 * The browser's pairing key pair for the relay at `origin`, made once (ECDSA P-256, the
 * private key not extractable, for signing only) and kept in `keys`; a stored pair that is
 * not so (`soundKey`) is replaced by a new one.
 */
export async function pairingKey(keys, origin) {
  const kept = await keys.get(origin);
  if (soundKey(kept)) return kept;
  const made = await crypto.subtle.generateKey(KEY_ALGORITHM, false, ['sign']);
  await keys.put(origin, made);
  const stored = await keys.get(origin);
  return soundKey(stored) ? stored : made;
}

/** The raw (uncompressed, 65-byte) public key of a pairing key pair. */
export async function publicKeyOf(keyPair) {
  return new Uint8Array(await crypto.subtle.exportKey('raw', keyPair.publicKey));
}

/** The pairing id: lowercase hex of SHA-256 over the raw public key (what tokens name). */
export async function pairingIdOf(publicKey) {
  const digest = await crypto.subtle.digest('SHA-256', publicKey);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** The tab's proof: the pairing key's signature over the proof text, base64url. */
export async function signProof(keyPair, origin, challenge) {
  const text = new TextEncoder().encode(proofText(origin, challenge));
  return base64url(await crypto.subtle.sign(SIGNATURE_ALGORITHM, keyPair.privateKey, text));
}

/** The channel the browser's tabs of a relay say on which of them took agents' calls last. */
export const CALLS_CHANNEL = 'tabrelay:calls';

export class RelayClient {
  constructor({ relay, handle, keys, storage, relayOrigin, WebSocket: Ws, headers, onStatus, onCancel, onElicited, onForgotten, onGoOn, focused, bundle, tools, dataset, onToolsRefused, onRefused, refusalOf, quiet = false } = {}) {
    if (!relay) throw new Error('RelayClient needs the relay address.');
    if (typeof handle !== 'function') throw new Error('RelayClient needs a handle(call) function.');
    this.relay = String(relay).replace(/\/+$/, '');
    /** The relay's origin as this tab addresses it: what its key is kept by and its proofs name. */
    this.origin = relayOrigin || new URL(this.relay).origin;
    this.handle = handle;
    this.keys = keys || indexedDbKeys();
    this.storage = storage || globalThis.localStorage;
    this.Ws = Ws || globalThis.WebSocket;
    this.headers = headers; // Node only: browsers set Origin themselves.
    this.onStatus = onStatus || (() => {});
    this.onCancel = onCancel || (() => {});
    /** The person answered call `id`'s card in the agent app (`choice` 'once' or 'deny'). */
    this.onElicited = onElicited || (() => {});
    this.onForgotten = onForgotten || (() => {});
    this.onGoOn = onGoOn || (() => {});
    /** The protocol's state (./relay-state.js); this class is its shell: the socket, the timers, the app's callbacks. */
    this.state = new RelayState({ quiet });
    this.bundle = bundle || BUNDLE_DIGEST;
    this.pingTimer = null;
    this.focused = Boolean(focused ?? (typeof document === 'undefined' || document.hasFocus()));
    this.pairing = null;
    this.enrolling = null;
    this.status = 'idle';
    this.socket = null;
    this.stopped = true;
    this.approvals = new Map();
    this.listWaiters = [];
    this.retryTimer = null;
    this.tools = tools || catalogueTools();
    this.dataset = dataset ?? null;
    /** The relay's last list of this browser's connections (null before the first). */
    this.connectionsList = null;
    this.onToolsRefused = onToolsRefused || (() => {});
    this.onRefused = onRefused || (() => {});
    /** Why a refused tool's call is refused, when the app says more than TOOL_REFUSED (its data switch). */
    this.refusalOf = refusalOf || (() => null);
    this.statusDetail = {};
    /**
     * A relay that may well not be running (the local server, `tabrelay-local`): until it
     * answers, its status stays 'absent' through every retry (no 'connecting' and 'waiting' in
     * turn), and so again once it went away; the waits grow as for any relay.
     */
    this.quiet = Boolean(quiet);
    this.listeners = new Set();
    /** Whether, as this browser's tabs said, agents' calls go to another tab of the pairing. */
    this.callsElsewhere = false;
    /** This tab among the browser's tabs, and when each took the calls last (tab → ms). */
    this.tabId = Math.random().toString(36).slice(2);
    this.callsTaken = new Map();
    this.callsChannel = null;
  }

  /** Calls given to `handle` and not answered yet: id → connection id. */
  get running() {
    return this.state.running;
  }

  /** Connections the relay said were forgotten: none of their calls runs or answers here. */
  get forgotten() {
    return this.state.forgotten;
  }

  /** Connections whose agent the person stopped, until they let it go on. */
  get stoppedAgents() {
    return this.state.stoppedAgents;
  }

  /** The pairing's presence credential as the relay holds it ({credential, key}), or null. */
  get presenceKey() {
    return this.state.presenceKey;
  }

  /** The relay's sentence for the tool list it refused, or null. */
  get toolsRefused() {
    return this.state.toolsRefused;
  }

  /** Tries since the relay last welcomed the tab (./local-relay.js sets it to 0 to try at once). */
  get retries() {
    return this.state.retries;
  }

  set retries(n) {
    this.state.retries = n;
  }

  /** This tab took agents' calls (its welcome, its focus): the browser's other tabs hear it. */
  tookCalls() {
    const at = Date.now();
    this.callsTaken.set(this.tabId, at);
    this.callsChannel?.postMessage({ type: 'took', origin: this.origin, pairing: this.pairing, tab: this.tabId, at });
    this.heardCalls();
  }

  /** Another tab took the calls or went away: where they go now, by the relay's rule (focused last). */
  heardCalls(message) {
    if (message && (message.origin !== this.origin || message.pairing !== this.pairing || message.tab === this.tabId)) return;
    if (message?.type === 'took' && Number.isFinite(message.at)) this.callsTaken.set(String(message.tab), message.at);
    if (message?.type === 'left') this.callsTaken.delete(String(message.tab));
    let last = null;
    for (const [tab, at] of this.callsTaken) if (!last || at > last[1] || (at === last[1] && tab > last[0])) last = [tab, at];
    const elsewhere = this.status === 'connected' && last !== null && last[0] !== this.tabId;
    if (elsewhere !== this.callsElsewhere) {
      this.callsElsewhere = elsewhere;
      this.changed();
    }
  }

  /** The person wants agents' calls in this tab again: the relay counts it as this tab focused. */
  takeCalls() {
    this.setFocused(true);
  }

  /** Calls `fn(relay)` after each change of `status` or `toolsRefused`; returns a function that stops it. */
  subscribe(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed() {
    for (const fn of this.listeners) fn(this);
  }

  /** States the tab's tools (MCP definitions, each with `setting`); sent now and on every reconnect. */
  setTools(tools) {
    this.tools = Array.isArray(tools) ? tools : [];
    if (this.state.restated()) this.changed();
    // Before the relay's welcome the socket carries the hello alone (anything else first closes
    // it); the welcome sends the list kept here.
    if (this.status === 'connected') this.send('tools', { tools: this.tools });
  }

  /** States what the tab shows: `{ dataset }`, the shown dataset's name. */
  setView({ dataset } = {}) {
    this.dataset = dataset == null ? null : String(dataset);
    if (this.dataset !== null) this.send('view', { dataset: this.dataset });
  }

  /** The setting this tab stated for tool `name` ('asks', 'runs', 'refused'), or undefined. */
  settingOf(name) {
    return this.tools.find((t) => t && t.name === name)?.setting;
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    try {
      this.storage?.removeItem(OLD_SECRET_KEY);
    } catch {
      // Storage may be off; there is then no old secret either.
    }
    if (typeof window !== 'undefined' && window.addEventListener) {
      this.onFocus = () => this.setFocused(true);
      this.onBlur = () => this.setFocused(false);
      window.addEventListener('focus', this.onFocus);
      window.addEventListener('blur', this.onBlur);
      if (globalThis.BroadcastChannel) {
        this.callsChannel = new BroadcastChannel(CALLS_CHANNEL);
        this.callsChannel.onmessage = (event) => this.heardCalls(event.data);
        this.onLeave = () => this.callsChannel?.postMessage({ type: 'left', origin: this.origin, pairing: this.pairing, tab: this.tabId });
        window.addEventListener('pagehide', this.onLeave);
      }
    }
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    if (typeof window !== 'undefined' && window.removeEventListener && this.onFocus) {
      window.removeEventListener('focus', this.onFocus);
      window.removeEventListener('blur', this.onBlur);
      if (this.onLeave) {
        this.onLeave();
        window.removeEventListener('pagehide', this.onLeave);
      }
    }
    this.callsChannel?.close();
    this.callsChannel = null;
    if (this.socket) this.socket.close(1000, 'The tab stopped.');
    this.socket = null;
    this.setStatus('idle');
  }

  setFocused(focused) {
    this.focused = Boolean(focused);
    this.send('focus', { focused: this.focused });
    if (focused && this.status === 'connected') this.tookCalls();
  }

  /**
   * The person is being asked about call `id`; `sentence` is what their card says;
   * `appMayAllow`, whether an agent app asked too (the local server's elicitation) may allow it
   * (else it may only deny it: the card's Allow needs the person's presence in the tab).
   */
  asking(id, sentence, appMayAllow = false) {
    // Only of a call the relay sent (its ids are counts): an in-browser or a chat call is not the relay's.
    if (Number.isSafeInteger(id) && id >= 0) this.send('asking', { id, sentence: String(sentence), app_may_allow: Boolean(appMayAllow) });
  }

  /** The person allowed call `id` (its result follows through `handle`); never sent after a Deny. */
  answered(id) {
    if (Number.isSafeInteger(id) && id >= 0) this.send('answered', { id });
  }

  /** The person took a step in the app themselves: the agents' turn ends. */
  step() {
    this.send('step');
  }

  /**
   * The pairing's connections (agent apps approved in this browser): resolves with
   * [{id, client, host, created_ms, used_ms}], oldest first.
   */
  connections() {
    return this.askList({ type: 'connections' });
  }

  /**
   * The person stopped connection `id`'s agent: the relay refuses its calls (and this tab does
   * too) until `letGoOn(id)`; the turn ends. A page without a connection id only ends the turn.
   */
  stopAgent(id) {
    if (id != null) {
      this.state.stop(id);
      this.sendStops();
    }
    this.step();
    this.changed();
  }

  /** The person lets connection `id`'s stopped agent go on; `onGoOn(id)` hears it. */
  letGoOn(id) {
    if (id == null) return;
    const had = this.state.goOn(id);
    this.sendStops();
    if (had) this.onGoOn(String(id));
    this.changed();
  }

  /** Sends the relay the stops and go-ons it has not heard, once the tab is connected. */
  sendStops() {
    if (this.status !== 'connected' || !this.socket || this.socket.readyState !== 1) return;
    for (const [type, fields] of this.state.owed()) this.send(type, fields);
  }

  /** Whether the person stopped connection `id`'s agent in this tab. */
  isStopped(id) {
    return id != null && this.stoppedAgents.has(String(id));
  }

  /** Forgets a connection: its tokens stop at once. Resolves with the remaining list. */
  forget(id) {
    return this.askList({ type: 'forget', id: String(id) });
  }

  askList({ type, ...fields }) {
    if (this.status !== 'connected') {
      return Promise.reject(new Error('This tab is not connected to the relay yet; wait a moment and try again.'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listWaiters = this.listWaiters.filter((w) => w.resolve !== resolve);
        reject(new Error('The relay did not answer; try again.'));
      }, APPROVE_WAIT_MS);
      this.listWaiters.push({ resolve, timer });
      this.send(type, fields);
    });
  }

  /**
   * Who asks for a connect code the person typed: resolves with {client, host, verified, age_ms,
   * place, lookalike, name_warning, connections} or rejects with a sentence. `verified` is the domain that
   * published the client's metadata document (the relay fetched it from there); absent for a
   * client that registered, whose name is not verified. `age_ms`: how long ago the request
   * started; `place`: where its browser was ("City, CC"), absent when the relay's platform did
   * not say (then say nothing of it: the panel's `startedWords(said)`); `name_warning`: what about the name should make the
   * person look twice, with `lookalike`, the well-known app it looks like or claims (show
   * `nameWarningSentence(said)`); `connections`: this browser's connections
   * of the same client, each with `created_ms` and `place`. Show CONSENT.APPROVE_ONLY_YOURS with
   * every request. Each describe is one of a code's few tries: ask once the person typed it or
   * pressed to see it.
   */
  describe(code) {
    return this.codeRequest('describe', 'code', code);
  }

  /** Who asks for the waiting page's link (`takeConnectLink()`): as `describe`. */
  describeLink(link) {
    return this.codeRequest('describe', 'link', link);
  }

  /**
   * Approves a connect code the person typed whole; resolves with {client} or rejects with a
   * sentence. `proof`: the person's presence proven for this code (./presence-check.js
   * `approval`), which the relay requires once the pairing holds a presence credential.
   */
  approve(code, proof = null) {
    return this.codeRequest('approve', 'code', code, proof);
  }

  /**
   * Approves the waiting page's link: resolves with {client, confirm}; the approval holds only
   * once this browser opens `confirm` (the relay's confirm page) as a top-level window and the
   * relay finds the waiting page's cookie there. Rejects with a sentence.
   */
  approveLink(link, proof = null) {
    return this.codeRequest('approve', 'link', link, proof);
  }

  /**
   * Gives the relay the pairing's presence credential the person just made
   * (./presence-check.js): resolves with the credential the relay keeps ({credential, key}),
   * or rejects with its sentence (the pairing holds one already, say).
   */
  enrolPresence(made) {
    if (this.status !== 'connected') {
      return Promise.reject(new Error('This tab is not connected to the relay yet; wait a moment and try again.'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.enrolling = null;
        reject(new Error('The relay did not answer; try again.'));
      }, APPROVE_WAIT_MS);
      this.enrolling = { resolve, reject, timer };
      this.send('presence', made);
    });
  }

  /** Denies a connect code (the waiting page returns a refusal); rejects with a sentence. */
  deny(code) {
    return this.codeRequest('deny', 'code', code);
  }

  /** Denies the waiting page's link. */
  denyLink(link) {
    return this.codeRequest('deny', 'link', link);
  }

  /** The relay's confirm page for `ticket`. */
  confirmAddress(ticket) {
    return `${this.relay}${CONFIRM_PATH}?${CONFIRM_TICKET_PARAM}=${encodeURIComponent(ticket)}`;
  }

  codeRequest(type, field, code, proof = null) {
    const normal = normalCode(code);
    if (this.status !== 'connected') {
      return Promise.reject(new Error('This tab is not connected to the relay yet; wait a moment and try again.'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.approvals.delete(normal);
        reject(new Error('The relay did not answer; try the code again.'));
      }, APPROVE_WAIT_MS);
      this.approvals.set(normal, { resolve, reject, timer });
      this.send(type, { [field]: String(code), proof });
    });
  }

  setStatus(status, detail) {
    // Quiet: a relay not (or no longer) there is 'absent' until it welcomes the tab.
    if (this.quiet && (status === 'connecting' || status === 'waiting')) {
      if (this.status === 'absent') return;
      if (status === 'waiting' || this.status !== 'connected') status = 'absent';
    }
    this.status = status;
    this.statusDetail = detail || {};
    if (status !== 'connected') this.callsElsewhere = false;
    this.onStatus(status, detail);
    this.changed();
  }

  async connect() {
    let keyPair;
    let publicKey;
    try {
      keyPair = await pairingKey(this.keys, this.origin);
      publicKey = await publicKeyOf(keyPair);
      this.pairing = await pairingIdOf(publicKey);
    } catch (err) {
      this.stopped = true;
      this.setStatus('refused', { code: 0, reason: `This browser cannot keep the tab's pairing key: ${(err && err.message) || err}` });
      return;
    }
    if (this.stopped) return;
    // The address names the pairing id only (addresses land in request logs); the public key
    // goes in the hello, with its proof.
    this.key = base64url(publicKey);
    const url = `${this.relay.replace(/^http/, 'ws')}${TAB_PATH}?${TAB_PAIRING_PARAM}=${this.pairing}`;
    this.setStatus('connecting');
    const socket = this.headers ? new this.Ws(url, { headers: this.headers }) : new this.Ws(url);
    this.socket = socket;
    this.keyPair = keyPair;
    socket.addEventListener('open', () => {
      // Answered by the relay's runtime without waking the pairing; keeps the socket alive.
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => socket.readyState === 1 && socket.send(PING), PING_EVERY_MS);
    });
    socket.addEventListener('message', (event) => this.receive(socket, event.data));
    socket.addEventListener('close', (event) => this.closed(socket, event));
    // Node's WebSocket may report a failed connect with 'error' alone, never 'close'.
    socket.addEventListener('error', () => this.closed(socket, { code: 1006, reason: 'The connection failed.' }));
  }

  closed(socket, event) {
    if (this.socket !== socket) return;
    this.socket = null;
    clearInterval(this.pingTimer);
    for (const [, a] of this.approvals) {
      clearTimeout(a.timer);
      a.reject(new Error('The connection to the relay was lost; try the code again.'));
    }
    this.approvals.clear();
    const final = FINAL_CLOSES.includes(event.code);
    if (this.stopped || final) {
      this.stopped = true;
      this.setStatus('refused', { code: event.code, reason: event.reason });
      return;
    }
    // Growing, jittered waits (the state's rule).
    const wait = this.state.nextWait(Math.random());
    this.setStatus('waiting', { code: event.code, reason: event.reason, wait });
    this.retryTimer = setTimeout(() => this.connect(), wait);
  }

  /** Sends the tab's message `type` with its `fields` (./generated/wire.js writes it). */
  send(type, fields) {
    if (this.socket && this.socket.readyState === 1) this.socket.send(writeTab(type, fields));
  }

  async receive(socket, text) {
    if (text === PONG) return;
    // Not a message of the relay (a field missing or of another kind): nothing is done.
    const message = readRelay(text);
    if (!message) return;
    const heard = this.state.hear(message);
    switch (message.type) {
      case 'challenge': {
        // The relay's first message: sign its challenge, bound to its origin, as the hello
        // (only a challenge of the relay's shape, once per socket).
        if (socket !== this.socket || this.challenged === socket || !CHALLENGE.test(String(message.challenge))) break;
        this.challenged = socket;
        const signature = await signProof(this.keyPair, this.origin, message.challenge);
        if (socket.readyState === 1) socket.send(writeTab('hello', { protocol: PROTOCOL_VERSION, key: this.key, signature, bundle: this.bundle }));
        break;
      }
      case 'welcome':
        // The state took the pairing's presence credential, once the person made one (./presence-check.js).
        this.send('focus', { focused: this.focused });
        this.send('tools', { tools: this.tools });
        if (this.dataset !== null) this.send('view', { dataset: this.dataset });
        this.setStatus('connected', { pairing: message.pairing });
        // The relay counts a tab's hello as its focus: agents' calls come here now.
        this.tookCalls();
        // A stop or go-on pressed while the tab was not connected reaches the relay now.
        this.sendStops();
        break;
      case 'presence':
      case 'presence_refused': {
        const waiter = this.enrolling;
        this.enrolling = null;
        if (waiter) clearTimeout(waiter.timer);
        if (message.type === 'presence') {
          waiter?.resolve(this.presenceKey);
          this.changed();
        } else waiter?.reject(new Error(message.sentence));
        break;
      }
      case 'tools_refused':
        this.onToolsRefused(this.toolsRefused);
        this.changed();
        break;
      case 'described':
      case 'denied':
      case 'approved':
      case 'confirm':
      case 'refused': {
        const key = normalCode(message.code);
        const waiter = this.approvals.get(key);
        if (!waiter) break;
        this.approvals.delete(key);
        clearTimeout(waiter.timer);
        if (message.type === 'refused') waiter.reject(new Error(message.sentence));
        else {
          const said = { client: message.client, host: message.host };
          for (const k of ['verified', 'age_ms', 'place', 'lookalike', 'name_warning']) if (message[k] != null) said[k] = message[k];
          if (message.connections?.length) said.connections = message.connections;
          if (message.type === 'confirm') said.confirm = this.confirmAddress(message.ticket);
          waiter.resolve(said);
        }
        break;
      }
      case 'call':
        await this.answer(socket, message);
        break;
      case 'cancel':
        this.onCancel(message.id);
        break;
      case 'elicited':
        this.onElicited(message.id, message.choice);
        break;
      case 'stopped':
      case 'forgotten': {
        // The person stopped an agent or let it go on, or forgot a connection, in this tab or
        // another of the pairing: the state says what follows.
        if (!heard.relist) break;
        if (heard.goOn) this.onGoOn(heard.goOn);
        if (heard.forgotten) this.onForgotten(heard.forgotten);
        for (const call of heard.cancel ?? []) this.onCancel(call);
        // The connections as listed say so at once (no Refresh needed).
        this.relisted(heard.relist);
        this.changed();
        break;
      }
      case 'connections': {
        // Also sent unasked, as soon as a connection is made: kept, and heard by `subscribe`.
        this.connectionsList = message.list;
        this.changed();
        const waiters = this.listWaiters;
        this.listWaiters = [];
        for (const w of waiters) {
          clearTimeout(w.timer);
          w.resolve(message.list);
        }
        break;
      }
      default:
        break;
    }
  }

  /** The connections as listed, each changed by `change` (null: gone), as a new list when any changed. */
  relisted(change) {
    if (!Array.isArray(this.connectionsList)) return;
    const next = this.connectionsList.map(change);
    if (next.every((c, i) => c === this.connectionsList[i])) return;
    this.connectionsList = next.filter(Boolean);
  }

  async answer(socket, call) {
    let reply;
    const connection = call.connection?.id == null ? null : String(call.connection.id);
    // A call of a connection forgotten meanwhile never runs, and nothing of it is said.
    const gate = this.state.gate(call);
    if (gate === 'forgotten') return;
    if (gate === 'stopped') {
      if (socket.readyState === 1) socket.send(writeTab('result', { id: call.id, error: AGENT_STOPPED }));
      return;
    }
    if (this.settingOf(call.tool) === 'refused') {
      // The relay leaves the tool out of the agents' list; an agent may still call it by name.
      reply = writeTab('result', { id: call.id, error: String(this.refusalOf(call) || TOOL_REFUSED) });
      if (socket.readyState === 1) socket.send(reply);
      this.onRefused(call);
      return;
    }
    try {
      // A call retried with the agent app's answers carries them as `call.input`
      // ({responses, state}); a handler that needs such answers returns
      // {inputRequired: {key: {method, params}}, state?} instead of data.
      this.running.set(call.id, connection);
      const out = (await this.handle(call)) || {};
      if (out.inputRequired) {
        reply = writeTab('result', { id: call.id, input_required: out.inputRequired, state: out.state });
      } else {
        // A tool stated with an outputSchema answers its object as structured content too (MCP's
        // clients refuse such a tool's result without it); the relay adds it.
        const data = out.data ?? null;
        const structured = data !== null && typeof data === 'object' && !Array.isArray(data) && this.tools.some((t) => t?.name === call.tool && t.outputSchema);
        // A result the writer cannot write (a picture that is not an object, say) is the tool's failure.
        reply = writeTab('result', { id: call.id, data, structured, image: out.image || null, audio: out.audio || null, resource: out.resource || null });
      }
    } catch (err) {
      reply = writeTab('result', { id: call.id, error: String((err && err.message) || err || 'The tool failed.') });
    } finally {
      this.running.delete(call.id);
    }
    // Forgotten while it ran: its result is nobody's (the relay would drop it too).
    if (connection !== null && this.forgotten.has(connection)) return;
    if (socket.readyState === 1) socket.send(reply);
  }
}
