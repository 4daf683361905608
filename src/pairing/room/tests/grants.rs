//! Simulations of the Room's grants and codes: wrong codes, approvals, replayed codes, a
//! connection listed, forgotten or stopped.

use super::*;
use crate::oauth::connect::Requester;

#[test]
fn a_new_connection_is_listed_to_every_tab_as_soon_as_it_is_made() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let b = sim.tab();
    let request = GrantRequest {
        id: "gn".into(),
        client_id: "https://agent.example/client".into(),
        requester: Requester {
            client_name: "Agent".into(),
            host: "agent.example".into(),
            place: None,
            verified: None,
        },
    };
    let (_, effects) = sim.ask(Request::Grant(request));
    let listed: Vec<u64> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(tab, RelayMessage::Connections { list })
                if list.iter().any(|c| c.id == "gn") =>
            {
                Some(*tab)
            }
            _ => None,
        })
        .collect();
    assert_eq!(listed, [a, b], "each tab hears the list with the new connection");
}

#[test]
fn a_pairing_gets_a_few_wrong_codes_a_minute_then_even_a_right_code_waits() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let refused = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::Send(_, RelayMessage::Refused { sentence, .. }) => Some(sentence.clone()),
            _ => None,
        })
    };
    let right = ConnectCode::generate(&mut Counter(3), &keys());
    // A code the relay did not make is wrong without asking any code's object.
    for _ in 0..WRONG_CODES_ALLOWED - 1 {
        let effects = sim.say(a, r#"{"type":"approve","code":"ABCDE-12345"}"#);
        assert_eq!(refused(&effects).as_deref(), Some(refusal::UNKNOWN));
    }
    // A made code that its object does not know is wrong too.
    let approve = format!(r#"{{"type":"approve","code":"{}"}}"#, right.as_str());
    let effects = sim.say(a, &approve);
    let Some(Effect::AskCode(_, _, command, said)) = effects.last().cloned() else {
        panic!("{effects:?}")
    };
    let effects = sim.go(Input::CodeReplied {
        tab: a,
        said,
        command,
        reply: Some(CodeReply::Refused { sentence: refusal::UNKNOWN.into() }),
    });
    assert!(effects.iter().any(|e| matches!(e, Effect::StoreWrongCodes(_))));
    let effects = sim.say(a, &approve);
    assert_eq!(refused(&effects).as_deref(), Some(sentences::TOO_MANY_WRONG_CODES));
    sim.later(WRONG_CODE_WINDOW_MS);
    assert!(
        matches!(sim.say(a, &approve).last(), Some(Effect::AskCode(..))),
        "a minute later it may"
    );
}

#[test]
fn a_links_approval_asks_for_the_browsers_confirmation_and_a_typed_code_does_not() {
    use crate::oauth::connect::{Description, LinkRef};
    let refused = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::Send(_, RelayMessage::Refused { sentence, .. }) => Some(sentence.clone()),
            _ => None,
        })
    };
    let mut sim = Sim::new();
    let a = sim.tab();
    let code = ConnectCode::generate(&mut Counter(3), &keys());
    let link = LinkRef::for_code(&code, &keys(), &mut Counter(9));
    let effects = sim.say(a, &format!(r#"{{"type":"approve","link":"{}"}}"#, link.as_str()));
    let Some(Effect::AskCode(_, asked, command, said)) = effects.last().cloned() else {
        panic!("{effects:?}")
    };
    assert_eq!((asked, said.as_str()), (code.clone(), link.as_str()));
    assert!(matches!(command, Command::Approve { linked: true, .. }), "{command:?}");
    // The tab gets a ticket that names the link, never the code.
    let reply = CodeReply::ToConfirm { client: "Claude".into(), secret: "s3cret".into() };
    let effects = sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(reply) });
    let sent = effects.iter().find_map(|e| match e {
        Effect::Send(_, m @ RelayMessage::Confirm { .. }) => Some(m.clone()),
        _ => None,
    });
    let Some(RelayMessage::Confirm { code: echoed, ticket, .. }) = sent else {
        panic!("{effects:?}")
    };
    assert_eq!(echoed, link.as_str());
    assert_eq!(ticket, format!("{}.s3cret", link.as_str()));
    assert!(!ticket.contains(code.as_str()));
    // The same code typed whole approves without a confirmation.
    let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.display()));
    assert!(matches!(
        effects.last(),
        Some(Effect::AskCode(_, _, Command::Approve { linked: false, .. }, _))
    ));
    // A link's reference sent as if typed is no code at all.
    let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, link.as_str()));
    assert_eq!(refused(&effects).as_deref(), Some(refusal::MALFORMED));
    // A made-up reference reaches no code's object.
    let effects = sim.say(a, r#"{"type":"approve","link":"ABCDEFGH0123456789"}"#);
    assert_eq!(refused(&effects).as_deref(), Some(refusal::UNKNOWN));
    // Who asks comes with this pairing's connections of the same client.
    let described = |client_id: &str| {
        CodeReply::Described(Description {
            requester: Requester {
                client_name: "Claude".into(),
                host: "claude.ai".into(),
                place: None,
                verified: None,
            },
            client_id: client_id.into(),
            age_ms: 1,
            lookalike: None,
            name_warning: None,
        })
    };
    let describe = |said: &str| (said.to_owned(), Command::Describe);
    let (said, command) = describe(link.as_str());
    let effects =
        sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(described("cid")) });
    let Some(Effect::Send(_, RelayMessage::Described { connections, .. })) = effects.last() else {
        panic!("{effects:?}")
    };
    assert_eq!(connections.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["g1", "g2"]);
    let (said, command) = describe(link.as_str());
    let effects =
        sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(described("another")) });
    assert!(matches!(
        effects.last(),
        Some(Effect::Send(_, RelayMessage::Described { connections, .. })) if connections.is_empty()
    ));
}

