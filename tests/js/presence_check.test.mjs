// The person's proven presence in the tab end (tab/presence-check.js), with a played device: a
// real P-256 key signs assertions as a platform authenticator does (authenticator data with its
// flags, the client data's hash), so what the check accepts is what a browser's WebAuthn gives.
// A decision counts only once the device verified the person for that very decision; a device
// that does not verify, an assertion for another subject or key, or no device at all (where
// the app refuses that) leave it undone with a sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresenceCheck, PRESENCE, PRESENCE_SENTENCES, base64url, rawSignature } from '../../tab/presence-check.js';
import { presenceText } from '../../tab/generated/bundle.js';

const ORIGIN = 'https://relay.example';
const APP = 'https://app.example';
const subtle = globalThis.crypto.subtle;
const sha256 = async (bytes) => new Uint8Array(await subtle.digest('SHA-256', bytes));

/** P1363 (r ‖ s) as DER, as WebAuthn gives signatures. */
function der(raw) {
  const int = (b) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    const v = b.subarray(i);
    return v[0] & 0x80 ? [0, ...v] : [...v];
  };
  const r = int(raw.subarray(0, 32));
  const s = int(raw.subarray(32));
  return new Uint8Array([0x30, r.length + s.length + 4, 2, r.length, ...r, 2, s.length, ...s]);
}

/** A played platform authenticator: `verifies` whether it verifies the user; every call it was asked. */
async function device({ verifies = true, available = true, fails = false } = {}) {
  const keys = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
  const spki = new Uint8Array(await subtle.exportKey('spki', keys.publicKey));
  const id = new Uint8Array(16).fill(7);
  const asked = [];
  const authData = async (flags) => new Uint8Array([...(await sha256(new TextEncoder().encode('app.example'))), flags, 0, 0, 0, 1]);
  const clientData = (type, challenge) => new TextEncoder().encode(JSON.stringify({ type, challenge: base64url(challenge), origin: APP }));
  const credentials = {
    async create({ publicKey }) {
      asked.push({ create: publicKey });
      if (fails) throw new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError');
      const client = clientData('webauthn.create', publicKey.challenge);
      const data = await authData(verifies ? 0x45 : 0x41);
      return { rawId: id.buffer, response: { clientDataJSON: client.buffer, getPublicKey: () => spki.buffer, getPublicKeyAlgorithm: () => -7, getAuthenticatorData: () => data.buffer } };
    },
    async get({ publicKey }) {
      asked.push({ get: publicKey });
      if (fails) throw new DOMException('The operation either timed out or was not allowed.', 'NotAllowedError');
      const client = clientData('webauthn.get', publicKey.challenge);
      const data = await authData(verifies ? 0x05 : 0x01);
      const signed = new Uint8Array([...data, ...(await sha256(client))]);
      const raw = new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, keys.privateKey, signed));
      return { rawId: id.buffer, response: { clientDataJSON: client.buffer, authenticatorData: data.buffer, signature: der(raw).buffer } };
    },
  };
  const PublicKeyCredential = { isUserVerifyingPlatformAuthenticatorAvailable: async () => available };
  return { credentials, PublicKeyCredential, asked, raw: spki.subarray(spki.length - 65), id };
}

/** A relay client as the check sees it: it keeps what the pairing enrolled. */
function relayOf(presenceKey = null) {
  return {
    origin: ORIGIN,
    pairing: 'p1',
    presenceKey,
    enrolled: [],
    async enrolPresence(made) {
      this.enrolled.push(made);
      this.presenceKey = { credential: made.credential, key: made.key };
      return this.presenceKey;
    },
  };
}

const challengeOf = async (decision, subject) => base64url(await sha256(new TextEncoder().encode(presenceText(ORIGIN, decision, subject))));

test('the first decision makes the pairing’s credential (verified, platform, ES256), then asks for that very decision', async () => {
  const d = await device();
  const relay = relayOf();
  const check = createPresenceCheck({ relay, credentials: d.credentials, PublicKeyCredential: d.PublicKeyCredential, subtle });
  assert.deepEqual(await check.confirm(PRESENCE.ANSWER, '7\nalways'), { verified: true });
  const { create } = d.asked[0];
  assert.equal(create.authenticatorSelection.userVerification, 'required');
  assert.equal(create.authenticatorSelection.authenticatorAttachment, 'platform');
  assert.deepEqual(create.pubKeyCredParams, [{ type: 'public-key', alg: -7 }]);
  assert.equal(base64url(create.challenge), await challengeOf(PRESENCE.CREATE, 'p1'));
  assert.equal(relay.enrolled[0].key, base64url(d.raw), 'the raw public key, from the SPKI');
  const { get } = d.asked[1];
  assert.equal(get.userVerification, 'required');
  assert.equal(base64url(get.challenge), await challengeOf(PRESENCE.ANSWER, '7\nalways'));
  assert.equal(base64url(get.allowCredentials[0].id), base64url(d.id));
});

