//! The pair harness, in the style of quinn-proto's `tests/util.rs` `Pair`: exchanges (the
//! Worker's half of a request) and the real pairing ([`Room`]) run together on one virtual
//! clock, each moved by the shells' one loop ([`machine::turn`]), every message between them
//! through the real wire encoding (a request's body as the object reads it, each reply as its
//! NDJSON line), with a scripted tab. Each test is one behaviour a client sees, from its request
//! to its last byte.

use std::collections::HashMap;

use serde_json::{json, Value};
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::fields::Message as _;
use tabrelay_bundle::protocol::PROTOCOL_VERSION;
use tabrelay_bundle::BUNDLE_DIGEST;

use super::{Body, Exchange, Input as ExchangeInput, Output, RequestHeaders, Response};
use crate::config::Config;
use crate::crypto::testing::Counter;
use crate::http::{self, HeaderLines};
use crate::limits::{FIRST_EVENT_WAIT_MS, KEEP_ALIVE_MS, PAIRING_LATE_MS, TOOL_LIST_WAIT_MS};
use crate::machine::{self, Machine};
use crate::oauth::connect::Requester;
use crate::oauth::token::{self, Access, Verified};
use crate::pairing::grants::Grant;
use crate::pairing::room::{Asker, Effect, Input, Room, Stated, Stored};
use crate::pairing::tabs::tests::{hello, key, signature, ORIGIN, SENDER};
use crate::pairing::wire::{Reply, Request};
use crate::sentences;

/// The relay's origin as clients address it.
const RELAY: &str = ORIGIN;

fn config() -> &'static Config {
    Box::leak(Box::new(Config::for_tests()))
}

fn catalogue() -> &'static Catalogue {
    Box::leak(Box::new(Catalogue::bundled()))
}

/// A tool of the bundled catalogue, whichever app's catalogue the relay is built with.
fn tool() -> String {
    Catalogue::bundled().tools[0].name.clone()
}

/// What a client saw of one exchange.
#[derive(Debug, Default)]
struct Seen {
    answer: Option<Response>,
    opened: bool,
    events: Vec<String>,
    /// When each event went out.
    times: Vec<u64>,
    ended: bool,
}

impl Seen {
    /// Every JSON-RPC message of the stream's events, in order, log messages included.
    fn all(&self) -> Vec<Value> {
        self.events
            .iter()
            .flat_map(|e| e.split("\n\n"))
            .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    }

    /// The stream's JSON-RPC messages but its log messages, in order.
    fn messages(&self) -> Vec<Value> {
        let log = |m: &Value| m["method"] == "notifications/message";
        self.all().into_iter().filter(|m| !log(m)).collect()
    }

    /// The log messages' texts (`notifications/message`, what the tab said), in order.
    fn logs(&self) -> Vec<String> {
        let log = |m: &Value| m["method"] == "notifications/message";
        let text = |m: Value| m["params"]["data"].as_str().map(str::to_owned);
        self.all().into_iter().filter(log).filter_map(text).collect()
    }

    /// The events' ids, in order (the priming event's too).
    fn ids(&self) -> Vec<String> {
        self.events
            .iter()
            .flat_map(|e| e.split("\n\n"))
            .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("id: ")))
            .map(str::to_owned)
            .collect()
    }

    /// The whole answer's JSON body.
    fn json(&self) -> (u16, Value) {
        match &self.answer {
            Some(Response { status, body: Body::Json(body), .. }) => (*status, body.clone()),
            other => panic!("no JSON answer: {other:?} ({self:?})"),
        }
    }
}

/// The real room in the one machine shape, its effects its outputs: the pair carries them out as
/// its object would, keeping what storage would hold itself ([`Pair::stored`]) so that an
/// evicted pairing reads it back.
struct RoomMachine {
    room: Room,
    effects: Vec<Effect>,
}

impl Machine for RoomMachine {
    type Input = Input;
    type Output = Effect;
    type Host<'h> = Counter;

    fn handle_input(&mut self, input: Input, now_ms: u64, rng: &mut Counter) {
        let mut effects = self.room.handle(input, now_ms, rng);
        self.effects.append(&mut effects);
    }

    fn poll_output(&mut self, _: &mut Counter) -> Option<Effect> {
        (!self.effects.is_empty()).then(|| self.effects.remove(0))
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.room.poll_timeout()
    }

    fn handle_timeout(&mut self, now_ms: u64, rng: &mut Counter) {
        self.handle_input(Input::Timeout, now_ms, rng);
    }
}

impl RoomMachine {
    fn new(config: &Config, catalogue: &'static Catalogue) -> Self {
        Self { room: Room::new(Some(config.keys.clone()), catalogue), effects: Vec::new() }
    }
}

/// One request to the endpoint: its exchange, its body and what its client saw.
struct Run {
    exchange: Exchange<'static>,
    body: Vec<u8>,
    /// The exchange's current ask of the pairing.
    asker: Option<Asker>,
    seen: Seen,
}

/// The pairing, a proven tab, a clock, and the lines each ask has not read yet.
struct Pair {
    room: RoomMachine,
    now: u64,
    rng: Counter,
    config: &'static Config,
    catalogue: &'static Catalogue,
    token: String,
    tab: u64,
    next_asker: Asker,
    /// Each ask's reply lines not read yet (None: its end).
    inbox: HashMap<Asker, Vec<Option<Vec<u8>>>>,
    /// What the tab was sent, as the JSON it reads.
    to_tab: Vec<Value>,
    /// What the pairing's storage holds (its rows, and the tabs' socket attachments), as a
    /// new object would read it back after an eviction.
    stored: Stored,
    /// The pairing has gone silent: it still runs, but nothing it says reaches the Worker (a
    /// request that hangs, as an object broken mid-request leaves it).
    silent: bool,
    /// The tokens the Worker's isolate verified (one for every exchange, as in the shell).
    tokens: Verified,
}

