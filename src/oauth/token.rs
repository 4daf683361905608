//! Access tokens: HS256 JWTs with a key id, `aud` = this origin, naming the pairing and grant.
//! One shape only, signed and checked here over HMAC-SHA-256 (see Cargo.toml for why).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use tabrelay_bundle::fields::Encode;

use super::keys::{Keys, Purpose};
use crate::limits::ACCESS_TOKEN_TTL_S;

/// What an access token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The issuer: this origin.
    pub iss: String,
    /// The audience: this origin.
    pub aud: String,
    /// The pairing the token reaches (the `sub` claim).
    pub pairing: String,
    /// The grant it belongs to (`gid`).
    pub grant: String,
    /// The client's name (`cli`).
    pub client: String,
    /// The host of the client's redirect URI (`hst`).
    pub host: String,
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

const ALG: &str = "HS256";
const TYP: &str = "at+jwt";

struct Header {
    alg: String,
    kid: Option<String>,
    typ: Option<String>,
}

struct Claims {
    iat: u64,
    exp: u64,
    iss: String,
    aud: String,
    sub: String,
    gid: String,
    cli: String,
    hst: String,
}

fn part(value: &dyn Encode) -> String {
    let mut out = Vec::new();
    value.write_json(&mut out);
    crate::crypto::base64url(&out)
}

/// Signs an access token with the current key.
#[must_use]
pub fn issue(keys: &Keys, access: Access, now_ms: u64) -> String {
    let header =
        Header { alg: ALG.into(), kid: Some(keys.current.id.clone()), typ: Some(TYP.into()) };
    let iat = now_ms / 1000;
    let Access { iss, aud, pairing, grant, client, host } = access;
    let exp = iat + ACCESS_TOKEN_TTL_S;
    let claims = Claims { iat, exp, iss, aud, sub: pairing, gid: grant, cli: client, hst: host };
    let mut token = part(&header);
    token.push('.');
    token.push_str(&part(&claims));
    keys.sign(Purpose::AccessToken, token)
}

/// Verifies an access token for this origin at `now_ms`.
pub fn verify(keys: &Keys, origin: &str, token: &str, now_ms: u64) -> Result<Access, TokenError> {
    let (signing_input, signature) = token.rsplit_once('.').ok_or(TokenError::Malformed)?;
    let (header, claims) = signing_input.split_once('.').ok_or(TokenError::Malformed)?;
    let header: Header = B64
        .decode(header)
        .ok()
        .and_then(|h| tabrelay_bundle::from_json(&h))
        .ok_or(TokenError::Malformed)?;
    if header.alg != ALG {
        return Err(TokenError::UnknownKey);
    }
    let key =
        header.kid.as_deref().and_then(|kid| keys.by_id(kid)).ok_or(TokenError::UnknownKey)?;
    let signature = B64.decode(signature).map_err(|_| TokenError::Malformed)?;
    if !key.verifies(Purpose::AccessToken, signing_input.as_bytes(), &signature) {
        return Err(TokenError::BadSignature);
    }
    let claims: Claims = B64
        .decode(claims)
        .ok()
        .and_then(|c| tabrelay_bundle::from_json(&c))
        .ok_or(TokenError::Malformed)?;
    if claims.exp <= now_ms / 1000 {
        return Err(TokenError::Expired);
    }
    if claims.aud != origin || claims.iss != origin {
        return Err(TokenError::WrongAudience);
    }
    let Claims { iss, aud, sub, gid, cli, hst, .. } = claims;
    Ok(Access { iss, aud, pairing: sub, grant: gid, client: cli, host: hst })
}
tabrelay_bundle::codec!(Header, "a JWT header", { alg, kid, typ });

tabrelay_bundle::codec!(Claims, "a JWT's claims", { iat, exp, iss, aud, sub, gid, cli, hst });

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: &str = "https://relay.example";
    const NOW: u64 = 1_790_000_000_000;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(40), None).unwrap()
    }

    fn access() -> Access {
        Access {
            iss: ORIGIN.into(),
            aud: ORIGIN.into(),
            pairing: "pairing".into(),
            grant: "grant".into(),
            client: "Claude".into(),
            host: "claude.ai".into(),
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
