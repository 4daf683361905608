//! The messages between the Worker and the pairing's Durable Object: one [`Request`] per fetch,
//! answered by [`Reply`] lines (one, or a stream of them for a streamed call or a listener),
//! written and read here only ([`Request::encode`], [`Request::decode`], [`Reply::line`],
//! [`Reply::decode`]). No path, no HTTP status carries an outcome.

use serde_json::Value;
use tabrelay_bundle::fields::{Encode as _, Message, WireError};
use tabrelay_bundle::protocol::{Outcome, ToolCall, ToolList};
use tabrelay_bundle::raw::read_keeping;

use crate::oauth::connect::Requester;
pub use crate::oauth::exchange::{RefreshRequest, RevokeRequest};
use crate::pairing::tasks::View as TaskView;
use crate::pairing::TabsStatus;

/// What the Worker asks a pairing's object.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Carry a tool call to the tab calls go to.
    Call(CallRequest),
    /// The agent cancelled its request (by its [`request_key`]).
    Cancel {
        /// The request's key.
        request: String,
    },
    /// Whether this grant is live and, as asked, what agents see; answered within one round
    /// trip, so a `tools/list` or a `status` call costs what the check alone did.
    Check {
        /// The grant the access token names.
        grant: String,
        /// What to say besides.
        want: Want,
    },
    /// Listen for changes of the tool list agents see ([`Reply::Listen`] lines).
    Listen {
        /// The grant the access token names.
        grant: String,
    },
    /// A `requestState` came back: mark it used (each may come back once).
    UseState {
        /// A hash of the state.
        key: String,
        /// When it expires, in milliseconds since the epoch.
        expires_ms: u64,
    },
    /// Make a grant for a redeemed code.
    Grant(GrantRequest),
    /// A client refreshes.
    Refresh(RefreshRequest),
    /// Revoke a grant (RFC 7009).
    Revoke(RevokeRequest),
    /// The authorization code that makes this grant was replayed: revoke it, and refuse its
    /// creation should that come later.
    Replayed {
        /// The grant's id.
        grant: String,
    },
    /// A call asked the session-era client these questions (by the ids the relay gave them):
    /// hold the request until every one is answered ([`Reply::Answers`]); ticks meanwhile.
    AwaitAnswers {
        /// The connection that was asked (only it may answer).
        grant: String,
        /// The questions' ids.
        ids: Vec<String>,
    },
    /// A client's answer to one question: to the request that waits for it.
    Answer {
        /// The connection that answers.
        grant: String,
        /// The question's id.
        id: String,
        /// What came back (a result, or `{"error": …}`).
        answer: Value,
    },
    /// A client whose stream dropped comes back for its call (by the call's [`request_key`]):
    /// its events from now on and its end, or its end if it ended meanwhile; [`Reply::NotAsked`]
    /// when there is nothing to take up.
    Resume {
        /// The connection that comes back.
        grant: String,
        /// The call's request key.
        request: String,
    },
    /// A client's request about one of its tasks.
    Task {
        /// The grant the access token names (only its own tasks are found).
        grant: String,
        /// The task's id.
        task: String,
        /// What it asks.
        op: TaskOp,
    },
}

/// What a client asks of a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskOp {
    /// `tasks/get`: where it stands.
    Get,
    /// `tasks/cancel`.
    Cancel,
    /// `tasks/update`: answers to its input requests (`inputResponses`, an object).
    Update(Value),
}

/// What the pairing says about a task.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskReply {
    /// The task as it stands (`tasks/get`), for the Worker to render.
    Detailed(TaskView),
    /// `tasks/update` or `tasks/cancel` was taken.
    Acknowledged,
    /// Refused (-32602), with the sentence.
    Refused {
        /// Why.
        sentence: String,
    },
}

/// What a [`Request::Check`] wants besides the grant's liveness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Nothing: [`Reply::Done`].
    Nothing,
    /// What the list agents see is made of ([`Reply::Tools`]).
    Tools,
    /// What the `status` tool says ([`Reply::Status`]).
    Status,
}

