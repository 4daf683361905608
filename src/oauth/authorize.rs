//! The authorization request: every check made before the waiting page is shown, and where
//! each refusal goes (the page, when the redirect URI is not verified; else the client).

use tabrelay_bundle::fields::Fields;

use super::cimd::{self, MetadataClient, MetadataUrl};
use super::clients::{self, Client};
use super::error::OAuthError;
use super::pkce;
use crate::keys::{Keys, Purpose};
use crate::limits::{MAX_PARAM_BYTES, SEAL_TTL_MS};
use crate::sentences;

/// A checked authorization request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRequest {
    /// The client's id.
    pub client_id: String,
    /// The client's name (as registered or as its metadata document says; not verified).
    pub client_name: String,
    /// The domain that published the client's metadata document (verified by fetching it);
    /// None for a registered client.
    pub verified_domain: Option<String>,
    /// The redirect URI, one of the client's.
    pub redirect_uri: String,
    /// The client's state, returned as sent.
    pub state: Option<String>,
    /// The S256 PKCE challenge.
    pub code_challenge: String,
    /// The resource asked for (this origin), when sent.
    pub resource: Option<String>,
    /// The scope asked for, when sent.
    pub scope: Option<String>,
}

/// A refused authorization request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Shown on the page (the error and its sentence): the redirect URI could not be
    /// verified, so nothing is redirected.
    Page(OAuthError),
    /// Sent to the client's verified redirect URI.
    Redirect(String),
}

/// Who a request names as its client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// A registered client: its signed id verified.
    Registered(Client),
    /// A client id metadata document: the shell fetches and checks it, then calls [`validate`].
    Document(MetadataUrl),
}

/// The client asking, as the rest of the request is checked against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asking {
    /// Its name.
    pub name: String,
    /// The verified domain of a metadata document client.
    pub verified_domain: Option<String>,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
}

impl From<Client> for Asking {
    fn from(c: Client) -> Self {
        Self { name: c.name, verified_domain: None, redirect_uris: c.redirect_uris }
    }
}

impl From<MetadataClient> for Asking {
    fn from(c: MetadataClient) -> Self {
        let verified_domain = c.verified_domain().map(str::to_owned);
        let name = c.name.unwrap_or(c.domain);
        Self { name, verified_domain, redirect_uris: c.redirect_uris }
    }
}

/// Whether `resource` names this origin (with or without the trailing slash).
#[must_use]
pub fn is_this_resource(resource: &str, origin: &str) -> bool {
    resource == origin || resource.strip_suffix('/') == Some(origin)
}

/// The first check of an authorization request: its parameters are each sent once and
/// bounded, and it names a client that is registered or a metadata document to fetch.
/// Every refusal here is shown on the page: no redirect URI is verified yet.
pub fn client_named(pairs: &[(String, String)], keys: &Keys) -> Result<Named, OAuthError> {
    check_pairs(pairs)?;
    let client_id = param(pairs, "client_id").ok_or_else(no_client)?;
    if cimd::is_url(client_id) {
        return MetadataUrl::parse(client_id).map(Named::Document).map_err(|e| e.oauth(""));
    }
    clients::resolve(keys, client_id)
        .map(Named::Registered)
        .map_err(|_| OAuthError::invalid_client(sentences::oauth::CLIENT_NOT_REGISTERED))
}

fn no_client() -> OAuthError {
    OAuthError::invalid_request(sentences::oauth::NO_CLIENT)
}

