//! The Worker's routes: each reads the request into values, asks the core, and writes the
//! answer back.

use std::time::Duration;

use futures::future::{select, Either};
use serde_json::json;
use tabrelay_bundle::protocol::close;
use worker::{
    console_error, event, Context, Delay, Env, Headers, Method, ObjectNamespace, Request, Response,
    Result, Stub, WebSocketPair,
};

use super::client_metadata;
use super::{
    ask_code, ask_pairing, ask_pairing_once, catalogue, json_response, now_ms, read_body,
    read_json, within_limit, PlatformRandom, Replies,
};
use crate::config::Config;
use crate::crypto::{random_token, sha256_hex};
use crate::http;
use crate::jsonrpc::{self, ErrorCode, Id, RpcError};
use crate::limits::{FIRST_EVENT_WAIT_MS, MAX_CODE_DRAWS, TOOL_LIST_WAIT_MS};
use crate::mcp::call_path::{
    self, Asked, Call, CallIdentity, CallInput, CallOutput, Listen, Start,
};
use crate::mcp::{self, resume, session, Era, Reply};
use crate::oauth::authorize::{self, Named, Refusal};
use crate::oauth::connect::{self, CodeReply, Command, ConnectCode, Granted, PollState, Revoke};
use crate::oauth::error::OAuthError;
use crate::oauth::exchange::TokenRequest;
use crate::oauth::{clients, exchange, metadata, token};
use crate::pages;
use crate::pairing::socket_pairing;
use crate::pairing::wire::{
    request_key, CallRequest, GrantReply, GrantRequest, RefreshReply, Reply as PairingReply,
    Request as PairingRequest, TaskOp as PairingTaskOp, Want,
};
use crate::senders::Limited;
use crate::{sentences, tools};

/// The Durable Object binding of the pairings.
pub(crate) const PAIRING_BINDING: &str = "PAIRING";
/// The Durable Object binding of the connect codes.
pub(crate) const CONNECT_BINDING: &str = "CONNECT";
const COOKIE_PREFIX: &str = "tabrelay_connect_";

fn var(env: &Env, name: &str) -> Option<String> {
    env.secret(name).map(|s| s.to_string()).or_else(|_| env.var(name).map(|v| v.to_string())).ok()
}

pub(crate) fn config(env: &Env) -> std::result::Result<Config, String> {
    Config::from_vars(
        var(env, "RELAY_SIGNING_KEY").as_deref(),
        var(env, "RELAY_SIGNING_KEY_PREVIOUS").as_deref(),
        var(env, "ALLOWED_ORIGINS").as_deref(),
        var(env, "APP_URL").as_deref(),
        var(env, "CALL_WAIT_MS").as_deref(),
    )
    .map(|c| c.with_client_origins(var(env, "CLIENT_ORIGINS").as_deref()))
    .map(|c| c.with_local_metadata_hosts(var(env, "LOCAL_METADATA_HOSTS").as_deref()))
    .map(|c| c.with_code_kept_ms(var(env, "CODE_KEPT_MS").as_deref()))
}

/// The configuration, read once per isolate: the vars and secrets of a deployment do not
/// change under a running isolate (a new deployment starts new ones). A misconfiguration is
/// not kept, so it is read (and logged) again on the next request.
static CONFIG: std::sync::OnceLock<Config> = std::sync::OnceLock::new();

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let read = match CONFIG.get() {
        Some(c) => Ok(c),
        None => config(&env).map(|c| CONFIG.get_or_init(|| c)),
    };
    let config = match read {
        Ok(c) => c,
        Err(why) => {
            console_error!("tabrelay is misconfigured: {why}");
            return text(500, crate::sentences::shell::MISCONFIGURED);
        }
    };
    let url = req.inner().url();
    let path = http::path_of(&url).to_owned();
    let mut res = route(req, &url, &path, &env, config).await?;
    if http::is_cors_path(&path) {
        for (k, v) in http::CORS_HEADERS {
            res.headers_mut().set(k, v)?;
        }
        if let Some(methods) = http::allow(&path) {
            res.headers_mut().set("access-control-allow-methods", &methods)?;
        }
    }
    Ok(res)
}

