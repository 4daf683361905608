//! Access tokens: HS256 JWTs with a key id, `aud` = this origin, naming the pairing and grant.
//! One shape only, signed and checked here over HMAC-SHA-256 (see Cargo.toml for why).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use tabrelay_bundle::fields::Encode;

use crate::crypto::same_bytes;
use crate::keys::{Keys, Purpose};
use crate::limits::{ACCESS_TOKEN_TTL_S, VERIFIED_KEPT};

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
    verify_claims(keys, origin, token, now_ms).map(|(access, _)| access)
}

/// The tokens an isolate verified last ([`VERIFIED_KEPT`] of them), so that a client's calls
/// with one token read and check it once: a token is kept only once it verified, it is found
/// again only by a comparison of the whole of it that takes the same time wherever the two
/// differ, and its expiry, audience and key are checked again on every use. Only verified
/// tokens enter, so an outsider's tokens never displace anyone's; a client with many tokens
/// displaces others', who then verify theirs again (the cost of a miss, never a refusal).
#[derive(Default)]
pub struct Verified {
    kept: core::cell::RefCell<Vec<Kept>>,
    /// Where the next token is kept (the oldest goes first).
    next: core::cell::Cell<usize>,
}

struct Kept {
    token: String,
    /// The key it was signed with (a key's id is a hash of its secret).
    kid: String,
    exp_s: u64,
    access: Access,
}

impl Verified {
    /// None kept yet.
    #[must_use]
    pub const fn new() -> Self {
        Self { kept: core::cell::RefCell::new(Vec::new()), next: core::cell::Cell::new(0) }
    }

    /// [`verify`], answered from what is kept when `token` verified before.
    pub fn verify(
        &self,
        keys: &Keys,
        origin: &str,
        token: &str,
        now_ms: u64,
    ) -> Result<Access, TokenError> {
        let mut kept_tokens = self.kept.borrow_mut();
        let found = kept_tokens.iter().find(|k| same_bytes(&k.token, token));
        if let Some(kept) = found.filter(|k| keys.by_id(&k.kid).is_some()) {
            let Access { iss, aud, .. } = &kept.access;
            return still_valid(kept.exp_s, iss, aud, origin, now_ms).map(|()| kept.access.clone());
        }
        let (access, claims) = verify_claims(keys, origin, token, now_ms)?;
        let kept = Kept { token: token.to_owned(), kid: claims.kid, exp_s: claims.exp, access };
        let access = kept.access.clone();
        let next = self.next.get();
        match kept_tokens.get_mut(next) {
            Some(slot) => *slot = kept,
            None => kept_tokens.push(kept),
        }
        self.next.set((next + 1) % VERIFIED_KEPT);
        Ok(access)
    }
}

/// What is checked of a signed token's claims at every use: it has not expired (`exp`, in
/// seconds), and it is this origin's.
fn still_valid(
    exp: u64,
    iss: &str,
    aud: &str,
    origin: &str,
    now_ms: u64,
) -> Result<(), TokenError> {
    if exp <= now_ms / 1000 {
        return Err(TokenError::Expired);
    }
    if aud != origin || iss != origin {
        return Err(TokenError::WrongAudience);
    }
    Ok(())
}

/// What a verified token says beyond its access: its key and expiry.
struct Checked {
    kid: String,
    exp: u64,
}

