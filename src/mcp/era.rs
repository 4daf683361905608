//! Which revision a request speaks, read from its `MCP-Protocol-Version` header and its
//! `params._meta`, never from its method name: the session era (2025-03-26 to 2025-11-25,
//! `initialize` first) or the stateless 2026-07-28 revision (every request carries its
//! revision, its client's capabilities and routing headers).

use serde_json::{Map, Value};

use crate::jsonrpc::{object, ErrorCode, RpcError, Texts};
use crate::sentences::{name_param_missing, SESSION_NOT_FOUND};

/// The stateless revision.
pub const STATELESS_VERSION: &str = "2026-07-28";
/// The session-era revisions the relay speaks, newest first.
pub const SESSION_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// Every revision the relay speaks, newest first (what `server/discover` lists and an
/// unsupported revision is told).
pub const ALL_VERSIONS: [&str; 4] = [STATELESS_VERSION, "2025-11-25", "2025-06-18", "2025-03-26"];

/// The `_meta` keys of the stateless revision.
pub mod meta {
    /// The request's revision.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's name and version.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The server's name and version, on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The listen request a notification belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
}

/// Error codes of the stateless revision.
pub mod codes {
    use crate::jsonrpc::ErrorCode;
    /// A routing header is missing or disagrees with the body.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare.
    pub const MISSING_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The revision asked for is not one the relay speaks.
    pub const UNSUPPORTED_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The headers that say how to read a request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Headers<'a> {
    /// `MCP-Protocol-Version`.
    pub version: Option<&'a str>,
    /// `Mcp-Method`.
    pub method: Option<&'a str>,
    /// `Mcp-Name`.
    pub name: Option<&'a str>,
    /// `Mcp-Session-Id` (the session era; see [`super::session`]).
    pub session: Option<&'a str>,
    /// Every `Mcp-Param-{Name}` header, `name` (lowercased) → raw value as a JSON string: the
    /// arguments a tool's `x-mcp-header` says its client mirrors (see
    /// [`crate::tools::param_header_mismatch`]).
    pub params: Option<&'a Map<String, Value>>,
}

/// What a request said about its revision and client.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// The session era: `initialize` negotiated the revision (absent header: 2025-03-26).
    Session,
    /// The stateless revision: the request carried everything.
    Stateless {
        /// The client's declared capabilities.
        capabilities: Map<String, Value>,
        /// The client's name, when it said (`clientInfo.name`).
        client_name: Option<String>,
    },
}

impl Era {
    /// Whether this is the stateless revision.
    #[must_use]
    pub fn is_stateless(&self) -> bool {
        matches!(self, Era::Stateless { .. })
    }

    /// Whether the client declared a capability (always true in the session era, where the
    /// relay asks the client nothing).
    #[must_use]
    pub fn declared(&self, capability: &str) -> bool {
        match self {
            Era::Session => true,
            Era::Stateless { capabilities, .. } => capabilities.contains_key(capability),
        }
    }
}

/// A refusal: the HTTP status and the JSON-RPC error.
pub type Refused = (u16, RpcError);

/// Reads the era of a request from its headers and params; a request that breaks its
/// revision's rules is refused with that revision's status and code.
pub fn read(
    headers: &Headers<'_>,
    method: &str,
    params: &Map<String, Value>,
) -> Result<Era, Refused> {
    let meta = params.get("_meta");
    let stated = meta.and_then(|m| m.get(meta::PROTOCOL_VERSION)).and_then(Value::as_str);
    let era = match headers.version.map(str::trim) {
        Some(v) if SESSION_VERSIONS.contains(&v) => Era::Session,
        Some(STATELESS_VERSION) => stateless(headers, meta)?,
        Some(other) => return Err(unsupported(other)),
        // No header: a stateless request still says its revision in `_meta`.
        None if stated.is_some() => {
            return Err(mismatch(crate::sentences::VERSION_HEADER_MISSING.into()))
        }
        None => Era::Session,
    };
    routed(headers, method, params, era.is_stateless())?;
    Ok(era)
}

/// A 2026-07-28 request's `_meta` read: its revision, the client's capabilities and name.
fn stateless(headers: &Headers<'_>, meta: Option<&Value>) -> Result<Era, Refused> {
    let invalid = |m: &str| (400, RpcError::new(ErrorCode::INVALID_PARAMS, m));
    let Some(Value::Object(meta)) = meta else {
        // A session client's request (a session the relay opened is read in its own revision
        // before this): its session is not the relay's (any more), so it initializes again.
        if headers.session.is_some() {
            let e = RpcError::new(super::session::SESSION_NOT_FOUND, SESSION_NOT_FOUND);
            return Err((404, e));
        }
        return Err(invalid(crate::sentences::META_MISSING));
    };
    let Some(Value::String(stated)) = meta.get(meta::PROTOCOL_VERSION) else {
        return Err(invalid(crate::sentences::META_VERSION_MISSING));
    };
    let Some(Value::Object(capabilities)) = meta.get(meta::CLIENT_CAPABILITIES) else {
        return Err(invalid(crate::sentences::META_CAPABILITIES_MISSING));
    };
    if stated != STATELESS_VERSION {
        let said = crate::sentences::version_mismatch(STATELESS_VERSION, &quote(stated));
        return Err(mismatch(said));
    }
    let client_name = meta
        .get(meta::CLIENT_INFO)
        .and_then(|i| i.get("name"))
        .and_then(Value::as_str)
        .map(|n| n.chars().take(100).collect());
    Ok(Era::Stateless { capabilities: capabilities.clone(), client_name })
}