impl Pair {
    /// A pairing that holds grant `g1` and one proven tab, and a token of `g1`.
    fn new() -> Self {
        let catalogue = catalogue();
        let config = config();
        let mut pair = Self {
            room: RoomMachine::new(config, catalogue),
            now: 1_000_000,
            rng: Counter(1),
            config,
            catalogue,
            token: String::new(),
            tab: 0,
            next_asker: 0,
            inbox: HashMap::new(),
            to_tab: Vec::new(),
            stored: Stored::default(),
            silent: false,
            tokens: Verified::new(),
        };
        let requester = Requester {
            client_name: "Claude".into(),
            host: "claude.ai".into(),
            place: None,
            verified: None,
        };
        let grant = Grant::new("g1".into(), "cid".into(), requester, 1_000_000, &mut Counter(9)).0;
        pair.stored.grants.push(grant.clone());
        pair.room_input(Input::Woke(Stored { grants: vec![grant], ..Stored::default() }));
        let number = pair.room.room.next_tab_number(pair.now);
        let (pairing, origin, sender) = (key().pairing(), ORIGIN.into(), SENDER.into());
        pair.room_input(Input::Opened { number, pairing: pairing.clone(), origin, sender });
        pair.tab = number;
        let hello = hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST);
        pair.room_input(Input::Message { tab: number, text: Some(hello) });
        assert!(pair.to_tab.iter().any(|m| m["type"] == "welcome"), "{:?}", pair.to_tab);
        let access = Access {
            iss: RELAY.into(),
            aud: RELAY.into(),
            pairing,
            grant: "g1".into(),
            client: "Claude".into(),
            host: "claude.ai".into(),
        };
        pair.token = token::issue(&config.keys, access, pair.now);
        pair
    }

    fn room_input(&mut self, input: Input) {
        self.room_turn(Some(input));
    }

    /// One turn of the room ([`machine::turn`]): `input` (None: its timeout, if due), then
    /// every effect carried out.
    fn room_turn(&mut self, input: Option<Input>) {
        let mut effects = Vec::new();
        machine::turn(&mut self.room, input, self.now, &mut self.rng, |e| effects.push(e));
        self.carry(effects);
    }

    /// Carries out the room's effects as its object would (the pair keeps no storage).
    fn carry(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Reply(..) if self.silent => {}
                Effect::Reply(asker, reply) => {
                    let inbox = self.inbox.entry(asker).or_default();
                    inbox.push(Some(reply.line()));
                    if reply.ends() {
                        inbox.push(None);
                    }
                }
                Effect::Send(_, message) => {
                    self.to_tab.push(serde_json::from_str(&message.to_text()).unwrap())
                }
                Effect::Verify(tab, _) => self.room_input(Input::Proved { tab, valid: true }),
                Effect::Attach(tab) => {
                    self.stored.tabs.retain(|t| t.number != tab.number);
                    self.stored.tabs.push(tab);
                }
                Effect::StoreStated(tab, Stated::Tools(text)) => {
                    self.stored.stated.retain(|(n, _, _)| *n != tab);
                    self.stored.stated.push((tab, Some(text), None));
                }
                Effect::StoreTask(task) => {
                    // The row as the object stores it (JSON), read back as it reads it.
                    let row = crate::pairing::tasks::read(crate::crypto::testing::value_of(&task));
                    let row = row.expect("a task's row reads back");
                    self.stored.tasks.retain(|t| t.id != row.id);
                    self.stored.tasks.push(row);
                }
                Effect::DeleteTask(id) => self.stored.tasks.retain(|t| t.id != id),
                // The rows (JSON) read back as the object reads them.
                Effect::StoreLeft(left) => self.stored.left = read_row(&left),
                Effect::StoreTurns(turns) => self.stored.turns = read_row(&turns),
                _ => {}
            }
        }
    }

    /// The headers of a request with the pair's token.
    fn headers(&self, stream: bool) -> RequestHeaders {
        let accept =
            if stream { "application/json, text/event-stream" } else { "application/json" };
        RequestHeaders {
            authorization: Some(format!("Bearer {}", self.token)),
            accept: Some(accept.into()),
            ..RequestHeaders::default()
        }
    }

    /// A 2026-07-28 `subscriptions/listen` request numbered `id` asking for `params` (beside
    /// its `_meta`): its headers and body.
    fn listen(&self, id: u64, mut params: Value) -> (RequestHeaders, Value) {
        let mut headers = self.headers(true);
        headers.version = Some(crate::mcp::STATELESS_VERSION.into());
        headers.method = Some("subscriptions/listen".into());
        params["_meta"] = json!({
            crate::mcp::era::meta::PROTOCOL_VERSION: crate::mcp::STATELESS_VERSION,
            crate::mcp::era::meta::CLIENT_CAPABILITIES: {},
        });
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
        (headers, body)
    }

    /// The exchange of a POST with `headers` at `now`, not driven (its token verified afresh).
    fn exchange(&self, headers: RequestHeaders, now: u64) -> Exchange<'static> {
        Exchange::begin(headers, false, &Verified::new(), self.config, self.catalogue, RELAY, now)
    }

    /// A POST of `body` with `headers`, driven until it waits.
    fn post(&mut self, headers: RequestHeaders, body: Value) -> Run {
        let exchange = Exchange::begin(
            headers,
            false,
            &self.tokens,
            self.config,
            self.catalogue,
            RELAY,
            self.now,
        );
        let mut run = Run {
            exchange,
            body: body.to_string().into_bytes(),
            asker: None,
            seen: Seen::default(),
        };
        self.drive(&mut run);
        run
    }

    /// A GET taking up a dropped stream, driven until it waits.
    fn resume(&mut self, headers: RequestHeaders) -> Run {
        let exchange = Exchange::begin(
            headers,
            true,
            &self.tokens,
            self.config,
            self.catalogue,
            RELAY,
            self.now,
        );
        let mut run = Run { exchange, body: Vec::new(), asker: None, seen: Seen::default() };
        self.drive(&mut run);
        run
    }

    /// Moves `run` until it waits for the clock or for something outside it: the shells' loop
    /// ([`machine::turn`]): the next input (or its timeout, when due) given, every output
    /// carried out, then the next input (its body, or the pairing's next reply line).
    fn drive(&mut self, run: &mut Run) {
        let mut input = None;
        loop {
            let mut outputs = Vec::new();
            machine::turn(&mut run.exchange, input.take(), self.now, &mut (), |o| outputs.push(o));
            for output in outputs {
                match output {
                    Output::ReadBody(_) => {
                        input = Some(ExchangeInput::Body(Ok(std::mem::take(&mut run.body))));
                    }
                    Output::Ask(request) => self.ask(run, &request),
                    Output::Respond(answer) => run.seen.answer = Some(answer),
                    Output::Open => run.seen.opened = true,
                    Output::Send(text) => {
                        run.seen.events.push(text);
                        run.seen.times.push(self.now);
                    }
                    Output::End => run.seen.ended = true,
                }
            }
            if input.is_some() {
                continue;
            }
            let Some(asker) = run.asker else { return };
            let inbox = self.inbox.entry(asker).or_default();
            if inbox.is_empty() {
                return;
            }
            let reply = match inbox.remove(0) {
                // Through the wire: the line read back as the Worker reads it.
                Some(line) => Some(Reply::decode(&line).expect("a reply line reads back")),
                None => {
                    run.asker = None;
                    None
                }
            };
            input = Some(ExchangeInput::Reply(reply));
        }
    }

    /// The exchange asks the pairing: its request goes as the object's body, read back there.
    fn ask(&mut self, run: &mut Run, request: &Request) {
        if let Some(earlier) = run.asker.take() {
            // The Worker drops the earlier ask's replies: the object sees its waiter gone.
            self.room_input(Input::Gone { asker: earlier });
        }
        let request = Request::decode(&request.encode()).expect("a request reads back");
        self.next_asker += 1;
        run.asker = Some(self.next_asker);
        self.room_input(Input::Request { asker: self.next_asker, request, replayed: Vec::new() });
    }

    /// The client goes away: its stream is dropped, and with it the exchange's ask.
    fn drop_run(&mut self, run: Run) {
        if let Some(asker) = run.asker {
            self.room_input(Input::Gone { asker });
        }
    }

    /// `ms` pass: the exchanges' and the room's deadlines fire in order.
    fn later(&mut self, runs: &mut [&mut Run], ms: u64) {
        let until = self.now + ms;
        loop {
            for run in runs.iter_mut() {
                self.drive(run);
            }
            let exchange =
                machine::earliest(runs.iter().map(|r| Machine::poll_timeout(&r.exchange)));
            // The room's one timer table stands for its deadlines, ticks and alarm alike.
            let room = Machine::poll_timeout(&self.room);
            let Some(at) = machine::earliest([exchange, room]).filter(|at| *at <= until) else {
                break;
            };
            self.now = self.now.max(at);
            // The exchanges due take their timeouts as they are next driven (above).
            if exchange != Some(at) {
                self.room_turn(None);
            }
        }
        self.now = until;
        for run in runs.iter_mut() {
            self.drive(run);
        }
    }

    /// The pairing's object is evicted (what it held in memory is gone, its ask's replies
    /// with it) and a new one wakes with what storage holds; the tab's socket stays open.
    fn evict_and_wake(&mut self) {
        self.room = RoomMachine::new(self.config, self.catalogue);
        self.inbox.clear();
        self.room_input(Input::Woke(self.stored.clone()));
    }

    /// The tab says `text`; `runs` hear what comes of it.
    fn tab_says(&mut self, runs: &mut [&mut Run], text: &str) {
        self.room_input(Input::Message { tab: self.tab, text: Some(text.into()) });
        for run in runs.iter_mut() {
            self.drive(run);
        }
    }

    /// The id of the last call the tab was sent.
    fn last_call(&self) -> u64 {
        let call = self.to_tab.iter().rev().find(|m| m["type"] == "call");
        call.and_then(|m| m["id"].as_u64()).unwrap_or_else(|| panic!("no call: {:?}", self.to_tab))
    }
}

