//! Refresh tokens as clients hold them: `pairing.grant.secret.tag`, the tag keyed by the relay,
//! so one the relay did not issue is refused before any pairing is asked. (What a grant does
//! with its secret, rotation and reuse, is the pairing's: `crate::pairing::grants`.)

use crate::keys::{Keys, Purpose};

/// A refresh token as the client holds it: the pairing, the grant, the secret and a tag (HMAC
/// with the relay's current key over the three), `pairing.grant.secret.tag`.
#[must_use]
pub fn refresh_token(keys: &Keys, pairing: &str, grant: &str, secret: &str) -> String {
    keys.sign(Purpose::RefreshToken, format!("{pairing}.{grant}.{secret}"))
}

/// The pairing, grant and secret of a refresh token the relay issued: it has their form and its
/// tag verifies under the current or the previous key. Anything else is None, so a made-up or
/// altered token never reaches a pairing.
#[must_use]
pub fn parse_refresh_token<'t>(keys: &Keys, token: &'t str) -> Option<(&'t str, &'t str, &'t str)> {
    let (body, tag) = token.rsplit_once('.')?;
    let (pairing, rest) = body.split_once('.')?;
    let (grant, secret) = rest.split_once('.')?;
    let ok = pairing.len() == 64
        && pairing.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && !grant.is_empty()
        && grant.len() <= 32
        && !secret.is_empty()
        && secret.len() <= 64
        && !secret.contains('.')
        && tag.len() == 43;
    ok.then(|| keys.verified(Purpose::RefreshToken, token))??;
    Some((pairing, grant, secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(current: &str, previous: Option<&str>) -> Keys {
        Keys::new(&current.repeat(32), previous.map(|p| p.repeat(32)).as_deref()).unwrap()
    }

    #[test]
    fn refresh_tokens_read_back_and_strangers_do_not() {
        let k = keys("k", None);
        let p = "a".repeat(64);
        let t = refresh_token(&k, &p, "g1", "s3cret");
        assert_eq!(parse_refresh_token(&k, &t), Some((p.as_str(), "g1", "s3cret")));
        for bad in ["x.y.z", "x.y.z.w", "", "...", &format!("{p}.g"), &format!("{p}.g.s")] {
            assert_eq!(parse_refresh_token(&k, bad), None, "{bad}");
        }
        let upper = refresh_token(&k, &"A".repeat(64), "g", "s");
        assert_eq!(parse_refresh_token(&k, &upper), None, "the form is checked too");
    }

    #[test]
    fn a_made_up_or_altered_refresh_token_is_refused_by_its_tag() {
        let k = keys("k", None);
        let p = "a".repeat(64);
        let t = refresh_token(&k, &p, "g1", "s3cret");
        let (body, tag) = t.rsplit_once('.').unwrap();
        // Each part changed, the tag kept: refused.
        for altered in [
            t.replacen("g1", "g2", 1),
            t.replacen("s3cret", "s3creT", 1),
            t.replacen(&p, &"b".repeat(64), 1),
        ] {
            assert_eq!(parse_refresh_token(&k, &altered), None, "{altered}");
        }
        // A tag flipped, cut, padded, or made with another key: refused.
        let flipped =
            format!("{body}.{}{}", if tag.starts_with('A') { 'B' } else { 'A' }, &tag[1..]);
        let another = refresh_token(&keys("z", None), &p, "g1", "s3cret");
        for bad in [flipped, format!("{body}.{}", &tag[1..]), format!("{t}A"), another] {
            assert_eq!(parse_refresh_token(&k, &bad), None, "{bad}");
        }
    }

    #[test]
    fn during_a_key_rotation_the_previous_key_still_verifies() {
        let old = keys("o", None);
        let t = refresh_token(&old, &"c".repeat(64), "g", "s");
        assert!(parse_refresh_token(&keys("n", Some("o")), &t).is_some());
        assert!(parse_refresh_token(&keys("n", None), &t).is_none());
        // What the rotated relay issues verifies with its current key.
        let rotated = keys("n", Some("o"));
        let fresh = refresh_token(&rotated, &"c".repeat(64), "g", "s");
        assert!(parse_refresh_token(&keys("n", None), &fresh).is_some());
    }
}
