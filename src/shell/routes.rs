//! The Worker's routes: each reads the request into values, asks the core, and writes the
//! answer back.

use serde_json::json;
use tabrelay_bundle::protocol::close;
use worker::{
    console_error, event, Context, Env, Headers, Method, Request, Response, Result, WebSocketPair,
};

use super::authorize;
use super::drive::drive;
use super::{catalogue, json_response, now_ms, within_limit};
use crate::config::Config;
use crate::http;
use crate::mcp::exchange::{preflight_headers, Exchange, RequestHeaders};
use crate::oauth::metadata;
use crate::pages;
use crate::pairing::socket_pairing;
use crate::senders::Limited;
use crate::sentences;

/// The Durable Object binding of the pairings.
pub(crate) const PAIRING_BINDING: &str = "PAIRING";
/// The Durable Object binding of the connect codes.
pub(crate) const CONNECT_BINDING: &str = "CONNECT";

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
    console_error_panic_hook::set_once();
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
    // A browser's preflight to the endpoint names the Mcp-Param-* headers its call will send.
    let preflight = (req.method() == Method::Options && path == "/")
        .then(|| req.headers().get("access-control-request-headers").ok().flatten());
    let mut res = route(req, &url, &path, &env, config).await?;
    if http::is_cors_path(&path) {
        for (k, v) in http::CORS_HEADERS {
            res.headers_mut().set(k, v)?;
        }
        if let Some(requested) = preflight {
            let allowed = preflight_headers(requested.as_deref());
            res.headers_mut().set("access-control-allow-headers", &allowed)?;
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
    config: &'static Config,
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
        (Method::Post, "/register" | "/token" | "/revoke" | pages::CODE_PATH)
        | (
            Method::Get,
            "/authorize" | pages::STATUS_PATH | tabrelay_bundle::protocol::CONFIRM_PATH,
        ) => authorize::endpoint(req, path, url, env, config, &origin).await,
        (Method::Get, pages::WAIT_SCRIPT_PATH) => {
            let headers = Headers::new();
            headers.set("content-type", "text/javascript")?;
            headers.set("cache-control", "no-store")?;
            Ok(Response::ok(pages::WAIT_SCRIPT)?.with_headers(headers))
        }
        (Method::Get, "/tab") => tab(req, url, env, config).await,
        (Method::Post, "/") => mcp_endpoint(req, env, config, &origin, false).await,
        // A client whose call's stream dropped comes back for the rest of it (2025-11-25).
        (Method::Get, "/") if req.headers().has("last-event-id")? => {
            mcp_endpoint(req, env, config, &origin, true).await
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

pub(super) fn html(status: u16, page: String) -> Result<Response> {
    let headers = Headers::new();
    headers.set("content-type", "text/html; charset=utf-8")?;
    headers.set("cache-control", "no-store")?;
    headers.set("content-security-policy", pages::PAGE_CSP)?;
    headers.set("x-frame-options", "DENY")?;
    headers.set("referrer-policy", "no-referrer")?;
    Ok(Response::from_html(page)?.with_status(status).with_headers(headers))
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

/// Accepts a socket only to close it with a code and reason (a browser shows nothing else).
pub(super) fn refuse_socket(code: u16, reason: &str) -> Result<Response> {
    let pair = WebSocketPair::new()?;
    pair.server.accept()?;
    pair.server.close(Some(code), Some(reason))?;
    Response::from_websocket(pair.client)
}

/// The MCP endpoint (a POST, or a GET taking up a dropped stream) as its exchange says.
async fn mcp_endpoint(
    req: Request,
    env: &Env,
    config: &'static Config,
    origin: &str,
    resume: bool,
) -> Result<Response> {
    let h = req.headers();
    let headers = RequestHeaders::read(|name| h.get(name).ok().flatten(), || h.entries().collect());
    let (now, catalogue) = (now_ms(), catalogue());
    let exchange = match resume {
        true => Exchange::resume(headers, config, catalogue, origin, now),
        false => Exchange::post(headers, config, catalogue, origin, now),
    };
    drive(exchange, req, env.durable_object(PAIRING_BINDING)?).await
}
