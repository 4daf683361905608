//! Simulations of what one connection's calls can make its pairing hold: their JSON-RPC ids,
//! the arguments of those that are or may become tasks, and how many tasks, each in the
//! connection's share however large or however many; past it, a sentence, and the other
//! connections keep theirs.

use super::*;
use crate::limits::{
    CALL_HELD_BYTES, MAX_HELD_BYTES_PER_CONNECTION, MAX_ID_BYTES_PER_CONNECTION,
    MAX_TASK_BYTES_PER_CONNECTION, TASK_HELD_BYTES, TASK_TTL_MS,
};

const MIB: usize = 1 << 20;

/// Connection `grant`'s call with JSON-RPC id `id` (a string, as JSON writes it in the key).
fn with_id(grant: &str, id: &str) -> CallRequest {
    CallRequest { request: format!("{grant} \"{id}\""), ..call_request(grant, 0) }
}

/// A call from a client that takes tasks, with these arguments.
fn task_with_args(grant: &str, id: u64, args: serde_json::Value) -> CallRequest {
    CallRequest {
        task: Some(TaskTerms { declared: vec!["elicitation".into()], at_once: false }),
        ..with_args(call_request(grant, id), args)
    }
}

/// The sentence of a call past its connection's share of tasks.
fn tasks_full() -> String {
    sentences::too_many_tasks(MAX_TASKS_PER_CONNECTION, MAX_TASK_BYTES_PER_CONNECTION / 1024)
}

/// Whether the tab was sent a call.
fn reached_tab(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. })))
}

/// What the room holds for connection `grant`, as its share counts it: its calls in flight
/// (their keys, what each holds beside, and the arguments of those that may become tasks) and
/// its tasks.
fn held_for(room: &Room, grant: &str) -> usize {
    let mut held = 0;
    for f in room.calls.flights().filter(|f| f.grant == grant) {
        held += CALL_HELD_BYTES + f.request.len();
        if let Some(crate::pairing::calls::Waiter { task: Some(carried), .. }) = f.waiter() {
            held += crate::pairing::tasks::call_held_bytes(&carried.tool_call);
        }
    }
    for t in room.tasks.iter().filter(|t| t.grant == grant) {
        held += TASK_HELD_BYTES + t.held_bytes();
    }
    held
}

#[test]
fn a_call_whose_id_is_a_mebibyte_is_refused_before_the_tab_hears_of_it() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let refused = sentences::ids_too_long(MAX_ID_BYTES_PER_CONNECTION / 1024);
    let (asker, effects) = sim.ask(Request::Call(with_id("g1", &"i".repeat(MIB))));
    assert_eq!(done(&effects, asker), CallReply::not_carried(refused.as_str()));
    assert!(!reached_tab(&effects), "{effects:?}");
    assert!(sim.room.calls.is_empty(), "nothing of it kept");
    assert!(refused.contains("use a short id"), "{refused}");
    // Ids of a KiB: its calls carry them until their keys fill its share, far short of its
    // share of calls.
    let kib = "i".repeat(1024);
    let mut taken = 0;
    for n in 0..MAX_CALLS_PER_CONNECTION {
        let (asker, effects) = sim.ask(Request::Call(with_id("g1", &format!("{n}{kib}"))));
        if reached_tab(&effects) {
            taken += 1;
        } else {
            assert_eq!(done(&effects, asker), CallReply::not_carried(refused.as_str()));
        }
    }
    assert!(taken > 0 && taken < MAX_CALLS_PER_CONNECTION, "{taken}");
    let keys: usize = sim.room.calls.flights().map(|f| f.request.len()).sum();
    assert!(keys <= MAX_ID_BYTES_PER_CONNECTION, "{keys}");
    // The other connection is carried, its own long ids too.
    let (asker, effects) = sim.ask(Request::Call(with_id("g2", &kib)));
    let (call, _) = sent_call(&effects, a);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":2}}"#));
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
}

#[test]
fn a_mebibyte_of_arguments_is_refused_as_a_task_and_carried_unkept_as_a_call() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let args = json!({"text": "a".repeat(MIB)});
    let (asker, effects) = sim.ask(Request::Call(task_with_args("g1", 1, args.clone())));
    let full = tasks_full();
    assert_eq!(done(&effects, asker), CallReply::not_carried(full.as_str()));
    assert!(!reached_tab(&effects));
    assert!(sim.room.calls.is_empty() && sim.room.tasks.is_empty());
    // From a client that takes no tasks it goes to the tab, and the pairing keeps none of it.
    let (asker, effects) = sim.ask(Request::Call(with_args(call_request("g1", 2), args)));
    let (call, _) = sent_call(&effects, a);
    assert!(held_for(&sim.room, "g1") < CALL_HELD_BYTES + 64, "{}", held_for(&sim.room, "g1"));
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
    // The other connection's task is made.
    let (task, _) = slow_task(&mut sim, "g2", 1, a);
    assert!(sim.room.tasks.iter().any(|t| t.id == task));
}

#[test]
fn arguments_shaped_to_take_memory_count_as_the_memory_they_take() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // 40 KB of JSON, far inside the share as text: 20,000 values of 24 bytes (and room to grow).
    let zeros = json!({"n": vec![0; 20_000]});
    assert!(zeros.to_string().len() < MAX_TASK_BYTES_PER_CONNECTION / 10);
    let (asker, effects) = sim.ask(Request::Call(task_with_args("g1", 1, zeros)));
    let full = tasks_full();
    assert_eq!(done(&effects, asker), CallReply::not_carried(full.as_str()));
    assert!(!reached_tab(&effects));
}

