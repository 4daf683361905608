//! `application/x-www-form-urlencoded` as the relay uses it, with the `form_urlencoded` crate's
//! API (`parse`, `Parse::into_owned`, `Serializer::new(String)`, `append_pair`, `finish`) and
//! its results byte for byte: `+` is a space, `%` and two hex digits a byte (any other `%`
//! itself), bytes that are not UTF-8 become U+FFFD; only `*-._`, ASCII letters and digits are
//! written as they are.
#![no_std]
extern crate alloc;

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

/// The name/value pairs of a form body or query string, in order, decoded.
#[must_use]
pub fn parse(input: &[u8]) -> Parse<'_> {
    Parse { input }
}

/// The pairs left to read.
#[derive(Debug, Clone, Copy)]
pub struct Parse<'a> {
    input: &'a [u8],
}

impl<'a> Iterator for Parse<'a> {
    type Item = (Cow<'a, str>, Cow<'a, str>);

    fn next(&mut self) -> Option<Self::Item> {
        while !self.input.is_empty() {
            let (pair, rest) = split(self.input, b'&');
            self.input = rest;
            if !pair.is_empty() {
                let (name, value) = split(pair, b'=');
                return Some((decode(name), decode(value)));
            }
        }
        None
    }
}

impl<'a> Parse<'a> {
    /// The pairs as owned strings.
    #[must_use]
    pub fn into_owned(self) -> ParseIntoOwned<'a> {
        ParseIntoOwned { inner: self }
    }
}

/// The pairs as owned strings.
#[derive(Debug)]
pub struct ParseIntoOwned<'a> {
    inner: Parse<'a>,
}

impl Iterator for ParseIntoOwned<'_> {
    type Item = (String, String);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, v)| (k.into_owned(), v.into_owned()))
    }
}

/// `input` before and after the first `at` (all of it and nothing when there is none).
fn split(input: &[u8], at: u8) -> (&[u8], &[u8]) {
    match input.iter().position(|&b| b == at) {
        Some(i) => (&input[..i], &input[i + 1..]),
        None => (input, &[]),
    }
}

/// One name or value, decoded.
fn decode(input: &[u8]) -> Cow<'_, str> {
    if !input.iter().any(|&b| b == b'+' || b == b'%') {
        return String::from_utf8_lossy(input);
    }
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        let byte = match input[i] {
            b'+' => b' ',
            b'%' => match (
                input.get(i + 1).and_then(|&b| hex(b)),
                input.get(i + 2).and_then(|&b| hex(b)),
            ) {
                (Some(high), Some(low)) => {
                    i += 2;
                    // Two hex digits make a byte.
                    u8::try_from(high * 16 + low).unwrap_or_default()
                }
                _ => b'%',
            },
            b => b,
        };
        out.push(byte);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// Writes name/value pairs as a form body or query string.
#[derive(Debug)]
pub struct Serializer {
    target: String,
}

impl Serializer {
    /// Pairs to be appended to `target` (after a `&` if it is not empty, as the crate does).
    #[must_use]
    pub fn new(target: String) -> Self {
        Self { target }
    }

    /// Appends `name=value`, encoded, after a `&` unless it is the first.
    pub fn append_pair(&mut self, name: &str, value: &str) -> &mut Self {
        if !self.target.is_empty() {
            self.target.push('&');
        }
        encode(&mut self.target, name);
        self.target.push('=');
        encode(&mut self.target, value);
        self
    }

    /// The text written.
    pub fn finish(&mut self) -> String {
        core::mem::take(&mut self.target)
    }
}

/// `text` encoded onto `out`.
fn encode(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in text.bytes() {
        match b {
            b'*' | b'-' | b'.' | b'_' | b'0'..=b'9' | b'A'..=b'Z' | b'a'..=b'z' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::String;
    use alloc::vec::Vec;

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
    fn parses_as_the_crate_does_every_short_text() {
        // Separators, plus, percent with and without hex digits (both cases), UTF-8 split by
        // percent-encoding, and bytes that are not UTF-8.
        let symbols = b"&=+%2aFgC\xc3\xa9\xff";
        for text in texts(symbols, 5) {
            let ours: Vec<_> = super::parse(&text).collect();
            let theirs: Vec<_> = form_urlencoded::parse(&text).collect();
            assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&text));
            let ours: Vec<_> = super::parse(&text).into_owned().collect();
            let theirs: Vec<_> = form_urlencoded::parse(&text).into_owned().collect();
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn serializes_as_the_crate_does_every_byte() {
        let all: String = (0..=0x7f_u8).map(char::from).chain("é€😀".chars()).collect();
        let pairs = [("", ""), ("a b", "c&d=e"), (all.as_str(), all.as_str()), ("x", "")];
        for start in ["", "https://a.example/cb?"] {
            let mut ours = super::Serializer::new(String::from(start));
            let mut theirs = form_urlencoded::Serializer::new(String::from(start));
            for (k, v) in pairs {
                ours.append_pair(k, v);
                theirs.append_pair(k, v);
            }
            assert_eq!(ours.finish(), theirs.finish());
        }
    }
}
