// The demo app's configuration: the relay it pairs with, and the local server (`tabrelay-local`,
// which an agent app on the person's computer starts) it connects to beside it, quietly while
// none runs. Fixed by whoever serves the page (a link cannot change them): `node
// scripts/serve-tab.mjs --relay URL --local URL` serves this file with those addresses; served
// as it is, the page pairs with the local relay of `scripts/dev` and the local server's default.
export const RELAY = 'http://127.0.0.1:8787';
export const LOCAL = 'http://127.0.0.1:8790';
// The chat bar's provider origins (provider id → origin), when not the providers' own: a
// company's proxy, or the tests' played providers (tests/played/providers.mjs).
export const CHAT_ORIGINS = {};
