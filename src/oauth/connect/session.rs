//! The life of one connection attempt, from waiting to an authorization code redeemed once:
//! [`apply`] takes a code's stored [`Session`] and a [`Command`] to what to store and the reply.

use super::Revoke;
use super::{
    refusal, CodeReply, Command, ConnectCode, Description, Granted, PollState, Redemption,
    Requester,
};
use crate::crypto::{random_token, sha256_hex, Entropy};
use crate::limits::{
    AUTH_CODE_TTL_MS, CONNECT_CODE_TTL_MS, LINK_CONFIRM_TTL_MS, MAX_CODE_TRIES, MAX_PLACE_CHARS,
};
use crate::oauth::authorize::{is_this_resource, AuthRequest, SealId};
use crate::oauth::clients::clean_text;
use crate::oauth::error::OAuthError;
use crate::oauth::lookalike;
use crate::oauth::pkce;

/// Where the platform says a request to the relay at `origin` came from, as the consent shows
/// it. Only a relay served over https (Cloudflare's edge) is told: `wrangler dev` serves http
/// and makes up a placeholder (Austin, US), so there the place is not known.
#[must_use]
pub fn place_said(origin: &str, city: Option<&str>, country: Option<&str>) -> Option<String> {
    if origin.starts_with("https://") {
        place(city, country)
    } else {
        None
    }
}

/// A place as the consent shows it, from the platform's city and two-letter country:
/// "Lisbon, PT", "PT", or None when it said neither.
#[must_use]
pub fn place(city: Option<&str>, country: Option<&str>) -> Option<String> {
    let clean = |s: Option<&str>| s.map(|s| clean_text(s, usize::MAX)).filter(|s| !s.is_empty());
    let mut joined = match (clean(city), clean(country)) {
        (Some(mut city), Some(country)) => {
            city.push_str(", ");
            city.push_str(&country);
            city
        }
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => return None,
    };
    if let Some((end, _)) = joined.char_indices().nth(MAX_PLACE_CHARS) {
        joined.truncate(end);
    }
    Some(joined)
}

/// Where a connection attempt stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stage {
    /// Shown on the waiting page; no tab has approved it.
    Waiting,
    /// A tab of `pairing` approved it through the waiting page's link: the approval holds once
    /// the browser confirms, by opening the relay's confirm page with the ticket the tab got
    /// and the waiting page's cookie, that it is the browser that opened the waiting page.
    Confirming {
        /// The pairing that approved.
        pairing: String,
        /// SHA-256 of the ticket's secret.
        ticket_hash: String,
        /// Until when the ticket works.
        until_ms: u64,
    },
    /// A tab of this pairing approved it; the waiting page has not yet collected it.
    Approved {
        /// The pairing that approved.
        pairing: String,
    },
    /// The waiting page sent the browser on with an authorization code (kept as a hash).
    Issued {
        /// The pairing that approved.
        pairing: String,
        /// SHA-256 of the authorization code's secret.
        code_hash: String,
        /// When the code was issued.
        issued_ms: u64,
    },
    /// The person denied it in their tab; the waiting page returns `access_denied`.
    Denied,
    /// The authorization code was redeemed; it cannot be again, and a replay revokes the grant.
    Redeemed {
        /// The pairing it reached.
        pairing: String,
        /// The grant it made.
        grant: String,
        /// SHA-256 of the code's secret, to know a replay.
        code_hash: String,
    },
}

/// One connection attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The checked authorization request.
    pub request: AuthRequest,
    /// SHA-256 of the secret in the waiting page's cookie.
    pub browser_hash: String,
    /// The sealed request that made the code.
    pub seal: SealId,
    /// When the waiting page was made.
    pub created_ms: u64,
    /// Where it stands.
    pub stage: Stage,
    /// How many times tabs described, approved or denied it.
    pub tries: u32,
    /// Where the waiting page's browser was, as the platform said ("City, CC"); None when it
    /// did not say (as under `wrangler dev`).
    pub place: Option<String>,
}