async fn route(
    req: Request,
    url: &str,
    path: &str,
    env: &Env,
    config: &Config,
) -> Result<Response> {
    let origin = http::origin_of(url).to_owned();
    match (req.method(), path) {
        (Method::Options, p) if http::is_cors_path(p) => Ok(Response::empty()?.with_status(204)),
        (Method::Get, "/health") => json_response(
            200,
            // The version and the app say what answers here (the live check reads both).
            &json!({"ok": true, "service": "tabrelay", "version": env!("CARGO_PKG_VERSION"), "app": config.app_url}),
        ),
        (Method::Get, "/.well-known/oauth-protected-resource") => {
            json_response(200, &metadata::protected_resource(&origin))
        }
        (Method::Get, "/.well-known/oauth-authorization-server") => {
            json_response(200, &metadata::authorization_server(&origin))
        }
        (Method::Post, "/register") => register(req, config).await,
        (Method::Get, "/authorize") => authorize_page(&req, url, config, &origin).await,
        (Method::Post, pages::CODE_PATH) => authorize_code(req, env, config, &origin).await,
        (Method::Get, pages::STATUS_PATH) => {
            authorize_status(&req, url, env, config, &origin).await
        }
        (Method::Get, tabrelay_bundle::protocol::CONFIRM_PATH) => {
            authorize_confirm(&req, url, env, config).await
        }
        (Method::Get, pages::WAIT_SCRIPT_PATH) => {
            let headers = Headers::new();
            headers.set("content-type", "text/javascript")?;
            headers.set("cache-control", "no-store")?;
            Ok(Response::ok(pages::WAIT_SCRIPT)?.with_headers(headers))
        }
        (Method::Post, "/token") => token_endpoint(req, env, config, &origin).await,
        (Method::Post, "/revoke") => revoke(req, env, config, &origin).await,
        (Method::Get, "/tab") => tab(req, url, env, config).await,
        (Method::Post, "/") => mcp_endpoint(req, env, config, &origin).await,
        // A client whose call's stream dropped comes back for the rest of it (2025-11-25).
        (Method::Get, "/") if req.headers().has("last-event-id")? => {
            resume_endpoint(&req, env, config, &origin).await
        }
        // The connector address opened in a browser: a page saying what it is (MCP: 405).
        (Method::Get, "/")
            if http::asks_for_page(&req.headers().get("accept")?.unwrap_or_default()) =>
        {
            html(200, pages::connector(&format!("{origin}/"), &config.app_url))
        }
        // A route asked with another method: 405 naming the ones it takes (http::ROUTES).
        _ => match http::allow(path) {
            Some(methods) => {
                let headers = Headers::new();
                headers.set("allow", &methods)?;
                let sentence = sentences::method_not_allowed(&methods);
                Ok(Response::error(sentence, 405)?.with_headers(headers))
            }
            None => text(404, "Not found."),
        },
    }
}

fn text(status: u16, body: &str) -> Result<Response> {
    Response::error(body, status)
}

fn oauth_error(e: &OAuthError) -> Result<Response> {
    let mut res = json_response(e.status, &e.body())?;
    if let Some(challenge) = e.challenge() {
        res.headers_mut().set("www-authenticate", challenge)?;
    }
    Ok(res)
}