/// What a pairing's object replies: one line per reply (NDJSON), several for a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Done; nothing more to say.
    Done,
    /// The grant is not live (forgotten, revoked, expired, never made): the client's token no
    /// longer reaches the pairing.
    NoGrant,
    /// What the list agents see is made of, for the Worker to render ([`crate::tools::list`]).
    Tools {
        /// The focused tab's stated list (None: it stated none, so the bundled catalogue).
        stated: Option<ToolList>,
    },
    /// What the `status` tool says, for the Worker to render ([`crate::tools::status_result`]).
    Status {
        /// The pairing's tabs.
        tabs: TabsStatus,
        /// What came of the asking connection's calls nobody waited for, a sentence each.
        told: Vec<String>,
    },
    /// The `requestState` came back before: refused.
    StateUsed,
    /// What came of a [`Request::Grant`].
    Grant(GrantReply),
    /// What came of a [`Request::Refresh`].
    Refresh(RefreshReply),
    /// The pairing holds the most listeners it keeps.
    TooManyListeners,
    /// One event of a call; the last is [`CallEvent::Done`].
    Call(CallEvent),
    /// One event of a listener's stream.
    Listen(ListenEvent),
    /// Every question of a [`Request::AwaitAnswers`] answered: an object of id → answer.
    Answers(Value),
    /// The pairing holds the most unanswered questions it keeps (or the same ids already).
    TooManyQuestions,
    /// The answer is to no question of this connection that waits (or is too large): refused.
    NotAsked,
    /// What came of a request about a task.
    Task(TaskReply),
}

/// The request as the body of the object's fetch, read back there.
impl Message for Request {}

impl Reply {
    /// Whether this reply is the last its request gets (a call's events and a listener's
    /// lines come before the end).
    #[must_use]
    pub fn ends(&self) -> bool {
        !matches!(
            self,
            Self::Call(CallEvent::Asking(_) | CallEvent::Answered | CallEvent::Tick)
                | Self::Listen(_)
        )
    }

    /// The reply as its line, newline included.
    #[must_use]
    pub fn line(&self) -> Vec<u8> {
        let mut line = self.to_json();
        line.push(b'\n');
        line
    }

    /// A line read back (with or without its newline).
    ///
    /// # Errors
    /// [`WireError`] when the line is not a reply.
    pub fn decode(line: &[u8]) -> Result<Self, WireError> {
        let line = match line {
            [whole @ .., b'\n'] => whole,
            _ => line,
        };
        // A tab's result keeps its data as the tab wrote it (see `tabrelay_bundle::raw`).
        let (mut reply, data) = read_keeping::<Self>(line, &TAB_DATA_PATH)?;
        if let Self::Call(CallEvent::Done(CallReply::TabResult { outcome })) = &mut reply {
            outcome.keep(data);
        }
        Ok(reply)
    }
}

/// Where a tab's result data sits in a reply line, as the codecs below write
/// `Reply::Call(CallEvent::Done(CallReply::TabResult { outcome: Outcome::Done { data, .. } }))`:
/// read as the tab wrote it, never as a tree.
const TAB_DATA_PATH: [&str; 5] = ["call", "done", "tab_result", "outcome", "data"];

/// What the Worker asks the pairing to do with a tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRequest {
    /// The tool, its arguments, the agent and the connection it came through.
    pub tool_call: ToolCall,
    /// How long the caller waits, in milliseconds (at most [`crate::limits::TAB_CALL_WAIT_MS`]).
    pub wait_ms: u64,
    /// The request's key within the pairing ([`request_key`]), by which it can be cancelled.
    pub request: String,
    /// Whether to answer as a stream of [`CallEvent`] lines (the client listens to SSE).
    pub stream: bool,
    /// A retried call's input for the tab ([`tabrelay_bundle::protocol::RelayMessage::Call`]).
    pub input: Option<Value>,
    /// Whether its client can come back for it when its stream drops (a 2025-11-25 client
    /// with a session): the call then keeps running, to be taken up with [`Request::Resume`].
    pub resumable: bool,
    /// Set when the client takes tasks: a call of a tool that supports them becomes one.
    pub task: Option<TaskTerms>,
    /// A 2026-07-28 call's `Mcp-Param-{Name}` headers, an object of `name` (lowercased) to raw
    /// value, for the pairing to hold against the tool's `x-mcp-header`s (None: the session
    /// era, which has no such headers).
    pub param_headers: Option<Value>,
}

