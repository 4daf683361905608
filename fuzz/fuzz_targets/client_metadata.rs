//! Client ID Metadata Documents: `MetadataUrl::parse` on the first line of the input,
//! `check_document` on the rest, `cache_seconds` on the whole. Checks that an accepted URL meets
//! every rule, that an accepted document names exactly that URL and only acceptable redirect
//! URIs, that a shared host is never verified and a wildcard-DNS name never accepted, that
//! the document's name is judged without a panic and folds to lower-case ASCII letters, and
//! that a cache time stays within its bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::cimd::{self, MetadataUrl};
use tabrelay::oauth::{clients, hosts, lookalike};

/// Any well-formed URL: the document check must still run when the first line is not one.
const FALLBACK: &str = "https://client.example/metadata.json";

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|b| *b == b'\n').unwrap_or(data.len());
    let (first, body) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let first = String::from_utf8_lossy(first);

    let parsed = MetadataUrl::parse(&first);
    if let Ok(url) = &parsed {
        let u = url.as_str();
        assert_eq!(u, first.as_ref());
        assert!(cimd::is_url(u));
        assert!(u.len() <= tabrelay::limits::MAX_URL_BYTES);
        assert!(u.bytes().all(|b| b.is_ascii_graphic() && b != b'\\'));
        assert!(!u.contains('#'));
        let rest = u.strip_prefix("https://").expect("https only");
        let authority = rest.split(['/', '?']).next().unwrap_or_default();
        assert!(!authority.contains('@') && !authority.starts_with('['));
        let domain = url.domain();
        assert!(authority == domain || authority.starts_with(&format!("{domain}:")));
        assert!(!domain.is_empty());
        let last = domain.rsplit('.').next().unwrap_or_default();
        assert!(!last.bytes().all(|b| b.is_ascii_digit()), "an IPv4 literal: {domain}");
        let hex = last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!hex, "a hex IPv4 literal: {domain}");
        assert!(domain != "localhost" && !domain.ends_with(".localhost"));
        assert!(!hosts::is_wildcard_dns(domain), "a wildcard-DNS name: {domain}");
        let path = rest[authority.len()..].split('?').next().unwrap_or_default();
        assert!(path.starts_with('/') && path != "/");
    }

    let url = parsed.unwrap_or_else(|_| MetadataUrl::parse(FALLBACK).expect("the fallback"));
    if let Ok(client) = cimd::check_document(&url, body) {
        assert!(body.len() <= tabrelay::limits::MAX_DOCUMENT_BYTES);
        let doc: serde_json::Value = serde_json::from_slice(body).expect("a JSON document");
        assert_eq!(doc["client_id"].as_str(), Some(url.as_str()));
        assert!(doc.get("client_secret").is_none());
        assert!(
            matches!(doc.get("token_endpoint_auth_method"), None | Some(serde_json::Value::Null))
                || doc["token_endpoint_auth_method"] == "none"
        );
        assert_eq!(client.domain, url.domain());
        assert_eq!(client.verified_domain().is_none(), hosts::is_shared(&client.domain));
        let n = client.redirect_uris.len();
        assert!((1..=tabrelay::limits::MAX_REDIRECT_URIS).contains(&n));
        for uri in &client.redirect_uris {
            assert_eq!(clients::check_redirect_uri(uri), Ok(()));
        }
        if let Some(name) = &client.name {
            assert!(
                !name.is_empty() && name.chars().count() <= tabrelay::limits::MAX_CLIENT_NAME_CHARS
            );
            assert!(!name.chars().any(tabrelay::oauth::clients::is_unshown));
            let folded = lookalike::fold(name);
            assert!(folded.bytes().all(|b| b.is_ascii_lowercase()), "{folded}");
            let warning = lookalike::judge(name, client.verified_domain());
            if let Some(w) = warning {
                assert!(tabrelay_bundle::protocol::consent::warning::sentence(w.kind()).is_some());
            }
        }
    }

    let seconds = cimd::cache_seconds(Some(&String::from_utf8_lossy(data)));
    assert!((tabrelay::limits::CACHE_MIN_S..=tabrelay::limits::CACHE_MAX_S).contains(&seconds));
});
