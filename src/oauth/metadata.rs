//! The discovery documents: protected-resource metadata (RFC 9728) and authorization-server
//! metadata (RFC 8414, with RFC 9207's `iss`).

use serde_json::{json, Value};

/// The scope a connection is granted.
pub const SCOPE: &str = "tab";

/// `/.well-known/oauth-protected-resource`: the resource is the bare origin.
#[must_use]
pub fn protected_resource(origin: &str) -> Value {
    json!({
        "resource": origin,
        "authorization_servers": [origin],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "Tabrelay",
    })
}

/// `/.well-known/oauth-authorization-server`. It advertises Client ID Metadata Documents with
/// the public-client method `none`: Claude and ChatGPT then use a URL as their client id
/// instead of registering.
#[must_use]
pub fn authorization_server(origin: &str) -> Value {
    json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "registration_endpoint": format!("{origin}/register"),
        "revocation_endpoint": format!("{origin}/revoke"),
        "revocation_endpoint_auth_methods_supported": ["none"],
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": [SCOPE],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    })
}

/// The `WWW-Authenticate` header of a 401 from the MCP endpoint; it names the error when the
/// request carried a token (RFC 6750 §3.1).
#[must_use]
pub fn www_authenticate(origin: &str, token_presented: bool) -> String {
    let error = if token_presented { "error=\"invalid_token\", " } else { "" };
    format!("Bearer {error}resource_metadata=\"{origin}/.well-known/oauth-protected-resource\"")
}
