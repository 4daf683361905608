//! The OAuth sagas step by step: each endpoint's first step, what each reply leads to, and
//! every refusal (with nothing asked of an object where the saga refuses before). The code's
//! object is the real session machine ([`connect::apply`]) on a fixed clock.

use super::*;
use crate::crypto::testing::Counter;
use crate::limits::{AUTH_CODE_TTL_MS, LINK_CONFIRM_TTL_MS};
use crate::oauth::connect::{apply, Session};
use crate::oauth::exchange::{Redemption, RevokeRequest};
use crate::oauth::refresh::refresh_token;
use crate::oauth::token;
use serde_json::{json, Value};
use tabrelay_bundle::fields::Encode;

const ORIGIN: &str = "https://relay.example";
const NOW: u64 = 1_000_000_000;
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const REDIRECT: &str = "https://claude.ai/cb";

fn config() -> Config {
    Config::for_tests()
}

fn rng() -> Counter {
    Counter(7)
}

fn respond(step: Step) -> Outcome {
    match step {
        Step::Respond(answer) => answer,
        other => panic!("not an answer: {other:?}"),
    }
}

fn error(step: Step) -> OAuthError {
    match respond(step) {
        Outcome::Error(e) => e,
        other => panic!("not an OAuth error: {other:?}"),
    }
}

fn json(step: Step) -> (u16, Value, Option<String>) {
    match respond(step) {
        Outcome::Json { status, body, cookie } => {
            (status, serde_json::from_slice(&body).unwrap(), cookie)
        }
        other => panic!("not JSON: {other:?}"),
    }
}

fn page(step: Step) -> (u16, String) {
    match respond(step) {
        Outcome::Page { status, html } => (status, html),
        other => panic!("not a page: {other:?}"),
    }
}

fn ask_code(step: Step) -> (ConnectCode, Command) {
    match step {
        Step::AskCode(code, command) => (code, command),
        other => panic!("not a code's ask: {other:?}"),
    }
}

fn request() -> AuthRequest {
    AuthRequest {
        client_id: "cid".into(),
        client_name: "Claude".into(),
        verified_domain: None,
        redirect_uri: REDIRECT.into(),
        state: Some("st".into()),
        code_challenge: CHALLENGE.into(),
        resource: Some(ORIGIN.into()),
        scope: None,
    }
}

fn sealed(c: &Config, request: &AuthRequest) -> Vec<u8> {
    authorize::seal(&c.keys, request, NOW).into_bytes()
}

/// The connect code's Durable Object: the real session machine, stored between asks.
struct Object {
    stored: Option<Session>,
    rng: Counter,
}

impl Object {
    fn new() -> Self {
        Self { stored: None, rng: Counter(99) }
    }

    fn ask(&mut self, code: &ConnectCode, command: Command, now_ms: u64) -> CodeReply {
        apply(&mut self.stored, command, now_ms, &mut self.rng, code)
    }
}

/// A code drawn for the usual request from `NOW`: the object, the code and the cookie's secret.
fn drawn(c: &Config) -> (Object, ConnectCode, String) {
    let mut object = Object::new();
    let (mut saga, step) = Saga::draw(c, ORIGIN, Ok(sealed(c, &request())), None, NOW);
    assert_eq!(step, Step::AskLimit(Limited::Code));
    let (code, command) = ask_code(saga.next(Input::Limit(Limit::Within), &mut rng()));
    let reply = object.ask(&code, command, NOW);
    let (status, _, cookie) = json(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!(status, 200);
    let cookie = cookie.unwrap();
    let secret = cookie.split_once('=').unwrap().1.split(';').next().unwrap().to_owned();
    (object, code, secret)
}

fn cookie_header(code: &ConnectCode, secret: &str) -> String {
    format!("other=1; {}={secret}", cookie_name(ORIGIN, code))
}

/// An approved code's authorization code, as the waiting page is sent on with it.
fn authorization_code(c: &Config, object: &mut Object, code: &ConnectCode, secret: &str) -> String {
    let approve = Command::Approve { pairing: "p1".into(), linked: false };
    assert!(matches!(object.ask(code, approve, NOW + 1), CodeReply::Described(_)));
    let query = vec![("code".to_owned(), code.as_str().to_owned())];
    let cookies = cookie_header(code, secret);
    let (mut saga, step) = Saga::status(c, ORIGIN, &query, Some(&cookies));
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 2);
    let (status, body, _) = json(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!((status, body["state"].as_str()), (200, Some("approved")), "{body}");
    let redirect = body["redirect"].as_str().unwrap();
    let pairs = http::query_of(redirect);
    param(&pairs, "code").unwrap().to_owned()
}

fn token_form(code: &str, verifier: &str) -> Vec<u8> {
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "authorization_code");
    form.append_pair("client_id", &registered_id());
    form.append_pair("code", code);
    form.append_pair("code_verifier", verifier);
    form.append_pair("redirect_uri", REDIRECT);
    form.finish().into_bytes()
}

