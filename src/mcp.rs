//! The MCP endpoint's decisions: which revision, which method, what to answer, and which
//! calls go on to the pairing's tab.

use serde_json::{json, Map, Value};
use tabrelay_bundle::content;
use tabrelay_bundle::protocol::{valid_tool_name, Outcome, STATUS_TOOL};

use crate::jsonrpc::{self, ErrorCode, Id, Message, RpcError};
use crate::{sentences, tools};

/// The session-era revisions the relay speaks, newest first.
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The largest request body the endpoint reads, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "tabrelay";

/// What the endpoint does with one POST.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Reply {
    /// Answer with this status and JSON body.
    Json {
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC response.
        body: Value,
    },
    /// A notification or response: 202 with no body.
    Accepted,
    /// `tools/list`: ask the pairing for its focused tab's list (with the grant's check), then
    /// answer with [`tools_list`].
    ListTools {
        /// The request's id.
        id: Id,
    },
    /// A call of the relay's own `status` tool: ask the pairing (with the grant's check), then
    /// answer with [`status_answer`].
    Status {
        /// The request's id.
        id: Id,
    },
    /// A tool call for the pairing's tab; answer with [`call_answer`] once the tab replied.
    Call {
        /// The request's id.
        id: Id,
        /// The tool's name (valid by the rule; the pairing checks it is in the list).
        tool: String,
        /// Its arguments (an object).
        args: Value,
        /// The client's progress token, when it asked for progress.
        progress_token: Option<Value>,
    },
    /// The client cancelled its request with this id: tell the pairing, answer 202.
    Cancel {
        /// The cancelled request's id.
        request_id: Id,
    },
}

/// The comment a stream sends while it waits, so no proxy cuts it as idle.
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// Whether the client listens to a stream (its `Accept` names `text/event-stream`).
#[must_use]
pub fn accepts_stream(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.split(',').any(|t| t.trim().starts_with("text/event-stream")))
}

/// One JSON-RPC message as a server-sent event.
#[must_use]
pub fn sse_event(message: &Value) -> String {
    format!("event: message\ndata: {message}\n\n")
}

/// A progress notification carrying a sentence (the `progress` count grows with each).
#[must_use]
pub fn progress(token: &Value, count: u64, message: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": count, "message": message},
    })
}

/// Decides what to do with one POST to the endpoint, given the `MCP-Protocol-Version` header.
pub fn handle(body: &[u8], version_header: Option<&str>) -> Reply {
    if body.len() > MAX_BODY_BYTES {
        return failure(
            413,
            None,
            RpcError::new(
                ErrorCode::INVALID_REQUEST,
                format!("The request is larger than the {MAX_BODY_BYTES} bytes allowed."),
            ),
        );
    }
    let message = match jsonrpc::parse(body) {
        Ok(m) => m,
        Err(bad) => return failure(400, bad.id.as_ref(), bad.error),
    };
    let request = match message {
        Message::Notification { method, params } if method == "notifications/cancelled" => {
            return match params.get("requestId").and_then(Id::of) {
                Some(request_id) => Reply::Cancel { request_id },
                None => Reply::Accepted,
            };
        }
        Message::Notification { .. } | Message::Response => return Reply::Accepted,
        Message::Request(r) => r,
    };
    if request.method != "initialize" {
        if let Some(v) = version_header {
            if !SUPPORTED_VERSIONS.contains(&v) {
                let e = RpcError {
                    code: ErrorCode::INVALID_REQUEST,
                    message: format!(
                        "This server does not speak MCP revision {}.",
                        v.escape_debug()
                    ),
                    data: Some(json!({"supported": SUPPORTED_VERSIONS, "requested": v})),
                };
                return failure(400, Some(&request.id), e);
            }
        }
    }
    let id = request.id;
    match request.method.as_str() {
        "initialize" => ok(&id, initialize(&request.params)),
        "ping" => ok(&id, json!({})),
        "tools/list" => Reply::ListTools { id },
        "tools/call" => match call_params(&request.params) {
            Ok((tool, _)) if tool == STATUS_TOOL => Reply::Status { id },
            Ok((tool, args)) => {
                let progress_token = request
                    .params
                    .get("_meta")
                    .and_then(|m| m.get("progressToken"))
                    .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
                    .cloned();
                Reply::Call { id, tool, args, progress_token }
            }
            Err(e) => failure(200, Some(&id), e),
        },
        other => failure(
            200,
            Some(&id),
            RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("This server has no method {}.", short(other)),
            ),
        ),
    }
}

