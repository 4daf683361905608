//! Small pure helpers over HTTP values: the routes and their methods, a URL's origin, path and
//! query, cookies, the bearer, a body read with a cap.

use base64::Engine as _;

use crate::limits::{MAX_BODY_BYTES, MAX_FORM_BYTES, MAX_REGISTRATION_BYTES, MAX_SEAL_BYTES};
use crate::pages::{CODE_PATH, STATUS_PATH, WAIT_SCRIPT_PATH};
use tabrelay_bundle::protocol::CONFIRM_PATH;

/// Every route and the methods it takes: the one source of a 405's `Allow` and of the CORS
/// `Access-Control-Allow-Methods` (see [`allow`]), so the two never disagree. A path not here
/// is a 404. The MCP endpoint takes POST only: it offers no GET stream and no session to DELETE
/// (Streamable HTTP lets a server answer both with 405). OPTIONS, the CORS preflight, is
/// answered on every [`is_cors_path`] besides these.
pub const ROUTES: [(&str, &[&str]); 13] = [
    ("/", &["POST"]),
    ("/health", &["GET"]),
    ("/.well-known/oauth-protected-resource", &["GET"]),
    ("/.well-known/oauth-authorization-server", &["GET"]),
    ("/register", &["POST"]),
    ("/authorize", &["GET"]),
    (STATUS_PATH, &["GET"]),
    (CODE_PATH, &["POST"]),
    (WAIT_SCRIPT_PATH, &["GET"]),
    (CONFIRM_PATH, &["GET"]),
    ("/token", &["POST"]),
    ("/revoke", &["POST"]),
    ("/tab", &["GET"]),
];

/// The methods a route takes, as an `Allow` (and `Access-Control-Allow-Methods`) value; None
/// for a path that is no route.
#[must_use]
pub fn allow(path: &str) -> Option<String> {
    ROUTES.iter().find(|(p, _)| *p == path).map(|(_, methods)| methods.join(", "))
}

/// CORS headers for the MCP endpoint and the OAuth endpoints a browser-based client calls
/// (`Access-Control-Allow-Methods` comes from [`allow`], per path). They authenticate by bearer
/// header, never by cookie, so any origin may read them.
pub const CORS_HEADERS: [(&str, &str); 3] = [
    ("access-control-allow-origin", "*"),
    (
        "access-control-allow-headers",
        "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, mcp-name, last-event-id",
    ),
    ("access-control-expose-headers", "www-authenticate, mcp-session-id, mcp-protocol-version"),
];

/// Whether a path's answers carry [`CORS_HEADERS`]: the API routes, not the pages or the tab.
#[must_use]
pub fn is_cors_path(path: &str) -> bool {
    matches!(path, "/" | "/register" | "/token" | "/revoke" | "/health")
        || path.starts_with("/.well-known/")
}

/// Whether a request's `Accept` asks for a page (a browser opening the connector address)
/// rather than an MCP stream or JSON.
#[must_use]
pub fn asks_for_page(accept: &str) -> bool {
    accept.contains("text/html") && !accept.contains("text/event-stream")
}

/// The origin (`scheme://host[:port]`) of an absolute URL.
#[must_use]
pub fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
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

/// The most bytes of body a route reads (none for a route that takes no body): what an
/// outsider may send is refused past these, before it is held whole.
#[must_use]
pub fn body_cap(path: &str) -> usize {
    match path {
        "/register" => MAX_REGISTRATION_BYTES,
        "/token" | "/revoke" => MAX_FORM_BYTES,
        CODE_PATH => MAX_SEAL_BYTES,
        "/" => MAX_BODY_BYTES,
        _ => 0,
    }
}

/// A body larger than its route's [`body_cap`]: refused with 413.
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
}

impl CappedBody {
    /// A body about to be read with `cap`, refused at once when its `Content-Length` says it is
    /// larger (a length that does not read as a number is left to the stream to bound).
    pub fn start(cap: usize, content_length: Option<&str>) -> Result<Self, TooLarge> {
        let declared = content_length.and_then(|l| l.trim().parse::<u64>().ok());
        match declared {
            Some(n) if n > cap as u64 => Err(TooLarge { cap }),
            _ => Ok(Self { cap, bytes: Vec::new() }),
        }
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
        Some(self.buffer.drain(..=end).collect())
    }
}

