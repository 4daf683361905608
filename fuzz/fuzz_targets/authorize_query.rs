//! `oauth::authorize::validate` on the query pairs of any input, and the `http` helpers
//! (`query_of`, `origin_of`, `path_of`, `cookie`, `bearer`) on the input as a string.
//! Checks above all that a refusal is only ever redirected to a URI the client registered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::http;
use tabrelay::oauth::authorize::{self, AuthRequest, Refusal};
use tabrelay::oauth::{clients, pkce};
use tabrelay_fuzz::{has_duplicate_key, is_slice_of, keys, ORIGIN};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    let pairs: Vec<(String, String)> = form_urlencoded::parse(data).into_owned().collect();
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let client = param("client_id").and_then(|id| clients::resolve(&keys, id).ok());
    match authorize::validate(&pairs, &keys, ORIGIN) {
        Ok(req) => {
            let client = client.expect("accepted for an unregistered client");
            assert!(!has_duplicate_key(&pairs));
            assert!(pairs.iter().all(|(_, v)| v.len() <= authorize::MAX_PARAM_BYTES));
            assert_eq!(Some(req.client_id.as_str()), param("client_id"));
            assert_eq!(req.client_name, client.name);
            assert!(client.redirect_uris.contains(&req.redirect_uri), "an unregistered redirect");
            assert_eq!(param("response_type"), Some("code"));
            assert_eq!(param("code_challenge_method"), Some("S256"));
            assert!(pkce::is_s256_challenge(&req.code_challenge));
            assert_eq!(req.state.as_deref(), param("state"));
            assert_eq!(req.scope.as_deref(), param("scope"));
            if let Some(r) = &req.resource {
                assert!(authorize::is_this_resource(r, ORIGIN));
            }
            let text = serde_json::to_string(&req).unwrap();
            assert_eq!(serde_json::from_str::<AuthRequest>(&text).ok().as_ref(), Some(&req));
        }
        Err(Refusal::Page(sentence)) => assert!(!sentence.is_empty()),
        Err(Refusal::Redirect(to)) => {
            let client = client.expect("redirected for an unregistered client");
            let registered = client
                .redirect_uris
                .iter()
                .any(|r| to.strip_prefix(r.as_str()).is_some_and(|q| q.starts_with(['?', '&'])));
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
