//! `ConnectCode::parse` on anything a person types, and `oauth::token::verify` (and the kept
//! tokens' `Verified::verify`) on any bearer token. Checks that a code shows as it parses, that
//! only this relay's tokens verify, that a token it issues for any claims verifies to the same
//! claims until it expires, and that a kept token answers as a whole check would.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::connect::{ConnectCode, CODE_ALPHABET, CODE_LEN};
use tabrelay::oauth::token::{self, Access, TokenError};
use tabrelay_fuzz::{keys, NOW, ORIGIN};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(code) = ConnectCode::parse(&text) {
        let s = code.as_str();
        assert_eq!(s.len(), CODE_LEN);
        assert!(s.bytes().all(|b| CODE_ALPHABET.contains(&b)));
        let shown = code.display();
        assert_eq!(shown.len(), CODE_LEN + 1);
        assert_eq!(ConnectCode::parse(&shown).as_ref(), Some(&code), "{shown} re-parses");
        assert_eq!(ConnectCode::parse(s).as_ref(), Some(&code));
        // Case does not matter, and only ASCII was typed.
        assert!(text.is_ascii());
        assert_eq!(ConnectCode::parse(&text.to_ascii_lowercase()).as_ref(), Some(&code));
        let typed = text.chars().filter(|c| !matches!(c, ' ' | '-')).count();
        assert_eq!(typed, CODE_LEN);
    }

    let keys = keys();
    let read = token::verify(&keys, ORIGIN, &text, NOW);
    if let Ok(access) = &read {
        assert_eq!((access.iss.as_str(), access.aud.as_str()), (ORIGIN, ORIGIN));
    }
    // The tokens an isolate keeps answer as a whole check does, the second time too (from
    // what was kept, when the first verified), and a kept token expires as it would.
    let kept = token::Verified::new();
    assert_eq!(kept.verify(&keys, ORIGIN, &text, NOW), read);
    assert_eq!(kept.verify(&keys, ORIGIN, &text, NOW), read);
    let later = NOW + 3_601_000;
    assert_eq!(
        kept.verify(&keys, ORIGIN, &text, later),
        token::verify(&keys, ORIGIN, &text, later)
    );

    // A token issued for claims made of the input verifies to those claims, and only here.
    let mut parts = text.splitn(4, '\n').map(str::to_owned);
    let mut next = || parts.next().unwrap_or_default();
    let access = Access {
        iss: ORIGIN.into(),
        aud: ORIGIN.into(),
        pairing: next(),
        grant: next(),
        client: next(),
        host: next(),
    };
    let issued = token::issue(&keys, access.clone(), NOW);
    assert_eq!(token::verify(&keys, ORIGIN, &issued, NOW), Ok(access.clone()));
    assert_eq!(token::verify(&keys, ORIGIN, &issued, NOW + 3_599_000), Ok(access));
    assert_eq!(token::verify(&keys, ORIGIN, &issued, NOW + 3_601_000), Err(TokenError::Expired));
    assert_eq!(
        token::verify(&keys, "https://other.example", &issued, NOW),
        Err(TokenError::WrongAudience)
    );
    // Kept once verified, it is checked again on every use as a whole check would.
    assert_eq!(
        kept.verify(&keys, ORIGIN, &issued, NOW),
        token::verify(&keys, ORIGIN, &issued, NOW)
    );
    assert_eq!(
        kept.verify(&keys, ORIGIN, &issued, NOW),
        token::verify(&keys, ORIGIN, &issued, NOW)
    );
    assert_eq!(kept.verify(&keys, ORIGIN, &issued, later), Err(TokenError::Expired));
    let elsewhere = kept.verify(&keys, "https://other.example", &issued, NOW);
    assert_eq!(elsewhere, Err(TokenError::WrongAudience));
});
