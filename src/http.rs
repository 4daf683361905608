//! Small pure helpers over HTTP values: the routes and their methods, which handler answers a
//! request, the answers and their headers, a URL's origin, path and query, cookies, the bearer,
//! a body read with a cap.

use base64::Engine as _;
use serde_json::Value;

use crate::config::Config;
use crate::limits::{MAX_BODY_BYTES, MAX_FORM_BYTES, MAX_REGISTRATION_BYTES, MAX_SEAL_BYTES};
use crate::mcp::exchange::preflight_headers;
use crate::oauth::metadata;
use crate::pages::{self, CODE_PATH, STATUS_PATH, WAIT_SCRIPT_PATH};
use crate::sentences;
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

/// What answers a request: the routing table over [`ROUTES`], by method and path (and for
/// `GET /`, its `Accept` and whether it names a `Last-Event-ID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A CORS preflight on a [`is_cors_path`]: 204 (its headers are [`cors_headers`]).
    Preflight,
    /// `GET /health`: what answers here (the live check reads it).
    Health,
    /// RFC 9728's protected resource metadata.
    ProtectedResource,
    /// RFC 8414's authorization server metadata.
    AuthorizationServer,
    /// An OAuth endpoint or page: its saga ([`crate::oauth::saga::Saga::start`]) answers.
    OAuth,
    /// The waiting page's script.
    WaitScript,
    /// The tab's socket ([`crate::pairing::tab_socket`] checks it before the upgrade).
    Tab,
    /// The MCP endpoint: a POST, or (`resume`) a GET taking up a dropped stream (2025-11-25).
    Mcp {
        /// A GET naming the last event its client read.
        resume: bool,
    },
    /// The connector address opened in a browser: a page saying what it is (MCP: 405).
    ConnectorPage,
    /// A route asked with another method: 405 naming the ones it takes (its `Allow`).
    NotAllowed(String),
    /// No route.
    NotFound,
}

/// A request's method as the router reads it: a known one in upper case whatever its case,
/// and GET for one it does not know (as workers-rs named methods before the shell read the
/// platform's request itself).
#[must_use]
pub fn method(raw: &str) -> &'static str {
    const KNOWN: [&str; 9] =
        ["HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "REPORT"];
    KNOWN.into_iter().find(|m| m.eq_ignore_ascii_case(raw)).unwrap_or("GET")
}

/// Which [`Route`] answers `method` (upper case, as the runtime names it) on `path`.
#[must_use]
pub fn route(method: &str, path: &str, accept: Option<&str>, last_event_id: bool) -> Route {
    match (method, path) {
        ("OPTIONS", p) if is_cors_path(p) => Route::Preflight,
        ("GET", "/health") => Route::Health,
        ("GET", "/.well-known/oauth-protected-resource") => Route::ProtectedResource,
        ("GET", "/.well-known/oauth-authorization-server") => Route::AuthorizationServer,
        ("POST", "/register" | "/token" | "/revoke" | CODE_PATH)
        | ("GET", "/authorize" | STATUS_PATH | CONFIRM_PATH) => Route::OAuth,
        ("GET", WAIT_SCRIPT_PATH) => Route::WaitScript,
        ("GET", "/tab") => Route::Tab,
        ("POST", "/") => Route::Mcp { resume: false },
        ("GET", "/") if last_event_id => Route::Mcp { resume: true },
        ("GET", "/") if asks_for_page(accept.unwrap_or_default()) => Route::ConnectorPage,
        _ => allow(path).map_or(Route::NotFound, Route::NotAllowed),
    }
}

