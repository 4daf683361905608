//! The OAuth endpoints as sagas: each request is a small machine that says what to ask next
//! (a code's Durable Object, a pairing's, the sender limit, a client's metadata document) and,
//! fed each reply, ends in the answer. The shell only does the asking ([`Step`]) and feeds
//! back what came ([`Input`]); every decision, refusal and timer is here, tested natively.
//!
//! A floor above the three it speaks with: OAuth's logic (`crate::oauth`: requests, codes,
//! tokens), the connect code's object (`oauth::connect`) and the pairing (its wire,
//! `pairing::wire`), beside the endpoint and below the routes and the shells. It was
//! `oauth::saga`, and so OAuth imported the pairing while the pairing imported OAuth.

use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::fields::{Encode, Object};

use crate::config::Config;
use crate::crypto::{random_token, sha256_hex, Entropy};
use crate::http::{self, TooLarge};
use crate::limits::{CONNECT_CODE_TTL_MS, MAX_CODE_DRAWS};
use crate::oauth::authorize::{self, AuthRequest, Named, Refusal, SealId};
use crate::oauth::cimd::{self, CimdError, MetadataClient, MetadataUrl};
use crate::oauth::clients;
use crate::oauth::connect::{
    self, CodeReply, Command, ConnectCode, Granted, LinkRef, PollState, Requester,
};
use crate::oauth::error::OAuthError;
use crate::oauth::exchange::{self, TokenRequest};
use crate::pages;
use crate::pairing::wire::{self, GrantReply, RefreshReply, Reply};
use crate::senders::{Limit, Limited};
use crate::sentences;

/// The waiting page's cookie for a code is named this, then the code ([`cookie_name`]).
pub const COOKIE_PREFIX: &str = "tabrelay_connect_";

/// The name of the waiting page's cookie for `code` on a relay at `origin`: `__Host-` first
/// when the relay is served over https, so the browser keeps it only as the relay's own
/// (`Secure`, `Path=/`, no `Domain`: no other name under the relay's domain, nor a page over
/// http, can set or replace it). Served over http (`wrangler dev` on `localhost` or
/// `127.0.0.1`), a browser refuses a `Secure` cookie, and so the prefix, so it goes without.
#[must_use]
pub fn cookie_name(origin: &str, code: &ConnectCode) -> String {
    let host_only = if origin.starts_with("https://") { "__Host-" } else { "" };
    format!("{host_only}{COOKIE_PREFIX}{}", code.as_str())
}

/// What the shell does next for a saga.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum Step {
    /// Ask whether the sender is within its limit; feed [`Input::Limit`].
    AskLimit(Limited),
    /// The client a metadata document names: its checked document if kept, else (`fetch`:
    /// the sender's limit allowed it) fetched and checked, else [`CimdError::NotKept`]; feed
    /// [`Input::Client`].
    FetchClient {
        /// The document's address.
        url: MetadataUrl,
        /// Whether to fetch it when it is not kept.
        fetch: bool,
    },
    /// Send the command to the code's Durable Object; feed [`Input::Code`].
    AskCode(ConnectCode, Command),
    /// Ask the pairing (by its id) this; feed [`Input::Pairing`].
    AskPairing(String, wire::Request),
    /// Answer the request: the saga is over.
    Respond(Outcome),
}

/// What came of a [`Step`], fed back to the saga.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// [`Step::AskLimit`]: what the sender's limit makes of the request.
    Limit(Limit),
    /// [`Step::FetchClient`]: the checked client, or why not.
    Client(Result<MetadataClient, CimdError>),
    /// [`Step::AskCode`]: the object's reply.
    Code(CodeReply),
    /// [`Step::AskPairing`]: the pairing's answer (None: it said nothing).
    Pairing(Option<wire::Reply>),
}

/// The answer to an OAuth request, as the shell writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// JSON (never cached), with a cookie to set when there is one.
    Json {
        /// The status.
        status: u16,
        /// The body, JSON text.
        body: Vec<u8>,
        /// A `Set-Cookie` value.
        cookie: Option<String>,
    },
    /// An OAuth error: its status, body and (a 401's) challenge.
    Error(OAuthError),
    /// One of the relay's pages.
    Page {
        /// The status.
        status: u16,
        /// The page.
        html: String,
    },
    /// A 302 to this address.
    Redirect(String),
    /// An empty 200.
    Empty,
    /// A reply that does not answer what was asked (the object or the pairing broke its side
    /// of the wire): the request fails.
    Broken,
}

