//! The connection's consent, as any agent app's: the local server is its own OAuth client of
//! the relay's own OAuth machines. It registers the agent app (named from its `clientInfo`,
//! "<name> (local)"), makes a connect code through the same sagas as the Worker's `/register`,
//! `/authorize` and `/authorize/code` (each code's object the core's `CodeObject`, moved by
//! `machine::turn` as its Durable Object is, its one row kept here), and says the code to the agent app (its calls, the status tool, the
//! instructions), with the address of its waiting page ([`crate::link`]). The person types it
//! into their tab (or opens the page, and its link approves in the browser that opened it),
//! whose pairing asks the code's session as on the relay; then the waiting page's poll and the token endpoint run as on the relay (the
//! pairing makes the grant), and the token goes with every message. Forget in the tab ends the
//! grant: the endpoint answers 401 and a new code is made.

use std::collections::HashMap;

use serde_json::Value;
use tabrelay::config::CODE_KEPT_MS;
use tabrelay::crypto::{random_token, Entropy};
use tabrelay::http::TooLarge;
use tabrelay::jsonrpc::{self, ErrorCode};
use tabrelay::limits::CONNECT_CODE_TTL_MS;
use tabrelay::machine::{self, Machine, Platform};
use tabrelay::mcp::{self, Headers, Reply as McpReply};
use tabrelay::oauth::authorize::{self, Named};
use tabrelay::oauth::connect::stored::{self, CodeObject, Output};
use tabrelay::oauth::connect::{refusal, CodeReply, Command, ConnectCode};
use tabrelay::oauth::pkce;
use tabrelay::pairing::wire::Request;
use tabrelay::saga::{Input, Outcome, Saga, SagaRun, Step};
use tabrelay::senders::Limit;
use tabrelay::sentences::local as said;
use tabrelay::sql::{Bind, Failed, Rows, Sql};

use crate::pump::{write_line, Local};
use crate::OsRandom;

/// A code waiting for the person, and what redeems it.
#[derive(Debug, Clone)]
pub struct Waiting {
    pub code: String,
    client_id: String,
    redirect_uri: String,
    verifier: String,
    /// The waiting page's cookie (`name=secret`).
    cookie: String,
    /// When the code dies (a new one is made then).
    until: u64,
    /// The waiting page this server serves for the code ([`crate::link`]): its address's own
    /// part (random: no code, no token), its request as sealed, the page, and the answer its
    /// script gets for the sealed request (the code, the link to the app, the cookie).
    pub page: String,
    pub sealed: String,
    pub html: String,
    pub drawn: Outcome,
}

/// Where the connection stands.
#[derive(Debug, Default)]
pub struct Consent {
    /// The agent app's name, once a message named it.
    pub name: Option<String>,
    waiting: Option<Waiting>,
    /// The access token and refresh token, and when to refresh.
    tokens: Option<(String, String, u64)>,
    /// The person approved: poll the code's session on the next step.
    poll: bool,
    /// The agent app's `initialize`, replayed through the endpoint once connected.
    initialize: Option<Vec<u8>>,
    /// The connect codes' objects, by code (each as its Durable Object is).
    codes: HashMap<String, Code>,
    /// The registered client the tokens were issued to (a refresh names it).
    client_id: Option<String>,
}

/// A connect code's object, as the relay's Durable Object of that code is: the core's
/// [`CodeObject`], its storage one row.
#[derive(Debug)]
struct Code {
    object: CodeObject,
    row: Row,
}

/// A code object's storage: the one row of its session, the statements of
/// [`stored`] carried out by what they do (its table's making is nothing here).
#[derive(Debug, Default)]
struct Row(Option<String>);

impl Sql for Row {
    fn exec(&mut self, query: &str, mut bindings: Vec<Bind>) -> Result<Rows, Failed> {
        match query {
            stored::READ => {
                return Ok(self.0.iter().map(|body| vec![Some(body.clone())]).collect())
            }
            stored::WRITE => {
                let Some(Bind::Text(body)) = bindings.pop() else { return Err(Failed) };
                self.0 = Some(body);
            }
            stored::DELETE => self.0 = None,
            _ => {}
        }
        Ok(Vec::new())
    }
}

impl Consent {
    /// The access token, once the person connected the agent app.
    pub fn token(&self) -> Option<&str> {
        self.tokens.as_ref().map(|(t, _, _)| t.as_str())
    }

    /// The connection was forgotten in the tab (or its tokens stopped working): nothing of it
    /// is kept for the next run either.
    pub fn forgotten(&mut self, state: Option<&std::path::Path>) {
        self.tokens = None;
        self.waiting = None;
        if let Some(name) = &self.name {
            crate::state::Connection::forget(state, name);
        }
    }