fn html(status: u16, page: String) -> Result<Response> {
    let headers = Headers::new();
    headers.set("content-type", "text/html; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    headers.set("content-security-policy", pages::PAGE_CSP)?;
    headers.set("x-frame-options", "DENY")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(Response::from_html(page)?.with_status(status).with_headers(headers))
}

/// The body of a request to an OAuth endpoint, read with its cap; past it, the OAuth error
/// to answer with (413).
async fn oauth_body(
    req: &mut Request,
    path: &str,
) -> Result<std::result::Result<Vec<u8>, Response>> {
    Ok(match read_body(req, http::body_cap(path)).await? {
        Ok(body) => Ok(body),
        Err(too_large) => Err(oauth_error(&OAuthError::too_large(too_large.cap))?),
    })
}

async fn register(mut req: Request, config: &Config) -> Result<Response> {
    let body = match oauth_body(&mut req, "/register").await? {
        Ok(body) => body,
        Err(refused) => return Ok(refused),
    };
    match clients::register(&config.keys, &body, now_ms(), &mut PlatformRandom) {
        Ok(r) => json_response(201, &r),
        Err(e) => oauth_error(&e),
    }
}

async fn authorize_page(
    req: &Request,
    url: &str,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    // A program probing (it asks for JSON) reads an OAuth error; a person, the page.
    let json = authorize::wants_json(req.headers().get("accept")?.as_deref());
    let refused = |e: &OAuthError| {
        if json {
            let status = if e.code == "invalid_client" { 401 } else { 400 };
            json_response(status, &e.body())
        } else {
            html(400, pages::refused(e.code, &e.description))
        }
    };
    let pairs = http::query_of(url);
    let asking: authorize::Asking = match authorize::client_named(&pairs, &config.keys) {
        Ok(Named::Registered(client)) => client.into(),
        // Refused on the page: the redirect URI is not verified until the document is.
        Ok(Named::Document(doc)) => match client_metadata::client(&doc, origin, config).await {
            Ok(client) => client.into(),
            Err(e) => return refused(&e.oauth(doc.domain())),
        },
        Err(e) => return refused(&e),
    };
    let request = match authorize::validate(&pairs, asking, origin) {
        Ok(r) => r,
        Err(Refusal::Page(e)) => return refused(&e),
        Err(Refusal::Redirect(to)) => {
            let headers = Headers::new();
            headers.set("location", &to)?;
            headers.set("cache-control", "no-store")?;
            return Ok(Response::empty()?.with_status(302).with_headers(headers));
        }
    };
    // No connect code yet: the page's script asks for one with the sealed request.
    let asker = pages::Asker {
        name: &request.client_name,
        verified_domain: request.verified_domain.as_deref(),
        redirect_host: clients::host_of(&request.redirect_uri),
    };
    html(200, pages::waiting(&authorize::seal(&config.keys, &request, now_ms()), &asker))
}

/// The waiting page, running in a browser, asks for its connect code with its sealed request:
/// the code's Durable Object is made now, and the browser's cookie binds the page to it.
async fn authorize_code(
    mut req: Request,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let answer =
        |status: u16, sentence: &str| json_response(status, &json!({"sentence": sentence}));
    let body = match read_body(&mut req, http::body_cap(pages::CODE_PATH)).await? {
        Ok(body) => body,
        Err(too_large) => return answer(413, &sentences::too_large(too_large.cap)),
    };
    let sealed = String::from_utf8_lossy(&body);
    let Some((request, seal)) = authorize::unseal(&config.keys, &sealed, now_ms()) else {
        return answer(400, sentences::SEAL_STALE);
    };
    // A seal makes at most one code, but anyone may fetch a waiting page and post its seal:
    // each sender may make only so many codes (and objects) a minute.
    if !within_limit(env, &req, Limited::Code).await {
        return answer(429, sentences::TOO_MANY_CODES);
    }
    let place = place_of(&req, origin);
    let browser_secret = random_token(&mut PlatformRandom, 32);
    let browser_hash = sha256_hex(browser_secret.as_bytes());
    // The seal's code is drawn from the seal: posting it again reaches the same object, which
    // says its code was made, so one seal makes at most one code (and one object) whoever
    // posts it however often. Another seal holding the drawn letters makes the next draw.
    for attempt in 0..MAX_CODE_DRAWS {
        let code = ConnectCode::for_seal(&config.keys, &seal, attempt);
        let command = Command::Create {
            request: request.clone(),
            seal: seal.clone(),
            browser_hash: browser_hash.clone(),
            place: place.clone(),
        };
        match ask_code(env, &code, command).await? {
            CodeReply::Created => {}
            CodeReply::SealUsed => return answer(409, sentences::SEAL_USED),
            _ => continue, // Another request holds these letters: draw again.
        }
        let display = code.display();
        // The link carries a reference only the relay reads back, never the code.
        let reference = connect::LinkRef::for_code(&code, &config.keys, &mut PlatformRandom);
        let link = pages::approval_link(&config.app_url, reference.as_str());
        let mut res = json_response(200, &json!({"code": display, "link": link}))?;
        let secure = if origin.starts_with("https://") { "; Secure" } else { "" };
        res.headers_mut().set(
            "set-cookie",
            &format!(
                "{COOKIE_PREFIX}{}={browser_secret}; Path=/authorize; HttpOnly; SameSite=Lax; Max-Age=600{secure}",
                code.as_str()
            ),
        )?;
        return Ok(res);
    }
    answer(503, sentences::CODE_NOT_MADE)
}

/// Where the request came from, as the platform says (its `cf` data on Cloudflare; not
/// known under `wrangler dev`): "City, CC", or None.
fn place_of(req: &Request, origin: &str) -> Option<String> {
    use worker::js_sys::Reflect;
    let cf = Reflect::get(req.inner(), &"cf".into()).ok().filter(|v| v.is_object())?;
    let field = |k: &str| Reflect::get(&cf, &k.into()).ok().and_then(|v| v.as_string());
    connect::place_said(origin, field("city").as_deref(), field("country").as_deref())
}

/// The confirm page a tab opens after approving through the waiting page's link: the ticket
/// names the link (so the code) and the approval; the browser's cookie says whether it opened
/// the waiting page. The code's object decides.
async fn authorize_confirm(
    req: &Request,
    url: &str,
    env: &Env,
    config: &Config,
) -> Result<Response> {
    let query = http::query_of(url);
    let ticket = query
        .iter()
        .find(|(k, _)| k == tabrelay_bundle::protocol::CONFIRM_TICKET_PARAM)
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    // A ticket naming no link this relay made is refused before any Durable Object is addressed.
    let Some((code, secret)) = connect::read_ticket(ticket, &config.keys) else {
        return html(400, pages::confirmed(Err(connect::refusal::TICKET_STALE)));
    };
    let command = Command::Confirm { secret, browser_hash: browser_hash(req, &code)? };
    match ask_code(env, &code, command).await? {
        CodeReply::Confirmed { client } => html(200, pages::confirmed(Ok(&client))),
        CodeReply::Refused { sentence } => html(403, pages::confirmed(Err(&sentence))),
        _ => html(400, pages::confirmed(Err(connect::refusal::TICKET_STALE))),
    }
}

/// SHA-256 of the secret in the waiting page's cookie for `code`, as this browser sent it
/// (empty when it sent none).
fn browser_hash(req: &Request, code: &ConnectCode) -> Result<String> {
    let cookies = req.headers().get("cookie")?;
    let cookie_name = format!("{COOKIE_PREFIX}{}", code.as_str());
    Ok(http::cookie(cookies.as_deref(), &cookie_name)
        .map(|s| sha256_hex(s.as_bytes()))
        .unwrap_or_default())
}

async fn authorize_status(
    req: &Request,
    url: &str,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let query = http::query_of(url);
    let code = query.iter().find(|(k, _)| k == "code").and_then(|(_, v)| ConnectCode::parse(v));
    // A code this relay did not make is refused before any Durable Object is addressed.
    let Some(code) = code.filter(|c| c.is_issued(&config.keys)) else {
        return json_response(400, &json!({"state": "expired"}));
    };
    let command =
        Command::Poll { browser_hash: browser_hash(req, &code)?, issuer: origin.to_owned() };
    match ask_code(env, &code, command).await? {
        CodeReply::Poll(state) => json_response(200, &state),
        _ => json_response(200, &PollState::Expired),
    }
}

async fn token_endpoint(
    mut req: Request,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let body = match oauth_body(&mut req, "/token").await? {
        Ok(body) => body,
        Err(refused) => return Ok(refused),
    };
    let request = match exchange::read(&body, &config.keys, origin, &mut PlatformRandom) {
        Ok(r) => r,
        Err(e) => return oauth_error(&e),
    };
    let pairings = env.durable_object(PAIRING_BINDING)?;
    match request {
        TokenRequest::Code(code, _) if !code.is_issued(&config.keys) => {
            // Not a code this relay made: refused before any Durable Object is addressed.
            oauth_error(&OAuthError::invalid_grant(crate::sentences::oauth::CODE_UNKNOWN))
        }
        TokenRequest::Code(code, command) => {
            let (client_id, grant_id) = match &command {
                Command::Redeem { client_id, grant, .. } => (client_id.clone(), grant.clone()),
                _ => (String::new(), String::new()),
            };
            let granted = match ask_code(env, &code, command).await? {
                CodeReply::Redeemed { granted } => granted,
                CodeReply::RedeemRefused { error, error_description, revoke } => {
                    if let Some(Revoke { pairing, grant }) = revoke {
                        // The code was replayed: what it issued is revoked, and refused should
                        // the first redemption's creation of it reach the pairing after this.
                        let stub = pairings.id_from_name(&pairing)?.get_stub()?;
                        ask_pairing_once(&stub, &PairingRequest::Replayed { grant }).await?;
                    }
                    let body = json!({"error": error, "error_description": error_description});
                    return json_response(400, &body);
                }
                _ => return Err(worker::Error::RustError("not a redemption's reply".into())),
            };
            let pairing = pairings.id_from_name(&granted.pairing)?.get_stub()?;
            let request = GrantRequest {
                id: grant_id,
                client_id,
                client_name: granted.client_name.clone(),
                host: granted.host.clone(),
                place: granted.place.clone(),
                verified: granted.verified.clone(),
            };
            let made = ask_pairing_once(&pairing, &PairingRequest::Grant(request)).await?;
            let (grant, secret) = match made {
                Some(PairingReply::Grant(GrantReply::Made { grant, secret })) => (grant, secret),
                // The pairing filled up between the approval and now: it removes none.
                Some(PairingReply::Grant(GrantReply::Full)) => {
                    let e = OAuthError::invalid_grant(sentences::GRANT_REFUSED_FULL);
                    return oauth_error(&e);
                }
                // Its code was replayed meanwhile: the grant was revoked before it was made.
                Some(PairingReply::Grant(GrantReply::Replayed)) => {
                    return oauth_error(&OAuthError::invalid_grant(sentences::CODE_REPLAYED));
                }
                other => return unexpected(other),
            };
            let tokens = exchange::tokens(&config.keys, origin, granted, &grant, &secret, now_ms());
            json_response(200, &tokens)
        }
        TokenRequest::Refresh { pairing, request } => {
            let stub = pairings.id_from_name(&pairing)?.get_stub()?;
            let grant = request.grant.clone();
            match ask_pairing_once(&stub, &PairingRequest::Refresh(request)).await? {
                Some(PairingReply::Refresh(RefreshReply::Rotated {
                    secret,
                    client_name,
                    host,
                })) => {
                    let granted =
                        Granted { pairing, client_name, host, place: None, verified: None };
                    let tokens =
                        exchange::tokens(&config.keys, origin, granted, &grant, &secret, now_ms());
                    json_response(200, &tokens)
                }
                Some(PairingReply::Refresh(RefreshReply::Refused { description })) => {
                    oauth_error(&OAuthError::invalid_grant(description))
                }
                other => unexpected(other),
            }
        }
    }
}

async fn revoke(mut req: Request, env: &Env, config: &Config, origin: &str) -> Result<Response> {
    let body = match oauth_body(&mut req, "/revoke").await? {
        Ok(body) => body,
        Err(refused) => return Ok(refused),
    };
    match exchange::revocation(&body, &config.keys, origin, now_ms()) {
        Err(e) => oauth_error(&e),
        Ok(None) => Ok(Response::empty()?.with_status(200)),
        Ok(Some((pairing, request))) => {
            let stub = env.durable_object(PAIRING_BINDING)?.id_from_name(&pairing)?.get_stub()?;
            ask_pairing_once(&stub, &PairingRequest::Revoke(request)).await?;
            Ok(Response::empty()?.with_status(200))
        }
    }
}

async fn tab(req: Request, url: &str, env: &Env, config: &Config) -> Result<Response> {
    if !req.headers().get("upgrade")?.is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
        return text(426, crate::sentences::shell::WEBSOCKET_ONLY);
    }
    let origin = req.headers().get("origin")?.unwrap_or_default();
    if !config.allows_origin(&origin) {
        return refuse_socket(close::ORIGIN_REFUSED, crate::sentences::shell::ORIGIN_MAY_NOT_PAIR);
    }
    // The socket names the pairing id (tokens carry it too, so it opens nothing by itself): the
    // hello brings the public key it derives from, and the key's signature proves it. The key
    // stays out of the address, which request logs keep.
    let pairing = match socket_pairing(&http::query_of(url)) {
        Ok(pairing) => pairing,
        Err((code, reason)) => return refuse_socket(code, reason),
    };
    // Any id (a self-made key's) makes an object: each sender may open only so many a minute.
    if !within_limit(env, &req, Limited::Tab).await {
        return refuse_socket(close::TOO_MANY_TABS, sentences::TOO_MANY_SOCKETS);
    }
    let stub = env.durable_object(PAIRING_BINDING)?.id_from_name(&pairing)?.get_stub()?;
    stub.fetch_with_request(req).await
}

