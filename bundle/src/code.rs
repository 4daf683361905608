//! The connect code's form, one rule for the relay and the tab: its letters, its length, the
//! length of the waiting page's link reference, and how a code a person typed is read. The tab's
//! copy (`tab/generated/bundle.js`) carries these constants and builds its reader from them;
//! `data/code_examples.json` lists what both readers make of typed text.

use alloc::string::String;

/// The letters of a connect code: Crockford's base32, without I, L, O and U.
pub const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Letters in a code: 10 × 5 = 50 bits.
pub const CODE_LEN: usize = 10;
/// Letters of a link reference's nonce (40 bits: no two links of one key share a mask).
pub const LINK_NONCE_LEN: usize = 8;
/// Letters of a link reference: its nonce, then the code's letters masked.
pub const LINK_LEN: usize = LINK_NONCE_LEN + CODE_LEN;
/// What a typed code may carry between its letters, not read: spaces and dashes (`ABCDE-12345`).
pub const IGNORED: &[char] = &[' ', '-'];
/// Letters a person may type for the code's own (once upper-cased): O for 0, I and L for 1.
pub const FOLD: &[(char, char)] = &[('O', '0'), ('I', '1'), ('L', '1')];

/// A code as a person typed it, normalised: any case (ASCII letters only), [`IGNORED`] left
/// out, [`FOLD`] applied; None unless that leaves [`CODE_LEN`] letters of [`CODE_ALPHABET`].
#[must_use]
pub fn normalise(typed: &str) -> Option<String> {
    let mut out = String::with_capacity(CODE_LEN);
    for c in typed.chars() {
        let c = c.to_ascii_uppercase();
        if IGNORED.contains(&c) {
            continue;
        }
        let c = FOLD.iter().find(|(from, _)| *from == c).map_or(c, |&(_, to)| to);
        if !is_letter(c) || out.len() == CODE_LEN {
            return None;
        }
        out.push(c);
    }
    (out.len() == CODE_LEN).then_some(out)
}

/// A link reference as a tab sent it, upper-cased: None unless it is [`LINK_LEN`] letters of
/// [`CODE_ALPHABET`] in any case (nothing ignored or folded: a link is never typed).
#[must_use]
pub fn link(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let fits = upper.len() == LINK_LEN && upper.chars().all(is_letter);
    fits.then_some(upper)
}

/// Whether `c` is one of a code's letters.
fn is_letter(c: char) -> bool {
    c.is_ascii() && CODE_ALPHABET.contains(&(c as u8))
}

#[cfg(test)]
mod tests {
    extern crate std;

    use alloc::string::{String, ToString};
    use alloc::vec::Vec;
    use serde_json::Value;

    /// The examples both readers are held to (the tab's in tests/js/connect_code.test.mjs).
    fn examples(kind: &str) -> Vec<(String, Option<String>)> {
        let text = include_str!("../data/code_examples.json");
        let all: Value = serde_json::from_slice(text.as_bytes()).unwrap();
        let rows = all[kind].as_array().unwrap();
        rows.iter()
            .map(|row| (row[0].as_str().unwrap().to_string(), row[1].as_str().map(String::from)))
            .collect()
    }

    #[test]
    fn a_typed_code_reads_as_the_examples_say() {
        let codes = examples("codes");
        assert!(codes.len() >= 10);
        for (typed, normal) in codes {
            assert_eq!(super::normalise(&typed), normal, "{typed:?}");
        }
    }

    #[test]
    fn a_link_reference_reads_as_the_examples_say() {
        let links = examples("links");
        assert!(links.len() >= 5);
        for (sent, read) in links {
            assert_eq!(super::link(&sent), read, "{sent:?}");
        }
    }

    #[test]
    fn the_alphabet_has_no_letter_a_person_could_misread_and_folds_into_it() {
        for (from, to) in super::FOLD {
            assert!(!super::is_letter(*from) && super::is_letter(*to), "{from} → {to}");
        }
        assert!(super::IGNORED.iter().all(|c| !super::is_letter(*c)));
        assert_eq!(super::CODE_ALPHABET.len(), 32);
    }
}