fn check_pairs(pairs: &[(String, String)]) -> Result<(), OAuthError> {
    let page = OAuthError::invalid_request;
    for (i, (k, v)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(seen, _)| seen == k) {
            return Err(page(sentences::oauth::PARAM_TWICE));
        }
        if v.len() > MAX_PARAM_BYTES {
            return Err(page(sentences::oauth::PARAM_TOO_LONG));
        }
    }
    Ok(())
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// Checks the rest of an authorization request against the client it names (as
/// [`client_named`] found it, its document fetched when it has one).
pub fn validate(
    pairs: &[(String, String)],
    client: Asking,
    origin: &str,
) -> Result<AuthRequest, Refusal> {
    check_pairs(pairs).map_err(Refusal::Page)?;
    let page = |s: &str| Refusal::Page(OAuthError::invalid_request(s));
    let param = |name: &str| param(pairs, name);
    let client_id = param("client_id").ok_or_else(|| Refusal::Page(no_client()))?;
    let redirect_uri = match param("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| clients::redirect_matches(r, uri)) => {
            uri.to_owned()
        }
        Some(_) => return Err(page(sentences::oauth::REDIRECT_NOT_REGISTERED)),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return Err(page(sentences::oauth::NO_REDIRECT)),
    };
    let state = param("state").map(str::to_owned);
    let back = |error: &str, description: &str| {
        let error = [("error", error), ("error_description", description)];
        Refusal::Redirect(back(&redirect_uri, &error, state.as_deref(), origin))
    };
    match param("response_type") {
        Some("code") => {}
        Some(_) => {
            return Err(back(
                "unsupported_response_type",
                sentences::oauth::RESPONSE_TYPE_UNSUPPORTED,
            ))
        }
        None => return Err(back("invalid_request", sentences::oauth::RESPONSE_TYPE_MISSING)),
    }
    let code_challenge = match (param("code_challenge"), param("code_challenge_method")) {
        (Some(c), Some("S256")) if pkce::is_s256_challenge(c) => c.to_owned(),
        (Some(_), Some("S256")) => {
            return Err(back("invalid_request", sentences::oauth::CHALLENGE_NOT_S256))
        }
        (None, _) => return Err(back("invalid_request", sentences::oauth::PKCE_REQUIRED)),
        (Some(_), _) => {
            return Err(back("invalid_request", sentences::oauth::CHALLENGE_METHOD_UNSUPPORTED))
        }
    };
    let resource = param("resource").map(str::to_owned);
    if let Some(r) = &resource {
        if !is_this_resource(r, origin) {
            return Err(back("invalid_target", sentences::oauth::RESOURCE_NOT_HERE));
        }
    }
    Ok(AuthRequest {
        client_id: client_id.to_owned(),
        // Cleaned again: a name signed into a client id before a character was known unshown.
        client_name: shown_name(&client.name),
        verified_domain: client.verified_domain,
        redirect_uri,
        state,
        code_challenge,
        resource,
        scope: param("scope").map(str::to_owned),
    })
}

/// A client's name as every page and the tab show it ([`clients::clean_name`]); a name left
/// empty reads as [`sentences::oauth::UNNAMED_CLIENT`].
#[must_use]
pub fn shown_name(name: &str) -> String {
    let name = clients::clean_name(name);
    if name.is_empty() {
        sentences::oauth::UNNAMED_CLIENT.to_owned()
    } else {
        name
    }
}

/// Which sealed request it is: SHA-256 of the seal's body. One seal makes one connect code
/// ([`super::connect::ConnectCode::for_seal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealId(pub String);

tabrelay_bundle::codec!(SealId, "a seal's id", (String));

/// The checked request sealed for the waiting page to hand back when it asks for its connect
/// code: `base64url(JSON).base64url(HMAC)`, good for [`SEAL_TTL_MS`]. No code and no Durable
/// Object exist until then, so a client that only probes `/authorize` makes none.
#[must_use]
pub fn seal(keys: &Keys, request: &AuthRequest, now_ms: u64) -> String {
    let mut body = Vec::new();
    let mut o = tabrelay_bundle::fields::Object::open(&mut body);
    o.field("expires_ms", &(now_ms + SEAL_TTL_MS));
    o.field("request", request);
    o.close();
    keys.sign(Purpose::AuthorizeSeal, crate::crypto::base64url(&body))
}

/// The request a seal carries and the seal's id (which makes its one connect code), when the
/// seal is this relay's (current or previous key) and has not expired.
#[must_use]
pub fn unseal(keys: &Keys, sealed: &str, now_ms: u64) -> Option<(AuthRequest, SealId)> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let body = keys.verified(Purpose::AuthorizeSeal, sealed.trim())?;
    let mut f = Fields::of(serde_json::from_slice(&b64.decode(body).ok()?).ok()?)?;
    let expires_ms = f.u64("expires_ms")?;
    (now_ms < expires_ms).then_some(())?;
    Some((f.read("request")?, SealId(crate::crypto::sha256_hex(body.as_bytes()))))
}

