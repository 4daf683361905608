//! Simulations of the Room's waited calls: answered at once or by the tab, left open, cancelled,
//! grouped in turns, bounded per connection, dropped and taken up again.

use super::*;
use crate::oauth::connect::Requester;

#[test]
fn a_connection_that_is_gone_or_a_tool_not_listed_is_answered_at_once() {
    let mut sim = Sim::new();
    let (asker, effects) = sim.call("nope", 1, false, 5000);
    assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
    let (asker, effects) = sim.call("g1", 1, false, 5000);
    assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::NO_TAB));
    let a = sim.tab();
    sim.say(a, &tools_message(&["other"]));
    let (asker, effects) = sim.call("g1", 2, false, 5000);
    assert_eq!(done(&effects, asker), CallReply::NoSuchTool { tool: tool() });
    // Forgotten from the tab: its token stops at once.
    sim.say(a, r#"{"type":"forget","id":"g1"}"#);
    let (asker, effects) = sim.call("g1", 3, false, 5000);
    assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
}

#[test]
fn a_header_that_does_not_mirror_its_argument_is_refused_before_the_tab_hears_of_it() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let t = tool();
    let schema = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
    let list =
        json!({"type": "tools", "tools": [{"name": t, "inputSchema": schema, "setting": "runs"}]});
    sim.say(a, &list.to_string());
    let call = |sim: &mut Sim, id: u64, region: Option<&str>| {
        sim.ask(Request::Call(CallRequest {
            param_headers: Some(region.map_or(json!({}), |r| json!({ "region": r }))),
            ..with_args(call_request("g1", id), json!({"region": "eu"}))
        }))
    };
    for (id, sent) in [(1, None), (2, Some("us")), (3, Some("=?base64?ZXU?="))] {
        let (asker, effects) = call(&mut sim, id, sent);
        let refused = CallReply::HeaderMismatch { header: "Mcp-Param-Region".into() };
        assert_eq!(done(&effects, asker), refused, "{sent:?}");
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))), "{effects:?}");
    }
    // Agreeing (plain or base64), the call goes to the tab.
    for (id, sent) in [(4, "eu"), (5, "=?base64?ZXU=?=")] {
        let (_, effects) = call(&mut sim, id, Some(sent));
        sent_call(&effects, a);
    }
    // The session era sends no such headers, and nothing is checked.
    let (_, effects) =
        sim.ask(Request::Call(with_args(call_request("g1", 6), json!({"region": "eu"}))));
    sent_call(&effects, a);
}

#[test]
fn a_call_tells_the_tab_the_domain_that_verified_its_connection_as_the_grant_says() {
    let mut sim = Sim::new();
    sim.tab();
    let request = GrantRequest {
        id: "gv".into(),
        client_id: "https://claude.ai/oauth/mcp-oauth-client-metadata".into(),
        requester: Requester {
            client_name: "Claude".into(),
            host: "claude.ai".into(),
            place: None,
            verified: Some("claude.ai".into()),
        },
    };
    let (asker, effects) = sim.ask(Request::Grant(request));
    assert!(matches!(replies(&effects, asker)[..], [Reply::Grant(GrantReply::Made { .. })]));
    let verified_of = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::Send(_, RelayMessage::Call { tool_call, .. }) => {
                Some(tool_call.connection.verified.clone())
            }
            _ => None,
        })
    };
    // Whatever the call carried, the grant's record says.
    let mut call = call_request("gv", 1);
    call.tool_call.connection.verified = Some("evil.example".into());
    let (_, effects) = sim.ask(Request::Call(call));
    assert_eq!(verified_of(&effects), Some(Some("claude.ai".into())));
    // A registered client's connection is not verified, whatever its call says.
    let mut call = call_request("g1", 2);
    call.tool_call.connection.verified = Some("claude.ai".into());
    let (_, effects) = sim.ask(Request::Call(call));
    assert_eq!(verified_of(&effects), Some(None));
}

