//! Client ID Metadata Documents: an https URL as `client_id`, the rules that URL meets, and
//! the check of the document fetched from it.
//!
//! A client that publishes its metadata at an https URL uses that URL as its client id; the
//! relay fetches the document (the shell does, within [`FETCH_TIMEOUT_MS`] and
//! [`MAX_DOCUMENT_BYTES`]), and the client is then known by the URL's domain, which is verified:
//! only whoever controls that domain can publish the document that names it. Not so on a
//! shared host ([`super::hosts::SHARED_HOSTS`]: `raw.githubusercontent.com`, `*.github.io`,
//! `*.pages.dev`, …), where anyone may publish: such a client is known by its name, not
//! verified ([`MetadataClient::verified_domain`]).
//!
//! The URL rules are about the name only: the core cannot resolve names. IP literals (in every
//! form a URL parser reads as one), names reserved for this machine or a local network, the
//! suffixes private networks commonly use and wildcard-DNS names, which resolve to the address
//! written in them ([`super::hosts::WILDCARD_DNS`]: `127.0.0.1.nip.io`), are refused, and the
//! fetcher also refuses single-label names (which only a local resolver answers; see
//! [`check_fetchable`]); any other name is resolved by the platform, which on Cloudflare
//! resolves public DNS from the edge and reaches no private network.
//!
//! A failed fetch reads the same from outside, whatever failed (see [`CimdError::sentence`]):
//! telling the requester why would let them probe what the relay's network reaches. The detail
//! goes to the log only ([`CimdError::detail`]).

use serde_json::Value;

use super::clients::{clean_name, redirect_uris, BadList, BadRedirect};
use super::error::OAuthError;
use super::hosts;
use crate::limits::{
    CACHE_DEFAULT_S, CACHE_MAX_S, CACHE_MIN_S, FETCH_TIMEOUT_MS, MAX_DOCUMENT_BYTES,
    MAX_REDIRECT_URIS, MAX_URL_BYTES,
};
use crate::sentences;

/// Names that mean this machine or a local network (RFC 6761, RFC 6762, RFC 8375) and the
/// suffixes private networks commonly use (RFC 6762 Appendix G), refused with every name under
/// them (separated by spaces, as [`hosts`]' lists are).
const LOCAL_NAMES: &str =
    "localhost local internal home.arpa localdomain lan home corp intranet private invalid";

/// Whether a client id names a metadata document (it is a URL) rather than being a signed id.
/// Any `scheme://` counts, so that an http one is refused with a reason instead of as unknown.
#[must_use]
pub fn is_url(client_id: &str) -> bool {
    crate::text::split_once(client_id, "://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+')
    })
}

/// A client id URL that meets the rules; the only way to ask for a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataUrl {
    url: String,
    host_end: usize,
}