impl Outcome {
    /// Where a waiting page stands (`{"state": …}`).
    fn poll(status: u16, state: &PollState) -> Self {
        Self::json(status, state)
    }

    fn json(status: u16, body: &dyn Encode) -> Self {
        Self::Json { status, body: body.to_json(), cookie: None }
    }

    /// A waiting page's script reads `{"sentence": …}`.
    #[must_use]
    pub fn sentence(status: u16, sentence: &str) -> Self {
        let mut body = Vec::new();
        let mut o = Object::open(&mut body);
        o.text("sentence", sentence);
        o.close();
        Self::Json { status, body, cookie: None }
    }

    fn page_stale() -> Self {
        Self::Page { status: 400, html: pages::confirmed(Err(connect::refusal::TICKET_STALE)) }
    }

    /// The answer as HTTP, every header it carries; None for [`Outcome::Broken`] (the request
    /// fails).
    #[must_use]
    pub fn http(self) -> Option<http::Answer> {
        Some(match self {
            Self::Json { status, body, cookie } => {
                let answer = http::Answer::json_text(status, body);
                match cookie {
                    Some(cookie) => answer.with("set-cookie", &cookie),
                    None => answer,
                }
            }
            Self::Error(e) => {
                let answer = http::Answer::json_text(e.status, e.body());
                match e.challenge() {
                    Some(challenge) => answer.with("www-authenticate", challenge),
                    None => answer,
                }
            }
            Self::Page { status, html } => http::Answer::page(status, html),
            Self::Redirect(to) => http::Answer::redirect(to),
            Self::Empty => http::Answer::empty(200),
            Self::Broken => return None,
        })
    }
}

/// An OAuth request as the shell read it: what [`Saga::start`] needs of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthRequest<'r> {
    /// Its path (the router matched its method).
    pub path: &'r str,
    /// Its decoded query.
    pub query: Vec<(String, String)>,
    /// Its body, read with the path's [`body_cap`](crate::routes::body_cap) (a GET's is empty).
    pub body: Result<Vec<u8>, TooLarge>,
    /// Its `Accept`.
    pub accept: Option<&'r str>,
    /// Its `Cookie`.
    pub cookies: Option<&'r str>,
    /// Where it came from, as the platform says ([`connect::place_said`]).
    pub place: Option<String>,
}

/// Where a saga stands: what it waits for.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// Answered: nothing more.
    Over,
    /// `/authorize` waits for the client's document: kept, then (when not kept) the sender's
    /// limit on fetches, then the fetch.
    Document { pairs: Vec<(String, String)>, json: bool, url: MetadataUrl },
    /// The code endpoint waits for the sender limit…
    Limit { request: AuthRequest, seal: SealId, place: Option<String> },
    /// … then for each draw of a code.
    Draw(Drawing),
    /// The confirm page waits for the code's object.
    Confirm,
    /// The waiting page's poll waits for the code's object.
    Poll,
    /// The token endpoint waits for the code's object to redeem.
    Redeem {
        /// The id the grant will have.
        grant: String,
        /// The client redeeming.
        client_id: String,
    },
    /// … then for the pairing to make the grant.
    Grant(Granted),
    /// … or for the pairing to revoke what a replayed code made; then refuses with this.
    Replayed(OAuthError),
    /// A refresh waits for the pairing.
    Refresh { pairing: String, grant: String },
    /// A revocation waits for the pairing.
    Revoke,
}

/// A connect code being drawn for a seal.
#[derive(Debug, Clone, PartialEq)]
struct Drawing {
    request: AuthRequest,
    seal: SealId,
    place: Option<String>,
    /// The secret of the browser's cookie.
    secret: String,
    /// Which draw (0, then 1… while other requests hold the drawn letters).
    attempt: u8,
}

/// One OAuth request's saga: built by [`Saga::start`] or the endpoint's constructor (which
/// return the first [`Step`]), then fed an [`Input`] per step until it answers. Each endpoint's
/// first step is a method on the saga (`…_step`), so that `start` builds one saga for all.
#[derive(Debug)]
pub struct Saga<'c> {
    config: &'c Config,
    origin: &'c str,
    now_ms: u64,
    stage: Stage,
}

