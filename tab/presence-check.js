// The person's proven presence: the decisions that give an agent power (approving a
// connection, Allow on an irreversible call, "Always", a looser mode or rule, letting a stopped
// agent go on) ask for the device's own user verification through WebAuthn (a platform
// authenticator: fingerprint, face, PIN, screen lock), which no agent driving the page can give.
//
//   import { createPresenceCheck } from './presence-check.js';
//   const check = createPresenceCheck({ relay, withoutDevice: 'refuse' });
//   const proof = await check.approval(code);          // then relay.approve(code, proof)
//   await check.confirm(PRESENCE.ANSWER, `${id}\nalways`); // resolves, or rejects with a sentence
//
// The pairing's credential is made once, by the person, the first time a decision needs it (its
// creation verifies the user too), and the relay keeps its public key: the relay checks the
// assertion of a connection's approval (made for that very code), and this module checks the
// assertion of the tab's own decisions (made for that very call and answer) before they count.
// Each challenge is the SHA-256 of the bundle's `presenceText(relay origin, decision, subject)`,
// so an assertion made for one code, call or relay is worth nothing for another.
//
// A browser with no platform authenticator cannot prove anything: `withoutDevice` is the app's
// choice, 'refuse' (those decisions are not available there) or 'allow' (they go on, and the
// person's side says that an agent driving this browser could have pressed them).
// WebAuthn's relying party is the page's host: it cannot be an IP address, so a page served on
// 127.0.0.1 has no credential (serve it on localhost during development).

import { PRESENCE, PRESENCE_SENTENCES, presenceText } from './generated/bundle.js';

export { PRESENCE };
/**
 * What the person reads when a decision was not confirmed, or cannot be here: the bundle's, beside
 * the relay's refusals of an approval (bundle/src/words.rs), so both name the device alike.
 */
export { PRESENCE_SENTENCES };

/** How long the device's prompt may wait for the person, in milliseconds. */
export const PRESENCE_WAIT_MS = 120_000;

const USER_PRESENT = 0x01;
const USER_VERIFIED = 0x04;
/** ES256: ECDSA P-256 with SHA-256 (COSE), the one algorithm the relay checks. */
const ES256 = -7;

