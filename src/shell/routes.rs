//! The Worker's routes: each reads the request into values, asks the core, and writes the
//! answer back.

use std::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt as _;
use serde_json::json;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::fields::FromValue as _;
use tabrelay_bundle::protocol::{close, Connection};
use worker::{
    console_error, event, ByteStream, Context, Delay, Env, Headers, Method, Request, Response,
    Result, Stub, WebSocketPair,
};

use super::client_metadata;
use super::{
    ask_code, ask_object, catalogue, from_json, json_response, now_ms, post_object, read_json,
    PlatformRandom,
};
use crate::config::Config;
use crate::http;
use crate::jsonrpc::{self, ErrorCode, Id, RpcError};
use crate::mcp::{self, input, Reply};
use crate::oauth::authorize::{self, Named, Refusal};
use crate::oauth::connect::Granted;
use crate::oauth::connect::{self, Command, ConnectCode};
use crate::oauth::error::OAuthError;
use crate::oauth::exchange::TokenRequest;
use crate::oauth::keys::Keys;
use crate::oauth::{clients, exchange, metadata, random_token, sha256_hex, token};
use crate::pages;
use crate::pairing::{
    request_key, socket_key, CallAnswer, CallEvent, CallRequest, CancelRequest, CheckRequest,
    GrantAnswer, GrantRequest, ListenEvent, RefreshAnswer, RevokeRequest, TOOL_LIST_WAIT_MS,
};
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
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    console_error_panic_hook::set_once();
    let config = match config(&env) {
        Ok(c) => c,
        Err(why) => {
            console_error!("tabrelay is misconfigured: {why}");
            return text(
                500,
                "This relay is misconfigured: its owner must set its secrets (the log says which).",
            );
        }
    };
    let url = req.inner().url();
    let path = http::path_of(&url).to_owned();
    let mut res = route(req, &url, &path, &env, &config).await?;
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

async fn register(mut req: Request, config: &Config) -> Result<Response> {
    let body = req.bytes().await.unwrap_or_default();
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

/// The longest sealed request the waiting page posts back, in bytes.
const MAX_SEAL_BYTES: usize = 32 * 1024;
/// How many codes a seal may draw before the relay gives up (each further draw is needed only
/// when another live request holds the drawn letters: one in 2^35 per live code).
const MAX_CODE_DRAWS: u8 = 4;

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
    let body = req.bytes().await.unwrap_or_default();
    if body.len() > MAX_SEAL_BYTES {
        return answer(400, sentences::SEAL_STALE);
    }
    let sealed = String::from_utf8_lossy(&body);
    let Some((request, seal)) = authorize::unseal(&config.keys, &sealed, now_ms()) else {
        return answer(400, sentences::SEAL_STALE);
    };
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
        let made = ask_code(env, &code, command).await?;
        if made["made"] == true {
            return answer(409, sentences::SEAL_USED);
        }
        if made["ok"] != true {
            continue; // Another request holds these letters: draw again.
        }
        let display = code.display();
        let link = pages::approval_link(&config.app_url, &display);
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
    let cookies = req.headers().get("cookie")?;
    let cookie_name = format!("{COOKIE_PREFIX}{}", code.as_str());
    let browser_hash = http::cookie(cookies.as_deref(), &cookie_name)
        .map(|s| sha256_hex(s.as_bytes()))
        .unwrap_or_default();
    let command = Command::Poll { browser_hash, issuer: origin.to_owned() };
    let answer = ask_code(env, &code, command).await?;
    json_response(200, &answer)
}

