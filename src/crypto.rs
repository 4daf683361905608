//! Hashing and randomness shared by the OAuth server and the pairing (a leaf: it imports
//! nothing of the relay). Randomness comes in through [`Entropy`]: the shell draws it from the
//! platform, tests from a seed.

/// Where random bytes come from: the shell draws them from the platform, tests from a seed.
pub trait Entropy {
    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]);
}

/// `n` random bytes as base64url without padding.
pub fn random_token(entropy: &mut dyn Entropy, n: usize) -> String {
    let mut buf = vec![0u8; n];
    entropy.fill(&mut buf);
    base64url(&buf)
}

/// `bytes` as base64url without padding: every token, id, tag and digest the relay writes.
/// Not base64's `encode` (or `encode_string`), whose check of its own output
/// (`String::from_utf8(..).expect(..)`) links `FromUtf8Error`'s `Debug` and the byte-list and
/// `Utf8Error` `Debug`s under it.
#[must_use]
pub fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    let mut out = vec![0; bytes.len().div_ceil(3) * 4];
    let Ok(n) = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_slice(bytes, &mut out)
    else {
        unreachable!("four characters for every three bytes are room enough")
    };
    // The alphabet is ASCII: each byte is its character.
    out[..n].iter().map(|&b| char::from(b)).collect()
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

/// Whether `a` and `b` are the same text, compared in a time that does not depend on where they
/// differ (their lengths are no secret: a token's, a PKCE challenge's).
#[must_use]
pub fn same_bytes(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
pub(crate) mod testing {
    //! Test helpers: a seeded source of bytes for reproducible tests, a JSON round trip.
    use super::Entropy;

    /// Asserts that `value` reads back as written (the relay's own messages are read by hand,
    /// through `tabrelay_bundle::fields`, not by a derived `Deserialize`).
    pub fn round_trip<T>(value: &T)
    where
        T: tabrelay_bundle::fields::Encode
            + tabrelay_bundle::fields::FromValue
            + PartialEq
            + std::fmt::Debug,
    {
        let text = value.to_json();
        assert_eq!(&tabrelay_bundle::from_json::<T>(&text).unwrap(), value);
    }

    /// What `value` writes, read back as a JSON value.
    pub fn value_of(value: &dyn tabrelay_bundle::fields::Encode) -> serde_json::Value {
        serde_json::from_slice(&value.to_json()).unwrap()
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

#[cfg(test)]
mod tests {
    #[test]
    fn base64url_writes_what_base64_writes() {
        use base64::Engine as _;
        let bytes: Vec<u8> = (0..=255).collect();
        for n in [0, 1, 2, 3, 4, 5, 32, 256] {
            let want = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes[..n]);
            assert_eq!(super::base64url(&bytes[..n]), want, "{n} bytes");
        }
    }
}