/// The id of a client registered with [`REDIRECT`] (the session's request names "cid": a
/// redemption by this client is refused as another's, so the tests make its request).
fn registered_id() -> String {
    let body = format!(r#"{{"redirect_uris":["{REDIRECT}"],"client_name":"Claude"}}"#);
    let r = clients::register(&config().keys, body.as_bytes(), NOW, &mut rng()).unwrap();
    r.client_id
}

/// The usual request, made by the registered client.
fn registered_request() -> AuthRequest {
    AuthRequest { client_id: registered_id(), ..request() }
}

/// A code drawn and approved for the registered client, and its authorization code.
fn approved(c: &Config) -> (Object, ConnectCode, String) {
    let mut object = Object::new();
    let (mut saga, _) = Saga::draw(c, ORIGIN, Ok(sealed(c, &registered_request())), None, NOW);
    let (code, command) = ask_code(saga.next(Input::Limit(Limit::Within), &mut rng()));
    let reply = object.ask(&code, command, NOW);
    let (_, _, cookie) = json(saga.next(Input::Code(reply), &mut rng()));
    let cookie = cookie.unwrap();
    let secret = cookie.split_once('=').unwrap().1.split(';').next().unwrap().to_owned();
    let auth_code = authorization_code(c, &mut object, &code, &secret);
    (object, code, auth_code)
}

// --- /register

#[test]
fn registration_is_answered_at_once() {
    let c = config();
    let body = format!(r#"{{"redirect_uris":["{REDIRECT}"]}}"#).into_bytes();
    let (status, body, cookie) = json(Saga::register(&c, Ok(body), NOW, &mut rng()).1);
    assert_eq!((status, cookie), (201, None));
    assert!(body["client_id"].is_string(), "{body}");
    let e = error(Saga::register(&c, Ok(b"nope".to_vec()), NOW, &mut rng()).1);
    assert_eq!((e.code, e.status), ("invalid_client_metadata", 400));
    let e = error(Saga::register(&c, Err(TooLarge { cap: 9 }), NOW, &mut rng()).1);
    assert_eq!((e.code, e.status), ("invalid_request", 413));
}

// --- /authorize

fn authorize_pairs(client_id: &str) -> Vec<(String, String)> {
    [
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("response_type", "code"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
        ("state", "st"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

#[test]
fn a_registered_clients_request_gets_the_waiting_page_with_its_seal() {
    let c = config();
    let (_, step) = Saga::authorize(&c, ORIGIN, authorize_pairs(&registered_id()), None, NOW);
    let (status, html) = page(step);
    assert_eq!(status, 200);
    assert!(html.contains("Claude"), "the page names who asks");
    // The seal it carries unseals to the checked request.
    let asked = AuthRequest { resource: None, ..registered_request() };
    let sealed = authorize::seal(&c.keys, &asked, NOW);
    assert!(html.contains(&sealed), "the page carries the seal");
}

#[test]
fn an_unknown_client_is_refused_on_the_page_or_as_a_401_to_a_program() {
    let c = config();
    let (status, html) = page(Saga::authorize(&c, ORIGIN, authorize_pairs("forged"), None, NOW).1);
    assert_eq!(status, 400);
    assert!(html.contains("invalid_client"), "{html}");
    let accept = Some("application/json");
    let e = error(Saga::authorize(&c, ORIGIN, authorize_pairs("forged"), accept, NOW).1);
    assert_eq!((e.code, e.status, e.challenge().is_some()), ("invalid_client", 401, true));
}

#[test]
fn a_bad_request_from_a_verified_redirect_goes_back_there() {
    let c = config();
    let mut pairs = authorize_pairs(&registered_id());
    pairs.retain(|(k, _)| k != "code_challenge");
    let Outcome::Redirect(to) = respond(Saga::authorize(&c, ORIGIN, pairs, None, NOW).1) else {
        panic!("a redirect")
    };
    assert!(to.starts_with(REDIRECT) && to.contains("error=invalid_request"), "{to}");
    assert!(to.contains("state=st") && to.contains("iss="), "{to}");
}

#[test]
fn a_document_client_is_fetched_first_and_then_checked_like_any() {
    let c = config();
    let doc = "https://claude.ai/oauth/meta";
    let (mut saga, step) = Saga::authorize(&c, ORIGIN, authorize_pairs(doc), None, NOW);
    let Step::FetchClient { url, fetch: false } = step else { panic!("kept first: {step:?}") };
    assert_eq!(url.as_str(), doc);
    let step = saga.next(Input::Client(Err(CimdError::NotKept)), &mut rng());
    assert_eq!(step, Step::AskLimit(Limited::Document), "not kept: the sender's limit");
    let Step::FetchClient { url, fetch: true } = saga.next(Input::Limit(Limit::Within), &mut rng())
    else {
        panic!("a fetch")
    };
    assert_eq!(url.as_str(), doc);
    let client = MetadataClient {
        domain: "claude.ai".into(),
        name: Some("Claude".into()),
        redirect_uris: vec![REDIRECT.into()],
    };
    let (status, html) = page(saga.next(Input::Client(Ok(client.clone())), &mut rng()));
    assert_eq!(status, 200);
    assert!(html.contains("claude.ai"), "the verified domain is shown");
    // Kept: checked at once, no limit asked, nothing fetched.
    let (mut saga, _) = Saga::authorize(&c, ORIGIN, authorize_pairs(doc), None, NOW);
    let (status, html) = page(saga.next(Input::Client(Ok(client)), &mut rng()));
    assert!(status == 200 && html.contains("claude.ai"), "{html}");
    // A document that cannot be read refuses the request, on the page and to a program.
    let fetching = |accept| {
        let (mut saga, _) = Saga::authorize(&c, ORIGIN, authorize_pairs(doc), accept, NOW);
        let _ = saga.next(Input::Client(Err(CimdError::NotKept)), &mut rng());
        let step = saga.next(Input::Limit(Limit::Within), &mut rng());
        assert!(matches!(step, Step::FetchClient { fetch: true, .. }));
        saga
    };
    let mut saga = fetching(None);
    let (status, html) = page(saga.next(Input::Client(Err(CimdError::TooSlow)), &mut rng()));
    assert!(status == 400 && html.contains("invalid_client"), "{html}");
    let mut saga = fetching(Some("application/json"));
    let e = error(saga.next(Input::Client(Err(CimdError::NotJson)), &mut rng()));
    assert_eq!((e.code, e.status), ("invalid_client", 401));
}

/// Each fetch of a metadata document counts against its sender's limit: past it, or when the
/// limit cannot count the request (no sender address, no binding), nothing is fetched.
#[test]
fn a_sender_past_its_limit_fetches_no_document() {
    let c = config();
    let doc = "https://notes.example/client.json";
    for (limit, status, sentence) in [
        (Limit::Past, 429, sentences::TOO_MANY_DOCUMENTS),
        (Limit::Uncounted, 503, sentences::SENDER_UNCOUNTED),
    ] {
        let (mut saga, _) = Saga::authorize(&c, ORIGIN, authorize_pairs(doc), None, NOW);
        let _ = saga.next(Input::Client(Err(CimdError::NotKept)), &mut rng());
        let (_, html) = page(saga.next(Input::Limit(limit), &mut rng()));
        let said = crate::pages::escape_html(sentence);
        assert!(html.contains(&said) && html.contains("temporarily_unavailable"), "{html}");
        let json = Some("application/json");
        let (mut saga, _) = Saga::authorize(&c, ORIGIN, authorize_pairs(doc), json, NOW);
        let _ = saga.next(Input::Client(Err(CimdError::NotKept)), &mut rng());
        let e = error(saga.next(Input::Limit(limit), &mut rng()));
        assert_eq!(
            (e.code, e.status, e.description.as_str()),
            ("temporarily_unavailable", status, sentence)
        );
    }
}

#[test]
fn a_document_on_a_local_name_is_refused_without_a_fetch() {
    let c = config();
    let pairs = || authorize_pairs("https://buildbox/meta");
    let (status, html) = page(Saga::authorize(&c, ORIGIN, pairs(), None, NOW).1);
    assert!(status == 400 && html.contains("invalid_client"), "{html}");
    // One the owner named (`LOCAL_METADATA_HOSTS`, for tests) is fetched.
    let named = c.clone().with_local_metadata_hosts(Some("buildbox"));
    let (_, step) = Saga::authorize(&named, ORIGIN, pairs(), None, NOW);
    assert!(matches!(step, Step::FetchClient { fetch: false, .. }), "{step:?}");
}

// --- POST /authorize/code

#[test]
fn a_seal_draws_its_code_within_the_senders_limit_and_sets_the_cookie_for_the_codes_life() {
    let c = config();
    let (mut saga, step) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    assert_eq!(step, Step::AskLimit(Limited::Code), "the limit first, before any object");
    let (code, command) = ask_code(saga.next(Input::Limit(Limit::Within), &mut rng()));
    let Command::Create { request: asked, browser_hash, .. } = command else { panic!("create") };
    assert_eq!(asked, request());
    let (status, body, cookie) = json(saga.next(Input::Code(CodeReply::Created), &mut rng()));
    assert_eq!((status, body["code"].as_str()), (200, Some(code.display().as_str())));
    let link = body["link"].as_str().unwrap();
    assert!(link.starts_with("https://app.example/#") && !link.contains(code.as_str()), "{link}");
    let cookie = cookie.unwrap();
    // The relay's own (`__Host-`: Secure, Path=/, no Domain), so no other name under its
    // domain can set or replace it.
    let name = format!("__Host-{COOKIE_PREFIX}{}=", code.as_str());
    assert!(cookie.starts_with(&name), "{cookie}");
    // The cookie lives as long as the code: the one limit, in seconds.
    let max_age = format!("; Max-Age={}", CONNECT_CODE_TTL_MS / 1000);
    assert!(cookie.contains(&max_age), "{cookie}");
    for part in ["; Path=/;", "; HttpOnly", "; SameSite=Lax", "; Secure"] {
        assert!(cookie.contains(part), "{part} in {cookie}");
    }
    assert!(!cookie.to_ascii_lowercase().contains("domain="), "{cookie}");
    // The object keeps the hash of the cookie's secret, the browser the secret.
    let secret = cookie[name.len()..].split(';').next().unwrap();
    assert_eq!(browser_hash, sha256_hex(secret.as_bytes()));
    // The same secret under the name without its prefix (set by a page of a name under the
    // relay's domain, or over http) is not the waiting page's.
    let (code_only, bare) = (&code, format!("{COOKIE_PREFIX}{}={secret}", code.as_str()));
    assert_eq!(super::browser_hash(ORIGIN, Some(&bare), code_only), "");
    let prefixed = format!("{name}{secret}");
    assert_eq!(super::browser_hash(ORIGIN, Some(&prefixed), code_only), browser_hash);
    // Served over http (wrangler dev on localhost or 127.0.0.1), a browser refuses a Secure
    // cookie and so the prefix: the cookie goes without both.
    for origin in ["http://localhost:8787", "http://127.0.0.1:8787"] {
        let (mut saga, _) = Saga::draw(&c, origin, Ok(sealed(&c, &request())), None, NOW);
        let _ = saga.next(Input::Limit(Limit::Within), &mut rng());
        let (_, _, cookie) = json(saga.next(Input::Code(CodeReply::Created), &mut rng()));
        let cookie = cookie.unwrap();
        assert!(cookie.starts_with(COOKIE_PREFIX) && cookie.contains("; Path=/;"), "{cookie}");
        assert!(!cookie.contains("Secure"), "{cookie}");
        let bare = format!("{COOKIE_PREFIX}{}={secret}", code.as_str());
        assert_eq!(super::browser_hash(origin, Some(&bare), &code), browser_hash);
    }
}

#[test]
fn a_sender_past_its_limit_makes_no_code() {
    let c = config();
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    let (status, body, cookie) = json(saga.next(Input::Limit(Limit::Past), &mut rng()));
    assert_eq!(
        (status, body["sentence"].as_str(), cookie),
        (429, Some(sentences::TOO_MANY_CODES), None)
    );
    // One the limit cannot count (no sender address, no binding) makes none either.
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    let (status, body, cookie) = json(saga.next(Input::Limit(Limit::Uncounted), &mut rng()));
    assert_eq!(
        (status, body["sentence"].as_str(), cookie),
        (503, Some(sentences::SENDER_UNCOUNTED), None)
    );
}

#[test]
fn a_stale_forged_or_oversized_seal_makes_no_code() {
    let c = config();
    let stale = authorize::seal(&c.keys, &request(), NOW - crate::limits::SEAL_TTL_MS);
    let forged = b"e30.AAAA".to_vec();
    for body in [stale.into_bytes(), forged, Vec::new()] {
        let (status, body, _) = json(Saga::draw(&c, ORIGIN, Ok(body), None, NOW).1);
        assert_eq!((status, body["sentence"].as_str()), (400, Some(sentences::SEAL_STALE)));
    }
    let (status, body, _) = json(Saga::draw(&c, ORIGIN, Err(TooLarge { cap: 5 }), None, NOW).1);
    assert_eq!((status, body["sentence"].as_str()), (413, Some(sentences::too_large(5).as_str())));
}

#[test]
fn a_seal_posted_again_reaches_its_code_which_says_it_was_made() {
    let c = config();
    let (mut object, code, _) = drawn(&c);
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW + 5);
    let (again, command) = ask_code(saga.next(Input::Limit(Limit::Within), &mut rng()));
    assert_eq!(again, code, "the same seal draws the same code");
    let reply = object.ask(&again, command, NOW + 5);
    let (status, body, cookie) = json(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!(
        (status, body["sentence"].as_str(), cookie),
        (409, Some(sentences::SEAL_USED), None)
    );
}

#[test]
fn letters_held_by_another_request_draw_again_then_give_up() {
    let c = config();
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    let mut step = saga.next(Input::Limit(Limit::Within), &mut rng());
    let mut codes = Vec::new();
    while let Step::AskCode(code, _) = step {
        codes.push(code);
        step = saga.next(Input::Code(CodeReply::Taken), &mut rng());
    }
    assert_eq!(codes.len(), usize::from(MAX_CODE_DRAWS));
    codes.dedup();
    assert_eq!(codes.len(), usize::from(MAX_CODE_DRAWS), "each draw another code");
    let (status, body, _) = json(step);
    assert_eq!((status, body["sentence"].as_str()), (503, Some(sentences::CODE_NOT_MADE)));
    // Taken once, then made: the second draw's code is the one shown.
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    let _ = saga.next(Input::Limit(Limit::Within), &mut rng());
    let (second, _) = ask_code(saga.next(Input::Code(CodeReply::Taken), &mut rng()));
    let (_, body, _) = json(saga.next(Input::Code(CodeReply::Created), &mut rng()));
    assert_eq!(body["code"].as_str(), Some(second.display().as_str()));
}

// --- the confirm page

fn confirm_query(ticket: &str) -> Vec<(String, String)> {
    vec![(tabrelay_bundle::protocol::CONFIRM_TICKET_PARAM.to_owned(), ticket.to_owned())]
}

/// A linked approval of a drawn code: the ticket the tab gets.
fn linked_ticket(c: &Config, object: &mut Object, code: &ConnectCode) -> String {
    let approve = Command::Approve { pairing: "p1".into(), linked: true };
    let CodeReply::ToConfirm { secret, .. } = object.ask(code, approve, NOW + 1) else {
        panic!("to confirm")
    };
    let link = LinkRef::for_code(code, &c.keys, &mut rng());
    connect::ticket(link.as_str(), &secret)
}

#[test]
fn the_waiting_pages_browser_confirms_a_linked_approval() {
    let c = config();
    let (mut object, code, secret) = drawn(&c);
    let ticket = linked_ticket(&c, &mut object, &code);
    let cookies = cookie_header(&code, &secret);
    let (mut saga, step) = Saga::confirm(&c, ORIGIN, &confirm_query(&ticket), Some(&cookies));
    let (asked, command) = ask_code(step);
    assert_eq!(asked, code);
    let reply = object.ask(&asked, command, NOW + 2);
    let (status, html) = page(saga.next(Input::Code(reply), &mut rng()));
    assert!(status == 200 && html.contains("data-ok=\"true\""), "{html}");
}

#[test]
fn another_browser_or_a_late_one_cannot_confirm() {
    let c = config();
    let (mut object, code, _) = drawn(&c);
    let ticket = linked_ticket(&c, &mut object, &code);
    // No cookie (a link someone sent): refused, and the code waits for the whole code typed.
    let (mut saga, step) = Saga::confirm(&c, ORIGIN, &confirm_query(&ticket), None);
    let (asked, command) = ask_code(step);
    let Command::Confirm { browser_hash, .. } = &command else { panic!("confirm") };
    assert_eq!(browser_hash, "", "no cookie, no hash");
    let reply = object.ask(&asked, command, NOW + 2);
    let (status, html) = page(saga.next(Input::Code(reply), &mut rng()));
    assert!(status == 403 && html.contains("data-ok=\"false\""), "{html}");
    // The ticket's window past: stale.
    let (mut object, code, secret) = drawn(&c);
    let ticket = linked_ticket(&c, &mut object, &code);
    let cookies = cookie_header(&code, &secret);
    let (mut saga, step) = Saga::confirm(&c, ORIGIN, &confirm_query(&ticket), Some(&cookies));
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 1 + LINK_CONFIRM_TTL_MS);
    let (status, html) = page(saga.next(Input::Code(reply), &mut rng()));
    assert!(status == 403 && html.contains(connect::refusal::TICKET_STALE), "{html}");
}

#[test]
fn a_ticket_of_no_link_of_ours_is_refused_before_any_object() {
    let c = config();
    for ticket in ["", "nodot", "ABCDEFGHJKMNPQRSTVWX.s3cret"] {
        let (status, html) = page(Saga::confirm(&c, ORIGIN, &confirm_query(ticket), None).1);
        assert!(status == 400 && html.contains(connect::refusal::TICKET_STALE), "{ticket}");
    }
    let (status, _) = page(Saga::confirm(&c, ORIGIN, &[], None).1);
    assert_eq!(status, 400);
    // A reply that is not a confirmation's reads as stale.
    let (mut object, code, _) = drawn(&c);
    let ticket = linked_ticket(&c, &mut object, &code);
    let (mut saga, _) = Saga::confirm(&c, ORIGIN, &confirm_query(&ticket), None);
    let (status, _) = page(saga.next(Input::Code(CodeReply::Created), &mut rng()));
    assert_eq!(status, 400);
}

// --- the waiting page's poll

#[test]
fn the_waiting_page_polls_its_code_with_its_cookie() {
    let c = config();
    let (mut object, code, secret) = drawn(&c);
    let query = vec![("code".to_owned(), code.display())];
    let cookies = cookie_header(&code, &secret);
    let (mut saga, step) = Saga::status(&c, ORIGIN, &query, Some(&cookies));
    let (asked, command) = ask_code(step);
    assert_eq!(
        command,
        Command::Poll { browser_hash: sha256_hex(secret.as_bytes()), issuer: ORIGIN.into() }
    );
    let reply = object.ask(&asked, command, NOW + 1000);
    let (status, body, _) = json(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!(status, 200);
    assert_eq!(body, json!({"state": "waiting", "expires_in_ms": CONNECT_CODE_TTL_MS - 1000}));
    // Another browser's poll is told so.
    let (mut saga, step) = Saga::status(&c, ORIGIN, &query, None);
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 1000);
    let (_, body, _) = json(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!(body["state"], "not_this_browser");
}

#[test]
fn a_code_of_no_draw_of_ours_is_expired_before_any_object() {
    let c = config();
    for query in [
        vec![],
        vec![("code".to_owned(), "nope".to_owned())],
        vec![("code".to_owned(), "ABCDE12345".to_owned())],
    ] {
        let (status, body, _) = json(Saga::status(&c, ORIGIN, &query, None).1);
        assert_eq!((status, body), (400, json!({"state": "expired"})));
    }
    let (_, code, _) = drawn(&c);
    let query = vec![("code".to_owned(), code.as_str().to_owned())];
    let (mut saga, _) = Saga::status(&c, ORIGIN, &query, None);
    let (status, body, _) = json(saga.next(Input::Code(CodeReply::Taken), &mut rng()));
    assert_eq!((status, body), (200, json!({"state": "expired"})));
}

// --- POST /token: a code

#[test]
fn a_code_is_redeemed_then_its_grant_made_then_tokens_issued() {
    let c = config();
    let (mut object, code, auth_code) = approved(&c);
    let (mut saga, step) =
        Saga::token(&c, ORIGIN, Ok(token_form(&auth_code, VERIFIER)), NOW + 3, &mut rng());
    let (asked, command) = ask_code(step);
    assert_eq!(asked, code);
    let Command::Redeem(Redemption { grant: grant_id, .. }) = command.clone() else {
        panic!("redeem")
    };
    let reply = object.ask(&asked, command, NOW + 3);
    let Step::AskPairing(pairing, ask) = saga.next(Input::Code(reply), &mut rng()) else {
        panic!("the pairing is asked")
    };
    assert_eq!(pairing, "p1");
    let wire::Request::Grant(wire::GrantRequest { id, client_id, requester }) = ask else {
        panic!("a grant: {ask:?}")
    };
    assert_eq!((id.as_str(), client_id), (grant_id.as_str(), registered_id()));
    assert_eq!((requester.client_name.as_str(), requester.host.as_str()), ("Claude", "claude.ai"));
    let made = Reply::Grant(GrantReply::Made { grant: id.clone(), secret: "rs".into() });
    let (status, body, _) = json(saga.next(Input::Pairing(Some(made)), &mut rng()));
    assert_eq!(status, 200);
    assert_eq!(body["refresh_token"], refresh_token(&c.keys, "p1", &id, "rs"));
    let access = token::verify(&c.keys, ORIGIN, body["access_token"].as_str().unwrap(), NOW + 3);
    let access = access.unwrap();
    assert_eq!((access.pairing.as_str(), access.grant.as_str()), ("p1", id.as_str()));
}

/// A token request redeemed at the object, to the step that asks the pairing for the grant.
fn at_grant<'c>(c: &'c Config, object: &mut Object, auth_code: &str) -> Saga<'c> {
    let (mut saga, step) =
        Saga::token(c, ORIGIN, Ok(token_form(auth_code, VERIFIER)), NOW + 3, &mut rng());
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 3);
    assert!(matches!(saga.next(Input::Code(reply), &mut rng()), Step::AskPairing(..)));
    saga
}

#[test]
fn a_pairing_that_is_full_or_heard_of_a_replay_makes_no_tokens() {
    let c = config();
    for (answer, sentence) in [
        (Reply::Grant(GrantReply::Full), sentences::GRANT_REFUSED_FULL),
        (Reply::Grant(GrantReply::Replayed), sentences::CODE_REPLAYED),
    ] {
        let (mut object, _, auth_code) = approved(&c);
        let mut saga = at_grant(&c, &mut object, &auth_code);
        let e = error(saga.next(Input::Pairing(Some(answer)), &mut rng()));
        assert_eq!((e.code, e.description.as_str()), ("invalid_grant", sentence));
    }
    // A pairing that says nothing that answers: the request fails (no tokens).
    let (mut object, _, auth_code) = approved(&c);
    let mut saga = at_grant(&c, &mut object, &auth_code);
    assert_eq!(respond(saga.next(Input::Pairing(None), &mut rng())), Outcome::Broken);
}

#[test]
fn a_replayed_code_revokes_what_it_made_then_is_refused() {
    let c = config();
    let (mut object, _, auth_code) = approved(&c);
    let form = || Ok(token_form(&auth_code, VERIFIER));
    let (mut first, step) = Saga::token(&c, ORIGIN, form(), NOW + 3, &mut Counter(1));
    let (asked, command) = ask_code(step);
    let Command::Redeem(Redemption { grant: made, .. }) = command.clone() else { panic!("redeem") };
    let reply = object.ask(&asked, command, NOW + 3);
    assert!(matches!(first.next(Input::Code(reply), &mut rng()), Step::AskPairing(..)));
    let (mut replay, step) = Saga::token(&c, ORIGIN, form(), NOW + 4, &mut Counter(2));
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 4);
    let step = replay.next(Input::Code(reply), &mut rng());
    // The grant the first redemption made is revoked, not the one the replay would have.
    assert_eq!(step, Step::AskPairing("p1".into(), wire::Request::Replayed { grant: made }));
    let e = error(replay.next(Input::Pairing(Some(Reply::Done)), &mut rng()));
    assert_eq!((e.code, e.description.as_str()), ("invalid_grant", sentences::oauth::CODE_USED));
}

#[test]
fn a_wrong_verifier_or_a_late_code_is_refused_by_the_object_without_asking_a_pairing() {
    let c = config();
    let (mut object, _, auth_code) = approved(&c);
    let (mut saga, step) =
        Saga::token(&c, ORIGIN, Ok(token_form(&auth_code, &"x".repeat(43))), NOW + 3, &mut rng());
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 3);
    let e = error(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!(
        (e.code, e.description.as_str()),
        ("invalid_grant", sentences::oauth::VERIFIER_WRONG)
    );
    let (mut saga, step) =
        Saga::token(&c, ORIGIN, Ok(token_form(&auth_code, VERIFIER)), NOW, &mut rng());
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 2 + AUTH_CODE_TTL_MS);
    let e = error(saga.next(Input::Code(reply), &mut rng()));
    assert_eq!((e.code, e.description.as_str()), ("invalid_grant", sentences::oauth::CODE_UNKNOWN));
}

#[test]
fn a_code_of_no_draw_of_ours_or_a_bad_form_is_refused_before_any_object() {
    let c = config();
    let e =
        error(Saga::token(&c, ORIGIN, Ok(token_form("ABCDE12345.s", VERIFIER)), NOW, &mut rng()).1);
    assert_eq!((e.code, e.description.as_str()), ("invalid_grant", sentences::oauth::CODE_UNKNOWN));
    let e = error(Saga::token(&c, ORIGIN, Ok(b"grant_type=password".to_vec()), NOW, &mut rng()).1);
    assert_eq!(e.code, "unsupported_grant_type");
    let e = error(Saga::token(&c, ORIGIN, Err(TooLarge { cap: 8 }), NOW, &mut rng()).1);
    assert_eq!((e.code, e.status), ("invalid_request", 413));
}

// --- POST /token: a refresh

fn refresh_form(token: &str) -> Vec<u8> {
    format!("grant_type=refresh_token&client_id={}&refresh_token={token}", registered_id())
        .into_bytes()
}

#[test]
fn a_refresh_is_rotated_by_its_pairing_or_refused_with_its_sentence() {
    let c = config();
    let p9 = "b".repeat(64);
    let token = refresh_token(&c.keys, &p9, "g9", "old");
    let (mut saga, step) = Saga::token(&c, ORIGIN, Ok(refresh_form(&token)), NOW, &mut rng());
    let Step::AskPairing(pairing, wire::Request::Refresh(request)) = step else {
        panic!("{step:?}")
    };
    assert_eq!(
        (pairing.as_str(), request.grant.as_str(), request.secret.as_str()),
        (p9.as_str(), "g9", "old")
    );
    let rotated = Reply::Refresh(RefreshReply::Rotated {
        secret: "new".into(),
        client_name: "C".into(),
        host: "h".into(),
    });
    let (status, body, _) = json(saga.next(Input::Pairing(Some(rotated)), &mut rng()));
    assert_eq!(status, 200);
    assert_eq!(body["refresh_token"], refresh_token(&c.keys, &p9, "g9", "new"));
    let (mut saga, _) = Saga::token(&c, ORIGIN, Ok(refresh_form(&token)), NOW, &mut rng());
    let refused = Reply::Refresh(RefreshReply::Refused { description: "Connect again.".into() });
    let e = error(saga.next(Input::Pairing(Some(refused)), &mut rng()));
    assert_eq!((e.code, e.description.as_str()), ("invalid_grant", "Connect again."));
    let (mut saga, _) = Saga::token(&c, ORIGIN, Ok(refresh_form(&token)), NOW, &mut rng());
    assert_eq!(
        respond(saga.next(Input::Pairing(Some(Reply::Grant(GrantReply::Full))), &mut rng())),
        Outcome::Broken
    );
}

// --- POST /revoke

#[test]
fn a_revocation_reaches_the_pairing_only_for_a_token_of_ours() {
    let c = config();
    let p9 = "b".repeat(64);
    let token = refresh_token(&c.keys, &p9, "g9", "s");
    let (mut saga, step) = Saga::revoke(&c, ORIGIN, Ok(format!("token={token}").into_bytes()), NOW);
    let request = RevokeRequest { grant: "g9".into(), secret: Some("s".into()) };
    assert_eq!(step, Step::AskPairing(p9.clone(), wire::Request::Revoke(request)));
    assert_eq!(respond(saga.next(Input::Pairing(None), &mut rng())), Outcome::Empty);
    let (_, step) = Saga::revoke(&c, ORIGIN, Ok(b"token=made-up".to_vec()), NOW);
    assert_eq!(respond(step), Outcome::Empty, "200 either way, nothing asked");
    let e = error(Saga::revoke(&c, ORIGIN, Ok(Vec::new()), NOW).1);
    assert_eq!(e.code, "invalid_request");
    let e = error(Saga::revoke(&c, ORIGIN, Err(TooLarge { cap: 8 }), NOW).1);
    assert_eq!(e.status, 413);
}

// --- any saga

#[test]
fn an_input_the_saga_did_not_ask_for_ends_it() {
    let c = config();
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed(&c, &request())), None, NOW);
    assert_eq!(respond(saga.next(Input::Code(CodeReply::Created), &mut rng())), Outcome::Broken);
    assert_eq!(
        respond(saga.next(Input::Limit(Limit::Within), &mut rng())),
        Outcome::Broken,
        "over"
    );
    let (mut saga, _) = Saga::register(&c, Ok(Vec::new()), NOW, &mut rng());
    assert_eq!(respond(saga.next(Input::Limit(Limit::Within), &mut rng())), Outcome::Broken);
}