impl Session {
    /// Whether a tab may still describe, approve or deny it: waiting, or approved through the
    /// link and waiting for its browser.
    fn is_open(&self) -> bool {
        matches!(self.stage, Stage::Waiting | Stage::Confirming { .. })
    }

    /// Who asks: the request's client, and where the waiting page's browser was.
    fn requester(&self) -> Requester {
        Requester {
            client_name: self.request.client_name.clone(),
            host: crate::oauth::clients::shown_host(&self.request.redirect_uri),
            place: self.place.clone(),
            verified: self.request.verified_domain.clone(),
        }
    }

    /// Who asks, as a tab is told at `now_ms`.
    fn description(&self, now_ms: u64) -> Description {
        let requester = self.requester();
        let warning = lookalike::judge(&requester.client_name, requester.verified.as_deref());
        Description {
            requester,
            client_id: self.request.client_id.clone(),
            age_ms: now_ms.saturating_sub(self.created_ms),
            lookalike: warning.and_then(|w| w.app()).map(str::to_owned),
            name_warning: warning.map(|w| w.kind().to_owned()),
        }
    }
}

/// When a code's object forgets everything it stored, after replying `reply` at `now_ms`:
/// `kept_ms` after a session starts (the relay keeps it [`crate::config::CODE_KEPT_MS`] by
/// default: until neither the code nor an authorization code it gave can be used); None when
/// the reply starts none (the alarm set before stands).
#[must_use]
pub fn forget_at(reply: &CodeReply, now_ms: u64, kept_ms: u64) -> Option<u64> {
    (*reply == CodeReply::Created).then_some(now_ms + kept_ms)
}

/// Applies a command to a code's stored session at `now_ms`: `stored` becomes what to store
/// (None: delete), and the reply is returned.
pub fn apply(
    stored: &mut Option<Session>,
    command: Command,
    now_ms: u64,
    entropy: &mut dyn Entropy,
    code: &ConnectCode,
) -> CodeReply {
    if stored.as_ref().is_some_and(|s| now_ms >= s.created_ms + CONNECT_CODE_TTL_MS) {
        *stored = None;
    }
    match command {
        Command::Create { request, seal, browser_hash, place } => match stored {
            Some(s) if s.seal == seal => CodeReply::SealUsed,
            Some(_) => CodeReply::Taken,
            None => {
                let stage = Stage::Waiting;
                let created_ms = now_ms;
                let s = Session { request, browser_hash, seal, created_ms, stage, tries: 0, place };
                *stored = Some(s);
                CodeReply::Created
            }
        },
        Command::Describe | Command::Approve { .. } | Command::Deny => {
            let session = match tried(stored, refusal::UNKNOWN) {
                Ok(session) => session,
                Err(sentence) => return CodeReply::refused(sentence),
            };
            if !session.is_open() {
                return CodeReply::refused(refusal::USED);
            }
            match command {
                // A linked approval waits for the browser that opened the waiting page.
                Command::Approve { pairing, linked: true } => {
                    let secret = random_token(entropy, 24);
                    session.stage = Stage::Confirming {
                        pairing,
                        ticket_hash: sha256_hex(secret.as_bytes()),
                        until_ms: now_ms + LINK_CONFIRM_TTL_MS,
                    };
                    let client = session.request.client_name.clone();
                    return CodeReply::ToConfirm { client, secret };
                }
                // The whole code typed from the waiting page: approved (over a linked approval
                // still waiting for its browser).
                Command::Approve { pairing, linked: false } => {
                    session.stage = Stage::Approved { pairing };
                }
                Command::Deny => session.stage = Stage::Denied,
                _ => {}
            }
            CodeReply::Described(session.description(now_ms))
        }
        Command::Confirm { secret, browser_hash } => {
            let session = match tried(stored, refusal::TICKET_STALE) {
                Ok(session) => session,
                Err(sentence) => return CodeReply::refused(sentence),
            };
            let Stage::Confirming { pairing, ticket_hash, until_ms } = &session.stage else {
                return CodeReply::refused(refusal::TICKET_STALE);
            };
            if *ticket_hash != sha256_hex(secret.as_bytes()) || now_ms >= *until_ms {
                return CodeReply::refused(refusal::TICKET_STALE);
            }
            if session.browser_hash.is_empty() || browser_hash != session.browser_hash {
                // Not the waiting page's browser (a link someone sent): the code waits again,
                // for the whole code typed.
                session.stage = Stage::Waiting;
                return CodeReply::refused(refusal::NOT_THIS_BROWSER);
            }
            session.stage = Stage::Approved { pairing: pairing.clone() };
            CodeReply::Confirmed { client: session.request.client_name.clone() }
        }
        Command::Poll { browser_hash, issuer } => {
            CodeReply::Poll(poll(stored, &browser_hash, &issuer, now_ms, entropy, code))
        }
        Command::Redeem(r) => match redeem(stored, &r, now_ms) {
            Ok(granted) => CodeReply::Redeemed { granted },
            Err(e) => {
                // A replay of a redeemed code revokes what it issued.
                let revoke = match stored.as_ref().map(|s| &s.stage) {
                    Some(Stage::Redeemed { pairing, grant, code_hash })
                        if *code_hash == sha256_hex(r.secret.as_bytes()) =>
                    {
                        Some(Revoke { pairing: pairing.clone(), grant: grant.clone() })
                    }
                    _ => None,
                };
                CodeReply::RedeemRefused { refused: e, revoke }
            }
        },
    }
}

