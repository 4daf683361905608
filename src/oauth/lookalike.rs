//! Whether a client's unverified name looks like a well-known agent app's, so the consent can
//! warn that anyone may give their app that name.
//!
//! Names are compared after folding what a person reads as the same: case, spaces and
//! punctuation, digits and letters that look alike (0/o, 1/l/i, 3/e, 5/s, …), and the Cyrillic
//! and Greek letters that look like Latin ones. A name matches when it contains a well-known
//! name, or a part of it differs from one of six letters or more by a single letter (a typo on
//! purpose).

/// The agent apps people connect, as people know them (each is compared folded).
pub const WELL_KNOWN: &[&str] = &[
    "Claude",
    "Claude Code",
    "Claude Desktop",
    "Anthropic",
    "ChatGPT",
    "OpenAI",
    "Codex",
    "Cursor",
    "VS Code",
    "Visual Studio Code",
    "Copilot",
    "GitHub Copilot",
    "Gemini",
    "Google",
    "Windsurf",
    "Codeium",
    "MCP Inspector",
    "Microsoft",
    "Perplexity",
    "Mistral",
    "JetBrains",
];

/// Names at least this long (folded) also match a part one letter away: shorter ones would
/// match ordinary words.
const FUZZY_FROM: usize = 6;

/// The well-known app an unverified `name` looks like, if any (the first in [`WELL_KNOWN`]).
#[must_use]
pub fn resembles(name: &str) -> Option<&'static str> {
    let folded = fold(name);
    if folded.is_empty() {
        return None;
    }
    WELL_KNOWN.iter().copied().find(|known| {
        let k = fold(known);
        folded.contains(&k) || (k.len() >= FUZZY_FROM && within_one_edit_of_a_part(&folded, &k))
    })
}

/// `name` as a person reads it: lower case letters only, look-alikes folded to one letter.
#[must_use]
pub fn fold(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    // ASCII case is folded by hand, with the upper case look-alikes below: Unicode's lower-case
    // tables would cost the wasm KiBs.
    for c in name.chars() {
        let c = match c.to_ascii_lowercase() {
            'О' | 'Ο' => 'o',
            'І' | 'Ι' | 'Ӏ' => 'l',
            'Е' | 'Ε' => 'e',
            'А' | 'Α' => 'a',
            'Ѕ' => 's',
            'В' | 'Β' => 'b',
            'Т' | 'Τ' => 't',
            'С' | 'Ϲ' => 'c',
            'Р' | 'Ρ' => 'p',
            'Х' | 'Χ' => 'x',
            'У' | 'Υ' => 'y',
            'К' | 'Κ' => 'k',
            'М' | 'Μ' => 'm',
            'Н' | 'Η' => 'h',
            'Ν' => 'n',
            'Ζ' => 'z',
            '0' | 'ο' | 'о' | 'ө' | 'º' | '°' => 'o',
            '1' | 'i' | 'l' | '|' | '!' | 'ı' | 'і' | 'ӏ' | 'ι' | 'ǀ' | 'í' | 'ì' | 'ï' => {
                'l'
            }
            '3' | 'е' | 'ε' | 'é' | 'è' | 'ë' | 'ê' => 'e',
            '4' | '@' | 'а' | 'α' | 'á' | 'à' | 'ä' | 'â' => 'a',
            '5' | '$' | 'ѕ' => 's',
            '6' | 'б' => 'b',
            '7' | 'т' | 'τ' => 't',
            '8' | 'в' | 'β' => 'b',
            '9' => 'g',
            'с' | 'ς' | 'ç' => 'c',
            'р' | 'ρ' => 'p',
            'х' | 'χ' => 'x',
            'у' | 'γ' => 'y',
            'к' | 'κ' => 'k',
            'м' => 'm',
            'н' | 'η' => 'n',
            'ν' | 'ѵ' => 'v',
            'ԁ' => 'd',
            'ԍ' | 'ɡ' => 'g',
            'ѡ' | 'ω' | 'ш' => 'w',
            'ü' | 'ú' | 'ù' | 'û' | 'υ' => 'u',
            'ö' | 'ó' | 'ò' | 'ô' => 'o',
            c if c.is_ascii_lowercase() => c,
            _ => continue, // spaces, punctuation, marks, anything else
        };
        out.push(c);
    }
    // "rn" reads as "m", "vv" as "w".
    out.replace("rn", "m").replace("vv", "w")
}

/// Whether some part of `name` is at most one letter's edit from `known`.
fn within_one_edit_of_a_part(name: &str, known: &str) -> bool {
    let name = name.as_bytes();
    let k = known.len();
    (k.saturating_sub(1)..=k + 1)
        .filter(|w| *w > 0 && *w <= name.len())
        .any(|w| name.windows(w).any(|part| one_edit(part, known.as_bytes())))
}

/// Whether `a` becomes `b` by at most one insertion, deletion or substitution.
fn one_edit(a: &[u8], b: &[u8]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if long.len() - short.len() > 1 {
        return false;
    }
    let prefix = short.iter().zip(long).take_while(|(x, y)| x == y).count();
    if short.len() == long.len() {
        short[prefix..].iter().skip(1).eq(long[prefix..].iter().skip(1))
    } else {
        short[prefix..] == long[prefix + 1..]
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
        ] {
            assert_eq!(resembles(name), None, "{name}");
        }
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
