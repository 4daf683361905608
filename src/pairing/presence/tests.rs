//! What a tab's presence credential and assertions must be for the relay to take them.
use super::*;
use crate::crypto::base64url;

const RELAY: &str = "https://relay.example";
pub(crate) const APP: &str = "https://app.example";
const PAIRING: &str = "p1";

fn client_data(kind: &str, challenge: &str, origin: &str) -> String {
    let json = serde_json::json!({"type": kind, "challenge": challenge, "origin": origin});
    base64url(json.to_string().as_bytes())
}

fn auth_data(host: &str, flags: u8) -> Vec<u8> {
    let mut data = Sha256::digest(host.as_bytes()).to_vec();
    data.push(flags);
    data.extend_from_slice(&[0, 0, 0, 7]);
    data
}

fn enrolment(client_data: String, authenticator: Vec<u8>) -> Enrolment {
    Enrolment {
        credential: base64url(&[7; 16]),
        key: base64url(&[[4u8].as_slice(), &[1; 64]].concat()),
        client_data,
        authenticator: base64url(&authenticator),
    }
}

fn made() -> Enrolment {
    made_for(PAIRING)
}

/// A credential made on the app's origin with the person verified, for `pairing`'s tabs.
pub(crate) fn made_for(pairing: &str) -> Enrolment {
    let challenge = challenge(RELAY, presence::CREATE, pairing);
    enrolment(client_data("webauthn.create", &challenge, APP), auth_data("app.example", 0x05))
}

fn held() -> Held {
    Held::register(RELAY, PAIRING, made()).unwrap()
}

/// A DER signature of r = 0x80 then 31 × 1 (so DER adds a zero) and s = 31 × 2 (one short).
fn der() -> Vec<u8> {
    let mut r = vec![0, 0x80];
    r.extend([1; 31]);
    let s = vec![2; 31];
    let mut der = vec![0x30, (4 + r.len() + s.len()) as u8, 2, r.len() as u8];
    der.extend(&r);
    der.extend([2, s.len() as u8]);
    der.extend(&s);
    der
}

/// An assertion of the credential [`made_for`] gives, for approving `subject`, with these
/// authenticator flags (5: present and verified), from `origin`.
pub(crate) fn assertion(subject: &str, flags: u8, origin: &str) -> Assertion {
    let challenge = challenge(RELAY, presence::APPROVE, subject);
    Assertion {
        credential: base64url(&[7; 16]),
        client_data: client_data("webauthn.get", &challenge, origin),
        authenticator: base64url(&auth_data("app.example", flags)),
        signature: base64url(&der()),
    }
}

#[test]
fn a_credential_made_with_the_person_verified_is_kept_with_its_origin() {
    assert_eq!(held().origin, APP);
    assert_eq!(held().told().credential, base64url(&[7; 16]));
}

#[test]
fn a_credential_made_without_verification_or_for_another_pairing_is_not_kept() {
    let bad = sentences::PRESENCE_NOT_KEPT;
    let create = challenge(RELAY, presence::CREATE, PAIRING);
    let other = challenge(RELAY, presence::CREATE, "p2");
    let cases = [
        // Present but not verified: a tap, or an authenticator with no verification.
        enrolment(client_data("webauthn.create", &create, APP), auth_data("app.example", 0x01)),
        enrolment(client_data("webauthn.create", &other, APP), auth_data("app.example", 0x05)),
        enrolment(client_data("webauthn.get", &create, APP), auth_data("app.example", 0x05)),
        // Another relying party than the origin's host.
        enrolment(client_data("webauthn.create", &create, APP), auth_data("evil.example", 0x05)),
        // An http origin other than localhost has no WebAuthn.
        enrolment(
            client_data("webauthn.create", &create, "http://app.example"),
            auth_data("app.example", 0x05),
        ),
        Enrolment { key: base64url(&[4; 33]), ..made() },
        Enrolment { credential: base64url(&[7; 3]), ..made() },
        Enrolment { client_data: "not base64!".into(), ..made() },
        Enrolment { authenticator: base64url(&[0; 36]), ..made() },
    ];
    for case in cases {
        assert_eq!(Held::register(RELAY, PAIRING, case.clone()), Err(bad), "{case:?}");
    }
}

