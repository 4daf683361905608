//! A text found in a text, for the relay's few short needles (`://`, `::`, a media type, a
//! blank line): each place of the needle's first character, then a compare, is all they need.
//! `str`'s `find`, `contains`, `split_once`, `split_inclusive` and `replace` with a `&str`
//! needle link core's two-way searcher instead, 1.2 KiB of upload (gzip). A leaf: it imports
//! nothing of the relay.

/// Where `needle` first starts in `hay`, as `hay.find(needle)`. Each place its first character
/// is at is found by `str::find` with a `char` (memchr: a result of megabytes is gone over at
/// its speed), then compared whole.
#[must_use]
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let Some(first) = needle.chars().next() else { return Some(0) };
    let mut from = 0;
    loop {
        let at = from + hay[from..].find(first)?;
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + first.len_utf8();
    }
}

/// `hay` before and after the first `needle`, as `hay.split_once(needle)`.
#[must_use]
pub fn split_once<'a>(hay: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let (before, rest) = hay.split_at(find(hay, needle)?);
    Some((before, &rest[needle.len()..]))
}

/// `hay` with every `from` (not empty) made `to`, as `hay.replace(from, to)`.
#[must_use]
pub fn replace(hay: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(hay.len());
    let mut rest = hay;
    while let Some((before, after)) = split_once(rest, from).filter(|_| !from.is_empty()) {
        out.push_str(before);
        out.push_str(to);
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    /// Every needle of up to three letters in every text of up to six, found where `str` finds
    /// it, split and replaced as `str` does.
    #[test]
    fn as_str_finds() {
        let mut texts = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..6 {
            last = last.iter().flat_map(|t| ["a", "b", "é"].map(|c| format!("{t}{c}"))).collect();
            texts.extend(last.iter().cloned());
        }
        for hay in &texts {
            for needle in texts.iter().filter(|n| n.chars().count() <= 3) {
                assert_eq!(super::find(hay, needle), hay.find(needle.as_str()), "{hay} {needle}");
                assert_eq!(super::split_once(hay, needle), hay.split_once(needle.as_str()));
                if !needle.is_empty() {
                    assert_eq!(
                        super::replace(hay, needle, "xy"),
                        hay.replace(needle.as_str(), "xy")
                    );
                }
            }
        }
        assert_eq!(super::replace("rnrn", "rn", "m"), "mm");
    }
}
