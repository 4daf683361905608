// Script on the app's page can use the browser's pairing key but never read it: in the real
// demo page (Chromium), the pair kept in IndexedDB (by relay origin) is a CryptoKey pair whose
// private key is not extractable (every export rejects) and signs only; its public key is the
// one the page's hello carries, and its hash the pairing its socket names (the key itself never
// in the address); a reload keeps it; and the first protocol's tab secret, when found in
// localStorage, is removed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { RELAY } from './harness.mjs';
import { launchChromium, openDemo, reloadDemo } from './demo_harness.mjs';

/** What the page can learn of its stored pairing key for `origin`. */
function inspectKey(origin) {
  return (async () => {
    const done = (r) => new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const db = await done(indexedDB.open('tabrelay'));
    const store = db.transaction('pairing-keys').objectStore('pairing-keys');
    const origins = await done(store.getAllKeys());
    const pair = await done(store.get(origin));
    const { privateKey, publicKey } = pair;
    const exports = [];
    for (const format of ['pkcs8', 'jwk', 'raw']) {
      exports.push(await crypto.subtle.exportKey(format, privateKey).then(() => `${format}: exported`, (e) => `${format}: ${e.name}`));
    }
    const raw = new Uint8Array(await crypto.subtle.exportKey('raw', publicKey));
    const publicB64 = btoa(String.fromCharCode(...raw)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    return {
      origins,
      isKey: privateKey instanceof CryptoKey && publicKey instanceof CryptoKey,
      type: privateKey.type,
      extractable: privateKey.extractable,
      usages: privateKey.usages,
      algorithm: privateKey.algorithm,
      exports,
      publicB64,
      oldSecret: localStorage.getItem('tabrelay:tab-secret'),
    };
  })();
}

test('the stored pairing key cannot be exported, and is the one the socket names', { timeout: 60_000 }, async () => {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext();
    // A browser that ran the first protocol: its bearer secret is still in localStorage.
    await context.addInitScript(() => {
      if (!sessionStorage.getItem('seeded')) {
        sessionStorage.setItem('seeded', '1');
        localStorage.setItem('tabrelay:tab-secret', 'k5Hn0Nd3e1oDqJ7b6v1wQm0Kc9eYtq2ZpW8xR4sLfA0');
      }
    });
    const sockets = [];
    const hellos = [];
    // The relay's sockets (the local server's address, tried quietly, has a key of its own).
    context.on('page', (p) => p.on('websocket', (ws) => {
      if (!ws.url().startsWith(RELAY.replace(/^http/, 'ws'))) return;
      sockets.push(ws.url());
      ws.on('framesent', ({ payload }) => {
        try {
          const m = JSON.parse(String(payload));
          if (m.type === 'hello') hellos.push(m);
        } catch {
          // a ping
        }
      });
    }));
    const page = await openDemo(context);
    const seen = await page.evaluate(inspectKey, new URL(RELAY).origin);
    // One key per relay origin: the relay's, and the local server's the demo names.
    const local = process.env.TABRELAY_LOCAL_URL ? [new URL(process.env.TABRELAY_LOCAL_URL).origin] : [];
    assert.deepEqual([...seen.origins].sort(), [new URL(RELAY).origin, ...local].sort(), 'one key, kept by each relay’s origin');
    assert.equal(seen.isKey, true);
    assert.equal(seen.type, 'private');
    assert.equal(seen.extractable, false, 'the private key is not extractable');
    assert.deepEqual(seen.usages, ['sign']);
    assert.deepEqual(seen.algorithm, { name: 'ECDSA', namedCurve: 'P-256' });
    assert.deepEqual(seen.exports, ['pkcs8: InvalidAccessError', 'jwk: InvalidAccessError', 'raw: InvalidAccessError']);
    assert.equal(seen.oldSecret, null, 'the old tab secret was removed');
    const pairing = createHash('sha256').update(Buffer.from(seen.publicB64, 'base64url')).digest('hex');
    const url = new URL(sockets.at(-1));
    assert.equal(url.searchParams.get('pairing'), pairing, 'the socket names the stored pair’s pairing');
    assert.ok(!sockets.at(-1).includes(seen.publicB64), 'and never the key itself');
    assert.equal(hellos.at(-1)?.key, seen.publicB64, 'the hello carries the stored pair’s public key');
    await reloadDemo(page);
    const again = await page.evaluate(inspectKey, new URL(RELAY).origin);
    assert.equal(again.publicB64, seen.publicB64, 'a reload keeps the key (and so the pairing)');
    assert.equal(new URL(sockets.at(-1)).searchParams.get('pairing'), pairing);
  } finally {
    await browser.close();
  }
});