/// Why a client id URL or its document is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CimdError {
    /// The URL is not https.
    NotHttps,
    /// The URL names an IP address or a local name.
    HostRefused,
    /// The URL breaks another rule (the reason says which).
    BadUrl(&'static str),
    /// The fetch failed (no answer, a TLS or DNS failure).
    Unreachable,
    /// The fetch took longer than [`FETCH_TIMEOUT_MS`].
    TooSlow,
    /// The server answered with a redirect, which is not followed.
    Redirected,
    /// The server answered with another status than 200.
    Status(u16),
    /// The document is larger than [`MAX_DOCUMENT_BYTES`].
    TooLarge,
    /// The document is not a JSON object.
    NotJson,
    /// The document's `client_id` is not the URL it was fetched from.
    Mismatch,
    /// A redirect URI is missing or breaks the rules (the reason says which).
    BadRedirect(BadRedirect),
    /// The document asks for a token endpoint authentication method other than `none`.
    NotPublic,
    /// The document holds a client secret.
    HasSecret,
    /// A field has the wrong type (the field is named).
    BadField(&'static str),
    /// Not kept, and not fetched (the sender's limit is asked first).
    NotKept,
}

impl CimdError {
    /// The sentence a person reads, naming the document's domain where it helps.
    #[must_use]
    pub fn sentence(&self, domain: &str) -> String {
        match self {
            Self::NotHttps => sentences::oauth::CIMD_NOT_HTTPS.to_owned(),
            Self::HostRefused => sentences::oauth::CIMD_HOST_REFUSED.to_owned(),
            Self::BadUrl(why) => sentences::oauth::cimd_bad_url(why),
            // Whatever failed, one sentence (the detail is logged): see the module's doc.
            Self::Unreachable
            | Self::TooSlow
            | Self::Redirected
            | Self::Status(_)
            | Self::TooLarge
            | Self::NotJson
            | Self::NotKept => sentences::oauth::cimd_unreadable(domain),
            Self::Mismatch => sentences::oauth::cimd_mismatch(domain),
            Self::BadRedirect(why) => {
                sentences::oauth::cimd_bad_redirect(domain, why.sentence().trim_end_matches('.'))
            }
            Self::NotPublic => sentences::oauth::cimd_not_public(domain),
            Self::HasSecret => sentences::oauth::cimd_has_secret(domain),
            Self::BadField(field) => sentences::oauth::cimd_bad_field(domain, field),
        }
    }

    /// What failed, for the log (never for the requester: see [`Self::sentence`]); None for a
    /// refusal the sentence already states in full.
    #[must_use]
    pub fn detail(&self) -> Option<String> {
        Some(match self {
            Self::Unreachable => "no answer (a connection, TLS or DNS failure)".to_owned(),
            Self::TooSlow => format!("no document within {FETCH_TIMEOUT_MS} ms"),
            Self::Redirected => "a redirect, not followed".to_owned(),
            Self::Status(status) => format!("HTTP {status}"),
            Self::TooLarge => format!("more than {MAX_DOCUMENT_BYTES} bytes"),
            Self::NotJson => "not a JSON object".to_owned(),
            _ => return None,
        })
    }

    /// The OAuth error a client reads (RFC 6749 §5.2: the client cannot be established).
    #[must_use]
    pub fn oauth(&self, domain: &str) -> OAuthError {
        OAuthError::invalid_client(self.sentence(domain))
    }
}

impl MetadataUrl {
    /// Checks a client id URL: https; a host that is a name, lower case, not an IP address in
    /// any form and not local; an optional port; no user name, password or fragment; a path
    /// other than `/` without `.` or `..` segments; at most [`MAX_URL_BYTES`].
    pub fn parse(url: &str) -> Result<Self, CimdError> {
        if url.len() > MAX_URL_BYTES {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_TOO_LONG));
        }
        if !url.bytes().all(|b| b.is_ascii_graphic() && b != b'\\') {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_CHARACTERS));
        }
        let rest = url.strip_prefix("https://").ok_or(CimdError::NotHttps)?;
        if url.contains('#') {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_FRAGMENT));
        }
        // No fragment: it was refused above.
        let (authority, tail) = super::clients::split_authority(rest);
        if authority.contains('@') {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_USERINFO));
        }
        if authority.starts_with('[') {
            return Err(CimdError::HostRefused);
        }
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        if let Some(p) = port {
            if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(CimdError::BadUrl(sentences::oauth::url::URL_PORT_NOT_NUMBER));
            }
            // Read as a u64 (whose parser the relay links anyway): at most five digits fit.
            if !matches!(p.parse::<u64>(), Ok(1..=65535)) {
                return Err(CimdError::BadUrl(sentences::oauth::url::URL_PORT_RANGE));
            }
        }
        check_host(host)?;
        let path = tail.split_once('?').map_or(tail, |(path, _)| path);
        if path.is_empty() || path == "/" {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_NO_PATH));
        }
        if path.split('/').any(|s| s == "." || s == "..") {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_DOT_SEGMENTS));
        }
        Ok(Self { url: url.to_owned(), host_end: "https://".len() + host.len() })
    }

    /// The URL, exactly as given.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The host: the domain the client is known by.
    #[must_use]
    pub fn domain(&self) -> &str {
        &self.url["https://".len()..self.host_end]
    }
}

