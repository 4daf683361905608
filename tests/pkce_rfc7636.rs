//! PKCE S256 against RFC 7636's own example, and the verifier rules around it.

use tabrelay::oauth::pkce;

fn vector() -> (String, String) {
    let text = include_str!("data/rfc7636_appendix_b.json");
    let v: serde_json::Value = serde_json::from_str(text).expect("the test vector is JSON");
    (
        v["code_verifier"].as_str().unwrap().to_owned(),
        v["code_challenge"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn the_rfc_example_verifier_gives_the_rfc_example_challenge() {
    let (verifier, challenge) = vector();
    assert_eq!(pkce::s256(&verifier), challenge);
    assert!(pkce::is_s256_challenge(&challenge));
    assert!(pkce::verify(&verifier, &challenge));
}

#[test]
fn a_wrong_short_or_plain_verifier_does_not_verify() {
    let (verifier, challenge) = vector();
    let mut wrong = verifier.clone();
    wrong.replace_range(0..1, "e");
    assert!(!pkce::verify(&wrong, &challenge));
    assert!(
        !pkce::verify(&verifier[..42], &pkce::s256(&verifier[..42])),
        "42 characters is too short"
    );
    assert!(!pkce::verify(&challenge, &challenge), "the plain method is not accepted");
    assert!(!pkce::verify(&format!("{verifier} "), &challenge));
    assert!(
        !pkce::verify(&"a".repeat(129), &pkce::s256(&"a".repeat(129))),
        "129 characters is too long"
    );
    assert!(pkce::verify(&"a".repeat(128), &pkce::s256(&"a".repeat(128))));
}