#[test]
fn an_approval_at_the_bound_of_connections_is_refused_and_removes_none() {
    let mut sim = Sim::new();
    let a = sim.tab();
    for i in 0..crate::limits::MAX_GRANTS {
        let request = GrantRequest {
            id: format!("n{i}"),
            client_id: "c".into(),
            requester: Requester {
                client_name: "n".into(),
                host: "h".into(),
                place: None,
                verified: None,
            },
        };
        let (asker, effects) = sim.ask(Request::Grant(request));
        let made = matches!(replies(&effects, asker)[..], [Reply::Grant(GrantReply::Made { .. })]);
        assert_eq!(made, i + 2 < crate::limits::MAX_GRANTS, "{i}");
    }
    let code = ConnectCode::generate(&mut Counter(3), &keys());
    let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.as_str()));
    assert!(
        matches!(&effects[..], [Effect::Send(_, RelayMessage::Refused { sentence, .. })] if sentence == sentences::TOO_MANY_CONNECTIONS),
        "{effects:?}"
    );
    let (_, effects) = sim.ask(Request::Revoke(RevokeRequest { grant: "g1".into(), secret: None }));
    assert!(effects.contains(&Effect::DeleteGrant("g1".into())));
    let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.as_str()));
    assert!(matches!(effects.last(), Some(Effect::AskCode(..))));
}

#[test]
fn a_grant_revoked_by_a_replay_is_refused_when_made_later() {
    let mut sim = Sim::new();
    let (_, effects) = sim.ask(Request::Replayed { grant: "late".into() });
    let until = sim.now + REPLAYED_KEPT_MS;
    assert!(effects.contains(&Effect::RecordReplayed("late".into(), until)));
    let request = GrantRequest {
        id: "late".into(),
        client_id: "c".into(),
        requester: Requester {
            client_name: "n".into(),
            host: "h".into(),
            place: None,
            verified: None,
        },
    };
    sim.next_asker += 1;
    let asker = sim.next_asker;
    let effects =
        sim.go(Input::Request { asker, request: Request::Grant(request), replayed: vec![until] });
    assert_eq!(replies(&effects, asker), [Reply::Grant(GrantReply::Replayed)]);
}