async fn token_endpoint(
    mut req: Request,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let body = req.bytes().await.unwrap_or_default();
    let request = match exchange::read(&body, &config.keys, origin, &mut PlatformRandom) {
        Ok(r) => r,
        Err(e) => return oauth_error(&e),
    };
    let pairings = env.durable_object(PAIRING_BINDING)?;
    match request {
        TokenRequest::Code(code, _) if !code.is_issued(&config.keys) => {
            // Not a code this relay made: refused before any Durable Object is addressed.
            oauth_error(&OAuthError::invalid_grant("The authorization code is unknown or expired."))
        }
        TokenRequest::Code(code, command) => {
            let (client_id, grant_id) = match &command {
                Command::Redeem { client_id, grant, .. } => (client_id.clone(), grant.clone()),
                _ => (String::new(), String::new()),
            };
            let answer = ask_code(env, &code, command).await?;
            let granted: Option<Granted> = (answer["ok"] == true)
                .then(|| Granted::from_value(answer["granted"].clone()))
                .flatten();
            let Some(granted) = granted else {
                if let (Some(pairing), Some(grant)) =
                    (answer["revoke"]["pairing"].as_str(), answer["revoke"]["grant"].as_str())
                {
                    // The code was replayed: what it issued is revoked, and refused should the
                    // first redemption's creation of it reach the pairing after this.
                    let stub = pairings.id_from_name(pairing)?.get_stub()?;
                    let revoke = RevokeRequest { grant: grant.to_owned(), secret: None };
                    post_object(&stub, "/replayed", &revoke).await?;
                }
                let body = json!({"error": answer["error"], "error_description": answer["error_description"]});
                return json_response(400, &body);
            };
            let pairing = pairings.id_from_name(&granted.pairing)?.get_stub()?;
            let request = GrantRequest {
                id: grant_id,
                client_id,
                client_name: granted.client_name.clone(),
                host: granted.host.clone(),
                place: granted.place.clone(),
            };
            let mut made = post_object(&pairing, "/grant", &request).await?;
            if made.status_code() == 409 {
                // The pairing filled up between the approval and now: it removes none.
                return oauth_error(&OAuthError::invalid_grant(sentences::GRANT_REFUSED_FULL));
            }
            if made.status_code() == 410 {
                // Its code was replayed meanwhile: the grant was revoked before it was made.
                return oauth_error(&OAuthError::invalid_grant(sentences::CODE_REPLAYED));
            }
            let grant: GrantAnswer = read_json(&made.text().await?)?;
            let tokens = exchange::tokens(
                &config.keys,
                origin,
                granted,
                &grant.grant,
                &grant.secret,
                now_ms(),
            );
            json_response(200, &tokens)
        }
        TokenRequest::Refresh { pairing, request } => {
            let stub = pairings.id_from_name(&pairing)?.get_stub()?;
            let grant = request.grant.clone();
            match ask_object::<RefreshAnswer>(&stub, "/refresh", &request).await? {
                RefreshAnswer::Rotated { secret, client_name, host } => {
                    let granted = Granted { pairing, client_name, host, place: None };
                    let tokens =
                        exchange::tokens(&config.keys, origin, granted, &grant, &secret, now_ms());
                    json_response(200, &tokens)
                }
                RefreshAnswer::Refused { description } => {
                    oauth_error(&OAuthError::invalid_grant(description))
                }
            }
        }
    }
}

async fn revoke(mut req: Request, env: &Env, config: &Config, origin: &str) -> Result<Response> {
    let body = req.bytes().await.unwrap_or_default();
    match exchange::revocation(&body, &config.keys, origin, now_ms()) {
        Err(e) => oauth_error(&e),
        Ok(None) => Ok(Response::empty()?.with_status(200)),
        Ok(Some((pairing, request))) => {
            let stub = env.durable_object(PAIRING_BINDING)?.id_from_name(&pairing)?.get_stub()?;
            post_object(&stub, "/revoke", &request).await?;
            Ok(Response::empty()?.with_status(200))
        }
    }
}

