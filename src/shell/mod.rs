//! The thin shell: translates between workerd (requests, Durable Objects, WebSockets, time,
//! randomness) and the pure core. No decision is made here that the core could make.

mod authorize;
mod client_metadata;
mod connect_object;
mod drive;
mod pairing_object;
mod routes;

use std::cell::Cell;
use std::rc::Rc;

use futures::future::{abortable, AbortHandle, LocalBoxFuture};
use tabrelay_bundle::fields::Message as _;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use worker::js_sys::{Array, Promise, Uint8Array};
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::{self, Request, Response};
use worker::worker_sys::DurableObjectState;
use worker::Env;

use tabrelay_bundle::from_json;

use crate::crypto::Entropy;
use crate::http::{self, CappedBody, TooLarge};
use crate::oauth::connect::{CodeReply, CodeRequest, Command, ConnectCode};
use crate::pairing::object::ReplyLines;
use crate::pairing::wire::{Reply, Request as PairingRequest};
use crate::senders::{sender_key, Limit, Limited};
use crate::sql::{Bind, Failed, Rows, Sql};

/// Random bytes from the platform (crypto.getRandomValues).
struct PlatformRandom;

impl Entropy for PlatformRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        // getrandom on workerd cannot fail short of a broken runtime; a panic then is right
        // (without getrandom's error in its message: its Debug holds every platform's text).
        assert!(getrandom::getrandom(buf).is_ok(), "the platform's random source failed");
    }
}

/// A timer until `at` from `now` ([`crate::limits::wait_ms`]).
fn sleep_until(at: Option<u64>, now: u64) -> worker::Delay {
    worker::Delay::from(std::time::Duration::from_millis(crate::limits::wait_ms(at, now)))
}

fn now_ms() -> u64 {
    worker::js_sys::Date::now() as u64
}

/// What a platform call fails with: what it threw (worker's Error, made of each, and its
/// Display and Debug cost KiBs of wasm).
type Result<T, E = JsValue> = std::result::Result<T, E>;

/// A failure of the relay's own, as the platform's are.
fn failed(why: &str) -> JsValue {
    worker::js_sys::Error::new(why).into()
}

/// Writes an answer the core made, with every header it carries and no other.
fn respond(answer: http::Answer) -> Result<Response> {
    let body = answer.body.map_or(JsValue::NULL, |body| Uint8Array::from(&body[..]).into());
    let res = new_response(answer.status, &body);
    set_headers(&res, &answer.headers)?;
    Ok(res)
}

/// A response of `status` whose body is `bytes`, with no content type (as worker's had).
fn bytes_response(status: u16, bytes: &[u8]) -> Response {
    new_response(status, &Uint8Array::from(bytes).into())
}

/// Sets `headers` (each value a `&str` or a `String`) on a response the relay made.
fn set_headers<V: AsRef<str>>(res: &Response, headers: &[(&str, V)]) -> Result<()> {
    let lines = http::header_text(headers).ok_or_else(|| failed("a header with a line break"))?;
    set_header_lines(res, &lines)
}

/// A Durable Object method's outcome as the promise workerd awaits. Every method of both
/// objects hands its work here as one boxed future type, so the export machinery
/// (future_to_promise, its task and closures) is in the wasm once, not once per method.
fn promise(work: LocalBoxFuture<'static, Result<JsValue>>) -> Promise {
    worker::wasm_bindgen_futures::future_to_promise(work)
}

/// What a streamed response's body is read from, one chunk at a time.
trait Chunks {
    /// The next chunk; None ends the body.
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Vec<u8>>>;
}

/// A response whose body is the chunks of `source`, sent as they come.
fn stream_response(source: Box<dyn Chunks>, headers: &[(&str, &str)]) -> Result<Response> {
    let (source, pulling) = (Rc::new(Cell::new(Some(source))), AbortHandle::new_pair().0);
    let body = Body { source, pulling };
    let res = new_response(200, &stream_of(body).into());
    set_headers(&res, headers)?;
    Ok(res)
}

