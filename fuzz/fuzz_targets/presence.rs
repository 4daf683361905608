//! `pairing::presence` on any bytes: the input split at 0xFF into a WebAuthn client data, an
//! authenticator data, a signature and a public key (each sent base64url, as a tab sends them),
//! read as a credential's creation and as an assertion of a held credential. Checks that a kept
//! credential names an origin WebAuthn serves (https, or http on localhost) and that a proof
//! to check is a 65-byte key, a 64-byte signature and the authenticator data (at least 37
//! bytes) followed by the client data's SHA-256.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::crypto::{base64url, sha256_hex};
use tabrelay::pairing::presence::{Enrolment, Held};
use tabrelay_bundle::protocol::{presence, Assertion};
use tabrelay_fuzz::ORIGIN;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0xFF);
    let mut next = || base64url(parts.next().unwrap_or_default());
    let (client_data, authenticator, signature, key) = (next(), next(), next(), next());
    let credential = base64url(&[7; 16]);
    let made = Enrolment {
        credential: credential.clone(),
        key: key.clone(),
        client_data: client_data.clone(),
        authenticator: authenticator.clone(),
    };
    if let Ok(held) = Held::register(ORIGIN, "p1", made) {
        assert!(
            held.origin.starts_with("https://") || held.origin.starts_with("http://localhost"),
            "{}",
            held.origin
        );
    }
    let held = Held {
        credential: credential.clone(),
        key: base64url(&[[4u8].as_slice(), &[1; 64]].concat()),
        origin: "https://app.example".into(),
    };
    let assertion = Assertion { credential, client_data, authenticator, signature };
    if let Some(proof) = held.proof(&assertion, ORIGIN, presence::APPROVE, "ABCDE-FGHJK") {
        assert_eq!((proof.key.len(), proof.signature.len()), (65, 64));
        assert!(proof.data.len() >= 37 + 32);
        let parts: Vec<&[u8]> = data.split(|&b| b == 0xFF).collect();
        let tail = &proof.data[proof.data.len() - 32..];
        let hex: String = tail.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, sha256_hex(parts[0]));
        assert_eq!(&proof.data[..proof.data.len() - 32], parts[1]);
    }
});
