//! `oauth::authorize::client_named` then `validate` on the query pairs of any input (a
//! metadata document client standing for a fixed document), and the `http` helpers
//! (`query_of`, `origin_of`, `path_of`, `cookie`, `bearer`) on the input as a string.
//! Checks above all that a refusal is only ever redirected to a URI the client registered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::crypto::sha256_hex;
use tabrelay::http;
use tabrelay::oauth::authorize::{self, Asking, AuthRequest, Named, Refusal};
use tabrelay::oauth::cimd::MetadataClient;
use tabrelay::oauth::pkce;
use tabrelay_fuzz::{has_duplicate_key, is_slice_of, keys, ORIGIN};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    let pairs: Vec<(String, String)> = form_urlencoded::parse(data).into_owned().collect();
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let client: Asking = match authorize::client_named(&pairs, &keys) {
        Ok(Named::Registered(c)) => c.into(),
        Ok(Named::Document(url)) => {
            assert_eq!(Some(url.as_str()), param("client_id"));
            // What a fetched document would say; the fetch itself is the shell's.
            let uris =
                vec!["https://claude.ai/cb".to_owned(), "http://127.0.0.1:9/callback".to_owned()];
            let name = (sha256_hex(data).as_bytes()[0] % 2 == 0).then(|| "Claude".to_owned());
            MetadataClient { domain: url.domain().to_owned(), name, redirect_uris: uris }.into()
        }
        Err(e) => {
            assert!(!e.description.is_empty());
            assert!(["invalid_request", "invalid_client"].contains(&e.code));
            return;
        }
    };
    match authorize::validate(&pairs, client.clone(), ORIGIN) {
        Ok(req) => {
            assert!(!has_duplicate_key(&pairs));
            assert!(pairs.iter().all(|(_, v)| v.len() <= tabrelay::limits::MAX_PARAM_BYTES));
            assert_eq!(Some(req.client_id.as_str()), param("client_id"));
            assert_eq!(req.client_name, client.name);
            assert_eq!(req.verified_domain, client.verified_domain);
            let registered =
                client.redirect_uris.iter().any(|r| same_or_port(r, &req.redirect_uri));
            assert!(registered, "an unregistered redirect {:?}", req.redirect_uri);
            assert_eq!(param("response_type"), Some("code"));
            assert_eq!(param("code_challenge_method"), Some("S256"));
            assert!(pkce::is_s256_challenge(&req.code_challenge));
            assert_eq!(req.state.as_deref(), param("state"));
            assert_eq!(req.scope.as_deref(), param("scope"));
            if let Some(r) = &req.resource {
                assert!(authorize::is_this_resource(r, ORIGIN));
            }
            let text = tabrelay_bundle::fields::json_text(&req);
            assert_eq!(
                tabrelay_bundle::from_json::<AuthRequest>(text.as_bytes()).as_ref(),
                Some(&req)
            );
        }
        Err(Refusal::Page(e)) => assert!(!e.description.is_empty()),
        Err(Refusal::Redirect(to)) => {
            // The URI before the query the relay appended (its first parameter is `error`).
            let base = [to.rfind("?error="), to.rfind("&error=")].into_iter().flatten().max();
            let base = &to[..base.expect("an error parameter")];
            let registered = client.redirect_uris.iter().any(|r| same_or_port(r, base));
            assert!(registered, "a refusal went to {to:?}, not a registered redirect URI");
            assert!(to.contains("error=") && to.contains("&iss="));
        }
    }

    let text = String::from_utf8_lossy(data);
    let url: &str = &text;
    let origin = http::origin_of(url);
    assert!(url.starts_with(origin));
    let path = http::path_of(url);
    assert!(!path.contains(['?', '#']));
    assert!(path == "/" || url[origin.len()..].starts_with(path));
    let query = http::query_of(url);
    if !url.contains('?') {
        assert!(query.is_empty());
    }
    for name in ["tabrelay_connect_ABCDE12345", "a", ""] {
        if let Some(v) = http::cookie(Some(url), name) {
            assert!(is_slice_of(v, url) && !v.contains(';'));
        }
    }
    if let Some(t) = http::bearer(Some(url)) {
        assert!(is_slice_of(t, url) && !t.is_empty() && t == t.trim());
    }
});

/// Whether `asked` is `registered`, or `registered` with another port on a loopback http host
/// (RFC 8252 §7.3): written apart from the relay's own `redirect_matches`, as a cross-check.
fn same_or_port(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let split = |uri: &str| -> Option<(String, String)> {
        let rest = uri.strip_prefix("http://")?;
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (host, port): (String, &str) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (h, p) = v6.split_once(']')?;
                (format!("[{h}]"), p)
            }
            None => {
                let (h, p) = authority.split_at(authority.find(':').unwrap_or(authority.len()));
                (h.to_owned(), p)
            }
        };
        let digits =
            |p: &str| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit());
        let port_ok = port.is_empty() || port.strip_prefix(':').is_some_and(digits);
        let loopback = host == "localhost" || host == "[::1]" || host.starts_with("127.");
        (port_ok && loopback).then(|| (host, tail.to_owned()))
    };
    matches!((split(registered), split(asked)), (Some(r), Some(a)) if r == a)
}