fn asked(path: &str) -> OAuthRequest<'_> {
    OAuthRequest {
        path,
        query: Vec::new(),
        body: Ok(Vec::new()),
        accept: None,
        cookies: None,
        place: None,
    }
}

#[test]
fn each_oauth_route_starts_its_own_saga_and_no_other_path_starts_one() {
    let config = config();
    let start = |request| Saga::start(&config, ORIGIN, request, NOW, &mut rng()).map(|(_, s)| s);
    // Each endpoint refuses an empty request in its own way.
    assert_eq!(error(start(asked("/register")).unwrap()).code, "invalid_client_metadata");
    let password = OAuthRequest { body: Ok(b"grant_type=password".to_vec()), ..asked("/token") };
    assert_eq!(error(start(password).unwrap()).code, "unsupported_grant_type");
    assert_eq!(error(start(asked("/revoke")).unwrap()).code, "invalid_request");
    let (status, body, _) = json(start(asked(pages::CODE_PATH)).unwrap());
    assert_eq!(status, 400);
    assert!(body["sentence"].is_string(), "{body}");
    let (status, body, _) = json(start(asked(pages::STATUS_PATH)).unwrap());
    assert_eq!((status, body["state"].as_str()), (400, Some("expired")));
    assert_eq!(page(start(asked("/authorize")).unwrap()).0, 400);
    let json_accept = OAuthRequest { accept: Some("application/json"), ..asked("/authorize") };
    assert_eq!(error(start(json_accept).unwrap()).code, "invalid_request");
    let (status, _) = page(start(asked(tabrelay_bundle::protocol::CONFIRM_PATH)).unwrap());
    assert_eq!(status, 400);
    for none in ["/", "/health", "/tab", "/authorize/wait.js", "/nope"] {
        assert!(start(asked(none)).is_none(), "{none}");
    }
}

