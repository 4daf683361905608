//! Clients: dynamic registration (RFC 7591) with stateless signed client ids, and the rules a
//! redirect URI must meet.
//!
//! Claude registers anew on every connection, so a stored registration would grow storage
//! without bound. Instead the client id carries the client's name and redirect URIs, signed
//! with the relay's key: nothing is stored, and a forged or altered id does not verify.

use base64::Engine as _;
use serde_json::Value;
use tabrelay_bundle::fields::{Encode, Fields, Object};

use super::error::OAuthError;
use crate::crypto::{random_token, Entropy};
use crate::keys::{Keys, Purpose};
use crate::limits::{
    MAX_CLIENT_NAME_CHARS, MAX_REDIRECT_URIS, MAX_REDIRECT_URI_BYTES, MAX_REGISTRATION_BYTES,
};
use crate::sentences;

const CLIENT_ID_PREFIX: &str = "trc1.";

/// A registered client, as its id says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// The name it gave (not verified).
    pub name: String,
    /// Its redirect URIs.
    pub redirect_uris: Vec<String>,
    /// When it registered, in seconds since the epoch.
    pub issued_at: u64,
    /// Random: every registration is a client of its own, even with the same metadata.
    pub instance: String,
}

/// A registration's answer (RFC 7591 §3.2.1): the client's signed id and what it registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The signed id ([`client_id`]).
    pub client_id: String,
    /// The client it names.
    pub client: Client,
}

/// Written as the registration response, its keys in the order a JSON map sorts them.
impl Encode for Registered {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::open(out);
        o.field("client_id", &self.client_id);
        o.field("client_id_issued_at", &self.client.issued_at);
        o.field("client_name", &self.client.name);
        o.field("grant_types", GRANT_TYPES);
        o.field("redirect_uris", &self.client.redirect_uris);
        o.field("response_types", RESPONSE_TYPES);
        o.text("token_endpoint_auth_method", "none");
        o.close();
    }
}