impl Route {
    /// The answer of a route answered from the configuration and the relay's `origin` alone;
    /// None for one that asks further (an OAuth saga, the tab's socket, the MCP endpoint).
    #[must_use]
    pub fn answer(&self, config: &Config, origin: &str) -> Option<Answer> {
        Some(match self {
            Self::Preflight => Answer::empty(204),
            // The version and the app say what answers here (the live check reads both).
            Self::Health => Answer::json(
                200,
                &crate::jsonrpc::object(&mut |o| {
                    o.field("ok", &true);
                    o.text("service", "tabrelay");
                    o.text("version", env!("CARGO_PKG_VERSION"));
                    o.text("app", &config.app_url);
                }),
            ),
            Self::ProtectedResource => Answer::json_text(200, metadata::protected_resource(origin)),
            Self::AuthorizationServer => {
                Answer::json_text(200, metadata::authorization_server(origin))
            }
            Self::WaitScript => Answer {
                status: 200,
                headers: owned(&[("content-type", "text/javascript"), NO_STORE]),
                body: Some(pages::WAIT_SCRIPT.into()),
            },
            Self::ConnectorPage => {
                Answer::page(200, pages::connector(&format!("{origin}/"), &config.app_url))
            }
            Self::NotAllowed(methods) => {
                Answer::text(405, &sentences::method_not_allowed(methods)).with("allow", methods)
            }
            Self::NotFound => Answer::not_found(),
            Self::OAuth | Self::Tab | Self::Mcp { .. } => return None,
        })
    }
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
const NO_STORE: (&str, &str) = ("cache-control", "no-store");

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
fn owned(headers: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    let mut owned = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        owned.push((*name, (*value).to_owned()));
    }
    owned
}

/// The CORS headers of any answer on `path` (none off a [`is_cors_path`]): [`CORS_HEADERS`];
/// on a preflight (`OPTIONS`) also the methods the path takes and the headers a browser may
/// send ([`PREFLIGHT_HEADERS`]; to the endpoint, `OPTIONS /`, with those of its `requested` it
/// may: [`preflight_headers`]). A browser reads those two from the preflight only (Fetch's CORS
/// check), so other answers go without them: 160 bytes less on each.
#[must_use]
pub fn cors_headers(
    path: &str,
    method: &str,
    requested: Option<&str>,
) -> Vec<(&'static str, String)> {
    if !is_cors_path(path) {
        return Vec::new();
    }
    let mut headers = owned(&CORS_HEADERS);
    if method != "OPTIONS" {
        return headers;
    }
    let allowed =
        if path == "/" { preflight_headers(requested) } else { PREFLIGHT_HEADERS.to_owned() };
    headers.push(("access-control-allow-headers", allowed));
    if let Some(methods) = allow(path) {
        headers.push(("access-control-allow-methods", methods));
    }
    headers
}

/// CORS headers for the MCP endpoint and the OAuth endpoints a browser-based client calls (a
/// preflight's `Access-Control-Allow-Methods` comes from [`allow`], per path). They
/// authenticate by bearer header, never by cookie, so any origin may read them.
pub const CORS_HEADERS: [(&str, &str); 2] = [
    ("access-control-allow-origin", "*"),
    ("access-control-expose-headers", "www-authenticate, mcp-session-id, mcp-protocol-version"),
];

