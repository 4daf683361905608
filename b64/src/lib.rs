//! Base64 as the relay uses it: `engine::general_purpose::URL_SAFE_NO_PAD` (tokens, tags, ids)
//! and `engine::general_purpose::STANDARD` (`=?base64?…?=` header values), through the
//! [`Engine`] trait, as in the `base64` crate 0.22. Decoding is as strict as the crate's: the
//! URL-safe engine refuses padding, the standard one requires canonical padding, and both
//! refuse a last symbol with bits left over and any byte outside their alphabet.
#![no_std]
extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

/// Why a text is not base64 of the engine's kind (the relay only ever asks whether it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError;

/// One alphabet with its padding rule.
#[derive(Debug, Clone, Copy)]
pub struct GeneralPurpose {
    /// The 64 symbols, in order.
    alphabet: &'static [u8; 64],
    /// Whether encoding pads to a multiple of 4 (and decoding requires it).
    padding: bool,
}

/// Encoding and decoding, as the `base64` crate's trait names them.
pub trait Engine {
    /// `input` in base64.
    fn encode<T: AsRef<[u8]>>(&self, input: T) -> String;
    /// The bytes `input` encodes, or an error if it is not exactly this engine's base64.
    ///
    /// # Errors
    /// [`DecodeError`] for a byte outside the alphabet, padding where there should be none (or
    /// none where there should be), a length no encoding has, or a last symbol whose unused
    /// bits are not zero.
    fn decode<T: AsRef<[u8]>>(&self, input: T) -> Result<Vec<u8>, DecodeError>;
}

/// The engines, at the `base64` crate's paths.
pub mod engine {
    pub use super::{Engine, GeneralPurpose};

    /// The engines the relay uses.
    pub mod general_purpose {
        use super::GeneralPurpose;

        /// `A–Z a–z 0–9 + /`, padded with `=`.
        pub const STANDARD: GeneralPurpose =
            GeneralPurpose { alphabet: super::super::STANDARD_ALPHABET, padding: true };
        /// `A–Z a–z 0–9 - _`, no padding.
        pub const URL_SAFE_NO_PAD: GeneralPurpose =
            GeneralPurpose { alphabet: super::super::URL_SAFE_ALPHABET, padding: false };
    }
}

const STANDARD_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

impl GeneralPurpose {
    /// The value of `symbol` in this alphabet.
    fn value(&self, symbol: u8) -> Result<u32, DecodeError> {
        let at = self.alphabet.iter().position(|&s| s == symbol).ok_or(DecodeError)?;
        u32::try_from(at).map_err(|_| DecodeError)
    }
}

impl Engine for GeneralPurpose {
    fn encode<T: AsRef<[u8]>>(&self, input: T) -> String {
        let input = input.as_ref();
        let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
        for chunk in input.chunks(3) {
            let mut n = 0u32;
            for (i, &b) in chunk.iter().enumerate() {
                n |= u32::from(b) << (16 - 8 * i);
            }
            // 2, 3 or 4 symbols for 1, 2 or 3 bytes.
            for i in 0..=chunk.len() {
                out.push(char::from(self.alphabet[(n >> (18 - 6 * i)) as usize & 63]));
            }
            if self.padding {
                for _ in chunk.len()..3 {
                    out.push('=');
                }
            }
        }
        out
    }

    fn decode<T: AsRef<[u8]>>(&self, input: T) -> Result<Vec<u8>, DecodeError> {
        let mut input = input.as_ref();
        if self.padding {
            if input.len() % 4 != 0 {
                return Err(DecodeError);
            }
            // At most two `=`, at the end (the length then makes them the right number).
            for _ in 0..2 {
                input = input.strip_suffix(b"=").unwrap_or(input);
            }
        }
        if input.len() % 4 == 1 {
            return Err(DecodeError);
        }
        let mut out = Vec::with_capacity(input.len() / 4 * 3 + 2);
        for chunk in input.chunks(4) {
            let mut n = 0u32;
            for (i, &symbol) in chunk.iter().enumerate() {
                n |= self.value(symbol)? << (18 - 6 * i);
            }
            // 4, 3 or 2 symbols carry 3, 2 or 1 bytes; the bits after those must be zero.
            let bytes = chunk.len() - 1;
            if n & (0x00ff_ffff >> (8 * bytes)) != 0 {
                return Err(DecodeError);
            }
            out.extend_from_slice(&n.to_be_bytes()[1..=bytes]);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use super::Engine as _;
    use alloc::vec::Vec;
    use base64::Engine as _;

    /// Every text of up to `len` symbols drawn from `symbols`.
    fn texts(symbols: &[u8], len: usize) -> Vec<Vec<u8>> {
        let mut all = alloc::vec![Vec::new()];
        let mut last = alloc::vec![Vec::new()];
        for _ in 0..len {
            last = last
                .iter()
                .flat_map(|t: &Vec<u8>| {
                    symbols.iter().map(move |&s| {
                        let mut t = t.clone();
                        t.push(s);
                        t
                    })
                })
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn decodes_as_the_crate_does_every_short_text() {
        // Symbols of both alphabets at both ends of a value, with and without unused bits set,
        // padding, and bytes of neither alphabet.
        let symbols = b"AQgw/+_-=Z9 .\n\xc3";
        for text in texts(symbols, 5) {
            let ours = (URL_SAFE_NO_PAD.decode(&text).ok(), STANDARD.decode(&text).ok());
            let crate_ = (
                base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&text).ok(),
                base64::engine::general_purpose::STANDARD.decode(&text).ok(),
            );
            assert_eq!(ours, crate_, "{:?}", alloc::string::String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn decodes_as_the_crate_does_longer_texts() {
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            seed >> 16
        };
        for _ in 0..20_000 {
            let bytes: Vec<u8> = (0..next() % 40).map(|_| next() as u8).collect();
            for text in [
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes),
                base64::engine::general_purpose::STANDARD.encode(&bytes),
            ] {
                let mut text = text.into_bytes();
                // Sometimes one symbol changed to one of either alphabet, or to padding.
                if !text.is_empty() && next() % 2 == 0 {
                    let at = next() as usize % text.len();
                    text[at] = b"AB+/-_=z"[next() as usize % 8];
                }
                assert_eq!(
                    URL_SAFE_NO_PAD.decode(&text).ok(),
                    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&text).ok()
                );
                assert_eq!(
                    STANDARD.decode(&text).ok(),
                    base64::engine::general_purpose::STANDARD.decode(&text).ok()
                );
            }
        }
    }

    #[test]
    fn encodes_as_the_crate_does() {
        for len in 0..70u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(97).wrapping_add(len)).collect();
            assert_eq!(
                URL_SAFE_NO_PAD.encode(&bytes),
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes)
            );
            assert_eq!(
                STANDARD.encode(&bytes),
                base64::engine::general_purpose::STANDARD.encode(&bytes)
            );
        }
    }
}