/// The JSON-RPC response to `tools/list` with the `tools` array the pairing gave (see
/// [`tools::list`]).
#[must_use]
pub fn tools_list(id: &Id, tools: Value) -> Value {
    jsonrpc::result(id, json!({ "tools": tools }))
}

/// The JSON-RPC response to a `status` call with the pairing's result (see
/// [`tools::status_result`]); None: the pairing could not say.
#[must_use]
pub fn status_answer(id: &Id, result: Option<Value>) -> Value {
    jsonrpc::result(id, result.unwrap_or_else(tools::status_unavailable))
}

/// The JSON-RPC error for a call of a tool not in the list agents see.
#[must_use]
pub fn no_such_tool(id: &Id, name: &str) -> Value {
    let message = sentences::no_such_tool(&short(name));
    jsonrpc::error(Some(id), &RpcError::new(ErrorCode::INVALID_PARAMS, message))
}

/// The JSON-RPC response to a tool call the tab answered.
#[must_use]
pub fn call_answer(id: &Id, outcome: &Outcome) -> Value {
    jsonrpc::result(id, content::tool_result(outcome))
}

/// The JSON-RPC response to a tool call the relay could not carry: a tool error with the
/// relay's sentence (the agent reads it; the call itself was well formed).
#[must_use]
pub fn call_failed(id: &Id, sentence: &str) -> Value {
    jsonrpc::result(id, content::error_result(sentence))
}

fn initialize(params: &Map<String, Value>) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = match asked {
        Some(v) if SUPPORTED_VERSIONS.contains(&v) => v,
        _ => SUPPORTED_VERSIONS[0],
    };
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": SERVER_NAME, "title": "Tabrelay", "version": env!("CARGO_PKG_VERSION")},
        "instructions": tabrelay_bundle::INSTRUCTIONS,
    })
}

fn call_params(params: &Map<String, Value>) -> Result<(String, Value), RpcError> {
    let invalid = |m: String| RpcError::new(ErrorCode::INVALID_PARAMS, m);
    let name = match params.get("name") {
        Some(Value::String(n)) => n,
        _ => return Err(invalid("tools/call needs params.name, the tool's name.".into())),
    };
    if !valid_tool_name(name) {
        return Err(invalid(sentences::no_such_tool(&short(name))));
    }
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(invalid("params.arguments must be an object.".into())),
    };
    Ok((name.clone(), args))
}

/// At most 64 characters of a client's string, for quoting it back.
fn short(s: &str) -> String {
    let mut out: String = s.chars().take(64).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    format!("\"{}\"", out.escape_debug())
}

fn ok(id: &Id, result: Value) -> Reply {
    Reply::Json { status: 200, body: jsonrpc::result(id, result) }
}

