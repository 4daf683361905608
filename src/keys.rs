//! The signing keys: `RELAY_SIGNING_KEY` and, during a rotation, `RELAY_SIGNING_KEY_PREVIOUS`.
//! Each purpose (access tokens, client ids, the endpoint's sessions and request states, connect
//! codes and seals) signs with its own key derived by HMAC.
//!
//! A floor below the logic (docs/architecture.md, "The floors"): the configuration holds the
//! keys, and OAuth, the endpoint and the pairing sign with them, so they live under all four
//! and use nothing of theirs (they were `oauth::keys`, and the configuration imported OAuth).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use jwt_compact::alg::{Hs256, Hs256Key, Hs256Signature};
use jwt_compact::{Algorithm as _, AlgorithmSignature as _};

/// The fewest bytes a signing key may have.
pub const MIN_KEY_BYTES: usize = 32;

/// One signing key and its id.
#[derive(Clone)]
pub struct Key {
    /// The key id carried in every token (a digest of the key, not the key).
    pub id: String,
    secret: String,
}

/// A signing key refused: too short. Its text is one line for the log, naming the secret
/// (the variable), never its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortKey {
    /// `RELAY_SIGNING_KEY_PREVIOUS`'s, not `RELAY_SIGNING_KEY`'s.
    pub previous: bool,
    /// How many bytes it has.
    pub bytes: usize,
}

impl core::fmt::Display for ShortKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let name = if self.previous { "RELAY_SIGNING_KEY_PREVIOUS" } else { "RELAY_SIGNING_KEY" };
        write!(
            f,
            "{name}: the signing key has {} bytes; it needs at least {MIN_KEY_BYTES} random bytes",
            self.bytes
        )
    }
}

/// The current key and the previous one, which still verifies.
#[derive(Clone, Debug)]
pub struct Keys {
    /// Signs and verifies.
    pub current: Key,
    /// Verifies only.
    pub previous: Option<Key>,
}

/// What a signature is for; each signs with its own derived key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Access tokens.
    AccessToken,
    /// Stateless client ids.
    ClientId,
    /// The `requestState` of a call that needs the client's input (2026-07-28).
    RequestState,
    /// The check characters at the end of a connect code.
    ConnectCode,
    /// The letters of the code a sealed request makes.
    ConnectCodeDraw,
    /// The mask over a code's letters in the waiting page's link (a link reference).
    ConnectLink,
    /// The sealed authorization request the waiting page hands back for its connect code.
    AuthorizeSeal,
    /// The tag of a refresh token, checked before any pairing is asked about it.
    RefreshToken,
    /// A session-era `Mcp-Session-Id`: what the client declared at `initialize`, bound to its
    /// connection.
    Session,
    /// The ids of the relay's own requests to a session-era client (its questions).
    Question,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::AccessToken => b"tabrelay access token v1",
            Purpose::ClientId => b"tabrelay client id v1",
            Purpose::RequestState => b"tabrelay request state v1",
            Purpose::ConnectCode => b"tabrelay connect code v1",
            Purpose::ConnectCodeDraw => b"tabrelay connect code draw v1",
            Purpose::ConnectLink => b"tabrelay connect link v1",
            Purpose::AuthorizeSeal => b"tabrelay authorize seal v1",
            Purpose::RefreshToken => b"tabrelay refresh token v1",
            Purpose::Session => b"tabrelay session id v1",
            Purpose::Question => b"tabrelay question id v1",
        }
    }
}

impl core::fmt::Debug for Key {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never print the secret.
        f.debug_struct("Key").field("id", &self.id).finish_non_exhaustive()
    }
}

impl Key {
    /// A key from its secret, refused when shorter than [`MIN_KEY_BYTES`] (`previous`: the
    /// secret is `RELAY_SIGNING_KEY_PREVIOUS`).
    pub fn new(secret: &str, previous: bool) -> Result<Self, ShortKey> {
        if secret.len() < MIN_KEY_BYTES {
            return Err(ShortKey { previous, bytes: secret.len() });
        }
        let id = crate::crypto::sha256_hex(&[b"tabrelay key id:", secret.as_bytes()].concat())
            [..16]
            .to_owned();
        Ok(Self { id, secret: secret.to_owned() })
    }

    /// The key this key derives for a purpose.
    #[must_use]
    pub fn derived(&self, purpose: Purpose) -> [u8; 32] {
        hs256(self.secret.as_bytes(), purpose.label())
    }

    /// HMAC-SHA-256 of `data` under this key's derived key for `purpose`.
    #[must_use]
    pub fn mac(&self, purpose: Purpose, data: &[u8]) -> [u8; 32] {
        hs256(&self.derived(purpose), data)
    }