/// The request headers a preflight allows (`Access-Control-Allow-Headers`).
pub const PREFLIGHT_HEADERS: &str = concat!(
    "authorization, content-type, accept, mcp-protocol-version, mcp-session-id, mcp-method, ",
    "mcp-name, last-event-id"
);

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
    fn a_method_is_read_whatever_its_case_and_an_unknown_one_as_get() {
        assert_eq!(method("POST"), "POST");
        assert_eq!(method("options"), "OPTIONS");
        assert_eq!(method("Delete"), "DELETE");
        assert_eq!(method("GET"), "GET");
        assert_eq!(method("BREW"), "GET");
        assert_eq!(route(method("head"), "/health", None, false), Route::NotAllowed("GET".into()));
    }

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

    fn config() -> Config {
        Config::for_tests()
    }

    const BROWSER: Option<&str> = Some("text/html,application/xhtml+xml,*/*;q=0.8");

    #[test]
    fn each_method_and_path_has_its_route() {
        let r = |method, path| route(method, path, None, false);
        assert_eq!(r("GET", "/health"), Route::Health);
        assert_eq!(r("GET", "/.well-known/oauth-protected-resource"), Route::ProtectedResource);
        assert_eq!(r("GET", "/.well-known/oauth-authorization-server"), Route::AuthorizationServer);
        for post in ["/register", "/token", "/revoke", CODE_PATH] {
            assert_eq!(r("POST", post), Route::OAuth, "{post}");
            assert_eq!(r("GET", post), Route::NotAllowed("POST".into()), "{post}");
        }
        for get in ["/authorize", STATUS_PATH, CONFIRM_PATH] {
            assert_eq!(r("GET", get), Route::OAuth, "{get}");
            assert_eq!(r("POST", get), Route::NotAllowed("GET".into()), "{get}");
        }
        assert_eq!(r("GET", WAIT_SCRIPT_PATH), Route::WaitScript);
        assert_eq!(r("GET", "/tab"), Route::Tab);
        assert_eq!(r("POST", "/tab"), Route::NotAllowed("GET".into()));
        assert_eq!(r("POST", "/"), Route::Mcp { resume: false });
        assert_eq!(r("HEAD", "/health"), Route::NotAllowed("GET".into()), "HEAD is no GET");
        assert_eq!(r("DELETE", "/"), Route::NotAllowed("POST".into()), "no session to delete");
        for none in ["/nope", "/token/", "/.well-known/other", "/Token"] {
            assert_eq!(r("GET", none), Route::NotFound, "{none}");
            assert_eq!(r("POST", none), Route::NotFound, "{none}");
        }
    }

    #[test]
    fn a_preflight_is_answered_on_the_api_routes_only() {
        for path in ["/", "/register", "/token", "/revoke", "/health", "/.well-known/other"] {
            assert_eq!(route("OPTIONS", path, None, false), Route::Preflight, "{path}");
        }
        assert_eq!(route("OPTIONS", "/authorize", None, false), Route::NotAllowed("GET".into()));
        assert_eq!(route("OPTIONS", "/tab", None, false), Route::NotAllowed("GET".into()));
        assert_eq!(route("OPTIONS", "/nope", None, false), Route::NotFound);
        let answer = Route::Preflight.answer(&config(), "https://relay.example").unwrap();
        assert_eq!(answer, Answer { status: 204, headers: Vec::new(), body: None });
    }

    #[test]
    fn a_get_of_the_endpoint_resumes_a_stream_shows_a_page_to_a_browser_or_is_refused() {
        assert_eq!(route("GET", "/", None, true), Route::Mcp { resume: true });
        assert_eq!(route("GET", "/", BROWSER, true), Route::Mcp { resume: true }, "resuming first");
        assert_eq!(route("GET", "/", BROWSER, false), Route::ConnectorPage);
        for mcp in [None, Some("text/event-stream"), Some("text/html, text/event-stream")] {
            assert_eq!(route("GET", "/", mcp, false), Route::NotAllowed("POST".into()), "{mcp:?}");
        }
        assert_eq!(route("POST", "/", BROWSER, true), Route::Mcp { resume: false });
    }

    #[test]
    fn the_routes_answered_at_once_say_what_they_are() {
        let (config, origin) = (config(), "https://relay.example");
        let health = Route::Health.answer(&config, origin).unwrap();
        assert_eq!((health.status, &health.headers), (200, &owned(&JSON_HEADERS)));
        let body: Value = serde_json::from_slice(&health.body.unwrap()).unwrap();
        assert_eq!(body["ok"], true);
        assert_eq!(body["service"], "tabrelay");
        assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(body["app"], "https://app.example/");
        let meta = Route::AuthorizationServer.answer(&config, origin).unwrap();
        let meta: Value = serde_json::from_slice(&meta.body.unwrap()).unwrap();
        assert_eq!(meta["issuer"], origin);
        let meta = Route::ProtectedResource.answer(&config, origin).unwrap();
        let meta: Value = serde_json::from_slice(&meta.body.unwrap()).unwrap();
        assert_eq!(meta["authorization_servers"][0], origin);
        let script = Route::WaitScript.answer(&config, origin).unwrap();
        assert_eq!(script.headers, owned(&[("content-type", "text/javascript"), NO_STORE]));
        assert_eq!(script.body.as_deref(), Some(pages::WAIT_SCRIPT.as_bytes()));
        for asks in [Route::OAuth, Route::Tab, Route::Mcp { resume: false }] {
            assert_eq!(asks.answer(&config, origin), None, "{asks:?}");
        }
    }

    #[test]
    fn a_page_is_never_framed_cached_or_scripted_from_elsewhere() {
        let page = Route::ConnectorPage.answer(&config(), "https://relay.example").unwrap();
        assert_eq!(page.status, 200);
        let header = |name| page.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str());
        assert_eq!(header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(header("cache-control"), Some("no-store"));
        assert_eq!(header("content-security-policy"), Some(pages::PAGE_CSP));
        assert!(pages::PAGE_CSP.contains("frame-ancestors 'none'"));
        assert_eq!(header("x-frame-options"), Some("DENY"));
        assert_eq!(header("referrer-policy"), Some("no-referrer"));
        let html = String::from_utf8(page.body.unwrap()).unwrap();
        assert!(html.contains("https://relay.example/"), "it names the connector address");
    }

    #[test]
    fn another_method_is_told_the_ones_its_route_takes_and_no_route_is_a_plain_404() {
        let refused = Route::NotAllowed("POST".into()).answer(&config(), "https://r.example");
        let refused = refused.unwrap();
        assert_eq!(refused.status, 405);
        assert_eq!(refused.headers, vec![("allow", "POST".to_owned())]);
        let sentence = sentences::method_not_allowed("POST");
        assert_eq!(refused.body.as_deref(), Some(sentence.as_bytes()));
        let missing = Route::NotFound.answer(&config(), "https://r.example").unwrap();
        assert_eq!(missing, Answer::text(404, "Not found."));
        assert!(missing.headers.is_empty(), "a sentence carries no header");
    }

    #[test]
    fn cors_headers_go_on_the_api_routes_with_their_methods_and_a_preflight_s_params() {
        for closed in ["/authorize", "/tab", WAIT_SCRIPT_PATH, "/nope"] {
            assert!(cors_headers(closed, "GET", None).is_empty(), "{closed}");
        }
        let header = |headers: &[(&str, String)], name| {
            let values: Vec<_> = headers.iter().filter(|(k, _)| *k == name).collect();
            assert!(values.len() <= 1, "{name} once");
            values.first().map(|(_, v)| v.clone())
        };
        let post = cors_headers("/", "POST", Some("mcp-param-x"));
        assert_eq!(header(&post, "access-control-allow-origin").as_deref(), Some("*"));
        for preflight_only in ["access-control-allow-methods", "access-control-allow-headers"] {
            assert_eq!(header(&post, preflight_only), None, "{preflight_only}");
        }
        let fixed = PREFLIGHT_HEADERS;
        let preflight = cors_headers("/", "OPTIONS", Some("Mcp-Param-Region, x-other"));
        let allowed = header(&preflight, "access-control-allow-headers").unwrap();
        assert_eq!(allowed, format!("{fixed}, mcp-param-region"));
        let token = cors_headers("/token", "OPTIONS", Some("mcp-param-x"));
        assert_eq!(header(&token, "access-control-allow-headers").as_deref(), Some(fixed));
        assert_eq!(header(&token, "access-control-allow-methods").as_deref(), Some("POST"));
        let known = cors_headers("/.well-known/oauth-authorization-server", "OPTIONS", None);
        assert_eq!(header(&known, "access-control-allow-methods").as_deref(), Some("GET"));
        let unknown = cors_headers("/.well-known/other", "OPTIONS", None);
        assert_eq!(header(&unknown, "access-control-allow-methods"), None);
        assert_eq!(header(&unknown, "access-control-allow-origin").as_deref(), Some("*"));
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
            let declared = length.is_some_and(|l| l.parse::<usize>().is_ok());
            assert_eq!(body.whole(), declared, "{length:?}: read whole only by a length declared");
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