/// A reply of a pairing's object that does not answer what was asked: the request fails.
fn unexpected(_reply: Option<PairingReply>) -> Result<Response> {
    Err(worker::Error::RustError("a reply of the pairing that does not answer the request".into()))
}

/// Accepts a socket only to close it with a code and reason (a browser shows nothing else).
fn refuse_socket(code: u16, reason: &str) -> Result<Response> {
    let pair = WebSocketPair::new()?;
    pair.server.accept()?;
    pair.server.close(Some(code), Some(reason))?;
    Response::from_websocket(pair.client)
}

async fn mcp_endpoint(
    mut req: Request,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let caller = req.headers().get("origin")?;
    if !config.allows_caller(caller.as_deref(), origin) {
        let e = RpcError::new(ErrorCode::INVALID_REQUEST, sentences::ORIGIN_REFUSED);
        return json_response(403, &jsonrpc::error(None, &e));
    }
    let auth = req.headers().get("authorization")?;
    let presented = http::bearer(auth.as_deref());
    let access = presented.and_then(|t| token::verify(&config.keys, origin, t, now_ms()).ok());
    let Some(access) = access else {
        return unauthorized(origin, presented.is_some());
    };
    let h = req.headers();
    let (version, method, name) =
        (h.get("mcp-protocol-version")?, h.get("mcp-method")?, h.get("mcp-name")?);
    let accept = h.get("accept")?;
    let session = h.get("mcp-session-id")?;
    // Only a 2026-07-28 tools/call (the one request that names Mcp-Method tools/call) may carry
    // Mcp-Param-* headers to check: every other request skips walking its headers, each entry
    // a crossing into JS.
    let mut params = serde_json::Map::new();
    if method.as_deref() == Some("tools/call") {
        for (name, value) in h.entries() {
            if let Some(name) = name.strip_prefix("mcp-param-") {
                params.insert(name.to_owned(), serde_json::Value::String(value));
            }
        }
    }
    let headers = mcp::Headers {
        version: version.as_deref(),
        method: method.as_deref(),
        name: name.as_deref(),
        session: session.as_deref(),
        params: Some(&params),
    };
    let body = match read_body(&mut req, http::body_cap("/")).await? {
        Ok(body) => body,
        Err(too_large) => {
            let e = RpcError::new(ErrorCode::INVALID_REQUEST, sentences::too_large(too_large.cap));
            return json_response(413, &jsonrpc::error(None, &e));
        }
    };
    let stream = mcp::accepts_stream(accept.as_deref());
    let items = match mcp::batch(&body, &headers) {
        mcp::Batch::One => {
            return answer_message(&body, &headers, stream, &access, env, config, origin).await
        }
        mcp::Batch::Refused(Reply::Json { status, body }) => return json_response(status, &body),
        mcp::Batch::Refused(_) => return text(400, "Bad batch."),
        mcp::Batch::Many(items) => items,
    };
    // A 2025-03-26 batch: each message answered in turn (calls as JSON), the answers together.
    let mut answers = Vec::new();
    for item in items {
        let mut res = answer_message(&item, &headers, false, &access, env, config, origin).await?;
        match res.status_code() {
            401 => return Ok(res),
            202 => {}
            _ => answers.extend(read_json::<serde_json::Value>(&res.text().await?).ok()),
        }
    }
    if answers.is_empty() {
        return Ok(Response::empty()?.with_status(202));
    }
    json_response(200, &serde_json::Value::Array(answers))
}