    /// Whether `tag` is the MAC of `data` under this key's derived key for `purpose`.
    pub(crate) fn verifies(&self, purpose: Purpose, data: &[u8], tag: &[u8]) -> bool {
        hs256_verifies(&self.derived(purpose), data, tag)
    }
}

/// HMAC-SHA-256 of `data` under `key`, computed by jwt-compact's HS256 (the JWT algorithm that
/// is this MAC): the one HMAC in the relay, access tokens' signatures included.
fn hs256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut tag = [0; 32];
    tag.copy_from_slice(&Hs256.sign(&Hs256Key::new(key), data).as_bytes());
    tag
}

/// Whether `tag` is HMAC-SHA-256 of `data` under `key`, checked by jwt-compact's HS256 (in
/// constant time). Its signature has one length, checked first: `try_from_slice` panics on
/// another.
fn hs256_verifies(key: &[u8], data: &[u8], tag: &[u8]) -> bool {
    Some(tag.len()) == Hs256Signature::LENGTH.map(core::num::NonZeroUsize::get)
        && Hs256Signature::try_from_slice(tag)
            .is_ok_and(|tag| Hs256.verify_signature(&tag, &Hs256Key::new(key), data))
}

impl Keys {
    /// The keys from the two secrets' values.
    pub fn new(current: &str, previous: Option<&str>) -> Result<Self, ShortKey> {
        let current = Key::new(current, false)?;
        let previous = match previous.filter(|p| !p.is_empty()) {
            Some(p) => Some(Key::new(p, true)?),
            None => None,
        };
        Ok(Self { current, previous })
    }

    /// Whether `tag` is the MAC of `data` under the current or the previous key.
    #[must_use]
    pub fn verify(&self, purpose: Purpose, data: &[u8], tag: &[u8]) -> bool {
        self.current.verifies(purpose, data, tag)
            || self.previous.as_ref().is_some_and(|k| k.verifies(purpose, data, tag))
    }

    /// `body` signed for `purpose` with the current key, as the relay's signed values carry
    /// their tag (seals, client ids, refresh tokens, access tokens): `body.tag`, the tag in
    /// base64url.
    #[must_use]
    pub fn sign(&self, purpose: Purpose, mut body: String) -> String {
        let tag = self.current.mac(purpose, body.as_bytes());
        body.push('.');
        body.push_str(&crate::crypto::base64url(&tag));
        body
    }

    /// The body of a value [`Self::sign`] signed (`body.tag`, the tag after the last dot) when
    /// its tag verifies for `purpose` under the current or the previous key.
    #[must_use]
    pub fn verified<'s>(&self, purpose: Purpose, signed: &'s str) -> Option<&'s str> {
        let (body, tag) = signed.rsplit_once('.')?;
        let tag = B64.decode(tag).ok()?;
        self.verify(purpose, body.as_bytes(), &tag).then_some(body)
    }

    /// The first key, the current then the previous one during a rotation, of which `test`
    /// says something.
    pub fn first<'k, T>(&'k self, test: impl Fn(&'k Key) -> Option<T>) -> Option<T> {
        test(&self.current).or_else(|| self.previous.as_ref().and_then(test))
    }

    /// The key with this id, current or previous.
    #[must_use]
    pub fn by_id(&self, id: &str) -> Option<&Key> {
        self.first(|k| (k.id == id).then_some(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_key_is_refused_with_a_reason_that_holds_no_secret() {
        let e = Keys::new("short-secret", None).unwrap_err();
        assert_eq!(e, ShortKey { previous: false, bytes: 12 });
        let line = e.to_string();
        assert!(line.starts_with("RELAY_SIGNING_KEY:") && line.contains("at least 32"), "{line}");
        assert!(!line.contains("short-secret"));
        let e = Keys::new(&"k".repeat(32), Some("old")).unwrap_err();
        assert!(e.to_string().starts_with("RELAY_SIGNING_KEY_PREVIOUS: "), "{e}");
    }

    #[test]
    fn the_previous_key_still_verifies_and_purposes_do_not_mix() {
        let old = Keys::new(&"o".repeat(32), None).unwrap();
        let tag = old.current.mac(Purpose::ClientId, b"data");
        let rotated = Keys::new(&"n".repeat(32), Some(&"o".repeat(32))).unwrap();
        assert!(rotated.verify(Purpose::ClientId, b"data", &tag));
        assert!(!rotated.verify(Purpose::AccessToken, b"data", &tag));
        let fresh = Keys::new(&"n".repeat(32), None).unwrap();
        assert!(!fresh.verify(Purpose::ClientId, b"data", &tag));
        assert!(!format!("{:?}", rotated.current).contains("nnnn"));
    }
}
