//! Dynamic client registration on any body, `clients::resolve` on any client id and
//! `clients::check_redirect_uri` on any URI. Checks that a registration's signed id names
//! exactly the client it answered with, and that an accepted redirect URI meets every rule.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::clients::{self, Client};
use tabrelay_fuzz::{keys, Fixed, NOW};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    match clients::register(&keys, data, NOW, &mut Fixed(7)) {
        Ok(registered) => {
            let written = tabrelay_bundle::fields::Encode::to_json(&registered);
            let answer: serde_json::Value = serde_json::from_slice(&written).expect("JSON");
            let id = answer["client_id"].as_str().expect("a client id");
            let client = clients::resolve(&keys, id).expect("a registered client resolves");
            assert_eq!(clients::client_id(&keys, &client), id, "the id is deterministic");
            assert_eq!(answer["client_name"], client.name.as_str());
            assert_eq!(answer["redirect_uris"], serde_json::json!(client.redirect_uris));
            assert_eq!(answer["client_id_issued_at"], NOW / 1000);
            assert_eq!(client.issued_at, NOW / 1000);
            assert!(!client.name.is_empty() && client.name == client.name.trim());
            assert!(client.name.chars().count() <= tabrelay::limits::MAX_CLIENT_NAME_CHARS);
            assert!(!client.name.chars().any(tabrelay::oauth::clients::is_unshown));
            let n = client.redirect_uris.len();
            assert!((1..=tabrelay::limits::MAX_REDIRECT_URIS).contains(&n));
            for uri in &client.redirect_uris {
                assert_eq!(clients::check_redirect_uri(uri), Ok(()));
            }
            let text = tabrelay_bundle::fields::json_text(&client);
            assert_eq!(
                tabrelay_bundle::from_json::<Client>(text.as_bytes()).as_ref(),
                Some(&client)
            );
        }
        Err(e) => {
            assert!(["invalid_client_metadata", "invalid_redirect_uri"].contains(&e.code));
            assert_eq!(e.status, 400);
        }
    }

    let text = String::from_utf8_lossy(data);
    if let Ok(client) = clients::resolve(&keys, &text) {
        // Only this relay signs ids, so a resolved one came from a registration's answer.
        for uri in &client.redirect_uris {
            assert_eq!(clients::check_redirect_uri(uri), Ok(()));
        }
    }

    if clients::check_redirect_uri(&text).is_ok() {
        let uri: &str = &text;
        assert!(uri.len() <= tabrelay::limits::MAX_REDIRECT_URI_BYTES);
        assert!(!uri.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'\\'));
        assert!(!uri.contains('#'));
        let host = clients::host_of(uri);
        assert!(!host.is_empty());
        if let Some(rest) = uri.strip_prefix("http://") {
            let octets: Vec<&str> = host.split('.').collect();
            let v4 = octets.len() == 4
                && octets[0] == "127"
                && octets.iter().all(|o| o.parse::<u8>().is_ok());
            let loopback = host == "localhost" || host == "::1" || v4;
            assert!(loopback, "plain http to {host:?} was accepted");
            assert!(!rest.split(['/', '?']).next().unwrap_or_default().contains('@'));
        } else {
            let rest = uri.strip_prefix("https://").expect("only http and https are accepted");
            assert!(!rest.split(['/', '?']).next().unwrap_or_default().contains('@'));
        }
    }
});
