//! The MCP endpoint's decisions: which revision, which method, what to answer, and which
//! calls go on to the pairing's tab.

pub mod asking;
pub mod clients;
pub mod era;
pub mod exchange;
pub mod input;
pub mod logging;
pub mod resume;
pub mod session;
pub mod tasks;
pub mod view;

use serde_json::{Map, Value};
use tabrelay_bundle::content;
use tabrelay_bundle::fields::Object;
use tabrelay_bundle::protocol::{valid_tool_name, Outcome, INPUT_METHODS, STATUS_TOOL};

pub use era::{Era, Headers, ALL_VERSIONS, SESSION_VERSIONS, STATELESS_VERSION};

use crate::jsonrpc::{self, object, put, put_meta, ErrorCode, Id, Message, Raw, RpcError, Texts};
use crate::keys::Keys;
use crate::limits::{MAX_BATCH, MAX_BODY_BYTES, RESOURCES_TTL_MS, TOOLS_TTL_MS};
use crate::pairing::tasks::declared as takes_tasks;
use crate::pairing::wire::{CallReply, TaskTerms};
use crate::{sentences, tools};
use era::quote;
use exchange::call::ToolsCall;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "tabrelay";

/// What the endpoint does with one POST.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Reply {
    /// A JSON-RPC answer in a 200 (a result, or an error the session era sends so): sent once
    /// the pairing says the grant is live, as every answer the connection earns.
    Granted(Value),
    /// Refuse the request as read, with this status and JSON body (no pairing asked).
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
        /// The revision it came in.
        era: Era,
    },
    /// A call of the relay's own `status` tool: ask the pairing (with the grant's check), then
    /// answer with [`status_answer`].
    Status {
        /// The request's id.
        id: Id,
        /// The revision it came in.
        era: Era,
    },
    /// A tool call for the pairing's tab; answer with [`call_answer`] once the tab replied.
    Call(ToolsCall),
    /// A tasks method (`tasks/get`, `tasks/update`, `tasks/cancel`; 2025-11-25's
    /// `tasks/result`): ask the pairing, then answer as [`tasks::answer`] says.
    Task(tasks::TaskRequest),
    /// The client cancelled its request with this id: tell the pairing, answer 202.
    Cancel {
        /// The cancelled request's id.
        request_id: Id,
    },
    /// `subscriptions/listen` (2026-07-28): a stream acknowledged at once, then the
    /// notifications asked for, until the client closes it.
    Listen {
        /// The listen request's id (every message on the stream names it).
        id: Id,
        /// Whether the client asked to hear that the tool list changed.
        tools: bool,
    },
    /// A session-era `initialize`: answer with `body` (after the grant's check) and an
    /// `Mcp-Session-Id` that carries what the client declared and the revision it negotiated
    /// ([`session::issue`]).
    Initialize {
        /// The JSON-RPC response.
        body: Value,
        /// Which of the relay's questions the client can take.
        declared: session::Declared,
        /// The revision negotiated.
        revision: &'static str,
    },
    /// The client's answer to a question the relay asked it (a JSON-RPC response whose id is
    /// the relay's): to the pairing, where the call waits for it; 202 when taken.
    Answer {
        /// The question's id.
        id: String,
        /// What came back ([`Message::Response`]).
        answer: Value,
    },
}

/// A retried call's `requestState` and `inputResponses`, still sealed ([`input::resume`]
/// opens them).
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    /// `params.requestState`, as the relay gave it (a client may retry without it: the tab
    /// then gets the responses alone).
    pub state: Option<String>,
    /// `params.inputResponses`.
    pub responses: Value,
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
    let json = tabrelay_bundle::fields::json_text(message);
    tabrelay_bundle::joined(&["event: message\ndata: ", &json, "\n\n"], "")
}

/// A progress notification carrying a sentence (the `progress` count grows with each).
#[must_use]
pub fn progress(token: &Value, count: u64, message: &str) -> Value {
    object(&mut |o| {
        o.text("jsonrpc", "2.0");
        o.text("method", "notifications/progress");
        let mut params = o.nested("params");
        params.field("progressToken", token);
        params.field("progress", &count);
        params.text("message", message);
        params.close();
    })
}