#[test]
fn a_call_left_open_while_the_person_decides_outlives_an_eviction_and_status_tells_it() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (asker, effects) = sim.call("g1", 1, false, 5000);
    let (id, _) = sent_call(&effects, a);
    sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete?"}}"#));
    let effects = sim.due(id);
    assert!(
        matches!(done(&effects, asker), CallReply::NotCarried { sentence } if sentence.contains("`status`"))
    );
    let Some(Effect::StoreLeft(left)) =
        effects.iter().find(|e| matches!(e, Effect::StoreLeft(_))).cloned()
    else {
        panic!("the call left open is stored: {effects:?}")
    };
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
    // Evicted while the person decides; a new object reads the rows back.
    let tab = sim.room.tabs.get(&a).unwrap().clone();
    let stored = Stored {
        tabs: vec![tab],
        grants: vec![grant("g1"), grant("g2")],
        left: tabrelay_bundle::from_json(left.as_bytes()).unwrap(),
        ..Stored::default()
    };
    let catalogue = sim.room.catalogue;
    sim.room = Room::new(Some(keys()), catalogue);
    sim.go(Input::Woke(stored));
    let status = |sim: &mut Sim, grant: &str| {
        let (asker, effects) = sim.ask(Request::Check { grant: grant.into(), want: Want::Status });
        answered(&effects, asker)
    };
    assert!(status(&mut sim, "g1").contains("still waits for the person"));
    assert!(!status(&mut sim, "g2").contains("Your call"), "another connection hears nothing");
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":{{"deleted":3}}}}"#));
    assert!(effects.iter().any(|e| matches!(e, Effect::StoreLeft(l) if *l != left)));
    let told = status(&mut sim, "g1");
    assert!(told.contains("it ran") && told.contains("deleted"), "{told}");
}

#[test]
fn a_cancel_while_the_person_is_asked_ends_the_call_and_tells_the_tab() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (asker, effects) = sim.call("g1", 7, true, 5000);
    let (id, _) = sent_call(&effects, a);
    let effects =
        sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete 3 items?"}}"#));
    assert_eq!(
        replies(&effects, asker),
        [Reply::Call(CallEvent::Asking("Delete 3 items?".into()))]
    );
    // Another connection's cancel of the same id does nothing.
    let (_, effects) = sim.ask(Request::Cancel { request: "g2 7".into() });
    assert!(replies(&effects, asker).is_empty());
    let (_, effects) = sim.ask(Request::Cancel { request: "g1 7".into() });
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })));
    assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::CANCELLED));
    let late = sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":[1]}}"#));
    assert!(replies(&late, asker).is_empty(), "a late result goes nowhere");
}

#[test]
fn a_turn_is_stored_when_it_starts_and_then_only_every_so_often() {
    let mut sim = Sim::new();
    sim.tab();
    let stores =
        |effects: &[Effect]| effects.iter().filter(|e| matches!(e, Effect::StoreTurns(_))).count();
    let (_, effects) = sim.call("g1", 1, false, 5000);
    assert_eq!(stores(&effects), 1, "a new turn is stored at once");
    sim.later(1_000);
    let (_, effects) = sim.call("g1", 2, false, 5000);
    assert_eq!(stores(&effects), 0, "the same turn a second later: no write");
    sim.later(TURN_STORED_EVERY_MS);
    let (_, effects) = sim.call("g1", 3, false, 5000);
    assert_eq!(stores(&effects), 1, "the same turn, long enough after: written again");
    let (_, effects) = sim.call("g2", 4, false, 5000);
    assert_eq!(stores(&effects), 1, "another connection's call starts a turn: stored");
}

#[test]
fn a_connections_calls_share_a_turn_until_another_calls_or_the_person_steps() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let turn = |sim: &mut Sim, grant: &str, id: u64| {
        let (_, effects) = sim.call(grant, id, false, 5000);
        sent_call(&effects, a).1
    };
    let t1 = turn(&mut sim, "g1", 1);
    assert_eq!(turn(&mut sim, "g1", 2), t1);
    let t2 = turn(&mut sim, "g2", 3);
    assert_ne!(t2, t1);
    let t3 = turn(&mut sim, "g1", 4);
    assert_ne!(t3, t2);
    let effects = sim.say(a, r#"{"type":"step"}"#);
    assert!(matches!(effects[..], [Effect::StoreTurns(_)]));
    assert_ne!(turn(&mut sim, "g1", 5), t3, "the person's step ends the turn");
}

#[test]
fn the_wait_is_225_s_at_most_and_what_the_agent_is_told_depends_on_the_person() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (asker, effects) = sim.call("g1", 1, false, 10 * TAB_CALL_WAIT_MS);
    let (id, _) = sent_call(&effects, a);
    assert_eq!(sim.room.calls.get(id).map(|f| f.until_ms), Some(sim.now + 225_000));
    assert_eq!(sim.room.poll_timeout(), Some(sim.now + 225_000));
    sim.later(225_000);
    let effects = sim.due(id);
    assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })), "the tab drops it");
    let CallReply::NotCarried { sentence } = done(&effects, asker) else { panic!() };
    assert!(sentence.contains("225 s"), "{sentence}");
    // While the person is asked, the question stays open and the agent is told so.
    let (asker, effects) = sim.call("g1", 2, true, 60_000);
    let (id, _) = sent_call(&effects, a);
    sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete?"}}"#));
    sim.later(60_000);
    let effects = sim.due(id);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))), "{effects:?}");
    let CallReply::NotCarried { sentence } = done(&effects, asker) else { panic!() };
    assert!(sentence.contains("being asked") && sentence.contains("Delete?"), "{sentence}");
    assert!(sim.due(id).is_empty(), "a deadline after the end is nothing");
}

