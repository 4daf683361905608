//! The Worker's half of tasks: what the tasks methods ask, and how a task is said to the
//! client in its revision. The 2026-07-28 extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) carries the result and errors in `tasks/get`; the 2025-11-25 experimental tasks
//! (what VS Code polls) wrap a made task as `{"task": …}`, name `ttl` and `pollInterval`
//! without their unit, and hand the result over with `tasks/result`. The task itself lives in
//! the pairing ([`crate::pairing::tasks`]), which tells its typed view; it is rendered here.

use serde_json::{Map, Value};

use super::era::{codes, Era};
use super::{complete, complete_input};
use crate::jsonrpc::{self, object, ErrorCode, Id, Raw, RpcError};
use crate::limits::{TASK_POLL_INTERVAL_MS, TASK_TTL_MS};
use crate::pairing::tasks::{declared, Status, View, EXTENSION};
use crate::pairing::wire::{TaskOp, TaskReply};
use crate::sentences;
use tabrelay_bundle::fields::Object;

/// A client's request about a task, as read.
#[derive(Debug, Clone, PartialEq)]
pub enum Method {
    /// `tasks/get`.
    Get,
    /// `tasks/update` (2026-07-28) with the answers.
    Update(Value),
    /// `tasks/cancel`.
    Cancel,
    /// `tasks/result` (2025-11-25): the tool's result once the task finished.
    Result,
}

impl Method {
    /// What the pairing is asked first.
    #[must_use]
    pub fn op(&self) -> TaskOp {
        match self {
            Self::Get | Self::Result => TaskOp::Get,
            Self::Update(answers) => TaskOp::Update(answers.clone()),
            Self::Cancel => TaskOp::Cancel,
        }
    }
}

/// A client's tasks request, as read (and as the exchange keeps it between asks of the
/// pairing).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRequest {
    /// The request's id.
    pub id: Id,
    /// The revision it came in.
    pub era: Era,
    /// The task's id.
    pub task: String,
    /// What it asks.
    pub method: Method,
}

/// Whether `method` is a tasks method of the request's revision.
#[must_use]
pub fn is_method(method: &str, era: &Era) -> bool {
    match era {
        Era::Stateless { .. } => matches!(method, "tasks/get" | "tasks/update" | "tasks/cancel"),
        Era::Session => matches!(method, "tasks/get" | "tasks/result" | "tasks/cancel"),
    }
}

/// Reads a tasks request ([`is_method`] said it is one): its task and method, or the
/// refusal's HTTP status and error.
pub fn read(
    method: &str,
    params: &Map<String, Value>,
    era: &Era,
) -> Result<(String, Method), (u16, RpcError)> {
    if let Era::Stateless { capabilities, .. } = era {
        if !declared(capabilities) {
            return Err((400, not_declared(method)));
        }
    }
    let invalid = |m: String| (200, RpcError::new(ErrorCode::INVALID_PARAMS, m));
    let Some(Value::String(task)) = params.get("taskId") else {
        return Err(invalid(crate::sentences::name_param_missing(method, "taskId")));
    };
    let method = match method {
        "tasks/get" => Method::Get,
        "tasks/cancel" => Method::Cancel,
        "tasks/result" => Method::Result,
        _ => match params.get("inputResponses") {
            Some(answers @ Value::Object(_)) => Method::Update(answers.clone()),
            _ => return Err(invalid(crate::sentences::TASK_UPDATE_NEEDS_RESPONSES.into())),
        },
    };
    Ok((task.clone(), method))
}

/// What a client must declare to use tasks (`requiredCapabilities`).
#[must_use]
pub fn required() -> Value {
    object(&mut |o| {
        let mut extensions = o.nested("extensions");
        extensions.field(EXTENSION, &crate::jsonrpc::Raw("{}"));
        extensions.close();
    })
}

/// An error's data naming what a client must declare to use tasks.
fn requires_tasks() -> Option<Value> {
    Some(object(&mut |o| o.field("requiredCapabilities", &required())))
}

/// The refusal of a call of a tool that runs only as a task, to a client that takes none.
#[must_use]
pub fn needs_tasks() -> RpcError {
    RpcError {
        code: codes::MISSING_CAPABILITY,
        message: sentences::TASK_REQUIRED.into(),
        data: requires_tasks(),
    }
}

fn not_declared(method: &str) -> RpcError {
    RpcError {
        code: codes::MISSING_CAPABILITY,
        message: crate::sentences::tasks_not_declared(method, EXTENSION),
        data: requires_tasks(),
    }
}