async fn tab(req: Request, url: &str, env: &Env, config: &Config) -> Result<Response> {
    if !req.headers().get("upgrade")?.is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
        return text(426, "This address takes a WebSocket from the app's tab.");
    }
    let origin = req.headers().get("origin")?.unwrap_or_default();
    if !config.allows_origin(&origin) {
        return refuse_socket(
            close::ORIGIN_REFUSED,
            "This page's origin may not pair with this relay.",
        );
    }
    // The socket names the browser's public pairing key, never the pairing id (which tokens
    // carry): the object is named by the id derived here, and the key's signature proves it.
    let key = match socket_key(&http::query_of(url)) {
        Ok(key) => key,
        Err((code, reason)) => return refuse_socket(code, reason),
    };
    let stub = env.durable_object(PAIRING_BINDING)?.id_from_name(&key.pairing())?.get_stub()?;
    stub.fetch_with_request(req).await
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
    let headers = mcp::Headers {
        version: version.as_deref(),
        method: method.as_deref(),
        name: name.as_deref(),
    };
    let body = req.bytes().await.unwrap_or_default();
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
    let pairing = || env.durable_object(PAIRING_BINDING)?.id_from_name(&access.sub)?.get_stub();
    match mcp::handle(body, headers, &config.app_url) {
        Reply::Json { status: 200, body } => {
            // A forgotten or revoked connection stops at once, on every method.
            let check = CheckRequest { grant: access.gid.clone() };
            match post_object(&pairing()?, "/check", &check).await {
                Ok(res) if res.status_code() == 401 => unauthorized(origin, true),
                _ => json_response(200, &body),
            }
        }
        reply @ (Reply::ListTools { .. } | Reply::Status { .. }) => {
            // The grant's check and the answer in one round trip, within a short wait; a
            // pairing that cannot answer in time gets the bundled list (or, for status, says so).
            let path = if matches!(reply, Reply::ListTools { .. }) { "/tools" } else { "/status" };
            let check = CheckRequest { grant: access.gid.clone() };
            let answer = match ask_within(&pairing()?, path, &check, TOOL_LIST_WAIT_MS).await {
                Checked::Revoked => return unauthorized(origin, true),
                Checked::Answer(text) => read_json::<serde_json::Value>(&text).ok(),
                Checked::Unknown => None,
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
            let cancel = CancelRequest { request: request_key(&access.gid, &request_id) };
            if let Ok(stub) = pairing() {
                // Nothing to tell the client either way: a cancellation has no answer.
                let _ = post_object(&stub, "/cancel", &cancel).await;
            }
            Ok(Response::empty()?.with_status(202))
        }
        Reply::Listen { id, tools } => {
            let check = CheckRequest { grant: access.gid.clone() };
            let res = post_object(&pairing()?, "/listen", &check).await.ok();
            if res.as_ref().is_some_and(|r| r.status_code() == 401) {
                return unauthorized(origin, true);
            }
            listen_stream(id, tools, res)
        }
        Reply::Call { id, tool, args, progress_token, era, retry } => {
            let told = match &era {
                mcp::Era::Stateless { client_name, .. } => client_name.as_deref(),
                mcp::Era::Session => None,
            };
            let wait_ms = mcp::clients::wait_ms(config.call_wait_ms, &[told, Some(&access.cli)]);
            let identity = input::CallIdentity { grant: &access.gid, tool: &tool, args: &args };
            let input = match retry {
                None => None,
                Some(r) => {
                    let resume = match input::resume(
                        &config.keys,
                        identity,
                        r.state.as_deref(),
                        r.responses,
                        now_ms(),
                    ) {
                        Ok(resume) => resume,
                        Err(e) => return json_response(200, &jsonrpc::error(Some(&id), &e)),
                    };
                    // A state comes back once: the pairing marks it used, or says it was.
                    if let Some(once) = &resume.once {
                        let first = match pairing() {
                            Ok(stub) => post_object(&stub, "/state", once).await.ok(),
                            Err(_) => None,
                        };
                        if first.is_none_or(|r| r.status_code() != 200) {
                            let e = input::replayed();
                            return json_response(200, &jsonrpc::error(Some(&id), &e));
                        }
                    }
                    Some(resume.for_tab())
                }
            };
            let ctx = CallContext {
                id: id.clone(),
                era,
                keys: config.keys.clone(),
                grant: access.gid.clone(),
                tool: tool.clone(),
                args: args.clone(),
            };
            let call = CallRequest {
                tool,
                args,
                agent: access.cli.clone(),
                wait_ms,
                request: request_key(&access.gid, &id),
                stream,
                connection: Connection {
                    id: access.gid,
                    kind: "connector".into(),
                    client: access.cli,
                    host: access.hst,
                },
                input,
            };
            let res = match pairing() {
                Ok(stub) => post_object(&stub, "/call", &call).await.ok(),
                Err(_) => None,
            };
            match res {
                Some(res) if res.status_code() == 401 => unauthorized(origin, true),
                Some(res) if stream => {
                    // An answer that comes at once goes as plain JSON (with its own status, so a
                    // missing capability is a 400); anything else opens the stream.
                    let mut lines = Lines::of(Some(res));
                    let first = {
                        let timer = Delay::from(Duration::from_millis(mcp::FIRST_EVENT_WAIT_MS));
                        match select(Box::pin(lines.next()), Box::pin(timer)).await {
                            Either::Left((line, _)) => Some(line),
                            Either::Right(_) => None, // nothing yet: the stream opens now
                        }
                    };
                    let done = first.as_ref().and_then(|line| match line {
                        Some(l) => match from_json(l) {
                            Some(CallEvent::Done(answer)) => Some(Some(answer)),
                            _ => None,
                        },
                        None => Some(None), // the pairing's stream ended without an answer
                    });
                    match done {
                        Some(answer) => ctx.respond(answer),
                        None => sse_answer(ctx, progress_token, first.flatten(), lines),
                    }
                }
                Some(mut res) => {
                    let answer =
                        read_json::<CallAnswer>(&res.text().await.unwrap_or_default()).ok();
                    ctx.respond(answer)
                }
                None => ctx.respond(None),
            }
        }
    }
}

