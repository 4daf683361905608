//! Simulations of the Room's listeners: told of a changed list, and a session's answers
//! reaching the request that waits for them.

use super::*;

#[test]
fn listeners_hear_when_the_list_agents_see_changes_and_only_then() {
    let mut sim = Sim::new();
    let (_, effects) = sim.ask(Request::Listen { grant: "nope".into() });
    assert!(matches!(effects[..], [Effect::Reply(_, Reply::NoGrant)]));
    let (listener, effects) = sim.ask(Request::Listen { grant: "g1".into() });
    assert_eq!(replies(&effects, listener), [Reply::Listen(ListenEvent::Tick)]);
    let changed = |effects: &[Effect]| {
        replies(effects, listener).contains(&Reply::Listen(ListenEvent::ToolsChanged))
    };
    let a = sim.tab();
    assert!(
        !changed(&sim.say(a, r#"{"type":"view","dataset":"d"}"#)),
        "a tab without a list: the bundled one still"
    );
    assert!(changed(&sim.say(a, &tools_message(&["x"]))), "a new list");
    assert!(!changed(&sim.say(a, &tools_message(&["x"]))), "the same list again");
    sim.later(5);
    let b = sim.tab();
    assert!(changed(&sim.say(b, &tools_message(&["y"]))));
    sim.later(5);
    let effects = sim.say(a, r#"{"type":"focus","focused":true}"#);
    assert!(changed(&effects), "focus moved to a tab with another list");
    assert!(changed(&sim.go(Input::Closed { tab: a })), "the focused tab went away");
    assert!(!changed(&sim.go(Input::Closed { tab: 12345 })));
    sim.go(Input::Gone { asker: listener });
    assert!(!changed(&sim.say(b, &tools_message(&["z"]))), "a listener gone hears nothing");
}

#[test]
fn a_list_read_back_after_a_wake_and_stated_again_is_no_change() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &tools_message(&["x"]));
    let tab = sim.room.tabs.get(&a).unwrap().clone();
    // Stored as an older relay may have written it: spaced out, with a key no longer kept.
    let text =
        r#"[ {"name": "x", "inputSchema": {"type": "object"}, "setting": "runs", "x-old": 1} ]"#;
    let stored = Stored {
        tabs: vec![tab],
        stated: vec![(a, Some(text.into()), None)],
        grants: vec![grant("g1")],
        ..Stored::default()
    };
    sim.room = Room::new(Some(keys()), sim.room.catalogue);
    sim.go(Input::Woke(stored));
    let (listener, _) = sim.ask(Request::Listen { grant: "g1".into() });
    let changed = |effects: &[Effect]| {
        replies(effects, listener).contains(&Reply::Listen(ListenEvent::ToolsChanged))
    };
    assert!(!changed(&sim.say(a, &tools_message(&["x"]))), "the same list again");
    assert!(changed(&sim.say(a, &tools_message(&["y"]))), "another list");
}

#[test]
fn a_clients_answers_reach_the_request_that_waits_for_them_and_no_other_connection_answers() {
    let mut sim = Sim::new();
    let ids = vec!["q-a".to_owned(), "q-b".to_owned()];
    let (waiter, effects) = sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: ids.clone() });
    assert!(replies(&effects, waiter).is_empty(), "it waits");
    let answer = |grant: &str, id: &str| Request::Answer {
        grant: grant.into(),
        id: id.into(),
        answer: json!({"action": "accept", "by": grant}),
    };
    let (other, effects) = sim.ask(answer("g2", "q-a"));
    assert_eq!(replies(&effects, other), [Reply::NotAsked], "another connection's answer");
    assert!(replies(&effects, waiter).is_empty());
    let (first, effects) = sim.ask(answer("g1", "q-a"));
    assert_eq!(replies(&effects, first), [Reply::Done]);
    assert!(replies(&effects, waiter).is_empty(), "one of two");
    let (last, effects) = sim.ask(answer("g1", "q-b"));
    assert_eq!(replies(&effects, last), [Reply::Done]);
    assert_eq!(
        replies(&effects, waiter),
        [Reply::Answers(json!({
            "q-a": {"action": "accept", "by": "g1"},
            "q-b": {"action": "accept", "by": "g1"},
        }))]
    );
    // A request that went takes its questions; a revoked connection answers nothing.
    let (gone, _) = sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: ids.clone() });
    sim.go(Input::Gone { asker: gone });
    let (late, effects) = sim.ask(answer("g1", "q-a"));
    assert_eq!(replies(&effects, late), [Reply::NotAsked]);
    sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
    let (revoked, effects) = sim.ask(Request::AwaitAnswers { grant: "g2".into(), ids });
    assert_eq!(replies(&effects, revoked), [Reply::NoGrant]);
}

#[test]
fn a_connection_that_fills_its_listeners_or_questions_leaves_the_others_theirs() {
    let mut sim = Sim::new();
    let mut listening = 0;
    for _ in 0..MAX_LISTENERS {
        let (asker, effects) = sim.ask(Request::Listen { grant: "g1".into() });
        match &replies(&effects, asker)[..] {
            [Reply::Listen(ListenEvent::Tick)] => listening += 1,
            [Reply::TooManyListeners] => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(listening, MAX_LISTENERS_PER_CONNECTION);
    let (asker, effects) = sim.ask(Request::Listen { grant: "g2".into() });
    assert_eq!(replies(&effects, asker), [Reply::Listen(ListenEvent::Tick)]);
    // Questions: one connection's share full, the other's questions still wait.
    let questions = crate::limits::MAX_QUESTIONS_PER_CONNECTION;
    let mut held = 0;
    for i in 0..crate::limits::MAX_PENDING_QUESTIONS {
        let ids = vec![format!("g1-{i}")];
        let (asker, effects) = sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids });
        match &replies(&effects, asker)[..] {
            [] => held += 1,
            [Reply::TooManyQuestions] => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(held, questions);
    let ids = vec!["g2-1".to_owned()];
    let (waiter, effects) = sim.ask(Request::AwaitAnswers { grant: "g2".into(), ids });
    assert!(replies(&effects, waiter).is_empty(), "it waits");
    let answer = Request::Answer { grant: "g2".into(), id: "g2-1".into(), answer: json!({}) };
    let (_, effects) = sim.ask(answer);
    assert_eq!(replies(&effects, waiter), [Reply::Answers(json!({"g2-1": {}}))]);
}