/** Bytes (an ArrayBuffer or a view) as base64url without padding. */
export function base64url(bytes) {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  let text = '';
  for (const b of view) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** base64url without padding as bytes. */
export function fromBase64url(text) {
  const plain = atob(String(text).replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(plain, (c) => c.charCodeAt(0));
}

/** An ASN.1 DER ECDSA signature as the 64 bytes of r then s that WebCrypto verifies, or null. */
export function rawSignature(der) {
  const d = der instanceof Uint8Array ? der : new Uint8Array(der);
  if (d[0] !== 0x30 || d[1] !== d.length - 2) return null;
  const out = new Uint8Array(64);
  let at = 2;
  for (let half = 0; half < 2; half++) {
    if (d[at] !== 0x02) return null;
    let n = d[at + 1];
    let from = at + 2;
    if (n < 1 || n > 33 || from + n > d.length) return null;
    if (n === 33) {
      if (d[from] !== 0) return null;
      from += 1;
      n -= 1;
    }
    out.set(d.subarray(from, from + n), half * 32 + 32 - n);
    at = from + n;
  }
  return at === d.length ? out : null;
}

/**
 * The presence check for the tab end of `relay` (a RelayClient: its origin, pairing, connection
 * and the credential the relay holds, `presenceKey`). `withoutDevice`: 'refuse' or 'allow' (see
 * above). `credentials`, `PublicKeyCredential` and `subtle` are the browser's (tests pass their own).
 */
export function createPresenceCheck({ relay, withoutDevice = 'refuse', credentials = globalThis.navigator?.credentials, PublicKeyCredential = globalThis.PublicKeyCredential, subtle = globalThis.crypto?.subtle, name = 'Tabrelay', waitMs = PRESENCE_WAIT_MS } = {}) {
  if (withoutDevice !== 'refuse' && withoutDevice !== 'allow') throw new Error(`withoutDevice is 'refuse' or 'allow', not “${withoutDevice}”.`);
  const refused = () => new Error(PRESENCE_SENTENCES.NOT_CONFIRMED);

  async function challenge(decision, subject) {
    const text = presenceText(relay.origin, decision, String(subject));
    return new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)));
  }

  /** Whether this browser has a platform authenticator that verifies its user. */
  async function available() {
    if (!credentials || typeof PublicKeyCredential?.isUserVerifyingPlatformAuthenticatorAvailable !== 'function') return false;
    try {
      return (await PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable()) === true;
    } catch {
      return false;
    }
  }

  /** The person makes the pairing's credential (verified), and the relay keeps it. */
  async function enrol() {
    let made;
    try {
      made = await credentials.create({
        publicKey: {
          rp: { name },
          user: { id: crypto.getRandomValues(new Uint8Array(16)), name: 'agents', displayName: 'Your agents in this app' },
          challenge: await challenge(PRESENCE.CREATE, relay.pairing),
          pubKeyCredParams: [{ type: 'public-key', alg: ES256 }],
          authenticatorSelection: { authenticatorAttachment: 'platform', userVerification: 'required', residentKey: 'discouraged' },
          attestation: 'none',
          timeout: waitMs,
        },
      });
    } catch {
      throw refused();
    }
    const response = made?.response;
    if (!response || response.getPublicKeyAlgorithm?.() !== ES256) throw refused();
    const spki = new Uint8Array(response.getPublicKey());
    // A P-256 key's SubjectPublicKeyInfo ends with the raw uncompressed point (65 bytes).
    const raw = spki.subarray(spki.length - 65);
    if (raw[0] !== 4) throw refused();
    return relay.enrolPresence({
      credential: base64url(made.rawId),
      key: base64url(raw),
      client_data: base64url(response.clientDataJSON),
      authenticator: base64url(response.getAuthenticatorData()),
    });
  }

  /** The person's assertion for `decision` about `subject`, with the pairing's credential. */
  async function assert(decision, subject) {
    const held = relay.presenceKey;
    let got;
    try {
      got = await credentials.get({
        publicKey: {
          challenge: await challenge(decision, subject),
          allowCredentials: [{ type: 'public-key', id: fromBase64url(held.credential) }],
          userVerification: 'required',
          timeout: waitMs,
        },
      });
    } catch {
      throw refused();
    }
    if (!got?.response?.signature) throw refused();
    return {
      credential: base64url(got.rawId),
      client_data: base64url(got.response.clientDataJSON),
      authenticator: base64url(got.response.authenticatorData),
      signature: base64url(got.response.signature),
    };
  }

  /** Whether `a` holds as the relay would check it: verified user, this challenge, the held key's signature. */
  async function holds(a, decision, subject) {
    try {
      const held = relay.presenceKey;
      const data = fromBase64url(a.authenticator);
      const clientBytes = fromBase64url(a.client_data);
      const client = JSON.parse(new TextDecoder().decode(clientBytes));
      const want = base64url(await challenge(decision, subject));
      if (a.credential !== held.credential || client.type !== 'webauthn.get' || client.challenge !== want || client.crossOrigin === true) return false;
      if (data.length < 37 || (data[32] & (USER_PRESENT | USER_VERIFIED)) !== (USER_PRESENT | USER_VERIFIED)) return false;
      const signature = rawSignature(fromBase64url(a.signature));
      if (!signature) return false;
      const key = await subtle.importKey('raw', fromBase64url(held.key), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
      const clientHash = new Uint8Array(await subtle.digest('SHA-256', clientBytes));
      const signed = new Uint8Array(data.length + 32);
      signed.set(data);
      signed.set(clientHash, data.length);
      return await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, signature, signed);
    } catch {
      return false;
    }
  }

  /** 'device' once the pairing holds a credential (made now if need be), 'without' where the app allows going on without one; else rejects. */
  async function ready() {
    if (relay.presenceKey) return 'device';
    if (await available()) {
      await enrol();
      return 'device';
    }
    if (withoutDevice === 'allow') return 'without';
    throw new Error(PRESENCE_SENTENCES.NO_DEVICE);
  }

  return {
    withoutDevice,
    available,
    /**
     * What proves the person's approval of connect code (or link reference) `said`, as the tab
     * sends it: the assertion to send with the approval, or null where the browser has no
     * device and the app allows that. Rejects with a sentence.
     */
    async approval(said) {
      if ((await ready()) === 'without') return null;
      return assert(PRESENCE.APPROVE, said);
    },
    /**
     * The person confirms `decision` (PRESENCE.ANSWER, PRESENCE.SETTING) about `subject` on this
     * device: resolves with {verified: true}, or {verified: false} where the browser has no
     * device and the app allows that; rejects with a sentence when they did not.
     */
    async confirm(decision, subject) {
      if ((await ready()) === 'without') return { verified: false };
      const a = await assert(decision, subject);
      if (!(await holds(a, decision, subject))) throw refused();
      return { verified: true };
    },
    /** What the person's side says of this browser: 'device' (a credential is held or can be made), 'without' or 'refused'. */
    async state() {
      if (relay.presenceKey || (await available())) return 'device';
      return withoutDevice === 'allow' ? 'without' : 'refused';
    },
  };
}
