//! The route table: every path the relay answers, the methods each takes ([`ROUTES`]), the
//! most body each reads ([`body_cap`]) and which are API routes (CORS, [`cors_headers`]); what
//! answers a request ([`route`]); and the answers made at once, from the configuration alone
//! ([`Route::answer`]).
//!
//! What path goes where is said here only, on the floor above the words and values it names
//! (the pages' paths, OAuth's discovery documents, the configuration, `http`'s answers) and
//! below the endpoint, which reads its own route's methods and body cap here, and the shells,
//! which ask [`route`] and write the answer. It was half of `http`, which imported the
//! endpoint, OAuth and the pages while each of them imported `http`.

use tabrelay_bundle::protocol::CONFIRM_PATH;

use crate::config::Config;
use crate::http::{owned, Answer, NO_STORE};
use crate::limits::{MAX_BODY_BYTES, MAX_FORM_BYTES, MAX_REGISTRATION_BYTES, MAX_SEAL_BYTES};
use crate::limits::{MAX_PREFLIGHT_PARAMS, MAX_PREFLIGHT_PARAM_NAME_BYTES};
use crate::oauth::metadata;
use crate::pages::{self, CODE_PATH, STATUS_PATH, WAIT_SCRIPT_PATH};
use crate::sentences;

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
    ROUTES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, methods)| tabrelay_bundle::joined(methods, ", "))
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
    /// An OAuth endpoint or page: its saga ([`crate::saga::Saga::start`]) answers.
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
    crate::text::find(accept, "text/html").is_some()
        && crate::text::find(accept, "text/event-stream").is_none()
}

/// The `Access-Control-Allow-Headers` of a CORS preflight to the endpoint: the fixed ones
/// ([`PREFLIGHT_HEADERS`]), and each `Mcp-Param-{Name}` the browser asks to send
/// (`requested`, its `Access-Control-Request-Headers`): a tool's `x-mcp-header` names them, so
/// no fixed list can, and the endpoint checks each against the tool's arguments.
#[must_use]
pub fn preflight_headers(requested: Option<&str>) -> String {
    let mut allowed = PREFLIGHT_HEADERS.to_owned();
    let mut named: Vec<String> = Vec::new();
    for name in requested.unwrap_or_default().split(',').map(str::trim) {
        let lower = name.to_ascii_lowercase();
        let Some(param) = lower.strip_prefix("mcp-param-") else { continue };
        let well_formed = !param.is_empty()
            && lower.len() <= MAX_PREFLIGHT_PARAM_NAME_BYTES
            && param.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if well_formed && !named.contains(&lower) && named.len() < MAX_PREFLIGHT_PARAMS {
            allowed.push_str(", ");
            allowed.push_str(&lower);
            named.push(lower);
        }
    }
    allowed
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{method, CappedBody, TooLarge, JSON_HEADERS};
    use serde_json::Value;

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
}