fn call_body(id: u64, meta: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool(), "arguments": {}, "_meta": meta}})
}

#[test]
fn a_call_answered_quickly_is_one_json_answer() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(1, json!({})));
    let call = pair.last_call();
    assert!(run.seen.answer.is_none() && !run.seen.opened, "waits for the tab");
    pair.later(&mut [&mut run], FIRST_EVENT_WAIT_MS / 2);
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"result","id":{call},"data":{{"rows":3}}}}"#),
    );
    let (status, body) = run.seen.json();
    assert_eq!(status, 200);
    assert_eq!(body["id"], 1);
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("rows"), "{body}");
    assert!(!run.seen.opened, "answered within the first wait: no stream");
    assert!(run.exchange.is_done());
}

#[test]
fn a_slow_call_streams_progress_on_the_exchanges_own_clock_then_its_answer() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(2, json!({"progressToken": "t"})));
    let call = pair.last_call();
    pair.later(&mut [&mut run], FIRST_EVENT_WAIT_MS);
    assert!(run.seen.opened && run.seen.answer.is_none(), "the stream opened: {:?}", run.seen);
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete 3 rows?"}}"#),
    );
    let asked = run.seen.messages();
    assert_eq!(asked[0]["method"], "notifications/progress");
    assert!(asked[0]["params"]["message"].as_str().unwrap().contains("Delete 3 rows?"));
    // Quiet for a while: the exchange speaks on its own clock (the pairing's ticks are not
    // needed), progress at least every so often.
    pair.later(&mut [&mut run], 3 * KEEP_ALIVE_MS);
    let progress = run.seen.messages();
    assert!(progress.len() >= 2, "progress while the person is asked: {:?}", run.seen.events);
    assert!(run.seen.events.len() >= 4, "something every KEEP_ALIVE_MS: {:?}", run.seen.events);
    pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"result","id":{call},"data":[1]}}"#));
    let last = run.seen.messages().pop().unwrap();
    assert_eq!(last["id"], 2);
    assert!(last["result"].is_object(), "{last}");
    assert!(run.seen.ended && run.exchange.is_done());
}

