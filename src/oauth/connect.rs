//! Connect codes: the short code a waiting page shows and the person's tab approves, and the
//! life of one connection attempt, from waiting to an authorization code redeemed once.
//!
//! Each code's session lives in its own Durable Object (named by the normalised code); the
//! object applies [`apply`] to what it stored and stores what it returns.

use serde::Serialize;

use super::authorize::{is_this_resource, redirect_url, AuthRequest, SealId};
use super::clients::host_of;
use super::error::OAuthError;
use super::keys::{Keys, Purpose};
use super::lookalike;
use super::pkce;
use crate::crypto::{random_token, sha256_hex, Entropy};
use crate::limits::{
    AUTH_CODE_TTL_MS, CONNECT_CODE_TTL_MS, LINK_CONFIRM_TTL_MS, MAX_CODE_TRIES, MAX_PLACE_CHARS,
};

/// The letters of a connect code: Crockford's base32, without I, L, O and U.
pub const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Letters in a code: 10 × 5 = 50 bits.
pub const CODE_LEN: usize = 10;
/// Of those, the random ones (35 bits: a live code is one of 2^35 a guesser cannot aim at);
/// the rest are the keyed check ([`CODE_CHECK_LEN`]).
pub const CODE_RANDOM_LEN: usize = 7;
/// The check letters at a code's end: an HMAC (relay key) of the random ones, so a made-up
/// code is refused before any Durable Object is addressed; 15 bits: one made-up code in
/// 32,768 passes the check (and then finds nothing stored).
pub const CODE_CHECK_LEN: usize = CODE_LEN - CODE_RANDOM_LEN;

/// A connect code, normalised (ten letters of [`CODE_ALPHABET`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectCode(String);

impl ConnectCode {
    /// A new random code, its check letters made with the current key.
    pub fn generate(entropy: &mut dyn Entropy, keys: &Keys) -> Self {
        let mut bytes = [0u8; CODE_RANDOM_LEN];
        entropy.fill(&mut bytes);
        Self::of_letters(&bytes, keys)
    }

    /// The code a sealed request makes on its `attempt`-th draw (0, then 1… when a code is
    /// taken by another request): its letters are a keyed hash of the seal, so posting one
    /// seal again addresses the same code's object, which answers that its code was made
    /// ([`Command::Create`]) instead of a new object being made for every post. Nobody without
    /// the relay's key can tell a seal's code from the seal.
    #[must_use]
    pub fn for_seal(keys: &Keys, seal: &SealId, attempt: u8) -> Self {
        let mut data = seal.0.as_bytes().to_vec();
        data.push(attempt);
        let drawn = keys.current.mac(Purpose::ConnectCodeDraw, &data);
        Self::of_letters(&drawn[..CODE_RANDOM_LEN], keys)
    }

    fn of_letters(bytes: &[u8], keys: &Keys) -> Self {
        let random: String =
            bytes.iter().map(|b| char::from(CODE_ALPHABET[usize::from(b & 31)])).collect();
        let check = check_letters(&keys.current, &random);
        Self(random + &check)
    }

    /// Whether this relay issued the code: its check letters are those of its random ones
    /// under the current key or (during a rotation) the previous one.
    #[must_use]
    pub fn is_issued(&self, keys: &Keys) -> bool {
        let (random, check) = self.0.split_at(CODE_RANDOM_LEN);
        keys.all().any(|k| check_letters(k, random) == check)
    }

    /// A code as a person typed it: any case, spaces and dashes ignored, O read as 0 and I, L as 1.
    #[must_use]
    pub fn parse(typed: &str) -> Option<Self> {
        let mut out = String::with_capacity(CODE_LEN);
        for c in typed.chars() {
            let c = match c.to_ascii_uppercase() {
                ' ' | '-' => continue,
                'O' => '0',
                'I' | 'L' => '1',
                c => c,
            };
            if !c.is_ascii() || !CODE_ALPHABET.contains(&(c as u8)) || out.len() == CODE_LEN {
                return None;
            }
            out.push(c);
        }
        (out.len() == CODE_LEN).then_some(Self(out))
    }

    /// The normalised code, which names its Durable Object.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The code as shown to people: `ABCDE-FGHJK`.
    #[must_use]
    pub fn display(&self) -> String {
        format!("{}-{}", &self.0[..5], &self.0[5..])
    }
}

/// Letters of a link reference's nonce (40 bits: no two links of one key share a mask).
pub const LINK_NONCE_LEN: usize = 8;
/// Letters of a link reference: its nonce, then the code's letters masked.
pub const LINK_LEN: usize = LINK_NONCE_LEN + CODE_LEN;

/// What the waiting page's link carries instead of the code: a nonce and the code's letters,
/// each shifted (mod 32) by a stream keyed by the relay and the nonce. Only the relay can turn
/// it back into the code, so neither the app's script nor anyone who sees the link learns the
/// code from it, and a tab that sends one says it did not type the code: the relay approves
/// it only with the browser's confirmation ([`Stage::Confirming`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkRef(String);

