// The tab's second relay: the local server an agent app on the person's computer starts
// (`tabrelay-local`), on loopback beside the app's relay. It is a RelayClient like the relay's
// (the same protocol: the pairing key, kept per origin, and a challenge bound to that origin),
// started quiet (its status stays 'absent' while no local server runs, retried with growing
// waits). `joinLocal(relay, local)` makes the relay client the door to both, so the person's
// side (the panel, the presence, the bridge) keeps talking to one client:
// - a connect code the person types goes to the local server first when it is connected (a code
//   it did not make, it refuses), then to the relay; a local server not connected then is tried
//   again at once (an agent app may have just started it); so does a waiting page's link
//   reference (the local server serves its agent app's waiting page on loopback too): approved
//   by the local server, its confirm window opens at the local server's origin, where the
//   waiting page's cookie is;
// - the connections are both relays' (each marked with its relay: `local: true`), and Forget
//   and Stop go to the relay that holds the connection;
// - the tools, the view and the person's steps go to both; a call's asking and answered go to
//   the relay that sent the call;
// - each relay numbers its own calls, so two may send the same id: the person's side sees a
//   local call's id as `local-ID` (its card, line, cancel and answer in the agent app are that
//   call's only), and the local server hears its own id back;
// - start and stop start and stop both;
// - the person's presence for approving a code goes to the relay that takes the code
//   (`joinPresenceCheck`): the local server's pairing keeps a credential of its own (made once,
//   its challenge bound to the local origin) and checks each approval's assertion as the relay
//   does, so neither a click nor the page's script connects a local agent without the person.
//
//   import { RelayClient } from './relay-client.js';
//   import { joinLocal } from './local-relay.js';
//   const local = new RelayClient({ relay: 'http://127.0.0.1:8790', quiet: true, handle });
//   joinLocal(relay, local);

import { CODE_LEN, CODE_IGNORED } from './generated/bundle.js';
import { linkReference } from './relay-client.js';

/**
 * The person's presence check for `relay` joined to its local server (`joinLocal`): `check` is
 * the relay's (./presence-check.js), `localCheck` the same made for the local server's client.
 * An approval of a code the local server made is proven to it (its credential, its origin);
 * every other decision is `check`'s.
 */
export function joinPresenceCheck(check, localCheck, relay) {
  return {
    ...check,
    async approval(said) {
      return (await relay.isLocalCode(said)) ? localCheck.approval(said) : check.approval(said);
    },
  };
}

/** The local server's default address (`tabrelay-local`'s default port). */
export const LOCAL_ADDRESS = 'http://127.0.0.1:8790';

/**
 * The local server's address as the tab reaches it (null for one that is not http): a name of
 * this computer (`localhost`, `[::1]`) is 127.0.0.1, where `tabrelay-local` listens and where
 * its waiting page sets the cookie its confirm window needs (a cookie set for 127.0.0.1 is not
 * sent to localhost, so a link's approval would be refused there).
 */
export function localAddressOf(address) {
  try {
    const url = new URL(String(address));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.hostname === 'localhost' || url.hostname === '[::1]') url.hostname = '127.0.0.1';
    return url.href;
  } catch {
    return null;
  }
}
/** What a local call's id starts with on the person's side (the relay's ids are numbers). */
export const LOCAL_CALL = 'local-';
/** How long a code typed waits for a local server not connected yet, tried again at once. */
const NUDGE_MS = 2_000;

/**
 * Joins `local` to `relay` (both RelayClients): `relay`'s methods reach both, as above.
 * Returns `relay`.
 */
