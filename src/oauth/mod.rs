//! The OAuth 2.1 authorization server: metadata, registration, authorization with the tab as
//! consent screen, and tokens. Every function here is pure: time and randomness come in.

pub mod authorize;
pub mod cimd;
pub mod clients;
pub mod connect;
pub mod error;
pub mod exchange;
pub mod keys;
pub mod lookalike;
pub mod metadata;
pub mod pkce;
pub mod token;

/// How long an access token lives, in seconds.
pub const ACCESS_TOKEN_TTL_S: u64 = 3600;
/// How long an authorization code may wait to be redeemed, in milliseconds.
pub const AUTH_CODE_TTL_MS: u64 = 60_000;
/// How long a connect code (and its waiting page) lives, in milliseconds.
pub const CONNECT_CODE_TTL_MS: u64 = 10 * 60_000;
/// How long a refresh token lives unused, in milliseconds (30 days).
pub const REFRESH_TOKEN_TTL_MS: u64 = 30 * 24 * 3600 * 1000;

/// Where random bytes come from: the shell draws them from the platform, tests from a seed.
pub trait Entropy {
    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]);
}

/// `n` random bytes as base64url without padding.
pub fn random_token(entropy: &mut dyn Entropy, n: usize) -> String {
    use base64::Engine as _;
    let mut buf = vec![0u8; n];
    entropy.fill(&mut buf);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf)
}

/// Lowercase hex of SHA-256 over `data`.
#[must_use]
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(data);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
pub(crate) mod testing {
    //! Test helpers: a seeded source of bytes for reproducible tests, a JSON round trip.
    use super::Entropy;

    /// Asserts that `value` reads back as written (the relay's own messages are read by hand,
    /// through `tabrelay_bundle::fields`, not by a derived `Deserialize`).
    pub fn round_trip<T>(value: &T)
    where
        T: serde::Serialize + tabrelay_bundle::fields::FromValue + PartialEq + std::fmt::Debug,
    {
        let text = serde_json::to_vec(value).unwrap();
        assert_eq!(&tabrelay_bundle::from_json::<T>(&text).unwrap(), value);
    }

    /// Counts up from a seed: reproducible, and different on every draw.
    pub struct Counter(pub u8);

    impl Entropy for Counter {
        fn fill(&mut self, buf: &mut [u8]) {
            for b in buf {
                *b = self.0;
                self.0 = self.0.wrapping_add(37);
            }
        }
    }
}