impl LinkRef {
    /// The link reference of `code`, masked with the current key and a random nonce.
    pub fn for_code(code: &ConnectCode, keys: &Keys, entropy: &mut dyn Entropy) -> Self {
        let mut bytes = [0u8; LINK_NONCE_LEN];
        entropy.fill(&mut bytes);
        let nonce: String =
            bytes.iter().map(|b| char::from(CODE_ALPHABET[usize::from(b & 31)])).collect();
        let masked = shift(&keys.current, &nonce, code.as_str(), true);
        Self(nonce + &masked)
    }

    /// A link reference as a tab sent it: [`LINK_LEN`] letters of [`CODE_ALPHABET`] (any case).
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let upper = text.to_ascii_uppercase();
        let fits = upper.len() == LINK_LEN && upper.bytes().all(|b| CODE_ALPHABET.contains(&b));
        fits.then_some(Self(upper))
    }

    /// The code it stands for, when this relay made it (under the current or previous key).
    #[must_use]
    pub fn code(&self, keys: &Keys) -> Option<ConnectCode> {
        let (nonce, masked) = self.0.split_at(LINK_NONCE_LEN);
        keys.all()
            .map(|k| ConnectCode(shift(k, nonce, masked, false)))
            .find(|code| code.is_issued(keys))
    }

    /// The reference, as the link carries it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A code as a tab named it: the whole code typed, or the waiting page's link reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// Typed from the waiting page.
    Typed(ConnectCode),
    /// The reference the waiting page's link carried.
    Linked(LinkRef),
}

impl Named {
    /// What a tab sent, read: None when it is neither a code nor a link reference.
    #[must_use]
    pub fn read(said: &tabrelay_bundle::protocol::CodeSaid) -> Option<Self> {
        use tabrelay_bundle::protocol::CodeSaid;
        match said {
            CodeSaid::Code(typed) => ConnectCode::parse(typed).map(Self::Typed),
            CodeSaid::Link(link) => LinkRef::parse(link).map(Self::Linked),
        }
    }

    /// The code it stands for, when this relay made it.
    #[must_use]
    pub fn code(&self, keys: &Keys) -> Option<ConnectCode> {
        match self {
            Self::Typed(code) => code.is_issued(keys).then(|| code.clone()),
            Self::Linked(link) => link.code(keys),
        }
    }

    /// As the relay's answers to the tab echo it: the normalised code, or the reference.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::Typed(code) => code.as_str(),
            Self::Linked(link) => link.as_str(),
        }
    }
}

/// The ticket a tab gets for a linked approval: the link's reference (so the confirm page
/// finds the code) and the approval's secret, never the code.
#[must_use]
pub fn ticket(link: &str, secret: &str) -> String {
    format!("{link}.{secret}")
}

/// A ticket read back: the code its link stands for (when this relay made it) and the secret.
#[must_use]
pub fn read_ticket(ticket: &str, keys: &Keys) -> Option<(ConnectCode, String)> {
    let (link, secret) = ticket.split_once('.')?;
    let code = LinkRef::parse(link)?.code(keys)?;
    (!secret.is_empty()).then(|| (code, secret.to_owned()))
}

/// `letters` shifted forward (to mask) or back (to unmask) by the keyed stream of `nonce`.
fn shift(key: &super::keys::Key, nonce: &str, letters: &str, forward: bool) -> String {
    let stream = key.mac(Purpose::ConnectLink, nonce.as_bytes());
    letters
        .bytes()
        .zip(stream)
        .map(|(letter, s)| {
            let at = CODE_ALPHABET.iter().position(|&c| c == letter).unwrap_or(0);
            let by = usize::from(s & 31);
            let to = if forward { at + by } else { at + 32 - by };
            char::from(CODE_ALPHABET[to % 32])
        })
        .collect()
}

/// The check letters of a code's random part under `key`.
fn check_letters(key: &super::keys::Key, random: &str) -> String {
    let mac = key.mac(Purpose::ConnectCode, random.as_bytes());
    mac.iter()
        .take(CODE_CHECK_LEN)
        .map(|b| char::from(CODE_ALPHABET[usize::from(b & 31)]))
        .collect()
}

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
    let clean = |s: Option<&str>| {
        s.map(|s| s.chars().filter(|c| !c.is_control()).collect::<String>())
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
    };
    let joined = match (clean(city), clean(country)) {
        (Some(city), Some(country)) => format!("{city}, {country}"),
        (Some(one), None) | (None, Some(one)) => one,
        (None, None) => return None,
    };
    Some(joined.chars().take(MAX_PLACE_CHARS).collect())
}

/// Where a connection attempt stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    #[serde(default)]
    pub tries: u32,
    /// Where the waiting page's browser was, as the platform said ("City, CC"); None when it
    /// did not say (as under `wrangler dev`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