/// The answer to one JSON-RPC message from a client whose token checked out.
async fn answer_message(
    body: &[u8],
    headers: &mcp::Headers<'_>,
    stream: bool,
    access: &token::Access,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let access = access.clone();
    let pairing = || env.durable_object(PAIRING_BINDING)?.id_from_name(&access.pairing)?.get_stub();
    let reply = mcp::handle(body, headers, &config.app_url);
    let initialize = matches!(reply, Reply::Initialize { .. });
    let declared = match session::check(&config.keys, &access.grant, headers, initialize) {
        Ok(declared) => declared,
        Err(body) => return json_response(404, &body),
    };
    match reply {
        Reply::Json { status: 200, body } => {
            // A forgotten or revoked connection stops at once, on every method.
            let check = PairingRequest::Check { grant: access.grant.clone(), want: Want::Nothing };
            match ask_pairing_once(&pairing()?, &check).await {
                Ok(Some(PairingReply::NoGrant)) => unauthorized(origin, true),
                _ => json_response(200, &body),
            }
        }
        reply @ (Reply::ListTools { .. } | Reply::Status { .. }) => {
            // The grant's check and the answer in one round trip, within a short wait; a
            // pairing that cannot answer in time gets the bundled list (or, for status, says so).
            let want =
                if matches!(reply, Reply::ListTools { .. }) { Want::Tools } else { Want::Status };
            let check = PairingRequest::Check { grant: access.grant.clone(), want };
            let answer = match ask_within(&pairing()?, &check, TOOL_LIST_WAIT_MS).await {
                Some(PairingReply::NoGrant) => return unauthorized(origin, true),
                Some(PairingReply::Tools(v) | PairingReply::Status(v)) => Some(v),
                _ => None,
            };
            let body = match reply {
                Reply::ListTools { id, era } => mcp::tools_list(
                    &id,
                    &era,
                    answer.unwrap_or_else(|| tools::list(None, catalogue())),
                ),
                Reply::Status { id, era } => mcp::status_answer(&id, &era, answer),
                _ => unreachable!("matched above"),
            };
            json_response(200, &body)
        }
        Reply::Json { status, body } => json_response(status, &body),
        Reply::Accepted => Ok(Response::empty()?.with_status(202)),
        Reply::Cancel { request_id } => {
            let cancel =
                PairingRequest::Cancel { request: request_key(&access.grant, &request_id) };
            if let Ok(stub) = pairing() {
                // Nothing to tell the client either way: a cancellation has no answer.
                let _ = ask_pairing_once(&stub, &cancel).await;
            }
            Ok(Response::empty()?.with_status(202))
        }
        Reply::Listen { id, tools } => {
            let listen = PairingRequest::Listen { grant: access.grant.clone() };
            let mut replies = ask_pairing(&pairing()?, &listen).await.ok();
            let first = match replies.as_mut() {
                Some(r) => r.next().await,
                None => None,
            };
            if first == Some(PairingReply::NoGrant) {
                return unauthorized(origin, true);
            }
            listen_stream(id, tools, first, replies)
        }
        Reply::Task { id, era, task, method } => {
            let stub = pairing()?;
            let mut op = method.op();
            let until = now_ms() + config.call_wait_ms;
            loop {
                let grant = access.grant.clone();
                let request = PairingRequest::Task { grant, task: task.clone(), op };
                let said = match ask_pairing_once(&stub, &request).await {
                    Ok(Some(PairingReply::NoGrant)) => return unauthorized(origin, true),
                    Ok(Some(PairingReply::Task(reply))) => Some(reply),
                    _ => None,
                };
                match mcp::tasks::answer(&id, &era, &method, said) {
                    mcp::tasks::Next::Answer(body) => return json_response(200, &body),
                    mcp::tasks::Next::AskAgain(_) if now_ms() >= until => {
                        return json_response(200, &mcp::tasks::still_working(&id))
                    }
                    mcp::tasks::Next::AskAgain(after_ms) => {
                        Delay::from(Duration::from_millis(after_ms)).await;
                        op = PairingTaskOp::Get;
                    }
                }
            }
        }
        Reply::Call { id, tool, args, progress_token, era, retry, tasks } => {
            let resumable = resume::resumable(headers, declared.as_ref(), stream);
            let session = declared;
            let asked = Asked {
                id,
                tool,
                args,
                progress_token,
                era,
                retry,
                stream,
                session,
                resumable,
                tasks,
                params: headers.params.cloned().unwrap_or_default(),
            };
            let (call, mut answer) = match call_path::start(asked, &access, config, now_ms()) {
                Start::Refused(body) => return json_response(200, &body),
                Start::Ask(call, answer) => (call, answer),
                Start::MarkState { key, expires_ms, then } => {
                    let use_state = PairingRequest::UseState { key, expires_ms };
                    let first = match pairing() {
                        Ok(stub) => ask_pairing_once(&stub, &use_state).await.ok().flatten(),
                        Err(_) => None,
                    };
                    match then.state_used(first == Some(PairingReply::Done)) {
                        Ok(started) => started,
                        Err(body) => return json_response(200, &body),
                    }
                }
            };
            let replies = match pairing() {
                Ok(stub) => ask_pairing(&stub, &PairingRequest::Call(call.clone())).await.ok(),
                Err(_) => None,
            };
            let Some(replies) = replies else { return respond(answer.whole(None, now_ms())) };
            let follow = Follow {
                pairings: env.durable_object(PAIRING_BINDING)?,
                pairing: access.pairing.clone(),
                grant: access.grant.clone(),
                call,
            };
            pump_call(answer, replies, stream, origin, follow).await
        }
        Reply::Initialize { body, declared } => {
            let check = PairingRequest::Check { grant: access.grant.clone(), want: Want::Nothing };
            match ask_pairing_once(&pairing()?, &check).await {
                Ok(Some(PairingReply::NoGrant)) => unauthorized(origin, true),
                _ => {
                    let mut res = json_response(200, &body)?;
                    let id = session::issue(&config.keys, &access.grant, declared);
                    res.headers_mut().set("mcp-session-id", &id)?;
                    Ok(res)
                }
            }
        }
        Reply::Answer { id, answer } => {
            let request = PairingRequest::Answer { grant: access.grant.clone(), id, answer };
            match ask_pairing_once(&pairing()?, &request).await {
                Ok(Some(PairingReply::Done)) => Ok(Response::empty()?.with_status(202)),
                Ok(Some(PairingReply::NoGrant)) => unauthorized(origin, true),
                _ => {
                    let e = RpcError::new(ErrorCode::INVALID_REQUEST, sentences::NOT_ASKED);
                    json_response(400, &jsonrpc::error(None, &e))
                }
            }
        }
    }
}

