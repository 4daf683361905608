//! The Worker's routes: each reads the request into values, asks the core, and writes the
//! answer back.

use wasm_bindgen::{prelude::wasm_bindgen, JsCast as _};
use worker::js_sys::Promise;
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::{self, Request, Response};
use worker::Env;

use super::authorize;
use super::drive::drive;
use super::{
    bytes_response, catalogue, header, header_lines, method, now_ms, pass_object, promise,
    refuse_socket, respond, set_headers, within_limit, Result,
};
use crate::config::Config;
use crate::http::{self, HeaderLines};
use crate::mcp::exchange::{Exchange, RequestHeaders};
use crate::oauth::token::Verified;
use crate::pairing::tabs::TOO_MANY_OPENED;
use crate::pairing::{tab_socket, SocketRefused};
use crate::routes::{self, Route};
use crate::senders::{Limit, Limited};

// The Durable Object bindings (wrangler.toml).
pub(crate) const PAIRING_BINDING: &str = "PAIRING";
pub(crate) const CONNECT_BINDING: &str = "CONNECT";

pub(crate) fn config(env: &Env) -> std::result::Result<Config, String> {
    // Secrets and vars are both strings in `env`, read as such (worker's typed getters, which
    // check each binding's constructor name, cost half a KiB of upload).
    Config::from_env(|name| worker::js_sys::Reflect::get(env, &name.into()).ok()?.as_string())
}

/// The configuration, read once per isolate: the vars and secrets of a deployment do not
/// change under a running isolate (a new deployment starts new ones). A misconfiguration is
/// not kept, so it is read (and logged) again on the next request.
static CONFIG: std::sync::OnceLock<Config> = std::sync::OnceLock::new();

/// The configuration kept for this isolate, read at its start; and, said once then, which
/// rate-limiting bindings the deployment lacks (what they limit is refused meanwhile).
fn started(env: &Env, config: Config) -> &'static Config {
    super::say_unbound(env, crate::senders::BINDINGS, crate::sentences::shell::LIMIT_UNBOUND);
    CONFIG.get_or_init(|| config)
}

thread_local! {
    /// The access tokens this isolate verified last (one isolate serves many requests).
    static TOKENS: Verified = const { Verified::new() };
}

/// The Worker's fetch handler as workerd calls it, bound as the objects' methods are (one
/// future type for every export: see [`promise`]). An error is logged and answered with a
/// 500, as worker's `#[event(fetch)]` did.
#[wasm_bindgen(js_name = fetch)]
pub fn fetch_export(req: web_sys::Request, env: Env) -> Promise {
    promise(Box::pin(async move {
        let res = fetch(req, env).await.unwrap_or_else(|e| {
            web_sys::console::error_1(&e);
            bytes_response(500, crate::sentences::shell::INTERNAL.as_bytes())
        });
        Ok(res.into())
    }))
}

async fn fetch(req: Request, env: Env) -> Result<Response> {
    console_error_panic_hook::set_once();
    let read = CONFIG.get().map_or_else(|| config(&env).map(|c| started(&env, c)), Ok);
    let config = match read {
        Ok(c) => c,
        Err(why) => {
            worker::console_error!("tabrelay is misconfigured: {why}");
            return Ok(bytes_response(500, crate::sentences::shell::MISCONFIGURED.as_bytes()));
        }
    };
    let (url, lines, method) = (req.url(), header_lines(&req), method(&req));
    let (path, origin, headers) = (http::path_of(&url), http::origin_of(&url), HeaderLines(&lines));
    // A browser's preflight to the endpoint names the Mcp-Param-* headers its call will send.
    let cors = routes::cors_headers(path, method, headers.get("access-control-request-headers"));
    let resume = headers.get("last-event-id").is_some();
    let route = routes::route(method, path, headers.get("accept"), resume);
    let res = match (route.answer(config, origin), route) {
        (Some(answer), _) => respond(answer)?,
        (None, Route::Tab) => tab(req, &url, &env, config).await?,
        // The MCP endpoint (a POST, or a GET taking up a dropped stream) as its exchange says.
        (None, Route::Mcp { resume }) => {
            let (now, catalogue, headers) = (now_ms(), catalogue(), RequestHeaders::read(headers));
            let start = |t: &_| Exchange::begin(headers, resume, t, config, catalogue, origin, now);
            drive(TOKENS.with(start), req, env.clone()).await?
        }
        // The OAuth endpoints (every other route was answered above).
        (None, _) => authorize::oauth(req, &url, &env, config).await?,
    };
    set_headers(&res, &cors)?;
    Ok(res)
}

async fn tab(req: Request, url: &str, env: &Env, config: &Config) -> Result<Response> {
    let (upgrade, origin) = (header(&req, "upgrade"), header(&req, "origin"));
    // The socket names the pairing id (tokens carry it too, so it opens nothing by itself): the
    // hello brings the public key it derives from, and the key's signature proves it. The key
    // stays out of the address, which request logs keep.
    let query = http::query_of(url);
    let pairing = match tab_socket(upgrade.as_deref(), origin.as_deref(), config, &query) {
        Ok(pairing) => pairing,
        Err(SocketRefused::Plain(answer)) => return respond(answer),
        Err(SocketRefused::Closed((code, reason))) => return Ok(refuse_socket(code, reason)),
    };
    if within_limit(env, &req, Limited::Tab).await != Limit::Within {
        return Ok(refuse_socket(TOO_MANY_OPENED.0, TOO_MANY_OPENED.1));
    }
    JsFuture::from(pass_object(env, PAIRING_BINDING, &pairing, &req)).await?.dyn_into()
}
