//! The connect code's value: a code a person types (ten letters, its last three a keyed check),
//! the waiting page's link reference that stands for one, and a tab's naming of either.

use crate::crypto::Entropy;
use crate::keys::{Key, Keys, Purpose};
use crate::oauth::authorize::SealId;

// The code's form is the bundle's, so the tab's generated copy carries the same rule.
pub use tabrelay_bundle::code::{CODE_ALPHABET, CODE_LEN, LINK_LEN, LINK_NONCE_LEN};

/// Of a code's [`CODE_LEN`] letters, the random ones (35 bits: a live code is one of 2^35 a guesser cannot aim at);
/// the rest are the keyed check ([`CODE_CHECK_LEN`]).
pub const CODE_RANDOM_LEN: usize = 7;
/// The check letters at a code's end: an HMAC (relay key) of the random ones, so a made-up
/// code is refused before any Durable Object is addressed; 15 bits: one made-up code in
/// 32,768 passes the check (and then finds nothing stored).
pub const CODE_CHECK_LEN: usize = CODE_LEN - CODE_RANDOM_LEN;

/// A connect code, normalised (ten letters of [`CODE_ALPHABET`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectCode(String);

impl ConnectCode {
    /// A new random code, its check letters made with the current key.
    pub fn generate(entropy: &mut dyn Entropy, keys: &Keys) -> Self {
        let mut bytes = [0u8; CODE_RANDOM_LEN];
        entropy.fill(&mut bytes);
        Self::of_letters(&bytes, keys)
    }

    /// The code a sealed request makes on its `attempt`-th draw (0, then 1… when a code is
    /// taken by another request): its letters are a keyed hash of the seal, so posting one
    /// seal again addresses the same code's object, which answers that its code was made
    /// ([`super::Command::Create`]) instead of a new object being made for every post. Nobody
    /// without the relay's key can tell a seal's code from the seal.
    #[must_use]
    pub fn for_seal(keys: &Keys, seal: &SealId, attempt: u8) -> Self {
        let mut data = seal.0.as_bytes().to_vec();
        data.push(attempt);
        let drawn = keys.current.mac(Purpose::ConnectCodeDraw, &data);
        Self::of_letters(&drawn[..CODE_RANDOM_LEN], keys)
    }

    fn of_letters(bytes: &[u8], keys: &Keys) -> Self {
        let random = letters(bytes);
        let check = check_letters(&keys.current, &random);
        Self(random + &check)
    }

    /// Whether this relay issued the code: its check letters are those of its random ones
    /// under the current key or (during a rotation) the previous one.
    #[must_use]
    pub fn is_issued(&self, keys: &Keys) -> bool {
        let (random, check) = self.0.split_at(CODE_RANDOM_LEN);
        keys.first(|k| (check_letters(k, random) == check).then_some(())).is_some()
    }

    /// A code as a person typed it, read by the connect code's rule ([`tabrelay_bundle::code`]):
    /// any case, spaces and dashes ignored, O read as 0 and I, L as 1.
    #[must_use]
    pub fn parse(typed: &str) -> Option<Self> {
        tabrelay_bundle::code::normalise(typed).map(Self)
    }

    /// The normalised code, which names its Durable Object.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The code as shown to people: `ABCDE-FGHJK`.
    #[must_use]
    pub fn display(&self) -> String {
        let mut shown = self.0.clone();
        shown.insert(5, '-');
        shown
    }
}

/// What the waiting page's link carries instead of the code: a nonce and the code's letters,
/// each shifted (mod 32) by a stream keyed by the relay and the nonce. Only the relay can turn
/// it back into the code, so neither the app's script nor anyone who sees the link learns the
/// code from it, and a tab that sends one says it did not type the code: the relay approves
/// it only with the browser's confirmation ([`super::Stage::Confirming`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRef(String);

impl LinkRef {
    /// The link reference of `code`, masked with the current key and a random nonce.
    pub fn for_code(code: &ConnectCode, keys: &Keys, entropy: &mut dyn Entropy) -> Self {
        let mut bytes = [0u8; LINK_NONCE_LEN];
        entropy.fill(&mut bytes);
        let nonce = letters(&bytes);
        let masked = shift(&keys.current, &nonce, code.as_str(), true);
        Self(nonce + &masked)
    }