impl<'c> Saga<'c> {
    fn new(config: &'c Config, origin: &'c str, now_ms: u64) -> Self {
        Self { config, origin, now_ms, stage: Stage::Over }
    }

    /// A saga of one route begun by its first step (`first`), as [`Saga::start`] begins the
    /// route a path names.
    fn begun(
        config: &'c Config,
        origin: &'c str,
        now_ms: u64,
        first: impl FnOnce(&mut Self) -> Step,
    ) -> (Self, Step) {
        let mut saga = Self::new(config, origin, now_ms);
        let step = first(&mut saga);
        (saga, step)
    }

    /// The saga of the OAuth route `request.path` names, and its first step; None for a path
    /// that is no OAuth route.
    pub fn start(
        config: &'c Config,
        origin: &'c str,
        request: OAuthRequest<'_>,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Option<(Self, Step)> {
        let OAuthRequest { path, query, body, accept, cookies, place } = request;
        let mut saga = Self::new(config, origin, now_ms);
        let step = match path {
            "/register" => saga.register_step(body, entropy),
            "/token" => saga.token_step(body, entropy),
            "/revoke" => saga.revoke_step(body),
            pages::CODE_PATH => saga.draw_step(body, place),
            pages::STATUS_PATH => saga.status_step(&query, cookies),
            "/authorize" => saga.authorize_step(query, accept),
            tabrelay_bundle::protocol::CONFIRM_PATH => saga.confirm_step(&query, cookies),
            _ => return None,
        };
        Some((saga, step))
    }

    fn wait(&mut self, stage: Stage, step: Step) -> Step {
        self.stage = stage;
        step
    }

