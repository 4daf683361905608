//! The token endpoint: reading its form into a redemption, and answering with tokens.

use tabrelay_bundle::fields::{Encode, Object};

use super::authorize::is_this_resource;
use super::cimd::{self, MetadataUrl};
use super::clients;
use super::connect::{Command, ConnectCode, Granted};
use super::error::OAuthError;
use super::metadata::SCOPE;
use super::refresh::{parse_refresh_token, refresh_token};
use super::token::{self, Access};
use crate::crypto::{random_token, Entropy};
use crate::keys::Keys;
use crate::limits::{ACCESS_TOKEN_TTL_S, MAX_FORM_BYTES};
use crate::sentences;

/// What the token endpoint asks the grant's pairing when a client refreshes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRequest {
    /// The grant the token names.
    pub grant: String,
    /// The token's secret part.
    pub secret: String,
    /// The client refreshing.
    pub client_id: String,
}

/// What the revocation endpoint asks the grant's pairing to revoke (RFC 7009): a grant, proven by one of its
/// refresh tokens or by a valid access token naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokeRequest {
    /// The grant.
    pub grant: String,
    /// A refresh token's secret part; None when an access token was verified instead.
    pub secret: Option<String>,
}

/// A token request, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRequest {
    /// Redeem an authorization code: ask the code's Durable Object.
    Code(ConnectCode, Redemption),
    /// Use a refresh token: ask the pairing it names.
    Refresh {
        /// The pairing.
        pairing: String,
        /// What to ask it.
        request: RefreshRequest,
    },
}

pub use super::connect::Redemption;

impl Redemption {
    /// The command that redeems it at the code's Durable Object.
    #[must_use]
    pub fn command(&self) -> Command {
        Command::Redeem(self.clone())
    }
}

/// Reads a token request.
///
/// A code redemption names the id its grant will get (drawn from `entropy`), so that the code's
/// Durable Object can revoke that grant if the code is ever replayed.
pub fn read(
    body: &[u8],
    keys: &Keys,
    origin: &str,
    entropy: &mut dyn Entropy,
) -> Result<TokenRequest, OAuthError> {
    if body.len() > MAX_FORM_BYTES {
        return Err(OAuthError::invalid_request(sentences::too_large(MAX_FORM_BYTES)));
    }
    let pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
    // A parameter sent without a value is treated as omitted (RFC 6749 §3.2).
    let mut sent: Vec<&(String, String)> = Vec::new();
    for pair in &pairs {
        let (k, v) = pair;
        if v.is_empty() {
            continue;
        }
        if sent.iter().any(|(seen, _)| seen == k) {
            return Err(OAuthError::invalid_request(sentences::oauth::param_sent_twice(k)));
        }
        sent.push(pair);
    }
    let param = |name: &str| sent.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let refresh = match param("grant_type") {
        Some("authorization_code") => false,
        Some("refresh_token") => true,
        Some(_) => {
            return Err(OAuthError::unsupported_grant_type(
                sentences::oauth::GRANT_TYPE_UNSUPPORTED,
            ))
        }
        None => return Err(OAuthError::invalid_request(sentences::oauth::GRANT_TYPE_MISSING)),
    };
    let client_id = param("client_id")
        .ok_or_else(|| OAuthError::invalid_request(sentences::oauth::CLIENT_ID_MISSING))?;
    known_client(keys, client_id)?;
    if refresh {
        let token = param("refresh_token")
            .ok_or_else(|| OAuthError::invalid_request(sentences::oauth::REFRESH_TOKEN_MISSING))?;
        if let Some(r) = param("resource") {
            if !is_this_resource(r, origin) {
                return Err(OAuthError::invalid_target(sentences::oauth::RESOURCE_NOT_HERE));
            }
        }
        // Checked by its tag here: a token the relay did not issue reaches no pairing.
        let (pairing, grant, secret) = parse_refresh_token(keys, token)
            .ok_or_else(|| OAuthError::invalid_grant(sentences::REFRESH_REFUSED))?;
        return Ok(TokenRequest::Refresh {
            pairing: pairing.to_owned(),
            request: RefreshRequest {
                grant: grant.to_owned(),
                secret: secret.to_owned(),
                client_id: client_id.to_owned(),
            },
        });
    }
    let code =
        param("code").ok_or_else(|| OAuthError::invalid_request(sentences::oauth::CODE_MISSING))?;
    let unknown = || OAuthError::invalid_grant(sentences::oauth::CODE_UNKNOWN);
    let (connect, secret) = code.split_once('.').ok_or_else(unknown)?;
    let connect =
        ConnectCode::parse(connect).filter(|c| c.as_str() == connect).ok_or_else(unknown)?;
    let redemption = Redemption {
        secret: secret.to_owned(),
        client_id: client_id.to_owned(),
        redirect_uri: param("redirect_uri").map(str::to_owned),
        code_verifier: param("code_verifier").map(str::to_owned),
        resource: param("resource").map(str::to_owned),
        origin: origin.to_owned(),
        grant: random_token(entropy, 12),
    };
    Ok(TokenRequest::Code(connect, redemption))
}

