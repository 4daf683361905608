//! Tasks (the 2026-07-28 extension `io.modelcontextprotocol/tasks`, SEP-2663): a tool call
//! that waits for the person becomes a task the client polls with `tasks/get`, answers with
//! `tasks/update` when the tab needs its input, and may stop with `tasks/cancel`, for as long
//! as the task's time to live; the person may take that long.
//!
//! Here: one task's life as a state machine (what the tab and the client do to it, at which
//! `now`), the typed [`View`] of it the Worker is told, and the rules for which calls become
//! tasks. The pairing ([`super::room::Room`]) keeps each task as a row (the JSON of [`Task`])
//! so it outlives an eviction and a restart; the Worker only asks it, and renders the view in
//! the client's revision ([`crate::mcp::tasks`]): no MCP JSON is built here.

use serde_json::{Map, Value};
use tabrelay_bundle::protocol::ToolCall;

use crate::limits::TASK_TTL_MS;

/// The extension's name in `capabilities.extensions` (server and client).
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The tab works on it (or the person is being asked in the tab).
    Working,
    /// The tab needs the client's input (`inputRequests`).
    InputRequired,
    /// The tab answered (a tool error is completed too, with `isError`).
    Completed,
    /// The relay could not carry it to an answer (a protocol-level failure).
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl Status {
    /// Whether nothing can change it any more.
    #[must_use]
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// Its name on the wire.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

tabrelay_bundle::codec!(Status, "a task's status", enum {
    "working" => Working,
    "input_required" => InputRequired,
    "completed" => Completed,
    "failed" => Failed,
    "cancelled" => Cancelled,
});

/// Why a task failed: a JSON-RPC error's code and sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The sentence.
    pub message: String,
}

tabrelay_bundle::codec!(Failure, "why a task failed", { code, message });

/// A task as the Worker is told it (a made task, or `tasks/get`): where it stands and what it
/// holds for its client, which the Worker renders in the client's revision
/// ([`crate::mcp::tasks`]).
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// Its id.
    pub id: String,
    /// Where it stands.
    pub status: Status,
    /// When it was made, in milliseconds since 1970.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// The relay's sentence of what goes on.
    pub status_message: Option<String>,
    /// The tool result, once completed (None otherwise).
    pub result: Option<Value>,
    /// Why it failed, once failed (None otherwise).
    pub error: Option<Failure>,
    /// The requests waiting for the client's answers, an object keyed by the tab's ids, while
    /// input is required (None otherwise).
    pub input_requests: Option<Value>,
}

tabrelay_bundle::codec!(View, "a task", {
    id, status, created_ms, updated_ms, status_message or None, result or None, error or None,
    input_requests or None
});

/// What carries a task in the pairing: its call in a tab now, and what the next round needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Carried {
    /// The tab its call went to.
    pub tab: u64,
    /// The call in that tab now (None: none runs, between rounds or once finished).
    pub call: Option<u64>,
    /// The tool, its arguments, the agent and the connection, as the tab is told them.
    pub tool_call: ToolCall,
    /// The input capabilities the client declared (`elicitation`, `sampling`, `roots`): the
    /// tab's requests for others fail the task.
    pub declared: Vec<String>,
}

tabrelay_bundle::codec!(Carried, "what carries a task", { tab, call, tool_call as flat, declared });

/// What a call that may become a task holds for it from its start, in bytes, and its task for
/// as long as it is kept beside what comes of it ([`Task::held_bytes`]): the call's JSON and
/// its arguments' tree, and [`ROW_BYTES`] for the rest of the task's row. Its connection's share
/// of tasks counts it; the call is refused before anything is copied when it would not fit.
#[must_use]
pub fn call_held_bytes(tool_call: &ToolCall) -> usize {
    let json = tabrelay_bundle::fields::Encode::to_json(tool_call).len();
    json + crate::pairing::tree_bytes(&tool_call.args) + ROW_BYTES
}

/// The most a task's row holds beside its call and what comes of it: its id, its connection's,
/// its status and times, the tab and call that carry it, the client's input capabilities, and
/// its status message (a card of `tabrelay_bundle::protocol::MAX_CARD_CHARS`, quoted, which
/// may come after the share was checked).
const ROW_BYTES: usize = 4096;