/// A GET with `Last-Event-ID` from a client whose call's stream dropped: the rest of the
/// call's events (or its end) on a new stream, for the connection that made it. Nothing to
/// take up: 405, as a GET without it (the relay offers no stream of its own).
async fn resume_endpoint(
    req: &Request,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let h = req.headers();
    if !config.allows_caller(h.get("origin")?.as_deref(), origin) {
        let e = RpcError::new(ErrorCode::INVALID_REQUEST, sentences::ORIGIN_REFUSED);
        return json_response(403, &jsonrpc::error(None, &e));
    }
    let auth = h.get("authorization")?;
    let presented = http::bearer(auth.as_deref());
    let access = presented.and_then(|t| token::verify(&config.keys, origin, t, now_ms()).ok());
    let Some(access) = access else {
        return unauthorized(origin, presented.is_some());
    };
    let (version, session, last) =
        (h.get("mcp-protocol-version")?, h.get("mcp-session-id")?, h.get("last-event-id")?);
    let headers = mcp::Headers {
        version: version.as_deref(),
        session: session.as_deref(),
        ..mcp::Headers::default()
    };
    let declared = match session::check(&config.keys, &access.grant, &headers, false) {
        Ok(declared) => declared,
        Err(body) => return json_response(404, &body),
    };
    let target = last.as_deref().and_then(resume::read_event_id).filter(|_| declared.is_some());
    let Some(resume::LastEvent { id, progress, number }) = target else {
        return method_not_allowed("/");
    };
    let stub = env.durable_object(PAIRING_BINDING)?.id_from_name(&access.pairing)?.get_stub()?;
    let request = request_key(&access.grant, &id);
    let mut replies =
        ask_pairing(&stub, &PairingRequest::Resume { grant: access.grant.clone(), request })
            .await?;
    let reply = match replies.next().await {
        Some(PairingReply::NoGrant) => return unauthorized(origin, true),
        Some(PairingReply::NotAsked) | None => return method_not_allowed("/"),
        Some(reply) => reply,
    };
    let keys = config.keys.clone();
    let (grant, tool, args) = (access.grant.clone(), String::new(), serde_json::Value::Null);
    let who = CallIdentity { id, era: Era::Session, keys, grant, tool, args };
    let mut call = Call::resumed(who, progress, number, now_ms());
    let opening = call.opening();
    let first = match call.input(CallInput::of_reply(Some(reply)), now_ms()) {
        CallOutput::Send(text) => CallOutput::Send(opening + &text),
        CallOutput::Last(text) => CallOutput::Last(opening + &text),
        _ => CallOutput::Send(opening),
    };
    call_stream(call, replies, first, None)
}