impl Session {
    /// Whether a tab may still describe, approve or deny it: waiting, or approved through the
    /// link and waiting for its browser.
    fn is_open(&self) -> bool {
        matches!(self.stage, Stage::Waiting | Stage::Confirming { .. })
    }

    /// Who asks, as a tab is told at `now_ms`.
    fn description(&self, now_ms: u64) -> Description {
        let client = self.request.client_name.clone();
        let verified = self.request.verified_domain.clone();
        let warning = lookalike::judge(&client, verified.as_deref());
        Description {
            host: host_of(&self.request.redirect_uri).to_owned(),
            client,
            verified,
            client_id: self.request.client_id.clone(),
            age_ms: now_ms.saturating_sub(self.created_ms),
            place: self.place.clone(),
            lookalike: warning.and_then(|w| w.app()).map(str::to_owned),
            name_warning: warning.map(|w| w.kind().to_owned()),
        }
    }
}

/// What the Worker asks a code's Durable Object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Start a session for a new code (refused if the code is taken; when the same seal took
    /// it, the answer says the code was made already).
    Create {
        /// The checked request.
        request: AuthRequest,
        /// The sealed request it came in.
        seal: SealId,
        /// SHA-256 of the browser's cookie secret.
        browser_hash: String,
        /// Where the waiting page's browser is, when the platform says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        place: Option<String>,
    },
    /// A tab asks who is asking for the code.
    Describe,
    /// A tab of `pairing` approves the code.
    Approve {
        /// The pairing.
        pairing: String,
        /// The tab sent the waiting page's link reference, not the code typed: the approval
        /// waits for the browser's confirmation ([`Command::Confirm`]).
        #[serde(default, skip_serializing_if = "core::ops::Not::not")]
        linked: bool,
    },
    /// The relay's confirm page, opened in a browser with the ticket of a linked approval:
    /// the approval holds when that browser carries the waiting page's cookie.
    Confirm {
        /// The ticket's secret part.
        secret: String,
        /// SHA-256 of the cookie secret the browser sent (empty: none).
        browser_hash: String,
    },
    /// A tab denies the code.
    Deny,
    /// The waiting page asks whether it may go on.
    Poll {
        /// SHA-256 of the cookie secret the page's browser sent.
        browser_hash: String,
        /// The origin, for `iss`.
        issuer: String,
    },
    /// The token endpoint redeems the authorization code.
    Redeem {
        /// The code's secret part.
        secret: String,
        /// The client redeeming.
        client_id: String,
        /// The redirect URI it sends.
        redirect_uri: Option<String>,
        /// The PKCE verifier.
        code_verifier: Option<String>,
        /// The resource, when sent.
        resource: Option<String>,
        /// This origin.
        origin: String,
        /// The id the grant will have (chosen by the token endpoint), for a replay to revoke.
        grant: String,
    },
}

/// What a redeemed code grants: the token endpoint turns it into tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Granted {
    /// The pairing the tokens reach.
    pub pairing: String,
    /// The client's name.
    pub client_name: String,
    /// The host of its redirect URI.
    pub host: String,
    /// Where the browser that asked was, when the platform said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    /// The domain that verified the client (its metadata document's), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
}

/// What the Worker sends a code's Durable Object: the code (which names the object) and the
/// command. Written and read here only ([`CodeRequest::encode`], [`CodeRequest::decode`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodeRequest {
    /// The code, normalised.
    pub code: String,
    /// What to do.
    pub command: Command,
}

impl CodeRequest {
    /// The request as the body of the object's fetch.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A fetch's body read back; None when it is not a request (or names no code).
    #[must_use]
    pub fn decode(body: &[u8]) -> Option<(ConnectCode, Command)> {
        let request: Self = tabrelay_bundle::from_json(body)?;
        Some((ConnectCode::parse(&request.code)?, request.command))
    }
}

/// What a code's Durable Object replies to a [`Command`]. Written and read here only
/// ([`CodeReply::encode`], [`CodeReply::decode`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum CodeReply {
    /// [`Command::Create`]: the session is made.
    Created,
    /// [`Command::Create`]: this seal made the code already (a seal makes one code).
    SealUsed,
    /// [`Command::Create`]: another live request holds these letters.
    Taken,
    /// [`Command::Describe`], [`Command::Approve`] or [`Command::Deny`] went through: who asks.
    Described(Description),
    /// [`Command::Approve`] of a link reference: the approval waits for the browser, which
    /// opens the confirm page with this ticket's secret.
    ToConfirm {
        /// The client's name.
        client: String,
        /// The ticket's secret part.
        secret: String,
    },
    /// [`Command::Confirm`]: the browser is the waiting page's; the code is approved.
    Confirmed {
        /// The client's name.
        client: String,
    },
    /// [`Command::Describe`], [`Command::Approve`], [`Command::Deny`] or [`Command::Confirm`]
    /// refused, with the sentence the tab (or the confirm page) shows.
    Refused {
        /// Why.
        sentence: String,
    },
    /// [`Command::Poll`]: where the waiting page stands.
    Poll(PollState),
    /// [`Command::Redeem`]: what the code grants.
    Redeemed {
        /// The grant to make.
        granted: Granted,
    },
    /// [`Command::Redeem`] refused.
    RedeemRefused {
        /// The OAuth error code.
        error: String,
        /// Its sentence.
        error_description: String,
        /// A replay of a redeemed code: the grant it made, to revoke.
        revoke: Option<Revoke>,
    },
}

