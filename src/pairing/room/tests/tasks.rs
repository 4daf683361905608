//! Simulations of the Room's tasks: a call that waits becoming one, its questions and next
//! rounds, its cancel, its bounds, and an eviction.

use super::*;
use crate::pairing::tasks;

#[test]
fn a_quick_answer_stays_one_reply_and_a_call_that_waits_becomes_a_task() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // Answered within the moment: one reply, no task.
    let (asker, effects) = task_call(&mut sim, "g1", 1);
    let (call, _) = sent_call(&effects, a);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
    assert!(stored_tasks(&effects).is_empty());
    // Slow: after TASK_AFTER_MS the waiter gets a task, stored first.
    let (asker, effects) = task_call(&mut sim, "g1", 2);
    let (call, _) = sent_call(&effects, a);
    sim.later(TASK_AFTER_MS);
    let effects = sim.due(call);
    let task = made_task(&effects, asker);
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))),
        "the call goes on in the tab"
    );
    let (reply, _) = about_task(&mut sim, "g1", &task, TaskOp::Get);
    let TaskReply::Detailed(got) = reply else { panic!() };
    assert_eq!(got.status, tasks::Status::Working);
    // The tab's result completes it; tasks/get inlines it; the other connection finds none.
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{{"rows":2}}}}"#));
    assert_eq!(stored_tasks(&effects)[0].status, tasks::Status::Completed);
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Completed);
    assert!(got.result.unwrap()["content"][0]["text"].as_str().unwrap().contains("rows"));
    let (other, _) = about_task(&mut sim, "g2", &task, TaskOp::Get);
    assert_eq!(other, TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() });
    // A connection that takes no tasks waits as before.
    let (_, effects) = sim.call("g1", 3, false, TAB_CALL_WAIT_MS);
    let (call, _) = sent_call(&effects, a);
    let waited = sim.room.calls.get(call).map(|f| (f.due_ms, f.waiter().is_some()));
    assert_eq!(waited, Some((sim.now + TAB_CALL_WAIT_MS, true)));
}

#[test]
fn the_person_being_asked_makes_the_task_at_once_and_it_outlives_an_eviction() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (asker, effects) = task_call(&mut sim, "g1", 1);
    let (call, _) = sent_call(&effects, a);
    let effects =
        sim.say(a, &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete 3 rows?"}}"#));
    let task = made_task(&effects, asker);
    let stored = stored_tasks(&effects);
    assert!(stored[0].status_message.as_deref().unwrap().contains("Delete 3 rows?"));
    // A restart loses the tab's socket: woken without it, the task fails (its row kept).
    let mut restarted = Room::new(Some(keys()), sim.room.catalogue);
    let rows: Vec<Task> =
        stored.iter().map(|t| tasks::read(crate::crypto::testing::value_of(t)).unwrap()).collect();
    let woke = restarted.handle(
        Input::Woke(Stored { grants: vec![grant("g1")], tasks: rows, ..Stored::default() }),
        sim.now,
        &mut Counter(3),
    );
    assert_eq!(stored_tasks(&woke)[0].status, tasks::Status::Failed);
    // Evicted: a new object reads the task back; the person's answer still reaches it.
    let tab = sim.room.tabs.get(&a).unwrap().clone();
    let catalogue = sim.room.catalogue;
    sim.room = Room::new(Some(keys()), catalogue);
    sim.go(Input::Woke(Stored {
        tabs: vec![tab],
        grants: vec![grant("g1"), grant("g2")],
        tasks: stored
            .iter()
            .map(|t| tasks::read(crate::crypto::testing::value_of(t)).unwrap())
            .collect(),
        ..Stored::default()
    }));
    sim.later(30 * 60_000);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":3}}}}"#));
    assert_eq!(stored_tasks(&effects)[0].status, tasks::Status::Completed);
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Completed);
    // Past its time to live it is gone, and its row deleted.
    sim.later(crate::limits::TASK_TTL_MS);
    let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Get);
    assert_eq!(reply, TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() });
    assert!(effects.contains(&Effect::DeleteTask(task)));
}

