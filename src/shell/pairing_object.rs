//! The Durable Object of one pairing: holds its tabs' hibernatable WebSockets, sends each call
//! to the tab the core routes it to, and carries the answer back to the waiting request.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::{select, Either};
use futures::StreamExt as _;
use serde_json::Value;
use tabrelay_bundle::fields::FromValue;
use tabrelay_bundle::protocol::{
    close, RelayMessage, ToolList, MAX_MESSAGE_BYTES, PING, PONG, PROTOCOL_VERSION,
};
use worker::worker_sys::ext::WebSocketExt as _;
use worker::worker_sys::WebSocketRequestResponsePair;
use worker::{
    console_log, durable_object, Delay, DurableObject, Env, Response, Result, SqlStorage,
    SqlStorageValue, State, WebSocket, WebSocketIncomingMessage, WebSocketPair,
};

use super::{ask_code, catalogue, from_json, now_ms, routes, texts, PlatformRandom};
use crate::crypto::sha256_hex;
use crate::http;
use crate::limits::{KEEP_ALIVE_MS, MAX_LISTENERS, TAB_CALL_WAIT_MS, USED_GRANULARITY_MS};
use crate::oauth::connect::{refusal, Command};
use crate::pairing::codes;
use crate::pairing::grants::{self, Grant, Refreshed};
use crate::pairing::wire::{
    CallEvent, CallReply, CallRequest, GrantReply, GrantRequest, ListenEvent, RefreshReply,
    RefreshRequest, Reply, Request, RevokeRequest, Want,
};
use crate::pairing::{
    next_check, route, socket_key, sockets_to_close, Calls, Tab, TabAction, TabsStatus, Turns,
    WrongCodes,
};
use crate::{sentences, tools};

/// The pairing's tables. They are made on the object's first write, not when it starts, so an
/// object that is only asked about what it never stored (a revocation or refresh of an unknown
/// grant) stores nothing; a read of a table not made yet fails, which reads as nothing stored.
const TABLES: [&str; 5] = [
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
];

/// One browser's pairing.
#[durable_object]
pub struct Pairing {
    state: State,
    env: Env,
    /// The waiting calls, shared with their waiters (a streamed answer outlives `fetch`).
    shared: Rc<Shared>,
    /// The last tab number given, so numbers grow even within one millisecond.
    last_tab: RefCell<u64>,
    /// Whether [`TABLES`] were made (or found made) by this instance.
    tables: Cell<bool>,
}

/// What the object and its calls' waiters share.
#[derive(Default)]
struct Shared {
    /// Which calls wait on which tab (the pure core's registry).
    calls: RefCell<Calls>,
    /// Where each waiting call's updates go.
    updates: RefCell<HashMap<u64, mpsc::UnboundedSender<CallEvent>>>,
    /// The `/listen` streams, told when the focused tab's tool list changes.
    listeners: RefCell<Vec<mpsc::UnboundedSender<ListenEvent>>>,
}

impl Shared {
    /// Whether anyone listens for changes (streams whose listener went away are dropped).
    fn listening(&self) -> bool {
        let mut listeners = self.listeners.borrow_mut();
        listeners.retain(|l| !l.is_closed());
        !listeners.is_empty()
    }

    /// Tells every listener the focused tab's tool list changed.
    fn tools_changed(&self) {
        self.listeners.borrow_mut().retain(|l| l.unbounded_send(ListenEvent::ToolsChanged).is_ok());
    }

    /// Sends an update to call `id`'s waiter; `Done` is its last.
    fn update(&self, id: u64, event: CallEvent) {
        let done = matches!(event, CallEvent::Done(_));
        let sender = if done {
            self.updates.borrow_mut().remove(&id)
        } else {
            self.updates.borrow().get(&id).cloned()
        };
        if let Some(sender) = sender {
            let _ = sender.unbounded_send(event);
        }
    }
}

/// One call waiting for its tab, from the request's side. Dropped before its answer (the agent
/// stopped listening), it tells the tab to drop the call.
struct Waiter {
    id: u64,
    tab: WebSocket,
    shared: Rc<Shared>,
    events: mpsc::UnboundedReceiver<CallEvent>,
    deadline_ms: u64,
    wait_ms: u64,
    finished: bool,
}