/// A host name: labels of `a-z`, `0-9` and `-`; not an IPv4 address in any form a URL parser
/// reads as one (its last label numeric, decimal or `0x` hex); not a local name; not a
/// wildcard-DNS name (one that stands for an address).
fn check_host(host: &str) -> Result<(), CimdError> {
    if host.is_empty() {
        return Err(CimdError::BadUrl(sentences::oauth::url::URL_NO_HOST));
    }
    if host.len() > 253 {
        return Err(CimdError::BadUrl(sentences::oauth::url::URL_HOST_TOO_LONG));
    }
    let mut last = "";
    for label in host.split('.') {
        let allowed = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-';
        if label.is_empty()
            || label.len() > 63
            || !label.bytes().all(allowed)
            || label.starts_with('-')
            || label.ends_with('-')
        {
            return Err(CimdError::BadUrl(sentences::oauth::url::URL_HOST_NOT_DOMAIN));
        }
        last = label;
    }
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || last.strip_prefix("0x").is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return Err(CimdError::HostRefused);
    }
    if hosts::is_under_any(host, LOCAL_NAMES.split(' ')) || hosts::is_wildcard_dns(host) {
        return Err(CimdError::HostRefused);
    }
    Ok(())
}

/// Whether the fetcher may fetch this URL: its host has more than one label (a single-label
/// name, like a machine's own, is answered only by a local resolver), unless it is one of
/// `local_hosts` (`LOCAL_METADATA_HOSTS`: names an owner lets the relay fetch from for local
/// development and tests; never an IP address or a name [`MetadataUrl::parse`] refuses).
pub fn check_fetchable(url: &MetadataUrl, local_hosts: &[String]) -> Result<(), CimdError> {
    let host = url.domain();
    if host.contains('.') || crate::config::listed(local_hosts, host) {
        Ok(())
    } else {
        Err(CimdError::HostRefused)
    }
}

/// A client known by its metadata document, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataClient {
    /// The domain that published the document (it served the document; see
    /// [`Self::verified_domain`]).
    pub domain: String,
    /// The name the document gives, when it gives one (not verified).
    pub name: Option<String>,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
}

impl MetadataClient {
    /// The domain that vouches for the client: the one that published its document, unless
    /// anyone may publish there ([`hosts::is_shared`]), when nobody vouches for it.
    #[must_use]
    pub fn verified_domain(&self) -> Option<&str> {
        (!hosts::is_shared(&self.domain)).then_some(self.domain.as_str())
    }
}

/// Checks a fetched document against the URL it came from.
pub fn check_document(url: &MetadataUrl, body: &[u8]) -> Result<MetadataClient, CimdError> {
    if body.len() > MAX_DOCUMENT_BYTES {
        return Err(CimdError::TooLarge);
    }
    // Read as a JSON value field by field (a derived Deserialize costs wasm for no gain here).
    let value: Value = serde_json::from_slice(body).map_err(|_| CimdError::NotJson)?;
    let Value::Object(mut doc) = value else { return Err(CimdError::NotJson) };
    if doc.contains_key("client_secret") || doc.contains_key("client_secret_expires_at") {
        return Err(CimdError::HasSecret);
    }
    match doc.get("client_id") {
        Some(Value::String(id)) if id == url.as_str() => {}
        _ => return Err(CimdError::Mismatch),
    }
    match doc.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => {}
        Some(Value::String(m)) if m == "none" => {}
        Some(Value::String(_)) => return Err(CimdError::NotPublic),
        Some(_) => return Err(CimdError::BadField("token_endpoint_auth_method")),
    }
    let name = match doc.get("client_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(n)) => Some(clean_name(n)).filter(|n| !n.is_empty()),
        Some(_) => return Err(CimdError::BadField("client_name")),
    };
    let redirect_uris = redirect_uris(doc.remove("redirect_uris")).map_err(|bad| match bad {
        BadList::Empty => CimdError::BadRedirect(BadRedirect::None),
        BadList::NotArray | BadList::NotString => CimdError::BadField("redirect_uris"),
        BadList::TooMany => CimdError::BadRedirect(BadRedirect::TooMany(MAX_REDIRECT_URIS)),
        BadList::Bad(why) => CimdError::BadRedirect(why),
    })?;
    Ok(MetadataClient { domain: url.domain().to_owned(), name, redirect_uris })
}

