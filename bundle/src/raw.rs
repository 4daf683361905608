//! JSON read as a tree but for one member, kept as the text it was written in: a tab's result
//! (`data`), which the relay carries to the agent as it is and never needs as a tree. Read into
//! a `Value` and written again, a result cost more per KiB than the rest of its call; read this
//! way its text is found, checked to be JSON and copied once, without its spaces.
//!
//! The member is found by a scan of the text ([`span`]); what the scan cannot place (text that
//! is not JSON, a key written with escapes, a member named twice) is read as a whole tree, as
//! before, so the scan decides only how fast, never what is read. The kept text is checked
//! against JSON's grammar (serde_json's `IgnoredAny`), so JSON a tree cannot hold (a number
//! past a float's range, an escape of half a surrogate pair) is carried as written.

use alloc::string::String;
use alloc::vec::Vec;

use serde::de::IgnoredAny;
use serde_json::Value;

use crate::fields::{FromValue, JsonText, WireError};

/// JSON text read as a `Value`, but for the member at `path` (object keys, outermost first),
/// whose text is kept (checked to be JSON, without the spaces between its tokens) and is null
/// in the tree. None: not JSON.
#[must_use]
pub fn parse_keeping(bytes: &[u8], path: &[&str]) -> Option<(Value, Option<JsonText>)> {
    if let Some((start, end)) = span(bytes, path) {
        let member = &bytes[start..end];
        let checked = serde_json::from_slice::<IgnoredAny>(member).is_ok();
        if let Some(kept) = compact(member).filter(|_| checked) {
            let mut rest = Vec::with_capacity(bytes.len() - member.len() + 4);
            rest.extend_from_slice(&bytes[..start]);
            rest.extend_from_slice(b"null");
            rest.extend_from_slice(&bytes[end..]);
            if let Some(tree) = crate::parse(&rest) {
                return Some((tree, Some(JsonText::kept(kept))));
            }
        }
    }
    crate::parse(bytes).map(|tree| (tree, None))
}

/// A message read from across a wire as [`crate::read_wire`] reads it, but for the member at
/// `path`, kept as its text ([`parse_keeping`]); the message's outcome takes it back with
/// [`crate::protocol::Outcome::keep`].
///
/// # Errors
/// [`WireError`]: not JSON, or not the shape of `T`.
pub fn read_keeping<T: FromValue>(
    bytes: &[u8],
    path: &[&str],
) -> Result<(T, Option<JsonText>), WireError> {
    let (tree, kept) = parse_keeping(bytes, path).unzip();
    Ok((crate::read_tree(tree)?, kept.flatten()))
}

/// Where the member at `path` is in `json`: its value's first byte and the byte after it.
fn span(json: &[u8], path: &[&str]) -> Option<(usize, usize)> {
    let (mut start, mut end) = (0, json.len());
    for key in path {
        let (s, e) = member(&json[start..end], key.as_bytes())?;
        (start, end) = (start + s, start + e);
    }
    Some((start, end))
}

/// Where the value of member `key` of the object `json` is (None: not an object, no such member
/// or more than one, a key with escapes before it, or not JSON enough to tell).
fn member(json: &[u8], key: &[u8]) -> Option<(usize, usize)> {
    let mut i = spaces(json, 0);
    if json.get(i) != Some(&b'{') {
        return None;
    }
    i = spaces(json, i + 1);
    if json.get(i) == Some(&b'}') {
        return None;
    }
    let mut found = None;
    loop {
        if json.get(i) != Some(&b'"') {
            return None;
        }
        let name_end = string_end(json, i)?;
        let name = &json[i + 1..name_end - 1];
        if name.contains(&b'\\') {
            return None;
        }
        i = spaces(json, name_end);
        if json.get(i) != Some(&b':') {
            return None;
        }
        i = spaces(json, i + 1);
        let end = value_end(json, i)?;
        if name == key {
            if found.is_some() {
                return None;
            }
            found = Some((i, end));
        }
        i = spaces(json, end);
        match json.get(i)? {
            b',' => i = spaces(json, i + 1),
            b'}' => return found,
            _ => return None,
        }
    }
}