/// Who asks for a code, as the tab shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Description {
    /// The client's name.
    pub client: String,
    /// The host of its redirect URI.
    pub host: String,
    /// The domain that vouches for the name (a client metadata document), if any.
    pub verified: Option<String>,
    /// The client's id (the pairing finds this client's connections by it; not shown).
    #[serde(default)]
    pub client_id: String,
    /// How long ago the waiting page was made.
    pub age_ms: u64,
    /// Where the waiting page's browser was, when the platform said.
    pub place: Option<String>,
    /// The well-known app the name looks like or claims, if any (see `name_warning`).
    pub lookalike: Option<String>,
    /// What about the name should make the person look twice ([`lookalike::NameWarning`]'s
    /// kind), if anything.
    pub name_warning: Option<String>,
}

/// Where a waiting page stands, as the page reads it (`{"state": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PollState {
    /// No live session: the page says to start again.
    Expired,
    /// The page's browser is not the one that made the code.
    NotThisBrowser,
    /// No tab decided yet.
    Waiting {
        /// How long the code has left.
        expires_in_ms: u64,
    },
    /// Approved: the browser goes on with an authorization code.
    Approved {
        /// Where.
        redirect: String,
    },
    /// Denied: the browser goes back with `access_denied`.
    Denied {
        /// Where.
        redirect: String,
    },
    /// Collected already.
    Done,
}

/// A grant to revoke: a replay of the authorization code that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Revoke {
    /// The pairing that holds it.
    pub pairing: String,
    /// The grant.
    pub grant: String,
}

impl tabrelay_bundle::fields::Message for CodeReply {}

impl CodeReply {
    /// A refusal with the tab's sentence.
    fn refused(sentence: &str) -> Self {
        Self::Refused { sentence: sentence.to_owned() }
    }
}

/// Sentences the tab shows when a code cannot be approved.
pub mod refusal {
    /// The code is not one the relay knows or has expired.
    pub const UNKNOWN: &str =
        "That connect code is not waiting for approval: check it against the waiting page, or start connecting again.";
    /// The code is not of the connect code's form.
    pub const MALFORMED: &str = "A connect code has ten letters and digits, such as ABCDE-12345.";
    /// The code was approved or denied already.
    pub const USED: &str = "That connect code was already approved or denied.";
    /// Tabs tried the code too often; it is dead.
    pub const TOO_MANY_TRIES: &str =
        "That connect code was tried too often and no longer works; start connecting again.";
    /// The confirm page's ticket is unknown, used or too old.
    pub const TICKET_STALE: &str =
        "This confirmation is no longer valid: press Approve in your tab again, or type the whole code shown on the waiting page there.";
    /// The browser that opened the confirm page did not open the waiting page.
    pub const NOT_THIS_BROWSER: &str = tabrelay_bundle::protocol::consent::NOT_THIS_BROWSER;
}