#[test]
fn a_cancelled_task_stops_its_call_in_the_tab_and_a_closed_tab_fails_its_task() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    // Another connection cannot cancel it.
    let (reply, effects) = about_task(&mut sim, "g2", &task, TaskOp::Cancel);
    assert!(matches!(reply, TaskReply::Refused { .. }) && stored_tasks(&effects).is_empty());
    let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Cancel);
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id: call })));
    // Again: acknowledged, nothing sent; a late result changes nothing.
    let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Cancel);
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))));
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    assert!(stored_tasks(&effects).is_empty());
    // A task whose tab closes fails, with an error and no result.
    let (task, _) = slow_task(&mut sim, "g1", 2, a);
    sim.go(Input::Closed { tab: a });
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Failed);
    assert_eq!(got.error.unwrap().message, sentences::TAB_GONE);
}

#[test]
fn a_tasks_questions_go_to_the_client_and_its_answers_start_the_next_round() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
    let roots = r#"{"method":"roots/list","params":{}}"#;
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask},"where":{roots}}},"state":{{"round":1}}}}"#));
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::InputRequired);
    let asked = got.input_requests.unwrap();
    let asked: Vec<&String> = asked.as_object().unwrap().keys().collect();
    assert_eq!(asked, ["who"], "roots were not declared: left out");
    // An answer to something not asked is ignored; the right one resumes the call.
    let stray = TaskOp::Update(json!({"where": {"roots": []}}));
    let (reply, effects) = about_task(&mut sim, "g1", &task, stray);
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..) | Effect::StoreTask(_))));
    let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {"name": "Ada"}}}));
    let (reply, effects) = about_task(&mut sim, "g1", &task, answer);
    assert_eq!(reply, TaskReply::Acknowledged);
    let again = effects.iter().find_map(|e| match e {
        Effect::Send(n, RelayMessage::Call { id, input, tool_call, .. }) if *n == a => {
            Some((*id, input.clone(), tool_call.args.clone()))
        }
        _ => None,
    });
    let (next, input, args) = again.expect("the next round went to the tab");
    assert_ne!(next, call);
    assert_eq!(args, json!({"n": 1}));
    assert_eq!(
        input.unwrap(),
        json!({"responses": {"who": {"action": "accept", "content": {"name": "Ada"}}}, "state": {"round": 1}})
    );
    sim.say(a, &format!(r#"{{"type":"result","id":{next},"data":"Hello, Ada"}}"#));
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Completed);
    // Only undeclared questions: the task fails, naming the capability.
    let (task, call) = slow_task(&mut sim, "g1", 2, a);
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"where":{roots}}}}}"#));
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Failed);
    assert!(got.result.is_none());
    assert_eq!(got.error.unwrap().code, MISSING_CAPABILITY);
}

