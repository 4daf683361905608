// The tab channel refuses a page from a foreign origin and a tab that does not prove its
// secret, each with a close code and a reason; the secret never travels in the URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, RELAY, APP_ORIGIN, MemoryStorage } from './harness.mjs';
import { pairingIdOf, SECRET_KEY, BUNDLE_DIGEST, CLOSE } from '../../tab/relay-client.js';

function rawSocket(pairing, origin) {
  const ws = new WebSocket(`${RELAY.replace('http', 'ws')}/tab?pairing=${pairing}`, { headers: { origin } });
  const closed = new Promise((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
  const opened = new Promise((resolve) => ws.addEventListener('open', resolve));
  return { ws, closed, opened };
}

test('a tab from a foreign origin is refused with 4403 and a reason', async () => {
  const tab = await openTab({ origin: 'https://evil.example' });
  assert.equal(tab.connected.status, 'refused');
  assert.equal(tab.connected.detail.code, 4403);
  assert.match(tab.connected.detail.reason, /origin may not pair/);
  tab.close();
});

test('a tab that cannot prove the pairing’s secret is refused with 4401', async () => {
  const storage = new MemoryStorage();
  const victim = await openTab({ storage });
  const pairing = await pairingIdOf(storage.getItem(SECRET_KEY));
  const s = rawSocket(pairing, APP_ORIGIN);
  await s.opened;
  s.ws.send(JSON.stringify({ type: 'hello', protocol: 1, secret: 'A'.repeat(43) }));
  const closed = await s.closed;
  assert.equal(closed.code, 4401);
  assert.match(closed.reason, /did not prove/);
  // The real tab is unaffected.
  assert.equal(victim.client.status, 'connected');
  victim.close();
});

test('a tab must say hello first, and a page of another protocol version or bundle is told to reload', async () => {
  const storage = new MemoryStorage();
  const tab = await openTab({ storage });
  const secret = storage.getItem(SECRET_KEY);
  const pairing = await pairingIdOf(secret);
  const a = rawSocket(pairing, APP_ORIGIN);
  await a.opened;
  a.ws.send(JSON.stringify({ type: 'result', id: 1, data: 'sneaky' }));
  assert.equal((await a.closed).code, 4401);
  const b = rawSocket(pairing, APP_ORIGIN);
  await b.opened;
  b.ws.send(JSON.stringify({ type: 'hello', protocol: 999, secret, bundle: BUNDLE_DIGEST }));
  const closed = await b.closed;
  assert.equal(closed.code, CLOSE.OUTDATED);
  assert.match(closed.reason, /reload/);
  const c = rawSocket(pairing, APP_ORIGIN);
  await c.opened;
  c.ws.send(JSON.stringify({ type: 'hello', protocol: 1, secret, bundle: '0123456789abcdef' }));
  assert.equal((await c.closed).code, CLOSE.OUTDATED, 'a page built from another bundle is told to reload');
  tab.close();
});

test('a tab naming no valid pairing is refused', async () => {
  const s = rawSocket('not-a-pairing', APP_ORIGIN);
  const closed = await s.closed;
  assert.equal(closed.code, 4400);
});
