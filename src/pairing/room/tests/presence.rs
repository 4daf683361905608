//! The person's proven presence in the room: once the pairing holds a presence credential, no
//! approval of a code reaches the code's object without an assertion of it made for that code
//! and checked by the shell.
use super::*;
use crate::oauth::connect::ConnectCode;
use crate::pairing::presence::tests::{assertion, made_for, APP};
use crate::pairing::presence::{Enrolment, Held};
use tabrelay_bundle::protocol::Assertion;

fn presence_message(e: &Enrolment) -> String {
    json!({"type": "presence", "credential": e.credential, "key": e.key,
        "client_data": e.client_data, "authenticator": e.authenticator})
    .to_string()
}

fn approve_message(code: &str, proof: Option<&Assertion>) -> String {
    let mut m = json!({"type": "approve", "code": code});
    if let Some(a) = proof {
        m["proof"] = json!({"credential": a.credential, "client_data": a.client_data,
            "authenticator": a.authenticator, "signature": a.signature});
    }
    m.to_string()
}

fn refused(effects: &[Effect]) -> Option<String> {
    effects.iter().find_map(|e| match e {
        Effect::Send(_, RelayMessage::Refused { sentence, .. }) => Some(sentence.clone()),
        _ => None,
    })
}

fn asked_code(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::AskCode(_, _, Command::Approve { .. }, _)))
}

/// A room whose tab `a` made the pairing's credential; the code `code` to approve.
fn enrolled() -> (Sim, u64, String) {
    let mut sim = Sim::new();
    let a = sim.tab();
    let b = sim.tab();
    let effects = sim.say(a, &presence_message(&made_for(&key().pairing())));
    assert!(effects.iter().any(|e| matches!(e, Effect::StorePresence(_))), "{effects:?}");
    for tab in [a, b] {
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::Send(n, RelayMessage::Presence { .. }) if *n == tab)),
            "every tab is told: {effects:?}"
        );
    }
    let code = ConnectCode::generate(&mut Counter(3), &keys()).display();
    (sim, a, code)
}

#[test]
fn without_a_credential_an_approval_goes_to_the_codes_object_as_before() {
    let mut sim = Sim::new();
    let a = sim.tab();
    let code = ConnectCode::generate(&mut Counter(3), &keys()).display();
    assert!(asked_code(&sim.say(a, &approve_message(&code, None))));
}

#[test]
fn once_a_credential_is_held_an_approval_without_the_persons_assertion_connects_nothing() {
    let (mut sim, a, code) = enrolled();
    let effects = sim.say(a, &approve_message(&code, None));
    assert!(!asked_code(&effects), "{effects:?}");
    assert_eq!(refused(&effects).as_deref(), Some(sentences::PRESENCE_NOT_PROVEN));
    // Present but not verified (an authenticator that only takes a tap), another code's
    // assertion (a replay), or one from another origin: refused before any signature check.
    for proof in [
        assertion(&code, 0x01, APP),
        assertion("ZZZZZ-ZZZZZ", 0x05, APP),
        assertion(&code, 0x05, "https://other.example"),
    ] {
        let effects = sim.say(a, &approve_message(&code, Some(&proof)));
        assert!(!asked_code(&effects), "{effects:?}");
        assert!(!effects.iter().any(|e| matches!(e, Effect::VerifyPresence(..))));
        assert_eq!(refused(&effects).as_deref(), Some(sentences::PRESENCE_NOT_PROVEN));
    }
}

#[test]
fn an_assertion_for_the_code_is_checked_and_approves_only_when_its_signature_holds() {
    let (mut sim, a, code) = enrolled();
    let effects = sim.say(a, &approve_message(&code, Some(&assertion(&code, 0x05, APP))));
    let Some(Effect::VerifyPresence(tab, _, named)) = effects.last().cloned() else {
        panic!("{effects:?}")
    };
    assert_eq!((tab, named.as_str()), (a, code.replace('-', "").as_str()));
    assert!(!asked_code(&effects), "nothing is asked before the signature is checked");
    let bad = sim.go(Input::PresenceProved { tab: a, named: named.clone(), valid: false });
    assert!(!asked_code(&bad));
    assert_eq!(refused(&bad).as_deref(), Some(sentences::PRESENCE_NOT_PROVEN));
    let good = sim.go(Input::PresenceProved { tab: a, named, valid: true });
    assert!(asked_code(&good), "{good:?}");
}