/// The live session a tab's command tries once more, or the refusal's sentence: `unknown` when
/// there is none, too many tries (the session is forgotten) past [`MAX_CODE_TRIES`].
fn tried<'s>(
    stored: &'s mut Option<Session>,
    unknown: &'static str,
) -> Result<&'s mut Session, &'static str> {
    if stored.as_ref().is_some_and(|s| s.tries >= MAX_CODE_TRIES) {
        *stored = None;
        return Err(refusal::TOO_MANY_TRIES);
    }
    let Some(session) = stored else {
        return Err(unknown);
    };
    session.tries += 1;
    Ok(session)
}

fn poll(
    stored: &mut Option<Session>,
    browser_hash: &str,
    issuer: &str,
    now_ms: u64,
    entropy: &mut dyn Entropy,
    code: &ConnectCode,
) -> PollState {
    let Some(session) = stored else {
        return PollState::Expired;
    };
    if session.browser_hash != browser_hash {
        return PollState::NotThisBrowser;
    }
    let remaining = session.created_ms + CONNECT_CODE_TTL_MS - now_ms;
    match &session.stage {
        Stage::Waiting | Stage::Confirming { .. } => {
            PollState::Waiting { expires_in_ms: remaining }
        }
        Stage::Approved { pairing } => {
            let secret = random_token(entropy, 32);
            let auth_code = format!("{}.{secret}", code.as_str());
            let to = back(&session.request, &[("code", &auth_code)], issuer);
            session.stage = Stage::Issued {
                pairing: pairing.clone(),
                code_hash: sha256_hex(secret.as_bytes()),
                issued_ms: now_ms,
            };
            PollState::Approved { redirect: to }
        }
        Stage::Denied => {
            let denied = [
                ("error", "access_denied"),
                ("error_description", crate::sentences::oauth::DENIED),
            ];
            let to = back(&session.request, &denied, issuer);
            *stored = None;
            PollState::Denied { redirect: to }
        }
        Stage::Issued { .. } | Stage::Redeemed { .. } => PollState::Done,
    }
}

/// Where the waiting page sends the browser back: the client's redirect URI with `params`,
/// then the request's state and the issuer (RFC 9207).
fn back(request: &AuthRequest, params: &[(&str, &str)], iss: &str) -> String {
    crate::oauth::authorize::back(&request.redirect_uri, params, request.state.as_deref(), iss)
}