/// 405 naming the methods `path` takes.
fn method_not_allowed(path: &str) -> Result<Response> {
    let methods = http::allow(path).unwrap_or_default();
    let headers = Headers::new();
    headers.set("allow", &methods)?;
    Ok(Response::error(sentences::method_not_allowed(&methods), 405)?.with_headers(headers))
}

/// What a call's stream needs to ask its pairing again: to wait for the client's answers to
/// its questions, or to carry the call to the tab again with them.
struct Follow {
    pairings: ObjectNamespace,
    pairing: String,
    grant: String,
    call: CallRequest,
}

impl Follow {
    /// The pairing's replies to `request` (none when it could not be asked).
    async fn ask(&self, request: &PairingRequest) -> Replies {
        let stub = self.pairings.id_from_name(&self.pairing).and_then(|id| id.get_stub());
        match stub {
            Ok(stub) => ask_pairing(&stub, request).await.unwrap_or_else(|_| Replies::none()),
            Err(_) => Replies::none(),
        }
    }
}

/// A call's JSON answer (the core said JSON).
fn respond(output: CallOutput) -> Result<Response> {
    match output {
        CallOutput::Json { status, body } => json_response(status, &body),
        _ => text(500, crate::sentences::shell::CALL_NOT_ANSWERED),
    }
}