    /// When the consent next needs waking: a code's death, a token's refresh, or a code's
    /// object its end.
    pub fn poll_timeout(&self) -> Option<u64> {
        let objects = self.codes.values().map(|c| Machine::poll_timeout(&c.object));
        machine::earliest(objects.chain([self.own_timeout()]))
    }

    /// A code's death, or a token's refresh.
    fn own_timeout(&self) -> Option<u64> {
        let waiting = self.waiting.as_ref().map(|w| w.until);
        waiting.or(self.tokens.as_ref().map(|t| t.2))
    }

    /// The code objects whose end came forget their session, as the relay's do at their alarm.
    fn codes_due(&mut self, now: u64) {
        self.codes.retain(|_, c| {
            let (mut gone, host) =
                (false, &mut Platform { sql: &mut c.row, entropy: &mut OsRandom });
            machine::turn(&mut c.object, None, now, host, |o| gone |= o == Output::Forget);
            !gone
        });
    }

    /// A command to a code's session (what the code's Durable Object does: [`apply`]).
    pub fn code(
        &mut self,
        code: &ConnectCode,
        command: Command,
        now: u64,
        entropy: &mut dyn Entropy,
    ) -> CodeReply {
        // Decided (approved, confirmed or denied): the session is polled on the next step, so
        // an approval is taken up at once and a denial makes a new code.
        let approving =
            matches!(command, Command::Approve { .. } | Command::Confirm { .. } | Command::Deny);
        let made =
            || Code { object: CodeObject::new(code.clone(), CODE_KEPT_MS), row: Row::default() };
        let c = self.codes.entry(code.as_str().to_owned()).or_insert_with(made);
        let mut reply = None;
        let host = &mut Platform { sql: &mut c.row, entropy };
        machine::turn(&mut c.object, Some(command), now, host, |o| {
            if let Output::Reply(said) = o {
                reply = Some(said);
            }
        });
        // A code never created, or whose session ended, keeps nothing (nor its object).
        if c.row.0.is_none() {
            self.codes.remove(code.as_str());
        }
        // An approval here sends the person nowhere (the agent app is told, not redirected):
        // the tab names no place they return to, as the waiting page does not.
        if let Some(CodeReply::Described(described)) = &mut reply {
            described.requester.host.clear();
        }
        // Its storage is this row, whose writes never fail: a reply always comes.
        let reply =
            reply.unwrap_or_else(|| CodeReply::Refused { sentence: refusal::UNKNOWN.to_owned() });
        if approving && self.waiting.as_ref().is_some_and(|w| w.code == code.display()) {
            self.poll = true;
        }
        reply
    }

    /// Whether connect code `code` (as the tab sends it) is this agent app's.
    pub fn holds(&self, code: &str) -> bool {
        self.codes.contains_key(code) || self.waiting.as_ref().is_some_and(|w| w.code == code)
    }

    /// The agent app's `initialize`, answered by a server before this one (which went away: this
    /// one took its place): its name, and the message to replay once connected.
    pub fn adopt(&mut self, initialize: &[u8]) {
        let parsed: Option<Value> = serde_json::from_slice(initialize).ok();
        self.name = parsed.as_ref().and_then(client_name);
        self.initialize = Some(initialize.to_vec());
    }

    /// The code to type, as the agent app is told it.
    fn code_said(&self) -> &str {
        self.waiting.as_ref().map_or(said::NO_CODE_YET, |w| w.code.as_str())
    }

    /// The code waiting for the person, if any (its waiting page is served while it waits).
    pub fn waiting(&self) -> Option<&Waiting> {
        self.waiting.as_ref()
    }
}

/// The form body of `pairs`.
fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    let mut s = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        s.append_pair(k, v);
    }
    s.finish().into_bytes()
}

/// A JSON answer's body.
fn json_of(answer: &Outcome) -> Option<Value> {
    match answer {
        Outcome::Json { body, .. } => serde_json::from_slice(body).ok(),
        _ => None,
    }
}