/// Whether an `Accept` header prefers JSON to HTML (a program probing, not a browser): a
/// JSON type (`application/json` or `*+json`) weighs more than `text/html` (or `*/*`).
#[must_use]
pub fn wants_json(accept: Option<&str>) -> bool {
    let (mut json, mut html) = (0u16, 0u16);
    for part in accept.unwrap_or_default().split(',') {
        let mut items = part.split(';');
        let media = items.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = items.find_map(|p| p.trim().strip_prefix("q=")).map_or(1000, thousandths);
        if media == "application/json" || media.ends_with("+json") {
            json = json.max(q);
        } else if media == "text/html" || media == "*/*" || media == "text/*" {
            html = html.max(q);
        }
    }
    json > html
}

/// A quality value (`0`, `0.5`, `1.000`) in thousandths, read without floating point (which
/// would cost the wasm its float parser); anything else reads as 0.
fn thousandths(q: &str) -> u16 {
    let (whole, fraction) = q.trim().split_once('.').unwrap_or((q.trim(), ""));
    let mut value: u16 = match whole {
        "0" => 0,
        "1" => 1000,
        _ => return 0,
    };
    for (digit, scale) in fraction.bytes().zip([100, 10, 1]) {
        if !digit.is_ascii_digit() {
            return 0;
        }
        value += u16::from(digit - b'0') * scale;
    }
    value.min(1000)
}

/// Where a browser goes back to the client: its `redirect_uri` with `params`, then the
/// request's `state` (when it sent one) and the issuer `iss` (RFC 9207).
#[must_use]
pub fn back(redirect_uri: &str, params: &[(&str, &str)], state: Option<&str>, iss: &str) -> String {
    let mut url = redirect_url(redirect_uri, params);
    if let Some(state) = state {
        add_param(&mut url, "state", state);
    }
    add_param(&mut url, "iss", iss);
    url
}

/// `uri` with `params` added to its query.
#[must_use]
pub fn redirect_url(uri: &str, params: &[(&str, &str)]) -> String {
    // form_urlencoded's own encoding of each name and value, as its `Serializer` writes them
    // (without the Serializer's generic target: 1 KiB of upload less).
    let mut url = String::from(uri);
    url.push(if uri.contains('?') { '&' } else { '?' });
    for (i, (k, v)) in params.iter().enumerate() {
        if i > 0 {
            url.push('&');
        }
        write_param(&mut url, k, v);
    }
    url
}

/// Adds `name=value` to a URL whose query has parameters.
fn add_param(url: &mut String, name: &str, value: &str) {
    url.push('&');
    write_param(url, name, value);
}

fn write_param(url: &mut String, name: &str, value: &str) {
    url.extend(form_urlencoded::byte_serialize(name.as_bytes()));
    url.push('=');
    url.extend(form_urlencoded::byte_serialize(value.as_bytes()));
}