/// Both halves of a replayed authorization code on one clock: the code's object (through
/// its wire encoding) and the pairing, with the replay's revocation reaching the pairing
/// before or after the first redemption's grant. wrangler dev always delivers the grant
/// first (tests/e2e/code_replay.test.mjs sees that order), so the other order is driven here.
#[test]
fn a_replayed_code_leaves_no_connection_whichever_request_reaches_the_pairing_first() {
    use crate::oauth::authorize::{AuthRequest, SealId};
    use crate::oauth::connect::{apply, CodeRequest, PollState, Redemption, Revoke};
    use tabrelay_bundle::fields::Message as _;
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    for replay_first in [false, true] {
        let mut sim = Sim::new();
        let code = ConnectCode::generate(&mut Counter(3), &keys());
        let mut stored = None;
        let mut object = |command: Command, now: u64| {
            // The Worker's request and the object's reply, each through its encoding.
            let request = CodeRequest { code: code.as_str().into(), command };
            let (c, command) = CodeRequest::decode(&request.encode()).unwrap();
            let reply = apply(&mut stored, command, now, &mut Counter(5), &c);
            CodeReply::decode(&reply.encode()).unwrap()
        };
        let request = AuthRequest {
            client_id: "cid".into(),
            client_name: "Claude".into(),
            verified_domain: None,
            redirect_uri: "https://claude.ai/cb".into(),
            state: None,
            code_challenge: CHALLENGE.into(),
            resource: None,
            scope: None,
        };
        let seal = SealId("s".into());
        let place = None;
        object(Command::Create { request, seal, browser_hash: "b".into(), place }, sim.now);
        object(Command::Approve { pairing: "p".into(), linked: false }, sim.now);
        let poll = Command::Poll { browser_hash: "b".into(), issuer: "https://r".into() };
        let CodeReply::Poll(PollState::Approved { redirect }) = object(poll, sim.now) else {
            panic!("not approved")
        };
        let issued = redirect.split("code=").nth(1).unwrap().split('&').next().unwrap();
        let secret = issued.split_once('.').unwrap().1.to_owned();
        let redeem = |grant: &str| {
            Command::Redeem(Redemption {
                secret: secret.clone(),
                client_id: "cid".into(),
                redirect_uri: None,
                code_verifier: Some(VERIFIER.into()),
                resource: None,
                origin: "https://r".into(),
                grant: grant.into(),
            })
        };
        // Both redemptions reach the code's object; the first is granted, the replay names
        // the first's grant to revoke.
        let CodeReply::Redeemed { granted } = object(redeem("new"), sim.now) else {
            panic!("the first redemption")
        };
        let CodeReply::RedeemRefused { revoke: Some(Revoke { grant, .. }), .. } =
            object(redeem("other"), sim.now)
        else {
            panic!("the replay names no grant")
        };
        assert_eq!(grant, "new");
        // Then the pairing, in either order (the shell keeps the recorded replay).
        let mut kept = Vec::new();
        let make = |sim: &mut Sim, kept: &[u64]| {
            sim.next_asker += 1;
            let asker = sim.next_asker;
            let request = Request::Grant(GrantRequest {
                id: "new".into(),
                client_id: "cid".into(),
                requester: Requester { place: None, verified: None, ..granted.requester.clone() },
            });
            let effects = sim.go(Input::Request { asker, request, replayed: kept.to_vec() });
            replies(&effects, asker)
        };
        let revoke = |sim: &mut Sim, kept: &mut Vec<u64>| {
            let (_, effects) = sim.ask(Request::Replayed { grant: grant.clone() });
            for e in effects {
                if let Effect::RecordReplayed(_, until) = e {
                    kept.push(until);
                }
            }
        };
        if replay_first {
            revoke(&mut sim, &mut kept);
            sim.later(1);
            assert_eq!(make(&mut sim, &kept), [Reply::Grant(GrantReply::Replayed)]);
        } else {
            let made = make(&mut sim, &kept);
            assert!(matches!(made[..], [Reply::Grant(GrantReply::Made { .. })]), "{made:?}");
            sim.later(1);
            revoke(&mut sim, &mut kept);
        }
        let (asker, effects) = sim.ask(Request::Check { grant: "new".into(), want: Want::Nothing });
        assert_eq!(replies(&effects, asker), [Reply::NoGrant], "replay first: {replay_first}");
        assert!(sim.room.grants.iter().all(|g| g.id != "new"), "replay first: {replay_first}");
    }
}

/// The effects of the person forgetting connection `grant` in tab `tab`.
fn forget(sim: &mut Sim, tab: u64, grant: &str) -> Vec<Effect> {
    let effects = sim.say(tab, &format!(r#"{{"type":"forget","id":"{grant}"}}"#));
    assert!(effects.contains(&Effect::DeleteGrant(grant.into())), "{effects:?}");
    effects
}

fn forgotten() -> CallReply {
    CallReply::not_carried(sentences::FORGOTTEN)
}

/// Whether any request was replied to.
fn any_reply(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Reply(..)))
}