impl Local {
    /// Runs a saga from its first step to its answer: the sender limit is the person's own
    /// machine (within), a code's command goes to its session here, a pairing's ask to its
    /// object (whose replies to a grant or a refresh come at once).
    pub(crate) fn run_saga(&mut self, saga: Saga<'_>, step: Step, now: u64) -> Option<Outcome> {
        let (mut saga, mut input) = (SagaRun::new((saga, step)), None);
        loop {
            let mut step = None;
            machine::turn(&mut saga, input, now, &mut OsRandom, |s| step = Some(s));
            input = Some(match step? {
                Step::Respond(answer) => return Some(answer),
                Step::AskLimit(_) => Input::Limit(Limit::Within),
                Step::AskCode(code, command) => {
                    Input::Code(self.consent.code(&code, command, now, &mut OsRandom))
                }
                Step::AskPairing(id, request) => Input::Pairing(self.ask_now(&id, request, now)),
                Step::FetchClient { .. } => return None,
            });
        }
    }

    /// A pairing's reply to a saga's request, carried out with everything else it says.
    fn ask_now(
        &mut self,
        id: &str,
        request: Request,
        now: u64,
    ) -> Option<tabrelay::pairing::wire::Reply> {
        let asker = self.request(id, request, now);
        self.saga_ask = Some((id.to_owned(), asker, None));
        self.pump(now);
        self.saga_ask.take().and_then(|(_, _, reply)| reply)
    }