impl Waiter {
    /// The next event: an update from the tab, a tick every [`KEEP_ALIVE_MS`] when `ticking`,
    /// or at the deadline the relay's answer.
    async fn next(&mut self, ticking: bool) -> CallEvent {
        let left = self.deadline_ms.saturating_sub(now_ms());
        let timer = if ticking { left.min(KEEP_ALIVE_MS) } else { left };
        let event =
            match select(self.events.next(), Box::pin(Delay::from(Duration::from_millis(timer))))
                .await
            {
                Either::Left((Some(event), _)) => event,
                Either::Left((None, _)) => {
                    CallEvent::Done(CallReply::not_carried(sentences::TAB_GONE))
                }
                Either::Right(_) if timer < left => CallEvent::Tick,
                Either::Right(_) => {
                    let gave_up = self.shared.calls.borrow_mut().give_up(self.id, self.wait_ms);
                    self.shared.updates.borrow_mut().remove(&self.id);
                    if gave_up.cancel_in.is_some() {
                        Pairing::send(&self.tab, &RelayMessage::Cancel { id: self.id });
                    }
                    CallEvent::Done(CallReply::not_carried(gave_up.sentence))
                }
            };
        self.finished = matches!(event, CallEvent::Done(_));
        event
    }

    /// The answer, ignoring what comes before it.
    async fn answer(mut self) -> CallReply {
        loop {
            if let CallEvent::Done(answer) = self.next(false).await {
                return answer;
            }
        }
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if !self.finished {
            self.shared.updates.borrow_mut().remove(&self.id);
            if self.shared.calls.borrow_mut().abandon(self.id).is_some() {
                Pairing::send(&self.tab, &RelayMessage::Cancel { id: self.id });
            }
        }
    }
}