/// A streamed response's source as its stream (platform.js's `stream_of`) pulls it: each
/// `next` its next chunk, undefined at the end. Freed when the client stops reading, which
/// drops the chunk it waited for and the source (a pairing's request lets go of its replies).
#[wasm_bindgen]
pub struct Body {
    source: Rc<Cell<Option<Box<dyn Chunks>>>>,
    /// The pull under way (or done: aborting it then does nothing).
    pulling: AbortHandle,
}

#[wasm_bindgen]
impl Body {
    /// The next chunk, or undefined at the end (the stream pulls one at a time).
    pub fn next(&mut self) -> Promise {
        let source = Rc::clone(&self.source);
        let (next, pulling) = abortable(async move {
            // Out of the cell while it is read: a pull cut off drops it (the stream is done).
            let mut chunks = source.take()?;
            let chunk = chunks.next_chunk().await;
            source.set(Some(chunks));
            chunk
        });
        self.pulling = pulling;
        promise(Box::pin(async move {
            let chunk = next.await.ok().flatten();
            Ok(chunk.map_or(JsValue::UNDEFINED, |c| Uint8Array::from(&c[..]).into()))
        }))
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        self.pulling.abort();
    }
}

/// A body read chunk by chunk (platform.js's reader); dropped before its end, it cancels the rest.
struct Reader {
    reader: JsValue,
    /// The read under way, kept when a wait for it is given up (its chunk is the next).
    reading: Option<JsFuture>,
}

impl Reader {
    /// Reads `body`; no body reads as an empty one.
    fn of(body: Option<web_sys::ReadableStream>) -> Self {
        Self { reader: reader_of(body), reading: None }
    }

    /// The next chunk; None at the end.
    async fn next(&mut self) -> Result<Option<Vec<u8>>> {
        let reader = &self.reader;
        let chunk = self.reading.get_or_insert_with(|| JsFuture::from(next_chunk(reader))).await;
        self.reading = None;
        Ok(Some(chunk?).filter(|c| !c.is_undefined()).map(|c| Uint8Array::new(&c).to_vec()))
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        cancel_read(&self.reader);
    }
}

/// Applies a command to a connect code's session in its Durable Object; its reply.
async fn ask_code(env: &Env, code: &ConnectCode, command: Command) -> Result<CodeReply> {
    let request = CodeRequest { code: code.as_str().to_owned(), command };
    let answer = ask_object(env, routes::CONNECT_BINDING, code.as_str(), request.encode()).await?;
    let body = answer.dyn_into::<Uint8Array>().map(|b| b.to_vec()).unwrap_or_default();
    CodeReply::decode(&body).map_err(|_| failed("a code's reply that does not read"))
}

/// A pairing's reply lines to `request`, as they come ([`crate::limits::WHOLE_REPLY_WAIT_MS`]).
async fn ask_pairing(env: &Env, pairing: &str, request: &PairingRequest) -> Result<Replies> {
    Ok(Replies::of(ask_object(env, routes::PAIRING_BINDING, pairing, request.encode()).await?))
}

/// Posts `body` to the Durable Object `name` of `binding`: its answer, streamed when it is
/// reply lines ([`http::NDJSON_TYPE`]), else whole ([`post_object`]).
fn ask_object(env: &Env, binding: &str, name: &str, body: Vec<u8>) -> JsFuture {
    JsFuture::from(post_object(env, binding, name, body, http::NDJSON_TYPE))
}

/// The reply lines of a pairing's object (NDJSON), read as they come.
struct Replies {
    body: Reader,
    lines: ReplyLines,
}

impl Replies {
    /// The replies in `read`, a whole body's bytes or a stream; none (the pairing could not be
    /// asked): the first `next` is None.
    fn of(read: JsValue) -> Self {
        let mut lines = ReplyLines::default();
        if let Some(whole) = read.dyn_ref::<Uint8Array>() {
            lines.push(&whole.to_vec());
        }
        Self { body: Reader::of(read.dyn_into().ok()), lines }
    }

