//! The bundle's digest: a short fingerprint of the catalogue, the instructions and the protocol
//! version, so a tab built from another bundle is told to reload instead of misbehaving.

/// FNV-1a (64 bits) over `bytes`, continuing from `hash`.
const fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash
}

const fn digest() -> u64 {
    let h = fnv1a(0xcbf2_9ce4_8422_2325, crate::CATALOGUE_JSON.as_bytes());
    let h = fnv1a(h, &[0]);
    let h = fnv1a(h, crate::INSTRUCTIONS.as_bytes());
    fnv1a(h, &crate::protocol::PROTOCOL_VERSION.to_le_bytes())
}

const fn hex(value: u64) -> [u8; 16] {
    let digits = b"0123456789abcdef";
    let mut out = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        out[i] = digits[((value >> (60 - 4 * i)) & 15) as usize];
        i += 1;
    }
    out
}

const DIGEST_BYTES: [u8; 16] = hex(digest());

/// The bundle digest as 16 lowercase hex digits.
pub const BUNDLE_DIGEST: &str = match core::str::from_utf8(&DIGEST_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("hex digits are UTF-8"),
};

#[cfg(test)]
mod tests {
    #[test]
    fn the_digest_is_sixteen_hex_digits_and_follows_its_inputs() {
        assert_eq!(super::BUNDLE_DIGEST.len(), 16);
        assert!(super::BUNDLE_DIGEST.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(super::fnv1a(1, b"a"), super::fnv1a(1, b"b"));
    }
}
