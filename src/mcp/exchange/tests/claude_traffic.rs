//! Claude's traffic as it is, not as the conformance suite sends it: each shape reported against
//! Claude's connector proxy and Claude Code (issue 29) is served, each test named after its
//! report, through the pair harness (the exchange and the real pairing on one clock).

use serde_json::{json, Value};

use super::{call_body, Pair, RequestHeaders, Run};
use crate::mcp::era::meta;
use crate::mcp::STATELESS_VERSION;

/// What a 2026-07-28 client says in every request's `_meta`.
fn stateless_meta(capabilities: Value) -> Value {
    json!({
        meta::PROTOCOL_VERSION: STATELESS_VERSION,
        meta::CLIENT_CAPABILITIES: capabilities,
        meta::CLIENT_INFO: {"name": "claude-code", "version": "2.1"},
    })
}

/// Headers naming `version` (None: no version header).
fn with_version(pair: &Pair, version: Option<&str>, stream: bool) -> RequestHeaders {
    RequestHeaders { version: version.map(str::to_owned), ..pair.headers(stream) }
}

/// Headers of a whole 2026-07-28 request of `method` (naming `name`, when the method does).
fn stateless(pair: &Pair, method: &str, name: Option<&str>) -> RequestHeaders {
    RequestHeaders {
        method: Some(method.into()),
        name: name.map(str::to_owned),
        ..with_version(pair, Some(STATELESS_VERSION), false)
    }
}

/// An `initialize` with `headers`, asking for 2025-11-25: the session id it is answered with.
fn initialize(pair: &mut Pair, headers: RequestHeaders) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1"}}});
    let run = pair.post(headers, body);
    let answer = run.seen.answer.as_ref().unwrap_or_else(|| panic!("{:?}", run.seen));
    assert_eq!(answer.status, 200, "{answer:?}");
    let session = answer.headers.iter().find(|(name, _)| *name == "mcp-session-id");
    session.unwrap_or_else(|| panic!("no session id: {answer:?}")).1.clone()
}

/// A call with `headers` and `body` the tab answers at once: the client's JSON answer.
fn called(pair: &mut Pair, headers: RequestHeaders, body: Value) -> (u16, Value) {
    let mut run = pair.post(headers, body);
    if run.seen.answer.is_none() {
        answer_last_call(pair, &mut run);
    }
    run.seen.json()
}

fn answer_last_call(pair: &mut Pair, run: &mut Run) {
    let call = pair.last_call();
    let result = format!(r#"{{"type":"result","id":{call},"data":{{"rows":3}}}}"#);
    pair.tab_says(&mut [run], &result);
}

/// A call's answer in the session era: the tab's result, with no `resultType` (a 2026-07-28
/// answer's mark).
fn answered_in_the_session_era(status: u16, body: &Value) {
    assert_eq!(status, 200, "{body}");
    let result = &body["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{body}"));
    assert!(text.contains("rows"), "the tab's own answer: {body}");
    assert!(result.get("resultType").is_none(), "read in the session era: {body}");
}

#[test]
fn claude_connector_meta_2026_under_a_session_header() {
    // Claude's connector proxy: `_meta` saying 2026-07-28 under `Mcp-Protocol-Version:
    // 2025-11-25`. The header says the era; the request is read in 2025-11-25.
    let mut pair = Pair::new();
    let mut body = call_body(1, stateless_meta(json!({})));
    body["params"]["_meta"]["progressToken"] = json!("p");
    let headers = with_version(&pair, Some("2025-11-25"), false);
    let (status, answer) = called(&mut pair, headers, body);
    answered_in_the_session_era(status, &answer);
    // The same in a session the proxy opened.
    let headers = with_version(&pair, Some("2025-11-25"), false);
    let session = initialize(&mut pair, headers);
    let headers =
        RequestHeaders { session: Some(session), ..with_version(&pair, Some("2025-11-25"), false) };
    let (status, answer) = called(&mut pair, headers, call_body(2, stateless_meta(json!({}))));
    answered_in_the_session_era(status, &answer);
}

