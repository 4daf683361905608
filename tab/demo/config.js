// The demo app's configuration: the relay it pairs with. Fixed by whoever serves the page (a
// link cannot change it): `node scripts/serve-tab.mjs --relay URL` serves this file with its
// own address; served as it is, the page pairs with the local relay of `scripts/dev`.
export const RELAY = 'http://127.0.0.1:8787';
// The chat bar's provider origins (provider id → origin), when not the providers' own: a
// company's proxy, or the tests' played providers (tests/played/providers.mjs).
export const CHAT_ORIGINS = {};
