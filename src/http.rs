//! Small pure helpers over HTTP values: a request's method, the answers and their headers, a
//! URL's origin, path and query, cookies, the bearer, a body read with a cap, reply lines.
//!
//! A floor below the logic: the endpoint, OAuth, the pairing and the route table all build
//! and read their HTTP with these, and this imports none of them (only the pages' headers its
//! answer of a page carries). What path goes where is the route table's (`crate::routes`).

use base64::Engine as _;
use serde_json::Value;

use crate::pages;

/// A request's method as the router reads it: a known one in upper case whatever its case,
/// and GET for one it does not know (as workers-rs named methods before the shell read the
/// platform's request itself).
#[must_use]
pub fn method(raw: &str) -> &'static str {
    const KNOWN: [&str; 9] =
        ["HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "REPORT"];
    KNOWN.into_iter().find(|m| m.eq_ignore_ascii_case(raw)).unwrap_or("GET")
}

/// A whole HTTP answer as the shell writes it: every header it carries, none added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// Its headers, all of them.
    pub headers: Vec<(&'static str, String)>,
    /// Its body; None for no body at all (a 204, a redirect).
    pub body: Option<Vec<u8>>,
}

/// Never cached.
pub(crate) const NO_STORE: (&str, &str) = ("cache-control", "no-store");

/// The headers of every JSON answer: never cached.
pub const JSON_HEADERS: [(&str, &str); 2] = [("content-type", "application/json"), NO_STORE];

/// The headers of an event stream: never cached, never buffered by a proxy on the way.
pub const EVENT_STREAM_HEADERS: [(&str, &str); 3] = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache, no-store"),
    ("x-accel-buffering", "no"),
];

/// The content type of a pairing's reply lines streamed as they come (NDJSON): the Worker reads
/// a body of this type as a stream, any other whole.
pub const NDJSON_TYPE: &str = "application/x-ndjson";

/// The headers of the reply lines (NDJSON) of a pairing's object, streamed as they come.
pub const NDJSON_HEADERS: [(&str, &str); 2] =
    [("content-type", NDJSON_TYPE), ("cache-control", "no-cache, no-store")];

impl Answer {
    /// JSON text already written (a message's own codec wrote it).
    #[must_use]
    pub fn json_text(status: u16, text: Vec<u8>) -> Self {
        Self { status, headers: owned(&JSON_HEADERS), body: Some(text) }
    }

    /// A JSON value.
    #[must_use]
    pub fn json(status: u16, body: &Value) -> Self {
        Self::json_text(status, tabrelay_bundle::fields::Encode::to_json(body))
    }

    /// A sentence as plain text, with no header at all.
    #[must_use]
    pub fn text(status: u16, sentence: &str) -> Self {
        Self { status, headers: Vec::new(), body: Some(sentence.as_bytes().to_vec()) }
    }

    /// A path that is no route.
    #[must_use]
    pub fn not_found() -> Self {
        Self::text(404, "Not found.")
    }

    /// One of the relay's pages, with [`pages::PAGE_HEADERS`].
    #[must_use]
    pub fn page(status: u16, html: String) -> Self {
        Self { status, headers: owned(&pages::PAGE_HEADERS), body: Some(html.into_bytes()) }
    }

    /// No body, no header.
    #[must_use]
    pub fn empty(status: u16) -> Self {
        Self { status, headers: Vec::new(), body: None }
    }

    /// A 302 to `to`, never cached.
    #[must_use]
    pub fn redirect(to: String) -> Self {
        Self::empty(302).with("location", &to).with(NO_STORE.0, NO_STORE.1)
    }

    /// The answer with this header too (a header it carries already takes this value).
    #[must_use]
    pub fn with(mut self, name: &'static str, value: &str) -> Self {
        match self.headers.iter_mut().find(|(k, _)| *k == name) {
            Some((_, held)) => *held = value.to_owned(),
            None => self.headers.push((name, value.to_owned())),
        }
        self
    }
}

/// Headers as an [`Answer`] holds them.
pub(crate) fn owned(headers: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut owned = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        owned.push((*name, (*value).to_owned()));
    }
    owned
}

