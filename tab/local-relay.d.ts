// Declarations of the tab's second relay, the local server (./local-relay.js), checked by the
// TypeScript compiler in tests/js/package_types.test.mjs.
import type { RelayClient } from './relay-client.js';
import type { PresenceCheck } from './presence-check.js';

/** The local server's default address (`tabrelay-local`'s default port). */
export const LOCAL_ADDRESS: string;

/** The local server's address as the tab reaches it: `localhost` and `[::1]` are 127.0.0.1, where its waiting page's cookie is (null: not http). */
export function localAddressOf(address: string): string | null;

/** What a local call's id starts with on the person's side (`local-ID`): the relay's and the local server's calls may share an id. */
export const LOCAL_CALL: string;

/** Makes `relay` the door to both relays: codes and waiting pages' links to the local server first, connections of both, each call's words to its relay. Returns `relay`. */
export function joinLocal(relay: RelayClient, local: RelayClient): RelayClient;

/** The presence check for a relay joined to its local server: a local code's (or link's) approval is proven to the local server (its own credential and origin), the rest as `check`. */
export function joinPresenceCheck(check: PresenceCheck, localCheck: PresenceCheck, relay: RelayClient): PresenceCheck;