#[test]
fn a_tool_list_comes_from_the_tab_and_a_forgotten_connection_is_told_so() {
    let mut pair = Pair::new();
    let list = json!({"type": "tools", "tools": [{"name": "only_this", "inputSchema": {"type": "object"}, "setting": "runs"}]});
    pair.room_input(Input::Message { tab: pair.tab, text: Some(list.to_string()) });
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let run = pair.post(pair.headers(false), body.clone());
    let (status, answer) = run.seen.json();
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["tools"][0]["name"], "only_this", "{answer}");
    // The grant forgotten: every method stops at once (the grant-first rule), though the
    // Worker's isolate keeps the token as verified (`pair.tokens`): the pairing refuses it.
    let revoke = crate::pairing::wire::RevokeRequest { grant: "g1".into(), secret: None };
    pair.room_input(Input::Request {
        asker: 999,
        request: Request::Revoke(revoke),
        replayed: Vec::new(),
    });
    for body in [body, json!({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})] {
        let run = pair.post(pair.headers(false), body);
        assert_eq!(run.seen.answer.as_ref().map(|a| a.status), Some(401), "{:?}", run.seen);
    }
}

#[test]
fn a_tool_list_the_pairing_does_not_give_in_time_is_the_bundled_one() {
    let pair = Pair::new();
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let mut exchange = pair.exchange(pair.headers(false), 0);
    assert_eq!(exchange.poll_output(), Some(Output::ReadBody(crate::routes::body_cap("/"))));
    exchange.handle_body(Ok(body.to_string().into_bytes()), 0);
    assert!(matches!(exchange.poll_output(), Some(Output::Ask(Request::Check { .. }))));
    assert_eq!(exchange.poll_output(), None);
    assert_eq!(exchange.poll_timeout(), Some(TOOL_LIST_WAIT_MS));
    exchange.handle_timeout(TOOL_LIST_WAIT_MS);
    let Some(Output::Respond(Response { status: 200, body: Body::Json(answer), .. })) =
        exchange.poll_output()
    else {
        panic!("the bundled list")
    };
    let names: Vec<_> =
        answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    assert!(names.contains(&json!(tool())), "{answer}");
    // A reply too late changes nothing.
    exchange.handle_reply(Some(Reply::NoGrant), TOOL_LIST_WAIT_MS + 1);
    assert_eq!(exchange.poll_output(), None);
    assert!(exchange.is_done());
}

#[test]
fn a_batch_is_answered_message_by_message_without_reading_its_own_answers_back() {
    let mut pair = Pair::new();
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]);
    let run = pair.post(pair.headers(false), batch);
    let (status, answers) = run.seen.json();
    assert_eq!(status, 200);
    let ids: Vec<_> = answers.as_array().unwrap().iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2)], "the notification answers nothing");
    assert!(run.exchange.is_done());
}

#[test]
fn a_stranger_or_a_bad_token_gets_no_further_than_the_door() {
    let pair = Pair::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let strange =
        RequestHeaders { origin: Some("https://evil.example".into()), ..pair.headers(false) };
    let mut exchange = pair.exchange(strange, pair.now);
    let Some(Output::Respond(answer)) = exchange.poll_output() else { panic!("refused") };
    assert_eq!(answer.status, 403);
    let forged =
        RequestHeaders { authorization: Some("Bearer x.y.z".into()), ..pair.headers(false) };
    let mut exchange = pair.exchange(forged, pair.now);
    let Some(Output::Respond(answer)) = exchange.poll_output() else { panic!("refused") };
    assert_eq!(answer.status, 401);
    assert!(answer
        .headers
        .iter()
        .any(|(k, v)| *k == "www-authenticate" && v.contains("invalid_token")));
    assert_eq!(exchange.poll_output(), None, "the body is never read");
    let _ = body;
}

#[test]
fn a_task_handed_over_is_polled_until_its_result() {
    let mut pair = Pair::new();
    // The tool asks the person first, so a call of it may become a task.
    let list = json!({"type": "tools", "tools": [{"name": tool(), "inputSchema": {"type": "object"}, "setting": "asks"}]});
    pair.room_input(Input::Message { tab: pair.tab, text: Some(list.to_string()) });
    let mut headers = pair.headers(false);
    headers.version = Some("2025-11-25".into());
    let mut body = call_body(5, json!({}));
    body["params"]["task"] = json!({});
    let made = pair.post(headers.clone(), body);
    let (_, created) = made.seen.json();
    let task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("{created}"))
        .to_owned();
    let call = pair.last_call();
    let ask =
        json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/result", "params": {"taskId": task}});
    let mut result = pair.post(headers, ask);
    assert!(result.seen.answer.is_none(), "waits for the task");
    pair.later(&mut [&mut result], 3_000);
    assert!(result.seen.answer.is_none(), "still waiting");
    pair.tab_says(
        &mut [&mut result],
        &format!(r#"{{"type":"result","id":{call},"data":{{"rows":4}}}}"#),
    );
    pair.later(&mut [&mut result], 3_000);
    let (status, answer) = result.seen.json();
    assert_eq!(status, 200);
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("rows"), "{answer}");
}

