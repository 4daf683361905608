//! The person's proven presence: the pairing's WebAuthn credential (a platform authenticator's,
//! made by the person with user verification) and the checks of what a tab sends to prove it,
//! short of the signature itself, which the shell verifies ([`Proof`]). An agent driving the
//! person's browser can click Approve but cannot give the device's fingerprint, face, PIN or
//! screen lock, so once the pairing holds a credential no approval goes through without an
//! assertion the person made for that very code.
//!
//! What is checked, as WebAuthn's relying party does (Web Authentication Level 3, §7): the
//! client data's `type`, `challenge` (SHA-256 of [`presence_text`] for this relay, decision and
//! subject) and `origin` (the app origin the credential was made on); the authenticator data's
//! relying party (SHA-256 of the origin's host, the default RP ID) and its flags (user present
//! and user verified); the credential is the pairing's own; the signature (ES256, over the
//! authenticator data and the client data's SHA-256) is the shell's [`Proof`].

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tabrelay_bundle::protocol::{
    presence, presence_text, Assertion, PresenceKey, PAIRING_KEY_BYTES,
};

use super::tabs::Proof;
use crate::sentences;

/// The authenticator data's flag: the user was present.
const USER_PRESENT: u8 = 0x01;
/// The authenticator data's flag: the user was verified (biometrics, PIN, screen lock).
const USER_VERIFIED: u8 = 0x04;
/// The authenticator data's fixed head: the RP ID's hash (32), the flags (1), the counter (4).
const AUTH_DATA_HEAD: usize = 37;
/// The longest credential id WebAuthn allows, in bytes.
const MAX_CREDENTIAL_BYTES: usize = 1023;
/// The longest client data or authenticator data a tab may send, in bytes: a few hundred in
/// practice; bounded so a tab cannot make the pairing hash megabytes.
const MAX_PART_BYTES: usize = 4096;

/// The pairing's presence credential, kept in its storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// The credential's id (base64url).
    pub credential: String,
    /// Its raw public key (base64url).
    pub key: String,
    /// The app origin it was made on; assertions must come from the same.
    pub origin: String,
}

tabrelay_bundle::codec!(Held, "a presence credential", { credential, key, origin });

/// A presence credential a tab sent ([`tabrelay_bundle::protocol::TabMessage::Presence`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enrolment {
    /// The credential's id (base64url).
    pub credential: String,
    /// Its raw public key (base64url).
    pub key: String,
    /// The creation's client data (base64url).
    pub client_data: String,
    /// The creation's authenticator data (base64url).
    pub authenticator: String,
}

impl Held {
    /// What the tabs are told of it.
    #[must_use]
    pub fn told(&self) -> PresenceKey {
        PresenceKey { credential: self.credential.clone(), key: self.key.clone() }
    }

    /// Checks a registration the tab sent for `pairing` on the relay's `relay_origin`: a
    /// credential whose creation verified the user. (Its attestation is "none": the creation
    /// is taken on the tab's word, once; see docs/security.md.)
    ///
    /// # Errors
    /// The sentence the tab is told when the registration is not one.
    pub fn register(
        relay_origin: &str,
        pairing: &str,
        enrolment: Enrolment,
    ) -> Result<Self, &'static str> {
        let Enrolment { credential, key, client_data, authenticator } = enrolment;
        let bad = sentences::PRESENCE_NOT_KEPT;
        let id = decode(&credential).filter(|id| (16..=MAX_CREDENTIAL_BYTES).contains(&id.len()));
        let raw = decode(&key).filter(|k| k.len() == PAIRING_KEY_BYTES && k[0] == 4);
        if id.is_none() || raw.is_none() {
            return Err(bad);
        }
        let challenge = challenge(relay_origin, presence::CREATE, pairing);
        let (origin, _) = client_data_of(&client_data, "webauthn.create", &challenge).ok_or(bad)?;
        verified_data(&authenticator, &origin).ok_or(bad)?;
        Ok(Self { credential, key, origin })
    }

    /// The signature to check for `assertion`, made on the relay's `relay_origin` for
    /// `decision` about `subject` with this credential; None when anything but the signature
    /// says it is not (another credential, challenge or origin, the user not verified).
    #[must_use]
    pub fn proof(
        &self,
        assertion: &Assertion,
        relay_origin: &str,
        decision: &str,
        subject: &str,
    ) -> Option<Proof> {
        if assertion.credential != self.credential {
            return None;
        }
        let challenge = challenge(relay_origin, decision, subject);
        let (origin, client_data) =
            client_data_of(&assertion.client_data, "webauthn.get", &challenge)?;
        let mut data = verified_data(&assertion.authenticator, &origin)?;
        if origin != self.origin {
            return None;
        }
        data.extend_from_slice(&Sha256::digest(&client_data));
        let signature = raw_signature(&decode(&assertion.signature)?)?;
        Some(Proof { key: decode(&self.key)?, data, signature })
    }
}