#[test]
fn a_connection_holds_a_bounded_number_of_tasks_and_a_tool_that_needs_tasks_says_so() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    for i in 0..MAX_TASKS_PER_CONNECTION as u64 {
        let (asker, effects) = task_call(&mut sim, "g1", i);
        let (call, _) = sent_call(&effects, a);
        let effects = sim.due(call);
        made_task(&effects, asker);
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    }
    // A result too large for a task's row is said, not kept.
    let (asker, effects) = task_call(&mut sim, "g2", 50);
    let (call, _) = sent_call(&effects, a);
    made_task(&sim.due(call), asker);
    let big = "A".repeat(MAX_TASK_RESULT_BYTES + 1);
    let image = format!(r#"{{"data":"{big}","mimeType":"image/png","width":1,"height":1}}"#);
    let result = format!(r#"{{"type":"result","id":{call},"data":1,"image":{image}}}"#);
    let effects = sim.say(a, &result);
    let kept = &stored_tasks(&effects)[0];
    assert!(tabrelay_bundle::fields::Encode::to_json(kept).len() < 4096);
    let said = kept.result.as_ref().unwrap();
    assert_eq!(said["isError"], true);
    assert!(said.to_string().contains("too large to keep"));
    let (asker, effects) = task_call(&mut sim, "g1", 99);
    assert_eq!(
        done(&effects, asker),
        CallReply::not_carried(sentences::too_many_tasks(
            MAX_TASKS_PER_CONNECTION,
            crate::limits::MAX_TASK_BYTES_PER_CONNECTION / 1024
        ))
    );
    // The other connection is not crowded out.
    let (_, effects) = task_call(&mut sim, "g2", 1);
    sent_call(&effects, a);
    // A tool the tab says runs only as a task: refused to a client that takes none.
    let list = format!(
        r#"{{"type":"tools","tools":[{{"name":"{}","inputSchema":{{"type":"object"}},"execution":{{"taskSupport":"required"}},"setting":"runs"}}]}}"#,
        tool()
    );
    sim.say(a, &list);
    let (asker, effects) = sim.call("g1", 7, false, TAB_CALL_WAIT_MS);
    assert_eq!(done(&effects, asker), CallReply::NeedsTasks);
}

#[test]
fn a_call_a_2025_11_25_client_asks_to_be_a_task_is_one_at_once() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (asker, effects) = sim.ask(Request::Call(CallRequest {
        task: Some(TaskTerms { declared: Vec::new(), at_once: true }),
        ..call_request("g1", 1)
    }));
    let (call, _) = sent_call(&effects, a);
    let task = made_task(&effects, asker);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    assert_eq!(stored_tasks(&effects)[0].id, task);
}

#[test]
fn a_tasks_next_round_is_a_call_within_its_connections_share() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask}}}}}"#));
    // Between rounds the task has no call in the tab: the connection fills its share.
    let mine = sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION);
    let taken = calls_taken(&mut sim, "g1", 100, MAX_CALLS_PER_CONNECTION + 1, a, &mine);
    assert_eq!(taken, MAX_CALLS_PER_CONNECTION);
    // Its answer would start a next round past its share: the task fails, saying so.
    let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {}}}));
    let (reply, effects) = about_task(&mut sim, "g1", &task, answer);
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))));
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Failed);
    assert_eq!(got.error.unwrap().message, mine);
    // The other connection's task goes on to its next round.
    let (theirs, call) = slow_task(&mut sim, "g2", 1, a);
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask}}}}}"#));
    let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {}}}));
    let (_, effects) = about_task(&mut sim, "g2", &theirs, answer);
    sent_call(&effects, a);
}

#[test]
fn a_stopped_agents_task_does_not_go_on_to_its_next_round() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    let needs = r#"{"q":{"method":"elicitation/create","params":{"message":"Which?","requestedSchema":{"type":"object"}}}}"#;
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{needs}}}"#));
    sim.say(a, r#"{"type":"stop","connection":"g1"}"#);
    let (reply, effects) =
        about_task(&mut sim, "g1", &task, TaskOp::Update(json!({"q": {"action": "accept"}})));
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))));
    let ended = stored_tasks(&effects).pop().expect("the task is stored as ended");
    assert_eq!(ended.status, tasks::Status::Completed);
    assert!(ended.result.unwrap().to_string().contains("stopped this agent"));
}