/// Pumps the pairing's replies into the call's core: until [`FIRST_EVENT_WAIT_MS`] the answer
/// may still go as JSON; after that (or once the core sends anything) it is a stream. A client
/// that takes no stream gets JSON when the answer comes.
async fn pump_call(
    mut call: Call,
    mut replies: Replies,
    stream: bool,
    origin: &str,
    follow: Follow,
) -> Result<Response> {
    let mut timer = Box::pin(Delay::from(Duration::from_millis(FIRST_EVENT_WAIT_MS)));
    let first = loop {
        let reply = if stream {
            match select(Box::pin(replies.next()), timer.as_mut()).await {
                Either::Left((reply, _)) => Some(reply),
                Either::Right(_) => None,
            }
        } else {
            Some(replies.next().await)
        };
        let input = match reply {
            Some(Some(PairingReply::NoGrant)) => return unauthorized(origin, true),
            Some(reply) => CallInput::of_reply(reply),
            None => CallInput::FirstWaitOver,
        };
        let output = call.input(input, now_ms());
        if output != CallOutput::Wait || call.streaming() {
            break output;
        }
    };
    if let CallOutput::Json { status, body } = first {
        return json_response(status, &body);
    }
    call_stream(call, replies, first, Some(follow))
}

/// A call's answer as server-sent events: `first`, then what the core makes of each of the
/// pairing's replies until the call is answered. `follow` asks the pairing again for a
/// round of questions (None: a call taken up again, which asks none).
fn call_stream(
    call: Call,
    replies: Replies,
    first: CallOutput,
    follow: Option<Follow>,
) -> Result<Response> {
    let events = futures::stream::unfold(
        (call, replies, Some(first), follow),
        |(mut call, mut replies, mut pending, mut follow)| async move {
            loop {
                let output = match pending.take() {
                    Some(output) => output,
                    None if call.is_done() => return None,
                    None => {
                        let reply = replies.next().await;
                        call.input(CallInput::of_reply(reply), now_ms())
                    }
                };
                let text = match output {
                    CallOutput::Wait => continue,
                    CallOutput::Send(text) | CallOutput::Last(text) => text,
                    CallOutput::Json { body, .. } => mcp::sse_event(&body),
                    CallOutput::Ask { text, ids } => {
                        // The pairing holds the questions before the client can answer them.
                        replies = match follow.as_ref() {
                            Some(f) => {
                                let grant = f.grant.clone();
                                f.ask(&PairingRequest::AwaitAnswers { grant, ids }).await
                            }
                            None => Replies::none(),
                        };
                        text
                    }
                    CallOutput::Again(input) => {
                        replies = match follow.as_mut() {
                            Some(f) => {
                                f.call.input = Some(input);
                                f.ask(&PairingRequest::Call(f.call.clone())).await
                            }
                            None => Replies::none(),
                        };
                        continue;
                    }
                };
                let state = (call, replies, None, follow);
                return Some((Ok::<_, worker::Error>(text.into_bytes()), state));
            }
        },
    );
    event_stream(Response::from_stream(events)?)
}

/// The headers of every event stream the endpoint answers with.
fn event_stream(mut res: Response) -> Result<Response> {
    let headers = res.headers_mut();
    headers.set("content-type", "text/event-stream")?;
    headers.set("cache-control", "no-cache, no-store")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(res)
}

/// `subscriptions/listen` as server-sent events, pumped through the core's [`Listen`] (`first`
/// is the pairing's first reply, already read).
fn listen_stream(
    id: Id,
    tools: bool,
    first: Option<PairingReply>,
    replies: Option<Replies>,
) -> Result<Response> {
    let events = futures::stream::unfold(
        (Listen::new(id, tools), first, replies),
        |(mut listen, first, mut replies)| async move {
            let text = match (listen.start(), first) {
                (Some(ack), first) => {
                    return Some((Ok(ack.into_bytes()), (listen, first, replies)))
                }
                (None, Some(first)) => listen.input(Some(&first))?.0,
                (None, None) => {
                    let next = match replies.as_mut() {
                        Some(r) => r.next().await,
                        None => None,
                    };
                    listen.input(next.as_ref())?.0
                }
            };
            Some((Ok::<_, worker::Error>(text.into_bytes()), (listen, None, replies)))
        },
    );
    event_stream(Response::from_stream(events)?)
}

/// Asks a pairing and waits at most `wait_ms` for its reply (None: none in time, or none read).
async fn ask_within(stub: &Stub, request: &PairingRequest, wait_ms: u64) -> Option<PairingReply> {
    let timer = Delay::from(Duration::from_millis(wait_ms));
    match select(Box::pin(ask_pairing_once(stub, request)), Box::pin(timer)).await {
        Either::Left((Ok(reply), _)) => reply,
        _ => None,
    }
}

/// 401 with the header that tells a client where to authorize.
fn unauthorized(origin: &str, token_presented: bool) -> Result<Response> {
    let body = json!({"error": "invalid_token", "error_description": sentences::TOKEN_INVALID});
    let mut res = json_response(401, &body)?;
    res.headers_mut()
        .set("www-authenticate", &metadata::www_authenticate(origin, token_presented))?;
    Ok(res)
}
