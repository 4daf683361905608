//! The characters text from outside must not carry where a person reads it, one list for both
//! ends: the relay drops them from a client's name and refuses them in a redirect URI
//! ([`is_unshown`]); the tab shows each as a space in every name, argument and sentence from
//! outside (`UNSHOWN` and `shownText` of `tab/generated/bundle.js`).
//!
//! They are the control characters (Unicode's Cc) and the format characters (Cf), which show as
//! nothing yet change what a person reads: the bidirectional controls (U+202A–202E,
//! U+2066–2069, the marks U+200E, U+200F, U+061C) turn the text around them ("Claude\u{202E}edoc"
//! reads as another name), the zero-width ones (U+200B–200D, U+2060–2064, U+FEFF) split or join
//! a word unseen ("Cl\u{200B}aude" reads as Claude); and the line and paragraph separators
//! (U+2028, U+2029).

/// The list, written once: the ranges as data ([`UNSHOWN`], which the tab's pattern is written
/// from) and as the pattern of [`is_unshown`] (compiled to comparisons, no table in the Worker).
macro_rules! unshown {
    ($($first:literal..=$last:literal,)*) => {
        /// Unicode 16's Cc and Cf and the two separators, as ranges (first, last), in order.
        pub const UNSHOWN: &[(u32, u32)] = &[$(($first, $last)),*];

        /// Whether `c` is a character text from outside must not carry where a person reads it.
        #[must_use]
        pub fn is_unshown(c: char) -> bool {
            matches!(u32::from(c), $($first..=$last)|*)
        }
    };
}

unshown! {
    0x0..=0x1F,
    0x7F..=0x9F,
    0xAD..=0xAD,
    0x600..=0x605,
    0x61C..=0x61C,
    0x6DD..=0x6DD,
    0x70F..=0x70F,
    0x890..=0x891,
    0x8E2..=0x8E2,
    0x180E..=0x180E,
    0x200B..=0x200F,
    0x2028..=0x202E,
    0x2060..=0x2064,
    0x2066..=0x206F,
    0xFEFF..=0xFEFF,
    0xFFF9..=0xFFFB,
    0x110BD..=0x110BD,
    0x110CD..=0x110CD,
    0x13430..=0x1343F,
    0x1BCA0..=0x1BCA3,
    0x1D173..=0x1D17A,
    0xE0001..=0xE0001,
    0xE0020..=0xE007F,
}

/// The tab's pattern of them: a JavaScript regular expression (flags `gu`).
#[cfg(feature = "shapes")]
#[must_use]
pub fn js_pattern() -> alloc::string::String {
    use core::fmt::Write as _;
    let mut pattern = alloc::string::String::from("/[");
    for &(first, last) in UNSHOWN {
        let _ = write!(pattern, "\\u{{{first:x}}}");
        if last != first {
            let _ = write!(pattern, "-\\u{{{last:x}}}");
        }
    }
    pattern.push_str("]/gu");
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every control character is unshown, as `char::is_control` says.
    #[test]
    fn every_control_character_is_unshown() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32).filter(|c| c.is_control()) {
            assert!(is_unshown(c), "{:x}", u32::from(c));
        }
    }

    /// The marks that turn text around, split or join a word unseen, or break a line are
    /// unshown; letters, digits, spaces and emoji are shown.
    #[test]
    fn what_changes_a_name_unseen_is_unshown_and_nothing_a_name_needs() {
        for c in [
            '\u{202E}',
            '\u{2066}',
            '\u{200E}',
            '\u{061C}',
            '\u{200B}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{2028}',
            '\u{E0041}',
        ] {
            assert!(is_unshown(c), "{:x}", u32::from(c));
        }
        for c in ['C', 'é', 'Ж', '中', '٣', ' ', '\u{00A0}', '…', '’', '🙂', '\u{FE0F}'] {
            assert!(!is_unshown(c), "{:x}", u32::from(c));
        }
    }

    /// The ranges are in order and apart (the tab's pattern is written from them as they are).
    #[test]
    fn the_ranges_are_in_order_and_apart() {
        for pair in UNSHOWN.windows(2) {
            assert!(pair[0].0 <= pair[0].1 && pair[0].1 + 1 < pair[1].0, "{pair:x?}");
        }
    }
}