#[test]
fn a_connections_tasks_are_counted_from_their_calls_start_however_many_start_at_once() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // Its whole share of calls at once, each of which may become a task: only its share of
    // tasks goes to the tab.
    let mut waiting = Vec::new();
    let too_many = tasks_full();
    for i in 0..MAX_CALLS_PER_CONNECTION as u64 {
        let (asker, effects) = task_call(&mut sim, "g1", i);
        if reached_tab(&effects) {
            waiting.push((asker, sent_call(&effects, a).0));
        } else {
            assert_eq!(done(&effects, asker), CallReply::not_carried(too_many.as_str()));
        }
    }
    assert_eq!(waiting.len(), MAX_TASKS_PER_CONNECTION);
    // Each becomes a task: the connection holds its share, no more.
    sim.later(TASK_AFTER_MS);
    let effects = sim.go(Input::Timeout);
    for &(asker, _) in &waiting {
        made_task(&effects, asker);
    }
    let mine = sim.room.tasks.iter().filter(|t| t.grant == "g1").count();
    assert_eq!(mine, MAX_TASKS_PER_CONNECTION);
    let (asker, effects) = task_call(&mut sim, "g1", 1000);
    assert_eq!(done(&effects, asker), CallReply::not_carried(too_many.as_str()));
    // The other connection's call becomes its task.
    let (task, _) = slow_task(&mut sim, "g2", 1, a);
    assert!(sim.room.tasks.iter().any(|t| t.id == task && t.grant == "g2"));
}

#[test]
fn a_tasks_arguments_count_in_its_connections_share_for_as_long_as_the_task_is_kept() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let args = || json!({"text": "a".repeat(MAX_TASK_BYTES_PER_CONNECTION / 3)});
    let full = tasks_full();
    // Two such tasks fit; they finish, and still hold their arguments.
    for id in 1..=2 {
        let (asker, effects) = sim.ask(Request::Call(task_with_args("g1", id, args())));
        let (call, _) = sent_call(&effects, a);
        made_task(&sim.due(call), asker);
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    }
    let (asker, effects) = sim.ask(Request::Call(task_with_args("g1", 3, args())));
    assert_eq!(done(&effects, asker), CallReply::not_carried(full.as_str()));
    assert!(held_for(&sim.room, "g1") <= MAX_TASK_BYTES_PER_CONNECTION + 2 * TASK_HELD_BYTES);
    // Another connection's such call is carried meanwhile.
    let (_, effects) = sim.ask(Request::Call(task_with_args("g2", 1, args())));
    sent_call(&effects, a);
    // Once the tasks expire, their arguments go with them.
    sim.later(TASK_TTL_MS);
    let most = json!({"text": "a".repeat(MAX_TASK_BYTES_PER_CONNECTION * 4 / 5)});
    let (asker, effects) = sim.ask(Request::Call(task_with_args("g1", 4, most)));
    let (call, _) = sent_call(&effects, a);
    made_task(&sim.due(call), asker);
    // A task's own arguments leave its result the rest of the share (the tab's text is cut at
    // 150,000 characters).
    let data = "r".repeat(MAX_TASK_BYTES_PER_CONNECTION / 4);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":"{data}"}}"#));
    let said = stored_tasks(&effects).pop().unwrap().result.unwrap().to_string();
    assert!(said.contains("already keep"), "{}", &said[..200]);
}

#[test]
fn whatever_one_connection_sends_the_pairing_holds_its_share_at_most_and_the_others_theirs() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let mut id = 0;
    let mut next = || {
        id += 1;
        id
    };
    // Tasks with the largest arguments that fit, their results as large as fit, their ids long.
    for _ in 0..MAX_TASKS_PER_CONNECTION {
        let n = next();
        let mut call = task_with_args("g1", n, json!({"text": "a".repeat(100 * 1024)}));
        call.request = format!("g1 \"{n}{}\"", "i".repeat(900));
        let (asker, effects) = sim.ask(Request::Call(call));
        if !reached_tab(&effects) {
            continue;
        }
        let (call, _) = sent_call(&effects, a);
        made_task(&sim.due(call), asker);
        let data = "r".repeat(MAX_TASK_RESULT_BYTES / 2);
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":"{data}"}}"#));
    }
    // Calls with a mebibyte of arguments (not kept), long ids and memory-shaped arguments, all
    // its share of calls and more, left waiting in the tab.
    for i in 0..2 * MAX_CALLS_PER_CONNECTION {
        let n = next();
        let mut call = match i % 3 {
            0 => with_args(call_request("g1", n), json!({"text": "a".repeat(MIB)})),
            1 => task_with_args("g1", n, json!({"n": vec![0; 2_000]})),
            _ => with_id("g1", &format!("{n}{}", "i".repeat(400))),
        };
        call.wait_ms = TAB_CALL_WAIT_MS;
        sim.ask(Request::Call(call));
    }
    let held = held_for(&sim.room, "g1");
    assert!(held <= MAX_HELD_BYTES_PER_CONNECTION, "{held} held");
    assert!(held > MAX_TASK_BYTES_PER_CONNECTION / 2, "it did fill its share: {held}");
    // The other connection is carried, as a call and as a task.
    let (asker, effects) = sim.call("g2", 1, false, TAB_CALL_WAIT_MS);
    let (call, _) = sent_call(&effects, a);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":2}}"#));
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
    slow_task(&mut sim, "g2", 2, a);
}