    /// `POST /register`: registers a client (RFC 7591).
    pub fn register(
        config: &'c Config,
        body: Result<Vec<u8>, TooLarge>,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> (Self, Step) {
        Self::begun(config, "", now_ms, |saga| saga.register_step(body, entropy))
    }

    fn register_step(
        &mut self,
        body: Result<Vec<u8>, TooLarge>,
        entropy: &mut dyn Entropy,
    ) -> Step {
        Step::Respond(match body {
            Err(too_large) => Outcome::Error(OAuthError::too_large(too_large.cap)),
            Ok(body) => match clients::register(&self.config.keys, &body, self.now_ms, entropy) {
                Ok(registered) => Outcome::json(201, &registered),
                Err(e) => Outcome::Error(e),
            },
        })
    }

    /// `GET /authorize`: the waiting page for a valid request (a document client's document
    /// fetched first), else the refusal: on the page, as JSON for a program probing
    /// (`accept`), or back at the client's verified redirect URI.
    pub fn authorize(
        config: &'c Config,
        origin: &'c str,
        pairs: Vec<(String, String)>,
        accept: Option<&str>,
        now_ms: u64,
    ) -> (Self, Step) {
        Self::begun(config, origin, now_ms, |saga| saga.authorize_step(pairs, accept))
    }

    fn authorize_step(&mut self, pairs: Vec<(String, String)>, accept: Option<&str>) -> Step {
        let json = authorize::wants_json(accept);
        match authorize::client_named(&pairs, &self.config.keys) {
            Ok(Named::Registered(client)) => self.validate(&pairs, client.into(), json),
            // Refused on the page: the redirect URI is not verified until the document is.
            Ok(Named::Document(url)) => {
                match cimd::check_fetchable(&url, &self.config.local_metadata_hosts) {
                    Ok(()) => {
                        let step = Step::FetchClient { url: url.clone(), fetch: false };
                        self.wait(Stage::Document { pairs, json, url }, step)
                    }
                    Err(e) => refused(e.oauth(url.domain()), json),
                }
            }
            Err(e) => refused(e, json),
        }
    }

    fn validate(&self, pairs: &[(String, String)], asking: authorize::Asking, json: bool) -> Step {
        let request = match authorize::validate(pairs, asking, self.origin) {
            Ok(request) => request,
            Err(Refusal::Page(e)) => return refused(e, json),
            Err(Refusal::Redirect(to)) => return Step::Respond(Outcome::Redirect(to)),
        };
        // No connect code yet: the page's script asks for one with the sealed request.
        let sealed = authorize::seal(&self.config.keys, &request, self.now_ms);
        let html = waiting_page(self.config, &request, &sealed, true);
        Step::Respond(Outcome::Page { status: 200, html })
    }

    /// `POST /authorize/code`: the waiting page, running in a browser, asks for its connect
    /// code with its sealed request. Within the sender's limit, the seal's code is drawn from
    /// the seal: posting it again reaches the same object, which says its code was made, so one
    /// seal makes at most one code (and one object) whoever posts it however often; another
    /// seal holding the drawn letters makes the next draw. The browser's cookie binds the page
    /// to the code, for as long as the code lives.
    pub fn draw(
        config: &'c Config,
        origin: &'c str,
        body: Result<Vec<u8>, TooLarge>,
        place: Option<String>,
        now_ms: u64,
    ) -> (Self, Step) {
        Self::begun(config, origin, now_ms, |saga| saga.draw_step(body, place))
    }

    fn draw_step(&mut self, body: Result<Vec<u8>, TooLarge>, place: Option<String>) -> Step {
        let body = match body {
            Ok(body) => body,
            Err(too_large) => {
                let sentence = sentences::too_large(too_large.cap);
                return Step::Respond(Outcome::sentence(413, &sentence));
            }
        };
        let sealed = String::from_utf8_lossy(&body);
        let Some((request, seal)) = authorize::unseal(&self.config.keys, &sealed, self.now_ms)
        else {
            return Step::Respond(Outcome::sentence(400, sentences::SEAL_STALE));
        };
        // A seal makes at most one code, but anyone may fetch a waiting page and post its
        // seal: each sender may make only so many codes (and objects) a minute.
        self.wait(Stage::Limit { request, seal, place }, Step::AskLimit(Limited::Code))
    }

    /// `GET` the confirm page a tab opens after approving through the waiting page's link:
    /// the ticket names the link (so the code) and the approval; the browser's cookie
    /// (`cookies`, the request's header) says whether it opened the waiting page. The code's
    /// object decides.
    pub fn confirm(
        config: &'c Config,
        origin: &'c str,
        query: &[(String, String)],
        cookies: Option<&str>,
    ) -> (Self, Step) {
        Self::begun(config, origin, 0, |saga| saga.confirm_step(query, cookies))
    }

    fn confirm_step(&mut self, query: &[(String, String)], cookies: Option<&str>) -> Step {
        let ticket = param(query, tabrelay_bundle::protocol::CONFIRM_TICKET_PARAM);
        // A ticket naming no link this relay made is refused before any object is addressed.
        let keys = &self.config.keys;
        let Some((code, secret)) = connect::read_ticket(ticket.unwrap_or_default(), keys) else {
            return Step::Respond(Outcome::page_stale());
        };
        let browser_hash = browser_hash(self.origin, cookies, &code);
        let command = Command::Confirm { secret, browser_hash };
        self.wait(Stage::Confirm, Step::AskCode(code, command))
    }

    /// `GET /authorize/status`: where the waiting page of `code` stands, for its browser.
    pub fn status(
        config: &'c Config,
        origin: &'c str,
        query: &[(String, String)],
        cookies: Option<&str>,
    ) -> (Self, Step) {
        Self::begun(config, origin, 0, |saga| saga.status_step(query, cookies))
    }

    fn status_step(&mut self, query: &[(String, String)], cookies: Option<&str>) -> Step {
        let code = param(query, "code").and_then(ConnectCode::parse);
        // A code this relay did not make is refused before any object is addressed.
        let Some(code) = code.filter(|c| c.is_issued(&self.config.keys)) else {
            return Step::Respond(Outcome::poll(400, &PollState::Expired));
        };
        let browser_hash = browser_hash(self.origin, cookies, &code);
        let command = Command::Poll { browser_hash, issuer: self.origin.to_owned() };
        self.wait(Stage::Poll, Step::AskCode(code, command))
    }

    /// `POST /token`: an authorization code redeemed at its object, then its grant made by the
    /// pairing; or a refresh token rotated by its pairing. Either ends in tokens or an OAuth
    /// error.
    pub fn token(
        config: &'c Config,
        origin: &'c str,
        body: Result<Vec<u8>, TooLarge>,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> (Self, Step) {
        Self::begun(config, origin, now_ms, |saga| saga.token_step(body, entropy))
    }

    fn token_step(&mut self, body: Result<Vec<u8>, TooLarge>, entropy: &mut dyn Entropy) -> Step {
        let keys = &self.config.keys;
        let read = body
            .map_err(|too_large| OAuthError::too_large(too_large.cap))
            .and_then(|body| exchange::read(&body, keys, self.origin, entropy));
        match read {
            Err(e) => Step::Respond(Outcome::Error(e)),
            // Not a code this relay made: refused before any object is addressed.
            Ok(TokenRequest::Code(code, _)) if !code.is_issued(keys) => {
                refuse(sentences::oauth::CODE_UNKNOWN)
            }
            Ok(TokenRequest::Code(code, redemption)) => {
                let (grant, client_id) = (redemption.grant.clone(), redemption.client_id.clone());
                let step = Step::AskCode(code, Command::Redeem(redemption));
                self.wait(Stage::Redeem { grant, client_id }, step)
            }
            Ok(TokenRequest::Refresh { pairing, request }) => {
                let stage =
                    Stage::Refresh { pairing: pairing.clone(), grant: request.grant.clone() };
                self.wait(stage, Step::AskPairing(pairing, wire::Request::Refresh(request)))
            }
        }
    }

    /// `POST /revoke` (RFC 7009): the grant's pairing revokes it when the token is ours; the
    /// answer is an empty 200 either way.
    pub fn revoke(
        config: &'c Config,
        origin: &'c str,
        body: Result<Vec<u8>, TooLarge>,
        now_ms: u64,
    ) -> (Self, Step) {
        Self::begun(config, origin, now_ms, |saga| saga.revoke_step(body))
    }

    fn revoke_step(&mut self, body: Result<Vec<u8>, TooLarge>) -> Step {
        let (keys, origin, now_ms) = (&self.config.keys, self.origin, self.now_ms);
        let read = body
            .map_err(|too_large| OAuthError::too_large(too_large.cap))
            .and_then(|body| exchange::revocation(&body, keys, origin, now_ms));
        match read {
            Err(e) => Step::Respond(Outcome::Error(e)),
            Ok(None) => Step::Respond(Outcome::Empty),
            Ok(Some((pairing, request))) => {
                self.wait(Stage::Revoke, Step::AskPairing(pairing, wire::Request::Revoke(request)))
            }
        }
    }

    /// Feeds what came of the last step: the next one. Every shell gives it through
    /// [`SagaRun`] (by `machine::turn`).
    fn next(&mut self, input: Input, entropy: &mut dyn Entropy) -> Step {
        match (core::mem::replace(&mut self.stage, Stage::Over), input) {
            // Not kept: each fetch counts against the sender's limit, asked first.
            (stage @ Stage::Document { .. }, Input::Client(Err(CimdError::NotKept))) => {
                self.wait(stage, Step::AskLimit(Limited::Document))
            }
            (Stage::Document { pairs, json, url }, Input::Limit(limit)) => {
                match limit.refusal(sentences::TOO_MANY_DOCUMENTS) {
                    None => {
                        let step = Step::FetchClient { url: url.clone(), fetch: true };
                        self.wait(Stage::Document { pairs, json, url }, step)
                    }
                    Some((status, why)) => {
                        refused(OAuthError::temporarily_unavailable(status, why), json)
                    }
                }
            }
            (Stage::Document { pairs, json, url }, Input::Client(client)) => match client {
                Ok(client) => self.validate(&pairs, client.into(), json),
                Err(e) => refused(e.oauth(url.domain()), json),
            },
            (Stage::Limit { request, seal, place }, Input::Limit(limit)) => {
                match limit.refusal(sentences::TOO_MANY_CODES) {
                    None => {
                        let secret = random_token(entropy, 32);
                        self.ask_draw(Drawing { request, seal, place, secret, attempt: 0 })
                    }
                    Some((status, why)) => Step::Respond(Outcome::sentence(status, why)),
                }
            }
            (Stage::Draw(drawing), Input::Code(reply)) => match reply {
                CodeReply::Created => Step::Respond(self.drawn(&drawing, entropy)),
                CodeReply::SealUsed => Step::Respond(Outcome::sentence(409, sentences::SEAL_USED)),
                // Another request holds these letters: draw again.
                _ if drawing.attempt + 1 < MAX_CODE_DRAWS => {
                    self.ask_draw(Drawing { attempt: drawing.attempt + 1, ..drawing })
                }
                _ => Step::Respond(Outcome::sentence(503, sentences::CODE_NOT_MADE)),
            },
            (Stage::Confirm, Input::Code(reply)) => Step::Respond(match reply {
                CodeReply::Confirmed { client } => {
                    Outcome::Page { status: 200, html: pages::confirmed(Ok(&client)) }
                }
                CodeReply::Refused { sentence } => {
                    Outcome::Page { status: 403, html: pages::confirmed(Err(&sentence)) }
                }
                _ => Outcome::page_stale(),
            }),
            (Stage::Poll, Input::Code(reply)) => {
                let state = match reply {
                    CodeReply::Poll(state) => state,
                    _ => PollState::Expired,
                };
                Step::Respond(Outcome::poll(200, &state))
            }
            (Stage::Redeem { grant, client_id }, Input::Code(reply)) => {
                self.redeemed(grant, client_id, reply)
            }
            (Stage::Grant(granted), Input::Pairing(Some(Reply::Grant(made)))) => match made {
                GrantReply::Made { grant, secret } => {
                    Step::Respond(self.tokens(granted, &grant, &secret))
                }
                // The pairing filled up between the approval and now: it removes none.
                GrantReply::Full => refuse(sentences::GRANT_REFUSED_FULL),
                // Its code was replayed meanwhile: the grant was revoked before it was made.
                GrantReply::Replayed => refuse(sentences::CODE_REPLAYED),
            },
            (Stage::Replayed(e), Input::Pairing(_)) => Step::Respond(Outcome::Error(e)),
            (Stage::Refresh { pairing, grant }, Input::Pairing(Some(Reply::Refresh(r)))) => match r
            {
                RefreshReply::Rotated { secret, client_name, host } => {
                    // Shown again as every name is: a grant made before may hold what is not.
                    let (client_name, host) = (
                        authorize::shown_name(&client_name),
                        clients::clean_text(&host, usize::MAX),
                    );
                    let requester = Requester { client_name, host, place: None, verified: None };
                    let granted = Granted { pairing, requester };
                    Step::Respond(self.tokens(granted, &grant, &secret))
                }
                RefreshReply::Refused { description } => refuse(&description),
            },
            (Stage::Revoke, Input::Pairing(_)) => Step::Respond(Outcome::Empty),
            // An input the saga did not ask for: nothing more comes of it.
            _ => Step::Respond(Outcome::Broken),
        }
    }

    /// Asks the code's object to make the code of this draw.
    fn ask_draw(&mut self, d: Drawing) -> Step {
        let code = ConnectCode::for_seal(&self.config.keys, &d.seal, d.attempt);
        let command = Command::Create {
            request: d.request.clone(),
            seal: d.seal.clone(),
            browser_hash: sha256_hex(d.secret.as_bytes()),
            place: d.place.clone(),
        };
        self.wait(Stage::Draw(d), Step::AskCode(code, command))
    }

    /// The code a draw made, as the waiting page shows it, and its browser's cookie, kept as
    /// long as the code lives.
    fn drawn(&self, d: &Drawing, entropy: &mut dyn Entropy) -> Outcome {
        let code = ConnectCode::for_seal(&self.config.keys, &d.seal, d.attempt);
        // The link carries a reference only the relay reads back, never the code.
        let reference = LinkRef::for_code(&code, &self.config.keys, entropy);
        let link = pages::approval_link(&self.config.app_url, reference.as_str());
        let secure = if self.origin.starts_with("https://") { "; Secure" } else { "" };
        let cookie = format!(
            "{}={}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
            cookie_name(self.origin, &code),
            d.secret,
            CONNECT_CODE_TTL_MS / 1000,
        );
        let mut body = Vec::new();
        let mut o = Object::open(&mut body);
        o.field("code", &code.display());
        o.field("link", &link);
        o.close();
        Outcome::Json { status: 200, body, cookie: Some(cookie) }
    }

    /// What the code's object said to a redemption: the grant to make, or the refusal (after
    /// revoking what a replayed code made).
    fn redeemed(&mut self, grant_id: String, client_id: String, reply: CodeReply) -> Step {
        match reply {
            CodeReply::Redeemed { granted } => {
                let pairing = granted.pairing.clone();
                let ask = wire::Request::Grant(wire::GrantRequest {
                    id: grant_id,
                    client_id,
                    requester: granted.requester.clone(),
                });
                self.wait(Stage::Grant(granted), Step::AskPairing(pairing, ask))
            }
            CodeReply::RedeemRefused { refused: e, revoke } => {
                match revoke {
                    // The code was replayed: what it issued is revoked, and refused should
                    // the first redemption's creation of it reach the pairing after this.
                    Some(connect::Revoke { pairing, grant }) => {
                        let step = Step::AskPairing(pairing, wire::Request::Replayed { grant });
                        self.wait(Stage::Replayed(e), step)
                    }
                    None => Step::Respond(Outcome::Error(e)),
                }
            }
            _ => Step::Respond(Outcome::Broken),
        }
    }

    fn tokens(&self, granted: Granted, grant: &str, secret: &str) -> Outcome {
        let keys = &self.config.keys;
        let tokens = exchange::tokens(keys, self.origin, granted, grant, secret, self.now_ms);
        Outcome::json(200, &tokens)
    }
}

/// The waiting page of a checked request sealed as `sealed`: who asks, the app by the name its
/// catalogue gives and the address the link opens, and where approving sends the person when
/// `sent_back` (`/authorize`'s page; the local server serves its agent app's request with it
/// too, whose approval sends the person nowhere).
#[must_use]
#[inline(always)] // as it was written in `/authorize`'s saga: the Worker's code laid out as before
pub fn waiting_page(
    config: &Config,
    request: &AuthRequest,
    sealed: &str,
    sent_back: bool,
) -> String {
    let host = clients::shown_host(&request.redirect_uri);
    let asker = pages::Asker {
        name: &request.client_name,
        verified_domain: request.verified_domain.as_deref(),
        redirect_host: sent_back.then_some(host.as_str()),
    };
    let app = Catalogue::bundled().app;
    pages::waiting(sealed, &asker, (&app, &config.app_url))
}

fn param<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// An `invalid_grant` with this sentence.
fn refuse(sentence: &str) -> Step {
    Step::Respond(Outcome::Error(OAuthError::invalid_grant(sentence)))
}

/// A refused `/authorize`: the OAuth error for a program (its status; 401 for
/// `invalid_client`, so it registers again), the page for a person.
fn refused(e: OAuthError, json: bool) -> Step {
    Step::Respond(if json {
        Outcome::Error(e)
    } else {
        Outcome::Page { status: 400, html: pages::refused(e.code, &e.description) }
    })
}

/// SHA-256 of the secret in the waiting page's cookie for `code` on a relay at `origin`
/// ([`cookie_name`]), as the browser sent it in its `Cookie` header (empty when it sent none).
#[must_use]
pub fn browser_hash(origin: &str, cookies: Option<&str>, code: &ConnectCode) -> String {
    let name = cookie_name(origin, code);
    http::cookie(cookies, &name).map(|s| sha256_hex(s.as_bytes())).unwrap_or_default()
}

/// A saga as the core's one machine shape: its outputs its [`Step`]s (the first the one
/// [`Saga::start`] returned), each input what came of the last; no timeout (each ask is bounded
/// where it is carried out).
#[derive(Debug)]
pub struct SagaRun<'c> {
    saga: Saga<'c>,
    step: Option<Step>,
}

impl<'c> SagaRun<'c> {
    /// The run of a saga from its first step (as [`Saga::start`] returns them).
    #[must_use]
    pub fn new((saga, step): (Saga<'c>, Step)) -> Self {
        Self { saga, step: Some(step) }
    }
}

impl crate::machine::Machine for SagaRun<'_> {
    type Input = Input;
    type Output = Step;
    type Host<'h> = dyn Entropy + 'h;

    #[inline]
    fn handle_input(&mut self, input: Input, _now_ms: u64, entropy: &mut (dyn Entropy + '_)) {
        self.step = Some(self.saga.next(input, entropy));
    }

    #[inline]
    fn poll_output(&mut self, _: &mut (dyn Entropy + '_)) -> Option<Step> {
        self.step.take()
    }

    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        None
    }

    #[inline]
    fn handle_timeout(&mut self, _now_ms: u64, _: &mut (dyn Entropy + '_)) {}
}

#[cfg(test)]
mod tests;