/// The grant types every client has.
const GRANT_TYPES: &JsonText = &JsonText(r#"["authorization_code","refresh_token"]"#);

/// The response types every client has.
const RESPONSE_TYPES: &JsonText = &JsonText(r#"["code"]"#);

/// JSON text the code declares, written as it is.
struct JsonText(&'static str);

impl Encode for JsonText {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

/// The client metadata the relay reads from a registration (the rest is ignored).
struct Registration {
    redirect_uris: Option<Value>,
    client_name: Option<Value>,
    grant_types: Option<Vec<String>>,
    response_types: Option<Vec<String>>,
}

impl Registration {
    /// The metadata, unless a list of types is not a list of strings.
    fn read(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self {
            // Null reads as missing where each is read (`redirect_uris`, a name not a string).
            redirect_uris: f.value("redirect_uris"),
            client_name: f.value("client_name"),
            grant_types: f.optional_strings("grant_types")?,
            response_types: f.optional_strings("response_types")?,
        })
    }
}

/// Registers a client: checks its metadata, answers the RFC 7591 response (status 201).
pub fn register(
    keys: &Keys,
    body: &[u8],
    now_ms: u64,
    entropy: &mut dyn Entropy,
) -> Result<Registered, OAuthError> {
    if body.len() > MAX_REGISTRATION_BYTES {
        return Err(OAuthError::invalid_client_metadata(sentences::oauth::registration_too_large(
            MAX_REGISTRATION_BYTES,
        )));
    }
    let not_metadata =
        || OAuthError::invalid_client_metadata(sentences::oauth::REGISTRATION_NOT_METADATA);
    let value: Value = serde_json::from_slice(body).map_err(|_| not_metadata())?;
    let reg = Registration::read(value).ok_or_else(not_metadata)?;
    let redirect_uris = redirect_uris(reg.redirect_uris).map_err(|bad| {
        OAuthError::invalid_redirect_uri(match bad {
            BadList::Empty => sentences::oauth::NO_REDIRECT_URIS.to_owned(),
            BadList::NotArray => sentences::oauth::REDIRECT_URIS_NOT_ARRAY.to_owned(),
            BadList::TooMany => sentences::oauth::too_many_redirect_uris(MAX_REDIRECT_URIS),
            BadList::NotString => sentences::oauth::REDIRECT_URI_NOT_STRING.to_owned(),
            BadList::Bad(why) => why.sentence(),
        })
    })?;
    if let Some(g) = &reg.grant_types {
        if g.iter().any(|g| g != "authorization_code" && g != "refresh_token") {
            return Err(OAuthError::invalid_client_metadata(
                sentences::oauth::GRANT_TYPES_UNSUPPORTED,
            ));
        }
    }
    if let Some(r) = &reg.response_types {
        if r.iter().any(|r| r != "code") {
            return Err(OAuthError::invalid_client_metadata(
                sentences::oauth::RESPONSE_TYPES_UNSUPPORTED,
            ));
        }
    }
    let name = match reg.client_name {
        Some(Value::String(n)) => super::authorize::shown_name(&n),
        _ => sentences::oauth::UNNAMED_CLIENT.to_owned(),
    };
    let instance = random_token(entropy, 6);
    let client = Client { name, redirect_uris, issued_at: now_ms / 1000, instance };
    Ok(Registered { client_id: client_id(keys, &client), client })
}

/// The signed id of a client.
#[must_use]
pub fn client_id(keys: &Keys, client: &Client) -> String {
    let payload = crate::crypto::base64url(&tabrelay_bundle::fields::Encode::to_json(client));
    format!("{CLIENT_ID_PREFIX}{}", keys.sign(Purpose::ClientId, payload))
}

/// The client a signed id names, or `invalid_client`.
pub fn resolve(keys: &Keys, id: &str) -> Result<Client, OAuthError> {
    let unknown = || OAuthError::invalid_client(sentences::oauth::CLIENT_ID_UNKNOWN);
    let rest = id.strip_prefix(CLIENT_ID_PREFIX).ok_or_else(unknown)?;
    let payload = keys.verified(Purpose::ClientId, rest).ok_or_else(unknown)?;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let bytes = b64.decode(payload).map_err(|_| unknown())?;
    tabrelay_bundle::from_json(&bytes).ok_or_else(unknown)
}

/// Why a redirect URI (or a client's list of them) is refused; its [`Self::sentence`] says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadRedirect {
    /// Longer than [`MAX_REDIRECT_URI_BYTES`].
    TooLong,
    /// Whitespace, a control character or a backslash.
    Characters,
    /// A fragment.
    Fragment,
    /// Not an absolute URL.
    NotAbsolute,
    /// A user name or password.
    Userinfo,
    /// No host.
    NoHost,
    /// A port that is not a number up to 65535.
    Port,
    /// Neither https nor http on a loopback host.
    Scheme,
    /// A metadata document names none.
    None,
    /// A metadata document names more than it may (the most, in the sentence).
    TooMany(usize),
}

impl BadRedirect {
    /// The sentence a person (or a client's developer) reads.
    #[must_use]
    pub fn sentence(self) -> String {
        use sentences::oauth as s;
        match self {
            Self::TooLong => return s::redirect_uri_too_long(MAX_REDIRECT_URI_BYTES),
            Self::TooMany(most) => return s::cimd_too_many_redirects(most),
            Self::Characters => s::REDIRECT_URI_CHARACTERS,
            Self::Fragment => s::REDIRECT_URI_FRAGMENT,
            Self::NotAbsolute => s::REDIRECT_URI_NOT_ABSOLUTE,
            Self::Userinfo => s::REDIRECT_URI_USERINFO,
            Self::NoHost => s::REDIRECT_URI_NO_HOST,
            Self::Port => s::REDIRECT_URI_PORT,
            Self::Scheme => s::REDIRECT_URI_SCHEME,
            Self::None => s::CIMD_NO_REDIRECTS,
        }
        .to_owned()
    }
}

/// Why a client's list of redirect URIs is refused (a registration's or a metadata
/// document's: each says so in its own words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadList {
    /// None at all (missing, null or empty).
    Empty,
    /// Not an array.
    NotArray,
    /// More than [`MAX_REDIRECT_URIS`].
    TooMany,
    /// An entry that is not a string.
    NotString,
    /// An entry that breaks a rule.
    Bad(BadRedirect),
}

/// A client's redirect URIs from its metadata's `redirect_uris`: from one to
/// [`MAX_REDIRECT_URIS`] strings, each meeting [`check_redirect_uri`].
pub(crate) fn redirect_uris(value: Option<Value>) -> Result<Vec<String>, BadList> {
    let uris = match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(uris)) => uris,
        Some(_) => return Err(BadList::NotArray),
    };
    if uris.is_empty() {
        return Err(BadList::Empty);
    }
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(BadList::TooMany);
    }
    let mut checked = Vec::with_capacity(uris.len());
    for uri in uris {
        let Value::String(uri) = uri else { return Err(BadList::NotString) };
        check_redirect_uri(&uri).map_err(BadList::Bad)?;
        checked.push(uri);
    }
    Ok(checked)
}