#[test]
fn localhost_is_the_one_http_origin_with_a_credential() {
    let create = challenge(RELAY, presence::CREATE, PAIRING);
    let local = "http://localhost:8788";
    let e = enrolment(client_data("webauthn.create", &create, local), auth_data("localhost", 5));
    assert_eq!(Held::register(RELAY, PAIRING, e).unwrap().origin, local);
}

#[test]
fn an_assertion_for_this_code_is_a_signature_over_the_authenticator_data_and_client_hash() {
    let a = assertion("ABCDE-FGHJK", 0x05, APP);
    let proof = held().proof(&a, RELAY, presence::APPROVE, "ABCDE-FGHJK").unwrap();
    let mut data = auth_data("app.example", 0x05);
    let client = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&a.client_data).unwrap();
    data.extend_from_slice(&Sha256::digest(&client));
    assert_eq!(proof.data, data);
    assert_eq!(proof.key, [[4u8].as_slice(), &[1; 64]].concat());
    let mut raw = vec![0x80];
    raw.extend([1; 31]);
    raw.push(0);
    raw.extend([2; 31]);
    assert_eq!(proof.signature, raw, "r without DER's zero, s padded to 32 bytes");
}

#[test]
fn an_assertion_for_another_code_credential_origin_or_without_verification_proves_nothing() {
    let h = held();
    let check = |a: &Assertion| h.proof(a, RELAY, presence::APPROVE, "ABCDE-FGHJK");
    // Made for another code (a replay of an earlier approval's assertion).
    assert_eq!(check(&assertion("ZZZZZ-ZZZZZ", 0x05, APP)), None);
    // The person present but not verified.
    assert_eq!(check(&assertion("ABCDE-FGHJK", 0x01, APP)), None);
    // Another origin of the same host's relying party.
    assert_eq!(check(&assertion("ABCDE-FGHJK", 0x05, "https://app.example:444")), None);
    // Another credential.
    let other = Assertion { credential: base64url(&[8; 16]), ..assertion("ABCDE-FGHJK", 5, APP) };
    assert_eq!(check(&other), None);
    // Made for another relay.
    assert_eq!(
        h.proof(&assertion("ABCDE-FGHJK", 5, APP), "https://b.example", "approve", "ABCDE-FGHJK"),
        None
    );
    // Not DER.
    let raw = Assertion { signature: base64url(&[1; 64]), ..assertion("ABCDE-FGHJK", 5, APP) };
    assert_eq!(check(&raw), None);
    // From a frame of another origin.
    let challenge = challenge(RELAY, presence::APPROVE, "ABCDE-FGHJK");
    let json = serde_json::json!({"type": "webauthn.get", "challenge": challenge, "origin": APP, "crossOrigin": true});
    let framed = Assertion {
        client_data: base64url(json.to_string().as_bytes()),
        ..assertion("ABCDE-FGHJK", 5, APP)
    };
    assert_eq!(check(&framed), None);
    assert!(check(&assertion("ABCDE-FGHJK", 0x05, APP)).is_some());
}

#[test]
fn der_signatures_that_are_not_two_integers_of_32_bytes_are_refused() {
    assert!(raw_signature(&der()).is_some());
    let mut long = der();
    long.push(0);
    assert_eq!(raw_signature(&long), None, "a byte after the sequence");
    assert_eq!(raw_signature(&[0x30, 0]), None);
    assert_eq!(raw_signature(&[0x30, 3, 2, 1, 1]), None, "one integer");
    let mut wide = vec![0x30, 38, 2, 34];
    wide.extend([1; 34]);
    assert_eq!(raw_signature(&wide), None, "an integer of 34 bytes");
    let mut unpadded = vec![0x30, 70, 2, 33];
    unpadded.extend([1; 33]);
    unpadded.extend([2, 33]);
    unpadded.extend([1; 33]);
    assert_eq!(raw_signature(&unpadded), None, "33 bytes whose first is not DER's zero");
}
