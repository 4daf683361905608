//! The Room's simulations in the style of quinn-proto's: the room driven input by input with a
//! made-up clock, the effects checked as the object would carry them out. Here the harness
//! they share ([`Sim`] and what reads its effects); the tests, one file per job of the room.
mod calls;
mod grants;
mod listeners;
mod memory;
mod presence;
mod sockets;
mod tasks;
mod timers;

use super::*;
use crate::crypto::testing::Counter;
use crate::keys::Keys;
use crate::limits::{
    MAX_CALLS_PER_CONNECTION, MAX_LISTENERS, MAX_LISTENERS_PER_CONNECTION, MAX_PENDING_CALLS,
    MAX_TASKS_PER_CONNECTION, MAX_TASK_RESULT_BYTES, REPLAYED_KEPT_MS, TAB_CALL_WAIT_MS,
    TASK_AFTER_MS, TURN_STORED_EVERY_MS,
};
use crate::limits::{WRONG_CODES_ALLOWED, WRONG_CODE_WINDOW_MS};
use crate::oauth::connect::{refusal, CodeReply, Command, ConnectCode};
use crate::pairing::calls::Flight;
use crate::pairing::calls::LeftCalls;
use crate::pairing::codes::WrongCodes;
use crate::pairing::grants::Grant;
use crate::pairing::tabs::tests::{hello, key, signature, ORIGIN, SENDER};
use crate::pairing::tasks::Task;
use crate::pairing::wire::{
    CallEvent, CallReply, CallRequest, GrantReply, GrantRequest, ListenEvent, Reply, Request,
    TaskOp, TaskReply, Want,
};
use crate::pairing::wire::{RevokeRequest, TaskTerms};
use crate::sentences;
use serde_json::json;
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::protocol::{
    close, RelayMessage, ToolCall, MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};
use tabrelay_bundle::protocol::{
    Connection, HELLO_WAIT_MS, MAX_TABS_PER_PAIRING, MAX_UNPROVEN_SOCKETS,
};
use tabrelay_bundle::BUNDLE_DIGEST;

/// A tool of the bundled catalogue, whichever app's catalogue the relay is built with.
fn tool() -> String {
    Catalogue::bundled().tools[0].name.clone()
}

fn keys() -> Keys {
    Keys::new(&"k".repeat(32), None).unwrap()
}

/// A room, a clock, and what it said so far.
struct Sim {
    room: Room,
    now: u64,
    rng: Counter,
    next_asker: Asker,
}

impl Sim {
    fn new() -> Self {
        let catalogue: &'static Catalogue = Box::leak(Box::new(Catalogue::bundled()));
        let mut sim = Self {
            room: Room::new(Some(keys()), catalogue),
            now: 1_000_000,
            rng: Counter(1),
            next_asker: 0,
        };
        sim.go(Input::Woke(Stored { grants: vec![grant("g1"), grant("g2")], ..Stored::default() }));
        sim
    }

    fn go(&mut self, input: Input) -> Vec<Effect> {
        self.room.handle(input, self.now, &mut self.rng)
    }

    /// The time comes when call `call`'s timer fires: what the room does then.
    fn due(&mut self, call: u64) -> Vec<Effect> {
        let at = self.room.calls.get(call).map_or(self.now, |f| f.due_ms);
        if at != u64::MAX {
            self.now = self.now.max(at);
        }
        self.go(Input::Timeout)
    }

    fn later(&mut self, ms: u64) {
        self.now += ms;
    }

    /// A socket opens: its number.
    fn open(&mut self) -> u64 {
        let number = self.room.next_tab_number(self.now);
        let (pairing, origin, sender) = (key().pairing(), ORIGIN.into(), SENDER.into());
        let effects = self.go(Input::Opened { number, pairing, origin, sender });
        assert!(
            matches!(&effects[..2], [Effect::Attach(_), Effect::Send(n, RelayMessage::Challenge { .. })] if *n == number)
        );
        number
    }

