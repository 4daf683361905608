//! How a client's name could fool a person, so the consent can warn: a name like a well-known
//! agent app's that nobody verified, a verified client whose name (or domain) claims another
//! app's, letters of several alphabets in one word, or no Latin letters at all.
//!
//! Names are compared after folding what a person reads as the same, in two steps.
//!
//! 1. A compatibility fold: what Unicode's NFKC writes as plain letters and digits, for the
//!    ranges look-alike names are made of: full-width forms (U+FF01–FF5E), Mathematical
//!    Alphanumeric Symbols (U+1D400–1D7FF: bold, italic, script, Fraktur, double-struck,
//!    sans-serif and monospace letters, digits and Greek), letter-like symbols (ℂ, ℋ, ℓ, …),
//!    Roman numerals, enclosed and parenthesised letters and digits (Ⓐ, ⒜, ①, 🄰), superscripts
//!    and subscripts and modifier letters (ᴬ, ᵃ, ⁱ, ₐ), and ligatures (ﬁ, ĳ, œ). To those it adds
//!    what NFKC keeps but a reader does not tell apart: letters with marks (é, ḷ, ạ: Latin-1,
//!    Latin Extended-A and Latin Extended Additional) and combining marks, small capitals (ᴄ, ʟ),
//!    negative circled and squared letters and regional indicators (🅲, 🆂, 🇨).
//! 2. Look-alikes: case, spaces and punctuation, digits and letters that look alike (0/o,
//!    1/l/i, 3/e, 5/s, …), and the Cyrillic and Greek letters that look like Latin ones.
//!
//! Hand-written rather than the `unicode-normalization` crate: the crate's NFKC tables cost the
//! Worker's wasm far more than these few ranges (figures in the commit that added this), and
//! NFKC alone misses half of the disguises above (marks, small capitals, negative letters).
//!
//! A name resembles a well-known app when its fold contains that app's, or a part of it differs
//! from one of six letters or more by a single letter (a typo on purpose). Scripts are told
//! apart by Unicode block (Latin, Greek, Cyrillic, any other alphabet; digits, punctuation,
//! symbols and mathematical letters belong to none), enough to see one word written in two.

/// An agent app people connect: the names people know it by (each compared folded) and the
/// domains its maker publishes from (a verified client of one of those, or a name under one,
/// is that app). Each list is one text, its entries separated by `|` (a list of strings costs
/// the Worker eight bytes of pointers an entry).
pub struct App {
    /// Its names.
    pub names: &'static str,
    /// Its maker's domains.
    pub domains: &'static str,
}

/// The agent apps people connect, as people know them.
pub const WELL_KNOWN: &[App] = &[
    App {
        names: "Claude|Claude Code|Claude Desktop|Anthropic",
        domains: "claude.ai|claude.com|anthropic.com",
    },
    App { names: "ChatGPT|OpenAI|Codex", domains: "chatgpt.com|openai.com" },
    App { names: "Cursor", domains: "cursor.com|cursor.sh" },
    // Of visualstudio.com only the VS Code site: the other names under it are Azure DevOps
    // organisations' (`ORG.visualstudio.com`), which anyone makes and publishes files from.
    App {
        names: "VS Code|Visual Studio Code|Copilot|GitHub Copilot|Microsoft",
        domains: "vscode.dev|code.visualstudio.com|microsoft.com|github.com",
    },
    App { names: "Gemini|Google", domains: "google.com|googleapis.com" },
    App { names: "Windsurf|Codeium", domains: "windsurf.com|codeium.com" },
    App { names: "MCP Inspector", domains: "modelcontextprotocol.io" },
    App { names: "Perplexity", domains: "perplexity.ai" },
    App { names: "Mistral", domains: "mistral.ai" },
    App { names: "JetBrains", domains: "jetbrains.com" },
];

/// Names at least this long (folded) also match a part one letter away: shorter ones would
/// match ordinary words.
const FUZZY_FROM: usize = 6;