/// How long to keep a checked document, in seconds, from its response's `Cache-Control`: its
/// max-age within [[`CACHE_MIN_S`], [`CACHE_MAX_S`]]; the least for `no-store` or `no-cache`
/// (the relay does not fetch one document more often); [`CACHE_DEFAULT_S`] without either.
#[must_use]
pub fn cache_seconds(cache_control: Option<&str>) -> u64 {
    let Some(cc) = cache_control else { return CACHE_DEFAULT_S };
    let mut max_age = None;
    for directive in cc.split(',') {
        let d = directive.trim().to_ascii_lowercase();
        if d == "no-store" || d == "no-cache" {
            return CACHE_MIN_S;
        }
        if let Some(v) = d.strip_prefix("max-age=") {
            max_age =
                Some(v.trim_start_matches('"').trim_end_matches('"').parse::<u64>().unwrap_or(0));
        }
    }
    max_age.map_or(CACHE_DEFAULT_S, |s| s.clamp(CACHE_MIN_S, CACHE_MAX_S))
}

/// Where a URL's checked client is cached: under the relay's own `origin` (the Cache API keeps
/// a zone's entries; a key on another host costs a lookup), named by the URL's hash, so no
/// document can collide with another or with a route.
#[must_use]
pub fn cache_key(origin: &str, url: &MetadataUrl) -> String {
    format!("{origin}/client-metadata/{}", crate::crypto::sha256_hex(url.as_str().as_bytes()))
}

/// The cache's entry for a checked client: its JSON, kept `seconds` (as [`check_response`]
/// said); None should it not write (then it is fetched again next time).
#[must_use]
pub fn cache_entry(client: &MetadataClient, seconds: u64) -> Option<crate::http::Answer> {
    let body = tabrelay_bundle::fields::json_text(client).into_bytes();
    let kept = format!("max-age={seconds}");
    Some(crate::http::Answer::json_text(200, body).with("cache-control", &kept))
}

/// A document's response as it starts, from its status and headers: its body to read (capped
/// at [`MAX_DOCUMENT_BYTES`]) and how long to keep the client it names, in seconds; or why it
/// is refused before any of its body is read (a redirect is not followed).
///
/// # Errors
/// [`CimdError::Redirected`], [`CimdError::Status`], or [`CimdError::TooLarge`] when its
/// `Content-Length` passes the cap.
pub fn check_response(
    status: u16,
    content_length: Option<&str>,
    cache_control: Option<&str>,
) -> Result<(crate::http::CappedBody, u64), CimdError> {
    if (300..400).contains(&status) {
        return Err(CimdError::Redirected);
    }
    if status != 200 {
        return Err(CimdError::Status(status));
    }
    let body = crate::http::CappedBody::start(MAX_DOCUMENT_BYTES, content_length)
        .map_err(|_| CimdError::TooLarge)?;
    Ok((body, cache_seconds(cache_control)))
}

