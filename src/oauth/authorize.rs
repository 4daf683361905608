//! The authorization request: every check made before the waiting page is shown, and where
//! each refusal goes (the page, when the redirect URI is not verified; else the client).

use serde::{Deserialize, Serialize};

use super::clients::{self, Client};
use super::keys::Keys;
use super::pkce;

/// The longest value of any authorization parameter, in bytes.
pub const MAX_PARAM_BYTES: usize = 2048;

/// A checked authorization request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthRequest {
    /// The client's id.
    pub client_id: String,
    /// The client's name (as registered, not verified).
    pub client_name: String,
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
    /// Shown on the page: the redirect URI could not be verified, so nothing is redirected.
    Page(String),
    /// Sent to the client's verified redirect URI.
    Redirect(String),
}

/// Whether `resource` names this origin (with or without the trailing slash).
#[must_use]
pub fn is_this_resource(resource: &str, origin: &str) -> bool {
    resource == origin || resource.strip_suffix('/') == Some(origin)
}

/// Checks an authorization request's query parameters.
pub fn validate(
    pairs: &[(String, String)],
    keys: &Keys,
    origin: &str,
) -> Result<AuthRequest, Refusal> {
    let page = |s: &str| Refusal::Page(s.to_owned());
    let mut seen: Vec<&str> = Vec::new();
    for (k, v) in pairs {
        if seen.contains(&k.as_str()) {
            return Err(page(
                "The request names a parameter twice; start connecting again from the app.",
            ));
        }
        if v.len() > MAX_PARAM_BYTES {
            return Err(page(
                "A parameter of the request is too long; start connecting again from the app.",
            ));
        }
        seen.push(k);
    }
    let param = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let client_id = param("client_id").ok_or_else(|| page("The request names no client."))?;
    let client: Client = clients::resolve(keys, client_id)
        .map_err(|_| page("The app asking is not registered with this relay; start connecting again from the app."))?;
    let redirect_uri = match param("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| clients::redirect_matches(r, uri)) => {
            uri.to_owned()
        }
        Some(_) => return Err(page("The address to return to is not one the app registered, so the relay will not send you there.")),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return Err(page("The request does not say where to return to.")),
    };
    let state = param("state").map(str::to_owned);
    let back = |error: &str, description: &str| {
        let mut p: Vec<(&str, &str)> = vec![("error", error), ("error_description", description)];
        if let Some(s) = &state {
            p.push(("state", s));
        }
        p.push(("iss", origin));
        Refusal::Redirect(redirect_url(&redirect_uri, &p))
    };
    match param("response_type") {
        Some("code") => {}
        Some(_) => {
            return Err(back("unsupported_response_type", "Only response_type=code is supported."))
        }
        None => return Err(back("invalid_request", "The request needs response_type=code.")),
    }
    let code_challenge = match (param("code_challenge"), param("code_challenge_method")) {
        (Some(c), Some("S256")) if pkce::is_s256_challenge(c) => c.to_owned(),
        (Some(_), Some("S256")) => {
            return Err(back("invalid_request", "The code_challenge is not an S256 challenge."))
        }
        (None, _) => {
            return Err(back(
                "invalid_request",
                "PKCE is required: send code_challenge with code_challenge_method=S256.",
            ))
        }
        (Some(_), _) => {
            return Err(back(
                "invalid_request",
                "Only the S256 code_challenge_method is supported.",
            ))
        }
    };
    let resource = param("resource").map(str::to_owned);
    if let Some(r) = &resource {
        if !is_this_resource(r, origin) {
            return Err(back("invalid_target", "The resource is not this relay."));
        }
    }
    Ok(AuthRequest {
        client_id: client_id.to_owned(),
        client_name: client.name,
        redirect_uri,
        state,
        code_challenge,
        resource,
        scope: param("scope").map(str::to_owned),
    })
}

/// `uri` with `params` added to its query.
#[must_use]
pub fn redirect_url(uri: &str, params: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        query.append_pair(k, v);
    }
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{}", query.finish())
}

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
            &mut crate::oauth::testing::Counter(1),
        )
        .unwrap();
        r["client_id"].as_str().unwrap().to_owned()
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

    #[test]
    fn a_good_request_is_accepted() {
        let r = validate(&query(&[]), &keys(), ORIGIN).unwrap();
        assert_eq!(r.client_name, "Claude");
        assert_eq!(r.state.as_deref(), Some("xyz"));
        assert!(validate(&query(&[("resource", Some("https://relay.example/"))]), &keys(), ORIGIN)
            .is_ok());
    }

    #[test]
    fn an_unverified_redirect_is_never_followed() {
        for bad in [
            "https://evil.example/cb",
            "https://claude.ai/cb/",
            "https://claude.ai/CB",
            " https://claude.ai/cb",
        ] {
            let e = validate(&query(&[("redirect_uri", Some(bad))]), &keys(), ORIGIN).unwrap_err();
            assert!(matches!(e, Refusal::Page(_)), "{bad}");
        }
        let e = validate(&query(&[("client_id", Some("forged"))]), &keys(), ORIGIN).unwrap_err();
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
            match validate(&q, &keys(), ORIGIN).unwrap_err() {
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
}
