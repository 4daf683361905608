//! `TabMessage::parse` and `Tab::on_message` on any text a tab's socket delivers, for a tab
//! just admitted (`Tab::admit`, not yet proven) and for one that has proved its pairing.
//! Checks that only the right hello proves a tab, that a proven tab is never closed or
//! welcomed again, that each action matches the message read, and that a message the relay
//! accepts reads the same when written out again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::connect::{refusal, ConnectCode};
use tabrelay::oauth::sha256_hex;
use tabrelay::pairing::{Tab, TabAction};
use tabrelay_bundle::protocol::{
    close, Outcome, TabMessage, MAX_DATASET_NAME_CHARS, PROTOCOL_VERSION,
};
use tabrelay_bundle::BUNDLE_DIGEST;

/// The tab secret of the seeds' hello.
const SECRET: &str = "k5Hn0Nd3e1oDqJ7b6v1wQm0Kc9eYtq2ZpW8xR4sLfA0";
const OPENED: u64 = 1_000;
const NOW: u64 = 2_000;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = TabMessage::parse(&text);
    if let Ok(m) = &parsed {
        if !has_float(m) && !matches!(m, TabMessage::BadTools { .. }) {
            let written = serde_json::to_string(m).unwrap();
            let back = TabMessage::parse(&written);
            assert_eq!(back.as_ref().ok(), Some(m), "{written} reads back differently");
        }
    }

    let opened = Tab::admit(sha256_hex(SECRET.as_bytes()), 3, OPENED, 0).expect("room for a tab");
    let proves = |m: &TabMessage| match m {
        TabMessage::Hello { secret, .. } => sha256_hex(secret.as_bytes()) == opened.pairing,
        _ => false,
    };
    match opened.on_message(&text, NOW) {
        TabAction::Welcome(t) => {
            let Ok(TabMessage::Hello { protocol, secret, bundle }) = &parsed else {
                panic!("welcomed without a hello")
            };
            assert_eq!((*protocol, bundle.as_str()), (PROTOCOL_VERSION, BUNDLE_DIGEST));
            assert_eq!(sha256_hex(secret.as_bytes()), opened.pairing, "welcomed a wrong secret");
            assert_eq!(t, Tab { proven: true, focus_ms: NOW, ..opened.clone() });
        }
        TabAction::Close(code, reason) => {
            assert!(!reason.is_empty());
            match &parsed {
                Err(_) => assert_eq!(code, close::PROTOCOL_ERROR),
                Ok(m) if proves(m) => assert_eq!(code, close::OUTDATED),
                Ok(_) => assert_eq!(code, close::PROOF_FAILED),
            }
        }
        other => panic!("an unproven tab got {other:?}"),
    }

    let proven = Tab { proven: true, ..opened };
    match proven.on_message(&text, NOW) {
        TabAction::Ignore => assert!(matches!(
            parsed,
            Err(_) | Ok(TabMessage::Hello { .. } | TabMessage::Focus { focused: false })
        )),
        TabAction::Approve(c) => {
            let Ok(TabMessage::Approve { code }) = &parsed else { panic!("approved no code") };
            assert_eq!(ConnectCode::parse(code).as_ref(), Some(&c));
        }
        TabAction::RefuseCode(shown, sentence) => {
            let Ok(TabMessage::Approve { code }) = &parsed else { panic!("refused no code") };
            assert!(ConnectCode::parse(code).is_none());
            assert_eq!(sentence, refusal::MALFORMED);
            assert!(shown.chars().count() <= 40 && code.starts_with(&shown));
        }
        TabAction::Asking(id, sentence) => {
            assert_eq!(parsed.ok(), Some(TabMessage::Asking { id, sentence }));
        }
        TabAction::Answered(id) => assert_eq!(parsed.ok(), Some(TabMessage::Answered { id })),
        TabAction::PersonStep => assert_eq!(parsed.ok(), Some(TabMessage::Step)),
        TabAction::Update(t) => {
            assert!(matches!(parsed, Ok(TabMessage::Focus { focused: true })));
            assert_eq!(t, Tab { focus_ms: NOW, ..proven.clone() });
        }
        TabAction::Tools(list) => {
            let Ok(TabMessage::Tools { tools }) = &parsed else { panic!("a list from no tools") };
            assert_eq!(&list, tools);
        }
        TabAction::RefuseTools(sentence) => {
            let Ok(TabMessage::BadTools { why }) = &parsed else { panic!("refused no list") };
            assert_eq!(sentence, why.sentence());
        }
        TabAction::View(dataset) => {
            let Ok(TabMessage::View { dataset: said }) = &parsed else { panic!("no view") };
            assert!(
                dataset.chars().count() <= MAX_DATASET_NAME_CHARS && said.starts_with(&dataset)
            );
        }
        TabAction::Answer(id, outcome) => {
            let Ok(TabMessage::Result { id: i, outcome: o }) = &parsed else {
                panic!("an answer from no result")
            };
            assert_eq!((id, &outcome), (*i, o));
        }
        other => panic!("a proven tab got {other:?}"),
    }
});

fn has_float(m: &TabMessage) -> bool {
    match m {
        TabMessage::Result { outcome: Outcome::Done { data, .. }, .. } => {
            tabrelay_fuzz::has_float(data)
        }
        TabMessage::Tools { tools } => tabrelay_fuzz::has_float(&tools.to_value()),
        _ => false,
    }
}
