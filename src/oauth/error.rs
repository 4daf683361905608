//! The OAuth errors a client reads (RFC 6749 §5.2, RFC 7591 §3.2.2), each with a sentence.

use serde_json::{json, Value};

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
    /// The client is unknown or its id does not verify. 400, not 401: public clients
    /// authenticate with no scheme a 401 could name (RFC 6749 §5.2 leaves 401 optional).
    pub fn invalid_client(d: impl Into<String>) -> Self {
        Self::new("invalid_client", 400, d)
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
    /// The JSON body.
    #[must_use]
    pub fn body(&self) -> Value {
        json!({"error": self.code, "error_description": self.description})
    }
}