#[test]
fn a_tasks_rounds_are_calls_in_flight_with_a_deadline_the_alarm_wakes_for() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // The first round, handed over from its waiter, keeps the wait of a call in a tab.
    let started = sim.now;
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    let flight = sim.room.calls.get(call).expect("the task's call is in flight");
    assert_eq!(flight.due_ms, started + TAB_CALL_WAIT_MS);
    let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
    sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask}}}}}"#));
    assert!(sim.room.calls.get(call).is_none(), "between rounds, no call in flight");
    // The next round: a call in flight like any other, its deadline set, and (no request
    // waits for it) the alarm set to wake for it.
    sim.later(1_000);
    let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {"name": "Ada"}}}));
    let (_, effects) = about_task(&mut sim, "g1", &task, answer);
    let (next, _) = sent_call(&effects, a);
    let until = sim.now + TAB_CALL_WAIT_MS;
    assert_eq!(sim.room.calls.get(next).map(|f| f.due_ms), Some(until));
    assert!(effects.contains(&Effect::SetAlarm(until)), "{effects:?}");
    // The tab never answers: at its wait the round gives up as a waited call does; the tab
    // drops it and the task fails, saying so.
    sim.later(TAB_CALL_WAIT_MS - 1);
    assert!(!sim.go(Input::Timeout).iter().any(|e| matches!(e, Effect::Send(..))));
    sim.later(1);
    let effects = sim.go(Input::Timeout);
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id: next })), "{effects:?}");
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Failed);
    assert!(got.error.unwrap().message.contains("did not answer within 225 s"));
    // A round the person is asked about waits for them (as a waited call is left open).
    let (task, call) = slow_task(&mut sim, "g1", 2, a);
    sim.say(a, &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete?"}}"#));
    sim.later(TAB_CALL_WAIT_MS);
    let effects = sim.go(Input::Timeout);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))), "{effects:?}");
    let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
        panic!()
    };
    assert_eq!(got.status, tasks::Status::Working);
}