    /// Makes a connect code for the agent app: registered as "<name> (local)", its request
    /// checked and sealed as `/authorize` does, its code drawn as the waiting page's
    /// `/authorize/code` does.
    fn new_code(&mut self, now: u64) -> Option<Waiting> {
        let (config, origin) = (self.config, self.origin.clone());
        let name = self.consent.name.clone().unwrap_or_else(|| "An agent app".into());
        let redirect_uri = format!("{origin}/connected");
        let registration = serde_json::json!({
            "client_name": format!("{name} (local)"),
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
        });
        let body = Ok(registration.to_string().into_bytes());
        let (saga, step) = Saga::register(config, body, now, &mut OsRandom);
        let registered = json_of(&self.run_saga(saga, step, now)?)?;
        let client_id = registered.get("client_id")?.as_str()?.to_owned();
        let verifier = random_token(&mut OsRandom, 32);
        let pairs: Vec<(String, String)> = [
            ("response_type", "code"),
            ("client_id", &client_id),
            ("redirect_uri", &redirect_uri),
            ("code_challenge", &pkce::s256(&verifier)),
            ("code_challenge_method", "S256"),
            ("resource", &format!("{origin}/")),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let Ok(Named::Registered(client)) = authorize::client_named(&pairs, &config.keys) else {
            return None;
        };
        let request = authorize::validate(&pairs, client.into(), &origin).ok()?;
        let sealed = authorize::seal(&config.keys, &request, now);
        // The page `/authorize` would show, served on this port for the person's browser; an
        // approval here sends the person nowhere (the agent app is told, not redirected).
        let html = tabrelay::saga::waiting_page(config, &request, &sealed, false);
        let (saga, step) = Saga::draw(config, &origin, Ok(sealed.clone().into_bytes()), None, now);
        let drawn = self.run_saga(saga, step, now)?;
        let Outcome::Json { cookie: Some(cookie), .. } = &drawn else { return None };
        let code = json_of(&drawn)?.get("code")?.as_str()?.to_owned();
        let cookie = cookie.split(';').next()?.to_owned();
        let until = now + CONNECT_CODE_TTL_MS;
        let page = random_token(&mut OsRandom, 24);
        let link = crate::link::page_address(&origin, &page);
        eprintln!("tabrelay-local: the connect code for {name} is {code} (or open {link})");
        Some(Waiting {
            code,
            client_id,
            redirect_uri,
            verifier,
            cookie,
            until,
            page,
            sealed,
            html,
            drawn,
        })
    }

    /// The consent's next step, after every event: a code made once a message named the agent
    /// app, and once the person approved, the code's session polled and redeemed.
    pub fn consent_step(&mut self, now: u64) {
        if self.consent.tokens.is_none()
            && self.consent.waiting.is_none()
            && self.consent.name.is_some()
        {
            self.consent.waiting = self.new_code(now);
        }
        if !std::mem::take(&mut self.consent.poll) {
            return;
        }
        let Some(w) = self.consent.waiting.clone() else { return };
        let (config, origin) = (self.config, self.origin.clone());
        let query = [("code".to_owned(), w.code.clone())];
        let (saga, step) = Saga::status(config, &origin, &query, Some(&w.cookie));
        let Some(polled) = self.run_saga(saga, step, now).as_ref().and_then(json_of) else {
            return;
        };
        let state = polled.get("state").and_then(Value::as_str).unwrap_or_default();
        let redirect = polled.get("redirect").and_then(Value::as_str).unwrap_or_default();
        if state == "denied" {
            self.consent.waiting = None; // a new code on the next step
            return;
        }
        let query = tabrelay::http::query_of(redirect);
        let Some((_, code)) = query.iter().find(|(k, _)| k == "code") else { return };
        let body = form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &w.redirect_uri),
            ("code_verifier", &w.verifier),
            ("client_id", &w.client_id),
            ("resource", &format!("{origin}/")),
        ]);
        self.consent.client_id = Some(w.client_id);
        self.token_grant(body, now);
    }

    /// The token endpoint's saga for `body` (a code redeemed, or a refresh): the connection's
    /// tokens, and the agent app's `initialize` replayed so its session names the grant.
    fn token_grant(&mut self, body: Vec<u8>, now: u64) {
        let (config, origin) = (self.config, self.origin.clone());
        let (saga, step) = Saga::token(config, &origin, Ok(body), now, &mut OsRandom);
        let tokens = self.run_saga(saga, step, now).as_ref().and_then(json_of);
        let field = |name: &str| tokens.as_ref()?.get(name)?.as_str().map(str::to_owned);
        let (Some(access), Some(refresh)) = (field("access_token"), field("refresh_token")) else {
            let kept = self.kept();
            self.consent.forgotten(kept.as_deref());
            return;
        };
        let expires_s = tokens.as_ref().and_then(|t| t.get("expires_in")?.as_u64()).unwrap_or(3600);
        let refresh_at = now + expires_s * 800;
        let first = self.consent.tokens.is_none();
        if let (Some(name), Some(client_id)) = (&self.consent.name, &self.consent.client_id) {
            let (name, client_id) = (name.clone(), client_id.clone());
            let kept = crate::state::Connection { name, client_id, refresh: refresh.clone() };
            kept.keep(self.kept().as_deref());
        }
        self.consent.tokens = Some((access.clone(), refresh, refresh_at));
        self.consent.waiting = None;
        if first {
            eprintln!("tabrelay-local: connected to the tab");
            if let Some(init) = self.consent.initialize.clone() {
                self.start_exchange(&access, Ok(init), true, now);
                self.pump(now);
            }
        }
    }

    /// Once the agent app named itself: its connection kept from an earlier run, refreshed
    /// through the token endpoint's saga (its pairing, read back with its grants, checks it);
    /// if that fails it is forgotten, and the agent app gets a code as on a first run.
    pub fn resume(&mut self, now: u64) {
        let Some(name) = self.consent.name.clone() else { return };
        let Some(kept) = crate::state::Connection::kept(self.kept().as_deref(), &name) else {
            return;
        };
        self.consent.name = Some(kept.name);
        self.consent.client_id = Some(kept.client_id.clone());
        let body = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &kept.refresh),
            ("client_id", &kept.client_id),
        ]);
        self.token_grant(body, now);
        if self.consent.tokens.is_some() {
            eprintln!("tabrelay-local: connected to the tab as before");
        }
    }

    /// A code died (a new one is made) or the token is due its refresh.
    pub fn consent_timeout(&mut self, now: u64) {
        self.consent.codes_due(now);
        if self.consent.own_timeout().is_none_or(|at| at > now) {
            return;
        }
        if self.consent.waiting.as_ref().is_some_and(|w| w.until <= now) {
            self.consent.waiting = None;
            return;
        }
        let Some((_, refresh, _)) = self.consent.tokens.clone() else { return };
        let Some(client_id) = self.consent.client_id.clone() else {
            let kept = self.kept();
            self.consent.forgotten(kept.as_deref());
            return;
        };
        let body = form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &refresh),
            ("client_id", &client_id),
        ]);
        self.token_grant(body, now);
    }

    /// A message before the person connected the agent app: what the endpoint's reading of
    /// it says ([`mcp::handle`]), answered without a connection: `initialize` as the relay's
    /// (its instructions saying the code), the tool list as the bundled one (as when the
    /// pairing cannot answer), and a call, the status tool or anything that needs the tab with
    /// the sentence that gives the code.
    pub fn unconnected(&mut self, body: Result<Vec<u8>, TooLarge>, now: u64) {
        let body = match body {
            Ok(body) => body,
            Err(too_large) => {
                let sentence = tabrelay::sentences::too_large(too_large.cap);
                write_value(&jsonrpc::refusal(None, ErrorCode::INVALID_REQUEST, &sentence));
                return;
            }
        };
        let parsed: Option<Value> = serde_json::from_slice(&body).ok();
        let params = parsed.as_ref().and_then(|m| m.get("params"));
        let meta = params.and_then(|p| p.get("_meta"));
        let version =
            meta.and_then(|m| m.get(mcp::era::meta::PROTOCOL_VERSION)).and_then(Value::as_str);
        if let Some(name) = parsed.as_ref().and_then(client_name) {
            if self.consent.name.is_none() {
                self.consent.name = Some(name);
            }
        } else if self.consent.name.is_none() {
            // A request that needs the tab, from a client that never named itself (a ping or a
            // notification needs no code).
            let method = parsed.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
            if method.is_some_and(|m| m != "ping" && !m.starts_with("notifications/")) {
                self.consent.name = Some("An agent app".into());
            }
        }
        // The code exists before the answer that says it.
        self.consent_step(now);
        let method = parsed.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let stateless = version.is_some();
        let headers = Headers {
            version,
            method: if stateless { method } else { None },
            name: if stateless { name } else { None },
            session: None,
            params: None,
        };
        let code = self.consent.code_said().to_owned();
        let link =
            self.consent.waiting.as_ref().map(|w| crate::link::page_address(&self.origin, &w.page));
        let link = link.unwrap_or_else(|| said::NO_CODE_YET.to_owned());
        let sentence = said::not_connected(&code, &link);
        match mcp::handle(&body, &headers, &self.config.app_url) {
            McpReply::Initialize { mut body, .. } => {
                if let Some(Value::String(text)) = body.pointer_mut("/result/instructions") {
                    text.push_str(&said::connect_line(&code, &link));
                }
                // Over stdio there is a stream to say it on: the list changes once connected.
                if let Some(changed) = body.pointer_mut("/result/capabilities/tools/listChanged") {
                    *changed = Value::Bool(true);
                }
                let version = body.pointer("/result/protocolVersion").and_then(Value::as_str);
                self.negotiated(version);
                self.consent.initialize = parsed.as_ref().map(|m| m.to_string().into_bytes());
                write_value(&body);
            }
            McpReply::ListTools { id, era } => {
                write_value(&mcp::tools_list(
                    &id,
                    &era,
                    tabrelay::tools::list(None, self.catalogue),
                ));
            }
            McpReply::Status { id, era } => {
                let result = tabrelay_bundle::content::error_result(&sentence);
                write_value(&mcp::status_answer(&id, &era, Some(result)));
            }
            McpReply::Call(call) => write_value(&mcp::call_failed(&call.id, &call.era, &sentence)),
            McpReply::Task(asked) => {
                write_value(&jsonrpc::refusal(
                    Some(&asked.id),
                    ErrorCode::INVALID_REQUEST,
                    &sentence,
                ));
            }
            McpReply::Listen { id, .. } => {
                write_value(&jsonrpc::refusal(Some(&id), ErrorCode::INVALID_REQUEST, &sentence));
            }
            // `server/discover` (2026-07-28) carries the instructions too: they say the code.
            McpReply::Granted(mut body) => {
                if let Some(Value::String(text)) = body.pointer_mut("/result/instructions") {
                    text.push_str(&said::connect_line(&code, &link));
                }
                write_value(&body);
            }
            McpReply::Json { body, .. } => write_value(&body),
            McpReply::Accepted | McpReply::Cancel { .. } | McpReply::Answer { .. } => {}
        }
    }
}