/// The headers of every event stream the endpoint answers with.
fn event_stream(mut res: Response) -> Result<Response> {
    let headers = res.headers_mut();
    headers.set("content-type", "text/event-stream")?;
    headers.set("cache-control", "no-cache, no-store")?;
    headers.set("x-accel-buffering", "no")?;
    Ok(res)
}

/// The lines of a pairing's streamed answer (NDJSON), read as they come.
struct Lines {
    stream: Option<ByteStream>,
    buffer: Vec<u8>,
}

impl Lines {
    fn of(res: Option<Response>) -> Self {
        let stream = res.filter(|r| r.status_code() == 200).and_then(|mut r| r.stream().ok());
        Self { stream, buffer: Vec::new() }
    }

    /// The next line, or None once the stream ended or failed.
    async fn next(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
                line.pop();
                return Some(line);
            }
            match self.stream.as_mut()?.next().await {
                Some(Ok(chunk)) => self.buffer.extend_from_slice(&chunk),
                _ => {
                    self.stream = None;
                    return None;
                }
            }
        }
    }
}

/// `subscriptions/listen` as server-sent events: the acknowledgement first, then each change
/// the pairing reports (as asked) and keep-alives, and a complete result when it ends.
fn listen_stream(id: Id, tools: bool, res: Option<Response>) -> Result<Response> {
    let first = mcp::sse_event(&mcp::listen_acknowledged(&id, tools));
    let state = (id, Lines::of(res), Some(first), false);
    let events = futures::stream::unfold(state, move |(id, mut lines, first, done)| async move {
        if let Some(first) = first {
            return Some((Ok::<_, worker::Error>(first.into_bytes()), (id, lines, None, false)));
        }
        if done {
            return None;
        }
        let text = match lines.next().await.map(|l| ListenEvent::read(&l)) {
            Some(Some(ListenEvent::ToolsChanged)) if tools => {
                mcp::sse_event(&mcp::tools_changed(&id))
            }
            Some(_) => mcp::KEEP_ALIVE.to_owned(),
            None => {
                let end = mcp::sse_event(&mcp::listen_ended(&id));
                return Some((Ok(end.into_bytes()), (id, lines, None, true)));
            }
        };
        Some((Ok(text.into_bytes()), (id, lines, None, false)))
    });
    event_stream(Response::from_stream(events)?)
}

