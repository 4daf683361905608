//! Access tokens: HS256 JWTs with a key id, `aud` = this origin, naming the pairing and grant.

use chrono::{DateTime, Duration, Utc};
use jwt_compact::alg::{Hs256, Hs256Key};
use jwt_compact::{AlgorithmExt as _, Claims, Header, TimeOptions, UntrustedToken};
use serde::{Deserialize, Serialize};

use super::keys::{Keys, Purpose};
use super::ACCESS_TOKEN_TTL_S;

/// What an access token says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The issuer: this origin.
    pub iss: String,
    /// The audience: this origin.
    pub aud: String,
    /// The pairing the token reaches.
    pub sub: String,
    /// The grant it belongs to.
    pub gid: String,
    /// The client's name.
    pub cli: String,
    /// The host of the client's redirect URI.
    pub hst: String,
}

/// Why a token was refused (the client is told only that it is invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenError {
    /// Not a JWT, or not ours.
    Malformed,
    /// Signed with a key the relay does not hold, or with another algorithm.
    UnknownKey,
    /// The signature does not verify.
    BadSignature,
    /// Past its expiry.
    Expired,
    /// For another audience or issuer.
    WrongAudience,
}

fn time(now_ms: u64) -> TimeOptions<impl Fn() -> DateTime<Utc>> {
    let now = DateTime::<Utc>::from_timestamp_millis(i64::try_from(now_ms).unwrap_or(i64::MAX))
        .unwrap_or_default();
    TimeOptions::new(Duration::seconds(0), move || now)
}

/// Signs an access token with the current key.
#[must_use]
pub fn issue(keys: &Keys, access: Access, now_ms: u64) -> String {
    let key = Hs256Key::new(keys.current.derived(Purpose::AccessToken));
    let header = Header::empty().with_key_id(keys.current.id.clone()).with_token_type("at+jwt");
    let claims = Claims::new(access)
        .set_duration_and_issuance(&time(now_ms), Duration::seconds(ACCESS_TOKEN_TTL_S));
    // Signing with HMAC cannot fail for serialisable claims.
    Hs256.token(&header, &claims, &key).unwrap_or_default()
}

/// Verifies an access token for this origin at `now_ms`.
pub fn verify(keys: &Keys, origin: &str, token: &str, now_ms: u64) -> Result<Access, TokenError> {
    let untrusted = UntrustedToken::new(token).map_err(|_| TokenError::Malformed)?;
    if untrusted.algorithm() != "HS256" {
        return Err(TokenError::UnknownKey);
    }
    let kid = untrusted.header().key_id.as_deref().ok_or(TokenError::UnknownKey)?;
    let key = keys.by_id(kid).ok_or(TokenError::UnknownKey)?;
    let key = Hs256Key::new(key.derived(Purpose::AccessToken));
    let token = Hs256.validator::<Access>(&key).validate(&untrusted).map_err(|e| match e {
        jwt_compact::ValidationError::InvalidSignature => TokenError::BadSignature,
        _ => TokenError::Malformed,
    })?;
    let claims = token.claims();
    claims.validate_expiration(&time(now_ms)).map_err(|_| TokenError::Expired)?;
    if claims.custom.aud != origin || claims.custom.iss != origin {
        return Err(TokenError::WrongAudience);
    }
    Ok(claims.custom.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    const ORIGIN: &str = "https://relay.example";
    const NOW: u64 = 1_790_000_000_000;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(40), None).unwrap()
    }

    fn access() -> Access {
        Access {
            iss: ORIGIN.into(),
            aud: ORIGIN.into(),
            sub: "pairing".into(),
            gid: "grant".into(),
            cli: "Claude".into(),
            hst: "claude.ai".into(),
        }
    }

    #[test]
    fn a_token_verifies_until_it_expires() {
        let t = issue(&keys(), access(), NOW);
        assert_eq!(verify(&keys(), ORIGIN, &t, NOW), Ok(access()));
        assert_eq!(verify(&keys(), ORIGIN, &t, NOW + 3_599_000), Ok(access()));
        assert_eq!(verify(&keys(), ORIGIN, &t, NOW + 3_601_000), Err(TokenError::Expired));
    }

    #[test]
    fn tokens_for_another_audience_or_key_are_refused() {
        let t = issue(&keys(), access(), NOW);
        assert_eq!(
            verify(&keys(), "https://other.example", &t, NOW),
            Err(TokenError::WrongAudience)
        );
        let other = Keys::new(&"z".repeat(40), None).unwrap();
        assert_eq!(verify(&other, ORIGIN, &t, NOW), Err(TokenError::UnknownKey));
        let rotated = Keys::new(&"z".repeat(40), Some(&"k".repeat(40))).unwrap();
        assert_eq!(verify(&rotated, ORIGIN, &t, NOW), Ok(access()));
    }

    #[test]
    fn tampered_and_unsigned_tokens_are_refused() {
        let t = issue(&keys(), access(), NOW);
        let mut parts: Vec<String> = t.split('.').map(String::from).collect();
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut claims: serde_json::Value =
            serde_json::from_slice(&b64.decode(&parts[1]).unwrap()).unwrap();
        claims["sub"] = "someone-else".into();
        parts[1] = b64.encode(serde_json::to_vec(&claims).unwrap());
        assert_eq!(verify(&keys(), ORIGIN, &parts.join("."), NOW), Err(TokenError::BadSignature));
        let none_header = b64.encode(format!(r#"{{"alg":"none","kid":"{}"}}"#, keys().current.id));
        let unsigned = format!("{none_header}.{}.", parts[1]);
        assert_eq!(verify(&keys(), ORIGIN, &unsigned, NOW), Err(TokenError::UnknownKey));
        assert_eq!(verify(&keys(), ORIGIN, "not-a-token", NOW), Err(TokenError::Malformed));
    }
}