/// Whether a value can be a progress token: a string or a whole number.
#[must_use]
pub fn is_progress_token(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Number(n) => !n.is_f64(),
        _ => false,
    }
}

/// The server's name and version.
fn server_info() -> Value {
    object(&mut |o| {
        o.text("name", SERVER_NAME);
        o.text("title", "Tabrelay");
        o.text("version", env!("CARGO_PKG_VERSION"));
    })
}

/// `_meta` saying who answered.
fn answered_by() -> Value {
    object(&mut |o| o.field(era::meta::SERVER_INFO, &server_info()))
}

/// A result as its revision shapes it: in 2026-07-28 it says it is complete and who
/// answered.
#[must_use]
pub fn complete(era: &Era, mut result: Value) -> Value {
    if era.is_stateless() {
        if let Value::Object(r) = &mut result {
            r.insert("resultType".into(), "complete".into());
            put_meta(r, era::meta::SERVER_INFO, server_info());
        }
    }
    result
}

/// An `input_required` result (it says its own `resultType`) with who answered.
#[must_use]
pub fn complete_input(mut result: Value) -> Value {
    if let Value::Object(r) = &mut result {
        r.insert("_meta".into(), answered_by());
    }
    result
}

/// A list or read result with how long, and for whom, a client may cache it (2026-07-28).
fn cacheable(era: &Era, mut result: Value, ttl_ms: u64, public: bool) -> Value {
    if era.is_stateless() {
        put(&mut result, "ttlMs", ttl_ms.into());
        put(&mut result, "cacheScope", if public { "public" } else { "private" }.into());
    }
    complete(era, result)
}

/// The first message on a listen stream: which notifications it will carry.
#[must_use]
pub fn listen_acknowledged(id: &Id, tools: bool) -> Value {
    let notifications = if tools { r#"{"toolsListChanged":true}"# } else { "{}" };
    on_listen(id, "notifications/subscriptions/acknowledged", Some(notifications))
}

/// A notification on the listen stream `id` (with its `notifications` params, when given).
fn on_listen(id: &Id, method: &str, notifications: Option<&str>) -> Value {
    object(&mut |o| {
        o.text("jsonrpc", "2.0");
        o.text("method", method);
        let mut params = o.nested("params");
        if let Some(n) = notifications {
            params.field("notifications", &Raw(n));
        }
        let mut meta = params.nested("_meta");
        meta.field(era::meta::SUBSCRIPTION_ID, id);
        meta.close();
        params.close();
    })
}

/// The result that ends a listen stream (the pairing stopped listening).
#[must_use]
pub fn listen_ended(id: &Id) -> Value {
    jsonrpc::result(id, complete_input(object(&mut |o| o.text("resultType", "complete"))))
}

/// The notification on a listen stream that the tool list changed.
#[must_use]
pub fn tools_changed(id: &Id) -> Value {
    on_listen(id, "notifications/tools/list_changed", None)
}

/// How a POST's body is to be read: one message, or a batch of them.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Batch {
    /// One message (or something to refuse as one): [`handle`] it.
    One,
    /// A batch under 2025-03-26: [`handle`] each, answer with the array of their answers.
    Many(Vec<Vec<u8>>),
    /// A batch this revision forbids, or one too large or empty: answer 400 with this
    /// JSON-RPC error.
    Refused(Value),
}

/// Whether a POST's body is a batch, and whether its revision allows one: only 2025-03-26
/// (the header absent or naming it) had batches; later revisions take one message a request.
pub fn batch(body: &[u8], headers: &Headers<'_>) -> Batch {
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') || body.len() > MAX_BODY_BYTES
    {
        return Batch::One;
    }
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(body) else { return Batch::One };
    let refuse = |m: String| Batch::Refused(jsonrpc::refusal(None, ErrorCode::INVALID_REQUEST, &m));
    match headers.version.map(str::trim) {
        None | Some("2025-03-26") => {}
        Some(v) => return refuse(crate::sentences::batch_not_in_revision(&quote(v))),
    }
    if items.is_empty() || items.len() > MAX_BATCH {
        return refuse(crate::sentences::batch_size(MAX_BATCH, items.len()));
    }
    let mut messages = Vec::with_capacity(items.len());
    for item in &items {
        messages.push(tabrelay_bundle::fields::Encode::to_json(item));
    }
    Batch::Many(messages)
}