/// A reply as the object's response: its one line.
fn reply(reply: &Reply) -> Result<Response> {
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

fn attach(ws: &WebSocket, tab: &Tab) -> Result<()> {
    let text = serde_json::to_string(tab).unwrap_or_default();
    ws.as_ref().serialize_attachment(text.into()).map_err(worker::Error::from)
}

/// An alarm time `at_ms` (since the epoch). worker's `set_alarm` takes a bare number as an
/// offset from now, not a time: the first hello deadline was set that way, decades ahead.
fn alarm_at(at_ms: u64) -> worker::ScheduledTime {
    worker::ScheduledTime::new(worker::js_sys::Date::new(&(at_ms as f64).into()))
}

impl Pairing {
    fn tabs(&self) -> Vec<(WebSocket, Tab)> {
        self.state
            .get_websockets()
            .into_iter()
            .filter_map(|ws| tab_of(&ws).map(|t| (ws, t)))
            .collect()
    }

    /// The tabs whose sockets are open (not closing): what the bounds count.
    fn open_tabs(&self) -> Vec<(WebSocket, Tab)> {
        let mut tabs = self.tabs();
        tabs.retain(|(ws, _)| ws.as_ref().ready_state() == worker::web_sys::WebSocket::OPEN);
        tabs
    }

    /// Makes sure the alarm rings when the sockets still to prove themselves next need it.
    async fn watch_hellos(&self) -> Result<()> {
        let tabs = self.open_tabs();
        let Some(at) = next_check(tabs.iter().map(|(_, t)| t), now_ms()) else { return Ok(()) };
        let storage = self.state.storage();
        if storage.get_alarm().await?.is_none_or(|set| set > at as i64) {
            storage.set_alarm(alarm_at(at)).await?;
        }
        Ok(())
    }

    fn send(ws: &WebSocket, message: &RelayMessage) {
        // A socket that just closed fails its calls through websocket_close.
        let _ = ws.send_with_str(message.to_text());
    }

    /// The storage to write to, its tables made first if this instance has not yet: every write
    /// goes through here, so the tables come with the first write and never before.
    fn writable(&self) -> Result<SqlStorage> {
        let sql = self.state.storage().sql();
        if !self.tables.get() {
            for table in TABLES {
                sql.exec(table, None)?;
            }
            self.tables.set(true);
        }
        Ok(sql)
    }

    /// The JSON values a query selects as `v`, read; rows that do not read are skipped (and a
    /// table not made yet reads as no rows).
    fn values<T: FromValue>(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Vec<T> {
        let rows = self.state.storage().sql().exec(query, bindings).map(|c| texts(c, "v"));
        rows.unwrap_or_default().iter().filter_map(|v| from_json(v.as_bytes())).collect()
    }

    /// Whether a requestState (by its key) comes back for the first time; it is kept as used
    /// until it expires. Expired ones are dropped first.
    fn first_use(&self, key: &str, expires_ms: u64) -> bool {
        let Ok(sql) = self.writable() else { return false };
        let now = now_ms() as i64;
        let _ = sql.exec("DELETE FROM used_states WHERE expires < ?", vec![now.into()]);
        let inserted = sql.exec(
            "INSERT INTO used_states (key, expires) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key",
            vec![key.into(), (expires_ms as i64).into()],
        );
        inserted.is_ok_and(|rows| texts(rows, "key").len() == 1)
    }

    /// A small value kept in the pairing's storage under `key`.
    fn meta<T: FromValue>(&self, key: &str) -> Option<T> {
        self.values("SELECT v FROM meta WHERE k = ?", vec![key.into()]).pop()
    }

    fn store_meta(&self, key: &str, value: &impl serde::Serialize) {
        let v = serde_json::to_string(value).unwrap_or_default();
        // Losing a turn boundary or a wrong-code count is harmless; the call goes on.
        let _ = self.writable().and_then(|sql| {
            sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", vec![key.into(), v.into()])
        });
    }

    fn turns(&self) -> Turns {
        self.meta("turns").unwrap_or_default()
    }

    fn store_turns(&self, turns: &Turns) {
        self.store_meta("turns", turns);
    }

    /// The tab focused last, leaving out the one whose socket is closing.
    fn focused(&self, leaving: Option<u64>) -> Option<Tab> {
        let tabs = self.tabs();
        route(tabs.iter().map(|(_, t)| t).filter(|t| Some(t.number) != leaving)).cloned()
    }

    /// The tool list tab `number` stated, as its JSON.
    fn tools_of(&self, number: u64) -> Option<Value> {
        let query = "SELECT tools AS v FROM tab_state WHERE tab = ? AND tools IS NOT NULL";
        self.values(query, vec![number.to_string().into()]).pop()
    }

    /// The dataset tab `number` said it shows.
    fn dataset_of(&self, number: u64) -> Option<String> {
        let query = "SELECT dataset AS v FROM tab_state WHERE tab = ? AND dataset IS NOT NULL";
        let said: Option<Value> = self.values(query, vec![number.to_string().into()]).pop();
        said.and_then(|v| v.as_str().map(str::to_owned))
    }

    /// The focused tab's tool list, read (None: no tab, or it stated none).
    fn focused_list(&self, focused: Option<&Tab>) -> Option<ToolList> {
        focused.and_then(|t| self.tools_of(t.number)).and_then(|v| ToolList::read(&v).ok())
    }

    /// Keeps what a tab stated (its tool list when `tools`, else its dataset's name; `json` is
    /// its JSON text), and drops what tabs no longer connected stated.
    fn store_tab_state(&self, number: u64, tools: bool, json: String) -> Result<()> {
        let query = if tools {
            "INSERT INTO tab_state (tab, tools) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET tools = ?2"
        } else {
            "INSERT INTO tab_state (tab, dataset) VALUES (?1, ?2) ON CONFLICT(tab) DO UPDATE SET dataset = ?2"
        };
        let sql = self.writable()?;
        sql.exec(query, vec![number.to_string().into(), json.into()])?;
        let live: Vec<u64> = self.tabs().iter().map(|(_, t)| t.number).collect();
        // Read as JSON values, as the rest of what tabs state (one reader less in the Worker).
        let kept: Vec<Value> = self.values("SELECT tab AS v FROM tab_state", Vec::new());
        for gone in kept.iter().filter_map(Value::as_u64).filter(|n| !live.contains(n)) {
            self.forget_tab_state(gone);
        }
        Ok(())
    }

    fn forget_tab_state(&self, number: u64) {
        // A row left behind is dropped at the next write; nothing reads a gone tab's row. With
        // no tables made yet there is no row (the delete fails harmlessly).
        let _ = self
            .state
            .storage()
            .sql()
            .exec("DELETE FROM tab_state WHERE tab = ?", vec![number.to_string().into()]);
    }

    /// The pairing's reply to a check of a live grant: nothing more, the tool list agents see,
    /// or the `status` tool's result.
    fn check_reply(&self, want: Want) -> Reply {
        let focused = self.focused(None);
        let list = || self.focused_list(focused.as_ref());
        match want {
            Want::Tools => Reply::Tools(tools::list(list().as_ref(), catalogue())),
            Want::Status => {
                let dataset = focused.as_ref().and_then(|t| self.dataset_of(t.number));
                let tabs = self.tabs();
                let status = TabsStatus::of(tabs.iter().map(|(_, t)| t), list().as_ref(), dataset);
                Reply::Status(tools::status_result(&status))
            }
            Want::Nothing => Reply::Done,
        }
    }

    /// A stream of [`ListenEvent`] lines: a keep-alive at once and every [`KEEP_ALIVE_MS`], and
    /// a line each time the focused tab's tool list changes, until the listener goes away.
    fn listen(&self) -> Result<Response> {
        if self.shared.listening() && self.shared.listeners.borrow().len() >= MAX_LISTENERS {
            return reply(&Reply::TooManyListeners);
        }
        let (sender, events) = mpsc::unbounded();
        self.shared.listeners.borrow_mut().push(sender);
        let lines = futures::stream::unfold((events, true), |(mut events, first)| async move {
            let event = if first {
                ListenEvent::Tick
            } else {
                let tick = Box::pin(Delay::from(Duration::from_millis(KEEP_ALIVE_MS)));
                match select(events.next(), tick).await {
                    Either::Left((Some(event), _)) => event,
                    Either::Left((None, _)) => return None,
                    Either::Right(_) => ListenEvent::Tick,
                }
            };
            Some((Ok::<_, worker::Error>(Reply::Listen(event).line()), (events, false)))
        });
        lines_response(Response::from_stream(lines)?)
    }

    fn grants(&self) -> Vec<Grant> {
        self.values("SELECT body AS v FROM grants ORDER BY rowid", Vec::new())
    }

    fn grant(&self, id: &str) -> Option<Grant> {
        self.values("SELECT body AS v FROM grants WHERE id = ?", vec![id.into()]).pop()
    }

    fn store_grant(&self, grant: &Grant) -> Result<()> {
        let body = serde_json::to_string(grant).unwrap_or_default();
        self.writable()?.exec(
            "INSERT INTO grants (id, body) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET body = ?2",
            vec![grant.id.as_str().into(), body.into()],
        )?;
        Ok(())
    }

    fn delete_grant(&self, id: &str) -> Result<()> {
        self.writable()?.exec("DELETE FROM grants WHERE id = ?", vec![id.into()])?;
        Ok(())
    }

    /// The stored grants, those unused for too long dropped first.
    fn live_grants(&self) -> Result<Vec<Grant>> {
        let mut stored = self.grants();
        let gone = grants::expired(&stored, now_ms());
        for id in &gone {
            self.delete_grant(id)?;
        }
        stored.retain(|g| !gone.contains(&g.id));
        Ok(stored)
    }

    /// The grants revoked by a replay of their authorization code, with the time each is kept.
    fn replayed(&self, id: &str) -> Vec<(String, u64)> {
        let query = "SELECT CAST(until AS TEXT) AS v FROM replayed WHERE id = ?";
        let found: Vec<Value> = self.values(query, vec![id.into()]);
        found.iter().filter_map(Value::as_u64).map(|until| (id.to_owned(), until)).collect()
    }

    /// The authorization code that makes grant `id` was replayed: the grant is revoked now, and
    /// refused if its creation (by the first redemption, racing this) comes later.
    fn revoke_replayed(&self, id: &str) -> Result<()> {
        let sql = self.writable()?;
        let now = now_ms() as i64;
        sql.exec("DELETE FROM replayed WHERE until <= ?", vec![now.into()])?;
        let until = now + crate::limits::REPLAYED_KEPT_MS as i64;
        sql.exec(
            "INSERT OR REPLACE INTO replayed (id, until) VALUES (?, ?)",
            vec![id.into(), until.into()],
        )?;
        self.delete_grant(id)
    }

    /// A new grant for a redeemed code; it removes no other. Refused when the pairing holds the
    /// most it keeps, or when its code was replayed first (see [`Self::revoke_replayed`]).
    fn new_grant(&self, request: GrantRequest) -> Result<GrantReply> {
        if !grants::may_make(&request.id, &self.replayed(&request.id), now_ms()) {
            return Ok(GrantReply::Replayed);
        }
        if !grants::has_room(&self.live_grants()?, now_ms()) {
            return Ok(GrantReply::Full);
        }
        let (mut grant, secret) = Grant::new(
            request.id,
            request.client_id,
            request.client_name,
            request.host,
            now_ms(),
            &mut PlatformRandom,
        );
        grant.place = request.place;
        self.store_grant(&grant)?;
        Ok(GrantReply::Made { grant: grant.id, secret })
    }

    /// A refresh, serialised here: rotation, the retry grace, and reuse revoking the grant.
    fn refresh(&self, request: RefreshRequest) -> Result<RefreshReply> {
        let refused = |d: &str| RefreshReply::Refused { description: d.to_owned() };
        let Some(grant) = self.grant(&request.grant).filter(|g| g.client_id == request.client_id)
        else {
            return Ok(refused(sentences::REFRESH_REFUSED));
        };
        Ok(match grant.refresh(&request.secret, now_ms(), &mut PlatformRandom) {
            Refreshed::Rotated { grant, secret } => {
                self.store_grant(&grant)?;
                RefreshReply::Rotated { secret, client_name: grant.client_name, host: grant.host }
            }
            Refreshed::Reused => {
                self.delete_grant(&request.grant)?;
                refused(sentences::REFRESH_REUSED)
            }
            Refreshed::Unknown => refused(sentences::REFRESH_REFUSED),
        })
    }

    fn revoke(&self, request: &RevokeRequest) -> Result<()> {
        let known = self.grant(&request.grant).is_some_and(|g| match &request.secret {
            Some(secret) => g.issued(secret),
            None => true, // an access token naming it was verified by the Worker
        });
        if known {
            self.delete_grant(&request.grant)?;
        }
        Ok(())
    }

    fn send_connections(&self, ws: &WebSocket) {
        let list = self.live_grants().unwrap_or_default().iter().map(Grant::info).collect();
        Self::send(ws, &RelayMessage::Connections { list });
    }

    /// Takes a tab's socket: its first message is a fresh challenge. (The alarm closes the
    /// oldest of the sockets still to prove themselves when too many wait.)
    fn accept_tab(&self, url: &str) -> Result<Response> {
        let pair = WebSocketPair::new()?;
        let key = match socket_key(&http::query_of(url)) {
            Ok(key) => key,
            Err((code, reason)) => {
                // The Worker checked the key before naming this object by it.
                pair.server.accept()?;
                pair.server.close(Some(code), Some(reason))?;
                return Response::from_websocket(pair.client);
            }
        };
        let now = now_ms();
        let number = {
            let mut last = self.last_tab.borrow_mut();
            *last = (*last + 1).max(now * 1024);
            *last
        };
        let admitted = Tab::admit(&key, http::origin_of(url), number, now, &mut PlatformRandom);
        self.state.accept_web_socket(&pair.server);
        attach(&pair.server, &admitted.tab)?;
        Self::send(&pair.server, &admitted.first);
        Response::from_websocket(pair.client)
    }

    /// Checks a hello's proof (the runtime's WebCrypto), then what the core makes of the answer.
    async fn prove(
        &self,
        ws: &WebSocket,
        checking: Tab,
        proof: crate::pairing::Proof,
    ) -> Result<TabAction> {
        // The challenge is used before the check: a second hello meanwhile proves nothing.
        attach(ws, &checking)?;
        let valid = super::webcrypto::verify(&proof).await;
        if ws.as_ref().ready_state() != worker::web_sys::WebSocket::OPEN {
            return Ok(TabAction::Ignore); // closed meanwhile (it made room, say)
        }
        let proven = self
            .open_tabs()
            .iter()
            .filter(|(_, t)| t.proven && t.number != checking.number)
            .count();
        Ok(checking.proved(valid, now_ms(), proven))
    }

    async fn call(&self, call: CallRequest) -> Result<Response> {
        // A forgotten or revoked connection's access token stops at once.
        let Some(mut grant) = self.grant(&call.connection.id) else {
            return reply(&Reply::NoGrant);
        };
        if now_ms() >= grant.used_ms + USED_GRANULARITY_MS {
            grant.used_ms = now_ms();
            self.store_grant(&grant)?;
        }
        let tabs = self.tabs();
        let chosen = route(tabs.iter().map(|(_, t)| t));
        let stated = self.focused_list(chosen);
        if !tools::known(stated.as_ref(), catalogue(), &call.tool) {
            return reply(&Reply::Call(CallEvent::Done(CallReply::NoSuchTool { tool: call.tool })));
        }
        let chosen = chosen.map(|t| t.number);
        let Some((ws, tab)) = chosen.and_then(|n| tabs.iter().find(|(_, t)| t.number == n)) else {
            return reply(&Reply::Call(CallEvent::Done(CallReply::not_carried(sentences::NO_TAB))));
        };
        let now = now_ms();
        let started = self.shared.calls.borrow_mut().start(tab.number, now, call.request.clone());
        let id = match started {
            Ok(id) => id,
            Err(sentence) => {
                return reply(&Reply::Call(CallEvent::Done(CallReply::not_carried(sentence))))
            }
        };
        let mut turns = self.turns();
        let turn = turns.of_call(&call.connection.id, now);
        self.store_turns(&turns);
        let (updates, events) = mpsc::unbounded();
        self.shared.updates.borrow_mut().insert(id, updates);
        Self::send(
            ws,
            &RelayMessage::Call {
                id,
                tool: call.tool,
                args: call.args,
                agent: call.agent,
                connection: call.connection,
                turn,
                input: call.input,
            },
        );
        let wait_ms = call.wait_ms.min(TAB_CALL_WAIT_MS);
        let waiter = Waiter {
            id,
            tab: ws.clone(),
            shared: Rc::clone(&self.shared),
            events,
            deadline_ms: now + wait_ms,
            wait_ms,
            finished: false,
        };
        if !call.stream {
            return reply(&Reply::Call(CallEvent::Done(waiter.answer().await)));
        }
        // One JSON line per event until the answer; the Worker turns them into SSE.
        let lines = futures::stream::unfold(Some(waiter), |waiter| async move {
            let mut waiter = waiter?;
            let event = waiter.next(true).await;
            let rest = if matches!(event, CallEvent::Done(_)) { None } else { Some(waiter) };
            Some((Ok::<_, worker::Error>(Reply::Call(event).line()), rest))
        });
        lines_response(Response::from_stream(lines)?)
    }

    /// The agent cancelled a request: the tab drops the call, the waiter answers at once.
    fn cancel(&self, request: &str) {
        let found = self.shared.calls.borrow_mut().cancel(request);
        if let Some((id, tab)) = found {
            if let Some((ws, _)) = self.tabs().into_iter().find(|(_, t)| t.number == tab) {
                Self::send(&ws, &RelayMessage::Cancel { id });
            }
            self.shared.update(id, CallEvent::Done(CallReply::not_carried(sentences::CANCELLED)));
        }
    }

    /// Fails every call waiting on this tab: it went away, so nothing will answer them.
    fn tab_gone(&self, ws: &WebSocket) {
        let Some(tab) = tab_of(ws) else { return };
        let before = self.shared.listening().then(|| self.focused_tools_seen(None));
        self.forget_tab_state(tab.number);
        if before.is_some_and(|b| b != self.focused_tools_seen(Some(tab.number))) {
            self.shared.tools_changed();
        }
        let gone = self.shared.calls.borrow_mut().tab_gone(tab.number);
        for id in gone {
            self.shared.update(id, CallEvent::Done(CallReply::not_carried(sentences::TAB_GONE)));
        }
    }

    /// The focused tab's list as agents see it (None: the bundled one), to tell a change.
    fn focused_tools_seen(&self, leaving: Option<u64>) -> Option<Value> {
        self.focused(leaving).and_then(|t| self.tools_of(t.number))
    }

    /// Does what a tab's message means.
    async fn act(&self, ws: &WebSocket, tab: Tab, action: TabAction) -> Result<()> {
        match action {
            TabAction::Welcome(tab) => {
                attach(ws, &tab)?;
                Self::send(
                    ws,
                    &RelayMessage::Welcome { pairing: tab.pairing, protocol: PROTOCOL_VERSION },
                );
            }
            TabAction::Close(code, reason) => {
                let _ = ws.close(Some(code), Some(reason));
            }
            // Checked by `prove` before acting; a proof never reaches here.
            TabAction::Verify(..) => {}
            action @ (TabAction::Describe(_) | TabAction::Approve(_) | TabAction::Deny(_)) => {
                let message = self.code_command(&tab, &action).await.unwrap_or_else(|_| {
                    let code = match &action {
                        TabAction::Describe(c) | TabAction::Approve(c) | TabAction::Deny(c) => c,
                        _ => unreachable!("matched above"),
                    };
                    RelayMessage::Refused {
                        code: code.as_str().into(),
                        sentence: sentences::PAIRING_UNAVAILABLE.into(),
                    }
                });
                Self::send(ws, &message);
            }
            TabAction::RefuseCode(code, sentence) => {
                Self::send(ws, &RelayMessage::Refused { code, sentence: sentence.into() });
            }
            TabAction::Update(tab) => attach(ws, &tab)?,
            TabAction::Asking(id, sentence) => {
                let card = self.shared.calls.borrow_mut().asking(id, tab.number, &sentence);
                if let Some(card) = card {
                    self.shared.update(id, CallEvent::Asking(card));
                }
            }
            TabAction::Answered(id) => {
                if self.shared.calls.borrow_mut().answered(id, tab.number) {
                    self.shared.update(id, CallEvent::Answered);
                }
            }
            TabAction::ListConnections => self.send_connections(ws),
            TabAction::Forget(id) => {
                self.delete_grant(&id)?;
                self.send_connections(ws);
            }
            TabAction::PersonStep => {
                let mut turns = self.turns();
                turns.person_stepped();
                self.store_turns(&turns);
            }
            TabAction::Result(id, outcome) => {
                if self.shared.calls.borrow_mut().finish(id, tab.number) {
                    self.shared.update(id, CallEvent::Done(CallReply::TabResult { outcome }));
                }
            }
            TabAction::Tools(list) => {
                let json = serde_json::to_string(&list).unwrap_or_default();
                self.store_tab_state(tab.number, true, json)?;
            }
            TabAction::RefuseTools(sentence) => {
                Self::send(ws, &RelayMessage::ToolsRefused { sentence });
            }
            TabAction::View(dataset) => {
                let json = serde_json::to_string(&dataset).unwrap_or_default();
                self.store_tab_state(tab.number, false, json)?;
            }
            TabAction::Ignore => {}
        }
        Ok(())
    }

    fn wrong_codes(&self) -> WrongCodes {
        self.meta("wrong_codes").unwrap_or_default()
    }

    /// Asks a connect code's Durable Object to describe, approve or deny it for this pairing,
    /// within the pairing's allowance of wrong codes; the message for the tab.
    async fn code_command(&self, tab: &Tab, action: &TabAction) -> Result<RelayMessage> {
        let (code, command) = match action {
            TabAction::Describe(code) => (code, Command::Describe),
            TabAction::Approve(code) => (code, Command::Approve { pairing: tab.pairing.clone() }),
            TabAction::Deny(code) => (code, Command::Deny),
            _ => return Err(worker::Error::RustError("not a code action".into())),
        };
        let refused = |sentence: &str| RelayMessage::Refused {
            code: code.as_str().into(),
            sentence: sentence.into(),
        };
        let mut wrong = self.wrong_codes();
        if !wrong.allows(now_ms()) {
            return Ok(refused(sentences::TOO_MANY_WRONG_CODES));
        }
        // A code this relay did not make is wrong without asking any code's Durable Object.
        let issued = routes::config(&self.env).is_ok_and(|c| code.is_issued(&c.keys));
        if !issued {
            wrong.record(now_ms());
            self.store_meta("wrong_codes", &wrong);
            return Ok(refused(refusal::UNKNOWN));
        }
        if matches!(command, Command::Approve { .. })
            && !grants::has_room(&self.live_grants()?, now_ms())
        {
            // Approving never pushes out a connection: the person forgets one first.
            return Ok(refused(sentences::TOO_MANY_CONNECTIONS));
        }
        let reply = ask_code(&self.env, code, command.clone()).await?;
        let (message, wrong_code) = codes::told(code, &command, reply);
        if wrong_code {
            wrong.record(now_ms());
            self.store_meta("wrong_codes", &wrong);
        }
        Ok(message)
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
        Self {
            state,
            env,
            shared: Rc::new(Shared::default()),
            last_tab: RefCell::new(0),
            tables: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: worker::Request) -> Result<Response> {
        if req.headers().get("upgrade")?.is_some() {
            let res = self.accept_tab(&req.inner().url())?;
            // The alarm closes what is beyond the bound of sockets still to prove themselves
            // (at once), and each one not proven in time.
            self.watch_hellos().await?;
            return Ok(res);
        }
        let Some(request) = Request::decode(&req.bytes().await?) else {
            return Response::error("Not a request to the pairing.", 400);
        };
        let live = |grant: &str| self.grant(grant).is_some();
        match request {
            Request::Call(call) => self.call(call).await,
            Request::Check { grant, .. } | Request::Listen { grant } if !live(&grant) => {
                reply(&Reply::NoGrant)
            }
            Request::Check { want, .. } => reply(&self.check_reply(want)),
            Request::Listen { .. } => self.listen(),
            Request::UseState { key, expires_ms } if self.first_use(&key, expires_ms) => {
                reply(&Reply::Done)
            }
            Request::UseState { .. } => reply(&Reply::StateUsed),
            Request::Grant(request) => reply(&Reply::Grant(self.new_grant(request)?)),
            Request::Refresh(request) => reply(&Reply::Refresh(self.refresh(request)?)),
            Request::Revoke(request) => {
                self.revoke(&request)?;
                reply(&Reply::Done)
            }
            Request::Replayed { grant } => {
                self.revoke_replayed(&grant)?;
                reply(&Reply::Done)
            }
            Request::Cancel { request } => {
                self.cancel(&request);
                reply(&Reply::Done)
            }
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let text = match message {
            WebSocketIncomingMessage::String(t) if t.len() <= MAX_MESSAGE_BYTES => t,
            _ => {
                let _ = ws.close(
                    Some(close::PROTOCOL_ERROR),
                    Some("Messages must be JSON text within the size limit."),
                );
                self.tab_gone(&ws);
                return Ok(());
            }
        };
        let Some(tab) = tab_of(&ws) else { return Ok(()) };
        let mut action = tab.on_message(&text, now_ms());
        if let TabAction::Verify(checking, proof) = action {
            action = self.prove(&ws, checking, proof).await?;
        }
        // Only what can move the focus or change a list is worth comparing.
        let may_change =
            matches!(action, TabAction::Welcome(_) | TabAction::Update(_) | TabAction::Tools(_));
        let before = (may_change && self.shared.listening()).then(|| self.focused_tools_seen(None));
        self.act(&ws, tab, action).await?;
        if before.is_some_and(|b| b != self.focused_tools_seen(None)) {
            self.shared.tools_changed();
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        _code: usize,
        _reason: String,
        _was_clean: bool,
    ) -> Result<()> {
        self.tab_gone(&ws);
        let _ = ws.close(Some(1000), Some("Closed."));
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        self.tab_gone(&ws);
        Ok(())
    }

    async fn alarm(&self) -> Result<Response> {
        let now = now_ms();
        let mut open = self.open_tabs();
        let closing = sockets_to_close(open.iter().map(|(_, t)| t), now);
        open.retain(|(ws, t)| match closing.iter().find(|(n, _)| *n == t.number) {
            Some((_, (code, reason))) => {
                let _ = ws.close(Some(*code), Some(*reason));
                false
            }
            None => true,
        });
        if let Some(at) = next_check(open.iter().map(|(_, t)| t), now) {
            self.state.storage().set_alarm(alarm_at(at)).await?;
        }
        Response::ok("checked")
    }
}
