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
//! [`waiting_page`]: tabrelay::saga::waiting_page

use tabrelay::http::{self, Answer, TooLarge};
use tabrelay::oauth::connect::{read_ticket, ConnectCode};
use tabrelay::pages::{self, CODE_PATH, STATUS_PATH, WAIT_SCRIPT_PATH};
use tabrelay::saga::{Outcome, Saga};
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
    /// Its body, read with its route's cap ([`routes::body_cap`]).
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

/// The poll of a code already taken up (`done`), as this server's page says it: here only the
/// server itself takes a code up, for its agent app, at once (the relay's page says the code
/// can no longer be used: its own browser went on with it).
fn taken_up(polled: Outcome) -> Outcome {
    let Outcome::Json { status: 200, body, .. } = &polled else { return polled };
    let state: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    if state.as_ref().and_then(|s| s.get("state")?.as_str()) != Some("done") {
        return polled;
    }
    let said = serde_json::json!({ "state": "done", "sentence": sentences::local::TAKEN_UP });
    Outcome::Json { status: 200, body: said.to_string().into_bytes(), cookie: None }
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
                let script = tabrelay::routes::Route::WaitScript.answer(self.config, &self.origin);
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
                taken_up(self.run_saga(saga, step, now).unwrap_or(Outcome::Broken))
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

#[cfg(test)]
mod tests {
    use super::*;
    use tabrelay::config::Config;
    use tabrelay::limits::{CONNECT_CODE_TTL_MS, LINK_CONFIRM_TTL_MS};
    use tabrelay::oauth::connect::{self, CodeReply, Command};
    use tabrelay::sentences::connect_code as refusal;

    const PORT: u16 = 8790;
    const HOST: Option<&str> = Some("127.0.0.1:8790");
    const PAIRING: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const NOW: u64 = 1_800_000_000_000;

    fn local() -> Local {
        let key = "k".repeat(48);
        let origin = Some("http://localhost:8788");
        let config =
            Config::from_vars(Some(&key), None, origin, Some("http://localhost:8788/demo/"), None);
        let config: &'static Config = Box::leak(Box::new(config.unwrap()));
        let mut local = Local::new(config, PORT, None);
        local.consent.name = Some("Test agent".into());
        local.consent_step(NOW);
        local
    }

    fn get(local: &mut Local, target: &str, cookies: Option<&str>, now: u64) -> Answer {
        let route = route("GET", target, HOST, PORT).unwrap();
        let request = Request {
            target: target.into(),
            cookies: cookies.map(str::to_owned),
            body: Ok(Vec::new()),
        };
        local.http(route, request, now)
    }

    fn post_code(local: &mut Local, body: &str) -> Answer {
        let route = route("POST", CODE_PATH, HOST, PORT).unwrap();
        let request =
            Request { target: CODE_PATH.into(), cookies: None, body: Ok(body.as_bytes().to_vec()) };
        local.http(route, request, NOW)
    }

    fn text(answer: &Answer) -> String {
        String::from_utf8_lossy(answer.body.as_deref().unwrap_or_default()).into_owned()
    }

    fn header<'a>(answer: &'a Answer, name: &str) -> Option<&'a str> {
        answer.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// The waiting page opened as a browser opens it: the page, then its script's ask for the
    /// code. The code, the link's reference and the cookie (`name=secret`) it got.
    fn opened(local: &mut Local) -> (String, String, String) {
        let page = local.consent.waiting().unwrap().page.clone();
        let answer = get(local, &format!("{PAGE_PATH}{page}"), None, NOW);
        assert_eq!(answer.status, 200);
        let html = text(&answer);
        let sealed = html.split("data-request=\"").nth(1).unwrap().split('"').next().unwrap();
        let drawn = post_code(local, sealed);
        assert_eq!(drawn.status, 200, "{}", text(&drawn));
        let cookie = header(&drawn, "set-cookie").unwrap().split(';').next().unwrap().to_owned();
        let json: serde_json::Value = serde_json::from_str(&text(&drawn)).unwrap();
        let link = json["link"].as_str().unwrap();
        let reference = link.split("#tabrelay-connect=").nth(1).unwrap().to_owned();
        assert!(link.starts_with("http://localhost:8788/demo/#"), "the app (--app-url): {link}");
        (json["code"].as_str().unwrap().to_owned(), reference, cookie)
    }

    /// The tab's approval of the link's reference (what the pairing asks the code's session):
    /// the confirm page's address it opens.
    fn approved_link(
        local: &mut Local,
        code: &str,
        reference: &str,
        now: u64,
    ) -> Result<String, String> {
        let code = ConnectCode::parse(code).unwrap();
        let command = Command::Approve { pairing: PAIRING.into(), linked: true };
        match local.consent.code(&code, command, now, &mut crate::OsRandom) {
            CodeReply::ToConfirm { secret, .. } => {
                let ticket = connect::ticket(reference, &secret);
                Ok(format!("{CONFIRM_PATH}?{CONFIRM_TICKET_PARAM}={ticket}"))
            }
            CodeReply::Refused { sentence } => Err(sentence),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn every_route_answers_a_loopback_host_only() {
        for target in ["/connect/abc", WAIT_SCRIPT_PATH, STATUS_PATH, CONFIRM_PATH] {
            for host in
                ["rebound.example:8790", "127.0.0.1.evil.example:8790", "127.0.0.1:8791", ""]
            {
                let refused = route("GET", target, Some(host), PORT).unwrap_err();
                assert_eq!(refused.status, 421, "{target} {host}");
            }
            assert!(route("GET", target, Some("localhost:8790"), PORT).is_ok(), "{target}");
        }
        assert_eq!(
            route("POST", CODE_PATH, Some("evil.example:8790"), PORT).unwrap_err().status,
            421
        );
        assert_eq!(route("GET", "/connect/", HOST, PORT).unwrap_err().status, 404);
        assert_eq!(route("GET", "/connect/a/../b", HOST, PORT).unwrap_err().status, 404);
        assert_eq!(route("GET", "/authorize", HOST, PORT).unwrap_err().status, 404);
        assert_eq!(route("GET", "/token", HOST, PORT).unwrap_err().status, 404);
        assert_eq!(route("POST", "/connect/abc", HOST, PORT).unwrap_err().status, 405);
        assert_eq!(route("GET", CODE_PATH, HOST, PORT).unwrap_err().status, 405);
    }

    #[test]
    fn the_page_and_its_address_carry_no_code_and_its_script_gets_the_agent_apps_code() {
        let mut local = local();
        let waiting = local.consent.waiting().unwrap().clone();
        let address = page_address(&local.origin, &waiting.page);
        let (code, reference, cookie) = opened(&mut local);
        assert_eq!(code, waiting.code, "the code the agent app was told");
        let bare = code.replace('-', "");
        for shown in [&address, &reference] {
            assert!(!shown.contains(&code) && !shown.contains(&bare), "{shown}");
        }
        let page = text(&get(&mut local, &format!("{PAGE_PATH}{}", waiting.page), None, NOW));
        assert!(
            !page.contains(&code) && !page.contains(&bare),
            "the page shows it once its script asked"
        );
        assert!(page.contains("Connect Test agent (local) to your tab"), "{page}");
        assert!(cookie.starts_with("tabrelay_connect_"), "{cookie}");
        // Another seal, or none, gets no code and no cookie.
        for other in ["", "x.y", &format!("{}x", waiting.sealed)] {
            let refused = post_code(&mut local, other);
            assert_eq!((refused.status, header(&refused, "set-cookie")), (400, None), "{other}");
        }
        let unknown = get(&mut local, "/connect/not-a-page", None, NOW);
        assert_eq!(unknown.status, 404);
        assert!(text(&unknown).contains("no longer open"));
    }

    #[test]
    fn the_confirm_approves_only_with_the_waiting_pages_cookie_and_only_once() {
        // Opened where the waiting page was not (no cookie, or another's): refused, and the
        // ticket is dead even for the waiting page's browser.
        for other in [None, Some("tabrelay_connect_X=1"), Some("")] {
            let mut local = local();
            let (code, reference, cookie) = opened(&mut local);
            let mangled = format!("{cookie}x");
            let other = if other == Some("") { Some(mangled.as_str()) } else { other };
            let confirm = approved_link(&mut local, &code, &reference, NOW).unwrap();
            let refused = get(&mut local, &confirm, other, NOW);
            assert_eq!(refused.status, 403, "{other:?}");
            assert!(text(&refused).contains(refusal::NOT_THIS_BROWSER), "{}", text(&refused));
            let stale = get(&mut local, &confirm, Some(&cookie), NOW);
            assert_eq!(stale.status, 403);
            local.consent_step(NOW);
            assert!(local.consent.token().is_none(), "nothing connected");
            assert!(local.consent.waiting().is_some(), "the code waits, for the whole code typed");
        }
        let mut local = local();
        let (code, reference, cookie) = opened(&mut local);
        // The waiting page's browser: approved, and the agent app connected at once.
        let confirm = approved_link(&mut local, &code, &reference, NOW).unwrap();
        let ok = get(&mut local, &confirm, Some(&format!("other=1; {cookie}")), NOW);
        assert_eq!(ok.status, 200, "{}", text(&ok));
        assert!(text(&ok).contains(r#"data-ok="true""#));
        local.consent_step(NOW);
        assert!(local.consent.token().is_some(), "connected");
        // Never twice: the ticket, the link and the page are spent.
        assert_eq!(get(&mut local, &confirm, Some(&cookie), NOW).status, 403);
        let again = approved_link(&mut local, &code, &reference, NOW);
        assert!(again.is_err(), "{again:?}");
        assert!(local.consent.waiting().is_none());
        // The waiting page's own poll says it was taken up.
        let status = get(&mut local, &format!("{STATUS_PATH}?code={code}"), Some(&cookie), NOW);
        let said: serde_json::Value = serde_json::from_str(&text(&status)).unwrap();
        assert_eq!(said["state"], "done");
        assert_eq!(said["sentence"], sentences::local::TAKEN_UP);
    }

    #[test]
    fn a_denial_makes_a_new_code_and_its_page_is_no_longer_served() {
        let mut local = local();
        let (code, _, cookie) = opened(&mut local);
        let page = local.consent.waiting().unwrap().page.clone();
        let parsed = ConnectCode::parse(&code).unwrap();
        let denied = local.consent.code(&parsed, Command::Deny, NOW, &mut crate::OsRandom);
        assert!(matches!(denied, CodeReply::Described(_)), "{denied:?}");
        local.consent_step(NOW);
        local.consent_step(NOW);
        let next = local.consent.waiting().expect("a new code").clone();
        assert_ne!((next.code.as_str(), next.page.as_str()), (code.as_str(), page.as_str()));
        assert_eq!(get(&mut local, &format!("{PAGE_PATH}{page}"), None, NOW).status, 404);
        let status = get(&mut local, &format!("{STATUS_PATH}?code={code}"), Some(&cookie), NOW);
        assert_eq!(
            text(&status),
            r#"{"state":"expired"}"#,
            "the old page says it can no longer be used"
        );
    }

    #[test]
    fn a_code_is_kept_as_long_as_the_relay_keeps_it_then_forgotten() {
        use tabrelay::config::CODE_KEPT_MS;
        let mut local = local();
        let (code, _, _) = opened(&mut local);
        let parsed = ConnectCode::parse(&code).unwrap();
        // The loop gives each due deadline its timeout: the code's death (a new code is made on
        // the next step), then its object's end, as the relay's alarm forgets it.
        let end = NOW + CODE_KEPT_MS;
        let ran = |local: &mut Local, until: u64| {
            // A few deadlines at most (a deadline that stays due is a failure, not a hang).
            for _ in 0..8 {
                match local.consent.poll_timeout() {
                    Some(at) if at <= until => local.consent_timeout(at),
                    _ => return,
                }
            }
        };
        ran(&mut local, end - 1);
        assert!(local.consent.holds(parsed.as_str()), "its session is kept until its end");
        ran(&mut local, end);
        assert!(!local.consent.holds(parsed.as_str()), "its session is forgotten at its end");
        let after = local.consent.code(&parsed, Command::Describe, end, &mut crate::OsRandom);
        assert_eq!(after, CodeReply::Refused { sentence: refusal::UNKNOWN.into() });
    }

    #[test]
    fn a_link_is_not_approved_after_its_ticket_or_its_code_ran_out() {
        let mut local = local();
        let (code, reference, cookie) = opened(&mut local);
        let confirm = approved_link(&mut local, &code, &reference, NOW).unwrap();
        let late = get(&mut local, &confirm, Some(&cookie), NOW + LINK_CONFIRM_TTL_MS);
        assert_eq!(late.status, 403);
        assert!(text(&late).contains(refusal::TICKET_STALE), "{}", text(&late));
        let dead = NOW + CONNECT_CODE_TTL_MS;
        assert!(approved_link(&mut local, &code, &reference, dead).is_err());
        assert!(local.consent.token().is_none());
    }
}