tabrelay_bundle::codec!(AuthRequest, "an authorization request", { client_id, client_name, verified_domain or None, redirect_uri, state, code_challenge, resource, scope });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::clients::register;

    const ORIGIN: &str = "https://relay.example";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn client_id() -> String {
        let r = register(
            &keys(),
            br#"{"client_name":"Claude","redirect_uris":["https://claude.ai/cb"]}"#,
            0,
            &mut crate::crypto::testing::Counter(1),
        )
        .unwrap();
        r.client_id
    }

    /// Both steps, for a registered client (a document client has none to look up here).
    fn check(
        pairs: &[(String, String)],
        keys: &Keys,
        origin: &str,
    ) -> Result<AuthRequest, Refusal> {
        match client_named(pairs, keys).map_err(Refusal::Page)? {
            Named::Registered(c) => validate(pairs, c.into(), origin),
            Named::Document(u) => panic!("a document client {u:?}"),
        }
    }

    fn query(over: &[(&str, Option<&str>)]) -> Vec<(String, String)> {
        let id = client_id();
        let mut base: Vec<(&str, Option<&str>)> = vec![
            ("response_type", Some("code")),
            ("client_id", Some(&id)),
            ("redirect_uri", Some("https://claude.ai/cb")),
            ("state", Some("xyz")),
            ("code_challenge", Some(CHALLENGE)),
            ("code_challenge_method", Some("S256")),
            ("resource", Some(ORIGIN)),
        ];
        for (k, v) in over {
            base.retain(|(bk, _)| bk != k);
            base.push((k, *v));
        }
        base.into_iter().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))).collect()
    }

    /// A redirect's parameters are encoded as form_urlencoded's `Serializer` encodes them,
    /// after the URI's own query when it has one.
    #[test]
    fn redirect_parameters_are_form_encoded() {
        let params = [("error", "access_denied"), ("state", "a b&c=d/é+%"), ("", "")];
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            query.append_pair(k, v);
        }
        let query = query.finish();
        assert_eq!(query, "error=access_denied&state=a+b%26c%3Dd%2F%C3%A9%2B%25&=");
        let to = redirect_url("https://app.example/cb", &params);
        assert_eq!(to, format!("https://app.example/cb?{query}"));
        let to = redirect_url("https://app.example/cb?x=1", &params[..1]);
        assert_eq!(to, "https://app.example/cb?x=1&error=access_denied");
    }

    #[test]
    fn a_good_request_is_accepted() {
        let r = check(&query(&[]), &keys(), ORIGIN).unwrap();
        assert_eq!(r.client_name, "Claude");
        assert_eq!(r.state.as_deref(), Some("xyz"));
        assert!(
            check(&query(&[("resource", Some("https://relay.example/"))]), &keys(), ORIGIN).is_ok()
        );
    }

    #[test]
    fn a_parameter_sent_twice_or_too_long_is_refused_on_the_page() {
        let mut twice = query(&[]);
        twice.push(("state".into(), "again".into()));
        let long = "x".repeat(MAX_PARAM_BYTES + 1);
        for (pairs, sentence) in [
            (twice, sentences::oauth::PARAM_TWICE),
            (query(&[("state", Some(&long))]), sentences::oauth::PARAM_TOO_LONG),
        ] {
            let Err(Refusal::Page(e)) = check(&pairs, &keys(), ORIGIN) else {
                panic!("not refused on the page: {sentence}")
            };
            assert_eq!((e.code, e.description.as_str()), ("invalid_request", sentence));
        }
    }

    #[test]
    fn an_unverified_redirect_is_never_followed() {
        for bad in [
            "https://evil.example/cb",
            "https://claude.ai/cb/",
            "https://claude.ai/CB",
            " https://claude.ai/cb",
        ] {
            let e = check(&query(&[("redirect_uri", Some(bad))]), &keys(), ORIGIN).unwrap_err();
            assert!(matches!(e, Refusal::Page(_)), "{bad}");
        }
        let e = check(&query(&[("client_id", Some("forged"))]), &keys(), ORIGIN).unwrap_err();
        assert!(matches!(e, Refusal::Page(_)));
    }

    #[test]
    fn other_errors_go_back_to_the_client_with_state_and_iss() {
        let cases = [
            (query(&[("code_challenge_method", Some("plain"))]), "invalid_request"),
            (query(&[("code_challenge", None)]), "invalid_request"),
            (query(&[("response_type", Some("token"))]), "unsupported_response_type"),
            (query(&[("resource", Some("https://other.example"))]), "invalid_target"),
        ];
        for (q, code) in cases {
            match check(&q, &keys(), ORIGIN).unwrap_err() {
                Refusal::Redirect(to) => {
                    assert!(to.starts_with("https://claude.ai/cb?error="), "{to}");
                    assert!(to.contains(&format!("error={code}")), "{to}");
                    assert!(
                        to.contains("state=xyz") && to.contains("iss=https%3A%2F%2Frelay.example")
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    const CIMD: &str = "https://claude.ai/oauth/mcp-oauth-client-metadata";

    fn document_client(name: Option<&str>) -> MetadataClient {
        MetadataClient {
            domain: "claude.ai".into(),
            name: name.map(str::to_owned),
            redirect_uris: vec!["https://claude.ai/cb".into()],
        }
    }

    #[test]
    fn a_url_client_id_names_a_document_to_fetch() {
        let q = query(&[("client_id", Some(CIMD))]);
        let Named::Document(url) = client_named(&q, &keys()).unwrap() else { panic!("a document") };
        assert_eq!((url.as_str(), url.domain()), (CIMD, "claude.ai"));
        let r = validate(&q, document_client(Some("Claude")).into(), ORIGIN).unwrap();
        assert_eq!(r.client_id, CIMD);
        assert_eq!(r.client_name, "Claude");
        assert_eq!(r.verified_domain.as_deref(), Some("claude.ai"));
        let unnamed = validate(&q, document_client(None).into(), ORIGIN).unwrap();
        assert_eq!(unnamed.client_name, "claude.ai", "a document without a name is its domain");
        let shared = MetadataClient { domain: "claude.github.io".into(), ..document_client(None) };
        let asking = Asking::from(shared);
        assert_eq!(asking.verified_domain, None, "anyone may publish on a shared host");
        assert_eq!(asking.name, "claude.github.io", "named by its host, not verified");
    }

    #[test]
    fn a_bad_client_id_url_is_refused_on_the_page_before_any_fetch() {
        for bad in [
            "http://claude.ai/oauth/x",
            "https://127.0.0.1/x",
            "https://localhost:8443/x",
            "https://claude.ai/",
            "https://u@claude.ai/x",
        ] {
            let e = client_named(&query(&[("client_id", Some(bad))]), &keys()).unwrap_err();
            assert_eq!(e.code, "invalid_client", "{bad}");
        }
    }

    #[test]
    fn a_sealed_request_comes_back_only_unchanged_in_time_and_from_this_relay() {
        let r = check(&query(&[]), &keys(), ORIGIN).unwrap();
        let sealed = seal(&keys(), &r, 1000);
        let (opened, id) = unseal(&keys(), &sealed, 1001).unwrap();
        assert_eq!(opened, r);
        let again = seal(&keys(), &r, 1002);
        assert_ne!(unseal(&keys(), &again, 1003).unwrap().1, id, "each seal has its own id");
        assert_eq!(unseal(&keys(), &sealed, 1004).unwrap().1, id, "and keeps it");
        assert_eq!(unseal(&keys(), &sealed, 1000 + SEAL_TTL_MS), None, "expired");
        let rotated = Keys::new(&"n".repeat(32), Some(&"k".repeat(32))).unwrap();
        assert_eq!(
            unseal(&rotated, &sealed, 1001).map(|u| u.0),
            Some(r),
            "the previous key still opens it"
        );
        let other = Keys::new(&"o".repeat(32), None).unwrap();
        assert_eq!(unseal(&other, &sealed, 1001), None);
        let (body, tag) = sealed.split_once('.').unwrap();
        let mut forged = body.as_bytes().to_vec();
        forged[5] ^= 1;
        let forged = format!("{}.{tag}", String::from_utf8(forged).unwrap());
        assert_eq!(unseal(&keys(), &forged, 1001), None);
        for junk in ["", ".", "a.b", "x", &"a".repeat(5000)] {
            assert_eq!(unseal(&keys(), junk, 1001), None);
        }
    }

    #[test]
    fn json_is_answered_only_when_preferred_to_html() {
        assert!(wants_json(Some("application/json")));
        assert!(wants_json(Some("application/json, text/html;q=0.5")));
        assert!(wants_json(Some("text/html;q=0.1, application/problem+json")));
        assert!(!wants_json(None));
        assert!(!wants_json(Some(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
        )));
        assert!(!wants_json(Some("*/*")));
        assert!(!wants_json(Some("application/json;q=0.5, text/html")));
        assert!(!wants_json(Some("application/json, */*")));
        assert!(wants_json(Some("application/json;q=0.9, text/html;q=0.85")));
        assert!(!wants_json(Some("application/json;q=bad, text/html;q=0.1")));
        assert_eq!((thousandths("1"), thousandths("0.5"), thousandths("0.125")), (1000, 500, 125));
    }

    #[test]
    fn a_redirect_the_document_does_not_list_is_never_followed() {
        let q =
            query(&[("client_id", Some(CIMD)), ("redirect_uri", Some("https://evil.example/cb"))]);
        let e = validate(&q, document_client(None).into(), ORIGIN).unwrap_err();
        assert!(matches!(e, Refusal::Page(ref e) if e.code == "invalid_request"), "{e:?}");
    }
}
