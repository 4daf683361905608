//! The OAuth endpoints' I/O: reads a request into its saga ([`crate::oauth::saga`]), does each
//! step it asks (a code's object, a pairing's, the sender limit, a metadata document) and
//! writes its answer.

use tabrelay_bundle::fields::Encode;
use worker::{Env, Headers, Request, Response, Result};

use super::routes::{html, PAIRING_BINDING};
use super::{
    ask_code, ask_pairing_once, client_metadata, json_response, json_text_response, now_ms,
    read_body, within_limit, PlatformRandom,
};
use crate::config::Config;
use crate::http;
use crate::oauth::connect;
use crate::oauth::error::OAuthError;
use crate::oauth::saga::{Answer, FromPairing, Input, Saga, Step, ToPairing};
use crate::pairing::wire::{GrantReply, GrantRequest, RefreshReply, Reply, Request as Ask};

/// Answers the OAuth route `path` (the router matched its method).
pub(super) async fn endpoint(
    mut req: Request,
    path: &str,
    url: &str,
    env: &Env,
    config: &Config,
    origin: &str,
) -> Result<Response> {
    let (post, query) = (req.method() == worker::Method::Post, http::query_of(url));
    let cookies = req.headers().get("cookie")?;
    let body = if post { read_body(&mut req, http::body_cap(path)).await? } else { Ok(Vec::new()) };
    let now = now_ms();
    let (mut saga, mut step) = match path {
        "/register" => Saga::register(config, body, now, &mut PlatformRandom),
        "/token" => Saga::token(config, origin, body, now, &mut PlatformRandom),
        "/revoke" => Saga::revoke(config, origin, body, now),
        crate::pages::CODE_PATH => Saga::draw(config, origin, body, place_of(&req, origin), now),
        crate::pages::STATUS_PATH => Saga::status(config, origin, &query, cookies.as_deref()),
        "/authorize" => {
            let accept = req.headers().get("accept")?;
            Saga::authorize(config, origin, query, accept.as_deref(), now)
        }
        tabrelay_bundle::protocol::CONFIRM_PATH => {
            Saga::confirm(config, &query, cookies.as_deref())
        }
        _ => return Response::error("Not found.", 404),
    };
    loop {
        let input = match step {
            Step::Respond(answer) => return respond(answer),
            Step::AskLimit(limited) => Input::Limit(within_limit(env, &req, limited).await),
            Step::FetchClient(url) => Input::Client(client_metadata::client(&url, origin).await),
            Step::AskCode(code, command) => Input::Code(ask_code(env, &code, command).await?),
            Step::AskPairing(pairing, ask) => {
                let stub =
                    env.durable_object(PAIRING_BINDING)?.id_from_name(&pairing)?.get_stub()?;
                Input::Pairing(ask_pairing_once(&stub, &to_wire(ask)).await?.map(from_wire))
            }
        };
        step = saga.next(input, &mut PlatformRandom);
    }
}

fn to_wire(ask: ToPairing) -> Ask {
    match ask {
        ToPairing::Grant { id, client_id, granted } => {
            Ask::Grant(GrantRequest { id, client_id, requester: granted.requester })
        }
        ToPairing::Replayed { grant } => Ask::Replayed { grant },
        ToPairing::Refresh(request) => Ask::Refresh(request),
        ToPairing::Revoke(request) => Ask::Revoke(request),
    }
}

fn from_wire(reply: Reply) -> FromPairing {
    match reply {
        Reply::Grant(GrantReply::Made { grant, secret }) => FromPairing::Made { grant, secret },
        Reply::Grant(GrantReply::Full) => FromPairing::Full,
        Reply::Grant(GrantReply::Replayed) => FromPairing::Replayed,
        Reply::Refresh(RefreshReply::Rotated { secret, client_name, host }) => {
            FromPairing::Rotated { secret, client_name, host }
        }
        Reply::Refresh(RefreshReply::Refused { description }) => FromPairing::Refused(description),
        _ => FromPairing::Other,
    }
}

fn respond(answer: Answer) -> Result<Response> {
    match answer {
        Answer::Json { status, body, cookie } => {
            let mut res = json_response(status, &body)?;
            if let Some(cookie) = cookie {
                res.headers_mut().set("set-cookie", &cookie)?;
            }
            Ok(res)
        }
        Answer::Poll { status, state } => json_text_response(status, Encode::to_json(&state)),
        Answer::Error(e) => oauth_error(&e),
        Answer::Page { status, html: page } => html(status, page),
        Answer::Redirect(to) => {
            let headers = Headers::new();
            headers.set("location", &to)?;
            headers.set("cache-control", "no-store")?;
            Ok(Response::empty()?.with_status(302).with_headers(headers))
        }
        Answer::Empty => Ok(Response::empty()?.with_status(200)),
        Answer::Broken => Err(worker::Error::RustError("a reply that does not answer".into())),
    }
}

fn oauth_error(e: &OAuthError) -> Result<Response> {
    let mut res = json_response(e.status, &e.body())?;
    if let Some(challenge) = e.challenge() {
        res.headers_mut().set("www-authenticate", challenge)?;
    }
    Ok(res)
}

/// Where the request came from, as the platform says (its `cf` data on Cloudflare; not
/// known under `wrangler dev`): "City, CC", or None.
fn place_of(req: &Request, origin: &str) -> Option<String> {
    use worker::js_sys::Reflect;
    let cf = Reflect::get(req.inner(), &"cf".into()).ok().filter(|v| v.is_object())?;
    let field = |k: &str| Reflect::get(&cf, &k.into()).ok().and_then(|v| v.as_string());
    connect::place_said(origin, field("city").as_deref(), field("country").as_deref())
}
