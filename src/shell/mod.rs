//! The thin shell: translates between workerd (requests, Durable Objects, WebSockets, time,
//! randomness) and the pure core. No decision is made here that the core could make.

mod authorize;
mod client_metadata;
mod connect_object;
mod drive;
mod pairing_object;
mod routes;
mod webcrypto;

use futures::future::LocalBoxFuture;
use futures::StreamExt as _;
use tabrelay_bundle::fields::Message as _;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsValue;
use worker::js_sys::Promise;
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::{self, Request};
use worker::worker_sys::DurableObjectState;
use worker::{ByteStream, Date, Env, Headers, Response, ResponseBody, Result};

pub(crate) use tabrelay_bundle::from_json;

use crate::crypto::Entropy;
use crate::http::{self, CappedBody, TooLarge};
use crate::oauth::connect::{CodeReply, CodeRequest, Command, ConnectCode};
use crate::pairing::object::ReplyLines;
use crate::pairing::wire::{Reply, Request as PairingRequest};
use crate::senders::{sender_key, Limited};
use crate::sql::{Bind, Failed, Rows, Sql};

/// Random bytes from the platform (crypto.getRandomValues).
pub(crate) struct PlatformRandom;

impl Entropy for PlatformRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        // getrandom on workerd cannot fail short of a broken runtime; a panic then is right
        // (without getrandom's error in its message: its Debug holds every platform's text).
        assert!(getrandom::getrandom(buf).is_ok(), "the platform's random source failed");
    }
}

/// The longest a platform timer waits: setTimeout takes a signed 32-bit count of
/// milliseconds (worker's `Delay` casts to it), so a longer one would fire at once.
const LONGEST_SLEEP_MS: u64 = i32::MAX as u64;

/// A timer of `ms` milliseconds (at most [`LONGEST_SLEEP_MS`], about 24 days).
pub(crate) fn sleep(ms: u64) -> worker::Delay {
    worker::Delay::from(std::time::Duration::from_millis(ms.min(LONGEST_SLEEP_MS)))
}

/// Milliseconds since the epoch, from the platform's clock.
pub(crate) fn now_ms() -> u64 {
    Date::now().as_millis()
}

/// Writes an answer the core made, with every header it carries and no other.
pub(crate) fn respond(answer: http::Answer) -> Result<Response> {
    let headers = Headers::new();
    for (name, value) in &answer.headers {
        headers.set(name, value)?;
    }
    let body = answer.body.map_or(ResponseBody::Empty, ResponseBody::Body);
    Ok(Response::from_body(body)?.with_status(answer.status).with_headers(headers))
}

/// A Durable Object method's outcome as the promise workerd awaits. Every method of both
/// objects hands its work here as one boxed future type, so the export machinery
/// (future_to_promise, its task and closures) is in the wasm once, not once per method. A failure
/// rejects as worker's `JsValue::from` has it, but without the `source` chain (3 KiB of Debug).
pub(crate) fn promise(work: LocalBoxFuture<'static, Result<JsValue>>) -> Promise {
    use worker::Error::{Internal, JsError, UnknownJsError};
    let work = async move {
        work.await.map_err(|e| match e {
            UnknownJsError { original, .. } | Internal(original) => original,
            JsError(s) => s.into(),
            e => worker::js_sys::Error::new(&e.to_string()).into(),
        })
    };
    worker::wasm_bindgen_futures::future_to_promise(work)
}

/// A response as workerd takes it.
pub(crate) fn response_value(res: Response) -> JsValue {
    worker::web_sys::Response::from(res).into()
}

/// What a streamed response's body is read from, one chunk at a time.
pub(crate) trait Chunks {
    /// The next chunk; None ends the body.
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Vec<u8>>>;
}

/// A response whose body is the chunks of `source`, sent as they come (one stream type for
/// every such response, so the stream glue is built once).
pub(crate) fn stream_response(
    source: Box<dyn Chunks>,
    headers: &[(&str, &str)],
) -> Result<Response> {
    let chunks = futures::stream::unfold(source, |mut source| async move {
        let chunk = source.next_chunk().await?;
        Some((Ok(worker::js_sys::Uint8Array::new_from_slice(&chunk).into()), source))
    });
    // Not worker's `from_stream`: its unwrap of the stream's type links `ReadableStream`'s Debug.
    let body = wasm_streams::ReadableStream::from_stream(chunks).into_raw();
    with_headers(Response::from_body(ResponseBody::Stream(body))?, headers)
}