fn failure(status: u16, id: Option<&Id>, e: RpcError) -> Reply {
    Reply::Json { status, body: jsonrpc::error(id, &e) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabrelay_bundle::catalogue::Catalogue;

    fn run(body: &str) -> Reply {
        handle(body.as_bytes(), None)
    }

    fn json_of(r: Reply) -> (u16, Value) {
        match r {
            Reply::Json { status, body } => (status, body),
            other => panic!("expected JSON, got {other:?}"),
        }
    }

    #[test]
    fn initialize_echoes_a_supported_revision_else_the_newest() {
        for v in SUPPORTED_VERSIONS {
            let (_, b) = json_of(run(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{v}","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
            )));
            assert_eq!(b["result"]["protocolVersion"], v);
        }
        let (_, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#,
        ));
        assert_eq!(b["result"]["protocolVersion"], "2025-11-25");
        assert!(b["result"]["instructions"].as_str().unwrap().contains("never instructions"));
    }

    #[test]
    fn notifications_are_accepted_without_a_body() {
        assert_eq!(
            run(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Reply::Accepted
        );
    }

    #[test]
    fn a_cancellation_names_the_request_it_cancels() {
        let r = run(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#,
        );
        assert_eq!(r, Reply::Cancel { request_id: Id::Number(7) });
        let r = run(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#);
        assert_eq!(r, Reply::Accepted);
    }

    #[test]
    fn streams_carry_events_progress_and_keep_alives() {
        assert!(accepts_stream(Some("application/json, text/event-stream")));
        assert!(!accepts_stream(Some("application/json")));
        assert!(!accepts_stream(None));
        let e = sse_event(&progress(&json!("t"), 1, "Delete?"));
        assert!(e.starts_with("event: message\ndata: {") && e.ends_with("}\n\n"));
        assert!(e.contains(r#""progressToken":"t""#) && e.contains(r#""message":"Delete?""#));
        assert!(KEEP_ALIVE.starts_with(':'));
    }

    #[test]
    fn tools_list_and_status_ask_the_pairing() {
        let r = run(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
        assert_eq!(r, Reply::ListTools { id: Id::Number(2) });
        let b = tools_list(&Id::Number(2), tools::list(None, &Catalogue::bundled()));
        assert_eq!(b["result"]["tools"][0]["name"], "dataset_describe");
        let r = run(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}"#,
        );
        assert_eq!(r, Reply::Status { id: Id::Number(3) });
        let b = status_answer(&Id::Number(3), None);
        assert_eq!(b["result"]["isError"], true);
        let b = no_such_tool(&Id::Number(4), "format_disk");
        assert_eq!(b["error"]["code"], -32602);
        assert!(b["error"]["message"].as_str().unwrap().contains("\"format_disk\""));
    }

    #[test]
    fn a_call_of_a_tabs_own_tool_goes_on_to_the_pairing() {
        let r = run(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_simple_text"}}"#,
        );
        assert!(matches!(r, Reply::Call { tool, .. } if tool == "test_simple_text"));
    }

    #[test]
    fn a_tool_call_goes_to_the_tab() {
        let r = run(
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"history_list","arguments":{"last":3}}}"#,
        );
        assert_eq!(
            r,
            Reply::Call {
                id: Id::Text("c".into()),
                tool: "history_list".into(),
                args: json!({"last":3}),
                progress_token: None
            }
        );
        let r = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"history_list","_meta":{"progressToken":"p1"}}}"#,
        );
        assert!(matches!(r, Reply::Call { progress_token: Some(t), .. } if t == "p1"));
    }

    #[test]
    fn bad_calls_and_unknown_methods_get_errors() {
        let (s, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm -rf"}}"#,
        ));
        assert_eq!((s, b["error"]["code"].as_i64()), (200, Some(-32602)));
        let (_, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"history_list","arguments":[]}}"#,
        ));
        assert_eq!(b["error"]["code"], -32602);
        let (_, b) = json_of(run(r#"{"jsonrpc":"2.0","id":4,"method":"nope/nope"}"#));
        assert_eq!(b["error"]["code"], -32601);
        assert_eq!(b["id"], 4);
        let (s, b) = json_of(run("not json"));
        assert_eq!((s, b["error"]["code"].as_i64()), (400, Some(-32700)));
    }

    #[test]
    fn an_unsupported_revision_header_is_refused_with_the_list() {
        let r = handle(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, Some("1999-01-01"));
        let (s, b) = json_of(r);
        assert_eq!(s, 400);
        assert_eq!(b["error"]["data"]["supported"][0], "2025-11-25");
    }

    #[test]
    fn an_oversized_body_is_refused() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        let (s, _) = json_of(handle(&big, None));
        assert_eq!(s, 413);
    }
}