/// What about a client's name should make the person look twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameWarning {
    /// Nobody verified the name, and it looks like this well-known app's.
    LooksLike(&'static str),
    /// The client is verified, but its name or its domain claims this well-known app, and the
    /// domain is not that app's.
    Claims(&'static str),
    /// A word of the name is written in letters of two alphabets (Latin and Cyrillic, say).
    MixedScripts,
    /// Nobody verified the name and it has no Latin letter, so it cannot be compared with the
    /// well-known names (a well-known name in another alphabet reads the same to its readers).
    NotLatin,
}

impl NameWarning {
    /// The kind, as the tab reads it ([`tabrelay_bundle::protocol::consent::warning`]).
    #[must_use]
    pub fn kind(self) -> &'static str {
        use tabrelay_bundle::protocol::consent::warning;
        match self {
            Self::LooksLike(_) => warning::LOOKS_LIKE,
            Self::Claims(_) => warning::CLAIMS,
            Self::MixedScripts => warning::MIXED_SCRIPTS,
            Self::NotLatin => warning::NOT_LATIN,
        }
    }

    /// The well-known app the name looks like or claims, if the warning names one.
    #[must_use]
    pub fn app(self) -> Option<&'static str> {
        match self {
            Self::LooksLike(app) | Self::Claims(app) => Some(app),
            Self::MixedScripts | Self::NotLatin => None,
        }
    }
}

/// What to warn about a client's `name`, given the domain that verified it, if any.
///
/// An unverified name is warned about when it looks like a well-known app's, mixes alphabets
/// in a word, or has no Latin letter. A verified client is warned about when its name or its
/// domain looks like a well-known app's and the domain is none of that app's (a verified
/// claude.ai called "Claude" is fine; a verified example.com called "Claude" is not), or when
/// its name mixes alphabets in a word.
#[must_use]
pub fn judge(name: &str, verified: Option<&str>) -> Option<NameWarning> {
    match verified {
        None => {
            if let Some(app) = resembles(name) {
                return Some(NameWarning::LooksLike(app));
            }
        }
        Some(domain) => {
            // The name, then the domain itself: each may claim apps, and is fine when one of
            // those it claims is the domain's.
            let claimed = claim(&fold(name), domain).or_else(|| claim(&fold(domain), domain));
            if let Some(app) = claimed {
                return Some(NameWarning::Claims(app));
            }
        }
    }
    let letters = Letters::of(name);
    if letters.mixed {
        Some(NameWarning::MixedScripts)
    } else if verified.is_none() && letters.any && !letters.latin {
        Some(NameWarning::NotLatin)
    } else {
        None
    }
}

/// The well-known app an unverified `name` looks like, if any (the first in [`WELL_KNOWN`]).
#[must_use]
pub fn resembles(name: &str) -> Option<&'static str> {
    claim(&fold(name), "")
}

/// The first well-known name `folded` (a name folded) matches; None when it matches none, or
/// when one of the apps it matches is `domain`'s (a client verified as that app's domain may
/// use its names; `""` is no one's).
fn claim(folded: &str, domain: &str) -> Option<&'static str> {
    let mut first = None;
    for app in WELL_KNOWN {
        if let Some(name) = app.names.split('|').find(|n| matches(folded, n)) {
            if owns(app, domain) {
                return None;
            }
            first = first.or(Some(name));
        }
    }
    first
}

/// Whether `folded` (a name folded) contains `known` folded, or a part one letter away.
fn matches(folded: &str, known: &str) -> bool {
    let k = fold(known);
    !folded.is_empty()
        && (crate::text::find(folded, &k).is_some()
            || (k.len() >= FUZZY_FROM && within_one_edit_of_a_part(folded, &k)))
}

/// Whether `domain` is one of `app`'s or a name under one.
fn owns(app: &App, domain: &str) -> bool {
    super::hosts::is_under_any(domain, app.domains.split('|'))
}

/// `name` as a person reads it: lower case letters only, look-alikes folded to one letter.
#[must_use]
pub fn fold(name: &str) -> String {
    let mut plain = String::with_capacity(name.len());
    for c in name.chars() {
        compat(c, &mut plain);
    }
    let mut out = String::with_capacity(plain.len());
    for c in plain.chars() {
        if let Some(c) = look_alike(c) {
            out.push(c);
        }
    }
    // "rn" reads as "m", "vv" as "w".
    crate::text::replace(&crate::text::replace(&out, "rn", "m"), "vv", "w")
}