#[test]
fn a_dropped_stream_is_taken_up_with_last_event_id() {
    let mut pair = Pair::new();
    let declared = crate::mcp::session::Declared::default();
    let session = crate::mcp::session::issue(&pair.config.keys, "g1", declared, "2025-11-25");
    let mut headers = pair.headers(true);
    headers.version = Some("2025-11-25".into());
    headers.session = Some(session);
    let mut run = pair.post(headers.clone(), call_body(7, json!({"progressToken": "t"})));
    let call = pair.last_call();
    pair.later(&mut [&mut run], FIRST_EVENT_WAIT_MS);
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete?"}}"#),
    );
    let seen = run.seen.ids();
    // The priming event, and the card said twice: logged, and as progress (the token).
    assert_eq!(seen.len(), 3, "the priming event and the card: {:?}", run.seen.events);
    assert!(run.seen.logs()[0].contains("Delete?"), "{:?}", run.seen.events);
    let card = seen[2].clone();
    pair.drop_run(run);
    // The tab answers while the client is away; the client comes back after the card.
    pair.tab_says(&mut [], &format!(r#"{{"type":"result","id":{call},"data":[9]}}"#));
    let back = RequestHeaders { last_event_id: Some(card.clone()), ..headers };
    let again = pair.resume(back);
    let messages = again.seen.messages();
    let last = messages.last().unwrap_or_else(|| panic!("{:?}", again.seen));
    assert_eq!(last["id"], 7);
    assert!(last["result"]["content"][0]["text"].as_str().unwrap().contains('9'), "{last}");
    assert!(again.seen.ended);
    let ids = again.seen.ids();
    let number = |id: &str| crate::mcp::resume::read_event_id(id).unwrap().number;
    assert!(ids.iter().all(|id| number(id) > number(&card)), "numbered on: {ids:?}");
    // Nothing to take up: 405.
    let none = RequestHeaders { last_event_id: Some(card), ..pair.headers(true) };
    let missing = pair.resume(none);
    assert_eq!(missing.seen.answer.as_ref().map(|a| a.status), Some(405));
}

#[test]
fn session_questions_are_asked_on_the_stream_and_the_answers_reach_the_tab() {
    let mut pair = Pair::new();
    let declared = crate::mcp::session::Declared { elicitation_form: true, ..Default::default() };
    let session = crate::mcp::session::issue(&pair.config.keys, "g1", declared, "2025-11-25");
    let mut headers = pair.headers(true);
    headers.version = Some("2025-11-25".into());
    headers.session = Some(session);
    let mut run = pair.post(headers.clone(), call_body(8, json!({})));
    let call = pair.last_call();
    let asks = json!({"type": "result", "id": call, "state": {"round": 1},
        "input_required": {"name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}}});
    pair.tab_says(&mut [&mut run], &asks.to_string());
    let question = run.seen.messages().pop().unwrap_or_else(|| panic!("{:?}", run.seen));
    assert_eq!(question["method"], "elicitation/create");
    let id = question["id"].clone();
    let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"name": "Ada"}}});
    let mut answered = pair.post(headers, answer);
    pair.drive(&mut run);
    assert_eq!(answered.seen.answer.as_ref().map(|a| a.status), Some(202), "{:?}", answered.seen);
    pair.drive(&mut answered);
    let again = pair.to_tab.iter().rev().find(|m| m["type"] == "call").unwrap().clone();
    assert_eq!(again["input"]["responses"]["name"]["content"]["name"], "Ada", "{again}");
    let call = again["id"].as_u64().unwrap();
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"result","id":{call},"data":"hello Ada"}}"#),
    );
    let last = run.seen.messages().pop().unwrap();
    assert_eq!(last["id"], 8);
    assert!(last["result"]["content"][0]["text"].as_str().unwrap().contains("Ada"), "{last}");
    assert!(run.seen.ended);
}

#[test]
fn a_tab_going_away_ends_a_waiting_call_with_a_sentence() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(9, json!({})));
    pair.later(&mut [&mut run], FIRST_EVENT_WAIT_MS);
    let tab = pair.tab;
    pair.room_input(Input::Closed { tab });
    pair.later(&mut [&mut run], 1);
    let last = run.seen.messages().pop().unwrap_or_else(|| panic!("{:?}", run.seen));
    assert_eq!(last["id"], 9);
    assert_eq!(last["result"]["isError"], true, "{last}");
    assert!(run.seen.ended);
    let _ = sentences::PAIRING_UNAVAILABLE;
}

#[test]
fn a_preflight_allows_the_param_headers_a_browser_asks_for_and_nothing_else_new() {
    let allowed = crate::routes::preflight_headers(Some(
        "Mcp-Param-Region, content-type, X-Other, mcp-param-, Mcp-Param-a b",
    ));
    let names: Vec<_> = allowed.split(", ").collect();
    assert!(names.contains(&"mcp-param-region"), "{allowed}");
    assert!(
        names.contains(&"authorization") && names.contains(&"mcp-method"),
        "the fixed ones stay"
    );
    for refused in ["x-other", "mcp-param-", "mcp-param-a b"] {
        assert!(!names.contains(&refused), "{refused} in {allowed}");
    }
    assert_eq!(crate::routes::preflight_headers(None), crate::routes::preflight_headers(Some("")));
}

#[test]
fn a_preflight_answer_does_not_grow_with_what_an_outsider_asks() {
    use crate::limits::{MAX_PREFLIGHT_PARAMS, MAX_PREFLIGHT_PARAM_NAME_BYTES};
    let fixed = crate::routes::preflight_headers(None);
    let many: Vec<String> = (0..1000).map(|i| format!("Mcp-Param-P{i}")).collect();
    let allowed = crate::routes::preflight_headers(Some(&many.join(",")));
    let params = allowed.split(", ").filter(|n| n.starts_with("mcp-param-")).count();
    assert_eq!(params, MAX_PREFLIGHT_PARAMS, "{allowed}");
    let same = vec!["Mcp-Param-Region"; 1000].join(",");
    assert_eq!(crate::routes::preflight_headers(Some(&same)), format!("{fixed}, mcp-param-region"));
    let long = format!("Mcp-Param-{}", "a".repeat(MAX_PREFLIGHT_PARAM_NAME_BYTES));
    assert_eq!(crate::routes::preflight_headers(Some(&long)), fixed, "a name past the bound");
}