/// Text safe inside HTML text and quoted attributes.
#[must_use]
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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
    fn a_browser_asks_for_a_page_and_an_mcp_client_does_not() {
        let browser =
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";
        assert!(asks_for_page(browser));
        for mcp in ["text/event-stream", "application/json, text/event-stream", "*/*", ""] {
            assert!(!asks_for_page(mcp), "{mcp}");
        }
    }

    #[test]
    fn each_route_says_its_methods_and_other_paths_none() {
        assert_eq!(allow("/").as_deref(), Some("POST"));
        for post in ["/register", "/token", "/revoke"] {
            assert_eq!(allow(post).as_deref(), Some("POST"), "{post}");
        }
        for get in [
            "/authorize",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server",
            "/health",
            "/tab",
            STATUS_PATH,
            WAIT_SCRIPT_PATH,
            CONFIRM_PATH,
        ] {
            assert_eq!(allow(get).as_deref(), Some("GET"), "{get}");
        }
        for none in ["/nope", "/token/", "/.well-known/other", "", "/Token"] {
            assert_eq!(allow(none), None, "{none}");
        }
    }

    #[test]
    fn the_routes_are_distinct_and_every_cors_path_is_one_but_the_unknown_well_knowns() {
        for (i, (path, methods)) in ROUTES.iter().enumerate() {
            assert!(ROUTES[..i].iter().all(|(p, _)| p != path), "{path} twice");
            assert!(!methods.is_empty() && !methods.contains(&"OPTIONS"), "{path}");
        }
        for path in ["/", "/register", "/token", "/revoke", "/health"] {
            assert!(is_cors_path(path) && allow(path).is_some(), "{path}");
        }
        assert!(!is_cors_path("/authorize") && !is_cors_path("/tab"), "pages stay closed");
        assert!(CORS_HEADERS.iter().all(|(k, _)| *k != "access-control-allow-methods"));
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
    fn a_body_is_refused_by_its_length_or_once_it_passes_its_cap_and_never_held_past_it() {
        let cap = body_cap("/token");
        assert_eq!(cap, MAX_FORM_BYTES);
        for path in ["/register", "/token", "/revoke", CODE_PATH, "/"] {
            assert!(body_cap(path) > 0 && body_cap(path) <= MAX_BODY_BYTES, "{path}");
        }
        assert_eq!(body_cap("/authorize"), 0, "a route that takes no body reads none");
        let over = (cap + 1).to_string();
        assert_eq!(CappedBody::start(cap, Some(&over)).unwrap_err(), TooLarge { cap });
        assert_eq!(
            CappedBody::start(cap, Some("104857600")).unwrap_err(),
            TooLarge { cap },
            "100 MB declared: refused before a byte is read"
        );
        // Within the cap, or no (or no readable) length: the stream is read, and bounded.
        for length in [Some("12"), None, Some("lots"), Some(&*cap.to_string())] {
            let mut body = CappedBody::start(cap, length).unwrap();
            body.take(&vec![b'a'; cap - 1]).unwrap();
            body.take(b"b").unwrap();
            assert_eq!(body.take(b"c"), Err(TooLarge { cap }), "{length:?}: one byte past the cap");
        }
        let mut body = CappedBody::start(cap, None).unwrap();
        body.take(b"grant_type=").unwrap();
        assert_eq!(body.take(&vec![0; cap]), Err(TooLarge { cap }), "a chunk past it is not kept");
        assert_eq!(body.into_bytes(), b"grant_type=");
    }

    #[test]
    fn cookies_bearers_and_html() {
        assert_eq!(cookie(Some("a=1; tr_x=abc; b=2"), "tr_x"), Some("abc"));
        assert_eq!(cookie(Some("tr_xy=abc"), "tr_x"), None);
        assert_eq!(bearer(Some("Bearer abc")), Some("abc"));
        assert_eq!(bearer(Some("bearer  abc ")), Some("abc"));
        assert_eq!(bearer(Some("Basic abc")), None);
        assert_eq!(bearer(Some("Bearer ")), None);
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