/// What the pairing said to a check that wants an answer.
enum Checked {
    /// The grant is gone: 401.
    Revoked,
    /// Its answer, as JSON text.
    Answer(String),
    /// No answer in time, or none that reads.
    Unknown,
}

/// Asks the pairing `check` at `path` and waits at most `wait_ms` for its answer.
async fn ask_within(stub: &Stub, path: &str, check: &CheckRequest, wait_ms: u64) -> Checked {
    let ask = async {
        let mut res = post_object(stub, path, check).await.ok()?;
        match res.status_code() {
            401 => Some(Checked::Revoked),
            200 => res.text().await.ok().map(Checked::Answer),
            _ => None,
        }
    };
    let timer = Delay::from(Duration::from_millis(wait_ms));
    match select(Box::pin(ask), Box::pin(timer)).await {
        Either::Left((Some(checked), _)) => checked,
        _ => Checked::Unknown,
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

/// What the answer to a call needs to know of it.
struct CallContext {
    id: Id,
    era: mcp::Era,
    keys: Keys,
    grant: String,
    tool: String,
    args: serde_json::Value,
}

impl CallContext {
    /// The HTTP status and JSON-RPC response to the call from the pairing's answer.
    fn answer(&self, answer: Option<CallAnswer>) -> (u16, serde_json::Value) {
        let call = input::CallIdentity { grant: &self.grant, tool: &self.tool, args: &self.args };
        mcp::call_reply(&self.id, &self.era, &self.keys, call, answer, now_ms())
    }

    fn respond(&self, answer: Option<CallAnswer>) -> Result<Response> {
        let (status, body) = self.answer(answer);
        json_response(status, &body)
    }
}

/// Where a streamed call's translation stands.
struct SseState {
    ctx: CallContext,
    progress_token: Option<serde_json::Value>,
    first: Option<Vec<u8>>,
    lines: Lines,
    progress: u64,
    done: bool,
}

/// A call answered as server-sent events: the pairing's event lines (`first`, then the rest)
/// become progress notifications (when the client sent a progress token) and keep-alive
/// comments, then the result. A stream that ends without an answer ends with the relay's
/// sentence.
fn sse_answer(
    ctx: CallContext,
    progress_token: Option<serde_json::Value>,
    first: Option<Vec<u8>>,
    lines: Lines,
) -> Result<Response> {
    let state = SseState { ctx, progress_token, first, lines, progress: 0, done: false };
    let events = futures::stream::unfold(state, |mut st| async move {
        if st.done {
            return None;
        }
        loop {
            let line = match st.first.take() {
                Some(line) => line,
                None => match st.lines.next().await {
                    Some(line) => line,
                    None => {
                        st.done = true;
                        let text = mcp::sse_event(&st.ctx.answer(None).1);
                        return Some((Ok::<_, worker::Error>(text.into_bytes()), st));
                    }
                },
            };
            let Some(event) = from_json::<CallEvent>(&line) else { continue };
            let text = match event {
                CallEvent::Done(answer) => {
                    st.done = true;
                    mcp::sse_event(&st.ctx.answer(Some(answer)).1)
                }
                CallEvent::Asking(card) => {
                    st.progress_event(&sentences::person_asked(&quoted(&card)))
                }
                CallEvent::Answered => st.progress_event(sentences::PERSON_ANSWERED),
                CallEvent::Tick => mcp::KEEP_ALIVE.to_owned(),
            };
            return Some((Ok(text.into_bytes()), st));
        }
    });
    event_stream(Response::from_stream(events)?)
}

impl SseState {
    /// A progress notification with `message`, or a keep-alive when the client asked none.
    fn progress_event(&mut self, message: &str) -> String {
        match &self.progress_token {
            Some(token) => {
                self.progress += 1;
                mcp::sse_event(&mcp::progress(token, self.progress, message))
            }
            None => mcp::KEEP_ALIVE.to_owned(),
        }
    }
}
