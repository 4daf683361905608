//! Fetches a client id metadata document for the core to check: within [`FETCH_TIMEOUT_MS`], no
//! redirect followed, its status, length and body judged by the core as they come (`cimd`); the
//! checked client is kept in the Workers cache for the time the core says. Why a fetch failed is
//! logged, never told to the requester (the core's sentence is the same for every failure).

use worker::wasm_bindgen::JsCast as _;
use worker::wasm_bindgen_futures::JsFuture;
use worker::{console_log, web_sys};

use super::{cached_text, fetch_document, keep};

use crate::limits::FETCH_TIMEOUT_MS;
use crate::oauth::cimd::{
    cache_entry, cache_key, check_document, check_response, CimdError, MetadataClient, MetadataUrl,
};

/// The client a metadata document URL names (one the core found fetchable): from the cache
/// (under the core's [`cache_key`]), else, when `fetch` (the sender's limit allowed it),
/// fetched, checked and kept; else [`CimdError::NotKept`].
pub(crate) async fn client(
    url: &MetadataUrl,
    origin: &str,
    fetch: bool,
) -> Result<MetadataClient, CimdError> {
    let key = cache_key(origin, url);
    let hit = JsFuture::from(cached_text(&key)).await.ok().and_then(|hit| hit.as_string());
    if let Some(client) = hit.and_then(|text| super::from_json(text.as_bytes())) {
        return Ok(client);
    }
    if !fetch {
        return Err(CimdError::NotKept);
    }
    let (client, seconds) = fetch_checked(url).await.inspect_err(|e| {
        if let Some(detail) = e.detail() {
            // The document's URL is the client's public id: no secret in this line.
            console_log!("client metadata from {} not read: {detail}", url.domain());
        }
    })?;
    // A failure to cache costs only a fetch next time.
    if let Some(Ok(entry)) = cache_entry(&client, seconds).map(super::respond) {
        let _ = JsFuture::from(keep(&key, &entry)).await;
    }
    Ok(client)
}

/// Fetches and checks the document within [`FETCH_TIMEOUT_MS`] (the platform's timeout signal cuts
/// off the fetch and the body's reading alike); the client and how long to keep it.
async fn fetch_checked(url: &MetadataUrl) -> Result<(MetadataClient, u64), CimdError> {
    let signal = web_sys::AbortSignal::timeout_with_u32(FETCH_TIMEOUT_MS as u32);
    let failed = |_| if signal.aborted() { CimdError::TooSlow } else { CimdError::Unreachable };
    let res = JsFuture::from(fetch_document(url.as_str(), &signal)).await;
    let res: web_sys::Response = res.and_then(|r| r.dyn_into()).map_err(failed)?;
    let header = |name: &str| res.headers().get(name).ok().flatten();
    let (length, cache) = (header("content-length"), header("cache-control"));
    let (mut body, seconds) = check_response(res.status(), length.as_deref(), cache.as_deref())?;
    // The body, read until it passes the cap (then refused, and the rest cut off unread).
    let mut reader = super::Reader::of(res.body());
    while let Some(chunk) = reader.next().await.map_err(failed)? {
        body.take(&chunk).map_err(|_| CimdError::TooLarge)?;
    }
    Ok((check_document(url, &body.into_bytes())?, seconds))
}