/// Checks the routing headers (`Mcp-Method`, `Mcp-Name`) against the body: a stateless
/// request (`required`) must carry them; in the session era they are optional, but one that is
/// sent must agree too, so nothing routing or filtering by header (a gateway) is told one
/// request and the relay runs another.
fn routed(
    headers: &Headers<'_>,
    method: &str,
    params: &Map<String, Value>,
    required: bool,
) -> Result<(), Refused> {
    match headers.method.map(str::trim) {
        Some(m) if m != method => {
            return Err(mismatch(crate::sentences::method_mismatch(&quote(m), &quote(method))))
        }
        None if required => return Err(mismatch(crate::sentences::METHOD_HEADER_MISSING.into())),
        _ => {}
    }
    let Some(field) = named_by(method) else { return Ok(()) };
    let body_name = params.get(field).and_then(Value::as_str);
    if required && body_name.is_none() {
        let e = RpcError::new(ErrorCode::INVALID_PARAMS, name_param_missing(method, field));
        return Err((400, e));
    }
    match headers.name.map(crate::http::header_value) {
        Some(h) if h.as_deref() != body_name => {
            Err(mismatch(crate::sentences::name_mismatch(field)))
        }
        None if required => Err(mismatch(crate::sentences::name_header_missing(method))),
        _ => Ok(()),
    }
}

