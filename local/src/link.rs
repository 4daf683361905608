//! The link flow for local agents: the waiting page the relay shows at `/authorize`, served on
//! the loopback port beside the tab's socket for the agent app's own request, so the person may
//! open it in their browser and press *Open the app with this code* instead of typing the code.
//!
//! Everything a page or its script asks is the relay's own: the page is the core's
//! ([`waiting_page`]), its script and its routes are the relay's paths ([`CODE_PATH`],
//! [`STATUS_PATH`], [`WAIT_SCRIPT_PATH`], [`CONFIRM_PATH`]), and the status and confirm are the
//! relay's sagas over the code's session ([`Saga::status`], [`Saga::confirm`]). What is this
//! server's own is only where the page is and what its script's first ask gets: the page's
//! address carries a random name of its own (`/connect/NAME`: never the code, never a token),
//! and the code was drawn when the agent app named itself (its code is told to the agent app
//! at once), so the page's script gets that draw's answer (the code, the link to the app, and
//! the cookie: the same secret this server polls with) for the sealed request of its page only.
//!
//! The tab approves the link's reference through its local relay client, which opens the
//! confirm window here: the waiting page's cookie makes it this browser's approval. Every route
//! answers a loopback `Host` only (DNS rebinding), as the tab's socket does.
//!
//! [`waiting_page`]: tabrelay::oauth::saga::waiting_page

use tabrelay::http::{self, Answer, TooLarge};
use tabrelay::oauth::connect::{read_ticket, ConnectCode};
use tabrelay::oauth::saga::{Outcome, Saga};
use tabrelay::pages::{self, CODE_PATH, STATUS_PATH, WAIT_SCRIPT_PATH};
use tabrelay::sentences;
use tabrelay_bundle::protocol::{CONFIRM_PATH, CONFIRM_TICKET_PARAM};

use crate::consent::Waiting;
use crate::guard;
use crate::pump::Local;

/// Where a waiting page is served: this, then its random name.
pub const PAGE_PATH: &str = "/connect/";

/// The address of the waiting page named `page` on the server at `origin`.
#[must_use]
pub fn page_address(origin: &str, page: &str) -> String {
    format!("{origin}{PAGE_PATH}{page}")
}

/// A plain HTTP request on the loopback port, as the socket's thread read it.
#[derive(Debug)]
pub struct Request {
    /// Its path and query, as its request line named them.
    pub target: String,
    /// Its `Cookie`.
    pub cookies: Option<String>,
    /// Its body, read with its route's cap ([`http::body_cap`]).
    pub body: Result<Vec<u8>, TooLarge>,
}

/// What a plain HTTP request asks of the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A waiting page, by its name.
    Page(String),
    /// The waiting page's script.
    Script,
    /// The waiting page's script asks for its code with its sealed request.
    Code,
    /// The waiting page's script asks whether its code was decided.
    Status,
    /// The confirm window the tab opened after approving the link.
    Confirm,
}

/// The route a plain HTTP request takes, or the answer it gets at once (before the loop hears
/// of it): a `Host` that is not loopback on this port (421: a name rebound to 127.0.0.1), a path
/// not served (404), another method (405).
///
/// # Errors
/// The answer refusing it.
pub fn route(method: &str, target: &str, host: Option<&str>, port: u16) -> Result<Route, Answer> {
    if guard::loopback_origin(host, port).is_none() {
        return Err(Answer::text(421, guard::NOT_LOOPBACK));
    }
    let path = target.split('?').next().unwrap_or_default();
    let (route, takes) = match path {
        WAIT_SCRIPT_PATH => (Route::Script, "GET"),
        CODE_PATH => (Route::Code, "POST"),
        STATUS_PATH => (Route::Status, "GET"),
        CONFIRM_PATH => (Route::Confirm, "GET"),
        _ => match path.strip_prefix(PAGE_PATH) {
            Some(name) if !name.is_empty() && name.bytes().all(is_name_byte) => {
                (Route::Page(name.to_owned()), "GET")
            }
            _ => return Err(Answer::not_found()),
        },
    };
    if method != takes {
        return Err(Answer::text(405, &sentences::method_not_allowed(takes)).with("allow", takes));
    }
    Ok(route)
}

/// A byte of a page's name (base64url, as [`tabrelay::crypto::random_token`] writes it).
fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

impl Local {
    /// The answer to a plain HTTP request on the loopback port ([`route`] took it).
    pub fn http(&mut self, route: Route, request: Request, now: u64) -> Answer {
        let query = http::query_of(&request.target);
        let cookies = request.cookies.as_deref();
        let outcome = match route {
            Route::Script => {
                let script = http::Route::WaitScript.answer(self.config, &self.origin);
                return script.unwrap_or_else(Answer::not_found);
            }
            Route::Page(name) => match self.waiting_where(|w| w.page == name) {
                Some(w) => Outcome::Page { status: 200, html: w.html.clone() },
                None => Outcome::Page {
                    status: 404,
                    html: pages::refused("expired", sentences::local::PAGE_GONE),
                },
            },
            // The page's script, for its own sealed request only: the draw made for it.
            Route::Code => {
                let body = request.body.as_deref().unwrap_or_default();
                match self.waiting_where(|w| !body.is_empty() && w.sealed.as_bytes() == body) {
                    Some(w) => w.drawn.clone(),
                    None => Outcome::sentence(400, sentences::SEAL_STALE),
                }
            }
            Route::Status => {
                let code = query.iter().find(|(k, _)| k == "code").map(|(_, v)| v.as_str());
                if let Some(code) = code.and_then(ConnectCode::parse) {
                    self.enter_owner(code.as_str());
                }
                let (config, origin) = (self.config, self.origin.clone());
                let (saga, step) = Saga::status(config, &origin, &query, cookies);
                self.run_saga(saga, step, now).unwrap_or(Outcome::Broken)
            }
            Route::Confirm => {
                let ticket = query.iter().find(|(k, _)| k == CONFIRM_TICKET_PARAM);
                let keys = &self.config.keys;
                if let Some((code, _)) = ticket.and_then(|(_, t)| read_ticket(t, keys)) {
                    self.enter_owner(code.as_str());
                }
                let (config, origin) = (self.config, self.origin.clone());
                let (saga, step) = Saga::confirm(config, &origin, &query, cookies);
                self.run_saga(saga, step, now).unwrap_or(Outcome::Broken)
            }
        };
        outcome.http().unwrap_or_else(|| Answer::text(500, sentences::local::PAGE_GONE))
    }

    /// The waiting code `found` picks, of any agent app served (made the one served now).
    fn waiting_where(&mut self, found: impl Fn(&Waiting) -> bool) -> Option<&Waiting> {
        self.enter_where(|consent| consent.waiting().is_some_and(&found));
        self.consent.waiting().filter(|w| found(w))
    }
}
