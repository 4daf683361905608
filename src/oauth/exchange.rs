//! The token endpoint: reading its form into a redemption, and answering with tokens.

use serde_json::{json, Value};

use super::clients;
use super::connect::{Command, ConnectCode, Granted};
use super::error::OAuthError;
use super::keys::Keys;
use super::metadata::SCOPE;
use super::token::{self, Access};
use super::ACCESS_TOKEN_TTL_S;

/// The largest token request body read, in bytes.
pub const MAX_FORM_BYTES: usize = 8 * 1024;

/// Reads a token request: the code's Durable Object and what to ask it.
pub fn read(body: &[u8], keys: &Keys, origin: &str) -> Result<(ConnectCode, Command), OAuthError> {
    if body.len() > MAX_FORM_BYTES {
        return Err(OAuthError::invalid_request(format!(
            "The request is larger than the {MAX_FORM_BYTES} bytes allowed."
        )));
    }
    let pairs: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
    let mut seen: Vec<&str> = Vec::new();
    for (k, _) in &pairs {
        if seen.contains(&k.as_str()) {
            return Err(OAuthError::invalid_request(format!("The parameter {k} is sent twice.")));
        }
        seen.push(k);
    }
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    match param("grant_type").as_deref() {
        Some("authorization_code") => {}
        Some(_) => {
            return Err(OAuthError::unsupported_grant_type(
                "Only the authorization_code grant is supported.",
            ))
        }
        None => return Err(OAuthError::invalid_request("The grant_type is missing.")),
    }
    let client_id = param("client_id")
        .ok_or_else(|| OAuthError::invalid_request("The client_id is missing."))?;
    clients::resolve(keys, &client_id)?;
    let code = param("code").ok_or_else(|| OAuthError::invalid_request("The code is missing."))?;
    let unknown = || OAuthError::invalid_grant("The authorization code is unknown or expired.");
    let (connect, secret) = code.split_once('.').ok_or_else(unknown)?;
    let connect =
        ConnectCode::parse(connect).filter(|c| c.as_str() == connect).ok_or_else(unknown)?;
    let command = Command::Redeem {
        secret: secret.to_owned(),
        client_id,
        redirect_uri: param("redirect_uri"),
        code_verifier: param("code_verifier"),
        resource: param("resource"),
        origin: origin.to_owned(),
    };
    Ok((connect, command))
}

/// The token response for a redeemed code.
#[must_use]
pub fn tokens(keys: &Keys, origin: &str, granted: Granted, grant_id: String, now_ms: u64) -> Value {
    let access = Access {
        iss: origin.to_owned(),
        aud: origin.to_owned(),
        sub: granted.pairing,
        gid: grant_id,
        cli: granted.client_name,
        hst: granted.host,
    };
    json!({
        "access_token": token::issue(keys, access, now_ms),
        "token_type": "Bearer",
        "expires_in": ACCESS_TOKEN_TTL_S,
        "scope": SCOPE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::clients::register;

    const ORIGIN: &str = "https://relay.example";

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn form(extra: &str) -> Vec<u8> {
        let r = register(&keys(), br#"{"redirect_uris":["https://a.example/cb"]}"#, 0).unwrap();
        let id = r["client_id"].as_str().unwrap();
        format!("client_id={id}&{extra}").into_bytes()
    }

    #[test]
    fn a_token_request_names_the_code_and_carries_the_proof() {
        let (code, cmd) = read(
            &form("grant_type=authorization_code&code=ABCDE12345.s3cret&code_verifier=v&redirect_uri=https%3A%2F%2Fa.example%2Fcb"),
            &keys(),
            ORIGIN,
        )
        .unwrap();
        assert_eq!(code.as_str(), "ABCDE12345");
        assert!(matches!(cmd, Command::Redeem { ref secret, ref redirect_uri, .. }
            if secret == "s3cret" && redirect_uri.as_deref() == Some("https://a.example/cb")));
    }

    #[test]
    fn bad_token_requests_get_the_rfc_errors() {
        let k = keys();
        assert_eq!(
            read(&form("grant_type=password"), &k, ORIGIN).unwrap_err().code,
            "unsupported_grant_type"
        );
        assert_eq!(read(&form("code=x"), &k, ORIGIN).unwrap_err().code, "invalid_request");
        assert_eq!(
            read(&form("grant_type=authorization_code&code=nodot"), &k, ORIGIN).unwrap_err().code,
            "invalid_grant"
        );
        assert_eq!(
            read(&form("grant_type=authorization_code&code=abcde12345.x"), &k, ORIGIN)
                .unwrap_err()
                .code,
            "invalid_grant"
        );
        assert_eq!(
            read(b"grant_type=authorization_code&client_id=forged&code=A.b", &k, ORIGIN)
                .unwrap_err()
                .code,
            "invalid_client"
        );
        assert_eq!(
            read(&form("grant_type=authorization_code&grant_type=authorization_code"), &k, ORIGIN)
                .unwrap_err()
                .code,
            "invalid_request"
        );
    }

    #[test]
    fn the_issued_token_names_the_pairing_and_verifies() {
        let granted =
            Granted { pairing: "p".into(), client_name: "Claude".into(), host: "claude.ai".into() };
        let t = tokens(&keys(), ORIGIN, granted, "g".into(), 1_000_000);
        let access =
            token::verify(&keys(), ORIGIN, t["access_token"].as_str().unwrap(), 1_000_000).unwrap();
        assert_eq!((access.sub.as_str(), access.gid.as_str()), ("p", "g"));
        assert_eq!(t["expires_in"], 3600);
    }
}
