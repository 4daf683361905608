//! The Durable Object of one pairing: holds its tabs' hibernatable WebSockets and its SQL
//! storage, and translates between them and the core's [`Object`]: each event goes in with the
//! one `now` read for it, and each [`Output`] comes out as a socket message, an attachment, a
//! reply line, the alarm, or a check or question whose outcome goes back in: each event is one
//! turn of the core's one loop ([`machine::turn`]), whose outputs queue to be carried out in
//! order, awaiting where they must. The statements it
//! runs are the core's (`pairing::store`), and so is every decision, the timers too: a waiting
//! request sleeps until [`Object::poll_timeout`], and the alarm is set where the object says.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::mpsc;
use futures::future::{select, Either, LocalBoxFuture};
use futures::StreamExt as _;
use tabrelay_bundle::fields::Message as _;
use tabrelay_bundle::protocol::{PING, PONG};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use worker::js_sys::Promise;
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::{self, Response, WebSocket};
use worker::worker_sys::ext::WebSocketExt as _;
use worker::worker_sys::DurableObjectState;
use worker::{console_log, Env};

use super::{
    accept_socket, ask_code, body_bytes, bytes_response, catalogue, header, now_ms, promise,
    refuse_socket, respond, routes, set_alarm, sleep_until, stream_response, verify_p256, Chunks,
    PlatformRandom, Result, Sqlite,
};
use crate::crypto::sha256_hex;
use crate::http::{self, Answer};
use crate::limits::WHOLE_REPLY_WAIT_MS;
use crate::machine::{self, Machine, Platform};
use crate::pairing::object::{read_attachment, ByNumber, Object, Output};
use crate::pairing::room::{Asker, Input, Stored};
use crate::pairing::wire::{Reply, Request};
use crate::pairing::{socket_pairing, Tab};
use crate::senders::sender_key;

/// The pairing's class as workerd calls it. Bound here rather than by worker's
/// `#[durable_object]`, whose every async method carries its own copy of the export machinery
/// (0.7 KiB of upload each): each method hands its work to [`promise`], one future type.
#[wasm_bindgen(js_name = Pairing)]
pub struct PairingClass(Rc<Pairing>);

#[wasm_bindgen(js_class = Pairing)]
impl PairingClass {
    #[wasm_bindgen(constructor)]
    pub fn new(state: DurableObjectState, env: Env) -> Self {
        Self(Rc::new(Pairing::new(state, env)))
    }

    /// A request of the Worker, or a tab's socket.
    pub fn fetch(&self, req: web_sys::Request) -> Promise {
        promise(Box::pin(Rc::clone(&self.0).on(Event::Fetch(req))))
    }

    /// A tab's message (text; binary reads as none).
    #[wasm_bindgen(js_name = webSocketMessage)]
    pub fn websocket_message(&self, ws: web_sys::WebSocket, message: JsValue) -> Promise {
        promise(Box::pin(Rc::clone(&self.0).on(Event::Message(ws, message.as_string()))))
    }

    /// A tab's socket closed: its end closes too.
    #[wasm_bindgen(js_name = webSocketClose)]
    pub fn websocket_close(&self, ws: web_sys::WebSocket) -> Promise {
        promise(Box::pin(Rc::clone(&self.0).on(Event::Closed(ws, true))))
    }

    /// A tab's socket failed.
    #[wasm_bindgen(js_name = webSocketError)]
    pub fn websocket_error(&self, ws: web_sys::WebSocket) -> Promise {
        promise(Box::pin(Rc::clone(&self.0).on(Event::Closed(ws, false))))
    }

    /// The alarm the object set.
    pub fn alarm(&self) -> Promise {
        promise(Box::pin(Rc::clone(&self.0).on(Event::Alarm)))
    }
}

/// What workerd tells the object: one future handles them all.
enum Event {
    Fetch(web_sys::Request),
    Message(WebSocket, Option<String>),
    /// A tab's socket closed (true: its end is closed too) or failed.
    Closed(WebSocket, bool),
    Alarm,
}

/// One browser's pairing, shared with its requests' response streams (they outlive `fetch`).
struct Pairing {
    object: RefCell<Object>,
    /// What the object said, not yet carried out, in order (one Vec, reused).
    said: RefCell<Vec<Output>>,
    sockets: RefCell<ByNumber<WebSocket>>,
    /// Where each waiting request's replies go.
    askers: RefCell<ByNumber<mpsc::UnboundedSender<Reply>>>,
    /// The platform's state of the object: its SQL storage and its alarm.
    platform: DurableObjectState,
    env: Env,
}

impl Pairing {
    /// One turn of the object ([`machine::turn`]): gives it `input` (None: its timeout, if
    /// due), now, and queues all it says for [`Self::run`].
    fn turn(&self, input: Option<Input>) {
        let host = &mut Platform { sql: &mut Sqlite(&self.platform), entropy: &mut PlatformRandom };
        let said = &mut *self.said.borrow_mut();
        let object = &mut *self.object.borrow_mut();
        machine::turn(object, input, now_ms(), host, |output| said.push(output));
    }

