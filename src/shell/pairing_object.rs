//! The Durable Object of one pairing: holds its tabs' hibernatable WebSockets and its storage,
//! and translates each event into an input of the core's [`Room`] (with the one `now` it reads
//! for it) and each effect the room returns into a socket message, a row, a reply line, the
//! alarm or a question to a code's object. Every decision is the room's, its timers too: a
//! waiting request sleeps until [`Room::poll_timeout`], and the alarm is set where the room
//! says.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;
use tabrelay_bundle::fields::Message as _;

use futures::channel::mpsc;
use futures::future::{select, Either};
use futures::StreamExt as _;
use serde_json::Value;
use tabrelay_bundle::fields::FromValue;
use tabrelay_bundle::protocol::{PING, PONG};
use worker::worker_sys::ext::WebSocketExt as _;
use worker::worker_sys::WebSocketRequestResponsePair;
use worker::{
    console_log, durable_object, Delay, DurableObject, Env, Response, Result, SqlStorage,
    SqlStorageValue, State, WebSocket, WebSocketIncomingMessage, WebSocketPair,
};

use super::{ask_code, catalogue, from_json, now_ms, routes, texts, PlatformRandom};
use crate::crypto::sha256_hex;
use crate::http;
use crate::pairing::room::{Asker, Effect, Input, Room, Stated, Stored};
use crate::pairing::wire::{Reply, Request};
use crate::pairing::{socket_pairing, Tab};
use crate::senders::sender_key;