/// The name a message gives its agent app (`clientInfo`'s title or name, in `params` or, in
/// the 2026-07-28 revision, its `_meta`), at most 60 characters.
pub fn client_name(message: &Value) -> Option<String> {
    let params = message.get("params")?;
    let meta = params.get("_meta");
    let info = params
        .get("clientInfo")
        .or_else(|| meta.and_then(|m| m.get(mcp::era::meta::CLIENT_INFO)))?;
    let name = info.get("title").or(info.get("name")).and_then(Value::as_str)?;
    Some(name.chars().take(60).collect())
}

fn write_value(value: &Value) {
    write_line(&tabrelay_bundle::fields::json_text(value));
}

/// Whether `signature` (P1363, 64 bytes) is `key`'s (raw P-256) ECDSA signature over SHA-256
/// of `data`: the check the Worker asks of WebCrypto. A key or signature that does not read
/// proves nothing.
pub fn verify_p256(key: &[u8], signature: &[u8], data: &[u8]) -> bool {
    use p256::ecdsa::signature::Verifier as _;
    use p256::ecdsa::{Signature, VerifyingKey};
    let (Ok(key), Ok(signature)) =
        (VerifyingKey::from_sec1_bytes(key), Signature::from_slice(signature))
    else {
        return false;
    };
    key.verify(data, &signature).is_ok()
}