/// Applies a command to a code's stored session at `now_ms`: what to store (None: delete)
/// and the reply.
pub fn apply(
    stored: Option<Session>,
    command: Command,
    now_ms: u64,
    entropy: &mut dyn Entropy,
    code: &ConnectCode,
) -> (Option<Session>, CodeReply) {
    let live = stored.filter(|s| now_ms < s.created_ms + CONNECT_CODE_TTL_MS);
    match command {
        Command::Create { request, seal, browser_hash, place } => match live {
            Some(s) if s.seal == seal => (Some(s), CodeReply::SealUsed),
            Some(s) => (Some(s), CodeReply::Taken),
            None => {
                let stage = Stage::Waiting;
                let created_ms = now_ms;
                let s = Session { request, browser_hash, seal, created_ms, stage, tries: 0, place };
                (Some(s), CodeReply::Created)
            }
        },
        Command::Describe | Command::Approve { .. } | Command::Deny => {
            let Some(mut session) = live else {
                return (None, CodeReply::refused(refusal::UNKNOWN));
            };
            session.tries += 1;
            if session.tries > MAX_CODE_TRIES {
                return (None, CodeReply::refused(refusal::TOO_MANY_TRIES));
            }
            if !session.is_open() {
                return (Some(session), CodeReply::refused(refusal::USED));
            }
            let description = session.description(now_ms);
            let reply = match command {
                // A linked approval waits for the browser that opened the waiting page.
                Command::Approve { pairing, linked: true } => {
                    let secret = random_token(entropy, 24);
                    session.stage = Stage::Confirming {
                        pairing,
                        ticket_hash: sha256_hex(secret.as_bytes()),
                        until_ms: now_ms + LINK_CONFIRM_TTL_MS,
                    };
                    CodeReply::ToConfirm { client: description.client, secret }
                }
                // The whole code typed from the waiting page: approved (over a linked approval
                // still waiting for its browser).
                Command::Approve { pairing, linked: false } => {
                    session.stage = Stage::Approved { pairing };
                    CodeReply::Described(description)
                }
                Command::Deny => {
                    session.stage = Stage::Denied;
                    CodeReply::Described(description)
                }
                _ => CodeReply::Described(description),
            };
            (Some(session), reply)
        }
        Command::Confirm { secret, browser_hash } => {
            let Some(mut session) = live else {
                return (None, CodeReply::refused(refusal::TICKET_STALE));
            };
            session.tries += 1;
            if session.tries > MAX_CODE_TRIES {
                return (None, CodeReply::refused(refusal::TOO_MANY_TRIES));
            }
            let Stage::Confirming { pairing, ticket_hash, until_ms } = &session.stage else {
                return (Some(session), CodeReply::refused(refusal::TICKET_STALE));
            };
            if *ticket_hash != sha256_hex(secret.as_bytes()) || now_ms >= *until_ms {
                return (Some(session), CodeReply::refused(refusal::TICKET_STALE));
            }
            if session.browser_hash.is_empty() || browser_hash != session.browser_hash {
                // Not the waiting page's browser (a link someone sent): the code waits again,
                // for the whole code typed.
                session.stage = Stage::Waiting;
                return (Some(session), CodeReply::refused(refusal::NOT_THIS_BROWSER));
            }
            session.stage = Stage::Approved { pairing: pairing.clone() };
            let client = session.request.client_name.clone();
            (Some(session), CodeReply::Confirmed { client })
        }
        Command::Poll { browser_hash, issuer } => {
            let (session, state) = poll(live, &browser_hash, &issuer, now_ms, entropy, code);
            (session, CodeReply::Poll(state))
        }
        Command::Redeem {
            secret,
            client_id,
            redirect_uri,
            code_verifier,
            resource,
            origin,
            grant,
        } => {
            let r = Redemption {
                secret: &secret,
                client_id: &client_id,
                redirect_uri: redirect_uri.as_deref(),
                code_verifier: code_verifier.as_deref(),
                resource: resource.as_deref(),
                origin: &origin,
                grant: &grant,
            };
            match redeem(live, &r, now_ms) {
                (s, Ok(granted)) => (s, CodeReply::Redeemed { granted }),
                (s, Err(e)) => {
                    // A replay of a redeemed code revokes what it issued.
                    let revoke = match s.as_ref().map(|s| &s.stage) {
                        Some(Stage::Redeemed { pairing, grant, code_hash })
                            if *code_hash == sha256_hex(secret.as_bytes()) =>
                        {
                            Some(Revoke { pairing: pairing.clone(), grant: grant.clone() })
                        }
                        _ => None,
                    };
                    let (error, error_description) = (e.code.to_owned(), e.description);
                    (s, CodeReply::RedeemRefused { error, error_description, revoke })
                }
            }
        }
    }
}

fn poll(
    live: Option<Session>,
    browser_hash: &str,
    issuer: &str,
    now_ms: u64,
    entropy: &mut dyn Entropy,
    code: &ConnectCode,
) -> (Option<Session>, PollState) {
    let Some(session) = live else {
        return (None, PollState::Expired);
    };
    if session.browser_hash != browser_hash {
        return (Some(session), PollState::NotThisBrowser);
    }
    let remaining = session.created_ms + CONNECT_CODE_TTL_MS - now_ms;
    match session.stage {
        Stage::Waiting | Stage::Confirming { .. } => {
            (Some(session), PollState::Waiting { expires_in_ms: remaining })
        }
        Stage::Approved { pairing } => {
            let secret = random_token(entropy, 32);
            let auth_code = format!("{}.{secret}", code.as_str());
            let mut params: Vec<(&str, &str)> = vec![("code", &auth_code)];
            if let Some(s) = &session.request.state {
                params.push(("state", s));
            }
            params.push(("iss", issuer));
            let to = redirect_url(&session.request.redirect_uri, &params);
            let stage = Stage::Issued {
                pairing,
                code_hash: sha256_hex(secret.as_bytes()),
                issued_ms: now_ms,
            };
            (Some(Session { stage, ..session }), PollState::Approved { redirect: to })
        }
        Stage::Denied => {
            let mut params: Vec<(&str, &str)> = vec![
                ("error", "access_denied"),
                ("error_description", "The person denied the connection in their tab."),
            ];
            if let Some(s) = &session.request.state {
                params.push(("state", s));
            }
            params.push(("iss", issuer));
            let to = redirect_url(&session.request.redirect_uri, &params);
            (None, PollState::Denied { redirect: to })
        }
        Stage::Issued { .. } | Stage::Redeemed { .. } => (Some(session), PollState::Done),
    }
}

