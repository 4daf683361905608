// The relay client's protocol state (./relay-client.js), apart from its socket and its timers:
// what the relay told this tab (its presence credential, a refused tool list, the connections
// forgotten and the agents stopped), what the tab owes the relay (stops and go-ons not sent
// yet), the calls under way and how long to wait before the next try. It changes only by a
// message heard (read by ./generated/wire.js) or the person's press, and each change says what
// the shell is to do: no socket, no timer, no clock (the shell passes its random number in).
// tests/js/relay_state.test.mjs drives it without a socket.

/** The first wait before trying the relay again, and the longest. */
export const RETRY_FIRST_MS = 500;
export const RETRY_MAX_MS = 30_000;
/**
 * A quiet client's longest wait (the local server, which may well not run): each refused try is
 * a line the browser itself writes in the console, and a code the person types tries it again
 * at once (./local-relay.js), so it waits longer between tries than a relay.
 */
export const QUIET_RETRY_MAX_MS = 60_000;

export class RelayState {
  constructor({ quiet = false } = {}) {
    this.quiet = Boolean(quiet);
    /** Calls given to the app's `handle` and not answered yet: id → connection id. */
    this.running = new Map();
    /** Connections the relay said were forgotten: none of their calls runs or answers here. */
    this.forgotten = new Set();
    /** Connections whose agent the person stopped, until they let it go on. */
    this.stoppedAgents = new Set();
    /** Stops and go-ons the relay has not been sent yet: id → stopped. */
    this.unsentStops = new Map();
    /** The pairing's presence credential as the relay holds it ({credential, key}), or null. */
    this.presenceKey = null;
    /** The relay's sentence for the tool list it refused (it keeps the one before), or null. */
    this.toolsRefused = null;
    /** Tries since the relay last welcomed the tab. */
    this.retries = 0;
  }

  /** The person stopped connection `id`'s agent: its calls are refused here, and the relay is owed the stop. */
  stop(id) {
    this.stoppedAgents.add(String(id));
    this.unsentStops.set(String(id), true);
  }

  /** The person lets connection `id`'s agent go on: whether it was stopped here (the relay is owed the go-on). */
  goOn(id) {
    const had = this.stoppedAgents.delete(String(id));
    this.unsentStops.set(String(id), false);
    return had;
  }

  /** The stops and go-ons the relay is owed, as messages [type, fields]; owed no longer. */
  owed() {
    const messages = [...this.unsentStops].map(([connection, stopped]) => [stopped ? 'stop' : 'go_on', { connection }]);
    this.unsentStops.clear();
    return messages;
  }

  /** What comes of a call before it runs: 'forgotten' (nothing runs or is said), 'stopped' (refused with AGENT_STOPPED), or null (it runs). */
  gate(call) {
    const connection = call.connection?.id == null ? null : String(call.connection.id);
    if (connection !== null && this.forgotten.has(connection)) return 'forgotten';
    if (connection !== null && this.stoppedAgents.has(connection)) return 'stopped';
    return null;
  }

  /**
   * A message of the relay heard: what changes here, and what the shell is to do, as
   * `{ goOn, forgotten, cancel, relist }`: tell the app a stopped agent goes on (`goOn`: its
   * id), that a connection was forgotten (`forgotten`) and that its calls under way are no
   * longer waited for (`cancel`: their ids), and change the connections as listed (`relist`:
   * each connection to itself, another, or null when gone). Messages of no state here: `{}`.
   */
  hear(message) {
    switch (message.type) {
      case 'welcome':
        this.retries = 0;
        this.presenceKey = message.presence;
        return {};
      case 'presence':
        this.presenceKey = { credential: message.credential, key: message.key };
        return {};
      case 'tools_refused':
        this.toolsRefused = message.sentence;
        return {};
      case 'stopped': {
        const id = message.connection;
        if (!id) return {};
        let goOn;
        if (message.stopped) this.stoppedAgents.add(id);
        else if (this.stoppedAgents.delete(id)) goOn = id;
        return { goOn, relist: (c) => (c.id === id ? { ...c, stopped: message.stopped } : c) };
      }
      case 'forgotten': {
        const id = message.connection;
        if (!id) return {};
        this.forgotten.add(id);
        this.stoppedAgents.delete(id);
        const cancel = [...this.running].filter(([, connection]) => connection === id).map(([call]) => call);
        return { forgotten: id, cancel, relist: (c) => (c.id === id ? null : c) };
      }
      default:
        return {};
    }
  }

  /** The tool list was stated again: the refusal of the one before no longer stands. Whether there was one. */
  restated() {
    const had = this.toolsRefused !== null;
    this.toolsRefused = null;
    return had;
  }

  /** How long to wait before the next try (one more try): half to the whole of min(first * 2^n, max), by `random` in [0, 1). */
  nextWait(random) {
    const ceiling = Math.min(RETRY_FIRST_MS * 2 ** this.retries, this.quiet ? QUIET_RETRY_MAX_MS : RETRY_MAX_MS);
    this.retries += 1;
    return ceiling / 2 + random * (ceiling / 2);
  }
}