#[test]
fn each_answer_is_written_with_its_headers() {
    let header =
        |a: &http::Answer, name| a.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
    let cookie = Outcome::Json { status: 200, body: b"{}".to_vec(), cookie: Some("c=1".into()) };
    let cookie = cookie.http().unwrap();
    assert_eq!(header(&cookie, "set-cookie").as_deref(), Some("c=1"));
    assert_eq!(header(&cookie, "content-type").as_deref(), Some("application/json"));
    let unauthorized = Outcome::Error(OAuthError::invalid_client("who?")).http().unwrap();
    assert_eq!(unauthorized.status, 401);
    assert!(header(&unauthorized, "www-authenticate").is_some(), "a 401 says how to authenticate");
    let bad = Outcome::Error(OAuthError::invalid_grant("no")).http().unwrap();
    assert_eq!((bad.status, header(&bad, "www-authenticate")), (400, None));
    let body: Value = serde_json::from_slice(bad.body.as_deref().unwrap()).unwrap();
    assert_eq!(body, json!({"error": "invalid_grant", "error_description": "no"}));
    let poll = Outcome::poll(200, &PollState::Expired).http().unwrap();
    assert_eq!(poll.body, Some(Encode::to_json(&PollState::Expired)));
    let page = Outcome::Page { status: 400, html: "<p>x</p>".into() }.http().unwrap();
    assert_eq!(header(&page, "x-frame-options").as_deref(), Some("DENY"));
    let to = Outcome::Redirect("https://claude.ai/cb".into()).http().unwrap();
    assert_eq!(
        (to.status, header(&to, "location").as_deref()),
        (302, Some("https://claude.ai/cb"))
    );
    assert_eq!(Outcome::Empty.http(), Some(http::Answer::empty(200)));
    assert_eq!(Outcome::Broken.http(), None, "a broken reply answers nothing");
}