#[test]
fn a_round_of_questions_not_answered_in_time_ends_the_call_with_a_sentence() {
    let mut pair = Pair::new();
    let declared = crate::mcp::session::Declared { elicitation_form: true, ..Default::default() };
    let session = crate::mcp::session::issue(&pair.config.keys, "g1", declared, "2025-11-25");
    let mut headers = pair.headers(true);
    headers.version = Some("2025-11-25".into());
    headers.session = Some(session);
    let mut run = pair.post(headers, call_body(10, json!({})));
    let call = pair.last_call();
    let asks = json!({"type": "result", "id": call,
        "input_required": {"name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object"}}}}});
    pair.tab_says(&mut [&mut run], &asks.to_string());
    assert_eq!(run.seen.messages().pop().unwrap()["method"], "elicitation/create");
    // No answer: the call's wait passes (kept alive meanwhile), then the call ends.
    pair.later(&mut [&mut run], pair.config.call_wait_ms - 1);
    assert!(!run.seen.ended, "still waiting for the answers");
    pair.later(&mut [&mut run], 1);
    let last = run.seen.messages().pop().unwrap();
    assert_eq!(last["id"], 10);
    assert_eq!(last["result"]["content"][0]["text"], sentences::QUESTIONS_UNANSWERED, "{last}");
    assert!(run.seen.ended);
}

#[test]
fn a_batch_from_a_forgotten_connection_answers_nothing_but_401() {
    let mut pair = Pair::new();
    let revoke = crate::pairing::wire::RevokeRequest { grant: "g1".into(), secret: None };
    pair.room_input(Input::Request {
        asker: 999,
        request: Request::Revoke(revoke),
        replayed: Vec::new(),
    });
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]);
    let run = pair.post(pair.headers(false), batch);
    let answer = run.seen.answer.as_ref().unwrap();
    assert_eq!(answer.status, 401, "{answer:?}");
    assert!(run.exchange.is_done());
}

#[test]
fn only_a_tools_call_reads_param_headers() {
    let lines = |method: &str| format!("mcp-method:{method}\nmcp-param-region:eu\nx-other:1\n");
    let call = RequestHeaders::read(HeaderLines(&lines("tools/call")));
    assert_eq!(call.params, json!({"region": "eu"}).as_object().unwrap().clone());
    assert_eq!(call.method.as_deref(), Some("tools/call"));
    let list = RequestHeaders::read(HeaderLines(&lines("tools/list")));
    assert!(list.params.is_empty());
}

#[test]
fn a_header_is_read_whole_and_by_its_whole_name() {
    let lines = "authorization:Bearer a:b\nmcp-name-x:no\nmcp-name:open_page\naccept:\n";
    let read = RequestHeaders::read(HeaderLines(lines));
    assert_eq!(read.authorization.as_deref(), Some("Bearer a:b"));
    assert_eq!(read.name.as_deref(), Some("open_page"));
    assert_eq!(read.accept.as_deref(), Some(""), "present, empty");
    assert_eq!(read.origin, None);
}

#[test]
fn a_task_outlives_an_eviction_and_its_result_is_read_from_the_woken_pairing() {
    let mut pair = Pair::new();
    let list = json!({"type": "tools", "tools": [{"name": tool(), "inputSchema": {"type": "object"}, "setting": "asks"}]});
    pair.room_input(Input::Message { tab: pair.tab, text: Some(list.to_string()) });
    let mut headers = pair.headers(false);
    headers.version = Some("2025-11-25".into());
    let mut body = call_body(11, json!({}));
    body["params"]["task"] = json!({});
    let made = pair.post(headers.clone(), body);
    let (_, created) = made.seen.json();
    let task = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
    let call = pair.last_call();
    pair.tab_says(
        &mut [],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete 3 rows?"}}"#),
    );
    // Evicted while the person decides; the client polls the woken pairing.
    pair.evict_and_wake();
    let ask =
        json!({"jsonrpc": "2.0", "id": 12, "method": "tasks/result", "params": {"taskId": task}});
    let mut result = pair.post(headers, ask);
    pair.later(&mut [&mut result], 2_000);
    assert!(result.seen.answer.is_none(), "still waiting: {:?}", result.seen);
    pair.tab_says(
        &mut [&mut result],
        &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":3}}}}"#),
    );
    pair.later(&mut [&mut result], 3_000);
    let (status, answer) = result.seen.json();
    assert_eq!(status, 200);
    assert!(
        answer["result"]["content"][0]["text"].as_str().unwrap().contains("deleted"),
        "{answer}"
    );
}

#[test]
fn a_wait_that_runs_out_after_the_person_answered_ends_the_call() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(13, json!({})));
    let call = pair.last_call();
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Rename?"}}"#),
    );
    pair.later(&mut [&mut run], 100);
    pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"answered","id":{call}}}"#));
    pair.later(&mut [&mut run], pair.config.call_wait_ms + 1_000);
    let last = run.seen.messages().pop().unwrap_or_else(|| panic!("{:?}", run.seen));
    assert_eq!(last["id"], 13, "{:?}", run.seen);
    assert!(run.seen.ended);
}

