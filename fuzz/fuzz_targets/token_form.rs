//! `oauth::exchange::read` on any token request body. Checks that only a well-formed
//! authorization_code request from a client this relay signed is read, that what it asks
//! the code's Durable Object is what the form said, and that the command survives the JSON
//! trip to the Durable Object; that a refresh is read only for a token whose tag verifies; and
//! that `invalid_client` alone is a 401. A client is one the relay signed or a client metadata
//! document's URL (CIMD), the two kinds of client id the relay accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::connect::{Command, ConnectCode, Redemption, CODE_ALPHABET, CODE_LEN};
use tabrelay::oauth::exchange::TokenRequest;
use tabrelay::keys::Keys;
use tabrelay::oauth::{cimd, clients, exchange};
use tabrelay_fuzz::{has_duplicate_key, keys, Fixed, ORIGIN};

/// A client id the relay reads: one it signed, or a metadata document's URL it would fetch.
fn known(keys: &Keys, client_id: &str) -> bool {
    clients::resolve(keys, client_id).is_ok()
        || (cimd::is_url(client_id) && cimd::MetadataUrl::parse(client_id).is_ok())
}

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    // Empty values count as omitted (RFC 6749 §3.2), as the relay reads them.
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(data).into_owned().filter(|(_, v)| !v.is_empty()).collect();
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    match exchange::read(data, &keys, ORIGIN, &mut Fixed(3)) {
        Ok(TokenRequest::Refresh { pairing, request }) => {
            assert_eq!(param("grant_type").as_deref(), Some("refresh_token"));
            assert!(known(&keys, &request.client_id), "an unknown client was read");
            assert_eq!(param("client_id"), Some(request.client_id));
            let token = param("refresh_token").expect("a refresh token was sent");
            assert_eq!(
                tabrelay::oauth::refresh::parse_refresh_token(&keys, &token),
                Some((pairing.as_str(), request.grant.as_str(), request.secret.as_str())),
                "a refresh token whose tag does not verify was read"
            );
        }
        Ok(TokenRequest::Code(code, redemption)) => {
            let command = redemption.command();
            assert!(data.len() <= tabrelay::limits::MAX_FORM_BYTES);
            assert!(!has_duplicate_key(&pairs), "a parameter sent twice was read");
            assert_eq!(param("grant_type").as_deref(), Some("authorization_code"));
            assert_eq!(code.as_str().len(), CODE_LEN);
            assert!(code.as_str().bytes().all(|b| CODE_ALPHABET.contains(&b)));
            assert_eq!(ConnectCode::parse(code.as_str()).as_ref(), Some(&code));
            let text = tabrelay_bundle::fields::Encode::to_json(&command);
            assert_eq!(tabrelay_bundle::from_json::<Command>(&text).as_ref(), Some(&command));
            let Command::Redeem(Redemption {
                secret,
                client_id,
                redirect_uri,
                code_verifier,
                resource,
                origin,
                grant,
            }) = command
            else {
                panic!("a token request read as {command:?}")
            };
            assert_eq!(origin, ORIGIN);
            assert!(!grant.is_empty(), "a redemption names the grant it will make");
            assert!(known(&keys, &client_id), "an unknown client was read");
            assert_eq!(param("client_id"), Some(client_id));
            assert_eq!(param("code"), Some(format!("{}.{secret}", code.as_str())));
            assert_eq!(param("redirect_uri"), redirect_uri);
            assert_eq!(param("code_verifier"), code_verifier);
            assert_eq!(param("resource"), resource);
        }
        Err(e) => {
            assert!(
                [
                    "invalid_request",
                    "unsupported_grant_type",
                    "invalid_client",
                    "invalid_grant",
                    "invalid_target"
                ]
                .contains(&e.code),
                "code {}",
                e.code
            );
            assert_eq!(e.status, if e.code == "invalid_client" { 401 } else { 400 });
            assert!(!e.description.is_empty());
            let body: serde_json::Value = serde_json::from_slice(&e.body()).expect("JSON");
            assert_eq!(body["error"], e.code);
        }
    }
});
