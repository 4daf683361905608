// The browser's pairing key is used only as this module makes it: a pair stored with an
// extractable private key (planted in IndexedDB by script on the app's page, which could then
// read it and prove itself as this browser anywhere) is never used: the tab makes a new,
// non-extractable one and stores it in its place. Run against a small IndexedDB of requests in
// memory (Node has none) holding real WebCrypto keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { indexedDbKeys, pairingKey, publicKeyOf, soundKey } from '../../tab/relay-client.js';

const ORIGIN = 'https://relay.example';
const P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/** An IndexedDB with one database of object stores in memory: what indexedDbKeys asks of one. */
function memoryIndexedDb() {
  const stores = new Map();
  const request = (run) => {
    const r = {};
    queueMicrotask(() => {
      try {
        r.result = run();
        r.onsuccess?.();
      } catch (e) {
        r.error = e;
        r.onerror?.();
      }
    });
    return r;
  };
  const db = {
    createObjectStore: (name) => stores.set(name, new Map()),
    transaction: (name) => ({
      objectStore: () => {
        const s = stores.get(name);
        return {
          get: (k) => request(() => s.get(k)),
          add: (v, k) => request(() => {
            if (s.has(k)) throw new Error('ConstraintError');
            s.set(k, v);
          }),
          put: (v, k) => request(() => void s.set(k, v)),
        };
      },
    }),
  };
  return {
    stores,
    open: () => {
      const r = { result: db };
      queueMicrotask(() => {
        if (!stores.size) r.onupgradeneeded?.();
        r.onsuccess?.();
      });
      return r;
    },
  };
}

test('a stored pair whose private key is extractable is replaced by a new, non-extractable one', async () => {
  const idb = memoryIndexedDb();
  const keys = indexedDbKeys(idb);
  const planted = await crypto.subtle.generateKey(P256, true, ['sign', 'verify']);
  await keys.put(ORIGIN, planted);
  assert.equal((await keys.get(ORIGIN)).privateKey.extractable, true, 'planted first');
  assert.equal(soundKey(planted), false);
  const used = await pairingKey(keys, ORIGIN);
  assert.notEqual(used, planted);
  assert.equal(used.privateKey.extractable, false);
  assert.deepEqual(used.privateKey.usages, ['sign']);
  await assert.rejects(crypto.subtle.exportKey('pkcs8', used.privateKey));
  const plantedPublic = await publicKeyOf(planted);
  assert.notDeepEqual(await publicKeyOf(used), plantedPublic, 'another key, so another pairing');
  // Stored in the planted pair's place: every later tab uses it.
  const stored = await keys.get(ORIGIN);
  assert.equal(stored, used);
  assert.equal(await pairingKey(keys, ORIGIN), used, 'kept, not made again');
  // A sound pair stored first is kept: a second put does not replace it.
  const other = await crypto.subtle.generateKey(P256, false, ['sign']);
  await keys.put(ORIGIN, other);
  assert.equal(await keys.get(ORIGIN), used);
});

test('other unsound pairs are replaced too: another curve, another use, a public key in its place, not a key', async () => {
  const extractableSignOnly = await crypto.subtle.generateKey(P256, true, ['sign']);
  const p384 = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-384' }, false, ['sign']);
  const sound = await crypto.subtle.generateKey(P256, false, ['sign']);
  const swapped = { privateKey: sound.publicKey, publicKey: sound.publicKey };
  for (const [what, pair] of [
    ['extractable', extractableSignOnly],
    ['P-384', p384],
    ['public as private', swapped],
    ['not a key', { privateKey: { algorithm: P256, type: 'private', extractable: false, usages: ['sign'] } }],
    ['nothing', 'a string'],
  ]) {
    assert.equal(soundKey(pair), false, what);
    const keys = indexedDbKeys(memoryIndexedDb());
    await keys.put(ORIGIN, pair);
    const used = await pairingKey(keys, ORIGIN);
    assert.equal(soundKey(used), true, what);
    assert.equal(await keys.get(ORIGIN), used, what);
  }
  assert.equal(soundKey(sound), true);
});

test('a key store that keeps the planted pair anyway is not trusted: the tab uses the key it made', async () => {
  const planted = await crypto.subtle.generateKey(P256, true, ['sign']);
  const keys = { get: async () => planted, put: async () => {} };
  const used = await pairingKey(keys, ORIGIN);
  assert.notEqual(used, planted);
  assert.equal(used.privateKey.extractable, false);
});