/// One task, as the pairing keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Its id (random; the client names it back).
    pub id: String,
    /// The connection that made it: only that connection reads, updates or cancels it.
    pub grant: String,
    /// Where it stands.
    pub status: Status,
    /// When it was made and last changed.
    pub created_ms: u64,
    /// When it last changed.
    pub updated_ms: u64,
    /// The tool result, once completed.
    pub result: Option<Value>,
    /// Why it failed, once failed.
    pub error: Option<Failure>,
    /// The requests still waiting for the client's answer (input required).
    pub input_requests: Map<String, Value>,
    /// The client's answers so far, handed to the tab once every request is answered.
    pub responses: Map<String, Value>,
    /// The tab's own state for its next round, kept until the answers are complete.
    pub tab_state: Option<Value>,
    /// The relay's sentence of what goes on (the person's card while they are asked).
    pub status_message: Option<String>,
    /// Its call in the tab.
    pub carried: Carried,
}

/// A task's stored row: its fields in order, an empty or missing part left out ([`read`]
/// reads it back).
impl tabrelay_bundle::fields::Encode for Task {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = tabrelay_bundle::fields::Object::open(out);
        o.field("id", &self.id);
        o.field("grant", &self.grant);
        o.field("status", &self.status);
        o.field("created_ms", &self.created_ms);
        o.field("updated_ms", &self.updated_ms);
        if let Some(result) = &self.result {
            o.field("result", result);
        }
        if let Some(error) = &self.error {
            o.field("error", error);
        }
        if !self.input_requests.is_empty() {
            o.field("input_requests", &self.input_requests);
        }
        if !self.responses.is_empty() {
            o.field("responses", &self.responses);
        }
        if let Some(tab_state) = &self.tab_state {
            o.field("tab_state", tab_state);
        }
        if let Some(status_message) = &self.status_message {
            o.field("status_message", status_message);
        }
        o.field("carried", &self.carried);
        o.close();
    }
}

/// What happened to a task.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The tab answered: the tool result (an `isError` one included).
    Answered(Value),
    /// The tab needs the client's input: its requests and its own state.
    NeedsInput {
        /// The requests, keyed by the tab's ids.
        requests: Map<String, Value>,
        /// The tab's state for the next round.
        state: Option<Value>,
    },
    /// The relay could not carry the call (the tab went away, or the tab asked for input the
    /// client cannot give): the JSON-RPC error's code and sentence.
    Lost(i64, String),
    /// The client answered some of the requests (`tasks/update`).
    Update(Map<String, Value>),
    /// The client cancelled it.
    Cancel,
}

/// What the pairing does after an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Nothing beyond storing the task.
    Store,
    /// Store, and hand the tab the client's answers and its state: the call's next round.
    Resume {
        /// The client's answers, keyed as the tab asked.
        responses: Map<String, Value>,
        /// The tab's state.
        state: Option<Value>,
    },
    /// Store, and tell the tab to drop the call.
    StopInTab,
    /// Nothing changed (a finished task, or nothing to do): no write.
    Unchanged,
}

impl Task {
    /// A new task, working, carried by `carried` (its connection's id is the grant).
    #[must_use]
    pub fn new(id: String, carried: Carried, now_ms: u64) -> Self {
        Self {
            id,
            grant: carried.tool_call.connection.id.clone(),
            status: Status::Working,
            created_ms: now_ms,
            updated_ms: now_ms,
            result: None,
            error: None,
            input_requests: Map::new(),
            responses: Map::new(),
            tab_state: None,
            status_message: None,
            carried,
        }
    }

    /// When it may be forgotten.
    #[must_use]
    pub fn expires_ms(&self) -> u64 {
        self.created_ms + TASK_TTL_MS
    }

