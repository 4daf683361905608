//! The OAuth endpoints' I/O: reads a request into its saga ([`crate::saga`]), moves it by the
//! core's one loop ([`machine::turn`], as a [`SagaRun`]), does each step it asks (a code's
//! object, a pairing's, the sender limit, a metadata document) and writes its answer.

use worker::web_sys::{Request, Response};
use worker::Env;

use super::{
    ask_code, ask_pairing, client_metadata, failed, header, method, now_ms, read_body, respond,
    within_limit, PlatformRandom, Result,
};
use crate::config::Config;
use crate::http;
use crate::machine;
use crate::oauth::connect;
use crate::routes;
use crate::saga::{Input, OAuthRequest, Outcome, Saga, SagaRun, Step};

/// Answers the OAuth route at `url` (the router matched its method).
pub(super) async fn oauth(req: Request, url: &str, env: &Env, config: &Config) -> Result<Response> {
    let (path, origin) = (http::path_of(url), http::origin_of(url));
    let post = method(&req) == "POST";
    let body = if post { read_body(&req, routes::body_cap(path)).await? } else { Ok(Vec::new()) };
    let (accept, cookies) = (header(&req, "accept"), header(&req, "cookie"));
    let request = OAuthRequest {
        path,
        query: http::query_of(url),
        body,
        accept: accept.as_deref(),
        cookies: cookies.as_deref(),
        place: place_of(&req, origin),
    };
    // The saga's clock is its start's: each turn is given that `now`.
    let now = now_ms();
    let Some(start) = Saga::start(config, origin, request, now, &mut PlatformRandom) else {
        return respond(http::Answer::not_found());
    };
    let (mut saga, mut input) = (SagaRun::new(start), None);
    loop {
        // A saga says one step a turn, the first before any input.
        let mut step = Step::Respond(Outcome::Broken);
        machine::turn(&mut saga, input, now, &mut PlatformRandom, |said| {
            // What it replaces is the placeholder, which holds nothing: not dropped (no drop
            // glue for a step in the Worker).
            core::mem::forget(core::mem::replace(&mut step, said));
        });
        input = Some(match step {
            Step::Respond(answer) => {
                let unanswered = || Err(failed("a reply that does not answer"));
                return answer.http().map_or_else(unanswered, respond);
            }
            Step::AskLimit(limited) => Input::Limit(within_limit(env, &req, limited).await),
            // Boxed: the fetch's states stay out of the Worker's fetch machine (0.2 KiB).
            Step::FetchClient { url, fetch } => {
                Input::Client(Box::pin(client_metadata::client(&url, origin, fetch)).await)
            }
            Step::AskCode(code, command) => Input::Code(ask_code(env, &code, command).await?),
            Step::AskPairing(pairing, ask) => {
                Input::Pairing(ask_pairing(env, &pairing, &ask).await?.next().await)
            }
        });
    }
}

/// Where the request came from, as the platform says (its `cf` data on Cloudflare; not
/// known under `wrangler dev`): "City, CC", or None.
fn place_of(req: &Request, origin: &str) -> Option<String> {
    use worker::js_sys::Reflect;
    let cf = Reflect::get(req, &"cf".into()).ok().filter(|v| v.is_object())?;
    let field = |k: &str| Reflect::get(&cf, &k.into()).ok().and_then(|v| v.as_string());
    connect::place_said(origin, field("city").as_deref(), field("country").as_deref())
}