/// Checks a redirect URI: https, or http on a loopback host; no userinfo, fragment,
/// whitespace or control characters; bounded length.
pub fn check_redirect_uri(uri: &str) -> Result<(), BadRedirect> {
    if uri.len() > MAX_REDIRECT_URI_BYTES {
        return Err(BadRedirect::TooLong);
    }
    if uri.bytes().any(|b| b <= b' ' || b == 0x7f || b == b'\\') || uri.chars().any(is_unshown) {
        return Err(BadRedirect::Characters);
    }
    if uri.contains('#') {
        return Err(BadRedirect::Fragment);
    }
    let (scheme, rest) = crate::text::split_once(uri, "://").ok_or(BadRedirect::NotAbsolute)?;
    let (authority, _) = split_authority(rest);
    if authority.contains('@') {
        return Err(BadRedirect::Userinfo);
    }
    let host = host_of_authority(authority);
    if host.is_empty() {
        return Err(BadRedirect::NoHost);
    }
    if !port_is_valid(authority) {
        return Err(BadRedirect::Port);
    }
    match scheme {
        "https" => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        _ => Err(BadRedirect::Scheme),
    }
}

/// Whether redirect URI `asked` is the registered one: exactly, except that a loopback http
/// redirect may change its port (RFC 8252 §7.3: native apps listen on whatever port is free).
#[must_use]
pub fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    fn split(uri: &str) -> Option<(&str, &str)> {
        let (authority, tail) = split_authority(uri.strip_prefix("http://")?);
        let host = host_of_authority(authority);
        is_loopback(host).then_some((host, tail))
    }
    match (split(registered), split(asked)) {
        (Some(r), Some(a)) => r == a && check_redirect_uri(asked).is_ok(),
        _ => false,
    }
}

/// The host of a URI such as `https://host:port/path`, for showing who asks.
#[must_use]
pub fn host_of(uri: &str) -> &str {
    let rest = crate::text::split_once(uri, "://").map_or(uri, |(_, r)| r);
    host_of_authority(split_authority(rest).0)
}

/// The host of a redirect URI as a page or the tab shows it ([`clean_text`]: a URI registered
/// before a character was refused may still hold one).
#[must_use]
pub fn shown_host(uri: &str) -> String {
    clean_text(host_of(uri), usize::MAX)
}

/// What follows a URI's `scheme://`, split into its authority and the rest (from the first
/// `/`, `?` or `#`).
pub(super) fn split_authority(rest: &str) -> (&str, &str) {
    rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()))
}