/// Base letters of U+00C0–00FF (`?`: not a letter, or written by [`compat`] as two).
const LATIN_1: &[u8; 64] = b"aaaaaa?ceeeeiiiidnooooo?ouuuuy??aaaaaa?ceeeeiiiidnooooo?ouuuuy?y";
/// Base letters of U+0100–017F (`?`: ĳ and œ, written as two).
const LATIN_EXT_A: &[u8; 128] = b"aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiii??jjkkkllllllllllnnnnnnnnnoooooo??rrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
/// Base letters of U+0180–024F (`?`: none; a letter with a stroke or hook reads as the letter).
const LATIN_EXT_B: &[u8; 208] = b"bbbb???cc?ddd????ffg???ikkl??nnooo??pp?????ttttuu?vyyzz??????????????d??l??n?aaiioouuuuuuuuuu?aaaa??ggggkkoooo??j?d?gg??nnaa??ooaaaaeeeeiiiioooorrrruuuusstt??hhnd??zzaaeeooooooooyylnt???accltsz??b??eejj?qrryy";
/// Base letters of U+1E00–1E95, one for each upper and lower case pair.
const LATIN_EXT_ADDITIONAL: &[u8; 75] =
    b"abbbcdddddeeeeefghhhhhiikkkllllmmmnnnnoooopprrrrsssssttttuuuuuvvwwwwwxxyzzz";