/// Redeems the authorization code: the session moves to `Redeemed` only when every check passes.
fn redeem(
    stored: &mut Option<Session>,
    r: &Redemption,
    now_ms: u64,
) -> Result<Granted, OAuthError> {
    let Some(session) = stored else {
        return Err(OAuthError::invalid_grant(crate::sentences::oauth::CODE_UNKNOWN));
    };
    let granted = check_redemption(session, r, now_ms)?;
    session.stage = Stage::Redeemed {
        pairing: granted.pairing.clone(),
        grant: r.grant.clone(),
        code_hash: sha256_hex(r.secret.as_bytes()),
    };
    Ok(granted)
}

fn check_redemption(session: &Session, r: &Redemption, now_ms: u64) -> Result<Granted, OAuthError> {
    let invalid = |d: &str| Err(OAuthError::invalid_grant(d));
    let Stage::Issued { pairing, code_hash, issued_ms } = &session.stage else {
        // A second redemption, or a code never issued. (Issue 3 revokes what a replay issued.)
        return invalid(crate::sentences::oauth::CODE_USED);
    };
    if sha256_hex(r.secret.as_bytes()) != *code_hash || now_ms >= issued_ms + AUTH_CODE_TTL_MS {
        return invalid(crate::sentences::oauth::CODE_UNKNOWN);
    }
    let req = &session.request;
    if req.client_id != r.client_id {
        return invalid(crate::sentences::oauth::CODE_OTHER_CLIENT);
    }
    if r.redirect_uri.as_ref().is_some_and(|u| *u != req.redirect_uri) {
        return invalid(crate::sentences::oauth::REDIRECT_DIFFERS);
    }
    let Some(verifier) = &r.code_verifier else {
        return Err(OAuthError::invalid_request(crate::sentences::oauth::VERIFIER_MISSING));
    };
    if !pkce::verify(verifier, &req.code_challenge) {
        return invalid(crate::sentences::oauth::VERIFIER_WRONG);
    }
    if let Some(resource) = &r.resource {
        let asked = req.resource.as_deref().map(|a| a.trim_end_matches('/'));
        if !is_this_resource(resource, &r.origin)
            || asked.is_some_and(|a| a != resource.trim_end_matches('/'))
        {
            return Err(OAuthError::invalid_target(
                crate::sentences::oauth::RESOURCE_NOT_AUTHORIZED,
            ));
        }
    }
    Ok(Granted { pairing: pairing.clone(), requester: session.requester() })
}

tabrelay_bundle::codec!(Stage, "a stage", enum {
    "waiting" => Waiting,
    "confirming" => Confirming { pairing, ticket_hash, until_ms },
    "denied" => Denied,
    "approved" => Approved { pairing },
    "issued" => Issued { pairing, code_hash, issued_ms },
    "redeemed" => Redeemed { pairing, grant, code_hash },
});

