// What the per-sender limits cannot count is refused, never let through: a request that names
// no sender address (pooled under one key, one outsider would spend every such request's
// allowance) makes no connect code, opens no tab socket and fetches no client metadata
// document; and a relay deployed without its rate-limiting bindings refuses what they limit and
// names each missing binding in its log when it starts.
//
// wrangler dev gives each request the address it connected from as CF-Connecting-IP and keeps
// one a request brings: these bring one that reads as no address. The missing bindings are a
// relay of this file's own, started from a copy of wrangler.toml without its [[ratelimits]].
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, rmSync, openSync, closeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELAY, register, pkcePair, askForCode, rawTabSocket, startRelay, waitFor, CALLBACK } from './harness.mjs';
import { CLOSE } from '../../tab/relay-client.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const NOBODY = 'unknown'; // no address: what a header that reads as none names
const work = mkdtempSync(join(tmpdir(), 'tabrelay-uncounted-'));
const config = join(ROOT, `.wrangler-unbound-${process.pid}.toml`);
const log = join(work, 'wrangler.log');
let unbound;

before(async () => {
  // wrangler.toml without its rate-limiting bindings (and without its build: the Worker is built).
  const toml = readFileSync(join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/\[\[ratelimits\]\][^[]*/g, '')
    .replace(/\[build\][^[]*/, '');
  assert.doesNotMatch(toml, /ratelimits/);
  writeFileSync(config, toml);
  const fd = openSync(log, 'w');
  try {
    unbound = await startRelay({ state: join(work, 'state'), config, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
});

after(() => {
  unbound?.stop();
  rmSync(config, { force: true });
  rmSync(work, { recursive: true, force: true });
});

/** A waiting page's sealed request for a new authorization of `client` at `relay`. */
async function sealFor(relay, client) {
  const url = new URL(`${relay}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK,
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's',
  });
  const page = await (await fetch(url)).text();
  return /data-request="([^"]*)"/.exec(page)[1];
}

test('a request that names no sender address makes no code, opens no socket and fetches no document', async () => {
  const client = await register('Nobody');
  for (const nobody of [NOBODY, '203.0.113.7, 10.0.0.1']) {
    const refused = await askForCode(RELAY, await sealFor(RELAY, client), { 'cf-connecting-ip': nobody });
    assert.equal(refused.status, 503, `${JSON.stringify(nobody)}: ${JSON.stringify(refused.body)}`);
    assert.match(refused.body.sentence, /cannot count this request/);
    assert.equal(refused.body.code, undefined);
    assert.equal(refused.cookie, '', 'no cookie, no code');
  }
  const counted = await askForCode(RELAY, await sealFor(RELAY, client), { 'cf-connecting-ip': '10.99.0.1' });
  assert.equal(counted.status, 200, 'a request with an address gets its code');
  const socket = rawTabSocket(`pairing=${randomBytes(32).toString('hex')}`, { sender: NOBODY });
  const closed = await socket.closed;
  assert.equal(socket.messages.length, 0, 'no challenge: no object');
  assert.equal(closed.code, CLOSE.TOO_MANY_TABS, JSON.stringify(closed));
  // A client metadata document is not fetched for it (nothing listens at this address).
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: 'https://nobody.example/client.json', redirect_uri: CALLBACK,
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's',
  });
  const document = await fetch(url, { headers: { accept: 'application/json', 'cf-connecting-ip': NOBODY } });
  const body = await document.json();
  assert.equal(document.status, 503, JSON.stringify(body));
  assert.equal(body.error, 'temporarily_unavailable');
});

test('a relay without its rate-limiting bindings refuses what they limit and names each at start', { timeout: 90_000 }, async () => {
  const said = await waitFor(() => {
    const text = readFileSync(log, 'utf8');
    return ['CODE_SENDERS', 'TAB_SENDERS', 'DOCUMENT_SENDERS'].every((b) => new RegExp(`no rate-limiting binding ${b}`).test(text)) && text;
  }, 10_000, 100);
  assert.equal(said.match(/no rate-limiting binding/g).length, 3, 'each once');
  const fetchUnbound = (path, init) => fetch(`${unbound.url}${path}`, init);
  const reg = await fetchUnbound('/register', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Unbound', redirect_uris: [CALLBACK] }) });
  const own = await reg.json();
  const refused = await askForCode(unbound.url, await sealFor(unbound.url, own), { 'cf-connecting-ip': '10.99.0.2' });
  assert.equal(refused.status, 503, JSON.stringify(refused.body));
  assert.match(refused.body.sentence, /cannot count this request/);
  assert.equal(refused.cookie, '');
  const socket = rawTabSocket(`pairing=${randomBytes(32).toString('hex')}`, { relay: unbound.url, sender: '10.99.0.3' });
  assert.equal((await socket.closed).code, CLOSE.TOO_MANY_TABS);
});