    /// A link reference as a tab sent it: [`LINK_LEN`] letters of [`CODE_ALPHABET`] (any case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        tabrelay_bundle::code::link(text).map(Self)
    }

    /// The code it stands for, when this relay made it (under the current or previous key).
    #[must_use]
    pub fn code(&self, keys: &Keys) -> Option<ConnectCode> {
        let (nonce, masked) = self.0.split_at(LINK_NONCE_LEN);
        keys.first(|k| {
            Some(ConnectCode(shift(k, nonce, masked, false))).filter(|c| c.is_issued(keys))
        })
    }

    /// The reference, as the link carries it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A code as a tab named it: the whole code typed, or the waiting page's link reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// Typed from the waiting page.
    Typed(ConnectCode),
    /// The reference the waiting page's link carried.
    Linked(LinkRef),
}

impl Named {
    /// What a tab sent, read: None when it is neither a code nor a link reference.
    #[must_use]
    pub fn read(said: &tabrelay_bundle::protocol::CodeSaid) -> Option<Self> {
        use tabrelay_bundle::protocol::CodeSaid;
        match said {
            CodeSaid::Code(typed) => ConnectCode::parse(typed).map(Self::Typed),
            CodeSaid::Link(link) => LinkRef::parse(link).map(Self::Linked),
        }
    }

    /// The code it stands for, when this relay made it.
    #[must_use]
    pub fn code(&self, keys: &Keys) -> Option<ConnectCode> {
        match self {
            Self::Typed(code) => code.is_issued(keys).then(|| code.clone()),
            Self::Linked(link) => link.code(keys),
        }
    }

    /// As the relay's answers to the tab echo it: the normalised code, or the reference.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Typed(code) => code.as_str(),
            Self::Linked(link) => link.as_str(),
        }
    }
}

/// The ticket a tab gets for a linked approval: the link's reference (so the confirm page
/// finds the code) and the approval's secret, never the code.
#[must_use]
pub fn ticket(link: &str, secret: &str) -> String {
    format!("{link}.{secret}")
}

/// A ticket read back: the code its link stands for (when this relay made it) and the secret.
#[must_use]
pub fn read_ticket(ticket: &str, keys: &Keys) -> Option<(ConnectCode, String)> {
    let (link, secret) = ticket.split_once('.')?;
    let code = LinkRef::parse(link)?.code(keys)?;
    (!secret.is_empty()).then(|| (code, secret.to_owned()))
}

/// `text` (letters of [`CODE_ALPHABET`]) shifted forward (to mask) or back (to unmask) by the
/// keyed stream of `nonce`.
fn shift(key: &Key, nonce: &str, text: &str, forward: bool) -> String {
    let stream = key.mac(Purpose::ConnectLink, nonce.as_bytes());
    let mut shifted = String::with_capacity(text.len());
    for (letter, s) in text.bytes().zip(stream) {
        let at = CODE_ALPHABET.iter().position(|&c| c == letter).unwrap_or(0);
        let by = usize::from(s & 31);
        let to = if forward { at + by } else { at + 32 - by };
        shifted.push(char::from(CODE_ALPHABET[to % 32]));
    }
    shifted
}

/// The check letters of a code's random part under `key`.
fn check_letters(key: &Key, random: &str) -> String {
    let mac = key.mac(Purpose::ConnectCode, random.as_bytes());
    letters(&mac[..CODE_CHECK_LEN])
}