#[test]
fn the_first_credential_stays_and_a_second_is_refused() {
    let (mut sim, a, _) = enrolled();
    let first = sim.room.presence.clone().unwrap();
    let mut other = made_for(&key().pairing());
    other.credential = crate::crypto::base64url(&[9; 16]);
    let effects = sim.say(a, &presence_message(&other));
    assert!(!effects.iter().any(|e| matches!(e, Effect::StorePresence(_))));
    assert!(effects.iter().any(|e| matches!(e,
        Effect::Send(_, RelayMessage::PresenceRefused { sentence }) if sentence == sentences::PRESENCE_HELD)));
    assert_eq!(sim.room.presence, Some(first));
}

#[test]
fn a_tab_that_opens_later_is_welcomed_with_the_credential_kept_while_a_connection_is() {
    let (mut sim, a, _) = enrolled();
    let held: Held = sim.room.presence.clone().unwrap();
    let c = sim.open();
    sim.say(c, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
    let effects = sim.go(Input::Proved { tab: c, valid: true });
    assert!(effects.iter().any(|e| matches!(e,
        Effect::Send(n, RelayMessage::Welcome { presence: Some(p), .. }) if *n == c && *p == held.told())));
    // Every tab gone, the connections kept: so is the credential.
    let numbers: Vec<u64> = sim.room.tabs.values().map(|t| t.number).collect();
    let mut gone = Vec::new();
    for tab in numbers {
        gone.extend(sim.go(Input::Closed { tab }));
    }
    assert!(!gone.iter().any(|e| matches!(e, Effect::ForgetAll)), "{gone:?}");
    assert_eq!(sim.room.presence.as_ref(), Some(&held));
    let _ = a;
}

#[test]
fn a_credential_alone_keeps_nothing_past_the_last_tab() {
    // Anyone can make a key, prove it and send a credential (attestation "none"): a pairing
    // that holds nothing else must not keep it, or an outsider could make it keep a row.
    let (mut sim, _, _) = enrolled();
    sim.room.grants.clear();
    let numbers: Vec<u64> = sim.room.tabs.values().map(|t| t.number).collect();
    let mut gone = Vec::new();
    for tab in numbers {
        gone.extend(sim.go(Input::Closed { tab }));
    }
    assert!(gone.iter().any(|e| matches!(e, Effect::ForgetAll)), "{gone:?}");
    assert_eq!(sim.room.presence, None);
}

#[test]
fn a_links_approval_needs_the_persons_assertion_for_that_link_too() {
    use crate::oauth::connect::LinkRef;
    let (mut sim, a, _) = enrolled();
    let code = ConnectCode::generate(&mut Counter(3), &keys());
    let link = LinkRef::for_code(&code, &keys(), &mut Counter(9));
    let message = |proof: Option<&Assertion>| {
        let mut m = json!({"type": "approve", "link": link.as_str()});
        if let Some(a) = proof {
            m["proof"] = json!({"credential": a.credential, "client_data": a.client_data,
                "authenticator": a.authenticator, "signature": a.signature});
        }
        m.to_string()
    };
    let effects = sim.say(a, &message(None));
    assert!(!asked_code(&effects), "{effects:?}");
    assert_eq!(refused(&effects).as_deref(), Some(sentences::PRESENCE_NOT_PROVEN));
    // The assertion the person made for the code typed is not one for its link.
    let typed = assertion(&code.display(), 0x05, APP);
    assert_eq!(
        refused(&sim.say(a, &message(Some(&typed)))).as_deref(),
        Some(sentences::PRESENCE_NOT_PROVEN)
    );
    let effects = sim.say(a, &message(Some(&assertion(link.as_str(), 0x05, APP))));
    assert!(matches!(effects.last(), Some(Effect::VerifyPresence(..))), "{effects:?}");
    let Some(Effect::VerifyPresence(_, _, named)) = effects.last().cloned() else { unreachable!() };
    let effects = sim.go(Input::PresenceProved { tab: a, named, valid: true });
    assert!(effects
        .iter()
        .any(|e| matches!(e, Effect::AskCode(_, _, Command::Approve { linked: true, .. }, _))));
}