#[test]
fn an_agent_that_stops_listening_has_its_call_dropped_in_the_tab() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (asker, effects) = sim.call("g1", 1, true, 5000);
    let (id, _) = sent_call(&effects, a);
    assert_eq!(sim.go(Input::Gone { asker }), [Effect::Send(a, RelayMessage::Cancel { id })]);
    assert!(sim.due(id).is_empty());
}

#[test]
fn a_resumable_call_outlives_its_dropped_stream_and_is_taken_up_running_or_ended() {
    let mut sim = Sim::new();
    let tab = sim.tab();
    let resumable = |id: u64| {
        Request::Call(CallRequest {
            wait_ms: 60_000,
            stream: true,
            resumable: true,
            ..call_request("g1", id)
        })
    };
    // The stream drops: the tab is not told to drop the call.
    let (first, effects) = sim.ask(resumable(1));
    let (call, _) = sent_call(&effects, tab);
    let effects = sim.go(Input::Gone { asker: first });
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
    assert!(effects.contains(&Effect::SetAlarm(sim.now + 60_000)));
    // Another connection cannot take it up; its own can, and waits again.
    let (other, effects) = sim.ask(Request::Resume { grant: "g2".into(), request: "g1 1".into() });
    assert_eq!(replies(&effects, other), [Reply::NotAsked], "not the key of g2's call");
    let (back, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 1".into() });
    assert_eq!(replies(&effects, back), [Reply::Call(CallEvent::Tick)], "it waits again");
    let holder = sim.room.calls.get(call).and_then(Flight::waiter).map(|w| w.asker);
    assert_eq!(holder, Some(back), "the new stream holds it");
    let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[1]}}"#));
    assert!(matches!(done(&effects, back), CallReply::TabResult { .. }));
    // Dropped again and ended meanwhile: the end is kept, once.
    let (second, effects) = sim.ask(resumable(2));
    let (call, _) = sent_call(&effects, tab);
    sim.go(Input::Gone { asker: second });
    sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[2]}}"#));
    let (late, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 2".into() });
    assert!(matches!(done(&effects, late), CallReply::TabResult { .. }));
    let (again, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 2".into() });
    assert_eq!(replies(&effects, again), [Reply::NotAsked]);
    // Dropped and never taken up: at its wait the alarm gives up on it (the tab drops it).
    let (third, effects) = sim.ask(resumable(3));
    let (call, _) = sent_call(&effects, tab);
    sim.go(Input::Gone { asker: third });
    sim.later(60_000);
    let effects = sim.go(Input::Timeout);
    assert!(effects.contains(&Effect::Send(tab, RelayMessage::Cancel { id: call })));
    let (late, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 3".into() });
    assert!(matches!(done(&effects, late), CallReply::NotCarried { .. }), "the wait-over sentence");
    // The client comes back before the pairing saw its stream drop: the new stream takes
    // the call over; an end sent to the old stream is kept for the client too.
    let (old, effects) = sim.ask(resumable(5));
    let (call, _) = sent_call(&effects, tab);
    let (new, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 5".into() });
    assert_eq!(replies(&effects, new), [Reply::Call(CallEvent::Tick)], "it waits again");
    let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[5]}}"#));
    assert!(matches!(done(&effects, new), CallReply::TabResult { .. }));
    assert!(replies(&effects, old).is_empty());
    let (six, effects) = sim.ask(resumable(6));
    let (call, _) = sent_call(&effects, tab);
    let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[6]}}"#));
    assert!(matches!(done(&effects, six), CallReply::TabResult { .. }), "sent to a dead stream");
    let (back, effects) = sim.ask(Request::Resume { grant: "g1".into(), request: "g1 6".into() });
    assert!(matches!(done(&effects, back), CallReply::TabResult { .. }), "and kept");
    // A call that is not resumable is dropped with its stream, as before.
    let (plain, effects) = sim.call("g1", 4, true, 60_000);
    let (call, _) = sent_call(&effects, tab);
    let effects = sim.go(Input::Gone { asker: plain });
    assert!(effects.contains(&Effect::Send(tab, RelayMessage::Cancel { id: call })));
}

