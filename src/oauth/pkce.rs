//! PKCE with S256 (RFC 7636): the only method the relay accepts.

use sha2::Digest as _;

/// The challenge of a verifier: base64url(SHA-256(verifier)) without padding.
#[must_use]
pub fn s256(verifier: &str) -> String {
    crate::crypto::base64url(&sha2::Sha256::digest(verifier.as_bytes()))
}

/// Whether a string has the form of a verifier (43 to 128 unreserved characters).
#[must_use]
pub fn is_verifier(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether a string has the form of an S256 challenge (43 base64url characters).
#[must_use]
pub fn is_s256_challenge(s: &str) -> bool {
    s.len() == 43 && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// Whether `verifier` proves `challenge`, comparing in constant time.
#[must_use]
pub fn verify(verifier: &str, challenge: &str) -> bool {
    if !is_verifier(verifier) {
        return false;
    }
    crate::crypto::same_bytes(&s256(verifier), challenge)
}
