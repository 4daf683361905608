// The text a tab signs is the relay's: the tab's copy (tab/generated/bundle.js) gives the same
// bytes as bundle/src/protocol.rs `proof_text` for the vector its test checks, and a signature
// the tab client makes over it verifies with the public key its socket names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { proofText, PROOF_CONTEXT } from '../../tab/generated/bundle.js';
import { pairingKey, publicKeyOf, pairingIdOf, signProof } from '../../tab/relay-client.js';

test('the proof text is the relay’s: context, origin and challenge, one a line', () => {
  assert.equal(proofText('https://relay.example', 'AAEC'), 'tabrelay-tab-proof/v1\nhttps://relay.example\nAAEC');
  assert.equal(PROOF_CONTEXT, 'tabrelay-tab-proof/v1');
});

test('a pairing key is made once per relay origin, signs the proof text, and names its pairing', async () => {
  const kept = new Map();
  const keys = { get: async (o) => kept.get(o) ?? null, put: async (o, k) => void (kept.has(o) || kept.set(o, k)) };
  const a = await pairingKey(keys, 'https://relay.example');
  assert.equal(await pairingKey(keys, 'https://relay.example'), a, 'kept, not made again');
  const other = await pairingKey(keys, 'https://other.example');
  assert.notEqual(other, a, 'one key per relay origin');
  assert.equal(a.privateKey.extractable, false);
  const raw = await publicKeyOf(a);
  assert.equal(raw.length, 65);
  assert.equal(raw[0], 4, 'uncompressed');
  assert.match(await pairingIdOf(raw), /^[0-9a-f]{64}$/);
  const signature = Buffer.from(await signProof(a, 'https://relay.example', 'AAEC'), 'base64url');
  assert.equal(signature.length, 64, 'P1363 r||s');
  const publicKey = await crypto.subtle.importKey('raw', raw, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
  const verify = (text) => crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, signature, new TextEncoder().encode(text));
  assert.equal(await verify(proofText('https://relay.example', 'AAEC')), true);
  assert.equal(await verify(proofText('https://attacker.example', 'AAEC')), false);
});