/// What a redemption asks, read from the token request.
struct Redemption<'a> {
    secret: &'a str,
    client_id: &'a str,
    redirect_uri: Option<&'a str>,
    code_verifier: Option<&'a str>,
    resource: Option<&'a str>,
    origin: &'a str,
    grant: &'a str,
}

/// Redeems the authorization code: the session moves to `Redeemed` only when every check passes.
fn redeem(
    live: Option<Session>,
    r: &Redemption<'_>,
    now_ms: u64,
) -> (Option<Session>, Result<Granted, OAuthError>) {
    let Some(session) = live else {
        return (
            None,
            Err(OAuthError::invalid_grant("The authorization code is unknown or expired.")),
        );
    };
    match check_redemption(&session, r, now_ms) {
        Ok(granted) => {
            let code_hash = sha256_hex(r.secret.as_bytes());
            let stage = Stage::Redeemed {
                pairing: granted.pairing.clone(),
                grant: r.grant.to_owned(),
                code_hash,
            };
            (Some(Session { stage, ..session }), Ok(granted))
        }
        Err(e) => (Some(session), Err(e)),
    }
}

fn check_redemption(
    session: &Session,
    r: &Redemption<'_>,
    now_ms: u64,
) -> Result<Granted, OAuthError> {
    let invalid = |d: &str| Err(OAuthError::invalid_grant(d));
    let Stage::Issued { pairing, code_hash, issued_ms } = &session.stage else {
        // A second redemption, or a code never issued. (Issue 3 revokes what a replay issued.)
        return invalid("The authorization code was already used.");
    };
    if sha256_hex(r.secret.as_bytes()) != *code_hash || now_ms >= issued_ms + AUTH_CODE_TTL_MS {
        return invalid("The authorization code is unknown or expired.");
    }
    let req = &session.request;
    if req.client_id != r.client_id {
        return invalid("The authorization code was issued to another client.");
    }
    if r.redirect_uri.is_some_and(|u| u != req.redirect_uri) {
        return invalid("The redirect_uri differs from the authorization request's.");
    }
    let Some(verifier) = r.code_verifier else {
        return Err(OAuthError::invalid_request("The code_verifier is missing."));
    };
    if !pkce::verify(verifier, &req.code_challenge) {
        return invalid("The code_verifier does not match the code_challenge.");
    }
    if let Some(resource) = r.resource {
        let asked = req.resource.as_deref().map(|a| a.trim_end_matches('/'));
        if !is_this_resource(resource, r.origin)
            || asked.is_some_and(|a| a != resource.trim_end_matches('/'))
        {
            return Err(OAuthError::invalid_target("The resource is not the one authorized."));
        }
    }
    Ok(Granted {
        pairing: pairing.clone(),
        client_name: req.client_name.clone(),
        host: host_of(&req.redirect_uri).to_owned(),
        place: session.place.clone(),
        verified: req.verified_domain.clone(),
    })
}

tabrelay_bundle::read_json!(Stage, "a stage", enum {
    "waiting" => Waiting,
    "confirming" => Confirming { pairing, ticket_hash, until_ms },
    "denied" => Denied,
    "approved" => Approved { pairing },
    "issued" => Issued { pairing, code_hash, issued_ms },
    "redeemed" => Redeemed { pairing, grant, code_hash },
});

tabrelay_bundle::read_json!(Session, "a session", {
    request, browser_hash, seal, created_ms, stage, tries or 0, place
});

tabrelay_bundle::read_json!(Command, "a command", enum {
    "describe" => Describe,
    "deny" => Deny,
    "create" => Create { request, seal, browser_hash, place },
    "approve" => Approve { pairing, linked or false },
    "confirm" => Confirm { secret, browser_hash },
    "poll" => Poll { browser_hash, issuer },
    "redeem" => Redeem {
        secret, client_id, redirect_uri, code_verifier, resource, origin, grant
    },
});

tabrelay_bundle::read_json!(Granted, "a grant", { pairing, client_name, host, place, verified });

tabrelay_bundle::read_json!(CodeRequest, "a command for a code", { code, command });

tabrelay_bundle::read_json!(CodeReply, "a code's reply", tag "reply" {
    "created" => Created,
    "seal_used" => SealUsed,
    "taken" => Taken,
    "described" => Described(Description),
    "to_confirm" => ToConfirm { client, secret },
    "confirmed" => Confirmed { client },
    "refused" => Refused { sentence },
    "poll" => Poll(PollState),
    "redeemed" => Redeemed { granted },
    "redeem_refused" => RedeemRefused { error, error_description, revoke },
});
tabrelay_bundle::read_json!(Description, "who asks for a code", {
    client, host, verified, client_id or String::new(), age_ms, place, lookalike, name_warning
});