/// The fields every shape of a task carries, written into `o`: 2026-07-28's names, or
/// (`legacy`) 2025-11-25's, whose times have no unit.
fn envelope(o: &mut Object<'_>, task: &View, legacy: bool) {
    o.text("taskId", &task.id);
    o.text("status", task.status.as_str());
    o.text("createdAt", &iso8601(task.created_ms));
    o.text("lastUpdatedAt", &iso8601(task.updated_ms));
    o.field(if legacy { "ttl" } else { "ttlMs" }, &TASK_TTL_MS);
    o.field(if legacy { "pollInterval" } else { "pollIntervalMs" }, &TASK_POLL_INTERVAL_MS);
    if let Some(said) = &task.status_message {
        o.text("statusMessage", said);
    }
}

/// The result of a `tools/call` that became a task, in the client's revision: 2026-07-28's
/// `CreateTaskResult` (flat, no result yet), or 2025-11-25's `{"task": …}`.
#[must_use]
pub fn created(era: &Era, task: &View) -> Value {
    if era.is_stateless() {
        complete_input(object(&mut |o| {
            envelope(o, task, false);
            o.text("resultType", "task");
        }))
    } else {
        object(&mut |o| o.field("task", &legacy(task)))
    }
}

/// The result of 2026-07-28's `tasks/get` (`DetailedTask`): the result inlined once completed,
/// the error once failed, the pending requests while input is required.
#[must_use]
pub fn detailed(task: View) -> Value {
    object(&mut |o| {
        envelope(o, &task, false);
        o.text("resultType", "complete");
        let mut or_empty = |key, value: &Option<Value>| match value {
            Some(value) => o.field(key, value),
            None => o.field(key, &Raw("{}")),
        };
        match task.status {
            Status::Completed => or_empty("result", &task.result),
            Status::InputRequired => or_empty("inputRequests", &task.input_requests),
            Status::Failed => match &task.error {
                Some(e) => {
                    let mut error = o.nested("error");
                    error.field("code", &e.code);
                    error.text("message", &e.message);
                    error.close();
                }
                None => o.field("error", &Raw("{}")),
            },
            Status::Working | Status::Cancelled => {}
        }
    })
}

/// A task in the 2025-11-25 shape (`Task`): where it stands, no result, its times without
/// their unit.
fn legacy(task: &View) -> Value {
    object(&mut |o| envelope(o, task, true))
}

/// What to do after the pairing's answer to a tasks request.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Answer the client with this JSON-RPC response.
    Answer(Value),
    /// Ask the pairing where the task stands (`tasks/get`) after this many milliseconds, and
    /// decide again: a 2025-11-25 cancel answers with the task (at once), a `tasks/result`
    /// waits for the task to finish (asking every so often, at most as long as a call waits;
    /// then [`still_working`]).
    AskAgain(u64),
}

/// The answer to a `tasks/result` whose task still worked when the wait ran out.
#[must_use]
pub fn still_working(id: &Id) -> Value {
    jsonrpc::refusal(Some(id), ErrorCode::INTERNAL_ERROR, sentences::TASK_STILL_WORKING)
}

/// The client's answer to its tasks request from what the pairing said (None: it could not be
/// reached).
#[must_use]
pub fn answer(id: &Id, era: &Era, method: &Method, said: Option<TaskReply>) -> Next {
    let error = |code, message: &str| Next::Answer(jsonrpc::refusal(Some(id), code, message));
    let task = match said {
        None => return error(ErrorCode::INTERNAL_ERROR, sentences::PAIRING_UNAVAILABLE),
        Some(TaskReply::Refused { sentence }) => {
            return error(ErrorCode::INVALID_PARAMS, &sentence)
        }
        Some(TaskReply::Acknowledged) if era.is_stateless() => {
            return Next::Answer(jsonrpc::result(id, complete(era, Value::Object(Map::new()))))
        }
        Some(TaskReply::Acknowledged) => return Next::AskAgain(0),
        Some(TaskReply::Detailed(task)) => task,
    };
    if era.is_stateless() {
        // The detailed task says its own `resultType`.
        return Next::Answer(jsonrpc::result(id, complete_input(detailed(task))));
    }
    if *method != Method::Result {
        return Next::Answer(jsonrpc::result(id, legacy(&task)));
    }
    match task.status {
        Status::Completed => {
            let mut result = task.result.unwrap_or_else(|| Value::Object(Map::new()));
            let related = object(&mut |o| {
                let mut task_meta = o.nested("io.modelcontextprotocol/related-task");
                task_meta.text("taskId", &task.id);
                task_meta.close();
            });
            crate::jsonrpc::put(&mut result, "_meta", related);
            Next::Answer(jsonrpc::result(id, result))
        }
        Status::Failed => {
            let (code, message) = match &task.error {
                Some(e) => (e.code, e.message.as_str()),
                None => (-32603, sentences::PAIRING_UNAVAILABLE),
            };
            error(ErrorCode(code as i32), message)
        }
        Status::Cancelled => error(ErrorCode::INVALID_PARAMS, sentences::TASK_CANCELLED),
        Status::Working | Status::InputRequired => Next::AskAgain(TASK_POLL_INTERVAL_MS / 2),
    }
}