/// How a call from a client that takes tasks becomes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskTerms {
    /// The input capabilities the client declared (`elicitation`, `sampling`, `roots`): what
    /// the tab may ask it through the task.
    pub declared: Vec<String>,
    /// Made at once (the 2025-11-25 client asked for a task); else when the person is asked or
    /// [`crate::limits::TASK_AFTER_MS`] pass without the tab's answer (2026-07-28: the server
    /// decides).
    pub at_once: bool,
}

/// The key of a client's request within a pairing: its connection (grant) and JSON-RPC id, so
/// one connection can never cancel another's call.
#[must_use]
pub fn request_key(connection: &str, id: &crate::jsonrpc::Id) -> String {
    let mut key = connection.to_owned();
    key.push(' ');
    key.push_str(&tabrelay_bundle::fields::json_text(id));
    key
}

/// The connection whose request key `request` is ([`request_key`]).
#[must_use]
pub fn connection_of(request: &str) -> &str {
    request.split_once(' ').map_or(request, |(connection, _)| connection)
}

/// Whether request key `request` ([`request_key`]) is one of connection `connection`'s.
#[must_use]
pub fn is_request_of(request: &str, connection: &str) -> bool {
    request.strip_prefix(connection).is_some_and(|rest| rest.starts_with(' '))
}

/// One line of a streamed call's reply, from the pairing to the Worker.
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    /// The person is being asked; the sentence is the card's.
    Asking(String),
    /// The person answered; the step runs.
    Answered,
    /// Still waiting (every [`crate::limits::KEEP_ALIVE_MS`]).
    Tick,
    /// The end: the reply.
    Done(CallReply),
}

/// What the Worker asks the pairing when a code is redeemed: a new grant for this client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRequest {
    /// The grant's id (chosen when the code was redeemed).
    pub id: String,
    /// The client's id.
    pub client_id: String,
    /// Who asked (as the redeemed code granted).
    pub requester: Requester,
}

/// What came of a grant's creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantReply {
    /// Made: its id and first refresh token's secret.
    Made {
        /// The grant's id.
        grant: String,
        /// The refresh token's secret part.
        secret: String,
    },
    /// Refused: the pairing holds the most connections it keeps (it removes none).
    Full,
    /// Refused: its authorization code was replayed, and the grant revoked before it was made.
    Replayed,
}

/// What a refresh comes to, for the Worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshReply {
    /// New tokens may be issued for this grant.
    Rotated {
        /// The new refresh token's secret part.
        secret: String,
        /// The client's name.
        client_name: String,
        /// Its redirect host.
        host: String,
    },
    /// Refused (`invalid_grant`), with the sentence.
    Refused {
        /// Why.
        description: String,
    },
}

/// One event of a listener's stream: a keep-alive at once and every
/// [`crate::limits::KEEP_ALIVE_MS`], and one each time the focused tab's tool list changes (a new
/// list, focus moving to a tab whose list differs, the focused tab going away). It ends when the
/// listener goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenEvent {
    /// Ask for the tool list again.
    ToolsChanged,
    /// Still listening.
    Tick,
}