tabrelay_bundle::read_json!(PollState, "a waiting page's state", tag "state" {
    "expired" => Expired,
    "not_this_browser" => NotThisBrowser,
    "waiting" => Waiting { expires_in_ms },
    "approved" => Approved { redirect },
    "denied" => Denied { redirect },
    "done" => Done,
});

tabrelay_bundle::read_json!(Revoke, "a grant to revoke", { pairing, grant });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::{round_trip, Counter};
    use serde_json::json;
    use serde_json::Value;
    use tabrelay_bundle::fields::Message as _;

    const ORIGIN: &str = "https://relay.example";
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    /// A code made for the usual request, seal and browser.
    fn create() -> Command {
        Command::Create { request: request(), seal: seal(), browser_hash: "b".into(), place: None }
    }

    fn seal() -> SealId {
        SealId("seal-1".into())
    }

    fn request() -> AuthRequest {
        AuthRequest {
            client_id: "cid".into(),
            client_name: "Claude".into(),
            verified_domain: None,
            redirect_uri: "https://claude.ai/cb".into(),
            state: Some("st".into()),
            code_challenge: CHALLENGE.into(),
            resource: Some(ORIGIN.into()),
            scope: None,
        }
    }

    #[test]
    fn sessions_and_commands_read_back_as_written() {
        let commands = [
            create(),
            Command::Describe,
            Command::Approve { pairing: "p".into(), linked: false },
            linked("p"),
            confirm("s", "b"),
            Command::Deny,
            Command::Poll { browser_hash: "b".into(), issuer: ORIGIN.into() },
            Command::Redeem {
                secret: "s".into(),
                client_id: "cid".into(),
                redirect_uri: None,
                code_verifier: Some(VERIFIER.into()),
                resource: None,
                origin: ORIGIN.into(),
                grant: "g1".into(),
            },
        ];
        for command in &commands {
            round_trip(command);
            let request = CodeRequest { code: "ABCDE12345".into(), command: command.clone() };
            round_trip(&request);
            let read = CodeRequest::decode(&request.encode());
            assert_eq!(read, Some((ConnectCode::parse("ABCDE12345").unwrap(), command.clone())));
        }
        let stranger = CodeRequest { code: "nope".into(), command: Command::Describe };
        assert_eq!(CodeRequest::decode(&stranger.encode()), None, "a request names a code");
        let stages = [
            Stage::Waiting,
            Stage::Confirming { pairing: "p".into(), ticket_hash: "t".into(), until_ms: 9 },
            Stage::Approved { pairing: "p".into() },
            Stage::Issued { pairing: "p".into(), code_hash: "h".into(), issued_ms: 5 },
            Stage::Denied,
            Stage::Redeemed { pairing: "p".into(), grant: "g".into(), code_hash: "h".into() },
        ];
        let verified = AuthRequest { verified_domain: Some("claude.ai".into()), ..request() };
        for stage in stages {
            round_trip(&Session {
                request: verified.clone(),
                browser_hash: "b".into(),
                seal: seal(),
                created_ms: 7,
                stage,
                tries: 2,
                place: Some("Lisbon, PT".into()),
            });
        }
        round_trip(&Granted {
            pairing: "p".into(),
            client_name: "n".into(),
            host: "h".into(),
            place: None,
            verified: Some("claude.ai".into()),
        });
    }

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
            let (s, reply) = apply(self.stored.take(), c, now, &mut self.rng, &self.code);
            self.stored = s;
            assert_eq!(CodeReply::decode(&reply.encode()).as_ref(), Some(&reply));
            serde_json::to_value(&reply).unwrap()
        }
        fn redeem(&mut self, secret: &str, verifier: &str, now: u64) -> Value {
            self.go(
                Command::Redeem {
                    secret: secret.into(),
                    client_id: "cid".into(),
                    redirect_uri: Some("https://claude.ai/cb".into()),
                    code_verifier: Some(verifier.into()),
                    resource: Some(ORIGIN.into()),
                    origin: ORIGIN.into(),
                    grant: "g1".into(),
                },
                now,
            )
        }
    }

    fn poll(browser: &str) -> Command {
        Command::Poll { browser_hash: browser.into(), issuer: ORIGIN.into() }
    }

    fn secret_of(redirect: &str) -> String {
        let code = redirect.split("code=").nth(1).unwrap().split('&').next().unwrap();
        code.split_once('.').unwrap().1.to_owned()
    }

    #[test]
    fn codes_are_typed_forgivingly_and_shown_grouped() {
        let c = ConnectCode::parse("abcde 1234o").unwrap();
        assert_eq!(c.as_str(), "ABCDE12340");
        assert_eq!(c.display(), "ABCDE-12340");
        assert_eq!(ConnectCode::parse("il").map(|c| c.0), None);
        assert_eq!(ConnectCode::parse("ABCDE-1234U"), None);
        assert_eq!(ConnectCode::parse("ABCDE-123456"), None);
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let g = ConnectCode::generate(&mut Counter(7), &keys);
        assert_eq!(ConnectCode::parse(&g.display()), Some(g));
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
            (a["reply"].as_str(), a["client"].as_str()),
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
        assert_eq!((d["client"].as_str(), d["host"].as_str()), (Some("Claude"), Some("claude.ai")));
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
    fn a_code_carries_a_keyed_check_that_made_up_codes_fail() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let mut rng = Counter(11);
        let codes: Vec<ConnectCode> =
            (0..50).map(|_| ConnectCode::generate(&mut rng, &keys)).collect();
        assert!(codes.iter().all(|c| c.is_issued(&keys)));
        let rotated = Keys::new(&"n".repeat(32), Some(&"k".repeat(32))).unwrap();
        assert!(codes.iter().all(|c| c.is_issued(&rotated)), "the previous key still checks");
        let other = Keys::new(&"o".repeat(32), None).unwrap();
        assert!(codes.iter().filter(|c| c.is_issued(&other)).count() <= 1);
        // A made-up code: the random part of an issued one with other check letters.
        let real = codes[0].as_str();
        let mut made_up = 0;
        for c in CODE_ALPHABET.iter().map(|b| char::from(*b)) {
            let tail: String = core::iter::repeat_n(c, CODE_CHECK_LEN).collect();
            let code = ConnectCode::parse(&format!("{}{tail}", &real[..CODE_RANDOM_LEN])).unwrap();
            made_up += usize::from(code.as_str() != real && code.is_issued(&keys));
        }
        assert_eq!(made_up, 0);
        assert_eq!(ConnectCode::parse("ABCDE-12345").map(|c| c.is_issued(&keys)), Some(false));
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

    fn linked(pairing: &str) -> Command {
        Command::Approve { pairing: pairing.into(), linked: true }
    }

    fn confirm(secret: &str, browser: &str) -> Command {
        Command::Confirm { secret: secret.into(), browser_hash: browser.into() }
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

    #[test]
    fn a_link_reference_reads_back_as_its_code_only_with_the_relays_key() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let mut rng = Counter(5);
        let code = ConnectCode::generate(&mut rng, &keys);
        let link = LinkRef::for_code(&code, &keys, &mut rng);
        assert_eq!(link.as_str().len(), LINK_LEN);
        assert!(!link.as_str().contains(code.as_str()), "the link does not carry the code");
        assert_eq!(ConnectCode::parse(link.as_str()), None, "nor is it a code");
        let read = LinkRef::parse(&link.as_str().to_ascii_lowercase()).unwrap();
        assert_eq!(read.code(&keys), Some(code.clone()));
        let rotated = Keys::new(&"n".repeat(32), Some(&"k".repeat(32))).unwrap();
        assert_eq!(read.code(&rotated), Some(code.clone()), "the previous key still reads it");
        let other = Keys::new(&"o".repeat(32), None).unwrap();
        assert_ne!(read.code(&other), Some(code.clone()));
        let t = ticket(link.as_str(), "s3cret");
        assert_eq!(read_ticket(&t, &keys), Some((code.clone(), "s3cret".into())));
        assert!(!t.contains(code.as_str()), "a ticket does not carry the code");
        for bad in
            ["", ".", "s3cret", &format!("{}.", link.as_str()), &format!("{}.s", code.as_str())]
        {
            assert_eq!(read_ticket(bad, &keys), None, "{bad}");
        }
        let again = LinkRef::for_code(&code, &keys, &mut rng);
        assert_ne!(again, link, "each link of a code looks unrelated");
        assert_eq!(LinkRef::parse(code.as_str()), None);
        assert_eq!(LinkRef::parse(&format!("{}U", &link.as_str()[1..])), None);
        // A made-up reference reaches no code (its unmasked letters fail the check).
        let made_up = (0..64)
            .filter_map(|i| LinkRef::parse(&format!("{:0>18}", i)).and_then(|l| l.code(&keys)))
            .count();
        assert_eq!(made_up, 0);
    }

    #[test]
    fn a_seal_draws_the_same_code_each_time_and_others_draw_others() {
        let keys = Keys::new(&"k".repeat(32), None).unwrap();
        let a = SealId("a".into());
        assert_eq!(ConnectCode::for_seal(&keys, &a, 0), ConnectCode::for_seal(&keys, &a, 0));
        assert_ne!(ConnectCode::for_seal(&keys, &a, 0), ConnectCode::for_seal(&keys, &a, 1));
        assert_ne!(
            ConnectCode::for_seal(&keys, &a, 0),
            ConnectCode::for_seal(&keys, &SealId("b".into()), 0)
        );
        let code = ConnectCode::for_seal(&keys, &a, 0);
        assert!(code.is_issued(&keys), "a drawn code carries its check letters");
        let other = Keys::new(&"m".repeat(32), None).unwrap();
        assert_ne!(code, ConnectCode::for_seal(&other, &a, 0), "only the key's holder can draw it");
    }
}