    /// Carries out what the object said, in order, until nothing is left; what a check or a
    /// question comes to goes back to it (a turn, whose outputs queue after those before).
    async fn run(&self) -> Result<()> {
        loop {
            let output = {
                let said = &mut *self.said.borrow_mut();
                (!said.is_empty()).then(|| said.remove(0))
            };
            match output {
                None => return Ok(()),
                Some(Output::Send(tab, text)) => {
                    if let Some(ws) = self.sockets.borrow().get(&tab) {
                        // A socket that just closed fails its calls through websocket_close.
                        let _ = ws.send_with_str(&text);
                    }
                }
                Some(Output::Close(tab, code, reason)) => {
                    if let Some(ws) = self.sockets.borrow_mut().remove(&tab) {
                        let _ = ws.close_with_code_and_reason(code, reason);
                    }
                }
                Some(Output::Attach(tab, text)) => {
                    if let Some(ws) = self.sockets.borrow().get(&tab) {
                        // A socket that closed meanwhile keeps nothing; its close tells the room.
                        let _ = ws.serialize_attachment(text.into());
                    }
                }
                Some(Output::Reply(asker, reply)) => {
                    let (mut askers, ends) = (self.askers.borrow_mut(), reply.ends());
                    if let Some(sender) = askers.get(&asker) {
                        let _ = sender.unbounded_send(reply);
                    }
                    if ends {
                        askers.remove(&asker);
                    }
                }
                Some(Output::SetAlarm(at)) => {
                    JsFuture::from(set_alarm(&self.platform, at as f64)).await?;
                }
                Some(Output::Verify(tab, proof, named)) => {
                    let answer = verify_p256(&proof.key, &proof.signature, &proof.data);
                    let valid =
                        JsFuture::from(answer).await.is_ok_and(|v| v.as_bool() == Some(true));
                    self.turn(Some(match named {
                        None => Input::Proved { tab, valid },
                        Some(named) => Input::PresenceProved { tab, named, valid },
                    }));
                }
                Some(Output::AskCode(tab, code, command, said)) => {
                    let reply = ask_code(&self.env, &code, command.clone()).await.ok();
                    self.turn(Some(Input::CodeReplied { tab, said, command, reply }));
                }
            }
        }
    }

    /// Wakes the object the first time this instance needs it: the tabs from their open
    /// sockets, the rest from storage (what it says then is carried out with the event's
    /// outputs, by the event's one run).
    fn wake(&self) {
        if self.object.borrow().woke() {
            return;
        }
        let mut tabs = Vec::new();
        for ws in self.platform.get_websockets().unwrap_or_default() {
            if let Some(tab) = tab_of(&ws).filter(|_| ws.ready_state() == WebSocket::OPEN) {
                self.sockets.borrow_mut().insert(tab.number, ws);
                tabs.push(tab);
            }
        }
        self.turn(Some(Input::Woke(Stored { tabs, ..Stored::default() })));
    }

    /// A request, a tab's message, its socket closing or failing, or the alarm: what the
    /// object hears of it, carried out; what workerd is answered.
    async fn on(self: Rc<Self>, event: Event) -> Result<JsValue> {
        self.wake();
        let (input, to_close) = match event {
            Event::Fetch(req) => return self.fetch(req).await.map(Into::into),
            Event::Message(ws, text) => {
                (self.number_of(&ws).map(|tab| Input::Message { tab, text }), None)
            }
            Event::Closed(ws, close) => {
                let input = self.number_of(&ws).map(|tab| {
                    self.sockets.borrow_mut().remove(&tab);
                    Input::Closed { tab }
                });
                (input, close.then_some(ws))
            }
            Event::Alarm => (Some(Input::Timeout), None),
        };
        // No input (a socket not the object's): a turn all the same, its timeout if due.
        self.turn(input);
        self.run().await?;
        if let Some(ws) = to_close {
            let _ = ws.close_with_code_and_reason(1000, "Closed.");
        }
        // What an alarm or a socket event answers is not read by the platform.
        Ok(JsValue::NULL)
    }

    /// The number of a tab's socket: by identity among those held, else from its attachment.
    fn number_of(&self, ws: &WebSocket) -> Option<u64> {
        self.sockets.borrow().key_of(ws).or_else(|| tab_of(ws).map(|tab| tab.number))
    }

    /// Takes a tab's socket: its first message is a fresh challenge.
    async fn accept_tab(&self, req: &web_sys::Request) -> Result<Response> {
        let url = req.url();
        // The Worker refused a socket without a sender before it came here.
        let sender = sender_key(header(req, "cf-connecting-ip").as_deref()).unwrap_or_default();
        let pairing = match socket_pairing(&http::query_of(&url)) {
            Ok(pairing) => pairing,
            // The Worker checked the pairing id before naming this object by it.
            Err((code, reason)) => return Ok(refuse_socket(code, reason)),
        };
        let accepted = accept_socket(&self.platform);
        let number = self.object.borrow_mut().next_tab_number(now_ms());
        self.sockets.borrow_mut().insert(number, accepted.get(1).unchecked_into());
        let origin = http::origin_of(&url).to_owned();
        self.turn(Some(Input::Opened { number, pairing, origin, sender }));
        self.run().await?;
        Ok(accepted.get(0).unchecked_into())
    }