/// What the pairing replies about a call.
#[derive(Debug, Clone, PartialEq)]
pub enum CallReply {
    /// The tab's result.
    TabResult {
        /// The result.
        outcome: Outcome,
    },
    /// The relay could not carry the call; the sentence says why.
    NotCarried {
        /// For the agent.
        sentence: String,
    },
    /// No tool of this name is in the list agents see (the focused tab's, else the bundled
    /// catalogue): a JSON-RPC error, not a tool error.
    NoSuchTool {
        /// The name called.
        tool: String,
    },
    /// The call became this task (for the Worker to render as the `CreateTaskResult`): the
    /// client polls it.
    Task(TaskView),
    /// The tool runs only as a task and the client takes none (-32021).
    NeedsTasks,
    /// A header that mirrors an argument (the tool's `x-mcp-header`) is missing, unreadable,
    /// sent for an argument that is not there, or says another value (-32020, HTTP 400).
    HeaderMismatch {
        /// The header, `Mcp-Param-{Name}`.
        header: String,
    },
}

impl CallReply {
    /// A call the relay could not carry, with its sentence.
    #[must_use]
    pub fn not_carried(sentence: impl Into<String>) -> Self {
        Self::NotCarried { sentence: sentence.into() }
    }
}

// The messages between the Worker and the pairing, each declared once for both directions
// (see `tabrelay_bundle::codec!`).