#[test]
fn a_connections_tasks_keep_a_bounded_number_of_bytes_and_leave_the_others_theirs() {
    use crate::limits::MAX_TASK_BYTES_PER_CONNECTION;
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // Results each well within a task's bound, until the connection's share is full.
    let big = |call: u64| {
        let data = "A".repeat(MAX_TASK_RESULT_BYTES / 4);
        format!(r#"{{"type":"result","id":{call},"data":"{data}"}}"#)
    };
    let (mut held, mut one) = (0, 0);
    let mut refused = None;
    for i in 0..MAX_TASKS_PER_CONNECTION as u64 {
        let (_, call) = slow_task(&mut sim, "g1", i, a);
        let task = stored_tasks(&sim.say(a, &big(call))).pop().expect("the task is stored");
        let said = task.result.clone().expect("a result").to_string();
        if said.contains("already keep") {
            refused = Some(task);
            break;
        }
        assert!(task.held_bytes() > 100_000, "kept whole (the tab's text is cut to its bound)");
        held += task.held_bytes();
        one = task.held_bytes();
    }
    let refused = refused.expect("past its share, a result is said, not kept");
    assert!(held <= MAX_TASK_BYTES_PER_CONNECTION && held + one > MAX_TASK_BYTES_PER_CONNECTION);
    let call = tasks::call_held_bytes(&refused.carried.tool_call);
    assert!(refused.held_bytes() < call + 4096, "a sentence, not the result");
    assert_eq!(refused.result.unwrap()["isError"], true);
    // Another connection keeps its own share.
    let (_, call) = slow_task(&mut sim, "g2", 1, a);
    let effects = sim.say(a, &big(call));
    assert!(stored_tasks(&effects)[0].held_bytes() > 100_000);
}

#[test]
fn a_connections_answers_to_its_tasks_count_toward_its_share_and_leave_the_others_theirs() {
    use crate::limits::MAX_TASK_BYTES_PER_CONNECTION;
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
    let questions = format!(r#"{{"first":{ask},"second":{ask}}}"#);
    let asking = |sim: &mut Sim, grant: &str, id: u64| {
        let (task, call) = slow_task(sim, grant, id, a);
        let said = format!(r#"{{"type":"result","id":{call},"input_required":{questions}}}"#);
        sim.say(a, &said);
        task
    };
    // Each answer is kept until the other comes: more than half the share each.
    let long = "A".repeat(MAX_TASK_BYTES_PER_CONNECTION * 3 / 5);
    let first = || TaskOp::Update(json!({"first": {"action": "accept", "content": {"n": long}}}));
    let one = asking(&mut sim, "g1", 1);
    let (reply, effects) = about_task(&mut sim, "g1", &one, first());
    assert_eq!(reply, TaskReply::Acknowledged);
    assert!(stored_tasks(&effects)[0].held_bytes() > MAX_TASK_BYTES_PER_CONNECTION / 2);
    // A second such answer would take the connection past its share: refused, said, not kept.
    let two = asking(&mut sim, "g1", 2);
    let (reply, effects) = about_task(&mut sim, "g1", &two, first());
    let kib = MAX_TASK_BYTES_PER_CONNECTION / 1024;
    assert_eq!(reply, TaskReply::Refused { sentence: sentences::task_answers_full(kib) });
    assert!(stored_tasks(&effects).is_empty(), "nothing changed: {effects:?}");
    let (TaskReply::Detailed(still), _) = about_task(&mut sim, "g1", &two, TaskOp::Get) else {
        panic!()
    };
    let asked = still.input_requests.unwrap();
    assert!(asked.get("first").is_some(), "still asked: {asked}");
    // A small answer still fits; and another connection has its whole share.
    let small = TaskOp::Update(json!({"first": {"action": "decline"}}));
    assert_eq!(about_task(&mut sim, "g1", &two, small).0, TaskReply::Acknowledged);
    let theirs = asking(&mut sim, "g2", 3);
    assert_eq!(about_task(&mut sim, "g2", &theirs, first()).0, TaskReply::Acknowledged);
    let held: usize = sim.room.tasks.iter().filter(|t| t.grant == "g1").map(Task::held_bytes).sum();
    assert!(held <= MAX_TASK_BYTES_PER_CONNECTION, "{held}");
}

#[test]
fn every_connections_full_share_of_tasks_together_stays_within_the_pairings_memory() {
    use crate::limits::{
        MAX_GRANTS, MAX_HELD_BYTES_PER_CONNECTION, MAX_TASK_BYTES_PER_CONNECTION,
        PAIRING_MEMORY_BYTES,
    };
    let mut sim = Sim::new();
    let more = (3..=MAX_GRANTS).map(|n| grant(&format!("g{n}")));
    sim.room.grants.extend(more);
    let a = sim.tab();
    sim.say(a, &asked_list());
    let big = |call: u64| {
        let data = "A".repeat(MAX_TASK_RESULT_BYTES / 4);
        format!(r#"{{"type":"result","id":{call},"data":"{data}"}}"#)
    };
    // Every connection fills its share (none is refused before it: one cannot lock out another).
    let mut id = 0;
    for n in 1..=MAX_GRANTS {
        let grant = format!("g{n}");
        let (mut held, mut one) = (0, 0);
        loop {
            id += 1;
            let (_, call) = slow_task(&mut sim, &grant, id, a);
            let task = stored_tasks(&sim.say(a, &big(call))).pop().expect("stored");
            if task.result.as_ref().unwrap().to_string().contains("already keep") {
                break;
            }
            held += task.held_bytes();
            one = task.held_bytes();
        }
        assert!(held + one > MAX_TASK_BYTES_PER_CONNECTION, "{grant} kept its whole share");
    }
    // What the pairing holds for all of them, with every other share full too, fits.
    let tasks: usize = sim.room.tasks.iter().map(Task::held_bytes).sum();
    let others = MAX_HELD_BYTES_PER_CONNECTION - MAX_TASK_BYTES_PER_CONNECTION;
    let worst = tasks + MAX_GRANTS * others + 2_000_000;
    assert!(worst <= PAIRING_MEMORY_BYTES, "{} MiB held at worst", worst >> 20);
}