fn host_of_authority(authority: &str) -> &str {
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split_once(']').map_or(v6, |(host, _)| host);
    }
    authority.split_once(':').map_or(authority, |(host, _)| host)
}

/// Whether what follows the host in `authority` is nothing or `:` and a port number (a
/// browser would not parse anything else, and the host read here would not be the one it
/// reads).
fn port_is_valid(authority: &str) -> bool {
    let after_host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(_, rest)| rest),
        None => Some(authority.find(':').map_or("", |i| &authority[i..])),
    };
    match after_host {
        Some("") => true,
        Some(port) => port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.len() <= 5 && fits(p, u16::MAX.into())),
        None => false,
    }
}

/// `localhost`, `::1`, or an IPv4 address in 127.0.0.0/8 (four numbers, not a name that
/// merely starts with `127.`).
fn is_loopback(host: &str) -> bool {
    if host == "localhost" || host == "::1" {
        return true;
    }
    let mut octets = 0;
    for o in host.split('.') {
        let number = !o.is_empty() && o.len() <= 3 && fits(o, u8::MAX.into());
        if !number || (octets == 0 && o != "127") {
            return false;
        }
        octets += 1;
    }
    octets == 4
}

/// Whether `digits` reads as a number (as `str::parse` reads one) of at most `max`: read as a
/// u64, whose parser the relay links anyway, rather than with a parser of each width.
fn fits(digits: &str, max: u64) -> bool {
    digits.parse::<u64>().is_ok_and(|n| n <= max)
}

/// A name as shown: [unshown](is_unshown) characters dropped, at most
/// [`MAX_CLIENT_NAME_CHARS`], trimmed.
pub(crate) fn clean_name(name: &str) -> String {
    clean_text(name, MAX_CLIENT_NAME_CHARS)
}

/// `text` as shown: [unshown](is_unshown) characters dropped, at most `most` characters,
/// trimmed. Every text from outside a page or the tab shows (a client's name, its redirect
/// host, the platform's place) passes here.
pub(crate) fn clean_text(text: &str, most: usize) -> String {
    let mut kept = String::with_capacity(text.len());
    for c in text.chars().filter(|&c| !is_unshown(c)).take(most) {
        kept.push(c);
    }
    kept.trim().to_owned()
}

/// Whether `c` is a character a name must not carry: a control or format character, which
/// shows as nothing yet changes what a person reads (the bundle's list, which the tab's
/// display filter is written from too).
pub use tabrelay_bundle::unshown::is_unshown;