tabrelay_bundle::codec!(MetadataClient, "a metadata client", { domain, name, redirect_uris });

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = "https://claude.ai/oauth/mcp-oauth-client-metadata";

    fn url(s: &str) -> MetadataUrl {
        MetadataUrl::parse(s).unwrap()
    }

    fn doc(client_id: &str, extra: &str) -> Vec<u8> {
        format!(r#"{{"client_id":"{client_id}","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]{extra}}}"#).into_bytes()
    }

    #[test]
    fn a_response_is_refused_by_its_status_and_length_before_its_body_is_read() {
        assert_eq!(check_response(301, None, None).err(), Some(CimdError::Redirected));
        assert_eq!(check_response(307, None, None).err(), Some(CimdError::Redirected));
        assert_eq!(check_response(404, None, None).err(), Some(CimdError::Status(404)));
        let over = (MAX_DOCUMENT_BYTES + 1).to_string();
        assert_eq!(check_response(200, Some(&over), None).err(), Some(CimdError::TooLarge));
        let (mut body, seconds) = check_response(200, Some("12"), Some("max-age=0")).unwrap();
        assert_eq!(seconds, CACHE_MIN_S);
        // A body without a length is bounded as it arrives.
        let (mut unsaid, _) = check_response(200, None, None).unwrap();
        assert!(unsaid.take(&vec![b' '; MAX_DOCUMENT_BYTES]).is_ok());
        assert!(unsaid.take(b" ").is_err());
        assert!(body.take(b"{}").is_ok());
    }

    #[test]
    fn a_clients_cache_key_is_the_relays_own_and_its_urls_hash() {
        let key = cache_key("https://relay.example", &url(CLAUDE));
        let hash = crate::crypto::sha256_hex(CLAUDE.as_bytes());
        assert_eq!(key, format!("https://relay.example/client-metadata/{hash}"));
        assert_ne!(key, cache_key("https://relay.example", &url("https://claude.ai/other")));
    }

    #[test]
    fn a_checked_client_is_cached_as_json_for_the_time_its_document_allowed() {
        let client = MetadataClient {
            domain: "claude.ai".into(),
            name: Some("Claude".into()),
            redirect_uris: vec!["https://claude.ai/cb".into()],
        };
        let entry = cache_entry(&client, 600).unwrap();
        // The Cache API keeps no response marked no-store: the entry's own time replaces it.
        let kept = vec![
            ("content-type", "application/json".to_owned()),
            ("cache-control", "max-age=600".to_owned()),
        ];
        assert_eq!((entry.status, entry.headers), (200, kept));
        let read = tabrelay_bundle::from_json::<MetadataClient>(&entry.body.unwrap()).unwrap();
        assert_eq!(read, client);
    }

    #[test]
    fn a_client_id_url_is_told_from_a_signed_id() {
        assert!(is_url(CLAUDE));
        assert!(is_url("http://a.example/x"), "an http one is refused later, with a reason");
        assert!(!is_url("trc1.eyJuIjoiQyJ9.tag"));
        assert!(!is_url("://x"));
        assert!(!is_url("claude"));
    }

    #[test]
    fn claudes_client_id_is_accepted_and_known_by_its_domain() {
        let u = url(CLAUDE);
        assert_eq!(u.domain(), "claude.ai");
        assert_eq!(u.as_str(), CLAUDE);
        assert_eq!(url("https://vm:8443/client.json").domain(), "vm");
        assert_eq!(url("https://a.example/c?v=2").domain(), "a.example");
    }

    #[test]
    fn only_https_is_fetched() {
        for bad in ["http://claude.ai/oauth/x", "HTTPS://claude.ai/x", "ftp://a.example/x"] {
            assert_eq!(MetadataUrl::parse(bad), Err(CimdError::NotHttps), "{bad}");
        }
    }

    #[test]
    fn ip_literals_in_every_form_are_refused() {
        for bad in [
            "https://127.0.0.1/x",
            "https://10.0.0.1:8443/x",
            "https://169.254.169.254/latest",
            "https://[::1]/x",
            "https://[fe80::1]:443/x",
            "https://2130706433/x",
            "https://0x7f000001/x",
            "https://0x7f.1/x",
            "https://127.1/x",
            "https://a.b.0/x",
        ] {
            assert_eq!(MetadataUrl::parse(bad), Err(CimdError::HostRefused), "{bad}");
        }
    }

    #[test]
    fn local_names_are_refused() {
        for bad in [
            "https://localhost/x",
            "https://localhost:8443/x",
            "https://app.localhost/x",
            "https://printer.local/x",
            "https://metadata.google.internal/x",
            "https://router.home.arpa/x",
            "https://box.localdomain/x",
            "https://nas.lan/x",
            "https://printer.home/x",
            "https://wiki.corp/x",
            "https://portal.intranet/x",
            "https://db.private/x",
            "https://a.b.corp/x",
            "https://x.invalid/x",
        ] {
            assert_eq!(MetadataUrl::parse(bad), Err(CimdError::HostRefused), "{bad}");
        }
        assert!(MetadataUrl::parse("https://notlocalhost.example/x").is_ok());
        assert!(MetadataUrl::parse("https://local.example/x").is_ok());
        assert!(MetadataUrl::parse("https://lan.example/x").is_ok());
        assert!(MetadataUrl::parse("https://corp.example.com/x").is_ok());
        assert!(MetadataUrl::parse("https://myhome/x").is_ok(), "the fetcher refuses it");
    }

    #[test]
    fn wildcard_dns_names_are_never_fetched() {
        for bad in [
            "https://127.0.0.1.nip.io/x",
            "https://10-0-0-1.sslip.io/client.json",
            "https://169.254.169.254.xip.io/latest",
            "https://app.localtest.me/x",
            "https://lvh.me/x",
            "https://nip.io/x",
        ] {
            assert_eq!(MetadataUrl::parse(bad), Err(CimdError::HostRefused), "{bad}");
        }
        assert!(MetadataUrl::parse("https://snip.io/x").is_ok());
    }

    #[test]
    fn a_document_on_a_shared_host_is_read_but_never_verified() {
        for shared in [
            "https://raw.githubusercontent.com/someone/app/main/client.json",
            "https://gist.githubusercontent.com/someone/abc/raw/client.json",
            "https://claude-ai.github.io/client.json",
            "https://claude.pages.dev/client.json",
            "https://claude.someone.workers.dev/client.json",
            "https://claude.netlify.app/client.json",
            "https://abc.ngrok-free.app/client.json",
        ] {
            let u = url(shared);
            assert_eq!(check_fetchable(&u, &[]), Ok(()), "{shared}: read like any other");
            let c = check_document(&u, &doc(shared, r#","client_name":"Claude""#)).unwrap();
            assert_eq!(c.verified_domain(), None, "{shared}");
        }
        let c = check_document(&url(CLAUDE), &doc(CLAUDE, "")).unwrap();
        assert_eq!(c.verified_domain(), Some("claude.ai"));
    }

    /// A bucket on Google's storage is anyone's, though its name is under a domain of
    /// Google's: its document verifies nobody, and a name it gives like Gemini's is warned
    /// about as any unverified name is (S3's and Azure's storage alike).
    #[test]
    fn a_document_in_a_clouds_storage_is_not_verified_and_cannot_be_gemini() {
        use super::super::lookalike::{judge, NameWarning};
        for (stored, name, like) in [
            ("https://storage.googleapis.com/bucket/client.json", "Gemini", "Gemini"),
            (
                "https://www.googleapis.com/download/storage/v1/b/x/o/c?alt=media",
                "Gemini",
                "Gemini",
            ),
            ("https://firebasestorage.googleapis.com/v0/b/x/o/c.json", "Gemini CLI", "Gemini"),
            ("https://bucket.s3.amazonaws.com/client.json", "Claude", "Claude"),
            ("https://s3.us-east-1.amazonaws.com/bucket/client.json", "Claude", "Claude"),
            ("https://acct.blob.core.windows.net/c/client.json", "GitHub Copilot", "Copilot"),
            ("https://acct.z6.web.core.windows.net/client.json", "Copilot", "Copilot"),
        ] {
            let u = url(stored);
            let body = doc(stored, &format!(r#","client_name":"{name}""#));
            let c = check_document(&u, &body).unwrap();
            assert_eq!(c.verified_domain(), None, "{stored}");
            let warned = judge(c.name.as_deref().unwrap(), c.verified_domain());
            assert_eq!(warned, Some(NameWarning::LooksLike(like)), "{stored}");
        }
    }

    #[test]
    fn single_label_names_are_not_fetched_unless_the_owner_names_them() {
        let none: &[String] = &[];
        for bad in ["https://vm/x", "https://vm:8443/x", "https://wpad/x", "https://ai/x"] {
            assert_eq!(check_fetchable(&url(bad), none), Err(CimdError::HostRefused), "{bad}");
        }
        assert_eq!(check_fetchable(&url(CLAUDE), none), Ok(()));
        assert_eq!(check_fetchable(&url("https://a.b.example/x"), none), Ok(()));
        let named = ["vm".to_owned()];
        assert_eq!(check_fetchable(&url("https://vm:8443/x"), &named), Ok(()));
        assert_eq!(check_fetchable(&url("https://vm2/x"), &named), Err(CimdError::HostRefused));
    }

    #[test]
    fn userinfo_fragments_root_paths_and_odd_hosts_are_refused() {
        for bad in [
            "https://user@claude.ai/x",
            "https://user:pw@claude.ai/x",
            "https://claude.ai/x#frag",
            "https://claude.ai",
            "https://claude.ai/",
            "https://claude.ai?x=1",
            "https://claude.ai/a/../b",
            "https://claude.ai/./b",
            "https://Claude.ai/x",
            "https://claude..ai/x",
            "https://claude.ai./x",
            "https://-claude.ai/x",
            "https://clau_de.ai/x",
            "https://claude.ai:/x",
            "https://claude.ai:0/x",
            "https://claude.ai:99999/x",
            "https://claude.ai:8a/x",
            "https:///x",
            "https://claude.ai/a b",
            "https://claude.ai/a\\b",
            "https://claudé.ai/x",
        ] {
            assert!(
                matches!(MetadataUrl::parse(bad), Err(CimdError::BadUrl(_))),
                "{bad}: {:?}",
                MetadataUrl::parse(bad)
            );
        }
        let long = format!("https://a.example/{}", "x".repeat(MAX_URL_BYTES));
        assert!(matches!(MetadataUrl::parse(&long), Err(CimdError::BadUrl(_))));
    }

    #[test]
    fn claudes_document_is_accepted() {
        let body = format!(
            r#"{{"client_id":"{CLAUDE}","client_name":"Claude","client_uri":"https://claude.ai",
            "redirect_uris":["https://claude.ai/api/mcp/auth_callback","https://claude.com/api/mcp/auth_callback"],
            "grant_types":["authorization_code","refresh_token"],"response_types":["code"],
            "token_endpoint_auth_method":"none"}}"#
        );
        let c = check_document(&url(CLAUDE), body.as_bytes()).unwrap();
        assert_eq!(c.domain, "claude.ai");
        assert_eq!(c.name.as_deref(), Some("Claude"));
        assert_eq!(c.redirect_uris.len(), 2);
    }

    #[test]
    fn the_document_must_name_exactly_its_own_url() {
        let u = url(CLAUDE);
        for other in [
            "https://claude.ai/oauth/mcp-oauth-client-metadata/",
            "https://evil.example/oauth/mcp-oauth-client-metadata",
            "https://CLAUDE.ai/oauth/mcp-oauth-client-metadata",
        ] {
            assert_eq!(check_document(&u, &doc(other, "")), Err(CimdError::Mismatch), "{other}");
        }
        let no_id = br#"{"redirect_uris":["https://claude.ai/cb"]}"#;
        assert_eq!(check_document(&u, no_id), Err(CimdError::Mismatch));
        let numeric = br#"{"client_id":5,"redirect_uris":["https://claude.ai/cb"]}"#;
        assert_eq!(check_document(&u, numeric), Err(CimdError::Mismatch));
    }

    #[test]
    fn a_document_over_5_kb_or_not_a_json_object_is_refused() {
        let u = url(CLAUDE);
        let pad =
            format!(r#","client_uri":"https://claude.ai/{}""#, "x".repeat(MAX_DOCUMENT_BYTES));
        assert_eq!(check_document(&u, &doc(CLAUDE, &pad)), Err(CimdError::TooLarge));
        for bad in [&b"[]"[..], b"\"x\"", b"{", b"", b"null", b"\xff"] {
            assert_eq!(check_document(&u, bad), Err(CimdError::NotJson));
        }
    }

    #[test]
    fn redirect_uris_follow_the_registration_rules() {
        let u = url(CLAUDE);
        let with = |uris: &str| {
            check_document(
                &u,
                format!(r#"{{"client_id":"{CLAUDE}","redirect_uris":{uris}}}"#).as_bytes(),
            )
        };
        assert!(with(r#"["http://127.0.0.1:33418/cb"]"#).is_ok());
        assert!(matches!(with("[]"), Err(CimdError::BadRedirect(_))));
        assert!(matches!(with("null"), Err(CimdError::BadRedirect(_))));
        assert!(matches!(with(r#"["http://evil.example/cb"]"#), Err(CimdError::BadRedirect(_))));
        assert!(matches!(with(r#"["javascript:alert(1)"]"#), Err(CimdError::BadRedirect(_))));
        assert!(matches!(with(r#"["https://a.example/cb#x"]"#), Err(CimdError::BadRedirect(_))));
        assert!(matches!(
            with(
                r#"["https://a.example/1","https://a.example/2","https://a.example/3","https://a.example/4","https://a.example/5","https://a.example/6"]"#
            ),
            Err(CimdError::BadRedirect(_))
        ));
        assert_eq!(with(r#""https://a.example/cb""#), Err(CimdError::BadField("redirect_uris")));
        assert_eq!(with("[5]"), Err(CimdError::BadField("redirect_uris")));
        let missing = format!(r#"{{"client_id":"{CLAUDE}"}}"#);
        assert!(matches!(check_document(&u, missing.as_bytes()), Err(CimdError::BadRedirect(_))));
    }

    #[test]
    fn only_public_clients_without_secrets_are_accepted() {
        let u = url(CLAUDE);
        for method in ["client_secret_basic", "client_secret_post", "private_key_jwt"] {
            let extra = format!(r#","token_endpoint_auth_method":"{method}""#);
            assert_eq!(check_document(&u, &doc(CLAUDE, &extra)), Err(CimdError::NotPublic));
        }
        assert!(check_document(&u, &doc(CLAUDE, r#","token_endpoint_auth_method":"none""#)).is_ok());
        for secret in [r#","client_secret":"s3cret""#, r#","client_secret_expires_at":0"#] {
            assert_eq!(check_document(&u, &doc(CLAUDE, secret)), Err(CimdError::HasSecret));
        }
    }

    #[test]
    fn the_name_is_optional_bounded_and_a_string() {
        let u = url(CLAUDE);
        assert_eq!(check_document(&u, &doc(CLAUDE, "")).unwrap().name, None);
        assert_eq!(check_document(&u, &doc(CLAUDE, r#","client_name":"  ""#)).unwrap().name, None);
        let long = format!(r#","client_name":"{}""#, "n".repeat(300));
        let name = check_document(&u, &doc(CLAUDE, &long)).unwrap().name.unwrap();
        assert_eq!(name.chars().count(), crate::limits::MAX_CLIENT_NAME_CHARS);
        let control = check_document(&u, &doc(CLAUDE, r#","client_name":"A\u0007B\nC""#));
        assert_eq!(control.unwrap().name.as_deref(), Some("ABC"));
        assert_eq!(
            check_document(&u, &doc(CLAUDE, r#","client_name":["x"]"#)),
            Err(CimdError::BadField("client_name"))
        );
    }

    #[test]
    fn the_cache_time_is_the_documents_max_age_within_bounds() {
        assert_eq!(cache_seconds(None), CACHE_DEFAULT_S);
        assert_eq!(cache_seconds(Some("public, max-age=7200")), 7200);
        assert_eq!(cache_seconds(Some("max-age=10")), CACHE_MIN_S);
        assert_eq!(cache_seconds(Some("max-age=31536000")), CACHE_MAX_S);
        assert_eq!(cache_seconds(Some("max-age=nonsense")), CACHE_MIN_S);
        assert_eq!(cache_seconds(Some("no-store")), CACHE_MIN_S);
        assert_eq!(cache_seconds(Some("Max-Age=\"600\"")), 600);
        assert_eq!(cache_seconds(Some("public")), CACHE_DEFAULT_S);
    }

    #[test]
    fn every_refusal_is_an_invalid_client_with_a_sentence_naming_the_domain() {
        let e = CimdError::Status(404).oauth("claude.ai");
        assert_eq!((e.code, e.status), ("invalid_client", 401));
        assert!(e.description.contains("claude.ai"));
        assert!(CimdError::Mismatch.sentence("a.example").contains("a.example"));
    }

    #[test]
    fn every_failed_fetch_reads_the_same_and_only_the_log_says_why() {
        let failed = [
            CimdError::Unreachable,
            CimdError::TooSlow,
            CimdError::Redirected,
            CimdError::Status(404),
            CimdError::Status(500),
            CimdError::TooLarge,
            CimdError::NotJson,
        ];
        let one = CimdError::Unreachable.sentence("a.example");
        assert!(one.contains("could not read the client's metadata document"), "{one}");
        let mut details = Vec::new();
        for e in &failed {
            assert_eq!(e.sentence("a.example"), one, "{e:?}");
            let detail = e.detail().expect("a detail for the log");
            assert!(!details.contains(&detail), "{detail}");
            details.push(detail);
        }
        assert!(CimdError::Status(404).detail().unwrap().contains("404"));
        // Refusals about the document's content, or the URL, say what is wrong, as before.
        for e in [
            CimdError::Mismatch,
            CimdError::BadRedirect(BadRedirect::None),
            CimdError::NotPublic,
            CimdError::HasSecret,
            CimdError::BadField("client_name"),
            CimdError::HostRefused,
            CimdError::NotHttps,
        ] {
            assert_ne!(e.sentence("a.example"), one, "{e:?}");
            assert_eq!(e.detail(), None, "{e:?}");
        }
    }
}