/// Base letters of U+1EA0–1EF9 (Vietnamese), one for each pair.
const VIETNAMESE: &[u8; 45] = b"aaaaaaaaaaaaeeeeeeeeiioooooooooooouuuuuuuyyyy";
/// What U+1D2C–1D6A (modifier letters: ᴬ, ᵃ, ᵢ, …) read as (`?`: nothing Latin).
const MODIFIERS: &[u8; 63] = b"a?b?de?ghijklmn?o?prtuwa?a?bde???g?km?o???ptu??v?by??xiruvbyp?x";
/// Roman numerals U+2160–216F (and their small forms U+2170–217F).
const ROMAN: [&str; 16] =
    ["i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "l", "c", "d", "m"];
/// Mathematical Greek, U+1D6A8–1D7C9: five alphabets of these 58.
const MATH_GREEK: &str = "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡϴΣΤΥΦΧΨΩ∇αβγδεζηθικλμνξοπρςστυφχψω∂εθκφρπ";

/// Writes `c` as the compatibility fold does (see the module's doc): lower-case ASCII for
/// what reads as Latin letters and digits, nothing for marks, `c` itself for the rest.
fn compat(c: char, out: &mut String) {
    let cp = u32::from(c);
    let from = |table: &[u8], i: u32| table.get(i as usize).copied().filter(|b| *b != b'?');
    let letter = |i: u32| Some(b'a' + (i % 26) as u8);
    let digit = |i: u32| Some(b'0' + (i % 10) as u8);
    let byte = match cp {
        0..=0x7F => Some(c.to_ascii_lowercase() as u8),
        0xAA => Some(b'a'),
        0xBA => Some(b'o'),
        0xB2 => Some(b'2'),
        0xB3 => Some(b'3'),
        0xB9 => Some(b'1'),
        0xC6 | 0xE6 => return out.push_str("ae"),
        0xDF => return out.push_str("ss"),
        0x132 | 0x133 => return out.push_str("ij"),
        0x152 | 0x153 => return out.push_str("oe"),
        0x1C4..=0x1C6 => return out.push_str("dz"),
        0x1C7..=0x1C9 => return out.push_str("lj"),
        0x1CA..=0x1CC => return out.push_str("nj"),
        0x1F1..=0x1F3 => return out.push_str("dz"),
        0xC0..=0xFF => from(LATIN_1, cp - 0xC0),
        0x100..=0x17F => from(LATIN_EXT_A, cp - 0x100),
        0x180..=0x24F => from(LATIN_EXT_B, cp - 0x180),
        // Combining marks: a letter with marks reads as the letter.
        0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F => {
            return
        }
        // Small capitals.
        0x1D00 => Some(b'a'),
        0x299 => Some(b'b'),
        0x1D04 => Some(b'c'),
        0x1D05 => Some(b'd'),
        0x1D07 => Some(b'e'),
        0xA730 => Some(b'f'),
        0x262 => Some(b'g'),
        0x29C => Some(b'h'),
        0x26A => Some(b'i'),
        0x1D0A => Some(b'j'),
        0x1D0B => Some(b'k'),
        0x29F => Some(b'l'),
        0x1D0D => Some(b'm'),
        0x274 => Some(b'n'),
        0x1D0F => Some(b'o'),
        0x1D18 => Some(b'p'),
        0x280 => Some(b'r'),
        0xA731 => Some(b's'),
        0x1D1B => Some(b't'),
        0x1D1C => Some(b'u'),
        0x1D20 => Some(b'v'),
        0x1D21 => Some(b'w'),
        0x28F => Some(b'y'),
        0x1D22 => Some(b'z'),
        // Modifier letters and superscripts, subscripts.
        0x2B0 => Some(b'h'),
        0x2B2 => Some(b'j'),
        0x2B3 => Some(b'r'),
        0x2B7 => Some(b'w'),
        0x2B8 => Some(b'y'),
        0x2E1 => Some(b'l'),
        0x2E2 => Some(b's'),
        0x2E3 => Some(b'x'),
        0x1D2C..=0x1D6A => from(MODIFIERS, cp - 0x1D2C),
        0x1D9C => Some(b'c'),
        0x1DA0 => Some(b'f'),
        0x1DBB => Some(b'z'),
        0x2070 => Some(b'0'),
        0x2071 => Some(b'i'),
        0x2074..=0x2079 => digit(cp - 0x2070),
        0x207F => Some(b'n'),
        0x2080..=0x2089 => digit(cp - 0x2080),
        0x2090 => Some(b'a'),
        0x2091 => Some(b'e'),
        0x2092 => Some(b'o'),
        0x2093 => Some(b'x'),
        0x2095 => Some(b'h'),
        0x2096 => Some(b'k'),
        0x2097 => Some(b'l'),
        0x2098 => Some(b'm'),
        0x2099 => Some(b'n'),
        0x209A => Some(b'p'),
        0x209B => Some(b's'),
        0x209C => Some(b't'),
        // Latin Extended Additional: letters with dots, rings, hooks below and above.
        0x1E00..=0x1E95 => from(LATIN_EXT_ADDITIONAL, (cp - 0x1E00) / 2),
        0x1E96 => Some(b'h'),
        0x1E97 => Some(b't'),
        0x1E98 => Some(b'w'),
        0x1E99 => Some(b'y'),
        0x1E9B => Some(b's'),
        0x1E9E => return out.push_str("ss"),
        0x1EA0..=0x1EF9 => from(VIETNAMESE, (cp - 0x1EA0) / 2),
        // Letter-like symbols.
        0x2102 | 0x212D => Some(b'c'),
        0x210A => Some(b'g'),
        0x210B..=0x210E => Some(b'h'),
        0x2110 | 0x2111 | 0x2139 | 0x2148 => Some(b'i'),
        0x2112 | 0x2113 => Some(b'l'),
        0x2115 => Some(b'n'),
        0x2119 => Some(b'p'),
        0x211A => Some(b'q'),
        0x211B..=0x211D => Some(b'r'),
        0x2124 | 0x2128 => Some(b'z'),
        0x212A => Some(b'k'),
        0x212B => Some(b'a'),
        0x212C => Some(b'b'),
        0x212F | 0x2130 | 0x2147 => Some(b'e'),
        0x2131 => Some(b'f'),
        0x2133 => Some(b'm'),
        0x2134 => Some(b'o'),
        0x2145 | 0x2146 => Some(b'd'),
        0x2149 => Some(b'j'),
        0x2116 => return out.push_str("no"),
        0x2120 => return out.push_str("sm"),
        0x2121 => return out.push_str("tel"),
        0x2122 => return out.push_str("tm"),
        0x213B => return out.push_str("fax"),
        0x2160..=0x217F => return out.push_str(ROMAN[(cp % 16) as usize]),
        // Enclosed alphanumerics: ①–⑨, ⑴–⑼, ⒈–⒐, ⒜–⒵, Ⓐ–Ⓩ, ⓐ–ⓩ, ⓪.
        0x2460..=0x2468 => digit(cp - 0x2460 + 1),
        0x2469..=0x2473 => {
            let n = cp - 0x2460 + 1; // ⑩–⑳
            out.push(char::from(b'0' + (n / 10) as u8));
            Some(b'0' + (n % 10) as u8)
        }
        0x2474..=0x247C => digit(cp - 0x2474 + 1),
        0x2488..=0x2490 => digit(cp - 0x2488 + 1),
        0x249C..=0x24B5 => letter(cp - 0x249C),
        0x24B6..=0x24CF => letter(cp - 0x24B6),
        0x24D0..=0x24E9 => letter(cp - 0x24D0),
        0x24EA => Some(b'0'),
        // Ligatures.
        0xFB00 => return out.push_str("ff"),
        0xFB01 => return out.push_str("fi"),
        0xFB02 => return out.push_str("fl"),
        0xFB03 => return out.push_str("ffi"),
        0xFB04 => return out.push_str("ffl"),
        0xFB05 | 0xFB06 => return out.push_str("st"),
        // Full-width ASCII.
        0xFF01..=0xFF5E => Some((cp - 0xFEE0) as u8).map(|b| b.to_ascii_lowercase()),
        // Mathematical letters: thirteen alphabets of A–Z then a–z, and dotless ı, ȷ.
        0x1D400..=0x1D6A3 => letter((cp - 0x1D400) % 52),
        0x1D6A4 => Some(b'i'),
        0x1D6A5 => Some(b'j'),
        0x1D6A8..=0x1D7C9 => {
            let greek = MATH_GREEK.chars().nth(((cp - 0x1D6A8) % 58) as usize);
            return out.extend(greek);
        }
        0x1D7CE..=0x1D7FF => digit(cp - 0x1D7CE),
        // Parenthesised, circled, squared, negative circled and squared letters, regional
        // indicators.
        0x1F110..=0x1F129 => letter(cp - 0x1F110),
        0x1F12B => Some(b'c'),
        0x1F12C => Some(b'r'),
        0x1F12D => return out.push_str("cd"),
        0x1F12E => return out.push_str("wz"),
        0x1F130..=0x1F149 => letter(cp - 0x1F130),
        0x1F14A => return out.push_str("hv"),
        0x1F14B => return out.push_str("mv"),
        0x1F14C => return out.push_str("sd"),
        0x1F14D => return out.push_str("ss"),
        0x1F14E => return out.push_str("ppv"),
        0x1F14F => return out.push_str("wc"),
        0x1F16A => return out.push_str("mc"),
        0x1F16B => return out.push_str("md"),
        0x1F16C => return out.push_str("mr"),
        0x1F190 => return out.push_str("dj"),
        0x1F150..=0x1F169 => letter(cp - 0x1F150),
        0x1F170..=0x1F189 => letter(cp - 0x1F170),
        0x1F1E6..=0x1F1FF => letter(cp - 0x1F1E6),
        _ => return out.push(c),
    };
    if let Some(b) = byte {
        out.push(char::from(b));
    }
}

/// The Latin letter `c` (lower-case ASCII, or a Cyrillic or Greek letter) reads as; None for
/// spaces, punctuation and anything with no Latin look-alike.
fn look_alike(c: char) -> Option<char> {
    // ASCII case was folded by [`compat`]; the upper case look-alikes are listed here: Unicode's
    // lower-case tables would cost the wasm KiBs.
    Some(match c {
        'О' | 'Ο' | 'Ө' => 'o',
        'І' | 'Ι' | 'Ӏ' | 'Ї' => 'l',
        'Е' | 'Ε' | 'Ё' => 'e',
        'А' | 'Α' => 'a',
        'Ѕ' => 's',
        'В' | 'Β' => 'b',
        'Т' | 'Τ' => 't',
        'С' | 'Ϲ' => 'c',
        'Р' | 'Ρ' => 'p',
        'Х' | 'Χ' => 'x',
        'У' | 'Υ' | 'Ү' => 'y',
        'К' | 'Κ' => 'k',
        'М' | 'Μ' => 'm',
        'Н' | 'Η' => 'h',
        'Ν' => 'n',
        'Ζ' => 'z',
        'Ј' | 'ј' | 'ϳ' => 'j',
        'Ԛ' | 'ԛ' => 'q',
        'Ԝ' | 'ԝ' => 'w',
        '0' | 'ο' | 'о' | 'ө' | '°' | 'օ' => 'o',
        '1' | 'i' | 'l' | '|' | '!' | 'ı' | 'і' | 'ї' | 'ӏ' | 'ι' | 'ǀ' => 'l',
        '3' | 'е' | 'ё' | 'ε' => 'e',
        '4' | '@' | 'а' | 'α' => 'a',
        '5' | '$' | 'ѕ' => 's',
        '6' | 'б' => 'b',
        '7' | 'т' | 'τ' => 't',
        '8' | 'в' | 'β' => 'b',
        '9' => 'g',
        'с' | 'ς' | 'ϲ' => 'c',
        'р' | 'ρ' => 'p',
        'х' | 'χ' => 'x',
        'у' | 'γ' | 'ү' => 'y',
        'к' | 'κ' => 'k',
        'м' => 'm',
        'н' | 'η' | 'һ' | 'հ' => 'n',
        'ν' | 'ѵ' => 'v',
        'ԁ' => 'd',
        'ԍ' | 'ɡ' => 'g',
        'ѡ' | 'ω' | 'ш' => 'w',
        'υ' | 'ս' => 'u',
        c if c.is_ascii_lowercase() => c,
        _ => return None, // spaces, punctuation, anything else
    })
}

/// Whether some part of `name` is at most one letter's edit from `known`.
fn within_one_edit_of_a_part(name: &str, known: &str) -> bool {
    let name = name.as_bytes();
    let k = known.len();
    for width in k.saturating_sub(1).max(1)..=(k + 1).min(name.len()) {
        for part in name.windows(width) {
            if one_edit(part, known.as_bytes()) {
                return true;
            }
        }
    }
    false
}

/// Whether `a` becomes `b` by at most one insertion, deletion or substitution.
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let mut prefix = 0;
    while prefix < short.len() && short[prefix] == long[prefix] {
        prefix += 1;
    }
    // Past the common start: the rest equal once one letter is changed (same length) or
    // dropped from the longer.
    let (short, long) = (&short[prefix..], &long[prefix..]);
    if short.len() == long.len() {
        short.get(1..) == long.get(1..)
    } else {
        *short == long[1..]
    }
}

