//! `TabMessage::parse` and `Tab::on_message` on any text a tab's socket delivers, for a socket
//! just admitted (`Tab::admit`: its challenge sent, not yet proven), for one whose hello is
//! being checked, and for one that has proved its pairing key; `PairingKey::read` and
//! `socket_pairing` on the same bytes as a hello's key and a socket's query; and the bounds of sockets
//! still to prove themselves on timings taken from the input. Checks that a message over the
//! first-message limit is refused unread, that only a current hello becomes a proof to check
//! and then over exactly the relay's origin and this socket's challenge, that only a holding
//! proof welcomes a tab, that a proven tab is never closed or welcomed again, that each action
//! matches the message read, and that a message the relay accepts reads the same when written
//! out again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::connect::{refusal, Named};
use tabrelay::pairing::{next_check, socket_pairing, sockets_to_close, PairingKey, Tab, TabAction};
use tabrelay_bundle::fields::Encode as _;
use tabrelay_bundle::protocol::{
    close, proof_text, TabMessage, HELLO_WAIT_MS, MAX_DATASET_NAME_CHARS,
    MAX_UNPROVEN_MESSAGE_BYTES, MAX_UNPROVEN_SOCKETS, PAIRING_KEY_BYTES, PROTOCOL_VERSION,
    SIGNATURE_BYTES,
};
use tabrelay_bundle::BUNDLE_DIGEST;
use tabrelay_fuzz::{Fixed, ORIGIN};

/// The pairing key of the seeds' socket (base64url of 0x04 and 64 bytes of 0x07).
const KEY: &str =
    "BAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc";
const OPENED: u64 = 1_000;
const NOW: u64 = 2_000;