tabrelay_bundle::codec!(CallRequest, "a call request", {
    tool_call as flat, wait_ms, request, stream, input or None, resumable or false, task or None,
    param_headers or None
});
tabrelay_bundle::codec!(CallEvent, "a call event", enum {
    "answered" => Answered,
    "tick" => Tick,
    "asking" => Asking(String),
    "done" => Done(CallReply),
});
tabrelay_bundle::codec!(GrantRequest, "a grant request", {
    id, client_id, requester as flat
});
tabrelay_bundle::codec!(RefreshReply, "a refresh reply", enum {
    "rotated" => Rotated { secret, client_name, host },
    "refused" => Refused { description },
});
tabrelay_bundle::codec!(CallReply, "a call reply", enum {
    "tab_result" => TabResult { outcome },
    "not_carried" => NotCarried { sentence },
    "no_such_tool" => NoSuchTool { tool },
    "task" => Task(TaskView),
    "needs_tasks" => NeedsTasks,
    "header_mismatch" => HeaderMismatch { header },
});
tabrelay_bundle::codec!(Request, "a request to the pairing", enum {
    "call" => Call(CallRequest),
    "grant" => Grant(GrantRequest),
    "refresh" => Refresh(RefreshRequest),
    "revoke" => Revoke(RevokeRequest),
    "cancel" => Cancel { request },
    "check" => Check { grant, want },
    "listen" => Listen { grant },
    "use_state" => UseState { key, expires_ms },
    "replayed" => Replayed { grant },
    "await_answers" => AwaitAnswers { grant, ids },
    "answer" => Answer { grant, id, answer },
    "resume" => Resume { grant, request },
    "task" => Task { grant, task, op },
});
tabrelay_bundle::codec!(TaskTerms, "how a call becomes a task", { declared, at_once });
tabrelay_bundle::codec!(TaskOp, "a request about a task", enum {
    "get" => Get,
    "cancel" => Cancel,
    "update" => Update(Value),
});
tabrelay_bundle::codec!(TaskReply, "a reply about a task", enum {
    "detailed" => Detailed(TaskView),
    "acknowledged" => Acknowledged,
    "refused" => Refused { sentence },
});
tabrelay_bundle::codec!(Want, "what a check wants", enum {
    "nothing" => Nothing,
    "tools" => Tools,
    "status" => Status,
});
tabrelay_bundle::codec!(Reply, "a reply of the pairing", enum {
    "done" => Done,
    "no_grant" => NoGrant,
    "state_used" => StateUsed,
    "too_many_listeners" => TooManyListeners,
    "tools" => Tools { stated or None },
    "status" => Status { tabs, told },
    "grant" => Grant(GrantReply),
    "refresh" => Refresh(RefreshReply),
    "call" => Call(CallEvent),
    "listen" => Listen(ListenEvent),
    "answers" => Answers(Value),
    "too_many_questions" => TooManyQuestions,
    "not_asked" => NotAsked,
    "task" => Task(TaskReply),
});
tabrelay_bundle::codec!(GrantReply, "a grant reply", enum {
    "full" => Full,
    "replayed" => Replayed,
    "made" => Made { grant, secret },
});
tabrelay_bundle::codec!(ListenEvent, "a listener's event", enum {
    "tools_changed" => ToolsChanged,
    "tick" => Tick,
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairing::tasks::{Failure, Status};
    use tabrelay_bundle::protocol::{Connection, TabMessage};

    fn call() -> CallRequest {
        CallRequest {
            tool_call: ToolCall {
                tool: "add".into(),
                args: serde_json::json!({"a": 1}),
                agent: "Claude".into(),
                connection: Connection {
                    id: "g1".into(),
                    kind: "connector".into(),
                    client: "Claude".into(),
                    host: "claude.ai".into(),
                    verified: None,
                },
            },
            wait_ms: 1000,
            request: "g1 7".into(),
            stream: true,
            input: None,
            resumable: false,
            task: None,
            param_headers: None,
        }
    }

    /// Every request the Worker sends.
    pub(crate) fn requests() -> Vec<Request> {
        vec![
            Request::Call(call()),
            Request::Call(CallRequest { input: Some(serde_json::json!({"x": [1]})), ..call() }),
            Request::Call(CallRequest { resumable: true, ..call() }),
            Request::Call(CallRequest {
                param_headers: Some(serde_json::json!({"region": "=?base64?SGk=?="})),
                ..call()
            }),
            Request::Cancel { request: "g1 7".into() },
            Request::Check { grant: "g".into(), want: Want::Nothing },
            Request::Check { grant: "g".into(), want: Want::Tools },
            Request::Check { grant: "g".into(), want: Want::Status },
            Request::Listen { grant: "g".into() },
            Request::UseState { key: "k".into(), expires_ms: 5 },
            Request::Grant(GrantRequest {
                id: "g".into(),
                client_id: "c".into(),
                requester: Requester {
                    client_name: "n".into(),
                    host: "h".into(),
                    place: Some("Lisbon, PT".into()),
                    verified: Some("claude.ai".into()),
                },
            }),
            Request::Grant(GrantRequest {
                id: "g".into(),
                client_id: "c".into(),
                requester: Requester {
                    client_name: "n".into(),
                    host: "h".into(),
                    place: None,
                    verified: None,
                },
            }),
            Request::Refresh(RefreshRequest {
                grant: "g".into(),
                secret: "s".into(),
                client_id: "c".into(),
            }),
            Request::Revoke(RevokeRequest { grant: "g".into(), secret: None }),
            Request::Revoke(RevokeRequest { grant: "g".into(), secret: Some("s".into()) }),
            Request::Replayed { grant: "g".into() },
            Request::AwaitAnswers { grant: "g".into(), ids: vec!["q1".into(), "q2".into()] },
            Request::Answer {
                grant: "g".into(),
                id: "q1".into(),
                answer: serde_json::json!({"action": "accept"}),
            },
            Request::Resume { grant: "g".into(), request: "g 7".into() },
            Request::Call(CallRequest {
                task: Some(TaskTerms { declared: vec!["elicitation".into()], at_once: false }),
                ..call()
            }),
            Request::Task { grant: "g".into(), task: "t".into(), op: TaskOp::Get },
            Request::Task { grant: "g".into(), task: "t".into(), op: TaskOp::Cancel },
            Request::Task {
                grant: "g".into(),
                task: "t".into(),
                op: TaskOp::Update(serde_json::json!({"a": {"action": "accept"}})),
            },
        ]
    }

    /// A tab's stated list: one tool the person is asked about.
    fn stated_list() -> ToolList {
        let tools = serde_json::json!([{"name": "a", "inputSchema": {"type": "object"}, "setting": "asks"}]);
        ToolList::read(&tools).unwrap()
    }

    /// A task as the Worker is told it, holding what its status says.
    fn task_view(status: Status) -> TaskView {
        let said = |s: Status, v: Value| (status == s).then_some(v);
        TaskView {
            id: "t".into(),
            status,
            created_ms: 1_000,
            updated_ms: 2_000,
            status_message: (status == Status::Working).then(|| "Asked.".into()),
            result: said(Status::Completed, serde_json::json!({"content": []})),
            error: (status == Status::Failed)
                .then(|| Failure { code: -32603, message: "Gone.".into() }),
            input_requests: said(Status::InputRequired, serde_json::json!({"a": {}})),
        }
    }

    /// Every reply the object sends.
    pub(crate) fn replies() -> Vec<Reply> {
        let outcome = Outcome::Failed { error: "no".into() };
        let mut replies = vec![
            Reply::Done,
            Reply::NoGrant,
            Reply::Tools { stated: None },
            Reply::Tools { stated: Some(stated_list()) },
            Reply::Status { tabs: TabsStatus::default(), told: vec![] },
            Reply::Status {
                tabs: TabsStatus {
                    tabs: 2,
                    focused: Some(1),
                    dataset: Some("Cells".into()),
                    stated: true,
                    refused: vec!["wipe".into()],
                },
                told: vec!["Done.".into()],
            },
            Reply::StateUsed,
            Reply::Grant(GrantReply::Made { grant: "g".into(), secret: "s".into() }),
            Reply::Grant(GrantReply::Full),
            Reply::Grant(GrantReply::Replayed),
            Reply::Refresh(RefreshReply::Rotated {
                secret: "s".into(),
                client_name: "n".into(),
                host: "h".into(),
            }),
            Reply::Refresh(RefreshReply::Refused { description: "d".into() }),
            Reply::TooManyListeners,
            Reply::Listen(ListenEvent::ToolsChanged),
            Reply::Listen(ListenEvent::Tick),
            Reply::Answers(serde_json::json!({"q1": {"action": "decline"}})),
            Reply::TooManyQuestions,
            Reply::NotAsked,
            Reply::Task(TaskReply::Detailed(task_view(Status::Working))),
            Reply::Task(TaskReply::Detailed(task_view(Status::Completed))),
            Reply::Task(TaskReply::Detailed(task_view(Status::Failed))),
            Reply::Task(TaskReply::Detailed(task_view(Status::InputRequired))),
            Reply::Task(TaskReply::Acknowledged),
            Reply::Task(TaskReply::Refused { sentence: "No.".into() }),
        ];
        for event in [CallEvent::Asking("May I?".into()), CallEvent::Answered, CallEvent::Tick] {
            replies.push(Reply::Call(event));
        }
        for reply in [
            CallReply::TabResult { outcome },
            CallReply::not_carried("gone"),
            CallReply::NoSuchTool { tool: "x".into() },
            CallReply::Task(task_view(Status::Working)),
            CallReply::NeedsTasks,
            CallReply::HeaderMismatch { header: "Mcp-Param-Region".into() },
        ] {
            replies.push(Reply::Call(CallEvent::Done(reply)));
        }
        replies
    }

    #[test]
    fn every_request_and_reply_reads_back_as_written() {
        for request in requests() {
            assert_eq!(Request::decode(&request.encode()), Ok(request));
        }
        for reply in replies() {
            let line = reply.line();
            assert!(line.ends_with(b"\n") && line.iter().filter(|b| **b == b'\n').count() == 1);
            assert_eq!(Reply::decode(&line), Ok(reply.clone()));
            assert_eq!(Reply::decode(line.trim_ascii_end()), Ok(reply));
        }
    }

    /// The bytes on the wire: what the derived `Serialize` wrote before the codec (read from
    /// main at the commit that replaced it), one request or reply line each, in the order of
    /// [`requests`] then [`replies`]; the lines of a task, the list and `status` since they went
    /// typed (a task's view, the stated list, the tabs' status: no longer MCP JSON, which the
    /// Worker renders now). A change to the bytes fails here.
    const GOLDEN: &str = include_str!("../../tests/data/wire/pairing.txt");

    #[test]
    fn every_request_and_reply_is_written_as_before() {
        let written: Vec<String> = requests()
            .iter()
            .map(|r| String::from_utf8(r.encode()).unwrap())
            .chain(replies().iter().map(|r| String::from_utf8(r.line()).unwrap().trim_end().into()))
            .collect();
        let golden: Vec<&str> = GOLDEN.lines().collect();
        assert_eq!(written.len(), golden.len());
        for (w, g) in written.iter().zip(golden) {
            assert_eq!(w, g);
        }
    }

    #[test]
    fn a_tab_result_reaches_the_worker_as_the_tab_wrote_it() {
        // Not as the relay would write it (keys in another order, a number's digits): read as
        // a tree anywhere on the way, it would come out otherwise.
        let written = "{\"z\": [1.50,\n \"<b>\"], \"a\": 1e2}";
        let tab = format!(r#"{{"type":"result","id":3,"data":{written}}}"#);
        let Ok(TabMessage::Result { outcome, .. }) = TabMessage::parse(&tab) else { panic!() };
        let reply = Reply::Call(CallEvent::Done(CallReply::TabResult { outcome }));
        let line = reply.line();
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1, "one line, whatever the tab's");
        let read = Reply::decode(&line).unwrap();
        let Reply::Call(CallEvent::Done(CallReply::TabResult {
            outcome: Outcome::Done { data, .. },
        })) = &read
        else {
            panic!("{read:?}")
        };
        assert_eq!(data.as_str(), r#"{"z":[1.50,"<b>"],"a":1e2}"#, "as written, spaces aside");
        assert_eq!(read, reply);
        // Data that is not JSON never reads: not from the tab, not from the pairing.
        assert!(TabMessage::parse(r#"{"type":"result","id":3,"data":{"a":}}"#).is_err());
        let line = br#"{"call":{"done":{"tab_result":{"outcome":{"data":[1,}}}}}"#;
        assert_eq!(Reply::decode(line), Err(WireError::NotJson));
    }

    #[test]
    fn a_request_key_is_its_connections_only() {
        let key = request_key("g1", &crate::jsonrpc::Id::Number(7));
        assert!(is_request_of(&key, "g1"));
        assert!(!is_request_of(&key, "g"), "a connection whose id starts the other's");
        assert!(!is_request_of(&key, "g2"));
        assert_eq!(connection_of(&key), "g1");
        assert_eq!(
            connection_of(&request_key("g1", &crate::jsonrpc::Id::Text("a b".into()))),
            "g1"
        );
    }

    #[test]
    fn only_a_calls_events_and_a_listeners_lines_come_before_the_end() {
        let before_end: Vec<Reply> = replies().into_iter().filter(|r| !r.ends()).collect();
        assert_eq!(
            before_end,
            [
                Reply::Listen(ListenEvent::ToolsChanged),
                Reply::Listen(ListenEvent::Tick),
                Reply::Call(CallEvent::Asking("May I?".into())),
                Reply::Call(CallEvent::Answered),
                Reply::Call(CallEvent::Tick),
            ]
        );
    }

    #[test]
    fn what_is_not_a_request_or_a_reply_reads_as_none() {
        for bad in [
            &b""[..],
            b"{}",
            b"null",
            b"\"call\"",
            b"{\"call\":{}}",
            b"{\"check\":{\"grant\":\"g\",\"want\":\"everything\"}}",
            b"{\"cancel\":{\"request\":1}}",
            b"{\"listen\":{\"grant\":\"g\"},\"cancel\":{\"request\":\"r\"}}",
        ] {
            assert!(Request::decode(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        for bad in [&b""[..], b"\"tools\"", b"{\"call\":\"done\"}", b"{\"listen\":true}"] {
            assert!(Reply::decode(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(Request::decode(b"{"), Err(WireError::NotJson));
        assert_eq!(Request::decode(b"{}"), Err(WireError::Not("a request to the pairing")));
        assert_eq!(Reply::decode(b"\"tools\"\n"), Err(WireError::Not("a reply of the pairing")));
    }
}