/// Decides what to do with one POST to the endpoint, given its headers; `app_url` is where
/// the view card's Open in the app goes.
pub fn handle(body: &[u8], headers: &Headers<'_>, app_url: &str) -> Reply {
    if body.len() > MAX_BODY_BYTES {
        return failure(
            413,
            None,
            RpcError::new(ErrorCode::INVALID_REQUEST, crate::sentences::too_large(MAX_BODY_BYTES)),
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
        // The relay's questions have text ids; any other response answers nothing it asked.
        Message::Response { id: Id::Text(id), answer } => return Reply::Answer { id, answer },
        Message::Notification { .. } | Message::Response { .. } => return Reply::Accepted,
        Message::Request(r) => r,
    };
    let id = request.id;
    let params = &request.params;
    let method = request.method.as_str();
    // `initialize` negotiates its own revision; every other request is read by its headers.
    let era = if method == "initialize" && headers.version.is_none_or(|v| v != STATELESS_VERSION) {
        Era::Session
    } else {
        match era::read(headers, method, params) {
            Ok(era) => era,
            Err((status, e)) => return failure(status, Some(&id), e),
        }
    };
    let stateless = era.is_stateless();
    match method {
        "initialize" if !stateless => {
            let capabilities = params.get("capabilities").and_then(Value::as_object);
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let revision = SESSION_VERSIONS.into_iter().find(|v| Some(*v) == asked);
            let revision = revision.unwrap_or(SESSION_VERSIONS[0]);
            Reply::Initialize {
                body: jsonrpc::result(&id, initialize(revision)),
                declared: capabilities.map(session::Declared::of).unwrap_or_default(),
                revision,
            }
        }
        "ping" if !stateless => ok(&id, Value::Object(Map::new())),
        "logging/setLevel" if !stateless => match logging::set_level(params) {
            Ok(result) => ok(&id, result),
            Err(e) => failure(200, Some(&id), e),
        },
        "server/discover" => ok(&id, complete(&era, discover())),
        "tools/list" => Reply::ListTools { id, era },
        "tools/call" => match call_params(params) {
            Ok((tool, _)) if tool == STATUS_TOOL => Reply::Status { id, era },
            Ok((tool, args)) => {
                let progress_token = params
                    .get("_meta")
                    .and_then(|m| m.get("progressToken"))
                    .filter(|t| is_progress_token(t))
                    .cloned();
                let state = params.get("requestState");
                let responses = params.get("inputResponses");
                let retry = if !stateless || (state.is_none() && responses.is_none()) {
                    None
                } else {
                    let state = match state {
                        None => None,
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(_) => {
                            let e = RpcError::new(
                                ErrorCode::INVALID_PARAMS,
                                crate::sentences::STATE_NOT_STRING,
                            );
                            return failure(200, Some(&id), e);
                        }
                    };
                    let responses = responses.cloned().unwrap_or_else(|| Value::Object(Map::new()));
                    Some(Retry { state, responses })
                };
                let tasks = match &era {
                    // A 2026-07-28 client declares the extension: a call that waits becomes a
                    // task.
                    Era::Stateless { capabilities, .. } if takes_tasks(capabilities) => {
                        let mut declared = Vec::new();
                        for (_, c) in INPUT_METHODS {
                            if capabilities.contains_key(c) {
                                declared.push(c.to_owned());
                            }
                        }
                        Some(TaskTerms { declared, at_once: false })
                    }
                    // A 2025-11-25 client asks for a task with `params.task`: made at once.
                    Era::Session if params.get("task").is_some_and(Value::is_object) => {
                        Some(TaskTerms { declared: Vec::new(), at_once: true })
                    }
                    _ => None,
                };
                Reply::Call(ToolsCall { id, tool, args, progress_token, era, retry, tasks })
            }
            Err(e) => failure(200, Some(&id), e),
        },
        "resources/list" => {
            ok(&id, cacheable(&era, one("resources", view::listing()), RESOURCES_TTL_MS, true))
        }
        "resources/templates/list" => {
            let none = object(&mut |o| o.field("resourceTemplates", &Raw("[]")));
            ok(&id, cacheable(&era, none, RESOURCES_TTL_MS, true))
        }
        "resources/read" => match params.get("uri").and_then(Value::as_str) {
            Some(view::VIEW_URI) => ok(
                &id,
                cacheable(&era, one("contents", view::contents(app_url)), RESOURCES_TTL_MS, true),
            ),
            Some(uri) => failure(
                200,
                Some(&id),
                RpcError {
                    code: ErrorCode::INVALID_PARAMS,
                    message: crate::sentences::no_such_resource(&quote(uri)),
                    data: Some(object(&mut |o| o.text("uri", uri))),
                },
            ),
            None => failure(
                200,
                Some(&id),
                RpcError::new(ErrorCode::INVALID_PARAMS, crate::sentences::RESOURCE_URI_MISSING),
            ),
        },
        m if tasks::is_method(m, &era) => match tasks::read(m, params, &era) {
            Ok((task, method)) => Reply::Task(tasks::TaskRequest { id, era, task, method }),
            Err((status, e)) => failure(status, Some(&id), e),
        },
        "subscriptions/listen" if stateless => {
            let tools = params
                .get("notifications")
                .and_then(|n| n.get("toolsListChanged"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Reply::Listen { id, tools }
        }
        other => failure(
            // 2026-07-28 says an unknown method with 404; the session era with 200.
            if stateless { 404 } else { 200 },
            Some(&id),
            RpcError::new(
                ErrorCode::METHOD_NOT_FOUND,
                crate::sentences::no_such_method(&quote(other)),
            ),
        ),
    }
}

/// The JSON-RPC response to `tools/list` with the `tools` array the pairing gave (see
/// [`tools::list`]).
#[must_use]
pub fn tools_list(id: &Id, era: &Era, tools: Value) -> Value {
    let list = object(&mut |o| o.field("tools", &tools));
    jsonrpc::result(id, cacheable(era, list, TOOLS_TTL_MS, false))
}

/// The JSON-RPC response to a `status` call with the pairing's result (see
/// [`tools::status_result`]); None: the pairing could not say.
#[must_use]
pub fn status_answer(id: &Id, era: &Era, result: Option<Value>) -> Value {
    jsonrpc::result(id, complete(era, result.unwrap_or_else(tools::status_unavailable)))
}

/// The JSON-RPC error for a call of a tool not in the list agents see.
#[must_use]
pub fn no_such_tool(id: &Id, name: &str) -> Value {
    let message = sentences::no_such_tool(&quote(name));
    jsonrpc::refusal(Some(id), ErrorCode::INVALID_PARAMS, &message)
}

/// The HTTP status and JSON-RPC response to a call from what the pairing answered (None: the
/// pairing could not be reached or answered nonsense). A tab's request for input goes to a
/// 2026-07-28 client as `input_required` (sealed with `keys`); older clients get a sentence.
#[must_use]
pub fn call_reply(
    id: &Id,
    era: &Era,
    keys: &Keys,
    call: input::CallKey<'_>,
    answer: Option<CallReply>,
    now_ms: u64,
) -> (u16, Value) {
    let body = match answer {
        Some(CallReply::TabResult { outcome: Outcome::InputRequired { requests, state } })
            if era.is_stateless() =>
        {
            match input::ask(keys, era, call, &requests, state.as_ref(), now_ms) {
                Ok(result) => jsonrpc::result(id, complete_input(result)),
                Err((status, e)) => return (status, jsonrpc::error(Some(id), &e)),
            }
        }
        Some(CallReply::TabResult { outcome }) => call_answer(id, era, &outcome),
        Some(CallReply::NotCarried { sentence }) => call_failed(id, era, &sentence),
        Some(CallReply::NoSuchTool { tool }) => no_such_tool(id, &tool),
        Some(CallReply::Task(task)) => jsonrpc::result(id, tasks::created(era, &task)),
        Some(CallReply::NeedsTasks) => {
            return (400, jsonrpc::error(Some(id), &tasks::needs_tasks()))
        }
        Some(CallReply::HeaderMismatch { header }) => {
            let message = sentences::param_header_mismatch(&quote(&header));
            return (400, jsonrpc::refusal(Some(id), era::codes::HEADER_MISMATCH, &message));
        }
        None => call_failed(id, era, sentences::PAIRING_UNAVAILABLE),
    };
    (200, body)
}

/// The JSON-RPC response to a tool call the tab answered.
#[must_use]
pub fn call_answer(id: &Id, era: &Era, outcome: &Outcome) -> Value {
    jsonrpc::result(id, complete(era, content::tool_result(outcome)))
}

/// The JSON-RPC response to a tool call the relay could not carry: a tool error with the
/// relay's sentence (the agent reads it; the call itself was well formed).
#[must_use]
pub fn call_failed(id: &Id, era: &Era, sentence: &str) -> Value {
    jsonrpc::result(id, complete(era, content::error_result(sentence)))
}

/// What the relay is, for `initialize`'s and `server/discover`'s results (written into `c`). Only 2026-07-28
/// clients can hear that the tool list changed (`subscriptions/listen`); the session era has
/// no stream to say it on.
fn capabilities(mut c: Object<'_>, stateless: bool) {
    let mut tools = c.nested("tools");
    tools.field("listChanged", &stateless);
    tools.close();
    c.field("resources", &Raw(r#"{"listChanged":false}"#));
    let mut extensions = c.nested("extensions");
    let mut ui = extensions.nested("io.modelcontextprotocol/ui");
    ui.field("mimeTypes", &Texts(&[view::VIEW_MIME]));
    ui.close();
    if stateless {
        // A call that waits (for the person, most often) becomes a task the client polls.
        extensions.field(crate::pairing::tasks::EXTENSION, &Raw("{}"));
    }
    extensions.close();
    if !stateless {
        // 2025-11-25's experimental tasks: a call the client asks to be a task is one.
        c.field("tasks", &Raw(r#"{"cancel":{},"requests":{"tools":{"call":{}}}}"#));
        // What a tab says while it works goes as log messages too ([`logging`]).
        c.field("logging", &Raw("{}"));
    }
    c.close();
}

fn discover() -> Value {
    object(&mut |o| {
        o.field("supportedVersions", &Texts(&ALL_VERSIONS));
        capabilities(o.nested("capabilities"), true);
        o.field("serverInfo", &server_info());
        o.text("instructions", tabrelay_bundle::INSTRUCTIONS);
        o.field("ttlMs", &RESOURCES_TTL_MS);
        o.text("cacheScope", "public");
    })
}

/// `initialize`'s result, in `version`: the client's, when the relay speaks it, else the newest.
fn initialize(version: &str) -> Value {
    object(&mut |o| {
        o.text("protocolVersion", version);
        capabilities(o.nested("capabilities"), false);
        o.field("serverInfo", &server_info());
        o.text("instructions", tabrelay_bundle::INSTRUCTIONS);
    })
}

fn call_params(params: &Map<String, Value>) -> Result<(String, Value), RpcError> {
    let invalid = |m: String| RpcError::new(ErrorCode::INVALID_PARAMS, m);
    let name = match params.get("name") {
        Some(Value::String(n)) => n,
        _ => return Err(invalid(crate::sentences::TOOL_NAME_MISSING.into())),
    };
    if !valid_tool_name(name) {
        return Err(invalid(sentences::no_such_tool(&quote(name))));
    }
    let args = match params.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err(invalid(crate::sentences::ARGUMENTS_NOT_OBJECT.into())),
    };
    Ok((name.clone(), args))
}

/// A result whose field `key` lists just `item`.
fn one(key: &str, item: Value) -> Value {
    let items = vec![item];
    object(&mut |o| o.field(key, &items))
}

fn ok(id: &Id, result: Value) -> Reply {
    Reply::Granted(jsonrpc::result(id, result))
}

/// A JSON-RPC error with its HTTP status: in a 200 it is the method's answer (see
/// [`Reply::Granted`]); with any other it refuses the request as read.
fn failure(status: u16, id: Option<&Id>, e: RpcError) -> Reply {
    let body = jsonrpc::error(id, &e);
    match status {
        200 => Reply::Granted(body),
        status => Reply::Json { status, body },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tabrelay_bundle::catalogue::Catalogue;

    fn run(body: &str) -> Reply {
        match handle(body.as_bytes(), &Headers::default(), APP) {
            // The session id is the route's to add; the body is what the client reads.
            Reply::Initialize { body, .. } | Reply::Granted(body) => {
                Reply::Json { status: 200, body }
            }
            other => other,
        }
    }

    const APP: &str = "https://app.example/";

    /// A 2026-07-28 request with every header and `_meta` it needs.
    fn modern(method: &str, name: Option<&str>, params: Value) -> Reply {
        let mut params = params;
        params["_meta"] = json!({
            era::meta::PROTOCOL_VERSION: STATELESS_VERSION,
            era::meta::CLIENT_CAPABILITIES: {},
        });
        let body = json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params});
        let headers = Headers {
            version: Some(STATELESS_VERSION),
            method: Some(method),
            name,
            ..Headers::default()
        };
        handle(body.to_string().as_bytes(), &headers, APP)
    }

    fn json_of(r: Reply) -> (u16, Value) {
        match r {
            Reply::Json { status, body } => (status, body),
            Reply::Granted(body) => (200, body),
            other => panic!("expected JSON, got {other:?}"),
        }
    }

    #[test]
    fn initialize_echoes_a_supported_revision_else_the_newest() {
        for v in SESSION_VERSIONS {
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
    fn initialize_says_which_questions_the_client_can_take() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"roots":{}}}}"#;
        let Reply::Initialize { declared, body, revision } =
            handle(body.as_bytes(), &Headers::default(), APP)
        else {
            panic!("initialize")
        };
        assert!(declared.elicitation_form && declared.roots && !declared.sampling);
        assert_eq!(revision, "2025-11-25", "the session id says it");
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        let bare = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        let Reply::Initialize { declared, .. } = handle(bare.as_bytes(), &Headers::default(), APP)
        else {
            panic!("initialize")
        };
        assert!(!declared.any());
    }

    #[test]
    fn a_response_with_a_text_id_is_an_answer_to_a_question() {
        let r = run(r#"{"jsonrpc":"2.0","id":"q1","result":{"action":"decline"}}"#);
        assert_eq!(r, Reply::Answer { id: "q1".into(), answer: json!({"action": "decline"}) });
        let r = run(r#"{"jsonrpc":"2.0","id":"q2","error":{"code":-32601,"message":"no"}}"#);
        let Reply::Answer { answer, .. } = r else { panic!("{r:?}") };
        assert_eq!(answer["error"]["code"], -32601);
        assert_eq!(run(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#), Reply::Accepted);
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
        assert_eq!(r, Reply::ListTools { id: Id::Number(2), era: Era::Session });
        let b = tools_list(&Id::Number(2), &Era::Session, tools::list(None, &Catalogue::bundled()));
        let mut first: Vec<String> =
            Catalogue::bundled().tools.into_iter().map(|t| t.name).collect();
        first.push(tabrelay_bundle::protocol::STATUS_TOOL.to_owned());
        first.sort();
        assert_eq!(b["result"]["tools"][0]["name"], first[0].as_str(), "in name order");
        assert!(b["result"].get("resultType").is_none(), "the session era has no resultType");
        let r = run(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}"#,
        );
        assert_eq!(r, Reply::Status { id: Id::Number(3), era: Era::Session });
        let b = status_answer(&Id::Number(3), &Era::Session, None);
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
        assert!(matches!(r, Reply::Call(c) if c.tool == "test_simple_text"));
    }

    #[test]
    fn the_stateless_revision_discovers_and_marks_every_result() {
        let (s, b) = json_of(modern("server/discover", None, json!({})));
        assert_eq!(s, 200);
        let r = &b["result"];
        assert_eq!(r["supportedVersions"], json!(ALL_VERSIONS));
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["_meta"][era::meta::SERVER_INFO]["name"], SERVER_NAME);
        assert!(r["capabilities"]["tools"].is_object());
        let r = modern("tools/list", None, json!({}));
        let Reply::ListTools { id, era } = r else { panic!("{r:?}") };
        let b = tools_list(&id, &era, json!([]));
        assert_eq!(b["result"]["resultType"], "complete");
        assert_eq!(
            (b["result"]["ttlMs"].as_u64(), b["result"]["cacheScope"].as_str()),
            (Some(0), Some("private"))
        );
        let r = modern("tools/call", Some("history_list"), json!({"name": "history_list"}));
        assert!(matches!(r, Reply::Call(ToolsCall { era: Era::Stateless { .. }, .. })));
    }

    #[test]
    fn the_stateless_revision_has_no_session_methods() {
        for m in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "un/known"] {
            let (s, b) = json_of(modern(m, None, json!({})));
            assert_eq!(
                (s, b["error"]["code"].as_i64(), b["id"].as_i64()),
                (404, Some(-32601), Some(9)),
                "{m}"
            );
        }
        // The session era keeps them, and answers an unknown method with 200.
        let (s, _) = json_of(run(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#));
        assert_eq!(s, 200);
    }

    #[test]
    fn logging_is_declared_in_the_session_era_and_its_level_taken_as_far_as_it_is_held() {
        let (_, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#,
        ));
        assert_eq!(b["result"]["capabilities"]["logging"], json!({}), "{b}");
        // The stateless revision reads no per-request level, so it declares no logging.
        assert!(discover()["capabilities"].get("logging").is_none());
        let (s, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}"#,
        ));
        assert_eq!((s, &b["result"]), (200, &json!({})), "{b}");
        let (s, b) = json_of(run(
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}}"#,
        ));
        assert_eq!((s, b["error"]["code"].as_i64()), (200, Some(-32602)), "{b}");
        assert_eq!(b["error"]["message"], sentences::LOG_LEVEL_NOT_HELD);
    }

    #[test]
    fn the_view_card_is_the_one_resource() {
        let (_, b) = json_of(modern("resources/list", None, json!({})));
        assert_eq!(b["result"]["resources"][0]["uri"], view::VIEW_URI);
        assert_eq!(b["result"]["cacheScope"], "public");
        let (_, b) =
            json_of(modern("resources/read", Some(view::VIEW_URI), json!({"uri": view::VIEW_URI})));
        assert_eq!(b["result"]["contents"][0]["mimeType"], view::VIEW_MIME);
        assert!(b["result"]["contents"][0]["text"].as_str().unwrap().contains(APP));
        let (_, b) =
            json_of(modern("resources/read", Some("test://nope"), json!({"uri": "test://nope"})));
        assert_eq!(b["error"]["code"], -32602);
        let (_, b) = json_of(modern("resources/templates/list", None, json!({})));
        assert_eq!(b["result"]["resourceTemplates"], json!([]));
    }

    #[test]
    fn a_listen_is_acknowledged_with_what_it_asked() {
        let r = modern(
            "subscriptions/listen",
            None,
            json!({"notifications": {"toolsListChanged": true}}),
        );
        assert_eq!(r, Reply::Listen { id: Id::Number(9), tools: true });
        let ack = listen_acknowledged(&Id::Number(9), true);
        assert_eq!(ack["params"]["_meta"][era::meta::SUBSCRIPTION_ID], 9);
        assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
        let filtered = listen_acknowledged(&Id::Number(9), false);
        assert_eq!(filtered["params"]["notifications"], json!({}));
        assert_eq!(tools_changed(&Id::Number(9))["params"]["_meta"][era::meta::SUBSCRIPTION_ID], 9);
        // Not in the session era.
        let (_, b) = json_of(run(r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen"}"#));
        assert_eq!(b["error"]["code"], -32601);
    }

    #[test]
    fn a_tool_call_goes_to_the_tab() {
        let r = run(
            r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"history_list","arguments":{"last":3}}}"#,
        );
        assert_eq!(
            r,
            Reply::Call(ToolsCall {
                id: Id::Text("c".into()),
                tool: "history_list".into(),
                args: json!({"last":3}),
                progress_token: None,
                era: Era::Session,
                retry: None,
                tasks: None,
            })
        );
        let r = run(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"history_list","_meta":{"progressToken":"p1"}}}"#,
        );
        assert!(matches!(r, Reply::Call(ToolsCall { progress_token: Some(t), .. }) if t == "p1"));
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
        let headers = Headers { version: Some("1999-01-01"), ..Headers::default() };
        let r = handle(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, &headers, APP);
        let (s, b) = json_of(r);
        assert_eq!((s, b["error"]["code"].as_i64()), (400, Some(-32022)));
        assert_eq!(b["error"]["data"]["supported"], json!(ALL_VERSIONS));
        assert_eq!(b["error"]["data"]["requested"], "1999-01-01");
    }

    #[test]
    fn a_call_is_answered_as_its_revision_can_take_it() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let args = json!({});
        let call = input::CallKey { grant: "g", tool: "t", args: &args };
        let asks = || {
            let requests = json!({"who": {"method": "elicitation/create", "params": {}}});
            let requests = requests.as_object().unwrap().clone();
            Some(CallReply::TabResult { outcome: Outcome::InputRequired { requests, state: None } })
        };
        let caps = |c: Value| Era::Stateless {
            capabilities: c.as_object().unwrap().clone(),
            client_name: None,
        };
        let id = Id::Number(1);
        let (s, b) = call_reply(&id, &caps(json!({"elicitation": {}})), &keys, call, asks(), 0);
        assert_eq!((s, b["result"]["resultType"].as_str()), (200, Some("input_required")));
        assert!(b["result"]["_meta"][era::meta::SERVER_INFO].is_object());
        let (s, b) = call_reply(&id, &caps(json!({})), &keys, call, asks(), 0);
        assert_eq!((s, b["error"]["code"].as_i64()), (400, Some(-32021)));
        let (s, b) = call_reply(&id, &Era::Session, &keys, call, asks(), 0);
        assert_eq!(
            (s, b["result"]["content"][0]["text"].as_str()),
            (200, Some(content::INPUT_NOT_POSSIBLE))
        );
        let (_, b) = call_reply(&id, &Era::Session, &keys, call, None, 0);
        assert_eq!(b["result"]["content"][0]["text"], sentences::PAIRING_UNAVAILABLE);
        let gone = Some(CallReply::NoSuchTool { tool: "x".into() });
        assert_eq!(call_reply(&id, &Era::Session, &keys, call, gone, 0).1["error"]["code"], -32602);
        let mismatch = Some(CallReply::HeaderMismatch { header: "Mcp-Param-Region".into() });
        let (s, b) = call_reply(&id, &caps(json!({})), &keys, call, mismatch, 0);
        assert_eq!((s, b["error"]["code"].as_i64()), (400, Some(-32020)));
        assert!(b["error"]["message"].as_str().unwrap().contains("\"Mcp-Param-Region\""));
        assert_eq!(listen_ended(&id)["result"]["resultType"], "complete");
    }

    #[test]
    fn batches_only_where_2025_03_26_allows_them() {
        let body = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;
        let Batch::Many(items) = batch(body, &Headers::default()) else { panic!("not a batch") };
        assert_eq!(items.len(), 2);
        assert_eq!(json_of(handle(&items[0], &Headers::default(), APP)).1["result"], json!({}));
        let old = Headers { version: Some("2025-03-26"), ..Headers::default() };
        assert!(matches!(batch(body, &old), Batch::Many(_)));
        for v in ["2025-06-18", "2025-11-25", STATELESS_VERSION] {
            let h = Headers { version: Some(v), ..Headers::default() };
            let Batch::Refused(b) = batch(body, &h) else { panic!("{v} took a batch") };
            assert_eq!(b["error"]["code"].as_i64(), Some(-32600));
            assert!(b["error"]["message"].as_str().unwrap().contains("one JSON-RPC message"));
        }
        assert!(matches!(batch(b"[]", &Headers::default()), Batch::Refused(_)));
        let many = format!(
            "[{}]",
            vec![r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#; MAX_BATCH + 1].join(",")
        );
        assert!(matches!(batch(many.as_bytes(), &Headers::default()), Batch::Refused(_)));
        assert_eq!(
            batch(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &Headers::default()),
            Batch::One
        );
        assert_eq!(batch(b"[1,", &Headers::default()), Batch::One, "not JSON: refused as one");
    }

    #[test]
    fn an_oversized_body_is_refused() {
        let big = vec![b' '; MAX_BODY_BYTES + 1];
        let (s, _) = json_of(handle(&big, &Headers::default(), APP));
        assert_eq!(s, 413);
    }
}