/// A time in milliseconds since 1970 as ISO 8601 (UTC, milliseconds): `2026-12-01T05:26:31.000Z`.
#[must_use]
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn modern(tasks: bool) -> Era {
        let mut capabilities = Map::new();
        if tasks {
            capabilities.insert("extensions".into(), json!({EXTENSION: {}}));
        }
        Era::Stateless { capabilities, client_name: None }
    }

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn view(status: Status) -> View {
        View {
            id: "t1".into(),
            status,
            created_ms: 1_000,
            updated_ms: 5_000,
            status_message: None,
            result: (status == Status::Completed)
                .then(|| json!({"content": [{"type": "text", "text": "ok"}]})),
            error: (status == Status::Failed).then(|| crate::pairing::tasks::Failure {
                code: -32021,
                message: "Needs roots.".into(),
            }),
            input_requests: (status == Status::InputRequired)
                .then(|| json!({"a": {"method": "elicitation/create"}})),
        }
    }

    fn told(status: Status) -> TaskReply {
        TaskReply::Detailed(view(status))
    }

    #[test]
    fn times_are_iso_8601_in_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_102_791_123), "2026-12-01T05:26:31.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z", "a leap day");
        assert_eq!(iso8601(4_107_542_399_999), "2100-02-28T23:59:59.999Z");
    }

    #[test]
    fn a_made_task_is_flat_and_says_only_where_it_stands() {
        let made = created(&modern(true), &view(Status::Working));
        assert_eq!(made["resultType"], "task");
        assert_eq!(made["taskId"], "t1");
        assert_eq!(made["status"], "working");
        assert_eq!(made["ttlMs"], TASK_TTL_MS);
        assert_eq!(made["pollIntervalMs"], TASK_POLL_INTERVAL_MS);
        assert_eq!(made["createdAt"], "1970-01-01T00:00:01.000Z");
        assert_eq!(made["lastUpdatedAt"], "1970-01-01T00:00:05.000Z");
        assert!(made["_meta"].is_object());
        for absent in
            ["task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"]
        {
            assert!(made.get(absent).is_none(), "{absent}");
        }
    }

    /// What a client read before the pairing told a typed view (the pairing rendered the JSON
    /// then): the same JSON value, and so the same bytes (serde_json's map keeps keys sorted).
    #[test]
    fn what_a_client_reads_of_a_task_is_as_before() {
        let meta = json!({crate::mcp::era::meta::SERVER_INFO: crate::mcp::server_info()});
        let (made, at) = (view(Status::Working), "1970-01-01T00:00:01.000Z");
        let envelope = json!({"taskId": "t1", "status": "working", "createdAt": at,
            "lastUpdatedAt": "1970-01-01T00:00:05.000Z", "ttlMs": TASK_TTL_MS,
            "pollIntervalMs": TASK_POLL_INTERVAL_MS});
        let mut modern_made = envelope.clone();
        modern_made["resultType"] = "task".into();
        modern_made["_meta"] = meta.clone();
        assert_eq!(created(&modern(true), &made), modern_made);
        let Next::Answer(got) =
            answer(&Id::Number(4), &modern(true), &Method::Get, Some(told(Status::Failed)))
        else {
            panic!()
        };
        let mut failed = envelope;
        failed["status"] = "failed".into();
        failed["resultType"] = "complete".into();
        failed["error"] = json!({"code": -32021, "message": "Needs roots."});
        failed["_meta"] = meta;
        assert_eq!(got, json!({"jsonrpc": "2.0", "id": 4, "result": failed}));
    }

    #[test]
    fn a_detailed_task_holds_what_its_status_says_and_nothing_else() {
        let got = detailed(view(Status::Completed));
        assert_eq!((&got["status"], &got["resultType"]), (&json!("completed"), &json!("complete")));
        assert_eq!(got["result"]["content"][0]["text"], "ok");
        assert!(got.get("error").is_none() && got.get("inputRequests").is_none());
        let failed = detailed(view(Status::Failed));
        assert_eq!(failed["error"], json!({"code": -32021, "message": "Needs roots."}));
        assert!(failed.get("result").is_none());
        let asks = detailed(view(Status::InputRequired));
        assert_eq!(asks["inputRequests"]["a"]["method"], "elicitation/create");
        let said = View { status_message: Some("Asked.".into()), ..view(Status::Working) };
        let working = detailed(said);
        assert_eq!(working["statusMessage"], "Asked.");
        for absent in ["result", "error", "inputRequests"] {
            assert!(working.get(absent).is_none(), "{absent}");
        }
        // A completed task whose result storage lost still says one.
        let lost = View { result: None, ..view(Status::Completed) };
        assert_eq!(detailed(lost)["result"], json!({}));
    }

    #[test]
    fn each_revision_has_its_own_tasks_methods_and_2026_asks_for_the_extension() {
        assert!(
            is_method("tasks/update", &modern(true)) && !is_method("tasks/result", &modern(true))
        );
        assert!(
            is_method("tasks/result", &Era::Session) && !is_method("tasks/update", &Era::Session)
        );
        assert!(!is_method("tasks/list", &Era::Session) && !is_method("tasks/list", &modern(true)));
        let get = params(json!({"taskId": "t1"}));
        assert_eq!(read("tasks/get", &get, &modern(true)), Ok(("t1".into(), Method::Get)));
        let (status, e) = read("tasks/get", &get, &modern(false)).unwrap_err();
        assert_eq!((status, e.code), (400, codes::MISSING_CAPABILITY));
        assert_eq!(e.data.unwrap()["requiredCapabilities"], required());
        assert_eq!(read("tasks/result", &get, &Era::Session), Ok(("t1".into(), Method::Result)));
        let bad = read("tasks/get", &params(json!({"taskId": 5})), &modern(true)).unwrap_err();
        assert_eq!(bad.1.code, ErrorCode::INVALID_PARAMS);
        let no_answers = params(json!({"taskId": "t1", "inputResponses": []}));
        assert_eq!(
            read("tasks/update", &no_answers, &modern(true)).unwrap_err().1.code,
            ErrorCode::INVALID_PARAMS
        );
    }

    #[test]
    fn a_2025_11_25_client_sees_the_task_wrapped_and_its_fields_without_units() {
        let old = created(&Era::Session, &view(Status::Working));
        assert_eq!(
            old,
            json!({"task": {"taskId": "t1", "status": "working", "ttl": TASK_TTL_MS,
                "pollInterval": TASK_POLL_INTERVAL_MS, "createdAt": "1970-01-01T00:00:01.000Z",
                "lastUpdatedAt": "1970-01-01T00:00:05.000Z"}})
        );
        let Next::Answer(got) =
            answer(&Id::Number(1), &Era::Session, &Method::Get, Some(told(Status::Completed)))
        else {
            panic!()
        };
        assert!(got["result"].get("result").is_none() && got["result"]["ttl"] == TASK_TTL_MS);
    }

    #[test]
    fn tasks_result_waits_for_the_end_and_hands_over_the_result_or_the_error() {
        let id = Id::Number(3);
        let result = |s: Status| answer(&id, &Era::Session, &Method::Result, Some(told(s)));
        assert_eq!(result(Status::Working), Next::AskAgain(TASK_POLL_INTERVAL_MS / 2));
        assert_eq!(result(Status::InputRequired), Next::AskAgain(TASK_POLL_INTERVAL_MS / 2));
        let Next::Answer(done) = result(Status::Completed) else { panic!() };
        assert_eq!(done["result"]["content"][0]["text"], "ok");
        assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], "t1");
        let Next::Answer(failed) = result(Status::Failed) else { panic!() };
        assert_eq!(failed["error"]["code"], -32021);
        let Next::Answer(cancelled) = result(Status::Cancelled) else { panic!() };
        assert_eq!(cancelled["error"]["message"], sentences::TASK_CANCELLED);
        // A 2025-11-25 cancel answers with the task: asked again at once.
        let ack = answer(&id, &Era::Session, &Method::Cancel, Some(TaskReply::Acknowledged));
        assert_eq!(ack, Next::AskAgain(0));
        // 2026-07-28: the ack is the answer.
        let Next::Answer(ack) =
            answer(&id, &modern(true), &Method::Cancel, Some(TaskReply::Acknowledged))
        else {
            panic!()
        };
        assert_eq!(ack["result"]["resultType"], "complete");
        let refused = TaskReply::Refused { sentence: "No.".into() };
        let Next::Answer(no) = answer(&id, &modern(true), &Method::Get, Some(refused)) else {
            panic!()
        };
        assert_eq!(no["error"]["code"], -32602);
    }
}