/// The params field a method's `Mcp-Name` header mirrors.
fn named_by(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // The tasks extension's methods name their task (SEP-2663).
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

fn mismatch(message: String) -> Refused {
    (400, RpcError::new(codes::HEADER_MISMATCH, message))
}

/// The refusal of a revision the relay does not speak, with the ones it does.
#[must_use]
pub fn unsupported(requested: &str) -> Refused {
    (
        400,
        RpcError {
            code: codes::UNSUPPORTED_VERSION,
            message: crate::sentences::unsupported_revision(&quote(requested)),
            data: Some(object(&mut |o| {
                o.field("supported", &Texts(&ALL_VERSIONS));
                o.text("requested", requested);
            })),
        },
    )
}

/// At most 64 characters of a client's string, quoted, for saying it back: escaped as `{:?}`
/// of a str escapes (quotes, backslashes, control, unprintable and combining characters), by
/// char's `escape_debug`, which the wasm has anyway, not str's `Debug` (0.4 KiB more).
#[must_use]
pub fn quote(s: &str) -> String {
    let mut out = String::from('"');
    let mut chars = s.chars();
    for c in chars.by_ref().take(64) {
        // A str's Debug leaves a single quote as it is; char's escape writes it `\'`.
        if c == '\'' {
            out.push(c);
        } else {
            out.extend(c.escape_debug());
        }
    }
    if chars.next().is_some() {
        out.push('…');
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(version: &str) -> Map<String, Value> {
        let v = json!({"name": "x", "_meta": {
            meta::PROTOCOL_VERSION: version,
            meta::CLIENT_CAPABILITIES: {"elicitation": {}},
            meta::CLIENT_INFO: {"name": "probe", "version": "1"},
        }});
        v.as_object().unwrap().clone()
    }

    fn modern<'a>(method: &'a str, name: Option<&'a str>) -> Headers<'a> {
        Headers {
            version: Some(STATELESS_VERSION),
            method: Some(method),
            name,
            ..Headers::default()
        }
    }

    fn code(r: Result<Era, Refused>) -> (u16, i32) {
        let (s, e) = r.unwrap_err();
        (s, e.code.0)
    }

    #[test]
    fn the_session_era_is_the_default_and_its_headers() {
        assert_eq!(read(&Headers::default(), "tools/list", &Map::new()), Ok(Era::Session));
        for v in SESSION_VERSIONS {
            let h = Headers { version: Some(v), ..Headers::default() };
            assert_eq!(read(&h, "tools/list", &meta(STATELESS_VERSION)), Ok(Era::Session));
        }
    }

    #[test]
    fn a_stateless_request_says_everything() {
        let era = read(&modern("tools/call", Some("x")), "tools/call", &meta(STATELESS_VERSION));
        let Ok(Era::Stateless { capabilities, client_name }) = era else { panic!("{era:?}") };
        assert!(capabilities.contains_key("elicitation"));
        assert_eq!(client_name.as_deref(), Some("probe"));
        // Whitespace around the name and base64 both read.
        let ok = |n: &str| {
            read(&modern("tools/call", Some(n)), "tools/call", &meta(STATELESS_VERSION)).is_ok()
        };
        assert!(ok("  x\t") && ok("=?base64?eA==?="));
        assert!(!ok("y") && !ok("=?base64?!!?="));
    }

    #[test]
    fn broken_rules_get_their_codes() {
        let p = meta(STATELESS_VERSION);
        assert_eq!(code(read(&modern("tools/call", None), "tools/call", &p)), (400, -32020));
        assert_eq!(code(read(&modern("tools/list", None), "tools/call", &p)), (400, -32020));
        let no_method = Headers { method: None, ..modern("tools/list", None) };
        assert_eq!(code(read(&no_method, "tools/list", &p)), (400, -32020));
        assert_eq!(
            code(read(&modern("tools/list", None), "tools/list", &meta("v9"))),
            (400, -32020)
        );
        assert_eq!(
            code(read(&modern("tools/list", None), "tools/list", &Map::new())),
            (400, -32602)
        );
        let mut no_caps = meta(STATELESS_VERSION);
        no_caps["_meta"].as_object_mut().unwrap().remove(meta::CLIENT_CAPABILITIES);
        assert_eq!(code(read(&modern("tools/list", None), "tools/list", &no_caps)), (400, -32602));
        // Stated in _meta but no header.
        assert_eq!(code(read(&Headers::default(), "tools/list", &p)), (400, -32020));
        let odd = Headers { version: Some("v999.0.0"), ..modern("server/discover", None) };
        let (s, e) = read(&odd, "server/discover", &meta("v999.0.0")).unwrap_err();
        assert_eq!((s, e.code.0), (400, -32022));
        assert_eq!(e.data.unwrap()["requested"], "v999.0.0");
    }

    #[test]
    fn a_session_era_request_may_leave_out_the_routing_headers_but_never_contradict_them() {
        let call = || json!({"name": "history_list"}).as_object().unwrap().clone();
        for version in [None, Some("2025-11-25")] {
            let with = |method, name| Headers { version, method, name, ..Headers::default() };
            let read_as = |h: &Headers<'_>| read(h, "tools/call", &call());
            assert_eq!(read_as(&with(None, None)), Ok(Era::Session));
            assert_eq!(read_as(&with(Some("tools/call"), Some("history_list"))), Ok(Era::Session));
            // A gateway that routes or filters by header is never told one request while the
            // relay runs another.
            let (status, e) = read_as(&with(Some("tools/list"), None)).unwrap_err();
            assert_eq!((status, e.code.0), (400, -32020));
            assert!(e.message.contains("\"tools/list\""), "{}", e.message);
            assert_eq!(code(read_as(&with(None, Some("items_delete")))), (400, -32020));
            let no_name = Map::new();
            let named = with(Some("tools/call"), Some("history_list"));
            assert_eq!(code(read(&named, "tools/call", &no_name)), (400, -32020));
        }
    }

    #[test]
    fn a_session_client_whose_session_is_gone_is_told_to_initialize_again() {
        // What Claude Code sends in a session (the header 2026-07-28, no `_meta`), its id not
        // one the relay gave this connection: 404 -32001, as in its own revision.
        let gone = Headers { session: Some("1c.x"), ..modern("tools/list", None) };
        let (status, e) = read(&gone, "tools/list", &Map::new()).unwrap_err();
        assert_eq!((status, e.code.0), (404, -32001));
        // Without an id it is a stateless request that left out its `_meta`.
        assert_eq!(
            code(read(&modern("tools/list", None), "tools/list", &Map::new())),
            (400, -32602)
        );
        // With its `_meta`, an id is no concern of the stateless revision.
        let stateless = Headers { session: Some("1c.x"), ..modern("tools/list", None) };
        assert!(read(&stateless, "tools/list", &meta(STATELESS_VERSION)).is_ok());
    }

    #[test]
    fn a_quote_escapes_as_a_strs_debug_does() {
        let odd = "it's \"x\" \\ \t\n\r\0\u{7f}\u{1b} é\u{301} \u{202e}\u{200b}\u{feff}\u{2028} 👍🏽 \u{e000}";
        let long = "a\u{301}".repeat(40);
        for s in ["", "plain", odd, &long, &"é".repeat(64), &"é".repeat(65)] {
            let mut kept: String = s.chars().take(64).collect();
            if kept.len() < s.len() {
                kept.push('…');
            }
            assert_eq!(quote(s), format!("{kept:?}"), "{s}");
        }
        let every: String =
            (0..0x3100).chain(0x1F000..0x1F700).filter_map(char::from_u32).collect();
        for piece in every.chars().collect::<Vec<_>>().chunks(64) {
            let s: String = piece.iter().collect();
            assert_eq!(quote(&s), format!("{s:?}"));
        }
    }
}