/// Each byte as the letter of [`CODE_ALPHABET`] its low five bits number.
fn letters(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for b in bytes {
        out.push(char::from(CODE_ALPHABET[usize::from(b & 31)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::Counter;

    #[test]
    fn codes_are_typed_forgivingly_and_shown_grouped() {
        let c = ConnectCode::parse("abcde 1234o").unwrap();
        assert_eq!(c.as_str(), "ABCDE12340");
        assert_eq!(c.display(), "ABCDE-12340");
        assert_eq!(ConnectCode::parse("il").map(|c| c.0), None);
        assert_eq!(ConnectCode::parse("ABCDE-1234U"), None);
        assert_eq!(ConnectCode::parse("ABCDE-123456"), None);
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let g = ConnectCode::generate(&mut Counter(7), &keys);
        assert_eq!(ConnectCode::parse(&g.display()), Some(g));
    }

    #[test]
    fn a_code_carries_a_keyed_check_that_made_up_codes_fail() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let mut rng = Counter(11);
        let codes: Vec<ConnectCode> =
            (0..50).map(|_| ConnectCode::generate(&mut rng, &keys)).collect();
        assert!(codes.iter().all(|c| c.is_issued(&keys)));
        let rotated = Keys::new(&"n".repeat(32), Some(&"k".repeat(32))).unwrap();
        assert!(codes.iter().all(|c| c.is_issued(&rotated)), "the previous key still checks");
        let other = Keys::new(&"o".repeat(32), None).unwrap();
        assert!(codes.iter().filter(|c| c.is_issued(&other)).count() <= 1);
        // A made-up code: the random part of an issued one with other check letters.
        let real = codes[0].as_str();
        let mut made_up = 0;
        for c in CODE_ALPHABET.iter().map(|b| char::from(*b)) {
            let tail: String = core::iter::repeat_n(c, CODE_CHECK_LEN).collect();
            let code = ConnectCode::parse(&format!("{}{tail}", &real[..CODE_RANDOM_LEN])).unwrap();
            made_up += usize::from(code.as_str() != real && code.is_issued(&keys));
        }
        assert_eq!(made_up, 0);
        assert_eq!(ConnectCode::parse("ABCDE-12345").map(|c| c.is_issued(&keys)), Some(false));
    }

    #[test]
    fn a_link_reference_reads_back_as_its_code_only_with_the_relays_key() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let mut rng = Counter(5);
        let code = ConnectCode::generate(&mut rng, &keys);
        let link = LinkRef::for_code(&code, &keys, &mut rng);
        assert_eq!(link.as_str().len(), LINK_LEN);
        assert!(!link.as_str().contains(code.as_str()), "the link does not carry the code");
        assert_eq!(ConnectCode::parse(link.as_str()), None, "nor is it a code");
        let read = LinkRef::parse(&link.as_str().to_ascii_lowercase()).unwrap();
        assert_eq!(read.code(&keys), Some(code.clone()));
        let rotated = Keys::new(&"n".repeat(32), Some(&"k".repeat(32))).unwrap();
        assert_eq!(read.code(&rotated), Some(code.clone()), "the previous key still reads it");
        let other = Keys::new(&"o".repeat(32), None).unwrap();
        assert_ne!(read.code(&other), Some(code.clone()));
        let t = ticket(link.as_str(), "s3cret");
        assert_eq!(read_ticket(&t, &keys), Some((code.clone(), "s3cret".into())));
        assert!(!t.contains(code.as_str()), "a ticket does not carry the code");
        for bad in
            ["", ".", "s3cret", &format!("{}.", link.as_str()), &format!("{}.s", code.as_str())]
        {
            assert_eq!(read_ticket(bad, &keys), None, "{bad}");
        }
        let again = LinkRef::for_code(&code, &keys, &mut rng);
        assert_ne!(again, link, "each link of a code looks unrelated");
        assert_eq!(LinkRef::parse(code.as_str()), None);
        assert_eq!(LinkRef::parse(&format!("{}U", &link.as_str()[1..])), None);
        // A made-up reference reaches no code (its unmasked letters fail the check).
        let made_up = (0..64)
            .filter_map(|i| LinkRef::parse(&format!("{:0>18}", i)).and_then(|l| l.code(&keys)))
            .count();
        assert_eq!(made_up, 0);
    }

    #[test]
    fn a_seal_draws_the_same_code_each_time_and_others_draw_others() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let a = SealId("a".into());
        assert_eq!(ConnectCode::for_seal(&keys, &a, 0), ConnectCode::for_seal(&keys, &a, 0));
        assert_ne!(ConnectCode::for_seal(&keys, &a, 0), ConnectCode::for_seal(&keys, &a, 1));
        assert_ne!(
            ConnectCode::for_seal(&keys, &a, 0),
            ConnectCode::for_seal(&keys, &SealId("b".into()), 0)
        );
        let code = ConnectCode::for_seal(&keys, &a, 0);
        assert!(code.is_issued(&keys), "a drawn code carries its check letters");
        let other = Keys::new(&"m".repeat(32), None).unwrap();
        assert_ne!(code, ConnectCode::for_seal(&other, &a, 0), "only the key's holder can draw it");
    }
}