/// An alphabet, as far as telling one word's letters apart needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Greek,
    Cyrillic,
    /// Any other alphabet or syllabary (Armenian, Cherokee, Arabic, CJK, …).
    Other,
}

/// The alphabet of `c`, by its Unicode block; None for what every alphabet shares (digits,
/// punctuation, symbols, marks, mathematical and enclosed letters).
fn script(c: char) -> Option<Script> {
    Some(match u32::from(c) {
        0x41..=0x5A | 0x61..=0x7A | 0xAA | 0xBA => Script::Latin,
        0..=0xBF | 0xD7 | 0xF7 => return None,
        0xC0..=0x2AF | 0x1D00..=0x1DBF | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F => Script::Latin,
        0xA720..=0xA7FF | 0xAB30..=0xAB6F | 0xFB00..=0xFB06 => Script::Latin,
        0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Script::Latin,
        0x2B0..=0x36F => return None, // modifier symbols, combining marks
        0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
        0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        // Punctuation, letter-like and other symbols, enclosed letters, CJK punctuation, forms
        // and selectors, full-width punctuation, specials, mathematical letters, emoji, tags.
        0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x2000..=0x2BFF | 0x2E00..=0x2E7F => return None,
        0x3000..=0x303F | 0xFE00..=0xFE6F | 0xFF00..=0xFF65 | 0xFFF0..=0xFFFF => return None,
        0x1D400..=0x1D7FF | 0x1F000..=0x1FAFF | 0xE0000..=0xE0FFF => return None,
        _ => Script::Other,
    })
}