test('an approval carries the assertion for that code, which the relay checks', async () => {
  const d = await device();
  const relay = relayOf();
  const check = createPresenceCheck({ relay, credentials: d.credentials, PublicKeyCredential: d.PublicKeyCredential, subtle });
  const proof = await check.approval('ABCDE-FGHJK');
  assert.deepEqual(Object.keys(proof).sort(), ['authenticator', 'client_data', 'credential', 'signature']);
  const client = JSON.parse(Buffer.from(proof.client_data, 'base64url').toString());
  assert.equal(client.challenge, await challengeOf(PRESENCE.APPROVE, 'ABCDE-FGHJK'));
  assert.equal(rawSignature(Buffer.from(proof.signature, 'base64url')).length, 64);
});

test('a device that does not verify the person, or says no, changes nothing', async () => {
  for (const played of [{ verifies: false }, { fails: true }]) {
    const d = await device(played);
    const held = { credential: base64url(d.id), key: base64url(d.raw) };
    const check = createPresenceCheck({ relay: relayOf(held), credentials: d.credentials, PublicKeyCredential: d.PublicKeyCredential, subtle });
    await assert.rejects(check.confirm(PRESENCE.ANSWER, '1\nonce'), { message: PRESENCE_SENTENCES.NOT_CONFIRMED });
  }
});

test('an assertion of another key or for another subject does not hold', async () => {
  const mine = await device();
  const other = await device();
  // The relay holds this browser's credential; the device answers with another key.
  const held = { credential: base64url(mine.id), key: base64url(mine.raw) };
  const check = createPresenceCheck({ relay: relayOf(held), credentials: other.credentials, PublicKeyCredential: other.PublicKeyCredential, subtle });
  await assert.rejects(check.confirm(PRESENCE.ANSWER, '1\nonce'), { message: PRESENCE_SENTENCES.NOT_CONFIRMED });
  // A device that answers every question with the assertion it gave for another.
  const replaying = await device();
  const first = await replaying.credentials.get({ publicKey: { challenge: new Uint8Array(32) } });
  const replayed = { credentials: { get: async () => first }, PublicKeyCredential: replaying.PublicKeyCredential };
  const check2 = createPresenceCheck({ relay: relayOf({ credential: base64url(replaying.id), key: base64url(replaying.raw) }), ...replayed, subtle });
  await assert.rejects(check2.confirm(PRESENCE.ANSWER, '2\nalways'), { message: PRESENCE_SENTENCES.NOT_CONFIRMED });
});

test('no device: the app refuses those decisions, or allows them and says an agent could have pressed', async () => {
  const d = await device({ available: false });
  const refusing = createPresenceCheck({ relay: relayOf(), credentials: d.credentials, PublicKeyCredential: d.PublicKeyCredential, subtle });
  await assert.rejects(refusing.confirm(PRESENCE.SETTING, 'x'), { message: PRESENCE_SENTENCES.NO_DEVICE });
  await assert.rejects(refusing.approval('ABCDE-FGHJK'), { message: PRESENCE_SENTENCES.NO_DEVICE });
  assert.equal(await refusing.state(), 'refused');
  const allowing = createPresenceCheck({ relay: relayOf(), withoutDevice: 'allow', credentials: d.credentials, PublicKeyCredential: d.PublicKeyCredential, subtle });
  assert.deepEqual(await allowing.confirm(PRESENCE.SETTING, 'x'), { verified: false });
  assert.equal(await allowing.approval('ABCDE-FGHJK'), null);
  assert.equal(await allowing.state(), 'without');
  assert.equal(d.asked.length, 0, 'the device was never asked');
});

test('DER signatures read as r then s, and anything else is refused', () => {
  const raw = new Uint8Array(64).map((_, i) => (i === 0 ? 0x80 : i));
  assert.deepEqual(rawSignature(der(raw)), raw);
  assert.equal(rawSignature(new Uint8Array([0x30, 0])), null);
  assert.equal(rawSignature(new Uint8Array([...der(raw), 0])), null);
});