/// The pairing's tables. They are made on the object's first write, not when it starts, so an
/// object that is only asked about what it never stored (a revocation or refresh of an unknown
/// grant) stores nothing; a read of a table not made yet fails, which reads as nothing stored.
const TABLES: [&str; 6] = [
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS grants (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
    // What each tab stated (its tool list, its dataset's name), by tab number: too large for a
    // socket attachment, and it must survive hibernation.
    "CREATE TABLE IF NOT EXISTS tab_state (tab TEXT PRIMARY KEY, tools TEXT, dataset TEXT)",
    // The requestStates that came back (each may once), until they expire.
    "CREATE TABLE IF NOT EXISTS used_states (key TEXT PRIMARY KEY, expires INTEGER NOT NULL)",
    // Grant ids revoked because their authorization code was replayed, until `until`: a grant
    // the first redemption creates after the replay's revocation reached the pairing is refused.
    "CREATE TABLE IF NOT EXISTS replayed (id TEXT PRIMARY KEY, until INTEGER NOT NULL)",
    // The tasks clients poll (io.modelcontextprotocol/tasks), each as its JSON, until its time
    // to live passes (the room deletes it then).
    "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
];

/// One browser's pairing.
#[durable_object]
pub struct Pairing {
    state: State,
    shared: Rc<Shared>,
}

/// What the object and its requests' response streams share (a stream outlives `fetch`).
struct Shared {
    /// The core; None until storage is read back.
    room: RefCell<Option<Room>>,
    /// The tabs' sockets, by tab number.
    sockets: RefCell<HashMap<u64, WebSocket>>,
    /// Where each waiting request's replies go.
    askers: RefCell<HashMap<Asker, mpsc::UnboundedSender<Reply>>>,
    /// The last request numbered.
    last_asker: Cell<Asker>,
    /// When the event being carried out happened.
    now: Cell<u64>,
    sql: SqlStorage,
    /// For the alarm.
    storage: worker::Storage,
    env: Env,
    /// Whether [`TABLES`] were made (or found made) by this instance.
    tables: Cell<bool>,
}

impl Shared {
    /// The room's effects of one input, now (the clock read once for it, and kept for what
    /// carrying them out needs).
    fn handle(&self, input: Input) -> Vec<Effect> {
        self.now.set(now_ms());
        match self.room.borrow_mut().as_mut() {
            Some(room) => room.handle(input, self.now.get(), &mut PlatformRandom),
            None => Vec::new(),
        }
    }

    /// Carries out the room's effects in order; what a check or a question comes to goes back
    /// to the room, and its effects are carried out in turn.
    async fn run(&self, effects: Vec<Effect>) -> Result<()> {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(effect) = queue.pop_front() {
            let input = match self.apply(effect) {
                None => continue,
                Some(Effect::Verify(tab, proof)) => {
                    Input::Proved { tab, valid: super::webcrypto::verify(&proof).await }
                }
                Some(Effect::AskCode(tab, code, command, said)) => {
                    let reply = ask_code(&self.env, &code, command.clone()).await.ok();
                    Input::CodeReplied { tab, said, command, reply }
                }
                Some(Effect::SetAlarm(at)) => {
                    self.storage.set_alarm(alarm_at(at)).await?;
                    continue;
                }
                Some(_) => continue,
            };
            queue.extend(self.handle(input));
        }
        Ok(())
    }

    /// Carries out an effect that needs no waiting; one that does is given back.
    fn apply(&self, effect: Effect) -> Option<Effect> {
        match effect {
            Effect::Send(tab, message) => {
                if let Some(ws) = self.sockets.borrow().get(&tab) {
                    // A socket that just closed fails its calls through websocket_close.
                    let _ = ws.send_with_str(message.to_text());
                }
            }
            Effect::Close(tab, code, reason) => {
                if let Some(ws) = self.sockets.borrow_mut().remove(&tab) {
                    let _ = ws.close(Some(code), Some(reason));
                }
            }
            Effect::Attach(tab) => {
                if let Some(ws) = self.sockets.borrow().get(&tab.number) {
                    attach(ws, &tab);
                }
            }
            Effect::Reply(asker, reply) => {
                let sender = if reply.ends() {
                    self.askers.borrow_mut().remove(&asker)
                } else {
                    self.askers.borrow().get(&asker).cloned()
                };
                if let Some(sender) = sender {
                    let _ = sender.unbounded_send(reply);
                }
            }
            Effect::StoreStated(tab, stated) => {
                let (query, value) = match stated {
                    Stated::Tools(json) => ("INSERT INTO tab_state (tab, tools) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET tools = ?2", json),
                    Stated::Dataset(name) => ("INSERT INTO tab_state (tab, dataset) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET dataset = ?2", name),
                };
                self.write(query, vec![tab.to_string().into(), value.into()]);
            }
            Effect::ForgetStated(tab) => {
                self.write("DELETE FROM tab_state WHERE tab = ?", vec![tab.to_string().into()]);
            }
            Effect::StoreTurns(turns) => self.store_meta("turns", &turns),
            Effect::StoreLeft(left) => self.store_meta("left", &left),
            Effect::StoreWrongCodes(wrong) => self.store_meta("wrong_codes", &wrong),
            Effect::StoreGrant(grant) => {
                let body = serde_json::to_string(&grant).unwrap_or_default();
                self.write(
                    "INSERT INTO grants (id, body) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET body = ?2",
                    vec![grant.id.as_str().into(), body.into()],
                );
            }
            Effect::StoreTask(task) => {
                let body = serde_json::to_string(&task).unwrap_or_default();
                self.write(
                    "INSERT INTO tasks (id, body) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET body = ?2",
                    vec![task.id.as_str().into(), body.into()],
                );
            }
            Effect::DeleteTask(id) => self.write("DELETE FROM tasks WHERE id = ?", vec![id.into()]),
            Effect::DeleteGrant(id) => {
                self.write("DELETE FROM grants WHERE id = ?", vec![id.into()])
            }
            Effect::RecordReplayed(id, until) => {
                let now = self.now.get() as i64;
                self.write("DELETE FROM replayed WHERE until <= ?", vec![now.into()]);
                self.write(
                    "INSERT OR REPLACE INTO replayed (id, until) VALUES (?, ?)",
                    vec![id.into(), (until as i64).into()],
                );
            }
            Effect::ForgetAll => {
                // Every table the object made goes (synchronously: a request's end may bring
                // it, where nothing can wait); the next write makes them again.
                for table in TABLES {
                    if let Some(name) = table.split_whitespace().nth(5) {
                        let _ = self.sql.exec(&format!("DROP TABLE IF EXISTS {name}"), None);
                    }
                }
                self.tables.set(false);
            }
            effect @ (Effect::Verify(..) | Effect::AskCode(..) | Effect::SetAlarm(_)) => {
                return Some(effect);
            }
        }
        None
    }

    /// The storage to write to, its tables made first if this instance has not yet: every write
    /// goes through here, so the tables come with the first write and never before.
    fn write(&self, query: &str, bindings: Vec<SqlStorageValue>) {
        if !self.tables.get() {
            for table in TABLES {
                if self.sql.exec(table, None).is_err() {
                    return;
                }
            }
            self.tables.set(true);
        }
        // A failed write is the runtime's failure; the next read back shows what was kept.
        let _ = self.sql.exec(query, bindings);
    }

    fn store_meta(&self, key: &str, value: &impl serde::Serialize) {
        let v = serde_json::to_string(value).unwrap_or_default();
        self.write("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", vec![key.into(), v.into()]);
    }

    /// The JSON values a query selects as `v`, read; rows that do not read are skipped (and a
    /// table not made yet reads as no rows).
    fn values<T: FromValue>(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Vec<T> {
        let rows = self.sql.exec(query, bindings).map(|c| texts(c, "v"));
        rows.unwrap_or_default().iter().filter_map(|v| from_json(v.as_bytes())).collect()
    }
}

/// A request's reply stream: when dropped before its last reply, the room lets go of it.
struct Waiting {
    asker: Asker,
    shared: Rc<Shared>,
    replies: mpsc::UnboundedReceiver<Reply>,
    finished: bool,
}

impl Waiting {
    /// The next reply of the room's. Meanwhile it sleeps until the room next needs waking and
    /// then gives it the timeout (any waiting request may: what is due is done once).
    async fn next(&mut self) -> Option<Reply> {
        loop {
            let wake = self.shared.room.borrow().as_ref().and_then(Room::poll_timeout);
            let sleep = wake.map_or(u64::from(u32::MAX), |at| at.saturating_sub(now_ms()));
            let delay = Box::pin(Delay::from(Duration::from_millis(sleep)));
            match select(self.replies.next(), delay).await {
                Either::Left((reply, _)) => {
                    self.finished = reply.as_ref().is_none_or(Reply::ends);
                    return reply;
                }
                Either::Right(_) => {
                    let effects = self.shared.handle(Input::Timeout);
                    if self.shared.run(effects).await.is_err() {
                        return None;
                    }
                }
            }
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.finished {
            // The room lets go of it (tells tabs to drop its calls, or keeps a resumable one).
            let shared = Rc::clone(&self.shared);
            shared.askers.borrow_mut().remove(&self.asker);
            let effects = shared.handle(Input::Gone { asker: self.asker });
            worker::wasm_bindgen_futures::spawn_local(async move {
                let _ = shared.run(effects).await;
            });
        }
    }
}

/// A reply as the object's whole response: its one line.
fn reply_response(reply: &Reply) -> Result<Response> {
    lines_response(Response::from_bytes(reply.line())?)
}

/// The headers of a response of reply lines (NDJSON), one or a stream of them.
fn lines_response(mut res: Response) -> Result<Response> {
    let headers = res.headers_mut();
    headers.set("content-type", "application/x-ndjson")?;
    headers.set("cache-control", "no-cache, no-store")?;
    Ok(res)
}

/// A tab's state from its socket's attachment (kept as JSON text: smaller than a JS object;
/// read and written as a JS string directly, not through worker's serde-wasm-bindgen).
fn tab_of(ws: &WebSocket) -> Option<Tab> {
    let text = ws.as_ref().deserialize_attachment().ok()?.as_string()?;
    from_json(text.as_bytes())
}

fn attach(ws: &WebSocket, tab: &Tab) {
    let text = serde_json::to_string(tab).unwrap_or_default();
    // A socket that closed meanwhile keeps nothing; its close tells the room.
    let _ = ws.as_ref().serialize_attachment(text.into());
}

/// An alarm time `at_ms` (since the epoch). worker's `set_alarm` takes a bare number as an
/// offset from now, not a time: the first hello deadline was set that way, decades ahead.
fn alarm_at(at_ms: u64) -> worker::ScheduledTime {
    worker::ScheduledTime::new(worker::js_sys::Date::new(&(at_ms as f64).into()))
}

impl Pairing {
    /// The room, read back from storage the first time this instance needs it: the tabs from
    /// their sockets, what they stated, the grants, the turns and the wrong codes.
    async fn room(&self) -> Result<()> {
        if self.shared.room.borrow().is_some() {
            return Ok(());
        }
        let mut tabs = Vec::new();
        for ws in self.state.get_websockets() {
            if ws.as_ref().ready_state() != worker::web_sys::WebSocket::OPEN {
                continue;
            }
            if let Some(tab) = tab_of(&ws) {
                self.shared.sockets.borrow_mut().insert(tab.number, ws);
                tabs.push(tab);
            }
        }
        let sql = &self.shared.sql;
        let column = |c: &str| -> Vec<Option<String>> {
            let query = format!("SELECT {c} AS v FROM tab_state ORDER BY tab");
            let rows = sql.exec(&query, None).map(|rows| {
                let v = worker::wasm_bindgen::JsValue::from_str("v");
                rows.filter_map(|row| {
                    Some(worker::js_sys::Reflect::get(&row.ok()?, &v).ok()?.as_string())
                })
                .collect()
            });
            rows.unwrap_or_default()
        };
        let numbers = column("tab");
        let stated = numbers
            .into_iter()
            .zip(column("tools"))
            .zip(column("dataset"))
            .filter_map(|((n, t), d)| Some((n?.parse().ok()?, t, d)))
            .collect();
        let meta = |k: &str| {
            self.shared.values::<Value>("SELECT v FROM meta WHERE k = ?", vec![k.into()]).pop()
        };
        let stored = Stored {
            tabs,
            stated,
            grants: self.shared.values("SELECT body AS v FROM grants ORDER BY rowid", Vec::new()),
            turns: meta("turns").and_then(FromValue::from_value).unwrap_or_default(),
            left: meta("left").and_then(FromValue::from_value).unwrap_or_default(),
            wrong_codes: meta("wrong_codes").and_then(FromValue::from_value).unwrap_or_default(),
            tasks: self
                .shared
                .values::<Value>("SELECT body AS v FROM tasks ORDER BY rowid", Vec::new())
                .into_iter()
                .filter_map(crate::pairing::tasks::read)
                .collect(),
            replayed_until: self.replayed("%").into_iter().max().unwrap_or_default(),
        };
        let keys = routes::config(&self.shared.env).ok().map(|c| c.keys);
        *self.shared.room.borrow_mut() = Some(Room::new(keys, catalogue()));
        self.run(Input::Woke(stored)).await
    }

    /// A tab's socket closed or failed: the room hears it.
    async fn closed(&self, ws: &WebSocket) -> Result<()> {
        self.room().await?;
        if let Some(tab) = tab_of(ws) {
            self.shared.sockets.borrow_mut().remove(&tab.number);
            self.run(Input::Closed { tab: tab.number }).await?;
        }
        Ok(())
    }

    /// The room's effects of one input, carried out.
    async fn run(&self, input: Input) -> Result<()> {
        self.shared.run(self.shared.handle(input)).await
    }

    /// Takes a tab's socket: its first message is a fresh challenge.
    async fn accept_tab(&self, req: &worker::Request) -> Result<Response> {
        let url = req.inner().url();
        let sender = sender_key(req.headers().get("cf-connecting-ip")?.as_deref());
        let pair = WebSocketPair::new()?;
        let pairing = match socket_pairing(&http::query_of(&url)) {
            Ok(pairing) => pairing,
            Err((code, reason)) => {
                // The Worker checked the key before naming this object by it.
                pair.server.accept()?;
                pair.server.close(Some(code), Some(reason))?;
                return Response::from_websocket(pair.client);
            }
        };
        self.state.accept_web_socket(&pair.server);
        let number = match self.shared.room.borrow_mut().as_mut() {
            Some(room) => room.next_tab_number(now_ms()),
            None => return Response::error(crate::sentences::shell::PAIRING_NOT_READY, 503),
        };
        self.shared.sockets.borrow_mut().insert(number, pair.server);
        let origin = http::origin_of(&url).to_owned();
        self.run(Input::Opened { number, pairing, origin, sender }).await?;
        Response::from_websocket(pair.client)
    }

    /// Whether a requestState (by its key) comes back for the first time; it is kept as used
    /// until it expires (a uniqueness storage keeps). Expired ones are dropped first.
    fn first_use(&self, key: &str, expires_ms: u64) -> bool {
        let now = now_ms() as i64;
        self.shared.write("DELETE FROM used_states WHERE expires < ?", vec![now.into()]);
        if !self.shared.tables.get() {
            return false;
        }
        let inserted = self.shared.sql.exec(
            "INSERT INTO used_states (key, expires) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key",
            vec![key.into(), (expires_ms as i64).into()],
        );
        inserted.is_ok_and(|rows| texts(rows, "key").len() == 1)
    }

    /// The replays recorded for grant `id` (a `LIKE` pattern: `%` for all): until when each
    /// is kept.
    fn replayed(&self, id: &str) -> Vec<u64> {
        let query = "SELECT CAST(until AS TEXT) AS v FROM replayed WHERE id LIKE ?";
        let found: Vec<Value> = self.shared.values(query, vec![id.into()]);
        found.iter().filter_map(Value::as_u64).collect()
    }

    /// A request of the Worker: the room's reply, one line or a stream of them.
    async fn request(&self, request: Request) -> Result<Response> {
        if let Request::UseState { key, expires_ms } = &request {
            let first = self.first_use(key, *expires_ms);
            return reply_response(if first { &Reply::Done } else { &Reply::StateUsed });
        }
        let replayed = match &request {
            Request::Grant(grant) => self.replayed(&grant.id),
            _ => Vec::new(),
        };
        let asker = self.shared.last_asker.get() + 1;
        self.shared.last_asker.set(asker);
        let (sender, replies) = mpsc::unbounded();
        self.shared.askers.borrow_mut().insert(asker, sender);
        self.run(Input::Request { asker, request, replayed }).await?;
        let mut waiting =
            Waiting { asker, shared: Rc::clone(&self.shared), replies, finished: false };
        // A reply that is the last goes as the whole response; else the lines as they come.
        let first = waiting.replies.try_recv().ok();
        if let Some(reply) = first.as_ref().filter(|r| r.ends()) {
            waiting.finished = true;
            return reply_response(reply);
        }
        let first = futures::stream::iter(first.map(|r| Ok(r.line())));
        let rest = futures::stream::unfold(Some(waiting), |waiting| async move {
            let mut waiting = waiting?;
            let reply = waiting.next().await?;
            let more = (!reply.ends()).then_some(waiting);
            Some((Ok::<_, worker::Error>(reply.line()), more))
        });
        let lines = first.chain(rest);
        lines_response(Response::from_stream(lines)?)
    }
}

impl DurableObject for Pairing {
    fn new(state: State, env: Env) -> Self {
        // Pings are answered by the runtime without waking the object: idle tabs cost nothing.
        if let Ok(pair) = WebSocketRequestResponsePair::new(PING, PONG) {
            state.set_websocket_auto_response(&pair);
        }
        // The tables are made on the first write (see TABLES), not here.
        let sockets = state.get_websockets();
        if let Some(tab) = sockets.iter().find_map(tab_of) {
            // A hash of the pairing id names it in the log without naming it.
            console_log!(
                "pairing {} woke with {} tabs",
                &sha256_hex(tab.pairing.as_bytes())[..8],
                sockets.len()
            );
        }
        let shared = Shared {
            room: RefCell::new(None),
            sockets: RefCell::new(HashMap::new()),
            askers: RefCell::new(HashMap::new()),
            last_asker: Cell::new(0),
            now: Cell::new(0),
            sql: state.storage().sql(),
            storage: state.storage(),
            env,
            tables: Cell::new(false),
        };
        Self { state, shared: Rc::new(shared) }
    }

    async fn fetch(&self, mut req: worker::Request) -> Result<Response> {
        self.room().await?;
        if req.headers().get("upgrade")?.is_some() {
            return self.accept_tab(&req).await;
        }
        match Request::decode(&req.bytes().await?) {
            Ok(request) => self.request(request).await,
            Err(_) => Response::error("Not a request to the pairing.", 400),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        self.room().await?;
        let Some(tab) = tab_of(&ws) else { return Ok(()) };
        let text = match message {
            WebSocketIncomingMessage::String(text) => Some(text),
            WebSocketIncomingMessage::Binary(_) => None,
        };
        self.run(Input::Message { tab: tab.number, text }).await
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        _code: usize,
        _reason: String,
        _was_clean: bool,
    ) -> Result<()> {
        self.closed(&ws).await?;
        let _ = ws.close(Some(1000), Some("Closed."));
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        self.closed(&ws).await
    }

    async fn alarm(&self) -> Result<Response> {
        self.room().await?;
        self.run(Input::Timeout).await?;
        Response::ok("checked")
    }
}