/// The origin (`scheme://host[:port]`) of an absolute URL.
#[must_use]
pub fn origin_of(url: &str) -> &str {
    let after_scheme = crate::text::find(url, "://").map_or(0, |i| i + 3);
    let end = url[after_scheme..].find(['/', '?', '#']).map_or(url.len(), |i| after_scheme + i);
    &url[..end]
}

/// The path of an absolute URL (`/` when it has none).
#[must_use]
pub fn path_of(url: &str) -> &str {
    let rest = &url[origin_of(url).len()..];
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    if end == 0 {
        "/"
    } else {
        &rest[..end]
    }
}

/// The decoded query parameters of an absolute URL, in order.
#[must_use]
pub fn query_of(url: &str) -> Vec<(String, String)> {
    let Some((_, q)) = url.split_once('?') else { return Vec::new() };
    let q = q.split('#').next().unwrap_or_default();
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// A request's headers as the shell reads them, in one crossing into JS: a line `name:value`
/// each, the names lowercase and each name once (its values joined), as the platform's
/// `Headers` holds them. No value holds a line break.
#[derive(Debug, Clone, Copy)]
pub struct HeaderLines<'a>(pub &'a str);

impl<'a> HeaderLines<'a> {
    /// Every header, name and value.
    pub fn entries(self) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.0.split('\n').filter_map(|line| line.split_once(':'))
    }

    /// The header `name` (lowercase, no colon), if the request has it: the first line that
    /// starts `name:` (compared as bytes, each line once).
    #[must_use]
    pub fn get(self, name: &str) -> Option<&'a str> {
        self.0.split('\n').find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
    }
}

/// Headers as the shell sets them on a response in one crossing into JS: a line `name:value`
/// each. None when one holds a line break (no header the relay writes does; one would read as
/// a second header).
#[must_use]
pub fn header_text<V: AsRef<str>>(headers: &[(&str, V)]) -> Option<String> {
    // Bytes, not chars: each of these is one byte in UTF-8, and never inside another char.
    let breaks = |text: &str, colon: bool| {
        text.bytes().any(|b| b == b'\n' || b == b'\r' || (colon && b == b':'))
    };
    let mut text = String::new();
    for (name, value) in headers {
        let value = value.as_ref();
        if breaks(name, true) || breaks(value, false) {
            return None;
        }
        text.extend([name, ":", value, "\n"]);
    }
    Some(text)
}

/// The value of a cookie in a `Cookie` header.
#[must_use]
pub fn cookie<'a>(header: Option<&'a str>, name: &str) -> Option<&'a str> {
    header?.split(';').map(str::trim).find_map(|c| c.strip_prefix(name)?.strip_prefix('='))
}

/// The token of an `Authorization: Bearer …` header.
#[must_use]
pub fn bearer(header: Option<&str>) -> Option<&str> {
    let h = header?.trim();
    let (scheme, token) = h.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// A body larger than its route's [`body_cap`](crate::routes::body_cap): refused with 413.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// The cap it passed, in bytes.
    pub cap: usize,
}

/// A request body read with a cap: refused by its `Content-Length` before anything is read, and
/// by what arrives as soon as it passes the cap (a body sent in chunks without a length), so
/// no more than the cap is ever held.
#[derive(Debug)]
pub struct CappedBody {
    cap: usize,
    bytes: Vec<u8>,
    /// The length the request declared, within the cap.
    declared: bool,
}

impl CappedBody {
    /// A body about to be read with `cap`, refused at once when its `Content-Length` says it is
    /// larger (a length that does not read as a number is left to the stream to bound).
    pub fn start(cap: usize, content_length: Option<&str>) -> Result<Self, TooLarge> {
        let declared = content_length.and_then(|l| l.trim().parse::<u64>().ok());
        match declared {
            Some(n) if n > cap as u64 => Err(TooLarge { cap }),
            _ => Ok(Self { cap, bytes: Vec::new(), declared: declared.is_some() }),
        }
    }

    /// Whether the body may be read whole, in one piece: its `Content-Length` said a length
    /// within the cap, and the platform delivers no more than a declared length (its HTTP
    /// framing ends the body there). What is read is still taken through [`Self::take`].
    #[must_use]
    pub fn whole(&self) -> bool {
        self.declared
    }

