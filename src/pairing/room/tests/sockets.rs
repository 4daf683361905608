//! Simulations of the Room's tab sockets: which tab calls go to, a tab going away, a wake,
//! the bounds on sockets, and what the pairing keeps past its last one.

use super::*;

#[test]
fn calls_follow_the_tab_focused_last_and_the_newest_on_a_tie() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.later(10);
    let b = sim.tab();
    let (_, effects) = sim.call("g1", 1, false, 5000);
    sent_call(&effects, b);
    sim.later(10);
    sim.say(a, r#"{"type":"focus","focused":true}"#);
    let (_, effects) = sim.call("g1", 2, false, 5000);
    sent_call(&effects, a);
    sim.say(a, r#"{"type":"focus","focused":false}"#);
    let (_, effects) = sim.call("g1", 3, false, 5000);
    sent_call(&effects, a);
    // An unproven socket gets no call.
    let c = sim.open();
    let (_, effects) = sim.call("g1", 4, false, 5000);
    assert_ne!(sent_call(&effects, a).0, c);
}

#[test]
fn a_call_is_answered_by_its_tab_only_and_reads_no_storage() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let b = sim.tab();
    let (asker, effects) = sim.call("g1", 1, false, 5000);
    // The grant's check and the tool list come from memory: the only effects are the turn
    // stored and the call sent; its deadline is the room's timer (no alarm: its request wakes
    // for it).
    let (id, _) = sent_call(&effects, b);
    assert_eq!(effects.len(), 2, "{effects:?}");
    assert!(matches!(effects[0], Effect::StoreTurns(_)));
    assert_eq!(sim.room.poll_timeout(), Some(sim.now + 5000));
    let result = format!(r#"{{"type":"result","id":{id},"data":[1]}}"#);
    assert!(replies(&sim.say(a, &result), asker).is_empty(), "another tab cannot answer");
    assert!(matches!(done(&sim.say(b, &result), asker), CallReply::TabResult { .. }));
    assert!(sim.say(b, &result).is_empty(), "an answer comes once");
}

#[test]
fn after_a_wake_the_rows_read_back_route_the_call_and_list_the_tools() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &tools_message(&[&tool(), "extra"]));
    sim.say(a, r#"{"type":"view","dataset":"Evicted set"}"#);
    let tab = sim.room.tabs.get(&a).unwrap().clone();
    // The object is evicted; what it stored is read back by a new one.
    let stored = Stored {
        tabs: vec![tab],
        stated: vec![
            (
                a,
                Some(sim.room.focused_list().unwrap().to_value().to_string()),
                Some("Evicted set".into()),
            ),
            (a - 1, None, None),
        ],
        grants: vec![grant("g1")],
        turns: sim.room.turns.clone(),
        wrong_codes: WrongCodes::default(),
        left: LeftCalls::default(),
        tasks: Vec::new(),
        replayed_until: 0,
        presence: None,
    };
    let catalogue = sim.room.catalogue;
    sim.room = Room::new(Some(keys()), catalogue);
    let woke = sim.go(Input::Woke(stored));
    assert_eq!(woke, [Effect::ForgetStated(a - 1)], "a gone tab's row is dropped");
    let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Tools });
    let [Effect::Reply(to, Reply::Tools { stated: Some(list) })] = &effects[..] else {
        panic!("{effects:?}")
    };
    assert_eq!(*to, asker);
    assert!(list.tool("extra").is_some(), "the tab's list survived");
    let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Status });
    assert!(answered(&effects, asker).contains("Evicted set"));
    let (_, effects) = sim.call("g1", 1, false, 5000);
    sent_call(&effects, a);
    assert!(sim.room.next_tab_number(0) > a, "numbers keep growing");
}

