//! The Worker's half of tasks: what the tasks methods ask, and how a task is said to the
//! client in its revision. The 2026-07-28 extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663) carries the result and errors in `tasks/get`; the 2025-11-25 experimental tasks
//! (what VS Code polls) wrap a made task as `{"task": …}`, name `ttl` and `pollInterval`
//! without their unit, and hand the result over with `tasks/result`. The task itself lives in
//! the pairing ([`crate::pairing::tasks`]).

use serde_json::{json, Map, Value};

use super::era::{codes, Era};
use super::{complete, complete_input};
use crate::jsonrpc::{self, ErrorCode, Id, RpcError};
use crate::limits::TASK_POLL_INTERVAL_MS;
use crate::pairing::tasks::{declared, Status, EXTENSION};
use crate::pairing::wire::{TaskOp, TaskReply};
use crate::sentences;

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
    json!({"extensions": {EXTENSION: {}}})
}

/// The refusal of a call of a tool that runs only as a task, to a client that takes none.
#[must_use]
pub fn needs_tasks() -> RpcError {
    RpcError {
        code: codes::MISSING_CAPABILITY,
        message: sentences::TASK_REQUIRED.into(),
        data: Some(json!({"requiredCapabilities": required()})),
    }
}

fn not_declared(method: &str) -> RpcError {
    RpcError {
        code: codes::MISSING_CAPABILITY,
        message: crate::sentences::tasks_not_declared(method, EXTENSION),
        data: Some(json!({"requiredCapabilities": required()})),
    }
}

/// The result of a `tools/call` that became a task, in the client's revision.
#[must_use]
pub fn created(era: &Era, task: Value) -> Value {
    if era.is_stateless() {
        complete_input(task)
    } else {
        json!({ "task": legacy(&task) })
    }
}

/// A task in the 2025-11-25 shape (`Task`): where it stands, no result.
fn legacy(task: &Value) -> Value {
    let mut m = Map::new();
    for (from, to) in [
        ("taskId", "taskId"),
        ("status", "status"),
        ("statusMessage", "statusMessage"),
        ("createdAt", "createdAt"),
        ("lastUpdatedAt", "lastUpdatedAt"),
        ("ttlMs", "ttl"),
        ("pollIntervalMs", "pollInterval"),
    ] {
        if let Some(v) = task.get(from) {
            m.insert(to.into(), v.clone());
        }
    }
    Value::Object(m)
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
    jsonrpc::error(
        Some(id),
        &RpcError::new(ErrorCode::INTERNAL_ERROR, sentences::TASK_STILL_WORKING),
    )
}

/// The client's answer to its tasks request from what the pairing said (None: it could not be
/// reached).
#[must_use]
pub fn answer(id: &Id, era: &Era, method: &Method, said: Option<TaskReply>) -> Next {
    let error = |e: RpcError| Next::Answer(jsonrpc::error(Some(id), &e));
    let task = match said {
        None => {
            return error(RpcError::new(ErrorCode::INTERNAL_ERROR, sentences::PAIRING_UNAVAILABLE))
        }
        Some(TaskReply::Refused { sentence }) => {
            return error(RpcError::new(ErrorCode::INVALID_PARAMS, sentence))
        }
        Some(TaskReply::Acknowledged) if era.is_stateless() => {
            return Next::Answer(jsonrpc::result(id, complete(era, json!({}))))
        }
        Some(TaskReply::Acknowledged) => return Next::AskAgain(0),
        Some(TaskReply::Detailed(task)) => task,
    };
    if era.is_stateless() {
        // The detailed task says its own `resultType`.
        return Next::Answer(jsonrpc::result(id, complete_input(task)));
    }
    if *method != Method::Result {
        return Next::Answer(jsonrpc::result(id, legacy(&task)));
    }
    let status = task.get("status").and_then(Value::as_str).unwrap_or_default();
    let task_id = task.get("taskId").cloned().unwrap_or(Value::Null);
    match status {
        s if s == Status::Completed.as_str() => {
            let mut result = task.get("result").cloned().unwrap_or_else(|| json!({}));
            result["_meta"] = json!({"io.modelcontextprotocol/related-task": {"taskId": task_id}});
            Next::Answer(jsonrpc::result(id, result))
        }
        s if s == Status::Failed.as_str() => {
            let e = task.get("error");
            let code = e.and_then(|e| e.get("code")).and_then(Value::as_i64).unwrap_or(-32603);
            let message = e.and_then(|e| e.get("message")).and_then(Value::as_str);
            let message = message.unwrap_or(sentences::PAIRING_UNAVAILABLE).to_owned();
            error(RpcError { code: ErrorCode(code as i32), message, data: None })
        }
        s if s == Status::Cancelled.as_str() => {
            error(RpcError::new(ErrorCode::INVALID_PARAMS, sentences::TASK_CANCELLED))
        }
        _ => Next::AskAgain(TASK_POLL_INTERVAL_MS / 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn detailed(status: &str) -> TaskReply {
        let mut t = json!({"taskId": "t1", "status": status, "createdAt": "2026-12-01T00:00:00.000Z",
            "lastUpdatedAt": "2026-12-01T00:00:01.000Z", "ttlMs": 5, "pollIntervalMs": 2, "resultType": "complete"});
        match status {
            "completed" => t["result"] = json!({"content": [{"type": "text", "text": "ok"}]}),
            "failed" => t["error"] = json!({"code": -32021, "message": "Needs roots."}),
            _ => {}
        }
        TaskReply::Detailed(t)
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
        let made = json!({"taskId": "t1", "status": "working", "ttlMs": 5, "pollIntervalMs": 2,
            "createdAt": "x", "lastUpdatedAt": "y", "resultType": "task"});
        let old = created(&Era::Session, made.clone());
        assert_eq!(
            old,
            json!({"task": {"taskId": "t1", "status": "working", "ttl": 5, "pollInterval": 2, "createdAt": "x", "lastUpdatedAt": "y"}})
        );
        assert_eq!(created(&modern(true), made)["resultType"], "task");
        let Next::Answer(got) =
            answer(&Id::Number(1), &Era::Session, &Method::Get, Some(detailed("completed")))
        else {
            panic!()
        };
        assert!(got["result"].get("result").is_none() && got["result"]["ttl"] == 5);
    }

    #[test]
    fn tasks_result_waits_for_the_end_and_hands_over_the_result_or_the_error() {
        let id = Id::Number(3);
        let result = |s: &str| answer(&id, &Era::Session, &Method::Result, Some(detailed(s)));
        assert_eq!(result("working"), Next::AskAgain(TASK_POLL_INTERVAL_MS / 2));
        assert_eq!(result("input_required"), Next::AskAgain(TASK_POLL_INTERVAL_MS / 2));
        let Next::Answer(done) = result("completed") else { panic!() };
        assert_eq!(done["result"]["content"][0]["text"], "ok");
        assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], "t1");
        let Next::Answer(failed) = result("failed") else { panic!() };
        assert_eq!(failed["error"]["code"], -32021);
        let Next::Answer(cancelled) = result("cancelled") else { panic!() };
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