/// `res` with `headers` set.
pub(crate) fn with_headers(mut res: Response, headers: &[(&str, &str)]) -> Result<Response> {
    for (name, value) in headers {
        res.headers_mut().set(name, value)?;
    }
    Ok(res)
}

/// Applies a command to a connect code's session in its Durable Object; its reply.
pub(crate) async fn ask_code(env: &Env, code: &ConnectCode, command: Command) -> Result<CodeReply> {
    let request = CodeRequest { code: code.as_str().to_owned(), command };
    let read = post_object_read(env, routes::CONNECT_BINDING, code.as_str(), request.encode());
    let body = worker::js_sys::Uint8Array::new(&JsFuture::from(read).await?).to_vec();
    CodeReply::decode(&body).map_err(|e| worker::Error::RustError(format!("{e}")))
}

/// Sends a request to a pairing's object: its reply lines, read as they come (one, or a
/// stream of them).
pub(crate) async fn ask_pairing(
    env: &Env,
    pairing: &str,
    request: &PairingRequest,
) -> Result<Replies> {
    let promise = post_object(env, routes::PAIRING_BINDING, pairing, request.encode());
    Ok(Replies::of(object_response(promise).await?))
}

/// Passes a request on to the Durable Object `name` of `binding` (a tab's socket to its
/// pairing); its response.
pub(crate) fn pass_to_object(
    env: &Env,
    binding: &str,
    name: &str,
    req: &Request,
) -> impl std::future::Future<Output = Result<web_sys::Response>> {
    object_response(pass_object(env, binding, name, req))
}

/// A Durable Object's response, once its promise settles.
async fn object_response(promise: Promise) -> Result<web_sys::Response> {
    use worker::wasm_bindgen::JsCast as _;
    Ok(JsFuture::from(promise).await?.dyn_into()?)
}

/// The reply lines of a pairing's object (NDJSON), read as they come.
pub(crate) struct Replies {
    stream: Option<ByteStream>,
    lines: ReplyLines,
}

impl Replies {
    /// No replies (the pairing could not be asked): the first `next` is None.
    pub(crate) fn none() -> Self {
        Self { stream: None, lines: ReplyLines::default() }
    }

    fn of(res: web_sys::Response) -> Self {
        let stream = (res.status() == 200).then(|| res.body()).flatten().map(ByteStream::from);
        Self { stream, lines: ReplyLines::default() }
    }

    /// The next reply, or None once the stream ended or failed (a line that does not read
    /// is skipped).
    pub(crate) async fn next(&mut self) -> Option<Reply> {
        loop {
            if let Some(reply) = self.lines.next_reply() {
                return Some(reply);
            }
            match self.stream.as_mut()?.next().await {
                Some(Ok(chunk)) => self.lines.push(&chunk),
                _ => {
                    self.stream = None;
                    return None;
                }
            }
        }
    }
}

// The platform's request is read as it is (worker's Request, made of it for each request,
// reads its method, path and `cf` data up front: a KiB of wasm the relay does not use).

/// A request's header `name`, if it has one (it always reads: the names asked are valid).
pub(crate) fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// A request's method, as the core names it ([`http::method`]).
pub(crate) fn method(req: &Request) -> &'static str {
    http::method(&req.method())
}

/// A request's whole body.
pub(crate) async fn body_bytes(req: &Request) -> Result<Vec<u8>> {
    let body = JsFuture::from(req.array_buffer()?).await?;
    Ok(worker::js_sys::Uint8Array::new(&body).to_vec())
}

/// A request's body, read with `cap` ([`CappedBody`]): refused by its `Content-Length` before
/// anything is read, and as soon as what arrives passes the cap, so no more is ever held.
pub(crate) async fn read_body(req: &Request, cap: usize) -> Result<Result<Vec<u8>, TooLarge>> {
    let length = header(req, "content-length");
    let mut body = match CappedBody::start(cap, length.as_deref()) {
        Ok(body) => body,
        Err(too_large) => return Ok(Err(too_large)),
    };
    // No body at all reads as an empty one.
    let Some(mut stream) = req.body().map(ByteStream::from) else { return Ok(Ok(Vec::new())) };
    while let Some(chunk) = stream.next().await {
        if let Err(too_large) = body.take(&chunk?) {
            return Ok(Err(too_large));
        }
    }
    Ok(Ok(body.into_bytes()))
}

