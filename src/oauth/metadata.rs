//! The discovery documents: protected-resource metadata (RFC 9728) and authorization-server
//! metadata (RFC 8414, with RFC 9207's `iss`).
//!
//! Each is one constant JSON text with the origin spliced in where `{origin}` stands (its keys
//! in the order a JSON map sorts them, as the documents were written before).

use tabrelay_bundle::fields::Encode;

/// The scope a connection is granted.
pub const SCOPE: &str = "tab";

/// Where the origin goes in a document.
const ORIGIN: &str = "{origin}";

const PROTECTED_RESOURCE: &str = concat!(
    r#"{"authorization_servers":["{origin}"],"#,
    r#""bearer_methods_supported":["header"],"#,
    r#""resource":"{origin}","#,
    r#""resource_name":"Tabrelay","#,
    r#""scopes_supported":["tab"]}"#,
);

const AUTHORIZATION_SERVER: &str = concat!(
    r#"{"authorization_endpoint":"{origin}/authorize","#,
    r#""authorization_response_iss_parameter_supported":true,"#,
    r#""client_id_metadata_document_supported":true,"#,
    r#""code_challenge_methods_supported":["S256"],"#,
    r#""grant_types_supported":["authorization_code","refresh_token"],"#,
    r#""issuer":"{origin}","#,
    r#""registration_endpoint":"{origin}/register","#,
    r#""response_types_supported":["code"],"#,
    r#""revocation_endpoint":"{origin}/revoke","#,
    r#""revocation_endpoint_auth_methods_supported":["none"],"#,
    r#""scopes_supported":["tab"],"#,
    r#""token_endpoint":"{origin}/token","#,
    r#""token_endpoint_auth_methods_supported":["none"]}"#,
);

/// `/.well-known/oauth-protected-resource`, as JSON text: the resource is the bare origin.
#[must_use]
pub fn protected_resource(origin: &str) -> Vec<u8> {
    with_origin(PROTECTED_RESOURCE, origin)
}

/// `/.well-known/oauth-authorization-server`, as JSON text. It advertises Client ID Metadata
/// Documents with the public-client method `none`: Claude and ChatGPT then use a URL as their
/// client id instead of registering.
#[must_use]
pub fn authorization_server(origin: &str) -> Vec<u8> {
    with_origin(AUTHORIZATION_SERVER, origin)
}

/// `document` with the origin, escaped as inside a JSON string, where `{origin}` stands.
fn with_origin(document: &str, origin: &str) -> Vec<u8> {
    let quoted = String::from_utf8(Encode::to_json(origin)).unwrap_or_default();
    let escaped = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')).unwrap_or_default();
    crate::text::replace(document, ORIGIN, escaped).into_bytes()
}

/// The `WWW-Authenticate` header of a 401 from the MCP endpoint; it names the error when the
/// request carried a token (RFC 6750 §3.1).
#[must_use]
pub fn www_authenticate(origin: &str, token_presented: bool) -> String {
    let error = if token_presented { "error=\"invalid_token\", " } else { "" };
    format!("Bearer {error}resource_metadata=\"{origin}/.well-known/oauth-protected-resource\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The documents are, byte for byte, what serde_json wrote of them as values.
    #[test]
    fn the_documents_are_the_json_they_were() {
        for origin in ["https://relay.example", "http://127.0.0.1:8787", "odd\"one\\"] {
            let protected = json!({
                "resource": origin,
                "authorization_servers": [origin],
                "scopes_supported": [SCOPE],
                "bearer_methods_supported": ["header"],
                "resource_name": "Tabrelay",
            });
            assert_eq!(protected_resource(origin), protected.to_string().into_bytes());
            let server = json!({
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
            });
            assert_eq!(authorization_server(origin), server.to_string().into_bytes());
        }
    }
}