#[test]
fn forget_ends_the_connections_call_in_flight_and_no_result_of_it_reaches_it() {
    let mut sim = Sim::new();
    let (a, b) = (sim.tab(), sim.tab());
    let (mine, effects) = sim.call("g1", 7, true, 60_000);
    let (call, _) = sent_call(&effects, b);
    let (theirs, effects) = sim.call("g2", 7, true, 60_000);
    let (other, _) = sent_call(&effects, b);
    // Forgotten from another tab than the one running its call: every tab hears of it.
    let effects = forget(&mut sim, a, "g1");
    assert_eq!(done(&effects, mine), forgotten());
    assert!(effects.contains(&Effect::Send(b, RelayMessage::Cancel { id: call })));
    for tab in [a, b] {
        let told = RelayMessage::Forgotten { connection: "g1".into() };
        assert!(effects.contains(&Effect::Send(tab, told)), "{effects:?}");
    }
    let at = |wanted: fn(&RelayMessage) -> bool| {
        effects.iter().position(|e| matches!(e, Effect::Send(t, m) if *t == b && wanted(m)))
    };
    let told = at(|m| matches!(m, RelayMessage::Forgotten { .. }));
    let cancelled = at(|m| matches!(m, RelayMessage::Cancel { .. }));
    assert!(told < cancelled, "the tab hears why before the cancel: {effects:?}");
    assert!(replies(&effects, theirs).is_empty(), "another connection's call goes on");
    // The tab's result of it comes anyway: nobody's.
    let late = sim.say(b, &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":1}}}}"#));
    assert!(
        !any_reply(&late) && !late.iter().any(|e| matches!(e, Effect::StoreLeft(_))),
        "{late:?}"
    );
    let effects = sim.say(b, &format!(r#"{{"type":"result","id":{other},"data":[1]}}"#));
    assert!(matches!(done(&effects, theirs), CallReply::TabResult { .. }));
    let (again, effects) = sim.call("g1", 8, true, 60_000);
    assert_eq!(replies(&effects, again), [Reply::NoGrant]);
    // A connection revoked by its client ends what it set going the same way.
    let (call, effects) = sim.call("g2", 9, false, 60_000);
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::Send(t, RelayMessage::Call { .. }) if *t == b)));
    let (_, effects) = sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
    assert_eq!(done(&effects, call), forgotten());
}

#[test]
fn forget_ends_a_call_the_person_is_asked_about_waited_on_or_left_open() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let asking = |id: u64| format!(r#"{{"type":"asking","id":{id},"sentence":"Delete 3 items?"}}"#);
    // Left open: the agent's wait ran out while the person was asked.
    let (_, effects) = sim.call("g1", 1, true, 5_000);
    let (left, _) = sent_call(&effects, a);
    sim.say(a, &asking(left));
    sim.later(5_000);
    let effects = sim.due(left);
    assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
    // Waited on: the card is showing.
    let (waiting, effects) = sim.call("g1", 2, true, 60_000);
    let (asked, _) = sent_call(&effects, a);
    sim.say(a, &asking(asked));
    let effects = forget(&mut sim, a, "g1");
    assert_eq!(done(&effects, waiting), forgotten());
    for id in [left, asked] {
        assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })), "{effects:?}");
    }
    let stored = effects.iter().find_map(|e| match e {
        Effect::StoreLeft(l) => Some(l.clone()),
        _ => None,
    });
    let nothing = tabrelay_bundle::fields::json_text(&LeftCalls::default());
    assert_eq!(stored, Some(nothing), "nothing kept for it: {effects:?}");
    // The person presses Allow anyway (a tab that did not drop its card): nothing of it
    // reaches anyone.
    for id in [left, asked] {
        let late = sim.say(a, &format!(r#"{{"type":"answered","id":{id}}}"#));
        assert!(!any_reply(&late), "{late:?}");
        let late = sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":{{"deleted":1}}}}"#));
        assert!(late.is_empty(), "{late:?}");
    }
}

#[test]
fn forget_ends_the_connections_listen_streams_only() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (mine, _) = sim.ask(Request::Listen { grant: "g1".into() });
    let (other, _) = sim.ask(Request::Listen { grant: "g2".into() });
    let effects = forget(&mut sim, a, "g1");
    assert_eq!(replies(&effects, mine), [Reply::Call(CallEvent::Done(forgotten()))]);
    assert!(replies(&effects, other).is_empty(), "{effects:?}");
    let effects = sim.say(a, r#"{"type":"tools","tools":[]}"#);
    assert!(replies(&effects, mine).is_empty(), "a forgotten listener hears nothing more");
    assert_eq!(replies(&effects, other), [Reply::Listen(ListenEvent::ToolsChanged)]);
}

#[test]
fn forget_ends_the_connections_tasks_questions_and_kept_ends() {
    let mut sim = Sim::new();
    let a = sim.tab();
    sim.say(a, &asked_list());
    let (task, call) = slow_task(&mut sim, "g1", 1, a);
    let (other_task, _) = slow_task(&mut sim, "g2", 1, a);
    // A question of g1 waits for the client's answers; a call's stream dropped (detached),
    // another's end is kept for the client's return.
    let (questions, _) =
        sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: vec!["q".into()] });
    let resumable = |id: u64| {
        Request::Call(CallRequest { stream: true, resumable: true, ..call_request("g1", id) })
    };
    let (dropped, effects) = sim.ask(resumable(2));
    let (detached, _) = sent_call(&effects, a);
    sim.go(Input::Gone { asker: dropped });
    let (ended, effects) = sim.ask(resumable(3));
    let (kept, _) = sent_call(&effects, a);
    let effects = sim.say(a, &format!(r#"{{"type":"result","id":{kept},"data":[3]}}"#));
    assert!(matches!(done(&effects, ended), CallReply::TabResult { .. }));
    let effects = forget(&mut sim, a, "g1");
    assert!(effects.contains(&Effect::DeleteTask(task.clone())), "{effects:?}");
    assert!(!effects.contains(&Effect::DeleteTask(other_task.clone())));
    for id in [call, detached] {
        assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })), "{effects:?}");
    }
    assert_eq!(done(&effects, questions), forgotten());
    assert_eq!(sim.room.resume.take("g1 2", sim.now), None);
    assert_eq!(sim.room.resume.take("g1 3", sim.now), None);
    assert!(sim.room.calls.flights().all(|f| f.grant != "g1"), "no call of it in flight");
    // The task's result comes anyway: stored nowhere.
    let late = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
    assert!(stored_tasks(&late).is_empty() && !any_reply(&late), "{late:?}");
    let (reply, _) = about_task(&mut sim, "g2", &other_task, TaskOp::Get);
    assert!(matches!(reply, TaskReply::Detailed(_)), "another connection's task stays");
    let (asker, effects) = sim.ask(Request::Task { grant: "g1".into(), task, op: TaskOp::Get });
    assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
}