fuzz_target!(|data: &[u8]| {
    kept_as_read_whole(data);
    let text = String::from_utf8_lossy(data);
    let parsed = TabMessage::parse(&text);
    if let Ok(m) = &parsed {
        if !has_float(m) && !matches!(m, TabMessage::BadTools { .. }) {
            let written = String::from_utf8(m.to_json()).unwrap();
            let back = TabMessage::parse(&written);
            assert_eq!(back.as_ref().ok(), Some(m), "{written} reads back differently");
        }
    }
    if let Some(k) = PairingKey::read(&text) {
        assert_eq!((k.text(), k.raw().len(), k.raw()[0]), (text.to_string(), PAIRING_KEY_BYTES, 4));
    }
    // The same bytes as a socket's query.
    let query: Vec<(String, String)> = form_urlencoded::parse(data).into_owned().collect();
    match socket_pairing(&query) {
        Ok(id) => assert!(
            query.iter().any(|(n, v)| n == "pairing" && *v == id)
                && !query.iter().any(|(n, _)| n == "key")
        ),
        Err((code, reason)) => {
            assert!(matches!(code, close::OUTDATED | close::PROTOCOL_ERROR) && !reason.is_empty())
        }
    }

    let key = PairingKey::read(KEY).expect("the seeds' key has a key's shape");
    let opened = Tab::admit(&key.pairing(), ORIGIN, "unknown", 3, OPENED, &mut Fixed(7)).tab;
    let challenge = opened.challenge.clone().expect("a fresh socket has its challenge");
    match opened.on_message(&text, NOW) {
        TabAction::Verify(checking, proof) => {
            assert!(
                text.len() <= MAX_UNPROVEN_MESSAGE_BYTES,
                "read a first message over the limit"
            );
            let Ok(TabMessage::Hello { protocol, key: named, signature, bundle }) = &parsed else {
                panic!("a proof from no hello")
            };
            assert_eq!((*protocol, bundle.as_str()), (PROTOCOL_VERSION, BUNDLE_DIGEST));
            assert_eq!(PairingKey::read(named).map(|k| k.pairing()), Some(key.pairing()));
            assert_eq!(proof.data, proof_text(ORIGIN, &challenge).into_bytes());
            assert_eq!(proof.key, key.raw());
            assert_eq!(proof.signature.len(), SIGNATURE_BYTES);
            assert!(!signature.is_empty());
            assert_eq!(checking, Tab { challenge: None, key: key.text(), ..opened.clone() });
            // Only a holding proof welcomes it; a second hello proves nothing.
            assert!(matches!(
                checking.proved(false, NOW, 0),
                TabAction::Close(close::PROOF_FAILED, _)
            ));
            let TabAction::Welcome(t) = checking.proved(true, NOW, 0) else {
                panic!("not welcomed")
            };
            assert_eq!(t, Tab { proven: true, focus_ms: NOW, ..checking.clone() });
            assert!(matches!(
                checking.on_message(&text, NOW),
                TabAction::Close(close::PROOF_FAILED, _)
            ));
        }
        TabAction::Close(code, reason) => {
            assert!(!reason.is_empty() && reason.len() <= 123);
            match &parsed {
                _ if text.len() > MAX_UNPROVEN_MESSAGE_BYTES => {
                    assert_eq!(code, close::PROTOCOL_ERROR)
                }
                Err(_) => assert_eq!(code, close::PROTOCOL_ERROR),
                Ok(TabMessage::Hello { protocol, bundle, .. })
                    if (*protocol, bundle.as_str()) != (PROTOCOL_VERSION, BUNDLE_DIGEST) =>
                {
                    assert_eq!(code, close::OUTDATED)
                }
                Ok(_) => assert_eq!(code, close::PROOF_FAILED),
            }
        }
        other => panic!("an unproven socket got {other:?}"),
    }

    let proven = Tab { proven: true, challenge: None, ..opened.clone() };
    match proven.on_message(&text, NOW) {
        TabAction::Ignore => assert!(matches!(
            parsed,
            Err(_) | Ok(TabMessage::Hello { .. } | TabMessage::Focus { focused: false })
        )),
        TabAction::Approve(named, proof) => {
            let Ok(TabMessage::Approve { said, proof: sent }) = &parsed else {
                panic!("approved no code")
            };
            assert_eq!(Named::read(said).as_ref(), Some(&named));
            // The assertion is for what the tab sent, as it sent it.
            assert_eq!(proof, sent.clone().map(|a| (a, said.text().to_owned())));
        }
        TabAction::Enrol(made) => {
            let Ok(TabMessage::Presence { credential, key, .. }) = &parsed else {
                panic!("enrolled no credential")
            };
            assert_eq!((&made.credential, &made.key), (credential, key));
        }
        TabAction::RefuseCode(shown, sentence) => {
            let Ok(
                TabMessage::Approve { said, .. }
                | TabMessage::Describe { said }
                | TabMessage::Deny { said },
            ) = &parsed
            else {
                panic!("refused no code")
            };
            assert!(Named::read(said).is_none());
            assert_eq!(sentence, refusal::MALFORMED);
            assert!(shown.chars().count() <= 40 && said.text().starts_with(&shown));
        }
        TabAction::Asking(id, sentence) => {
            let Ok(TabMessage::Asking { id: i, sentence: s, .. }) = parsed else {
                panic!("asking from another message")
            };
            assert_eq!((i, s), (id, sentence));
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
        TabAction::Result(id, outcome) => {
            let Ok(TabMessage::Result { id: i, outcome: o }) = &parsed else {
                panic!("an answer from no result")
            };
            assert_eq!((id, &outcome), (*i, o));
        }
        TabAction::Stopped(connection, true) => {
            assert_eq!(parsed.ok(), Some(TabMessage::Stop { connection }));
        }
        TabAction::Stopped(connection, false) => {
            assert_eq!(parsed.ok(), Some(TabMessage::GoOn { connection }));
        }
        other => panic!("a proven tab got {other:?}"),
    }

    // Sockets opened at times taken from the input (every third one proven), checked at `now`.
    let now = OPENED + u64::from(data.first().copied().unwrap_or(0)) * 100;
    let tabs: Vec<Tab> = data
        .iter()
        .take(32)
        .enumerate()
        .map(|(i, b)| Tab {
            number: i as u64,
            opened_ms: OPENED + u64::from(*b) * 50,
            proven: i % 3 == 2,
            ..opened.clone()
        })
        .filter(|t| t.opened_ms <= now)
        .collect();
    let closing = sockets_to_close(&tabs, now);
    let left: Vec<&Tab> =
        tabs.iter().filter(|t| !closing.iter().any(|(n, _)| *n == t.number)).collect();
    assert!(closing.iter().all(|(n, _)| tabs.iter().any(|t| t.number == *n && !t.proven)));
    assert!(left.iter().filter(|t| !t.proven).count() <= MAX_UNPROVEN_SOCKETS);
    assert!(left.iter().all(|t| !t.overdue(now)), "every late socket closes");
    match next_check(left.iter().copied(), now) {
        Some(at) => assert!(at > now && at <= now + HELLO_WAIT_MS),
        None => assert!(left.iter().all(|t| t.proven)),
    }
});

/// `raw::parse_keeping` (how a result's data is read) against a whole read: the scan decides
/// only how fast. What reads whole reads the same, its data kept as one line of the same value;
/// what does not read whole does not read, unless the data is JSON a tree cannot hold.
fn kept_as_read_whole(data: &[u8]) {
    let whole = serde_json::from_slice::<serde_json::Value>(data).ok();
    match (tabrelay_bundle::raw::parse_keeping(data, &["data"]), whole) {
        (None, whole) => assert!(whole.is_none(), "read whole, not kept"),
        (Some((tree, kept)), whole) => {
            let Some(kept) = kept else { return assert_eq!(Some(tree), whole) };
            assert!(!kept.as_str().contains(['\n', '\r']), "one line");
            assert!(serde_json::from_str::<serde::de::IgnoredAny>(kept.as_str()).is_ok());
            let Some(mut whole) = whole else { return };
            let member = whole.get_mut("data").map(core::mem::take).expect("a data member");
            assert_eq!(tree, whole, "the rest as a whole read has it");
            let read: serde_json::Value = serde_json::from_str(kept.as_str()).unwrap();
            assert!(tabrelay_fuzz::has_float(&member) || read == member, "the same data");
        }
    }
}

/// Whether a message holds a float the relay reads into a tree (and may write with other
/// digits): a tool list's. A result's data is carried as the tab wrote it, floats and all.
fn has_float(m: &TabMessage) -> bool {
    match m {
        TabMessage::Tools { tools } => tabrelay_fuzz::has_float(&tools.to_value()),
        _ => false,
    }
}