    /// What it holds, in bytes: what its call held from its start ([`call_held_bytes`]: its
    /// arguments, the rest of its row), and its result, error, the tab's questions and state and
    /// the client's answers so far, as JSON and as trees ([`crate::pairing::tree_bytes`]): what
    /// counts toward its connection's share ([`crate::limits::MAX_TASK_BYTES_PER_CONNECTION`])
    /// for as long as it is kept.
    #[must_use]
    pub fn held_bytes(&self) -> usize {
        use crate::pairing::{map_tree_bytes, tree_bytes};
        use tabrelay_bundle::fields::Encode;
        let parts: [&dyn Encode; 5] =
            [&self.result, &self.error, &self.input_requests, &self.responses, &self.tab_state];
        // As a JSON array of the five: the brackets and the commas between them.
        let mut held = call_held_bytes(&self.carried.tool_call) + 6;
        for part in parts {
            held += part.to_json().len();
        }
        held += map_tree_bytes(&self.input_requests) + map_tree_bytes(&self.responses);
        if let Some(result) = &self.result {
            held += tree_bytes(result);
        }
        if let Some(state) = &self.tab_state {
            held += tree_bytes(state);
        }
        held
    }

    /// Whether connection `grant` may see it at `now_ms` (its own, not expired).
    #[must_use]
    pub fn visible_to(&self, grant: &str, now_ms: u64) -> bool {
        self.grant == grant && now_ms < self.expires_ms()
    }

    /// Applies one event at `now_ms`; a finished task changes no more.
    pub fn apply(&mut self, event: Event, now_ms: u64) -> Effect {
        if self.status.is_terminal() {
            // Cancelling or answering a finished task is acknowledged and changes nothing; a
            // late answer from the tab (after a cancel) goes nowhere.
            return Effect::Unchanged;
        }
        let effect = match event {
            Event::Answered(result) => {
                self.status = Status::Completed;
                self.result = Some(result);
                self.clear_input();
                Effect::Store
            }
            Event::NeedsInput { requests, state } => {
                self.status = Status::InputRequired;
                self.input_requests = requests;
                self.responses = Map::new();
                self.tab_state = state;
                Effect::Store
            }
            Event::Lost(code, sentence) => {
                self.status = Status::Failed;
                self.error = Some(Failure { code, message: sentence });
                self.clear_input();
                Effect::Store
            }
            Event::Cancel => {
                self.status = Status::Cancelled;
                self.clear_input();
                Effect::StopInTab
            }
            Event::Update(answers) => {
                // Answers to requests the task is not waiting for are ignored (SEP-2663).
                let mut taken = false;
                for (key, answer) in answers {
                    let waits = self.status == Status::InputRequired;
                    if waits && self.input_requests.remove(key.as_str()).is_some() {
                        self.responses.insert(key, answer);
                        taken = true;
                    }
                }
                if !taken {
                    return Effect::Unchanged;
                }
                if self.input_requests.is_empty() {
                    // Every request answered: the tab's next round runs.
                    self.status = Status::Working;
                    Effect::Resume {
                        responses: core::mem::take(&mut self.responses),
                        state: self.tab_state.take(),
                    }
                } else {
                    Effect::Store
                }
            }
        };
        self.updated_ms = now_ms;
        effect
    }

    fn clear_input(&mut self) {
        self.input_requests = Map::new();
        self.responses = Map::new();
        self.tab_state = None;
        self.status_message = None;
        self.carried.call = None;
    }

    /// What the Worker is told of it: what it holds for its client as it stands (the result
    /// once completed, the error once failed, the pending requests while input is required).
    #[must_use]
    pub fn view(&self) -> View {
        let status = self.status;
        View {
            id: self.id.clone(),
            status,
            created_ms: self.created_ms,
            updated_ms: self.updated_ms,
            status_message: self.status_message.clone(),
            result: if status == Status::Completed { self.result.clone() } else { None },
            error: if status == Status::Failed { self.error.clone() } else { None },
            input_requests: (status == Status::InputRequired)
                .then(|| Value::Object(self.input_requests.clone())),
        }
    }
}

/// Whether a 2026-07-28 request's client capabilities declare the extension.
#[must_use]
pub fn declared(capabilities: &Map<String, Value>) -> bool {
    capabilities.get("extensions").and_then(|e| e.get(EXTENSION)).is_some_and(Value::is_object)
}

/// How a tool takes tasks (`execution.taskSupport` in its definition): "forbidden" (or none),
/// "optional" or "required".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// The call is always answered in one piece.
    Forbidden,
    /// A task when the client takes tasks, else in one piece.
    Optional,
    /// Only as a task: a client that takes none is refused (-32021).
    Required,
}

impl Support {
    /// The support a tool definition's `execution` says.
    #[must_use]
    pub fn of_execution(execution: &Value) -> Self {
        match execution.get("taskSupport").and_then(Value::as_str) {
            Some("optional") => Self::Optional,
            Some("required") => Self::Required,
            _ => Self::Forbidden,
        }
    }

