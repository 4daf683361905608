//! Fetches a client id metadata document for the core to check: within 5 s, no redirect
//! followed, its status, length and body judged by the core as they come (`cimd`); the checked
//! client is kept in the Workers cache for the time the core says. Why a fetch failed is
//! logged, never told to the requester (the core's sentence is the same for every failure).

use core::time::Duration;

use futures::future::{select, Either};
use futures::StreamExt as _;
use worker::wasm_bindgen::JsCast as _;
use worker::{console_log, js_sys, web_sys, AbortController, Cache, Delay, Headers, Response};

use crate::limits::FETCH_TIMEOUT_MS;
use crate::oauth::cimd::{
    cache_key, check_document, check_response, CimdError, MetadataClient, MetadataUrl,
};

/// The client a metadata document URL names (one the core found fetchable): from the cache
/// (under the core's [`cache_key`]), else fetched and checked.
pub(crate) async fn client(url: &MetadataUrl, origin: &str) -> Result<MetadataClient, CimdError> {
    let key = cache_key(origin, url);
    let cache = Cache::default();
    if let Ok(Some(mut hit)) = cache.get(key.as_str(), false).await {
        if let Ok(Some(client)) =
            hit.text().await.map(|t| super::from_json::<MetadataClient>(t.as_bytes()))
        {
            return Ok(client);
        }
    }
    let (client, seconds) = fetch_checked(url).await.inspect_err(|e| {
        if let Some(detail) = e.detail() {
            // The document's URL is the client's public id: no secret in this line.
            console_log!("client metadata from {} not read: {detail}", url.domain());
        }
    })?;
    // A failure to cache costs only a fetch next time.
    if let Ok(entry) = cache_entry(&client, seconds) {
        let _ = cache.put(key.as_str(), entry).await;
    }
    Ok(client)
}

fn cache_entry(client: &MetadataClient, seconds: u64) -> worker::Result<Response> {
    let body = tabrelay_bundle::fields::json_text(client);
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set("cache-control", &format!("max-age={seconds}"))?;
    Ok(Response::ok(body)?.with_headers(headers))
}

/// Fetches and checks the document, racing a 5 s timer; the client and how long to keep it.
async fn fetch_checked(url: &MetadataUrl) -> Result<(MetadataClient, u64), CimdError> {
    let controller = AbortController::default();
    let signal = controller.signal();
    let work = async {
        let mut res = fetch(url.as_str(), &signal).await?;
        let header = |name: &str| res.headers().get(name).ok().flatten();
        let (length, cache) = (header("content-length"), header("cache-control"));
        let (mut body, seconds) =
            check_response(res.status_code(), length.as_deref(), cache.as_deref())?;
        // The body, read until it passes the cap (then refused without reading on).
        if let Ok(mut stream) = res.stream() {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|_| CimdError::Unreachable)?;
                body.take(&chunk).map_err(|_| CimdError::TooLarge)?;
            }
        }
        Ok((check_document(url, &body.into_bytes())?, seconds))
    };
    let timer = Delay::from(Duration::from_millis(FETCH_TIMEOUT_MS));
    futures::pin_mut!(work);
    let outcome = match select(work, timer).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(CimdError::TooSlow),
    };
    // Nothing more is read either way: a slow fetch or a body refused half-read is cut off.
    controller.abort();
    outcome
}

/// A GET that does not follow redirects (a redirect could lead anywhere the URL rules refuse).
async fn fetch(url: &str, signal: &worker::AbortSignal) -> Result<Response, CimdError> {
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_redirect(web_sys::RequestRedirect::Manual);
    init.set_signal(Some(signal));
    let headers = web_sys::Headers::new().map_err(|_| CimdError::Unreachable)?;
    headers.set("accept", "application/json").map_err(|_| CimdError::Unreachable)?;
    init.set_headers(&headers);
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let promise = global.fetch_with_str_and_init(url, &init);
    let res = worker::wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(|_| CimdError::Unreachable)?;
    let res: web_sys::Response = res.dyn_into().map_err(|_| CimdError::Unreachable)?;
    Ok(Response::from(res))
}
