//! The OAuth errors a client reads (RFC 6749 §5.2, RFC 7591 §3.2.2), each with a sentence.

/// The challenge of an `invalid_client` answer.
pub const CLIENT_CHALLENGE: &str = r#"Basic realm="tabrelay""#;

/// An OAuth error: the code a client understands and a sentence a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    /// The RFC's error code.
    pub code: &'static str,
    /// One sentence.
    pub description: String,
    /// The HTTP status it is answered with.
    pub status: u16,
}

impl OAuthError {
    fn new(code: &'static str, status: u16, description: impl Into<String>) -> Self {
        Self { code, description: description.into(), status }
    }
    /// The request is malformed.
    pub fn invalid_request(d: impl Into<String>) -> Self {
        Self::new("invalid_request", 400, d)
    }
    /// The body is larger than the endpoint reads ([`crate::routes::body_cap`]): 413, unread
    /// past the cap.
    pub fn too_large(cap: usize) -> Self {
        Self::new("invalid_request", 413, crate::sentences::too_large(cap))
    }
    /// The client is unknown or its id does not verify (after a key rotation, say). 401, which
    /// RFC 6749 §5.2 allows: clients such as Claude register again only on a 401, and a 400
    /// would leave them retrying a client id that can never work. Answered with
    /// [`Self::challenge`].
    pub fn invalid_client(d: impl Into<String>) -> Self {
        Self::new("invalid_client", 401, d)
    }
    /// The relay cannot take the request now (RFC 6749 §4.1.2.1): `status` 429 for a sender
    /// past its limit, 503 for a request the limit could not count.
    pub fn temporarily_unavailable(status: u16, d: impl Into<String>) -> Self {
        Self::new("temporarily_unavailable", status, d)
    }
    /// The code, verifier or refresh token is wrong, used or expired.
    pub fn invalid_grant(d: impl Into<String>) -> Self {
        Self::new("invalid_grant", 400, d)
    }
    /// The grant type is not one this server issues.
    pub fn unsupported_grant_type(d: impl Into<String>) -> Self {
        Self::new("unsupported_grant_type", 400, d)
    }
    /// The resource is not this server.
    pub fn invalid_target(d: impl Into<String>) -> Self {
        Self::new("invalid_target", 400, d)
    }
    /// A redirect URI in a registration is not allowed.
    pub fn invalid_redirect_uri(d: impl Into<String>) -> Self {
        Self::new("invalid_redirect_uri", 400, d)
    }
    /// Registration metadata is not allowed.
    pub fn invalid_client_metadata(d: impl Into<String>) -> Self {
        Self::new("invalid_client_metadata", 400, d)
    }
    /// An error read back by its code (as a code's Durable Object says it): one of the codes
    /// above, else `invalid_grant`, the token endpoint's answer to a code it cannot redeem.
    pub fn read(code: &str, d: impl Into<String>) -> Self {
        match code {
            "invalid_request" => Self::invalid_request(d),
            "invalid_client" => Self::invalid_client(d),
            "unsupported_grant_type" => Self::unsupported_grant_type(d),
            "invalid_target" => Self::invalid_target(d),
            "invalid_redirect_uri" => Self::invalid_redirect_uri(d),
            "invalid_client_metadata" => Self::invalid_client_metadata(d),
            _ => Self::invalid_grant(d),
        }
    }
    /// The `WWW-Authenticate` header a 401 carries (RFC 9110 §15.5.2 requires one): the Basic
    /// scheme RFC 6749 §2.3.1 names for client authentication. Public clients send no
    /// credentials; the header only says which scheme the endpoint would take. Browsers show no
    /// prompt for it: a CORS response never prompts, and the relay's own pages do not call the
    /// token endpoint.
    #[must_use]
    pub fn challenge(&self) -> Option<&'static str> {
        (self.status == 401).then_some(CLIENT_CHALLENGE)
    }
    /// The JSON body (`{"error": …, "error_description": …}`, written by its codec in
    /// [`crate::oauth::connect::wire`]).
    #[must_use]
    pub fn body(&self) -> Vec<u8> {
        tabrelay_bundle::fields::Encode::to_json(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_client_is_a_401_with_a_challenge_and_the_rest_are_400s_without() {
        let e = OAuthError::invalid_client("Register again.");
        assert_eq!((e.status, e.challenge()), (401, Some(CLIENT_CHALLENGE)));
        for e in [
            OAuthError::invalid_request("x"),
            OAuthError::invalid_grant("x"),
            OAuthError::unsupported_grant_type("x"),
            OAuthError::invalid_target("x"),
            OAuthError::invalid_redirect_uri("x"),
            OAuthError::invalid_client_metadata("x"),
        ] {
            assert_eq!((e.status, e.challenge()), (400, None), "{}", e.code);
        }
        for e in [
            OAuthError::invalid_request("x"),
            OAuthError::invalid_client("x"),
            OAuthError::invalid_grant("x"),
            OAuthError::unsupported_grant_type("x"),
            OAuthError::invalid_target("x"),
            OAuthError::invalid_redirect_uri("x"),
            OAuthError::invalid_client_metadata("x"),
        ] {
            assert_eq!(OAuthError::read(e.code, "x"), e, "read back by its code");
        }
        assert_eq!(OAuthError::read("made_up", "x"), OAuthError::invalid_grant("x"));
        let e = OAuthError::too_large(8192);
        assert_eq!((e.code, e.status, e.challenge()), ("invalid_request", 413, None));
        assert!(e.description.contains("8192 bytes"), "{}", e.description);
    }
}