    /// Its name in a tool's `execution.taskSupport`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

/// What a `tools/call` becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Answered in one piece (JSON or a stream), as every call before tasks.
    Direct,
    /// A task, made at once; the client polls it.
    Task,
    /// Refused: the tool needs tasks and the client declared none (-32021).
    NeedsTasks,
}

/// Decides what a call becomes: the tool's support and whether the client declared the
/// extension. A legacy `task` parameter from the client changes nothing.
#[must_use]
pub fn dispatch(support: Support, client_takes_tasks: bool) -> Dispatch {
    match (support, client_takes_tasks) {
        (Support::Forbidden, _) => Dispatch::Direct,
        (_, true) => Dispatch::Task,
        (Support::Optional, false) => Dispatch::Direct,
        (Support::Required, false) => Dispatch::NeedsTasks,
    }
}

/// A task as read back from its stored JSON.
#[must_use]
pub fn read(value: Value) -> Option<Task> {
    let mut f = tabrelay_bundle::fields::Fields::of(value)?;
    let object = |v: Option<Value>| match v {
        None => Some(Map::new()),
        Some(Value::Object(m)) => Some(m),
        Some(_) => None,
    };
    Some(Task {
        id: f.string("id")?,
        grant: f.string("grant")?,
        status: tabrelay_bundle::fields::Take::take(&mut f, "status")?,
        created_ms: f.u64("created_ms")?,
        updated_ms: f.u64("updated_ms")?,
        result: f.value("result"),
        error: tabrelay_bundle::fields::Take::take(&mut f, "error")?,
        input_requests: object(f.value("input_requests"))?,
        responses: object(f.value("responses"))?,
        tab_state: f.value("tab_state"),
        status_message: f.value("status_message").and_then(|v| v.as_str().map(str::to_owned)),
        carried: tabrelay_bundle::fields::Take::take(&mut f, "carried")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tabrelay_bundle::protocol::Connection;

    pub(crate) fn carried() -> Carried {
        Carried {
            tab: 5,
            call: Some(9),
            tool_call: ToolCall {
                tool: "history_list".into(),
                args: json!({}),
                agent: "Claude".into(),
                connection: Connection {
                    id: "g1".into(),
                    kind: "connector".into(),
                    client: "Claude".into(),
                    host: "claude.ai".into(),
                    verified: None,
                },
            },
            declared: vec!["elicitation".into()],
        }
    }

    fn task() -> Task {
        Task::new("t1".into(), carried(), 1_000)
    }

    fn one(key: &str, v: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(key.into(), v);
        m
    }

    #[test]
    fn a_made_task_is_told_as_working_and_holding_nothing_yet() {
        let made = task().view();
        assert_eq!((made.id.as_str(), made.status), ("t1", Status::Working));
        assert_eq!((made.created_ms, made.updated_ms), (1_000, 1_000));
        assert_eq!((made.result, made.error, made.input_requests), (None, None, None));
    }

    #[test]
    fn the_tab_answering_completes_it_with_the_result_inlined() {
        let mut t = task();
        let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
        assert_eq!(t.apply(Event::Answered(result.clone()), 5_000), Effect::Store);
        let got = t.view();
        assert_eq!(got.status, Status::Completed);
        assert_eq!(got.result, Some(result));
        assert_eq!(got.updated_ms, 5_000);
        assert!(got.error.is_none() && got.input_requests.is_none());
        // A tool error is a completed task too.
        let mut e = task();
        e.apply(Event::Answered(json!({"content": [], "isError": true})), 2_000);
        assert_eq!(e.view().status, Status::Completed);
        assert_eq!(e.view().result.unwrap()["isError"], true);
    }

    #[test]
    fn a_lost_call_fails_with_an_error_and_no_result() {
        let mut t = task();
        t.apply(Event::Lost(-32603, "The tab went away.".into()), 2_000);
        let got = t.view();
        assert_eq!(got.status, Status::Failed);
        let failure = Failure { code: -32603, message: "The tab went away.".into() };
        assert_eq!(got.error, Some(failure));
        assert!(got.result.is_none());
    }

    #[test]
    fn input_is_gathered_one_answer_at_a_time_then_the_tab_resumes() {
        let mut t = task();
        let mut asks = one("a", json!({"method": "elicitation/create", "params": {}}));
        asks.insert("b".into(), json!({"method": "elicitation/create", "params": {}}));
        let state = Some(json!({"round": 1}));
        t.apply(Event::NeedsInput { requests: asks, state: state.clone() }, 2_000);
        let got = t.view();
        assert_eq!(got.status, Status::InputRequired);
        assert_eq!(got.input_requests.unwrap().as_object().unwrap().len(), 2);
        // Answers to something not asked are ignored, and change nothing.
        let stray = one("zzz", json!({"action": "accept"}));
        assert_eq!(t.apply(Event::Update(stray), 2_500), Effect::Unchanged);
        assert_eq!(t.apply(Event::Update(Map::new()), 2_500), Effect::Unchanged);
        assert_eq!(t.updated_ms, 2_000);
        // One answer: still waiting, only the other key left.
        let first = one("a", json!({"action": "accept", "content": {"ok": true}}));
        assert_eq!(t.apply(Event::Update(first), 3_000), Effect::Store);
        let got = t.view().input_requests.unwrap();
        assert_eq!(got.as_object().unwrap().keys().collect::<Vec<_>>(), ["b"]);
        // The last: the tab gets both answers and its state.
        let second = one("b", json!({"action": "decline"}));
        let Effect::Resume { responses, state: back } = t.apply(Event::Update(second), 4_000)
        else {
            panic!("resume")
        };
        assert_eq!(responses.len(), 2);
        assert_eq!(back, state);
        assert_eq!(t.status, Status::Working);
        assert!(t.view().input_requests.is_none());
    }

    #[test]
    fn cancelling_stops_the_call_in_the_tab_once_and_a_finished_task_stays_finished() {
        let mut t = task();
        assert_eq!(t.apply(Event::Cancel, 2_000), Effect::StopInTab);
        assert_eq!(t.view().status, Status::Cancelled);
        // Again: acknowledged, nothing changes; a late answer from the tab goes nowhere.
        assert_eq!(t.apply(Event::Cancel, 3_000), Effect::Unchanged);
        assert_eq!(t.apply(Event::Answered(json!({})), 3_000), Effect::Unchanged);
        assert_eq!(t.view().status, Status::Cancelled);
        assert_eq!(t.updated_ms, 2_000);
        let mut done = task();
        done.apply(Event::Answered(json!({"content": []})), 2_000);
        assert_eq!(done.apply(Event::Cancel, 3_000), Effect::Unchanged);
        assert_eq!(done.view().status, Status::Completed);
    }

    #[test]
    fn a_task_is_its_connections_alone_until_it_expires() {
        let t = task();
        assert!(t.visible_to("g1", 2_000));
        assert!(!t.visible_to("g2", 2_000), "another connection of the pairing");
        assert!(t.visible_to("g1", 1_000 + TASK_TTL_MS - 1));
        assert!(!t.visible_to("g1", 1_000 + TASK_TTL_MS));
    }

    #[test]
    fn a_task_reads_back_as_it_was_stored() {
        let mut t = task();
        let asks = one("a", json!({"method": "elicitation/create"}));
        t.apply(Event::NeedsInput { requests: asks, state: Some(json!([1])) }, 2_000);
        t.apply(Event::Update(one("x", json!(1))), 2_100);
        let stored = crate::crypto::testing::value_of(&t);
        assert_eq!(read(stored), Some(t.clone()));
        let mut done = t;
        done.apply(Event::Answered(json!({"content": []})), 3_000);
        assert_eq!(read(crate::crypto::testing::value_of(&done)), Some(done));
        // A failed task's row keeps its error as a JSON-RPC error's code and sentence.
        let mut failed = task();
        failed.apply(Event::Lost(-32021, "Needs roots.".into()), 2_000);
        let row = crate::crypto::testing::value_of(&failed);
        assert_eq!(row["error"], json!({"code": -32021, "message": "Needs roots."}));
        assert_eq!(read(row), Some(failed));
        for junk in [
            json!(null),
            json!({}),
            json!({"id": "t", "grant": "g", "status": "sleeping", "created_ms": 1, "updated_ms": 1}),
        ] {
            assert_eq!(read(junk), None);
        }
    }

    /// What a task holds is what its call held from its start and what came of it, as JSON
    /// and as trees: never less than its whole row, whatever its card, and a value shaped to
    /// take the most memory counts as it takes it.
    #[test]
    fn a_task_holds_its_row_and_the_trees_of_its_values() {
        use crate::pairing::{map_tree_bytes, tree_bytes};
        use tabrelay_bundle::fields::Encode;
        use tabrelay_bundle::protocol::MAX_CARD_CHARS;
        let row = |t: &Task| {
            let trees = [&t.result, &t.tab_state].map(|v| v.as_ref().map_or(0, tree_bytes));
            let maps = [&t.input_requests, &t.responses].map(map_tree_bytes);
            let args = tree_bytes(&t.carried.tool_call.args);
            t.to_json().len() + trees.iter().chain(&maps).sum::<usize>() + args
        };
        // The longest row beside its call: long names, the largest numbers, a card of the
        // characters JSON writes longest.
        let mut t = task();
        t.id = "t".repeat(64);
        t.grant = "g".repeat(64);
        (t.created_ms, t.updated_ms) = (u64::MAX, u64::MAX);
        (t.carried.tab, t.carried.call) = (u64::MAX, Some(u64::MAX));
        t.carried.declared = vec!["elicitation".into(), "sampling".into(), "roots".into()];
        let card = "<\u{1}\"".repeat(MAX_CARD_CHARS / 3);
        t.status_message =
            Some(crate::sentences::person_asked(&tabrelay_bundle::content::quoted(&card)));
        t.status = Status::InputRequired;
        assert!(row(&t) <= t.held_bytes(), "{} > {}", row(&t), t.held_bytes());
        let asks = one("a", json!({"method": "elicitation/create"}));
        t.apply(Event::NeedsInput { requests: asks, state: Some(json!([1])) }, 2_000);
        t.apply(Event::Update(one("x", json!("é\n"))), 2_100);
        assert!(row(&t) <= t.held_bytes());
        // A megabyte of arguments is held in full, for as long as the task is kept.
        let small = task();
        let mut big = task();
        big.carried.tool_call.args = json!({"text": "a".repeat(1 << 20)});
        let more =
            call_held_bytes(&big.carried.tool_call) - call_held_bytes(&small.carried.tool_call);
        assert!(more > 1 << 20);
        assert_eq!(big.held_bytes(), small.held_bytes() + more);
        // Small numbers in an array: two bytes of JSON each, a 24-byte slot (twice over as the
        // array grows) in memory: counted as the slots.
        let mut zeros = task();
        zeros.carried.tool_call.args = json!({"n": vec![0; 1000]});
        assert!(zeros.held_bytes() - small.held_bytes() >= 1000 * 48, "{}", zeros.held_bytes());
        // A task's result counts as its JSON and its tree.
        let mut done = task();
        let result = json!({"content": [{"type": "text", "text": "a".repeat(1000)}]});
        done.apply(Event::Answered(result.clone()), 2_000);
        let result_bytes = result.to_json().len() + tree_bytes(&result);
        assert_eq!(done.held_bytes(), small.held_bytes() - 4 + result_bytes);
    }

    #[test]
    fn which_calls_become_tasks() {
        let execution = |support: &str| json!({"taskSupport": support});
        for support in [Support::Optional, Support::Required, Support::Forbidden] {
            assert_eq!(Support::of_execution(&execution(support.as_str())), support);
        }
        assert_eq!(Support::of_execution(&json!({})), Support::Forbidden);
        assert_eq!(dispatch(Support::Forbidden, true), Dispatch::Direct);
        assert_eq!(dispatch(Support::Optional, true), Dispatch::Task);
        assert_eq!(dispatch(Support::Optional, false), Dispatch::Direct);
        assert_eq!(dispatch(Support::Required, true), Dispatch::Task);
        assert_eq!(dispatch(Support::Required, false), Dispatch::NeedsTasks);
        let mut caps = Map::new();
        assert!(!declared(&caps));
        caps.insert("extensions".into(), json!({EXTENSION: {}}));
        assert!(declared(&caps));
        caps.insert("extensions".into(), json!({EXTENSION: true}));
        assert!(!declared(&caps), "a setting object, not a flag");
    }
}