#[test]
fn a_connection_that_fills_its_share_of_calls_leaves_the_others_theirs() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    // Half its share as tasks whose calls still run in the tab: they count.
    let half = MAX_CALLS_PER_CONNECTION / 2;
    for i in 0..half as u64 {
        slow_task(&mut sim, "g1", 1000 + i, a);
    }
    // Then it tries as many calls as the whole pairing carries: only the rest of its share
    // goes to the tab, every other is refused at once with a sentence naming its share.
    let mine = sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION);
    let taken = calls_taken(&mut sim, "g1", 0, MAX_PENDING_CALLS, a, &mine);
    assert_eq!(taken, MAX_CALLS_PER_CONNECTION - half);
    assert!(mine.contains("This connection"), "{mine}");
    // The person's other agent still gets through, and its answer reaches it.
    let (asker, effects) = sim.call("g2", 1, false, TAB_CALL_WAIT_MS);
    let (call, _) = sent_call(&effects, a);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":2}}"#));
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
    // As each connection may fill its share at once, the pairing's bound holds them all.
    let mut taken_by_all = 0;
    let mut grants = Vec::new();
    for g in 3..crate::limits::MAX_GRANTS + 1 {
        grants.push(grant(&format!("g{g}")));
    }
    sim.room.grants.extend(grants);
    for g in 2..crate::limits::MAX_GRANTS + 1 {
        let grant = format!("g{g}");
        let first = 10_000 * g as u64;
        taken_by_all += calls_taken(&mut sim, &grant, first, MAX_CALLS_PER_CONNECTION, a, &mine);
    }
    assert_eq!(taken_by_all, (crate::limits::MAX_GRANTS - 1) * MAX_CALLS_PER_CONNECTION);
    // A connection already forgotten may still hold calls: past the pairing's bound, its
    // sentence says the tab is full.
    sim.room.grants.push(grant("late"));
    let (asker, effects) = sim.call("late", 1, false, TAB_CALL_WAIT_MS);
    assert_eq!(
        done(&effects, asker),
        CallReply::not_carried(sentences::too_many_calls(MAX_PENDING_CALLS))
    );
}

#[test]
fn a_connection_that_leaves_many_ends_or_calls_open_pushes_out_its_own_only() {
    use crate::limits::{LEFT_OPEN_PER_CONNECTION, MAX_KEPT_ENDS_PER_CONNECTION};
    let mut sim = Sim::new();
    let a = sim.tab();
    // A resumable call whose stream dropped and whose end came meanwhile: kept.
    let dropped = |sim: &mut Sim, grant: &str, id: u64| {
        let request = CallRequest {
            wait_ms: 60_000,
            stream: true,
            resumable: true,
            ..call_request(grant, id)
        };
        let (asker, effects) = sim.ask(Request::Call(request));
        let (call, _) = sent_call(&effects, a);
        sim.go(Input::Gone { asker });
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{id}}}"#));
    };
    // A call whose wait ran out while the person is asked: left open in the tab.
    // (A wait of a millisecond: the ends kept above must not expire meanwhile.)
    let left_open = |sim: &mut Sim, grant: &str, id: u64| {
        let (_, effects) = sim.call(grant, id, false, 1);
        let (call, _) = sent_call(&effects, a);
        sim.say(a, &format!(r#"{{"type":"asking","id":{call},"sentence":"Step {id}?"}}"#));
        sim.due(call);
    };
    dropped(&mut sim, "g2", 1);
    left_open(&mut sim, "g2", 2);
    for i in 0..(MAX_KEPT_ENDS_PER_CONNECTION + LEFT_OPEN_PER_CONNECTION) as u64 * 2 {
        dropped(&mut sim, "g1", 100 + i);
        left_open(&mut sim, "g1", 200 + i);
    }
    let resume = |sim: &mut Sim, grant: &str, id: u64| {
        let request = Request::Resume { grant: grant.into(), request: format!("{grant} {id}") };
        let (asker, effects) = sim.ask(request);
        replies(&effects, asker)
    };
    assert_eq!(resume(&mut sim, "g1", 100), [Reply::NotAsked], "its own oldest end went");
    let (asker, effects) = sim.ask(Request::Resume { grant: "g2".into(), request: "g2 1".into() });
    assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }), "the other's is kept");
    let status = |sim: &mut Sim, grant: &str| {
        let (asker, effects) = sim.ask(Request::Check { grant: grant.into(), want: Want::Status });
        answered(&effects, asker)
    };
    let mine = status(&mut sim, "g1");
    assert!(!mine.contains("Step 200?") && mine.contains("Step 2"), "{mine}");
    assert!(status(&mut sim, "g2").contains("Step 2?"), "the other's call left open is told");
}