tabrelay_bundle::codec!(Client, "a client", { name = "n", redirect_uris = "r", issued_at = "t", instance = "i" });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::Counter;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    #[test]
    fn two_registrations_of_the_same_metadata_are_two_clients() {
        let body = br#"{"redirect_uris":["https://a.example/cb"]}"#;
        let mut rng = Counter(1);
        let a = register(&keys(), body, 0, &mut rng).unwrap();
        let b = register(&keys(), body, 0, &mut rng).unwrap();
        assert_ne!(a.client_id, b.client_id);
    }

    #[test]
    fn a_registration_round_trips_through_its_signed_id() {
        let r = register(&keys(),
            br#"{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]}"#, 1_000_000, &mut Counter(1))
        .unwrap();
        let client = resolve(&keys(), &r.client_id).unwrap();
        assert_eq!(client.name, "Claude");
        assert_eq!(client.redirect_uris, ["https://claude.ai/api/mcp/auth_callback"]);
        // The response, byte for byte as serde_json wrote it as a value.
        let written = serde_json::json!({
            "client_id": r.client_id,
            "client_id_issued_at": 1000,
            "client_name": "Claude",
            "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        assert_eq!(String::from_utf8(r.to_json()).unwrap(), written.to_string());
    }

    #[test]
    fn an_altered_or_foreign_client_id_is_refused() {
        let r = register(
            &keys(),
            br#"{"redirect_uris":["http://127.0.0.1:9/cb"]}"#,
            0,
            &mut Counter(1),
        )
        .unwrap();
        let id = r.client_id.as_str();
        let other = Keys::new(&"x".repeat(32), None).unwrap();
        assert_eq!(resolve(&other, id).unwrap_err().code, "invalid_client");
        let mut altered = id.to_owned();
        altered.insert(8, 'A');
        assert_eq!(resolve(&keys(), &altered).unwrap_err().code, "invalid_client");
        assert_eq!(resolve(&keys(), "hello").unwrap_err().code, "invalid_client");
    }

    #[test]
    fn redirect_uris_must_be_https_or_loopback_http() {
        for ok in [
            "https://a.example/cb",
            "http://127.0.0.1:3000/cb",
            "http://localhost/cb",
            "http://[::1]:8/x",
            "https://a.example:8443/cb",
        ] {
            assert_eq!(check_redirect_uri(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://a.example/cb",
            "http://127.attacker.example/cb",
            "http://127.0.0.1.example/cb",
            "http://127.0.0.256/cb",
            "http://10.0.0.1/cb",
            "http://192.168.1.1:8080/cb",
            "javascript:alert(1)",
            "data:text/html,hi",
            "https://a.example/cb#frag",
            "https://user@a.example/cb",
            "https://a.example/c b",
            "https://a.example/\ncb",
            "http://127.0.0.1:9x/cb",
            "http://127.0.0.1:6274\u{fffd}oauth/cb",
            "http://127.0.0.1:/cb",
            "http://127.0.0.1:99999/cb",
            "http://[::1/cb",
            "http://[::1]x/cb",
            "HTTPS://a.example/cb",
            "https:///cb",
            "ftp://a.example/",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_loopback_redirect_may_change_its_port_and_nothing_else() {
        let reg = "http://127.0.0.1:3000/callback";
        assert!(redirect_matches(reg, reg));
        assert!(redirect_matches(reg, "http://127.0.0.1:51234/callback"));
        assert!(redirect_matches(reg, "http://127.0.0.1/callback"));
        assert!(!redirect_matches(reg, "http://127.0.0.1:51234/other"));
        assert!(!redirect_matches(reg, "http://localhost:3000/callback"), "the host stays");
        assert!(!redirect_matches(reg, "http://127.0.0.1:3000/callback?x=1"));
        assert!(!redirect_matches(reg, "http://127.0.0.1:3000@evil.example/callback"));
        assert!(!redirect_matches(reg, "http://127.0.0.1:3000.evil.example/callback"));
        assert!(!redirect_matches(reg, "http://127.0.0.1:3\u{fffd}x/callback"));
        let https = "https://claude.ai/cb";
        assert!(!redirect_matches(https, "https://claude.ai:8443/cb"), "only loopback ports move");
    }

    #[test]
    fn bad_registrations_get_the_rfc_errors() {
        let k = keys();
        assert_eq!(
            register(&k, b"[]", 0, &mut Counter(1)).unwrap_err().code,
            "invalid_client_metadata"
        );
        assert_eq!(
            register(&k, b"{}", 0, &mut Counter(1)).unwrap_err().code,
            "invalid_redirect_uri"
        );
        assert_eq!(
            register(&k, br#"{"redirect_uris":["http://evil.example/cb"]}"#, 0, &mut Counter(1))
                .unwrap_err()
                .code,
            "invalid_redirect_uri"
        );
        assert_eq!(
            register(
                &k,
                br#"{"redirect_uris":["https://a.example/"],"grant_types":["password"]}"#,
                0,
                &mut Counter(1)
            )
            .unwrap_err()
            .code,
            "invalid_client_metadata"
        );
        let big = vec![b' '; MAX_REGISTRATION_BYTES + 1];
        assert_eq!(
            register(&k, &big, 0, &mut Counter(1)).unwrap_err().code,
            "invalid_client_metadata"
        );
    }
}