#[test]
fn a_tab_going_away_mid_call_fails_its_calls_only() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let (first, effects) = sim.call("g1", 1, false, 5000);
    sent_call(&effects, a);
    sim.later(5);
    let b = sim.tab();
    let (second, effects) = sim.call("g1", 2, false, 5000);
    let (id_b, _) = sent_call(&effects, b);
    let effects = sim.go(Input::Closed { tab: a });
    assert_eq!(done(&effects, first), CallReply::not_carried(sentences::TAB_GONE));
    assert!(replies(&effects, second).is_empty());
    let effects = sim.say(b, &format!(r#"{{"type":"result","id":{id_b},"data":[2]}}"#));
    assert!(matches!(done(&effects, second), CallReply::TabResult { .. }));
    // A message too large closes the tab and fails its calls, never a hang.
    let (third, effects) = sim.call("g1", 3, false, 5000);
    sent_call(&effects, b);
    let effects = sim.go(Input::Message { tab: b, text: Some("x".repeat(MAX_MESSAGE_BYTES + 1)) });
    assert!(matches!(effects[0], Effect::Close(n, close::PROTOCOL_ERROR, _) if n == b));
    assert_eq!(done(&effects, third), CallReply::not_carried(sentences::TAB_GONE));
}

/// A room that woke with nothing stored (a new pairing: a self-made key's, say).
fn empty_sim() -> Sim {
    let mut sim = Sim::new();
    sim.room = Room::new(Some(keys()), sim.room.catalogue);
    assert_eq!(sim.go(Input::Woke(Stored::default())), []);
    sim
}

#[test]
fn a_pairing_no_agent_was_let_into_keeps_nothing_past_its_last_socket() {
    let mut sim = empty_sim();
    let a = sim.tab();
    let b = sim.tab();
    // What a self-keyed tab can make the pairing write: its statements, a step, wrong codes.
    let mut wrote = sim.say(a, &tools_message(&[&tool()]));
    wrote.extend(sim.say(a, r#"{"type":"view","dataset":"Mine"}"#));
    wrote.extend(sim.say(b, r#"{"type":"step"}"#));
    wrote.extend(sim.say(b, r#"{"type":"approve","code":"nope"}"#));
    for _ in 0..=WRONG_CODES_ALLOWED {
        let code = sim.say(b, r#"{"type":"describe","code":"ABCDE-FGHJK"}"#);
        wrote.extend(code);
    }
    assert!(wrote.iter().any(Effect::writes), "{wrote:?}");
    assert!(!wrote.contains(&Effect::ForgetAll), "not while its tabs are open");
    assert!(!sim.go(Input::Closed { tab: a }).contains(&Effect::ForgetAll), "b is still open");
    let last = sim.go(Input::Closed { tab: b });
    assert_eq!(last.last(), Some(&Effect::ForgetAll), "{last:?}");
    // Once forgotten, nothing more to forget; a socket that never proves writes nothing.
    let c = sim.open();
    sim.later(HELLO_WAIT_MS);
    let closed = sim.go(Input::Timeout);
    assert!(
        matches!(closed[0], Effect::Close(n, ..) if n == c) && !closed.contains(&Effect::ForgetAll)
    );
}

#[test]
fn a_pairing_keeps_its_rows_while_a_grant_or_a_replays_record_needs_them() {
    let mut sim = Sim::new(); // woke with grants g1 and g2
    let a = sim.tab();
    sim.say(a, r#"{"type":"step"}"#);
    assert!(!sim.go(Input::Closed { tab: a }).contains(&Effect::ForgetAll), "its grants stay");
    sim.ask(Request::Revoke(RevokeRequest { grant: "g1".into(), secret: None }));
    let (_, effects) = sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
    assert_eq!(effects.last(), Some(&Effect::ForgetAll), "its last grant revoked, no tab open");
    // A replayed code's record is kept its time, then goes at the alarm.
    let mut sim = empty_sim();
    let a = sim.tab();
    let (_, effects) = sim.ask(Request::Replayed { grant: "late".into() });
    assert!(effects.iter().any(|e| matches!(e, Effect::RecordReplayed(..))));
    let until = sim.now + REPLAYED_KEPT_MS;
    let closed = sim.go(Input::Closed { tab: a });
    assert_eq!(closed.last(), Some(&Effect::SetAlarm(until)), "{closed:?}");
    sim.later(REPLAYED_KEPT_MS - 1);
    assert!(!sim.go(Input::Timeout).contains(&Effect::ForgetAll));
    sim.later(1);
    assert_eq!(sim.go(Input::Timeout).last(), Some(&Effect::ForgetAll));
    // Rows whose tab's close was never seen (the relay restarted) go when it wakes.
    let mut sim = empty_sim();
    let stored = Stored { stated: vec![(7, Some("[]".into()), None)], ..Stored::default() };
    sim.room = Room::new(Some(keys()), sim.room.catalogue);
    assert_eq!(sim.go(Input::Woke(stored)), [Effect::ForgetStated(7), Effect::ForgetAll]);
}

#[test]
fn tabs_and_sockets_still_to_prove_have_their_bounds() {
    let mut sim = Sim::new();
    for _ in 0..MAX_TABS_PER_PAIRING {
        sim.tab();
    }
    let extra = sim.open();
    sim.say(extra, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
    let effects = sim.go(Input::Proved { tab: extra, valid: true });
    assert!(
        matches!(effects[..], [Effect::Close(n, close::TOO_MANY_TABS, _)] if n == extra),
        "{effects:?}"
    );
    // Silent sockets: beyond their bound the oldest make room when the alarm rings, and
    // each one not proven in time is closed.
    let silent: Vec<u64> = (0..=MAX_UNPROVEN_SOCKETS).map(|_| sim.open()).collect();
    let effects = sim.go(Input::Timeout);
    assert_eq!(effects.iter().filter(|e| matches!(e, Effect::Close(..))).count(), 1);
    assert!(matches!(effects[0], Effect::Close(n, close::TOO_MANY_TABS, _) if n == silent[0]));
    sim.later(HELLO_WAIT_MS);
    let effects = sim.go(Input::Timeout);
    assert_eq!(
        effects.iter().filter(|e| matches!(e, Effect::Close(_, close::PROOF_FAILED, _))).count(),
        MAX_UNPROVEN_SOCKETS
    );
    // A proof that does not hold closes the socket.
    let bad = sim.open();
    sim.say(bad, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
    assert!(matches!(
        sim.go(Input::Proved { tab: bad, valid: false })[..],
        [Effect::Close(_, close::PROOF_FAILED, _)]
    ));
}