#[test]
fn a_call_the_person_decides_slowly_hears_progress_at_least_every_30_s_on_the_exchanges_clock() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(14, json!({"progressToken": 5})));
    let call = pair.last_call();
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete?"}}"#),
    );
    // The pairing sends no ticks here: every word after the card is the exchange's own.
    pair.later(&mut [&mut run], 200_000);
    pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"result","id":{call},"data":[1]}}"#));
    let progress: Vec<u64> = run
        .seen
        .events
        .iter()
        .zip(&run.seen.times)
        .filter(|(e, _)| e.contains("notifications/progress"))
        .map(|(_, at)| *at)
        .collect();
    assert!(progress.len() >= 200_000 / crate::limits::PROGRESS_AT_LEAST_EVERY_MS as usize);
    for pair in progress.windows(2) {
        assert!(pair[1] - pair[0] <= crate::limits::PROGRESS_AT_LEAST_EVERY_MS, "{progress:?}");
    }
    let quiet = run.seen.times.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(quiet <= KEEP_ALIVE_MS, "never quiet longer than the keep-alive: {quiet}");
    assert!(run.seen.ended);
}

#[test]
fn a_call_the_person_decides_hears_the_card_the_decision_and_the_result() {
    let mut pair = Pair::new();
    let mut run = pair.post(pair.headers(true), call_body(15, json!({"progressToken": "p"})));
    let call = pair.last_call();
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete?"}}"#),
    );
    pair.later(&mut [&mut run], 4_000);
    pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"answered","id":{call}}}"#));
    pair.tab_says(
        &mut [&mut run],
        &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":1}}}}"#),
    );
    let said: Vec<_> = run.seen.messages();
    assert!(said[0]["params"]["message"].as_str().unwrap().contains("Delete?"));
    assert_eq!(said[1]["params"]["message"], sentences::PERSON_ANSWERED);
    assert_eq!(said[1]["params"]["progress"], 2);
    assert!(said[2]["result"]["content"][0]["text"].as_str().unwrap().contains("deleted"));
    assert!(run.seen.ended);
}

#[test]
fn a_listener_hears_the_tool_list_change_and_keep_alives_on_the_exchanges_clock() {
    let mut pair = Pair::new();
    let (headers, body) = pair.listen(16, json!({"notifications": {"toolsListChanged": true}}));
    let mut run = pair.post(headers, body);
    assert!(run.seen.opened, "{:?}", run.seen);
    assert_eq!(run.seen.messages()[0]["method"], "notifications/subscriptions/acknowledged");
    let list = json!({"type": "tools", "tools": [{"name": "new_one", "inputSchema": {"type": "object"}, "setting": "runs"}]});
    pair.tab_says(&mut [&mut run], &list.to_string());
    assert_eq!(run.seen.messages()[1]["method"], "notifications/tools/list_changed");
    let before = run.seen.events.len();
    pair.later(&mut [&mut run], 2 * KEEP_ALIVE_MS);
    assert_eq!(run.seen.events.len(), before + 2, "a keep-alive every KEEP_ALIVE_MS of quiet");
    assert!(run.seen.events[before..].iter().all(|e| e == crate::mcp::KEEP_ALIVE));
    assert!(!run.seen.ended);
}

#[test]
fn a_pairing_gone_silent_holds_a_call_no_longer_than_its_wait_then_says_so() {
    let mut pair = Pair::new();
    pair.silent = true;
    // A call in one piece: the pairing's end is due by the call's wait.
    let mut whole = pair.post(pair.headers(false), call_body(1, json!({})));
    // A streamed one: the pairing ticks after every KEEP_ALIVE_MS of quiet.
    let mut streamed = pair.post(pair.headers(true), call_body(2, json!({})));
    let wait = pair.config.call_wait_ms;
    pair.later(&mut [&mut whole, &mut streamed], KEEP_ALIVE_MS + PAIRING_LATE_MS - 1);
    assert!(streamed.seen.opened && !streamed.seen.ended, "still waits: {:?}", streamed.seen);
    pair.later(&mut [&mut whole, &mut streamed], 1);
    let last = streamed.seen.messages().pop().unwrap();
    assert_eq!(last["id"], 2);
    assert_eq!(last["result"]["content"][0]["text"], sentences::PAIRING_UNAVAILABLE);
    assert!(streamed.seen.ended && streamed.exchange.is_done());
    // The one-piece call waits for the pairing's own end as long as it could come.
    let so_far = KEEP_ALIVE_MS + PAIRING_LATE_MS;
    pair.later(&mut [&mut whole], wait + PAIRING_LATE_MS - 1 - so_far);
    assert!(whole.seen.answer.is_none(), "still waits: {:?}", whole.seen);
    pair.later(&mut [&mut whole], 1);
    let (status, body) = whole.seen.json();
    assert_eq!((status, &body["id"]), (200, &json!(1)));
    assert_eq!(body["result"]["content"][0]["text"], sentences::PAIRING_UNAVAILABLE);
    assert!(body["result"]["isError"] == true && whole.exchange.is_done());
}

#[test]
fn a_pairing_that_answers_is_never_cut_off_by_the_exchanges_bound() {
    let mut pair = Pair::new();
    // A streamed call the person decides slowly: the pairing's ticks keep it alive past any
    // quiet bound, and its own end at the call's wait is what the client hears.
    let mut run = pair.post(pair.headers(true), call_body(3, json!({})));
    let call = pair.last_call();
    pair.later(&mut [&mut run], FIRST_EVENT_WAIT_MS);
    pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"asking","id":{call},"sentence":"Go?"}}"#));
    pair.later(&mut [&mut run], 4 * (KEEP_ALIVE_MS + PAIRING_LATE_MS));
    assert!(!run.seen.ended, "the pairing ticks: {:?}", run.seen.events);
    pair.later(&mut [&mut run], pair.config.call_wait_ms);
    let last = run.seen.messages().pop().unwrap();
    let text = last["result"]["content"][0]["text"].as_str().unwrap();
    assert_ne!(text, sentences::PAIRING_UNAVAILABLE, "the pairing's own end: {last}");
    assert!(run.seen.ended);
}