/// Checks the client id of a token request: a signed id must verify; a metadata document URL
/// must meet the URL rules, and is not fetched again: the code (or grant) it redeems is bound
/// to that id, which /authorize checked against its document.
fn known_client(keys: &Keys, client_id: &str) -> Result<(), OAuthError> {
    if cimd::is_url(client_id) {
        return MetadataUrl::parse(client_id).map(drop).map_err(|e| e.oauth(""));
    }
    clients::resolve(keys, client_id).map(drop)
}

/// What a revocation request (RFC 7009) asks: the pairing and what to tell it; None when the
/// token is none of ours (a refresh token whose tag does not verify, an access token whose
/// signature does not), so that nothing is asked of any pairing (the answer is 200 either way,
/// as the RFC says).
pub fn revocation(
    body: &[u8],
    keys: &Keys,
    origin: &str,
    now_ms: u64,
) -> Result<Option<(String, RevokeRequest)>, OAuthError> {
    if body.len() > MAX_FORM_BYTES {
        return Err(OAuthError::invalid_request(sentences::oauth::REVOKE_TOO_LARGE));
    }
    let pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
    let (_, token) = pairs
        .iter()
        .find(|(k, _)| k == "token")
        .ok_or_else(|| OAuthError::invalid_request(sentences::oauth::REVOKE_TOKEN_MISSING))?;
    if let Some((pairing, grant, secret)) = parse_refresh_token(keys, token) {
        let request = RevokeRequest { grant: grant.to_owned(), secret: Some(secret.to_owned()) };
        return Ok(Some((pairing.to_owned(), request)));
    }
    Ok(token::verify(keys, origin, token, now_ms)
        .ok()
        .map(|a| (a.pairing, RevokeRequest { grant: a.grant, secret: None })))
}

/// A token response (RFC 6749 §5.1): a bearer access token for [`ACCESS_TOKEN_TTL_S`] and a
/// refresh token, of scope [`SCOPE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The signed access token.
    pub access_token: String,
    /// The refresh token.
    pub refresh_token: String,
}

/// Written as the token response, its keys in the order a JSON map sorts them.
impl Encode for Tokens {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::open(out);
        o.field("access_token", &self.access_token);
        o.field("expires_in", &ACCESS_TOKEN_TTL_S);
        o.field("refresh_token", &self.refresh_token);
        o.text("scope", SCOPE);
        o.text("token_type", "Bearer");
        o.close();
    }
}

/// The token response for a grant: an access token, and the refresh token (`secret` of grant
/// `grant_id` of the granted pairing).
#[must_use]
pub fn tokens(
    keys: &Keys,
    origin: &str,
    granted: Granted,
    grant_id: &str,
    secret: &str,
    now_ms: u64,
) -> Tokens {
    let refresh = refresh_token(keys, &granted.pairing, grant_id, secret);
    let access = Access {
        iss: origin.to_owned(),
        aud: origin.to_owned(),
        pairing: granted.pairing,
        grant: grant_id.to_owned(),
        client: granted.requester.client_name,
        host: granted.requester.host,
    };
    Tokens { access_token: token::issue(keys, access, now_ms), refresh_token: refresh }
}

// The requests to the grant's pairing, read by hand (see `tabrelay_bundle::fields`).

tabrelay_bundle::codec!(RefreshRequest, "a refresh request", { grant, secret, client_id });