tabrelay_bundle::codec!(Session, "a session", {
    request, browser_hash, seal, created_ms, stage, tries or 0, place or None
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::Counter;
    use crate::oauth::connect::fixtures::*;
    // The fixture, not the machine's own `poll` (a glob's name would be ambiguous).
    use crate::oauth::connect::fixtures::poll;
    use serde_json::json;
    use serde_json::Value;
    use tabrelay_bundle::fields::Message as _;

    struct Run {
        stored: Option<Session>,
        code: ConnectCode,
        rng: Counter,
    }

    impl Run {
        fn new() -> Self {
            Self { stored: None, code: ConnectCode::parse("ABCDE-12345").unwrap(), rng: Counter(1) }
        }
        /// The reply, as JSON to look into (and checked to read back as written).
        fn go(&mut self, c: Command, now: u64) -> Value {
            let reply = apply(&mut self.stored, c, now, &mut self.rng, &self.code);
            assert_eq!(CodeReply::decode(&reply.encode()).as_ref(), Ok(&reply));
            serde_json::from_slice(&reply.encode()).unwrap()
        }
        fn redeem(&mut self, secret: &str, verifier: &str, now: u64) -> Value {
            self.go(
                Command::Redeem(Redemption {
                    secret: secret.into(),
                    client_id: "cid".into(),
                    redirect_uri: Some("https://claude.ai/cb".into()),
                    code_verifier: Some(verifier.into()),
                    resource: Some(ORIGIN.into()),
                    origin: ORIGIN.into(),
                    grant: "g1".into(),
                }),
                now,
            )
        }
    }

    fn secret_of(redirect: &str) -> String {
        let code = redirect.split("code=").nth(1).unwrap().split('&').next().unwrap();
        code.split_once('.').unwrap().1.to_owned()
    }

    #[test]
    fn a_code_goes_waiting_approved_issued_redeemed_once() {
        let mut r = Run::new();
        let place = Some("Lisbon, PT".to_owned());
        assert_eq!(
            r.go(
                Command::Create {
                    request: request(),
                    seal: seal(),
                    browser_hash: "b".into(),
                    place
                },
                0
            )["reply"],
            "created"
        );
        assert_eq!(r.go(poll("b"), 1)["state"], "waiting");
        let a = r.go(Command::Approve { pairing: "p".into(), linked: false }, 2);
        assert_eq!(
            (a["reply"].as_str(), a["client_name"].as_str()),
            (Some("described"), Some("Claude"))
        );
        let p = r.go(poll("b"), 3);
        assert_eq!(p["state"], "approved");
        let to = p["redirect"].as_str().unwrap();
        assert!(
            to.starts_with("https://claude.ai/cb?code=ABCDE12345.")
                && to.contains("&state=st&iss=")
        );
        let secret = secret_of(to);
        let ok = r.redeem(&secret, VERIFIER, 4);
        assert_eq!(
            ok["granted"],
            json!({"pairing": "p", "client_name": "Claude", "host": "claude.ai", "place": "Lisbon, PT"})
        );
        let again = r.redeem(&secret, VERIFIER, 5);
        assert_eq!(again["error"], "invalid_grant");
    }

    #[test]
    fn a_replayed_code_names_the_grant_to_revoke() {
        let mut r = Run::new();
        r.go(create(), 0);
        r.go(Command::Approve { pairing: "p".into(), linked: false }, 1);
        let secret = secret_of(r.go(poll("b"), 2)["redirect"].as_str().unwrap());
        assert_eq!(r.redeem(&secret, VERIFIER, 3)["reply"], "redeemed");
        let replay = r.redeem(&secret, VERIFIER, 4);
        assert_eq!(replay["error"], "invalid_grant");
        assert_eq!(replay["revoke"], json!({"pairing": "p", "grant": "g1"}));
        assert!(
            r.redeem("guess", VERIFIER, 5)["revoke"].is_null(),
            "only the code's holder revokes"
        );
    }

    #[test]
    fn a_document_client_is_described_by_its_verified_domain() {
        let mut r = Run::new();
        let request = AuthRequest { verified_domain: Some("claude.ai".into()), ..request() };
        r.go(Command::Create { request, seal: seal(), browser_hash: "b".into(), place: None }, 0);
        let d = r.go(Command::Describe, 1);
        assert_eq!(d["verified"], "claude.ai");
        assert_eq!(d["host"], "claude.ai");
    }

    #[test]
    fn a_tab_describes_then_denies_and_the_page_returns_access_denied() {
        let mut r = Run::new();
        r.go(create(), 0);
        let d = r.go(Command::Describe, 1);
        assert_eq!(
            (d["client_name"].as_str(), d["host"].as_str()),
            (Some("Claude"), Some("claude.ai"))
        );
        assert_eq!(d["verified"], Value::Null, "a registered client's name is not verified");
        assert_eq!(r.go(Command::Deny, 2)["reply"], "described");
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, 3)["sentence"],
            refusal::USED
        );
        let p = r.go(poll("b"), 4);
        assert_eq!(p["state"], "denied");
        let to = p["redirect"].as_str().unwrap();
        assert!(
            to.starts_with("https://claude.ai/cb?error=access_denied&") && to.contains("state=st"),
            "{to}"
        );
        assert_eq!(
            r.go(poll("b"), 5)["state"],
            "expired",
            "a denied code is gone once the page knows"
        );
    }

    #[test]
    fn the_describe_says_how_old_from_where_and_what_a_name_imitates() {
        let mut r = Run::new();
        let asking = AuthRequest { client_name: "Claude Code".into(), ..request() };
        let place = Some("Lisbon, PT".to_owned());
        r.go(
            Command::Create { request: asking, seal: seal(), browser_hash: "b".into(), place },
            1000,
        );
        let d = r.go(Command::Describe, 61_000);
        assert_eq!(d["age_ms"], 60_000);
        assert_eq!(d["place"], "Lisbon, PT");
        assert_eq!(d["lookalike"], "Claude");
        let mut r = Run::new();
        let verified = AuthRequest {
            client_name: "Claude".into(),
            verified_domain: Some("claude.ai".into()),
            ..request()
        };
        r.go(
            Command::Create {
                request: verified,
                seal: seal(),
                browser_hash: "b".into(),
                place: None,
            },
            0,
        );
        let d = r.go(Command::Describe, 5);
        assert_eq!((d["place"].clone(), d["lookalike"].clone()), (Value::Null, Value::Null));
        assert_eq!(d["name_warning"], Value::Null, "claude.ai may call itself Claude");
        // A client verified as another domain that calls itself Claude is warned about.
        let mut r = Run::new();
        let claims = AuthRequest {
            client_name: "Claude".into(),
            verified_domain: Some("example.com".into()),
            ..request()
        };
        let create = Command::Create {
            request: claims,
            seal: seal(),
            browser_hash: "b".into(),
            place: None,
        };
        r.go(create, 0);
        let d = r.go(Command::Describe, 5);
        assert_eq!(
            (d["lookalike"].as_str(), d["name_warning"].as_str()),
            (Some("Claude"), Some("claims"))
        );
    }

    #[test]
    fn a_place_is_city_and_country_when_said() {
        assert_eq!(place(Some("Lisbon"), Some("PT")).as_deref(), Some("Lisbon, PT"));
        assert_eq!(place(None, Some("PT")).as_deref(), Some("PT"));
        assert_eq!(place(Some(" "), None), None);
        assert_eq!(place(None, None), None);
        let long = "x".repeat(500);
        assert_eq!(place(Some(&long), Some("PT")).unwrap().chars().count(), MAX_PLACE_CHARS);
        assert_eq!(place(Some("A\nB"), None).as_deref(), Some("AB"));
        let said = |origin| place_said(origin, Some("Austin"), Some("US"));
        assert_eq!(said("https://relay.example").as_deref(), Some("Austin, US"));
        assert_eq!(said("http://127.0.0.1:8787"), None, "wrangler dev's made-up place");
    }

    #[test]
    fn a_code_tried_too_often_dies() {
        let mut r = Run::new();
        r.go(create(), 0);
        for i in 0..MAX_CODE_TRIES {
            assert_eq!(r.go(Command::Describe, u64::from(i))["reply"], "described");
        }
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, 9)["sentence"],
            refusal::TOO_MANY_TRIES
        );
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, 10)["sentence"],
            refusal::UNKNOWN
        );
    }

    #[test]
    fn the_waiting_page_is_bound_to_its_browser() {
        let mut r = Run::new();
        r.go(create(), 0);
        r.go(Command::Approve { pairing: "p".into(), linked: false }, 1);
        assert_eq!(r.go(poll("someone-else"), 2)["state"], "not_this_browser");
        assert_eq!(r.go(poll("b"), 3)["state"], "approved");
    }

    #[test]
    fn wrong_verifier_wrong_secret_and_expiry_are_invalid_grant() {
        let mut r = Run::new();
        r.go(create(), 0);
        r.go(Command::Approve { pairing: "p".into(), linked: false }, 1);
        let secret = secret_of(r.go(poll("b"), 2)["redirect"].as_str().unwrap());
        assert_eq!(r.redeem(&secret, &"x".repeat(43), 3)["error"], "invalid_grant");
        assert_eq!(r.redeem("nope", VERIFIER, 3)["error"], "invalid_grant");
        assert_eq!(r.redeem(&secret, VERIFIER, 2 + AUTH_CODE_TTL_MS)["error"], "invalid_grant");
    }

    #[test]
    fn unknown_expired_and_used_codes_are_refused_with_a_sentence() {
        let mut r = Run::new();
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, 0)["sentence"],
            refusal::UNKNOWN
        );
        r.go(create(), 0);
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, CONNECT_CODE_TTL_MS)
                ["sentence"],
            refusal::UNKNOWN
        );
        r.go(create(), CONNECT_CODE_TTL_MS);
        r.go(Command::Approve { pairing: "p".into(), linked: false }, CONNECT_CODE_TTL_MS + 1);
        assert_eq!(
            r.go(Command::Approve { pairing: "q".into(), linked: false }, CONNECT_CODE_TTL_MS + 2)
                ["sentence"],
            refusal::USED
        );
        assert_eq!(
            r.go(
                Command::Create {
                    request: request(),
                    seal: seal(),
                    browser_hash: "c".into(),
                    place: None
                },
                CONNECT_CODE_TTL_MS + 3
            )["reply"],
            "seal_used"
        );
    }

    #[test]
    fn one_seal_makes_one_code_and_another_seal_finds_it_taken() {
        let mut r = Run::new();
        let create = |seal: &str, browser: &str| Command::Create {
            request: request(),
            seal: SealId(seal.into()),
            browser_hash: browser.into(),
            place: None,
        };
        assert_eq!(r.go(create("seal-1", "b"), 0), json!({"reply": "created"}));
        // The same seal posted again (by anyone): the code was made; nothing else is.
        assert_eq!(r.go(create("seal-1", "x"), 10), json!({"reply": "seal_used"}));
        // Another seal drawing the same letters finds the code taken and draws again.
        assert_eq!(r.go(create("seal-2", "y"), 20), json!({"reply": "taken"}));
        let stored = r.stored.as_ref().expect("the first session stays");
        assert_eq!(stored.browser_hash, "b", "the first browser keeps the code");
    }

    #[test]
    fn a_code_is_forgotten_its_kept_time_after_its_session_starts_and_no_later_reply_moves_it() {
        let kept = crate::config::CODE_KEPT_MS;
        assert_eq!(forget_at(&CodeReply::Created, 5, kept), Some(5 + kept));
        assert!(kept >= CONNECT_CODE_TTL_MS + AUTH_CODE_TTL_MS, "kept while a code can be used");
        for reply in [
            CodeReply::SealUsed,
            CodeReply::Taken,
            CodeReply::Poll(PollState::Done),
            CodeReply::refused(refusal::USED),
        ] {
            assert_eq!(forget_at(&reply, 5, kept), None, "{reply:?}");
        }
    }

    #[test]
    fn a_linked_approval_holds_only_once_the_waiting_pages_browser_confirms() {
        let mut r = Run::new();
        r.go(create(), 0);
        let to = r.go(linked("p"), 1);
        assert_eq!(
            (to["reply"].as_str(), to["client"].as_str()),
            (Some("to_confirm"), Some("Claude"))
        );
        let secret = to["secret"].as_str().unwrap().to_owned();
        assert_eq!(
            r.go(poll("b"), 2)["state"],
            "waiting",
            "not approved before the browser confirms"
        );
        assert_eq!(r.go(confirm("wrong", "b"), 3)["sentence"], refusal::TICKET_STALE);
        let ok = r.go(confirm(&secret, "b"), 4);
        assert_eq!(
            (ok["reply"].as_str(), ok["client"].as_str()),
            (Some("confirmed"), Some("Claude"))
        );
        let p = r.go(poll("b"), 5);
        assert_eq!(p["state"], "approved");
        assert_eq!(
            r.redeem(&secret_of(p["redirect"].as_str().unwrap()), VERIFIER, 6)["reply"],
            "redeemed"
        );
        assert_eq!(
            r.go(confirm(&secret, "b"), 7)["sentence"],
            refusal::TICKET_STALE,
            "a ticket works once"
        );
    }

    #[test]
    fn a_link_confirmed_from_another_browser_approves_nothing_and_the_code_waits_for_typing() {
        let mut r = Run::new();
        r.go(create(), 0);
        let secret = r.go(linked("victim"), 1)["secret"].as_str().unwrap().to_owned();
        // The person who was sent the link has no cookie of the waiting page (or another's).
        assert_eq!(r.go(confirm(&secret, ""), 2)["sentence"], refusal::NOT_THIS_BROWSER);
        assert_eq!(r.stored.as_ref().unwrap().stage, Stage::Waiting);
        assert_eq!(
            r.go(confirm(&secret, "b"), 3)["sentence"],
            refusal::TICKET_STALE,
            "the ticket died"
        );
        assert_eq!(r.go(poll("b"), 4)["state"], "waiting");
        // Only the whole code, typed, approves it now.
        assert_eq!(
            r.go(Command::Approve { pairing: "p".into(), linked: false }, 5)["reply"],
            "described"
        );
        assert_eq!(r.go(poll("b"), 6)["state"], "approved");
    }

    #[test]
    fn a_confirm_with_a_wrong_cookie_value_approves_nothing_and_the_code_waits_for_typing() {
        // The browser sends a cookie for the waiting page, but not its value: another waiting
        // page's (the attacker's own), or one made up. Only the waiting page's own secret binds.
        for wrong in ["someone-else", "b-", "B", " b"] {
            let mut r = Run::new();
            r.go(create(), 0);
            let secret = r.go(linked("victim"), 1)["secret"].as_str().unwrap().to_owned();
            assert_eq!(r.go(confirm(&secret, wrong), 2)["sentence"], refusal::NOT_THIS_BROWSER);
            assert_eq!(r.stored.as_ref().unwrap().stage, Stage::Waiting, "{wrong:?}");
            // Over the ticket's whole life nothing is approved: the waiting page's own poll
            // and the right cookie later both find the code waiting, the ticket dead.
            assert_eq!(r.go(poll("b"), 3)["state"], "waiting");
            let late = 1 + LINK_CONFIRM_TTL_MS - 1;
            assert_eq!(r.go(confirm(&secret, "b"), late)["sentence"], refusal::TICKET_STALE);
            assert_eq!(r.go(poll("b"), late + 1)["state"], "waiting");
        }
    }

    #[test]
    fn a_linked_approval_expires_and_typing_the_code_overrides_it() {
        let mut r = Run::new();
        r.go(create(), 0);
        let secret = r.go(linked("p"), 1)["secret"].as_str().unwrap().to_owned();
        let late = 1 + LINK_CONFIRM_TTL_MS;
        assert_eq!(r.go(confirm(&secret, "b"), late)["sentence"], refusal::TICKET_STALE);
        assert_eq!(r.go(poll("b"), late + 1)["state"], "waiting");
        r.go(linked("p"), late + 2);
        assert_eq!(r.go(Command::Describe, late + 3)["reply"], "described", "still open");
        let typed = r.go(Command::Approve { pairing: "q".into(), linked: false }, late + 4);
        assert_eq!(typed["reply"], "described");
        assert_eq!(r.stored.as_ref().unwrap().stage, Stage::Approved { pairing: "q".into() });
        let mut r = Run::new();
        r.go(create(), 0);
        r.go(linked("p"), 1);
        assert_eq!(
            r.go(Command::Deny, 2)["reply"],
            "described",
            "a linked approval can still be denied"
        );
        assert_eq!(r.go(poll("b"), 3)["state"], "denied");
    }
}