/// The index of the first byte from `i` that is not JSON whitespace.
fn spaces(json: &[u8], mut i: usize) -> usize {
    while matches!(json.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The index after the string that opens at `i`.
fn string_end(json: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match json.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The index after the value that starts at `i` (its syntax is checked later, by serde_json).
fn value_end(json: &[u8], i: usize) -> Option<usize> {
    match json.get(i)? {
        b'"' => string_end(json, i),
        b'{' | b'[' => {
            let (mut depth, mut j) = (0usize, i);
            loop {
                match json.get(j)? {
                    b'"' => {
                        j = string_end(json, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let delimiter = |b: &u8| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r');
            let end = json[i..].iter().position(delimiter).map_or(json.len(), |n| i + n);
            (end > i).then_some(end)
        }
    }
}

/// `json` (one JSON value) without the whitespace between its tokens: a result is one line
/// (the pairing's replies to the Worker are lines), and the spaces a tab adds are not the
/// agent's to read. None when it is not UTF-8.
fn compact(json: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        if in_string {
            out.push(b);
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            in_string = b == b'"';
            out.push(b);
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use serde_json::json;

    #[test]
    fn the_member_on_the_path_is_kept_as_written_and_the_rest_reads_as_a_tree() {
        let text =
            br#"{"type":"result","id":7,"data":{"z": 1, "a":[1.50, "<b>", "}]\""]},"image":null}"#;
        let (tree, kept) = parse_keeping(text, &["data"]).unwrap();
        // As written (its keys' order, a number's digits), but for the spaces between tokens.
        assert_eq!(kept.unwrap().as_str(), r#"{"z":1,"a":[1.50,"<b>","}]\""]}"#);
        assert_eq!(tree, json!({"type": "result", "id": 7, "data": null, "image": null}));
        let nested = br#"{"a":{"data":3, "b" : {"data":[1,2]}},"c":"d"}"#;
        let (tree, kept) = parse_keeping(nested, &["a", "b", "data"]).unwrap();
        assert_eq!(kept.unwrap().as_str(), "[1,2]");
        assert_eq!(tree, json!({"a": {"b": {"data": null}, "data": 3}, "c": "d"}));
        for scalar in ["3", "-1.5e3", "true", "null", r#""a\"b""#] {
            let text = format!(r#"{{"data":{scalar},"x":1}}"#);
            let (_, kept) = parse_keeping(text.as_bytes(), &["data"]).unwrap();
            assert_eq!(kept.unwrap().as_str(), scalar);
        }
    }

    #[test]
    fn the_kept_text_is_one_line_without_the_spaces_between_tokens() {
        let pretty = "{\"data\": {\n  \"a b\": \"x \\\" y\\\\\",\r\n\t\"c\": [ 1 , \"é \" ]\n}}";
        let (_, kept) = parse_keeping(pretty.as_bytes(), &["data"]).unwrap();
        let kept = kept.unwrap();
        assert_eq!(kept.as_str(), r#"{"a b":"x \" y\\","c":[1,"é "]}"#);
        let again: Value = serde_json::from_str(kept.as_str()).unwrap();
        let whole: Value = serde_json::from_str(pretty).unwrap();
        assert_eq!(again, whole["data"], "the same value");
    }

    #[test]
    fn what_the_scan_cannot_place_reads_as_a_whole_tree() {
        let cases: [&[u8]; 7] = [
            b"\"done\"",
            b"[1,{\"data\":2}]",
            b"{\"b\":{\"data\":1}}",
            br#"{"a":"x"}"#,
            br#"{"data":1,"data":2}"#,
            br#"{"d\u0061ta":[1]}"#,
            b"{}",
        ];
        for (text, path) in cases.iter().flat_map(|t| [(t, &["data"][..]), (t, &["a", "data"])]) {
            let (tree, kept) = parse_keeping(text, path).unwrap();
            assert_eq!(tree, serde_json::from_slice::<Value>(text).unwrap());
            assert!(kept.is_none(), "{} {path:?}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn what_is_not_json_is_refused_the_kept_member_too() {
        let cases: [&[u8]; 7] = [
            b"{\"data\":{\"a\":}}",
            b"{\"data\":1} x",
            b"",
            b"{\"data\":1,}",
            b"{\"data\":[1}",
            b"{\"data\":[1]]}",
            b"{\"data\":tru}",
        ];
        for text in cases {
            assert!(parse_keeping(text, &["data"]).is_none(), "{}", String::from_utf8_lossy(text));
        }
    }
}