tabrelay_bundle::codec!(RevokeRequest, "a revoke request", { grant, secret });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::clients::register;
    use crate::oauth::connect::Requester;

    const ORIGIN: &str = "https://relay.example";

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn read_(body: &[u8], keys: &Keys, origin: &str) -> Result<TokenRequest, OAuthError> {
        read(body, keys, origin, &mut crate::crypto::testing::Counter(5))
    }

    fn form(extra: &str) -> Vec<u8> {
        let r = register(
            &keys(),
            br#"{"redirect_uris":["https://a.example/cb"]}"#,
            0,
            &mut crate::crypto::testing::Counter(1),
        )
        .unwrap();
        let id = r.client_id;
        format!("client_id={id}&{extra}").into_bytes()
    }

    #[test]
    fn a_token_request_names_the_code_and_carries_the_proof() {
        let TokenRequest::Code(code, r) = read_(
            &form("grant_type=authorization_code&code=ABCDE12345.s3cret&code_verifier=v&redirect_uri=https%3A%2F%2Fa.example%2Fcb"),
            &keys(),
            ORIGIN,
        )
        .unwrap() else {
            panic!("a code request")
        };
        assert_eq!(code.as_str(), "ABCDE12345");
        assert_eq!(
            (r.secret.as_str(), r.redirect_uri.as_deref()),
            ("s3cret", Some("https://a.example/cb"))
        );
        assert_eq!(r.command(), Command::Redeem(r.clone()));
    }

    #[test]
    fn bad_token_requests_get_the_rfc_errors() {
        let k = keys();
        assert_eq!(
            read_(&form("grant_type=password"), &k, ORIGIN).unwrap_err().code,
            "unsupported_grant_type"
        );
        assert_eq!(read_(&form("code=x"), &k, ORIGIN).unwrap_err().code, "invalid_request");
        assert_eq!(
            read_(&form("grant_type=authorization_code&code=nodot"), &k, ORIGIN).unwrap_err().code,
            "invalid_grant"
        );
        assert_eq!(
            read_(&form("grant_type=authorization_code&code=abcde12345.x"), &k, ORIGIN)
                .unwrap_err()
                .code,
            "invalid_grant"
        );
        assert_eq!(
            read_(b"grant_type=authorization_code&client_id=forged&code=A.b", &k, ORIGIN)
                .unwrap_err()
                .code,
            "invalid_client"
        );
        let twice = form("grant_type=authorization_code&grant_type=authorization_code");
        let e = read_(&twice, &k, ORIGIN).unwrap_err();
        assert_eq!(
            (e.code, e.description),
            ("invalid_request", sentences::oauth::param_sent_twice("grant_type"))
        );
        // A parameter sent without a value is omitted, so it is not sent twice.
        let empty_then_code = form("code=&grant_type=authorization_code&code=ABCDE12345.s");
        assert!(read_(&empty_then_code, &k, ORIGIN).is_ok());
    }

    #[test]
    fn a_document_client_redeems_by_its_url_without_a_fetch() {
        let cimd = "client_id=https%3A%2F%2Fclaude.ai%2Foauth%2Fmcp-oauth-client-metadata";
        let body = format!("{cimd}&grant_type=authorization_code&code=ABCDE12345.s");
        let TokenRequest::Code(_, Redemption { client_id, .. }) =
            read_(body.as_bytes(), &keys(), ORIGIN).unwrap()
        else {
            panic!("a code request")
        };
        assert_eq!(client_id, "https://claude.ai/oauth/mcp-oauth-client-metadata");
        for bad in ["http%3A%2F%2Fclaude.ai%2Fx", "https%3A%2F%2F127.0.0.1%2Fx"] {
            let body = format!("client_id={bad}&grant_type=authorization_code&code=ABCDE12345.s");
            assert_eq!(read_(body.as_bytes(), &keys(), ORIGIN).unwrap_err().code, "invalid_client");
        }
    }

    #[test]
    fn an_empty_parameter_is_an_omitted_one() {
        assert_eq!(
            read_(&form("grant_type="), &keys(), ORIGIN).unwrap_err().code,
            "invalid_request"
        );
        let e = read_(b"grant_type=authorization_code&client_id=&code=A.b", &keys(), ORIGIN)
            .unwrap_err();
        assert_eq!((e.code, e.status), ("invalid_request", 400));
    }

    #[test]
    fn a_refresh_request_names_its_pairing_and_grant() {
        let p = "b".repeat(64);
        let token = refresh_token(&keys(), &p, "g1", "s");
        let r = read_(
            &form(&format!("grant_type=refresh_token&refresh_token={token}")),
            &keys(),
            ORIGIN,
        );
        let TokenRequest::Refresh { pairing, request } = r.unwrap() else { panic!("a refresh") };
        assert_eq!(
            (pairing.as_str(), request.grant.as_str(), request.secret.as_str()),
            (p.as_str(), "g1", "s")
        );
        let bad = read_(&form("grant_type=refresh_token&refresh_token=nonsense"), &keys(), ORIGIN);
        assert_eq!(bad.unwrap_err().code, "invalid_grant");
        let untagged = format!("grant_type=refresh_token&refresh_token={p}.g1.s");
        assert_eq!(read_(&form(&untagged), &keys(), ORIGIN).unwrap_err().code, "invalid_grant");
        let other = refresh_token(&Keys::new(&"z".repeat(32), None).unwrap(), &p, "g1", "s");
        let forged = format!("grant_type=refresh_token&refresh_token={other}");
        assert_eq!(read_(&form(&forged), &keys(), ORIGIN).unwrap_err().code, "invalid_grant");
        let none = read_(&form("grant_type=refresh_token"), &keys(), ORIGIN);
        assert_eq!(none.unwrap_err().code, "invalid_request");
    }

    #[test]
    fn a_revocation_names_the_grant_by_refresh_or_access_token() {
        let p = "c".repeat(64);
        let token = refresh_token(&keys(), &p, "g2", "sec");
        let (pairing, r) =
            revocation(format!("token={token}").as_bytes(), &keys(), ORIGIN, 0).unwrap().unwrap();
        assert_eq!(
            (pairing.as_str(), r.grant.as_str(), r.secret.as_deref()),
            (p.as_str(), "g2", Some("sec"))
        );
        let granted = Granted {
            pairing: p.clone(),
            requester: Requester {
                client_name: "C".into(),
                host: "h".into(),
                place: None,
                verified: None,
            },
        };
        let t = tokens(&keys(), ORIGIN, granted, "g3", "s", 1_000_000);
        let body = format!("token={}&token_type_hint=access_token", t.access_token);
        let (_, r) = revocation(body.as_bytes(), &keys(), ORIGIN, 1_000_000).unwrap().unwrap();
        assert_eq!((r.grant.as_str(), r.secret), ("g3", None));
        assert_eq!(revocation(b"token=nothing-of-ours", &keys(), ORIGIN, 0).unwrap(), None);
        // Made up in the right form, or altered: none of ours, so no pairing is asked.
        let made_up = format!("token={p}.g2.sec");
        assert_eq!(revocation(made_up.as_bytes(), &keys(), ORIGIN, 0).unwrap(), None);
        let altered = format!("token={}", token.replacen("g2", "g3", 1));
        assert_eq!(revocation(altered.as_bytes(), &keys(), ORIGIN, 0).unwrap(), None);
        let other_key = Keys::new(&"z".repeat(32), None).unwrap();
        let t = tokens(&other_key, ORIGIN, granted_for(&p), "g3", "s", 1_000_000);
        let forged = format!("token={}", t.access_token);
        assert_eq!(revocation(forged.as_bytes(), &keys(), ORIGIN, 1_000_000).unwrap(), None);
        assert_eq!(revocation(b"", &keys(), ORIGIN, 0).unwrap_err().code, "invalid_request");
    }

    fn granted_for(pairing: &str) -> Granted {
        Granted {
            pairing: pairing.into(),
            requester: Requester {
                client_name: "C".into(),
                host: "h".into(),
                place: None,
                verified: None,
            },
        }
    }

    #[test]
    fn the_issued_token_names_the_pairing_and_verifies() {
        let granted = Granted {
            pairing: "p".into(),
            requester: Requester {
                client_name: "Claude".into(),
                host: "claude.ai".into(),
                place: None,
                verified: None,
            },
        };
        let t = tokens(&keys(), ORIGIN, granted, "g", "sec", 1_000_000);
        assert_eq!(t.refresh_token, refresh_token(&keys(), "p", "g", "sec"));
        let access = token::verify(&keys(), ORIGIN, &t.access_token, 1_000_000).unwrap();
        assert_eq!((access.pairing.as_str(), access.grant.as_str()), ("p", "g"));
        // The response, byte for byte as serde_json wrote it as a value.
        let written = serde_json::json!({
            "access_token": t.access_token,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": t.refresh_token,
            "scope": "tab",
        });
        assert_eq!(String::from_utf8(t.to_json()).unwrap(), written.to_string());
    }
}