// --- names as shown

/// Characters that show as nothing yet turn a name around or split it unseen: bidirectional
/// controls, marks, zero-width and other format characters.
const UNSHOWN: [char; 14] = [
    '\u{202A}',
    '\u{202E}',
    '\u{2066}',
    '\u{2069}',
    '\u{200E}',
    '\u{200F}',
    '\u{061C}',
    '\u{200B}',
    '\u{200D}',
    '\u{FEFF}',
    '\u{2060}',
    '\u{2064}',
    '\u{00AD}',
    '\u{E0041}',
];

/// Whether `text` holds none of [`UNSHOWN`].
fn shows_all(text: &str) -> bool {
    !text.contains(UNSHOWN)
}

/// A client's name and redirect host reach the waiting page, the confirm page and the tab
/// without the characters that show as nothing: dropped when a client registers or its
/// document is read, and again from a client id signed before they were (whose redirect URI
/// may hold one too); a redirect URI holding one is refused from now on.
#[test]
fn unshown_characters_leave_a_clients_name_on_every_page_and_in_the_tab() {
    let c = config();
    let raw: String = ["Notes", &UNSHOWN.iter().collect::<String>(), " app"].concat();
    let body = format!(r#"{{"redirect_uris":["{REDIRECT}"],"client_name":"{raw}"}}"#);
    let registered = clients::register(&c.keys, body.as_bytes(), NOW, &mut rng()).unwrap();
    assert_eq!(registered.client.name, "Notes app");
    let url = MetadataUrl::parse("https://notes.example/client.json").unwrap();
    let doc = format!(
        r#"{{"client_id":"{}","client_name":"{raw}","redirect_uris":["{REDIRECT}"]}}"#,
        url.as_str()
    );
    assert_eq!(cimd::check_document(&url, doc.as_bytes()).unwrap().name.unwrap(), "Notes app");
    let turned = "https://evil.example\u{202E}\u{200B}/cb";
    let body = format!(r#"{{"redirect_uris":["{turned}"]}}"#);
    let e = error(Saga::register(&c, Ok(body.into_bytes()), NOW, &mut rng()).1);
    assert_eq!(e.code, "invalid_redirect_uri");
    // A client id signed before: its name and its redirect URI as they were.
    let old = clients::Client {
        name: raw.clone(),
        redirect_uris: vec![turned.into()],
        issued_at: NOW / 1000,
        instance: "old".into(),
    };
    let mut pairs = authorize_pairs(&clients::client_id(&c.keys, &old));
    pairs.retain(|(k, _)| k != "redirect_uri");
    let (status, html) = page(Saga::authorize(&c, ORIGIN, pairs, None, NOW).1);
    assert_eq!(status, 200, "{html}");
    assert!(shows_all(&html), "{html}");
    assert!(html.contains("Notes app") && html.contains(">evil.example<"), "{html}");
    // The request the page seals is what the code's object keeps: the tab is described from
    // it, and the confirm page names it.
    let sealed = html.split("data-request=\"").nth(1).unwrap().split('"').next().unwrap();
    let (request, _) = authorize::unseal(&c.keys, sealed, NOW).unwrap();
    assert_eq!(request.client_name, "Notes app");
    let mut object = Object::new();
    let (mut saga, _) = Saga::draw(&c, ORIGIN, Ok(sealed.as_bytes().to_vec()), None, NOW);
    let (code, command) = ask_code(saga.next(Input::Limit(Limit::Within), &mut rng()));
    let created = object.ask(&code, command, NOW);
    let (_, _, cookie) = json(saga.next(Input::Code(created), &mut rng()));
    let CodeReply::Described(told) = object.ask(&code, Command::Describe, NOW + 1) else {
        panic!("told")
    };
    assert_eq!(told.requester.client_name, "Notes app");
    assert_eq!(told.requester.host, "evil.example");
    let ticket = linked_ticket(&c, &mut object, &code);
    let cookies = cookie.unwrap().split(';').next().unwrap().to_owned();
    let (mut saga, step) = Saga::confirm(&c, ORIGIN, &confirm_query(&ticket), Some(&cookies));
    let (asked, command) = ask_code(step);
    let reply = object.ask(&asked, command, NOW + 2);
    let (status, html) = page(saga.next(Input::Code(reply), &mut rng()));
    assert!(status == 200 && html.contains("Notes app") && shows_all(&html), "{html}");
    // A grant made before keeps the name it was given: its refreshed tokens (whose name each
    // call carries to the tab) are cleaned too.
    let token = refresh_token(&c.keys, &"b".repeat(64), "g9", "s");
    let (mut saga, _) = Saga::token(&c, ORIGIN, Ok(refresh_form(&token)), NOW, &mut rng());
    let host = "evil.example\u{202E}".to_owned();
    let rotated = RefreshReply::Rotated { secret: "n".into(), client_name: raw.clone(), host };
    let (_, body, _) = json(saga.next(Input::Pairing(Some(Reply::Refresh(rotated))), &mut rng()));
    let access = token::verify(&c.keys, ORIGIN, body["access_token"].as_str().unwrap(), NOW);
    let access = access.unwrap();
    assert_eq!((access.client.as_str(), access.host.as_str()), ("Notes app", "evil.example"));
}

// --- a registration kept

/// The relay drops no registration: a client id it signed opens the waiting page (to a person
/// and to a program checking its cached registration) however long after it was made, used or
/// not; and a grant that is gone (forgotten in the tab, revoked) refuses its refresh as
/// `invalid_grant`, never as an unknown client, so the app keeps its client id and signs in
/// again with it (tests/e2e/forget.test.mjs does, end to end).
#[test]
fn a_registration_outlives_any_time_and_its_grants() {
    let c = config();
    let id = registered_id();
    let ten_years = 10 * 365 * 24 * 3600 * 1000;
    for accept in [None, Some("application/json")] {
        let later = NOW + ten_years;
        let (status, html) =
            page(Saga::authorize(&c, ORIGIN, authorize_pairs(&id), accept, later).1);
        assert!(status == 200 && html.contains("data-request="), "{accept:?}: {html}");
    }
    let token = refresh_token(&c.keys, &"b".repeat(64), "g9", "s");
    let (mut saga, _) = Saga::token(&c, ORIGIN, Ok(refresh_form(&token)), NOW, &mut rng());
    let gone = Reply::Refresh(RefreshReply::Refused { description: "Forgotten.".into() });
    let e = error(saga.next(Input::Pairing(Some(gone)), &mut rng()));
    assert_eq!((e.code, e.status, e.challenge()), ("invalid_grant", 400, None));
}