/// What alphabets a name's letters are written in.
struct Letters {
    /// It has a letter of some alphabet.
    any: bool,
    /// One of its letters reads as a Latin letter as written (with its compatibility fold:
    /// full-width and mathematical letters count).
    latin: bool,
    /// A word (between spaces) holds letters of two alphabets.
    mixed: bool,
}

impl Letters {
    fn of(name: &str) -> Self {
        let mut letters = Self { any: false, latin: false, mixed: false };
        for word in name.split(char::is_whitespace) {
            let mut seen: Option<Script> = None;
            for c in word.chars() {
                let mut plain = String::new();
                compat(c, &mut plain);
                letters.latin |= plain.bytes().any(|b| b.is_ascii_alphabetic());
                let Some(s) = script(c) else { continue };
                letters.any = true;
                match seen {
                    Some(before) if before != s => letters.mixed = true,
                    _ => seen = Some(s),
                }
            }
        }
        letters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_names_and_their_disguises_are_caught() {
        for (name, like) in [
            ("Claude Code", "Claude"),
            ("claude-code", "Claude"),
            ("CLAUDE", "Claude"),
            ("C1aude", "Claude"),
            ("CIaude Desktop", "Claude"),
            ("Сlaude", "Claude"), // a Cyrillic С
            ("Claud Code", "Claude"),
            ("Chat GPT", "ChatGPT"),
            ("ChatGPT Connector", "ChatGPT"),
            ("0penAI", "OpenAI"),
            ("Cursor", "Cursor"),
            ("Curs0r IDE", "Cursor"),
            ("VS-Code", "VS Code"),
            ("Visual Studio Code", "Visual Studio Code"),
            ("GitHub Copilot", "Copilot"),
            ("Gemini CLI", "Gemini"),
            ("Windsurf", "Windsurf"),
            ("MCP Inspector", "MCP Inspector"),
            ("Anthropic helper", "Anthropic"),
            ("Anthrop1c", "Anthropic"),
        ] {
            assert_eq!(resembles(name), Some(like), "{name}");
        }
    }

    #[test]
    fn full_width_mathematical_enclosed_and_marked_letters_fold_to_plain_ones() {
        for name in [
            "Ｃｌａｕｄｅ",         // full-width
            "𝐂𝐥𝐚𝐮𝐝𝐞",               // mathematical bold
            "𝒞𝓁𝒶𝓊𝒹ℯ",               // mathematical script, with ℯ from the letter-like block
            "𝕮𝖑𝖆𝖚𝖉𝖊",               // bold Fraktur
            "𝙲𝚕𝚊𝚞𝚍𝚎",               // monospace
            "Ⓒⓛⓐⓤⓓⓔ",               // circled
            "🅲🅻🅰🆄🅳🅴",               // negative squared
            "🇨🇱🇦🇺🇩🇪",               // regional indicators
            "ᴄʟᴀᴜᴅᴇ",               // small capitals
            "ᶜˡᵃᵘᵈᵉ",               // modifier letters
            "Çlâúdé",               // Latin-1 marks
            "Ćłąūďę",               // Latin Extended-A
            "Ḉḷạụḍẹ",               // Latin Extended Additional
            "C\u{301}laude\u{308}", // combining marks
        ] {
            assert_eq!(fold(name), fold("Claude"), "{name}");
            assert_eq!(resembles(name), Some("Claude"), "{name}");
            assert_eq!(judge(name, None), Some(NameWarning::LooksLike("Claude")), "{name}");
        }
        assert_eq!(fold("ﬁ ĳ œ ß Ⅻ ²"), fold("fi ij oe ss xii 2"));
        assert_eq!(fold("𝚪𝛂𝛃"), fold("Γαβ"), "mathematical Greek reads as Greek");
        assert_eq!(resembles("ＣｈａｔＧＰＴ"), Some("ChatGPT"));
        assert_eq!(resembles("𝟎𝐩𝐞𝐧𝐀𝐈"), Some("OpenAI"), "mathematical digits too");
    }

    /// Every character of the folded ranges that NFKC writes as ASCII letters and digits is
    /// folded so (`tests/data/nfkc_plain.txt`, made from Unicode's own tables).
    #[test]
    fn the_fold_agrees_with_nfkc_wherever_nfkc_writes_plain_letters() {
        let vectors = include_str!("../../tests/data/nfkc_plain.txt");
        let mut checked = 0;
        for line in vectors.lines().filter(|l| !l.starts_with('#')) {
            let (cp, plain) = line.split_once(' ').unwrap();
            let c = char::from_u32(u32::from_str_radix(cp, 16).unwrap()).unwrap();
            let mut out = String::new();
            compat(c, &mut out);
            assert_eq!(out, plain, "U+{cp} {c}");
            checked += 1;
        }
        assert!(checked > 1500, "{checked}");
    }

    #[test]
    fn the_fold_tables_cover_their_ranges_exactly() {
        assert_eq!(LATIN_1.len(), 0x100 - 0xC0);
        assert_eq!(LATIN_EXT_A.len(), 0x180 - 0x100);
        assert_eq!(LATIN_EXT_B.len(), 0x250 - 0x180);
        assert_eq!(LATIN_EXT_ADDITIONAL.len() * 2, 0x1E96 - 0x1E00);
        assert_eq!(VIETNAMESE.len() * 2, 0x1EFA - 0x1EA0);
        assert_eq!(MODIFIERS.len(), 0x1D6B - 0x1D2C);
        assert_eq!(MATH_GREEK.chars().count(), 58);
        // Spot checks at each table's ends and turns.
        for (c, plain) in [
            ('À', "a"),
            ('ÿ', "y"),
            ('Ā', "a"),
            ('ſ', "s"),
            ('Ł', "l"),
            ('Ḁ', "a"),
            ('ẕ', "z"),
            ('Ṫ', "t"),
            ('Ụ', "u"),
            ('ỹ', "y"),
            ('ᴬ', "a"),
            ('ᵪ', "x"),
            ('ᵐ', "m"),
            ('𝐀', "a"),
            ('𝚣', "z"),
            ('𝟗', "9"),
            ('𝟿', "9"),
            ('Ⓩ', "z"),
            ('ｚ', "z"),
        ] {
            let mut out = String::new();
            compat(c, &mut out);
            assert_eq!(out, plain, "{c}");
        }
    }

    #[test]
    fn other_names_are_left_alone() {
        for name in [
            "E2E client",
            "SDK e2e client",
            "My notes app",
            "Orders dashboard",
            "",
            "   ",
            "agent",
            "Cloud backup",
            "Café notes",
            "Ｍｙ ａｐｐ",
        ] {
            assert_eq!(resembles(name), None, "{name}");
            assert_eq!(judge(name, None), None, "{name}");
        }
    }

    #[test]
    fn a_word_in_two_alphabets_is_suspicious_and_so_is_a_name_with_no_latin_letter() {
        // Latin with a Cyrillic а and о: resembles nothing, but no honest word is written so.
        assert_eq!(judge("Nоtes hеlper", None), Some(NameWarning::MixedScripts));
        assert_eq!(judge("Ꮯloud notes", None), Some(NameWarning::MixedScripts), "Cherokee Ꮯ");
        assert_eq!(judge("Nоtes", Some("notes.example")), Some(NameWarning::MixedScripts));
        // Words of one alphabet each are honest.
        assert_eq!(judge("Заметки notes", None), None);
        assert_eq!(judge("Notes 2 – ノート", None), None);
        // No Latin letter left: it cannot be compared with the well-known names.
        for name in ["Клод", "クロード", "克劳德", "ᏟᏞᎪᏌᎠᎬ"] {
            assert_eq!(judge(name, None), Some(NameWarning::NotLatin), "{name}");
            assert_eq!(judge(name, Some("notes.example")), None, "the domain speaks for it");
        }
        assert_eq!(judge("123 ✓", None), None, "no letters at all is not another alphabet");
    }

    #[test]
    fn a_verified_client_claiming_another_apps_name_is_warned_about() {
        assert_eq!(judge("Claude", Some("claude.ai")), None);
        assert_eq!(judge("Claude Code", Some("claude.com")), None);
        assert_eq!(judge("Claude", Some("api.anthropic.com")), None, "a name under its domain");
        assert_eq!(judge("Visual Studio Code", Some("vscode.dev")), None);
        assert_eq!(judge("Notes", Some("notes.example")), None);
        assert_eq!(judge("Claude", Some("example.com")), Some(NameWarning::Claims("Claude")));
        assert_eq!(judge("Ｃｌａｕｄｅ", Some("example.com")), Some(NameWarning::Claims("Claude")));
        assert_eq!(judge("ChatGPT", Some("claude.ai")), Some(NameWarning::Claims("ChatGPT")));
        assert_eq!(judge("Claude", Some("claude.ai.example")), Some(NameWarning::Claims("Claude")));
        assert_eq!(judge("Claude", Some("notclaude.ai")), Some(NameWarning::Claims("Claude")));
        // The domain itself claiming the app is warned about as well.
        assert_eq!(judge("Helper", Some("claude-ai.example")), Some(NameWarning::Claims("Claude")));
        let w = NameWarning::Claims("Claude");
        assert_eq!((w.app(), w.kind()), (Some("Claude"), "claims"));
    }

    /// A name under a maker's domain that anyone may make is not the maker's: an Azure DevOps
    /// organisation's (`ORG.visualstudio.com`) calling itself Copilot is warned about; the VS
    /// Code site's own name is VS Code's.
    #[test]
    fn an_organisations_name_under_a_makers_domain_does_not_speak_for_the_maker() {
        for name in ["GitHub Copilot", "Visual Studio Code", "VS Code"] {
            let warned = judge(name, Some("myorg.visualstudio.com"));
            assert!(matches!(warned, Some(NameWarning::Claims(_))), "{name}: {warned:?}");
            assert_eq!(judge(name, Some("code.visualstudio.com")), None, "{name}");
        }
        assert_eq!(judge("Copilot", Some("copilot.microsoft.com")), None);
    }

    #[test]
    fn folding_ignores_case_spacing_punctuation_and_look_alikes() {
        assert_eq!(fold("Vs_Code."), fold("vscode"));
        assert_eq!(fold("0pen-A1"), fold("OpenAI"));
        assert_eq!(fold("Ꮯlaude 🙂"), "laude", "a letter with no Latin look-alike is dropped");
        assert!(one_edit(b"claud", b"claude") && one_edit(b"clauda", b"claude"));
        assert!(!one_edit(b"clau", b"claude"));
    }
}