    /// Takes the next chunk that arrived; refused once the whole passes the cap (the chunk is
    /// not kept).
    pub fn take(&mut self, chunk: &[u8]) -> Result<(), TooLarge> {
        if self.bytes.len().saturating_add(chunk.len()) > self.cap {
            return Err(TooLarge { cap: self.cap });
        }
        self.bytes.extend_from_slice(chunk);
        Ok(())
    }

    /// The body read.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// Lines (NDJSON) arriving in chunks: each whole line once its newline came; a line cut across
/// chunks waits for its rest.
#[derive(Debug, Default)]
pub struct Lines {
    buffer: Vec<u8>,
}

impl Lines {
    /// Takes the next chunk that arrived.
    pub fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next whole line (its newline included); None until one is whole.
    pub fn next_line(&mut self) -> Option<Vec<u8>> {
        let end = self.buffer.iter().position(|b| *b == b'\n')?;
        let rest = self.buffer.split_off(end + 1);
        Some(std::mem::replace(&mut self.buffer, rest))
    }
}

/// A header value as a 2026-07-28 routing header (`Mcp-Name`, `Mcp-Param-{Name}`) carries it:
/// surrounding whitespace dropped, `=?base64?…?=` decoded (None: not valid base64 with its
/// padding, or not UTF-8); a value without both ends of the wrapper is read as it is.
#[must_use]
pub fn header_value(raw: &str) -> Option<String> {
    let v = raw.trim_matches([' ', '\t']);
    match v.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok()
        }
        None => Some(v.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_come_whole_whatever_the_chunks() {
        let mut lines = Lines::default();
        lines.push(b"{\"a\":1}\n{\"b\"");
        assert_eq!(lines.next_line().as_deref(), Some(&b"{\"a\":1}\n"[..]));
        assert_eq!(lines.next_line(), None);
        lines.push(b":2}\n\n");
        assert_eq!(lines.next_line().as_deref(), Some(&b"{\"b\":2}\n"[..]));
        assert_eq!(lines.next_line().as_deref(), Some(&b"\n"[..]));
        assert_eq!(lines.next_line(), None);
    }

    #[test]
    fn an_answer_carries_each_header_once() {
        let a = Answer::json(200, &json!({"a": 1})).with("cache-control", "no-cache");
        assert_eq!(a.body.as_deref(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(
            a.headers,
            vec![("content-type", "application/json".into()), ("cache-control", "no-cache".into())]
        );
        let r = Answer::redirect("https://claude.ai/cb?code=x".into());
        assert_eq!((r.status, r.body), (302, None));
        assert_eq!(
            r.headers,
            vec![
                ("location", "https://claude.ai/cb?code=x".into()),
                ("cache-control", "no-store".into())
            ]
        );
    }

    #[test]
    fn urls_split_into_origin_path_and_query() {
        let u = "http://127.0.0.1:8787/authorize?client_id=a%20b&x=1#f";
        assert_eq!(origin_of(u), "http://127.0.0.1:8787");
        assert_eq!(path_of(u), "/authorize");
        assert_eq!(query_of(u), vec![("client_id".into(), "a b".into()), ("x".into(), "1".into())]);
        assert_eq!(path_of("https://relay.example"), "/");
        assert_eq!(path_of("https://relay.example/?x"), "/");
    }

    #[test]
    fn cookies_and_bearers() {
        assert_eq!(cookie(Some("a=1; tr_x=abc; b=2"), "tr_x"), Some("abc"));
        assert_eq!(cookie(Some("tr_xy=abc"), "tr_x"), None);
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
    }

    #[test]
    fn headers_are_written_one_a_line_and_a_line_break_is_refused() {
        let headers = [("content-type", "text/plain"), ("location", "https://a.example/x?y=1:2")];
        let text = header_text(&headers).unwrap();
        assert_eq!(text, "content-type:text/plain\nlocation:https://a.example/x?y=1:2\n");
        let read: Vec<_> = HeaderLines(&text).entries().collect();
        assert_eq!(read, headers);
        assert_eq!(header_text(&[("location", "https://a.example/\nset-cookie:a=b")]), None);
        assert_eq!(header_text(&[("x", "a\rb")]), None);
        assert_eq!(header_text(&[("x:y", "a")]), None);
    }
}