export function joinLocal(relay, local) {
  const own = {};
  for (const name of ['describe', 'approve', 'deny', 'describeLink', 'approveLink', 'denyLink', 'connections', 'forget', 'stopAgent', 'letGoOn', 'asking', 'answered', 'setTools', 'setView', 'step', 'start', 'stop', 'setFocused']) {
    own[name] = relay[name].bind(relay);
  }
  const up = () => local.status === 'connected';
  /** Whether connection `id` is the local server's: listed by it, stopped there, or one of its calls' own. */
  const localHas = (id) =>
    (local.connectionsList || []).some((c) => String(c.id) === String(id)) || local.stoppedAgents.has(String(id)) || [...local.running.values()].some((c) => String(c) === String(id));
  /**
   * The person typed a code: the moment a local server is likely to run, so one not connected
   * is tried again at once (not at the end of its growing wait), for up to NUDGE_MS.
   */
  const nudged = async () => {
    if (up() || local.stopped) return;
    if (!local.socket) {
      clearTimeout(local.retryTimer);
      local.retries = 0;
      await local.connect();
    }
    const socket = local.socket;
    if (!socket || up()) return;
    // Until it is welcomed, or its socket fails (at once when nothing listens), or NUDGE_MS.
    await new Promise((resolve) => {
      const timer = setTimeout(done, NUDGE_MS);
      const stop = local.subscribe(() => up() && done());
      socket.addEventListener('close', done);
      socket.addEventListener('error', done);
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  };
  /** Whether each code asked about was the local server's (it described it), by code. */
  const whose = new Map();
  /** A code to the local server first; on its refusal, to the relay. */
  const codeTo =
    (name) =>
    async (...args) => {
      await nudged();
      if (up() && whose.get(args[0]) !== false) {
        try {
          const said = await local[name](...args);
          if (name.startsWith('describe')) whose.set(args[0], true);
          return said;
        } catch (err) {
          // Not the local server's code (or not one it can take): the relay's, then. A code it
          // described is its own: its refusal stands (a relay would not know the code).
          if (whose.get(args[0]) === true) throw err;
          if (name.startsWith('describe')) whose.set(args[0], false);
        }
      }
      return own[name](...args);
    };
  /**
   * Whether `said` is a code, or a waiting page's link reference, the local server made (it
   * describes it): where its approval goes. Only the local server is asked, and only of a
   * code's or a reference's form.
   */
  relay.isLocalCode = async (said) => {
    const link = linkReference(said) !== null;
    const letters = [...String(said)].filter((c) => !CODE_IGNORED.includes(c)).length;
    if (letters !== CODE_LEN && !link) return false;
    if (!whose.has(said)) {
      // A link came from a waiting page a running server served: not waited for (the
      // confirm window opens after this, while the person's press still lets it).
      if (!link) await nudged();
      if (!up()) return false;
      try {
        await (link ? local.describeLink(said) : local.describe(said));
        whose.set(said, true);
      } catch {
        whose.set(said, false);
      }
    }
    if (whose.size > 64) whose.delete(whose.keys().next().value);
    return whose.get(said) === true;
  };
  relay.describe = codeTo('describe');
  relay.approve = codeTo('approve');
  relay.deny = codeTo('deny');
  relay.describeLink = codeTo('describeLink');
  relay.approveLink = codeTo('approveLink');
  relay.denyLink = codeTo('denyLink');
  // Each relay lists its own (kept as its `connectionsList`); the answer is both (below).
  relay.connections = async () => {
    await Promise.all([own.connections(), up() ? local.connections().catch(() => null) : null]);
    return relay.connectionsList || [];
  };
  relay.forget = async (id) => {
    if (localHas(id)) await local.forget(id);
    else await own.forget(id);
    return relay.connections();
  };
  relay.stopAgent = (id) => (id != null && localHas(id) ? local.stopAgent(id) : own.stopAgent(id));
  relay.letGoOn = (id) => (id != null && localHas(id) ? local.letGoOn(id) : own.letGoOn(id));
  relay.isStopped = ((isStopped) => (id) => isStopped(id) || local.isStopped(id))(relay.isStopped.bind(relay));
  // The local server's calls, as the person's side sees them: `local-ID` (above).
  const handle = local.handle;
  local.handle = (call) => handle.call(local, { ...call, id: `${LOCAL_CALL}${call.id}` });
  for (const name of ['onCancel', 'onElicited']) {
    const hear = local[name];
    local[name] = (id, ...rest) => hear.call(local, `${LOCAL_CALL}${id}`, ...rest);
  }
  /** The local server's own id of call `id` as the person's side knows it, or null: not a local call. */
  const localCall = (id) => (typeof id === 'string' && id.startsWith(LOCAL_CALL) ? Number(id.slice(LOCAL_CALL.length)) : null);
  // A local call's words go to the local server only (the relay's own ids are never `local-`).
  relay.asking = (id, sentence, appMayAllow) => {
    const at = localCall(id);
    return at === null ? own.asking(id, sentence, appMayAllow) : local.asking(at, sentence, appMayAllow);
  };
  relay.answered = (id) => {
    const at = localCall(id);
    return at === null ? own.answered(id) : local.answered(at);
  };
  for (const name of ['setTools', 'setView', 'step', 'setFocused']) {
    relay[name] = (...args) => {
      local[name](...args);
      return own[name](...args);
    };
  }
  relay.start = () => {
    local.start();
    return own.start();
  };
  relay.stop = () => {
    local.stop();
    return own.stop();
  };
  // The list the person's side follows (`connectionsList`, kept as each relay tells it): both
  // relays', the same array until either changes. The relay client's own writes and changes of
  // it are its own list's.
  let ownList = relay.connectionsList;
  let merged = null;
  let from = [];
  Object.defineProperty(relay, 'connectionsList', {
    configurable: true,
    enumerable: true,
    get() {
      const here = local.connectionsList;
      if (ownList == null && here == null) return null;
      if (!merged || from[0] !== ownList || from[1] !== here) {
        from = [ownList, here];
        merged = [...(ownList || []), ...(here || []).map((c) => ({ ...c, local: true }))];
      }
      return merged;
    },
    set(list) {
      ownList = list;
    },
  });
  relay.relisted = (change) => {
    if (!Array.isArray(ownList)) return;
    const next = ownList.map(change);
    if (next.every((c, i) => c === ownList[i])) return;
    ownList = next.filter(Boolean);
  };
  relay.local = local;
  // A change of the local server's status or list is the relay's to its listeners (the panel).
  local.subscribe(() => relay.changed());
  return relay;
}
