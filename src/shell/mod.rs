//! The thin shell: translates between workerd (requests, Durable Objects, WebSockets, time,
//! randomness) and the pure core. No decision is made here that the core could make.

mod client_metadata;
mod connect_object;
mod pairing_object;
mod routes;
mod webcrypto;

use serde::Serialize;
use worker::{Date, Headers, Request, Response, Result, Stub};

use tabrelay_bundle::fields::FromValue;
pub(crate) use tabrelay_bundle::from_json;

use crate::crypto::Entropy;

/// Random bytes from the platform (crypto.getRandomValues).
pub(crate) struct PlatformRandom;

impl Entropy for PlatformRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        // getrandom on workerd cannot fail short of a broken runtime; a panic then is right.
        getrandom::getrandom(buf).expect("the platform's random source");
    }
}

/// Milliseconds since the epoch, from the platform's clock.
pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// A JSON response with these status and extra headers; never cached.
pub(crate) fn json_response(status: u16, body: &impl Serialize) -> Result<Response> {
    let text = serde_json::to_string(body).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let headers = Headers::new();
    headers.set("content-type", "application/json")?;
    headers.set("cache-control", "no-store")?;
    Ok(Response::from_bytes(text.into_bytes())?.with_status(status).with_headers(headers))
}

/// Applies a command to a connect code's session in its Durable Object; the core's answer.
pub(crate) async fn ask_code(
    env: &worker::Env,
    code: &crate::oauth::connect::ConnectCode,
    command: crate::oauth::connect::Command,
) -> Result<serde_json::Value> {
    let stub =
        env.durable_object(routes::CONNECT_BINDING)?.id_from_name(code.as_str())?.get_stub()?;
    let envelope = serde_json::json!({"code": code.as_str(), "command": command});
    ask_object(&stub, "/command", &envelope).await
}

/// Posts a JSON body to a Durable Object and reads its JSON answer.
pub(crate) async fn ask_object<T: FromValue>(
    stub: &Stub,
    path: &str,
    body: &impl Serialize,
) -> Result<T> {
    let mut res = post_object(stub, path, body).await?;
    read_json(&res.text().await?)
}

/// Posts a JSON body to a Durable Object; its response as it comes (it may stream).
pub(crate) async fn post_object(
    stub: &Stub,
    path: &str,
    body: &impl Serialize,
) -> Result<Response> {
    let text = serde_json::to_string(body).map_err(|e| worker::Error::RustError(e.to_string()))?;
    // web_sys's RequestInit directly: worker's converts `cf` properties too (11 KB of wasm).
    let init = worker::web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&text.into());
    let req =
        worker::web_sys::Request::new_with_str_and_init(&format!("https://object{path}"), &init)?;
    stub.fetch_with_request(Request::from(req)).await
}

/// Reads a JSON body already taken as text (serde_json directly: smaller than worker's
/// JS-object route).
pub(crate) fn read_json<T: FromValue>(text: &str) -> Result<T> {
    from_json(text.as_bytes()).ok_or_else(|| worker::Error::RustError(format!("not {}", T::WHAT)))
}

/// The text in `column` of each row a query selected (read from the JS rows directly: worker's
/// typed reading through serde-wasm-bindgen costs KiBs of wasm).
pub(crate) fn texts(rows: worker::SqlCursor, column: &str) -> Vec<String> {
    let column = worker::wasm_bindgen::JsValue::from_str(column);
    rows.filter_map(|row| worker::js_sys::Reflect::get(&row.ok()?, &column).ok()?.as_string())
        .collect()
}

/// The catalogue bundled with this build, read once.
pub(crate) fn catalogue() -> &'static tabrelay_bundle::catalogue::Catalogue {
    static CATALOGUE: std::sync::OnceLock<tabrelay_bundle::catalogue::Catalogue> =
        std::sync::OnceLock::new();
    CATALOGUE.get_or_init(tabrelay_bundle::catalogue::Catalogue::bundled)
}