    /// The next reply, or None once the body ended or failed (a line that does not read
    /// is skipped).
    async fn next(&mut self) -> Option<Reply> {
        loop {
            if let Some(reply) = self.lines.next_reply() {
                return Some(reply);
            }
            let chunk = self.body.next().await.ok().flatten()?;
            self.lines.push(&chunk);
        }
    }
}

// The platform's request is read as it is (worker's Request, made of it for each request,
// reads its method, path and `cf` data up front: a KiB of wasm the relay does not use).

/// A request's header `name`, if it has one (it always reads: the names asked are valid).
fn header(req: &Request, name: &str) -> Option<String> {
    req.headers().get(name).ok().flatten()
}

/// A request's method, as the core names it ([`http::method`]).
fn method(req: &Request) -> &'static str {
    http::method(&req.method())
}

async fn body_bytes(req: &Request) -> Result<Vec<u8>> {
    let body = JsFuture::from(req.array_buffer()?).await?;
    Ok(Uint8Array::new(&body).to_vec())
}

/// A request's body, read with `cap` ([`CappedBody`]): refused by its `Content-Length` before
/// anything is read, and as soon as what arrives passes the cap, so no more is ever held.
async fn read_body(req: &Request, cap: usize) -> Result<Result<Vec<u8>, TooLarge>> {
    let mut body = match CappedBody::start(cap, header(req, "content-length").as_deref()) {
        Ok(body) => body,
        Err(too_large) => return Ok(Err(too_large)),
    };
    // A length declared within the cap: one read of the whole (the platform stops at it).
    if body.whole() {
        return Ok(body.take(&body_bytes(req).await?).map(|()| body.into_bytes()));
    }
    let mut reader = Reader::of(req.body());
    while let Some(chunk) = reader.next().await? {
        if let Err(too_large) = body.take(&chunk) {
            return Ok(Err(too_large));
        }
    }
    Ok(Ok(body.into_bytes()))
}

/// What the sender's limit of `limited` makes of `req` (the platform's rate-limiting binding,
/// keyed by [`sender_key`]; each ask counts): the core decides ([`Limit::said`]). A binding
/// that fails is logged (a missing one was said at start: [`crate::senders::unbound`]).
async fn within_limit(env: &Env, req: &Request, limited: Limited) -> Limit {
    let sender = sender_key(header(req, "cf-connecting-ip").as_deref());
    let Some(key) = sender.as_deref() else { return Limit::said(None, None) };
    let answer = JsFuture::from(ask_limit(env, limited.binding(), key)).await;
    let answer = answer.ok().filter(|v| !v.is_null());
    let within = answer.as_ref().and_then(JsValue::as_bool);
    if answer.is_some() && within.is_none() {
        let binding = limited.binding();
        worker::console_error!("the rate-limiting binding {binding} failed");
    }
    Limit::said(Some(key), within)
}

/// A Durable Object's SQL storage (through its state), as the core runs statements on it.
struct Sqlite<'a>(&'a DurableObjectState);

impl Sql for Sqlite<'_> {
    fn exec(&mut self, query: &str, bindings: Vec<Bind>) -> std::result::Result<Rows, Failed> {
        let bindings = bindings.into_iter().map(|b| match b {
            Bind::Text(text) => JsValue::from(text),
            Bind::Int(n) => JsValue::from(n as f64),
        });
        let rows = sql_rows(self.0, query, bindings.collect()).map_err(|_| Failed)?;
        let row = |row: &JsValue| Array::from(row).iter().map(|v| v.as_string()).collect();
        Ok(rows.iter().map(row).collect())
    }
}

/// The catalogue bundled with this build, read once.
fn catalogue() -> &'static tabrelay_bundle::catalogue::Catalogue {
    static CATALOGUE: std::sync::OnceLock<tabrelay_bundle::catalogue::Catalogue> =
        std::sync::OnceLock::new();
    CATALOGUE.get_or_init(tabrelay_bundle::catalogue::Catalogue::bundled)
}