/// Whether the sender of `req` is still within its limit of `limited` (the platform's
/// rate-limiting binding, keyed by [`sender_key`]); each ask counts. A binding that is missing
/// or fails lets the request through, and says so in the log: the limit bounds cost, and
/// the relay stays usable without it.
pub(crate) async fn within_limit(env: &Env, req: &Request, limited: Limited) -> bool {
    let ip = header(req, "cf-connecting-ip");
    let asked = ask_limit(env, limited.binding(), &sender_key(ip.as_deref()));
    match JsFuture::from(asked).await.ok().and_then(|v| v.as_bool()) {
        Some(within) => within,
        None => {
            worker::console_error!(
                "the rate-limiting binding {} is missing or failed",
                limited.binding()
            );
            true
        }
    }
}

/// A Durable Object's SQL storage (reached through its state), as the core runs statements
/// on it.
pub(crate) struct Sqlite<'a>(pub(crate) &'a DurableObjectState);

impl Sql for Sqlite<'_> {
    fn exec(&mut self, query: &str, bindings: Vec<Bind>) -> std::result::Result<Rows, Failed> {
        let bindings = bindings.into_iter().map(|b| match b {
            Bind::Text(text) => JsValue::from(text),
            Bind::Int(n) => JsValue::from(n as f64),
        });
        let rows = sql_rows(self.0, query, bindings.collect()).map_err(|_| Failed)?;
        let text = |v: JsValue| v.as_string();
        Ok(rows
            .iter()
            .map(|row| worker::js_sys::Array::from(row).iter().map(text).collect())
            .collect())
    }
}

/// Sets the object's alarm to `at_ms` (since the epoch), once awaited.
pub(crate) fn set_alarm(state: &DurableObjectState, at_ms: u64) -> JsFuture {
    JsFuture::from(set_alarm_at(state, at_ms as f64))
}

/// The catalogue bundled with this build, read once.
pub(crate) fn catalogue() -> &'static tabrelay_bundle::catalogue::Catalogue {
    static CATALOGUE: std::sync::OnceLock<tabrelay_bundle::catalogue::Catalogue> =
        std::sync::OnceLock::new();
    CATALOGUE.get_or_init(tabrelay_bundle::catalogue::Catalogue::bundled)
}

// The platform's APIs the shell uses, in a few lines of JavaScript (platform.js): worker's
// wrappers of them cost KiBs of wasm.
#[wasm_bindgen(module = "/src/shell/platform.js")]
extern "C" {
    /// Posts `body` to the Durable Object `name` of `binding`: its response (it may stream).
    #[wasm_bindgen(js_name = postObject)]
    fn post_object(env: &Env, binding: &str, name: &str, body: Vec<u8>) -> Promise;

    /// Posts `body` to the Durable Object `name` of `binding`: its response's body, whole.
    #[wasm_bindgen(js_name = postObjectRead)]
    fn post_object_read(env: &Env, binding: &str, name: &str, body: Vec<u8>) -> Promise;

    /// Passes `request` on to the Durable Object `name` of `binding`: its response.
    #[wasm_bindgen(js_name = passObject)]
    fn pass_object(env: &Env, binding: &str, name: &str, request: &Request) -> Promise;

    /// The rate-limiting binding `binding`'s answer for `key`: whether it is within its limit;
    /// undefined when the binding is missing or fails.
    #[wasm_bindgen(js_name = askLimit)]
    fn ask_limit(env: &Env, binding: &str, key: &str) -> Promise;

    /// The rows of a statement run on the object's SQL storage, each its values in order.
    #[wasm_bindgen(js_name = sqlRows, catch)]
    fn sql_rows(
        state: &DurableObjectState,
        query: &str,
        bindings: Vec<JsValue>,
    ) -> std::result::Result<Vec<JsValue>, JsValue>;

    /// Sets the object's alarm to `at` (milliseconds since the epoch).
    #[wasm_bindgen(js_name = setAlarm)]
    fn set_alarm_at(state: &DurableObjectState, at: f64) -> Promise;

    /// Deletes everything the object stored.
    #[wasm_bindgen(js_name = deleteAll)]
    pub(crate) fn delete_all(state: &DurableObjectState) -> Promise;
}