fn verify_claims(
    keys: &Keys,
    origin: &str,
    token: &str,
    now_ms: u64,
) -> Result<(Access, Checked), TokenError> {
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
    // Only an access token (RFC 9068 §4): a JWT of another type is never one, whoever signed it.
    if header.typ.as_deref() != Some(TYP) {
        return Err(TokenError::Malformed);
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
    still_valid(claims.exp, &claims.iss, &claims.aud, origin, now_ms)?;
    let Claims { iss, aud, sub, gid, cli, hst, exp, .. } = claims;
    let checked = Checked { kid: key.id.clone(), exp };
    Ok((Access { iss, aud, pairing: sub, grant: gid, client: cli, host: hst }, checked))
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

    /// A JWT signed with the access tokens' own key but of another type (or none) is not an
    /// access token (RFC 9068 §4: `typ` is `at+jwt`).
    #[test]
    fn a_token_of_another_type_is_refused() {
        let t = issue(&keys(), access(), NOW);
        let (header, rest) = t.split_once('.').unwrap();
        let claims = rest.rsplit_once('.').unwrap().0;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let kid = &keys().current.id;
        let ours = String::from_utf8(b64.decode(header).unwrap()).unwrap();
        assert!(ours.contains(r#""typ":"at+jwt""#), "{ours}");
        for typ in [r#","typ":"JWT""#, r#","typ":"AT+JWT ""#, r#","typ":null"#, ""] {
            let header = b64.encode(format!(r#"{{"alg":"HS256","kid":"{kid}"{typ}}}"#));
            let signed = keys().sign(Purpose::AccessToken, format!("{header}.{claims}"));
            assert_eq!(verify(&keys(), ORIGIN, &signed, NOW), Err(TokenError::Malformed), "{typ}");
            let kept = Verified::new();
            assert!(kept.verify(&keys(), ORIGIN, &signed, NOW).is_err(), "{typ}");
        }
    }

    #[test]
    fn a_kept_token_is_checked_again_on_every_use() {
        let (kept, t) = (Verified::new(), issue(&keys(), access(), NOW));
        assert_eq!(kept.verify(&keys(), ORIGIN, &t, NOW), Ok(access()));
        assert_eq!(kept.kept.borrow().len(), 1);
        assert_eq!(kept.verify(&keys(), ORIGIN, &t, NOW + 1_000), Ok(access()));
        assert_eq!(kept.verify(&keys(), ORIGIN, &t, NOW + 3_601_000), Err(TokenError::Expired));
        let elsewhere = kept.verify(&keys(), "https://other.example", &t, NOW);
        assert_eq!(elsewhere, Err(TokenError::WrongAudience));
        let other = Keys::new(&"z".repeat(40), None).unwrap();
        assert_eq!(kept.verify(&other, ORIGIN, &t, NOW), Err(TokenError::UnknownKey));
        assert_eq!(kept.kept.borrow().len(), 1, "a refusal keeps nothing");
    }

    #[test]
    fn only_the_same_token_is_answered_from_what_is_kept() {
        let (kept, t) = (Verified::new(), issue(&keys(), access(), NOW));
        kept.verify(&keys(), ORIGIN, &t, NOW).unwrap();
        // The same length, one letter of the signature changed.
        let last = t.chars().last().unwrap();
        let forged = format!("{}{}", &t[..t.len() - 1], if last == 'A' { 'B' } else { 'A' });
        assert_eq!(kept.verify(&keys(), ORIGIN, &forged, NOW), Err(TokenError::BadSignature));
        assert!(kept.verify(&keys(), ORIGIN, &t[..t.len() - 1], NOW).is_err());
        assert!(same_bytes(&t, &t.clone()) && !same_bytes(&t, &forged));
    }

    #[test]
    fn many_tokens_displace_the_oldest_which_still_verifies() {
        let kept = Verified::new();
        let tokens: Vec<String> = (0..VERIFIED_KEPT as u64 + 1)
            .map(|i| issue(&keys(), access(), NOW + i * 1_000))
            .collect();
        for t in &tokens {
            assert_eq!(kept.verify(&keys(), ORIGIN, t, NOW + 20_000), Ok(access()));
        }
        assert_eq!(kept.kept.borrow().len(), VERIFIED_KEPT);
        assert!(!kept.kept.borrow().iter().any(|k| k.token == tokens[0]), "the oldest went");
        assert_eq!(kept.verify(&keys(), ORIGIN, &tokens[0], NOW + 20_000), Ok(access()));
    }
}