#[test]
fn claude_code_session_with_stateless_header() {
    // Claude Code opens a session with `initialize`, then sends `Mcp-Protocol-Version:
    // 2026-07-28` and no `_meta` on every later request of it: read in the session's own
    // revision (2025-11-25), never refused for the `_meta` a stateless request would carry.
    let mut pair = Pair::new();
    let headers = pair.headers(false);
    let session = initialize(&mut pair, headers);
    let in_session = |pair: &Pair, method: Option<&str>, stream: bool| RequestHeaders {
        session: Some(session.clone()),
        method: method.map(str::to_owned),
        ..with_version(pair, Some(STATELESS_VERSION), stream)
    };
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for method in [None, Some("tools/list")] {
        let run = pair.post(in_session(&pair, method, false), list.clone());
        let (status, body) = run.seen.json();
        assert_eq!(status, 200, "{body}");
        assert!(body["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{body}");
        assert!(body["result"].get("resultType").is_none(), "{body}");
    }
    let headers = in_session(&pair, None, false);
    let (status, answer) = called(&mut pair, headers, call_body(2, json!({})));
    answered_in_the_session_era(status, &answer);
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let run = pair.post(in_session(&pair, Some("ping"), false), ping);
    assert_eq!(run.seen.json(), (200, json!({"jsonrpc": "2.0", "id": 3, "result": {}})));
    // A slow call's stream is its session revision's: resumable, so it opens with a priming
    // event (2025-11-25 streams), whatever the header says.
    let mut slow = pair.post(in_session(&pair, None, true), call_body(4, json!({})));
    pair.later(&mut [&mut slow], crate::limits::FIRST_EVENT_WAIT_MS);
    assert!(slow.seen.opened && !slow.seen.ids().is_empty(), "primed: {:?}", slow.seen.events);
    answer_last_call(&mut pair, &mut slow);
    let last = slow.seen.messages().pop().unwrap_or_else(|| panic!("{:?}", slow.seen));
    assert_eq!(last["id"], 4);
    assert!(last["result"].get("resultType").is_none(), "{last}");
    // A session the relay did not open (another connection's id) is told to initialize again.
    let other = crate::mcp::session::issue(
        &pair.config.keys,
        "g2",
        crate::mcp::session::Declared::default(),
        "2025-11-25",
    );
    let headers = RequestHeaders { session: Some(other), ..in_session(&pair, None, false) };
    let run = pair.post(headers, json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}));
    let (status, body) = run.seen.json();
    assert_eq!((status, &body["error"]["code"]), (404, &json!(-32001)), "{body}");
}

#[test]
fn claude_code_initialize_after_discover() {
    // Claude Code asks `server/discover` (a whole 2026-07-28 request), is answered, then opens a
    // session with `initialize` anyway, and calls in it.
    let mut pair = Pair::new();
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": stateless_meta(json!({}))}});
    let run = pair.post(stateless(&pair, "server/discover", None), discover);
    let (status, body) = run.seen.json();
    assert_eq!((status, &body["result"]["resultType"]), (200, &json!("complete")), "{body}");
    for header in [None, Some("2025-11-25")] {
        let headers = with_version(&pair, header, false);
        let session = initialize(&mut pair, headers);
        let headers = RequestHeaders {
            session: Some(session),
            ..with_version(&pair, Some("2025-11-25"), false)
        };
        let (status, answer) = called(&mut pair, headers, call_body(2, json!({})));
        answered_in_the_session_era(status, &answer);
    }
}

#[test]
fn claude_state_only_input_required_is_never_sent() {
    // Claude shows an `input_required` that carries only a `requestState` (no `inputRequests`)
    // as an error. The relay never sends one: a request the client cannot answer is left out,
    // and when none is left the client is told which capability the call needs (-32021).
    let mut pair = Pair::new();
    let asks = |call: u64| {
        json!({"type": "result", "id": call, "state": {"round": 1}, "input_required": {
            "name": {"method": "elicitation/create",
                     "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}}})
        .to_string()
    };
    let tool = super::tool();
    let call = |id, capabilities| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": {}, "_meta": stateless_meta(capabilities)}})
    };
    let headers = stateless(&pair, "tools/call", Some(&tool));
    let mut run = pair.post(headers.clone(), call(1, json!({})));
    let id = pair.last_call();
    pair.tab_says(&mut [&mut run], &asks(id));
    let (status, body) = run.seen.json();
    assert_eq!((status, &body["error"]["code"]), (400, &json!(-32021)), "{body}");
    assert!(body["error"]["data"]["requiredCapabilities"]["elicitation"].is_object(), "{body}");
    // A client that can answer gets the request itself beside the state.
    let mut run = pair.post(headers, call(2, json!({"elicitation": {}})));
    let id = pair.last_call();
    pair.tab_says(&mut [&mut run], &asks(id));
    let (status, body) = run.seen.json();
    let result = &body["result"];
    assert_eq!((status, &result["resultType"]), (200, &json!("input_required")), "{body}");
    assert!(result["requestState"].is_string(), "{body}");
    let requests = result["inputRequests"].as_object().unwrap_or_else(|| panic!("{body}"));
    assert_eq!(requests.keys().collect::<Vec<_>>(), ["name"], "{body}");
}