    /// A socket opens and proves the pairing: its number.
    fn tab(&mut self) -> u64 {
        let number = self.open();
        let effects = self.say(number, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
        assert!(
            matches!(effects.last(), Some(Effect::Verify(n, _)) if *n == number),
            "{effects:?}"
        );
        let effects = self.go(Input::Proved { tab: number, valid: true });
        assert!(
            effects.iter().any(
                |e| matches!(e, Effect::Send(n, RelayMessage::Welcome { .. }) if *n == number)
            ),
            "{effects:?}"
        );
        number
    }

    fn say(&mut self, tab: u64, text: &str) -> Vec<Effect> {
        self.go(Input::Message { tab, text: Some(text.into()) })
    }

    fn ask(&mut self, request: Request) -> (Asker, Vec<Effect>) {
        self.next_asker += 1;
        let asker = self.next_asker;
        (asker, self.go(Input::Request { asker, request, replayed: Vec::new() }))
    }

    fn call(&mut self, grant: &str, id: u64, stream: bool, wait_ms: u64) -> (Asker, Vec<Effect>) {
        self.ask(Request::Call(CallRequest { wait_ms, stream, ..call_request(grant, id) }))
    }
}

/// A call of the catalogue's first tool from connection `grant` as its request `id`: no
/// stream, the longest wait, no task, not resumable.
/// `call` with these arguments.
fn with_args(mut call: CallRequest, args: serde_json::Value) -> CallRequest {
    call.tool_call.args = args;
    call
}

fn call_request(grant: &str, id: u64) -> CallRequest {
    CallRequest {
        tool_call: ToolCall {
            tool: tool(),
            args: json!({}),
            agent: "Claude".into(),
            connection: Connection {
                id: grant.into(),
                kind: "connector".into(),
                client: "Claude".into(),
                host: "claude.ai".into(),
                verified: None,
            },
        },
        wait_ms: TAB_CALL_WAIT_MS,
        request: format!("{grant} {id}"),
        stream: false,
        input: None,
        resumable: false,
        task: None,
        param_headers: None,
    }
}

/// A call from a client that takes tasks (and declared elicitation).
fn task_call(sim: &mut Sim, grant: &str, id: u64) -> (Asker, Vec<Effect>) {
    sim.ask(Request::Call(CallRequest {
        task: Some(TaskTerms { declared: vec!["elicitation".into()], at_once: false }),
        ..with_args(call_request(grant, id), json!({"n": 1}))
    }))
}

/// A task-taking call that the tab is slow to answer: the task it became, and the call's id
/// in tab `tab`.
fn slow_task(sim: &mut Sim, grant: &str, id: u64, tab: u64) -> (String, u64) {
    let (asker, effects) = task_call(sim, grant, id);
    let (call, _) = sent_call(&effects, tab);
    sim.later(TASK_AFTER_MS);
    (made_task(&sim.due(call), asker), call)
}

/// The tab's list: the tool, which asks the person first (so it may become a task).
fn asked_list() -> String {
    let t = tool();
    format!(
        r#"{{"type":"tools","tools":[{{"name":"{t}","inputSchema":{{"type":"object"}},"setting":"asks"}}]}}"#
    )
}

/// A task request's reply.
fn about_task(sim: &mut Sim, grant: &str, task: &str, op: TaskOp) -> (TaskReply, Vec<Effect>) {
    let request = Request::Task { grant: grant.into(), task: task.into(), op };
    let (asker, effects) = sim.ask(request);
    match replies(&effects, asker).pop() {
        Some(Reply::Task(reply)) => (reply, effects),
        other => panic!("no task reply: {other:?}"),
    }
}

/// The task a call became, from its waiter's end (its row stored before).
fn made_task(effects: &[Effect], asker: Asker) -> String {
    let made = effects.iter().find_map(|e| match e {
        Effect::Reply(a, Reply::Call(CallEvent::Done(CallReply::Task(task)))) if *a == asker => {
            Some(task)
        }
        _ => None,
    });
    let Some(made) = made else { panic!("no task made for {asker}: {effects:?}") };
    let stored = effects.iter().position(|e| matches!(e, Effect::StoreTask(_)));
    let replied = effects.iter().position(|e| matches!(e, Effect::Reply(a, _) if *a == asker));
    assert!(stored < replied && stored.is_some(), "stored before the reply: {effects:?}");
    assert_eq!(made.status, crate::pairing::tasks::Status::Working);
    made.id.clone()
}

fn stored_tasks(effects: &[Effect]) -> Vec<Task> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::StoreTask(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

fn grant(id: &str) -> Grant {
    let requester = crate::oauth::connect::Requester {
        client_name: "Claude".into(),
        host: "claude.ai".into(),
        place: None,
        verified: None,
    };
    Grant::new(id.into(), "cid".into(), requester, 1_000_000, &mut Counter(9)).0
}

/// The call a tab was sent: its id and turn.
fn sent_call(effects: &[Effect], tab: u64) -> (u64, u64) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Send(n, RelayMessage::Call { id, turn, .. }) if *n == tab => Some((*id, *turn)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no call sent to tab {tab}: {effects:?}"))
}

/// The replies to `asker`.
fn replies(effects: &[Effect], asker: Asker) -> Vec<Reply> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Reply(a, r) if *a == asker => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The typed answers to `asker` (the list agents see, the status), as the Worker reads them:
/// what they say.
fn answered(effects: &[Effect], asker: Asker) -> String {
    format!("{:?}", replies(effects, asker))
}

fn done(effects: &[Effect], asker: Asker) -> CallReply {
    match replies(effects, asker).pop() {
        Some(Reply::Call(CallEvent::Done(reply))) => reply,
        other => panic!("no end for {asker}: {other:?} in {effects:?}"),
    }
}

fn tools_message(names: &[&str]) -> String {
    let tools: Vec<_> = names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object"}, "setting": "runs"}))
        .collect();
    json!({"type": "tools", "tools": tools}).to_string()
}

/// How many of `attempts` calls of connection `grant` (request ids from `first`) went to tab
/// `tab`; each other one must be refused with `sentence`.
fn calls_taken(
    sim: &mut Sim,
    grant: &str,
    first: u64,
    attempts: usize,
    tab: u64,
    sentence: &str,
) -> usize {
    let mut taken = 0;
    for i in 0..attempts as u64 {
        let (asker, effects) = sim.call(grant, first + i, false, TAB_CALL_WAIT_MS);
        let sent = effects
            .iter()
            .any(|e| matches!(e, Effect::Send(n, RelayMessage::Call { .. }) if *n == tab));
        if sent {
            taken += 1;
        } else {
            assert_eq!(done(&effects, asker), CallReply::not_carried(sentence));
        }
    }
    taken
}