#[test]
fn a_stopped_agents_calls_are_refused_until_the_person_lets_it_go_on() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let effects = sim.say(a, r#"{"type":"stop","connection":"g1"}"#);
    let stored = effects.iter().find_map(|e| match e {
        Effect::StoreGrant(g) => Some(g.clone()),
        _ => None,
    });
    let stored = stored.expect("the stop is kept in the grant's row");
    assert!(stored.stopped && stored.id == "g1");
    let told = RelayMessage::Stopped { connection: "g1".into(), stopped: true };
    assert!(effects.contains(&Effect::Send(a, told)), "every tab hears it: {effects:?}");
    let refused = |sim: &mut Sim, id: u64| {
        let (asker, effects) = sim.call("g1", id, false, 60_000);
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))),
            "nothing reaches the tab: {effects:?}"
        );
        assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::AGENT_STOPPED));
    };
    refused(&mut sim, 1);
    refused(&mut sim, 2);
    // Its status says it is stopped, and what the person must do; another agent's does not.
    let status = |sim: &mut Sim, grant: &str| {
        let (asker, effects) = sim.ask(Request::Check { grant: grant.into(), want: Want::Status });
        answered(&effects, asker)
    };
    assert!(status(&mut sim, "g1").contains(sentences::STATUS_STOPPED));
    assert!(!status(&mut sim, "g2").contains(sentences::STATUS_STOPPED));
    let (_, effects) = sim.call("g2", 1, false, 60_000);
    sent_call(&effects, a); // another agent is not stopped
    let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Nothing });
    assert_eq!(replies(&effects, asker), [Reply::Done], "its token still works");
    let listed = sim.say(a, r#"{"type":"connections"}"#);
    let list = listed.iter().find_map(|e| match e {
        Effect::Send(_, RelayMessage::Connections { list }) => Some(list.clone()),
        _ => None,
    });
    let list = list.unwrap();
    assert!(list.iter().any(|c| c.id == "g1" && c.stopped));
    assert!(list.iter().any(|c| c.id == "g2" && !c.stopped));
    // An eviction does not let it go on: the row says it is stopped.
    let mut woken = Sim::new();
    woken.go(Input::Woke(Stored { grants: vec![stored, grant("g2")], ..Stored::default() }));
    let b = woken.tab();
    refused(&mut woken, 3);
    // The person lets it go on: its next call runs.
    let effects = woken.say(b, r#"{"type":"go_on","connection":"g1"}"#);
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::StoreGrant(g) if g.id == "g1" && !g.stopped)));
    let (_, effects) = woken.call("g1", 4, false, 60_000);
    sent_call(&effects, b);
    assert!(!status(&mut woken, "g1").contains(sentences::STATUS_STOPPED), "no longer stopped");
    // Stopping one that is not a connection here changes nothing.
    assert!(woken.say(b, r#"{"type":"stop","connection":"nope"}"#).is_empty());
}
