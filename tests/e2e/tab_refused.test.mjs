// The tab channel refuses a page from a foreign origin, a socket that names no pairing key, a
// page of the first protocol (it named the pairing id) and a tab that does not prove its key,
// each with a close code and a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { openTab, MemoryStorage, rawTabSocket, keyOf, pairingOf, helloFor } from './harness.mjs';
import { BUNDLE_DIGEST, CLOSE, PROTOCOL_VERSION } from '../../tab/relay-client.js';

test('a tab from a foreign origin is refused with 4403 and a reason', async () => {
  const tab = await openTab({ origin: 'https://evil.example' });
  assert.equal(tab.connected.status, 'refused');
  assert.equal(tab.connected.detail.code, 4403);
  assert.match(tab.connected.detail.reason, /origin may not pair/);
  tab.close();
});

test('a socket whose hello is not the pairing key’s signature over its challenge is refused with 4401', async () => {
  const victim = await openTab();
  const s = rawTabSocket(`pairing=${pairingOf(victim)}`);
  const challenge = await s.challenge;
  assert.match(challenge, /^[A-Za-z0-9_-]{43}$/, 'a fresh challenge of 32 bytes comes first');
  const signature = randomBytes(64).toString('base64url');
  s.ws.send(JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, bundle: BUNDLE_DIGEST, key: keyOf(victim), signature }));
  const closed = await s.closed;
  assert.equal(closed.code, CLOSE.PROOF_FAILED);
  assert.match(closed.reason, /did not prove/);
  assert.deepEqual(s.messages.map((m) => m.type), ['challenge'], 'no welcome');
  // The real tab is unaffected.
  assert.equal(victim.client.status, 'connected');
  victim.close();
});

test('a tab must say hello first, and a page of another protocol version or bundle is told to reload', async () => {
  const storage = new MemoryStorage();
  const tab = await openTab({ storage });
  const keyPair = await storage.keys.get(tab.client.origin);
  const a = rawTabSocket(`pairing=${pairingOf(tab)}`);
  await a.challenge;
  a.ws.send(JSON.stringify({ type: 'result', id: 1, data: 'sneaky' }));
  assert.equal((await a.closed).code, CLOSE.PROOF_FAILED);
  const b = rawTabSocket(`pairing=${pairingOf(tab)}`);
  b.ws.send(await helloFor(keyPair, await b.challenge, undefined, { protocol: 999 }));
  const closed = await b.closed;
  assert.equal(closed.code, CLOSE.OUTDATED);
  assert.match(closed.reason, /reload/);
  const c = rawTabSocket(`pairing=${pairingOf(tab)}`);
  c.ws.send(await helloFor(keyPair, await c.challenge, undefined, { bundle: '0123456789abcdef' }));
  assert.equal((await c.closed).code, CLOSE.OUTDATED, 'a page built from another bundle is told to reload');
  tab.close();
});

test('a socket naming no valid pairing is refused; pages of earlier protocols are told to reload', async () => {
  for (const query of ['pairing=not-an-id', `pairing=${'AB'.repeat(32)}`, '']) {
    const s = rawTabSocket(query);
    const closed = await s.closed;
    assert.equal(closed.code, CLOSE.PROTOCOL_ERROR, query);
    assert.match(closed.reason, /must name its pairing/);
    assert.equal(s.messages.length, 0, 'no challenge');
  }
  // Protocol 2 named the public key in the address: refused before any object is addressed.
  const two = rawTabSocket(`key=${Buffer.concat([Buffer.from([4]), randomBytes(64)]).toString('base64url')}`);
  const refused = await two.closed;
  assert.equal(refused.code, CLOSE.OUTDATED);
  assert.match(refused.reason, /reload/);
  assert.equal(two.messages.length, 0, 'no challenge');
  // Protocol 1 named the pairing id and said hello with a secret: its hello is told to reload.
  const one = rawTabSocket(`pairing=${'ab'.repeat(32)}`);
  await one.challenge;
  one.ws.send(JSON.stringify({ type: 'hello', protocol: 1, secret: 's' }));
  const closed = await one.closed;
  assert.equal(closed.code, CLOSE.OUTDATED);
  assert.match(closed.reason, /reload/);
});