#[test]
fn a_listener_whose_pairing_goes_silent_is_ended_to_listen_again() {
    let mut pair = Pair::new();
    let (headers, body) = pair.listen(17, json!({"notifications": {"toolsListChanged": true}}));
    let mut run = pair.post(headers, body);
    assert!(run.seen.opened, "{:?}", run.seen);
    // The pairing ticks: the stream lives on long past any quiet bound.
    pair.later(&mut [&mut run], 4 * (KEEP_ALIVE_MS + PAIRING_LATE_MS));
    assert!(!run.seen.ended, "{:?}", run.seen.events);
    // Then it goes silent (its last tick at most KEEP_ALIVE_MS ago): the stream lives
    // PAIRING_LATE_MS more at least, then ends with the listen's result (the client listens
    // again), whatever the exchange's own keep-alives.
    pair.silent = true;
    pair.later(&mut [&mut run], PAIRING_LATE_MS - 1);
    assert!(!run.seen.ended, "{:?}", run.seen.events);
    pair.later(&mut [&mut run], KEEP_ALIVE_MS + 1);
    assert_eq!(run.seen.messages().last().unwrap()["id"], 17);
    assert!(run.seen.ended && run.exchange.is_done(), "{:?}", run.seen.events);
}

#[test]
fn an_answer_is_written_with_its_body_s_headers_then_the_exchange_s() {
    let answer = Response {
        status: 401,
        body: Body::Json(json!({"error": "invalid_token"})),
        headers: vec![("www-authenticate", "Bearer".into())],
    };
    let http = answer.http();
    assert_eq!(http.status, 401);
    assert_eq!(http.body.as_deref(), Some(&br#"{"error":"invalid_token"}"#[..]));
    assert_eq!(
        http.headers,
        vec![
            ("content-type", "application/json".into()),
            ("cache-control", "no-store".into()),
            ("www-authenticate", "Bearer".into())
        ]
    );
    let refused = Response { status: 405, body: Body::Text("No.".into()), headers: Vec::new() };
    assert_eq!(refused.http(), http::Answer::text(405, "No."));
    let empty = Response { status: 202, body: Body::Empty, headers: Vec::new() };
    assert_eq!(empty.http(), http::Answer::empty(202));
}

/// A stored row's JSON read back.
fn read_row<T: tabrelay_bundle::fields::FromValue>(json: &str) -> T {
    tabrelay_bundle::from_json(json.as_bytes()).expect("a stored row reads back")
}

#[test]
fn a_listener_forgotten_before_its_acknowledgement_is_refused_and_after_it_ended() {
    let pair = Pair::new();
    let (headers, body) = pair.listen(18, json!({}));
    let listen = || {
        let mut exchange = pair.exchange(headers.clone(), 0);
        assert!(matches!(exchange.poll_output(), Some(Output::ReadBody(_))));
        exchange.handle_body(Ok(body.to_string().into_bytes()), 0);
        assert!(matches!(exchange.poll_output(), Some(Output::Ask(Request::Listen { .. }))));
        exchange
    };
    // The grant gone before the pairing took the listen: 401, no stream.
    let mut early = listen();
    early.handle_reply(Some(Reply::NoGrant), 1);
    let answer = early.poll_output();
    assert!(matches!(answer, Some(Output::Respond(Response { status: 401, .. }))), "{answer:?}");
    // Once acknowledged, the stream ends with the listen's own result.
    let mut late = listen();
    late.handle_reply(Some(Reply::Listen(crate::pairing::wire::ListenEvent::Tick)), 1);
    assert_eq!(late.poll_output(), Some(Output::Open));
    assert!(matches!(late.poll_output(), Some(Output::Send(ack)) if ack.contains("acknowledged")));
    late.handle_reply(Some(Reply::NoGrant), 2);
    let Some(Output::Send(last)) = late.poll_output() else { panic!("the listen's end") };
    assert!(last.contains(r#""resultType":"complete""#), "{last}");
    assert_eq!(late.poll_output(), Some(Output::End));
}

#[test]
fn a_session_era_call_whose_mcp_method_header_disagrees_is_refused_before_the_tab() {
    // A gateway in front of the relay may route or filter by `Mcp-Method`: a session-era
    // request need not send it, but one that does is never run as another method.
    let mut pair = Pair::new();
    let declared = crate::mcp::session::Declared::default();
    let session = crate::mcp::session::issue(&pair.config.keys, "g1", declared, "2025-11-25");
    let calls = |pair: &Pair| pair.to_tab.iter().filter(|m| m["type"] == "call").count();
    let before = calls(&pair);
    for version in [Some("2025-11-25"), Some(crate::mcp::STATELESS_VERSION)] {
        let headers = RequestHeaders {
            version: version.map(str::to_owned),
            session: Some(session.clone()),
            method: Some("tools/list".into()),
            ..pair.headers(false)
        };
        let run = pair.post(headers, call_body(11, json!({})));
        let (status, body) = run.seen.json();
        assert_eq!((status, &body["error"]["code"]), (400, &json!(-32020)), "{body}");
        assert_eq!(body["id"], 11);
    }
    assert_eq!(calls(&pair), before, "the tab never heard of the call");
    // The header that agrees, or none: the call runs.
    for method in [Some("tools/call"), None] {
        let headers = RequestHeaders {
            version: Some("2025-11-25".into()),
            session: Some(session.clone()),
            method: method.map(str::to_owned),
            ..pair.headers(false)
        };
        let mut run = pair.post(headers, call_body(12, json!({})));
        let call = pair.last_call();
        pair.tab_says(&mut [&mut run], &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        let (status, body) = run.seen.json();
        assert_eq!((status, body["result"]["isError"].as_bool()), (200, Some(false)), "{body}");
    }
}

mod claude_traffic;