/// The challenge of a presence check: base64url of SHA-256 of [`presence_text`], as the
/// client data carries it.
#[must_use]
pub fn challenge(relay_origin: &str, decision: &str, subject: &str) -> String {
    let text = presence_text(relay_origin, decision, subject);
    crate::crypto::base64url(&Sha256::digest(text.as_bytes()))
}

/// The bytes of base64url without padding (how the tab end sends WebAuthn's buffers), of no
/// more than about [`MAX_PART_BYTES`] bytes.
fn decode(text: &str) -> Option<Vec<u8>> {
    if text.len() > MAX_PART_BYTES * 4 / 3 + 4 {
        return None;
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()
}

/// The client data's origin and bytes, when it is of `kind`, for `challenge`, and not made in
/// a cross-origin frame.
fn client_data_of(encoded: &str, kind: &str, challenge: &str) -> Option<(String, Vec<u8>)> {
    let bytes = decode(encoded)?;
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(&bytes) else { return None };
    let text = |key: &str| fields.get(key).and_then(Value::as_str);
    let cross = fields.get("crossOrigin").and_then(Value::as_bool).unwrap_or(false);
    if text("type") != Some(kind) || text("challenge") != Some(challenge) || cross {
        return None;
    }
    let origin = text("origin").filter(|o| host_of(o).is_some())?.to_owned();
    Some((origin, bytes))
}

/// The authenticator data's bytes, when its relying party is `origin`'s host and it says the
/// user was present and verified.
fn verified_data(encoded: &str, origin: &str) -> Option<Vec<u8>> {
    let data = decode(encoded).filter(|d| d.len() >= AUTH_DATA_HEAD)?;
    let rp = Sha256::digest(host_of(origin)?.as_bytes());
    let flags = data[32];
    let verified = flags & (USER_PRESENT | USER_VERIFIED) == USER_PRESENT | USER_VERIFIED;
    (data[..32] == rp[..] && verified).then_some(data)
}

/// An origin's host (its default WebAuthn RP ID): `https://` any host, or `http://localhost`
/// (the only http origin a browser lets use WebAuthn).
fn host_of(origin: &str) -> Option<&str> {
    let (scheme, rest) = crate::text::split_once(origin, "://")?;
    let host = rest.rsplit_once(':').map_or(rest, |(h, port)| {
        if port.bytes().all(|b| b.is_ascii_digit()) {
            h
        } else {
            rest
        }
    });
    let fits = !host.is_empty() && !host.contains(['/', '@', '?', '#']);
    (fits && (scheme == "https" || (scheme == "http" && host == "localhost"))).then_some(host)
}

/// An ECDSA signature in ASN.1 DER (`SEQUENCE { INTEGER r, INTEGER s }`, as WebAuthn gives it)
/// as the 64 bytes of r then s that WebCrypto verifies.
fn raw_signature(der: &[u8]) -> Option<Vec<u8>> {
    let (&[0x30, len], rest) = der.split_first_chunk::<2>()? else { return None };
    if usize::from(len) != rest.len() {
        return None;
    }
    let mut raw = Vec::with_capacity(64);
    let mut rest = rest;
    for _ in 0..2 {
        let (&[0x02, n], tail) = rest.split_first_chunk::<2>()? else { return None };
        let n = usize::from(n);
        if n == 0 || n > 33 || tail.len() < n {
            return None;
        }
        let (int, tail) = tail.split_at(n);
        // A leading zero keeps a high bit positive; past it, at most 32 bytes, left-padded.
        let int = if n == 33 { int.strip_prefix(&[0])? } else { int };
        raw.resize(raw.len() + 32 - int.len(), 0);
        raw.extend_from_slice(int);
        rest = tail;
    }
    rest.is_empty().then_some(raw)
}

#[cfg(test)]
pub(crate) mod tests;