// The platform's APIs the shell uses, in a few lines of JavaScript (platform.js, its functions
// named as here): worker's wrappers of them cost KiBs of wasm.
#[wasm_bindgen(module = "/src/shell/platform.js")]
extern "C" {
    /// Posts `body` to the Durable Object `name` of `binding`: its answer, its body's stream
    /// when its content type is `streamed`, else its body's bytes; null for any status but 200.
    fn post_object(env: &Env, binding: &str, name: &str, body: Vec<u8>, streamed: &str) -> Promise;

    /// `req`'s headers in one crossing ([`http::HeaderLines`]).
    fn header_lines(req: &Request) -> String;

    /// Passes `request` on to the Durable Object `name` of `binding`: its response.
    fn pass_object(env: &Env, binding: &str, name: &str, request: &Request) -> Promise;

    /// The rate-limiting binding `binding`'s answer for `key`: whether it is within its limit;
    /// null when the deployment has no such binding, undefined when it fails.
    fn ask_limit(env: &Env, binding: &str, key: &str) -> Promise;

    /// Logs `line` and the name of each of `bindings` (space-separated) the deployment lacks.
    fn say_unbound(env: &Env, bindings: &str, line: &str);

    /// The rows of a statement run on the object's SQL storage, each its values in order.
    #[wasm_bindgen(catch)]
    fn sql_rows(state: &DurableObjectState, sql: &str, binds: Vec<JsValue>)
        -> Result<Vec<JsValue>>;

    /// Sets the object's alarm to `at` (milliseconds since the epoch).
    fn set_alarm(state: &DurableObjectState, at: f64) -> Promise;

    /// Sets the headers in `lines` ([`http::header_text`]) on a response the relay made.
    #[wasm_bindgen(catch)]
    fn set_header_lines(res: &Response, lines: &str) -> Result<()>;

    /// A response of `status` whose body is `body` (null, bytes or a stream).
    fn new_response(status: u16, body: &JsValue) -> Response;

    /// A 101 whose socket closes at once with `code` and `reason` (all a browser shows).
    fn refuse_socket(code: u16, reason: &str) -> Response;

    /// A tab's socket accepted by the object: [the 101 that hands it over, the object's end].
    fn accept_socket(state: &DurableObjectState) -> worker::js_sys::Array;

    /// A stream whose chunks `body` gives, as they are read.
    fn stream_of(body: Body) -> web_sys::ReadableStream;

    /// A reader of `body` (none: an empty body).
    fn reader_of(body: Option<web_sys::ReadableStream>) -> JsValue;

    /// The reader's next chunk (a Uint8Array), undefined at the end.
    fn next_chunk(reader: &JsValue) -> Promise;

    fn cancel_read(reader: &JsValue);

    /// Has the runtime answer `ping` with `pong` on the object's sockets, without waking it.
    fn answer_pings(state: &DurableObjectState, ping: &str, pong: &str);

    /// Whether `signature` (P1363) is `key`'s (raw P-256) ECDSA signature over SHA-256 of
    /// `data`, by the runtime's WebCrypto (no signature crate in the wasm); false for a key
    /// WebCrypto refuses (a point off the curve, say: it proves nothing).
    fn verify_p256(key: &[u8], signature: &[u8], data: &[u8]) -> Promise;

    /// A GET of `url` with `signal`, redirects not followed (a redirect could lead anywhere
    /// the URL rules refuse): its response.
    fn fetch_document(url: &str, signal: &web_sys::AbortSignal) -> Promise;

    /// The body of the response the Workers cache keeps under `key`, or undefined.
    fn cached_text(key: &str) -> Promise;

    fn keep(key: &str, response: &Response) -> Promise;

    fn delete_all(state: &DurableObjectState) -> Promise;
}