    /// A request of the Worker: the object's reply, one line or a stream of them.
    async fn request(self: &Rc<Self>, request: Request) -> Result<Response> {
        let (asker, now) = (self.object.borrow_mut().next_asker(), now_ms());
        self.turn(Some(Input::Request { asker, request, replayed: Vec::new() }));
        let (sender, replies) = mpsc::unbounded();
        self.askers.borrow_mut().insert(asker, sender);
        let mut lines = Lines { first: None, asker, pairing: Rc::clone(self), replies };
        self.run().await?;
        // The last reply, come within the wait, goes as the whole response (one JSON text);
        // else the lines stream as they come (NDJSON; the first of them, if one came).
        match lines.next_by(now + WHOLE_REPLY_WAIT_MS).await {
            Some(Some(last)) if last.ends() => return respond(Answer::json_text(200, last.line())),
            Some(reply) => lines.first = reply,
            None => {}
        }
        stream_response(Box::new(lines), &http::NDJSON_HEADERS)
    }

    fn new(platform: DurableObjectState, env: Env) -> Self {
        // Pings are answered by the runtime without waking the object: idle tabs cost nothing.
        super::answer_pings(&platform, PING, PONG);
        // The tables are made on the first write (see store::TABLES), not here.
        // The sockets the platform keeps for the object (hibernated ones too).
        let sockets = platform.get_websockets().unwrap_or_default();
        if let Some(tab) = sockets.iter().find_map(tab_of) {
            // A hash of the pairing id names it in the log without naming it.
            let tag = &sha256_hex(tab.pairing.as_bytes())[..8];
            console_log!("pairing {tag} woke with {} tabs", sockets.len());
        }
        let keys = routes::config(&env).ok().map(|c| c.keys);
        Self {
            object: RefCell::new(Object::new(keys, catalogue())),
            said: RefCell::new(Vec::new()),
            sockets: RefCell::new(ByNumber::new()),
            askers: RefCell::new(ByNumber::new()),
            platform,
            env,
        }
    }

    /// A request of the Worker, or a tab's socket (the object woken already).
    async fn fetch(self: &Rc<Self>, req: web_sys::Request) -> Result<Response> {
        if header(&req, "upgrade").is_some() {
            return self.accept_tab(&req).await;
        }
        match Request::decode(&body_bytes(&req).await?) {
            Ok(request) => self.request(request).await,
            Err(_) => {
                self.run().await?;
                Ok(bytes_response(400, crate::sentences::shell::NOT_FOR_PAIRING.as_bytes()))
            }
        }
    }
}

/// A request's reply lines: the first (read already), then each as it comes until the last
/// (its channel's sender is dropped as the last is sent). Dropped before its last reply, it
/// has the object let go of the request.
struct Lines {
    first: Option<Reply>,
    asker: Asker,
    pairing: Rc<Pairing>,
    replies: mpsc::UnboundedReceiver<Reply>,
}

impl Lines {
    /// The next reply (`Some(None)`: the replies ended), or None when none came by `until`
    /// (milliseconds since the epoch). Meanwhile it sleeps until the room next needs waking and
    /// then gives it the timeout (any waiting request may: what is due is done once).
    async fn next_by(&mut self, until: u64) -> Option<Option<Reply>> {
        if let Some(first) = self.first.take() {
            return Some(Some(first));
        }
        loop {
            let wake =
                Machine::poll_timeout(&*self.pairing.object.borrow()).filter(|&at| at < until);
            let delay = Box::pin(sleep_until(Some(wake.unwrap_or(until)), now_ms()));
            match select(self.replies.next(), delay).await {
                Either::Left((reply, _)) => return Some(reply),
                Either::Right(_) if wake.is_none() => return None,
                Either::Right(_) => {
                    self.pairing.turn(None);
                    if self.pairing.run().await.is_err() {
                        return Some(None);
                    }
                }
            }
        }
    }
}

impl Chunks for Lines {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Vec<u8>>> {
        Box::pin(async move { Some(self.next_by(u64::MAX).await.flatten()?.line()) })
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        let pairing = Rc::clone(&self.pairing);
        // Its channel still held: its last reply has not gone, so the object still waits.
        if pairing.askers.borrow_mut().remove(&self.asker).is_some() {
            pairing.turn(Some(Input::Gone { asker: self.asker }));
            worker::wasm_bindgen_futures::spawn_local(async move {
                let _ = pairing.run().await;
            });
        }
    }
}

/// A tab's state from its socket's attachment (a JS string, not worker's serde-wasm-bindgen).
fn tab_of(ws: &WebSocket) -> Option<Tab> {
    read_attachment(&ws.deserialize_attachment().ok()?.as_string()?)
}
