//! The one loop: it waits for the next event (a stdin line, a tab's socket opening, speaking or
//! closing) or the earliest deadline any machine names, gives it to the machine it is for with
//! the one `now` read for it (a turn of the core's loop, [`machine::turn`]: every input, and
//! every timeout), then carries out what the machines said, in the order they said it, until
//! none says more ([`Local::pump`]). The machines are the relay's: an [`Exchange`] per stdin message, an
//! [`Object`] per pairing (browser), the OAuth sagas and connect code sessions of the consent
//! ([`crate::consent`]). Nothing here decides what the relay would decide. Several agent apps
//! may be served at once (the first's own stdio, and later ones joined on `/agent`), each its
//! own consent, session and output ([`Agent`], [`Local::enter`]).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead as _, Write as _};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tabrelay::config::Config;
use tabrelay::http::TooLarge;
use tabrelay::machine::{self, Machine, Platform};
use tabrelay::mcp::exchange::{
    Body, Exchange, Input as ExchangeInput, Output, RequestHeaders, Response,
};
use tabrelay::oauth::token::Verified;
use tabrelay::pairing::object::{Object, Output as ObjectOutput};
use tabrelay::pairing::room::{Asker, Input, Stored};
use tabrelay::pairing::wire::{Reply, Request};
use tabrelay::sql::{Bind, Failed, Rows, Sql};
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::protocol::{RelayMessage, TabMessage};

use crate::consent::Consent;
use crate::sockets::{self, Event, Writer};
use crate::OsRandom;

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Stdin's lines as they arrive in chunks, each bounded by `cap` bytes: a longer one is dropped
/// as it comes (never held past the cap and one chunk) and said to be too large.
#[derive(Debug)]
pub struct LineReader {
    cap: usize,
    line: Vec<u8>,
    over: bool,
}

impl LineReader {
    /// Lines of at most `cap` bytes.
    #[must_use]
    pub fn new(cap: usize) -> Self {
        Self { cap, line: Vec::new(), over: false }
    }

    /// Takes what of `chunk` it can: how many bytes it took, and the line they ended (blank
    /// lines are none).
    pub fn take(&mut self, chunk: &[u8]) -> (usize, Option<Result<Vec<u8>, TooLarge>>) {
        let (part, used, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        self.over |= self.line.len() + part.len() > self.cap;
        if !self.over {
            self.line.extend_from_slice(part);
        }
        if !ends {
            return (used, None);
        }
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.over) {
            return (used, Some(Err(TooLarge { cap: self.cap })));
        }
        let blank = line.iter().all(u8::is_ascii_whitespace);
        (used, (!blank).then_some(Ok(line)))
    }
}

/// Reads stdin line by line on its own thread, each line bounded by the endpoint's cap on a
/// body ([`tabrelay::routes::body_cap`], [`LineReader`]).
pub fn read_stdin(events: Sender<Event>) {
    std::thread::spawn(move || {
        let mut lines = LineReader::new(tabrelay::routes::body_cap("/"));
        let mut stdin = std::io::stdin().lock();
        loop {
            let (used, line) = match stdin.fill_buf() {
                Ok([]) | Err(_) => break,
                Ok(chunk) => lines.take(chunk),
            };
            stdin.consume(used);
            if let Some(line) = line {
                if events.send(Event::Line(line)).is_err() {
                    return;
                }
            }
        }
        let _ = events.send(Event::StdinClosed);
    });
}

/// A pairing's storage here: in memory, for as long as the server runs, but for its grants
/// and its presence credential, kept in the state directory ([`crate::state`]) so a connection outlives a run. The pairing
/// keeps in memory all it needs (its rows are read back only when it wakes, once, at its
/// making), so the other writes are dropped; a used `requestState` is remembered, since that
/// uniqueness is what its SQL answers.
#[derive(Default)]
pub struct Memory {
    used_states: std::collections::HashSet<String>,
    /// The grants' rows (id, body), in the order written.
    grants: Vec<(String, String)>,
    file: Option<std::path::PathBuf>,
    /// The `presence` meta row (the person's credential, as stored), and where it is kept.
    presence: Option<String>,
    presence_file: Option<std::path::PathBuf>,
}

impl Memory {
    /// The storage of a pairing whose grants are kept in `file`.
    pub fn kept_in(file: Option<std::path::PathBuf>) -> Self {
        let grants = crate::state::grants(file.as_deref());
        Self { used_states: std::collections::HashSet::new(), grants, file, ..Self::default() }
    }

    /// Keeps the pairing's presence credential in `file` too (read back from it now).
    #[must_use]
    pub fn presence_in(mut self, file: Option<std::path::PathBuf>) -> Self {
        self.presence = crate::state::presence(file.as_deref());
        self.presence_file = file;
        self
    }
}

/// The text bound at `i`.
fn text(bindings: &[Bind], i: usize) -> Option<String> {
    match bindings.get(i) {
        Some(Bind::Text(t)) => Some(t.clone()),
        _ => None,
    }
}

impl Sql for Memory {
    fn exec(&mut self, query: &str, bindings: Vec<Bind>) -> Result<Rows, Failed> {
        let before = self.grants.clone();
        if query.starts_with("INSERT INTO used_states") {
            if let Some(key) = text(&bindings, 0) {
                if self.used_states.insert(key.clone()) {
                    return Ok(vec![vec![Some(key)]]);
                }
            }
        } else if query.starts_with("INSERT INTO grants") {
            if let (Some(id), Some(body)) = (text(&bindings, 0), text(&bindings, 1)) {
                match self.grants.iter_mut().find(|(g, _)| *g == id) {
                    Some(row) => row.1 = body,
                    None => self.grants.push((id, body)),
                }
            }
        } else if query.starts_with("DELETE FROM grants WHERE id = ?") {
            let id = text(&bindings, 0);
            self.grants.retain(|(g, _)| Some(g) != id.as_ref());
        } else if query == "DROP TABLE IF EXISTS grants" {
            self.grants.clear();
        } else if query.starts_with("INSERT OR REPLACE INTO meta") {
            if let (Some("presence"), Some(row)) =
                (text(&bindings, 0).as_deref(), text(&bindings, 1))
            {
                crate::state::keep_presence(self.presence_file.as_deref(), Some(&row));
                self.presence = Some(row);
            }
        } else if query == "DROP TABLE IF EXISTS meta" {
            if self.presence.take().is_some() {
                crate::state::keep_presence(self.presence_file.as_deref(), None);
            }
        } else if query == "SELECT k, v FROM meta" {
            let row = self.presence.clone().map(|v| vec![Some("presence".to_owned()), Some(v)]);
            return Ok(row.into_iter().collect());
        } else if query == "SELECT body FROM grants ORDER BY rowid" {
            return Ok(self.grants.iter().map(|(_, body)| vec![Some(body.clone())]).collect());
        }
        if self.grants != before {
            crate::state::keep_grants(self.file.as_deref(), &self.grants);
        }
        Ok(Vec::new())
    }
}

/// One browser's pairing: its object, its alarm, and its tabs' sockets by tab number.
pub struct Pairing {
    pub object: Object,
    pub sql: Memory,
    alarm: Option<u64>,
    sockets: HashMap<u64, Writer>,
}

/// What a machine said in a turn, kept to be carried out in order ([`Local::pump`]): a
/// pairing's (by its id) or an exchange's (by its number).
enum Said {
    Pairing(String, ObjectOutput),
    Exchange(u64, Output),
}

/// An exchange (one stdin message) and its ask of a pairing in flight.
struct Running {
    /// Its number, as [`Said::Exchange`] names it.
    id: u64,
    exchange: Exchange<'static>,
    body: Option<Result<Vec<u8>, TooLarge>>,
    asking: Option<(String, Asker)>,
    /// What to do with its answer: write it (a client's message), or keep it (a replayed
    /// `initialize`, whose answer only names the session).
    replay: bool,
    /// The message as sent, answered as before the connection once it was forgotten (401).
    line: Option<Vec<u8>>,
    /// The agent app it is for.
    agent: u64,
}

/// An agent app served here, while another is the one served now ([`Local::enter`]): its
/// consent, the session its replayed `initialize` opened and its revision, and where it reads
/// (None: this process's stdout; else the socket of the `tabrelay-local` it started).
#[derive(Default)]
struct Agent {
    consent: Consent,
    session: Option<String>,
    version: Option<String>,
    out: Option<Writer>,
}

/// The agent app whose own stdio is this process's.
const OWN: u64 = 0;

thread_local! {
    /// Where the agent app served now reads (None: stdout), set by [`Local::enter`].
    static OUT: RefCell<Option<Writer>> = const { RefCell::new(None) };
}

/// The local server.
pub struct Local {
    pub config: &'static Config,
    pub catalogue: &'static Catalogue,
    /// The origin tokens name (`http://127.0.0.1:PORT`).
    pub origin: String,
    tokens: Verified,
    pub pairings: HashMap<String, Pairing>,
    /// Each socket: its pairing and tab number.
    conns: HashMap<u64, (String, u64)>,
    running: Vec<Running>,
    pub consent: Consent,
    /// The session the replayed `initialize` opened, and its revision.
    session: Option<String>,
    version: Option<String>,
    /// A saga's ask of a pairing: its asker, and the reply once it came.
    pub saga_ask: Option<(String, Asker, Option<Reply>)>,
    /// Where what outlives a run is kept (None: nothing is).
    pub state: Option<std::path::PathBuf>,
    /// The agent app served now (its consent, session and revision are the fields above), and
    /// the others, by id ([`OWN`], or their socket's number).
    agent: u64,
    agents: HashMap<u64, Agent>,
    /// Whether this process's own stdin ended (it serves the others until they end too).
    own_gone: bool,
    /// The cards asked about in the agent apps that can be asked ([`crate::elicit`]).
    cards: crate::elicit::Cards,
    /// What the machines said and is not carried out yet, in order.
    said: VecDeque<Said>,
    /// The number of the last exchange made.
    last_run: u64,
}

impl Local {
    /// A server for `config` listening on `port`, keeping what outlives a run in `state`.
    pub fn new(config: &'static Config, port: u16, state: Option<std::path::PathBuf>) -> Self {
        let catalogue: &'static Catalogue = Box::leak(Box::new(Catalogue::bundled()));
        Self {
            config,
            catalogue,
            origin: format!("http://127.0.0.1:{port}"),
            tokens: Verified::new(),
            pairings: HashMap::new(),
            conns: HashMap::new(),
            running: Vec::new(),
            consent: Consent::default(),
            session: None,
            version: None,
            saga_ask: None,
            state,
            agent: OWN,
            agents: HashMap::new(),
            own_gone: false,
            cards: crate::elicit::Cards::default(),
            said: VecDeque::new(),
            last_run: 0,
        }
    }

    /// Makes agent app `id` the one served now: its consent, session, revision and output in
    /// place of the current one's (kept aside). An id no longer served changes nothing.
    pub fn enter(&mut self, id: u64) {
        if id == self.agent {
            return;
        }
        let Some(mut next) = self.agents.remove(&id) else { return };
        std::mem::swap(&mut self.consent, &mut next.consent);
        std::mem::swap(&mut self.session, &mut next.session);
        std::mem::swap(&mut self.version, &mut next.version);
        next.out = OUT.with(|o| o.replace(next.out.take()));
        self.agents.insert(self.agent, next);
        self.agent = id;
    }

    /// Every agent app served, the current one first.
    fn agent_ids(&self) -> Vec<u64> {
        std::iter::once(self.agent).chain(self.agents.keys().copied()).collect()
    }

    /// Where the agent app served now keeps its connection between runs (each agent app its
    /// own file, by its name: [`crate::state::Connection`]).
    pub fn kept(&self) -> Option<std::path::PathBuf> {
        self.state.clone()
    }

    /// The agent app whose connect code `code` is, made the one served now.
    pub fn enter_owner(&mut self, code: &str) {
        if self.consent.holds(code) {
            return;
        }
        let owner = self.agents.iter().find(|(_, a)| a.consent.holds(code)).map(|(id, _)| *id);
        if let Some(id) = owner {
            self.enter(id);
        }
    }

    /// The agent app whose consent `found` picks, made the one served now (none: unchanged).
    pub fn enter_where(&mut self, found: impl Fn(&Consent) -> bool) {
        if found(&self.consent) {
            return;
        }
        let owner = self.agents.iter().find(|(_, a)| found(&a.consent)).map(|(id, _)| *id);
        if let Some(id) = owner {
            self.enter(id);
        }
    }

    /// A joined agent app went away: its exchanges let go of, its state dropped.
    fn agent_gone(&mut self, id: u64, now: u64) {
        for i in 0..self.running.len() {
            if self.running[i].agent == id {
                self.let_go(i, now);
            }
        }
        self.running.retain(|r| r.agent != id);
        if self.agent == id {
            let other = self.agents.keys().copied().next();
            match other {
                Some(other) => self.enter(other),
                None => {
                    // None left: the slot stays, empty, until the next one joins.
                    self.consent = Consent::default();
                    self.session = None;
                    self.version = None;
                    OUT.with(|o| o.replace(None));
                }
            }
        }
        self.agents.remove(&id);
        self.cards.agent_gone(id);
    }

    /// Runs until stdin ends.
    pub fn run(mut self, inbox: &Receiver<Event>) {
        loop {
            let now = now_ms();
            let event = match self.next_deadline() {
                Some(at) => match inbox.recv_timeout(Duration::from_millis(at.saturating_sub(now)))
                {
                    Ok(event) => Some(event),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match inbox.recv() {
                    Ok(event) => Some(event),
                    Err(_) => return,
                },
            };
            let now = now_ms();
            match event {
                Some(Event::StdinClosed) if self.agents.is_empty() && self.agent == OWN => return,
                Some(Event::StdinClosed) => {
                    self.own_gone = true;
                    self.agent_gone(OWN, now);
                }
                Some(Event::AgentClosed { conn }) => {
                    self.agent_gone(conn, now);
                    let served = self.agents.len() + usize::from(self.agent != conn);
                    if self.own_gone && served == 0 {
                        return;
                    }
                }
                Some(event) => self.handle(event, now),
                None => self.timeouts(now),
            }
            self.pump(now);
        }
    }

    /// The earliest time any machine needs waking.
    fn next_deadline(&self) -> Option<u64> {
        let exchanges = self.running.iter().map(|r| Machine::poll_timeout(&r.exchange));
        let pairings =
            self.pairings.values().flat_map(|p| [Machine::poll_timeout(&p.object), p.alarm]);
        let consents = self.agents.values().map(|a| a.consent.poll_timeout());
        let consent = [self.consent.poll_timeout()];
        machine::earliest(exchanges.chain(pairings).chain(consent).chain(consents))
    }

    /// Gives every machine whose deadline passed its timeout.
    fn timeouts(&mut self, now: u64) {
        for i in 0..self.running.len() {
            self.exchange_turn(i, None, now);
        }
        let ids: Vec<String> = self.pairings.keys().cloned().collect();
        for id in ids {
            let Some(p) = self.pairings.get_mut(&id) else { continue };
            // The alarm it set rang: its timeout, whatever its own table says.
            let alarm = p.alarm.is_some_and(|at| at <= now);
            if alarm {
                p.alarm = None;
            }
            self.pairing_turn(&id, alarm.then_some(Input::Timeout), now);
        }
        let was = self.agent;
        for id in self.agent_ids() {
            self.enter(id);
            if self.consent.poll_timeout().is_some_and(|at| at <= now) {
                self.consent_timeout(now);
            }
        }
        self.enter(was);
    }

    fn handle(&mut self, event: Event, now: u64) {
        match event {
            Event::Line(body) => {
                self.enter(OWN);
                self.message(body, now);
            }
            Event::AgentOpened { conn, writer } => {
                let agent = Agent { out: Some(writer), ..Agent::default() };
                self.agents.insert(conn, agent);
                self.enter(conn);
                self.resume(now);
            }
            Event::AgentLine { conn, line } => {
                self.enter(conn);
                if self.agent == conn {
                    self.message(line, now);
                }
            }
            Event::Opened { conn, pairing, origin, writer } => {
                let p = self.pairing(&pairing, now);
                let number = p.object.next_tab_number(now);
                p.sockets.insert(number, writer);
                let sender = "local".to_owned();
                let opened = Input::Opened { number, pairing: pairing.clone(), origin, sender };
                self.pairing_turn(&pairing, Some(opened), now);
                self.conns.insert(conn, (pairing, number));
            }
            Event::Message { conn, text } => {
                let Some((pairing, tab)) = self.conns.get(&conn).cloned() else { return };
                if let Some(text) = &text {
                    self.heard_card(&pairing, tab, text);
                }
                self.pairing_turn(&pairing, Some(Input::Message { tab, text }), now);
            }
            Event::Closed { conn } => {
                let Some((pairing, tab)) = self.conns.remove(&conn) else { return };
                for (agent, note) in self.cards.tab_gone(&pairing, tab) {
                    self.write_to(agent, &note);
                }
                if let Some(p) = self.pairings.get_mut(&pairing) {
                    p.sockets.remove(&tab);
                }
                self.pairing_turn(&pairing, Some(Input::Closed { tab }), now);
            }
            // A page of the link flow ([`crate::link`]): answered at once.
            Event::Http { route, request, reply } => {
                let _ = reply.send(self.http(route, request, now));
            }
            Event::StdinClosed | Event::AgentClosed { .. } => {}
        }
    }

    /// The pairing of `id`, made (and woken, with nothing stored) on first use, as a Durable
    /// Object is made for any name.
    pub fn pairing(&mut self, id: &str, now: u64) -> &mut Pairing {
        if !self.pairings.contains_key(id) {
            let (config, state) = (self.config, self.state.as_deref());
            let object = Object::new(Some(config.keys.clone()), self.catalogue);
            let sql = Memory::kept_in(crate::state::grants_file(state, id))
                .presence_in(crate::state::presence_file(state, id));
            let p = Pairing { object, sql, alarm: None, sockets: HashMap::new() };
            self.pairings.insert(id.to_owned(), p);
            self.pairing_turn(id, Some(Input::Woke(Stored::default())), now);
        }
        self.pairings.get_mut(id).expect("made above")
    }

    /// One turn of pairing `id`'s object ([`machine::turn`]): `input` given (None: its timeout,
    /// if due) with its storage and randomness at hand, what it says queued.
    fn pairing_turn(&mut self, id: &str, input: Option<Input>, now: u64) {
        let Some(p) = self.pairings.get_mut(id) else { return };
        let said = &mut self.said;
        let host = &mut Platform { sql: &mut p.sql, entropy: &mut OsRandom };
        machine::turn(&mut p.object, input, now, host, |output| {
            said.push_back(Said::Pairing(id.to_owned(), output));
        });
    }

    /// One turn of the `i`th exchange ([`machine::turn`]), what it says queued.
    fn exchange_turn(&mut self, i: usize, input: Option<ExchangeInput>, now: u64) {
        let Some(r) = self.running.get_mut(i) else { return };
        let (said, run) = (&mut self.said, r.id);
        machine::turn(&mut r.exchange, input, now, &mut (), |output| {
            said.push_back(Said::Exchange(run, output));
        });
    }

    /// A request of the endpoint (or a saga) to pairing `id`, made if need be, numbered as the
    /// Worker numbers it: who waits for its replies.
    pub fn request(&mut self, id: &str, request: Request, now: u64) -> Asker {
        let asker = self.pairing(id, now).object.next_asker();
        let input = Input::Request { asker, request, replayed: Vec::new() };
        self.pairing_turn(id, Some(input), now);
        asker
    }

    /// A message of the agent app: through the endpoint once the person connected it, else
    /// answered as not connected yet (with the code to type).
    fn message(&mut self, body: Result<Vec<u8>, TooLarge>, now: u64) {
        if self.card_answer(body.as_ref().ok().map(Vec::as_slice)) {
            return;
        }
        // The agent app names itself: its connection kept from an earlier run, if any.
        if self.consent.token().is_none() && self.consent.name.is_none() {
            let parsed = body.as_ref().ok().and_then(|b| serde_json::from_slice(b).ok());
            if let Some(name) = parsed.as_ref().and_then(crate::consent::client_name) {
                self.consent.name = Some(name);
                self.resume(now);
            }
        }
        let Some(token) = self.consent.token().map(str::to_owned) else {
            self.unconnected(body, now);
            return;
        };
        self.start_exchange(&token, body, false, now);
    }

    /// Starts an exchange for `body` as a POST to the endpoint with the connection's token,
    /// and the headers the request names (the revision negotiated, the session, and for a
    /// 2026-07-28 request its method and name).
    pub fn start_exchange(
        &mut self,
        token: &str,
        body: Result<Vec<u8>, TooLarge>,
        replay: bool,
        now: u64,
    ) {
        let parsed: Option<Value> = body.as_ref().ok().and_then(|b| serde_json::from_slice(b).ok());
        let params = parsed.as_ref().and_then(|m| m.get("params"));
        let meta_version = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(tabrelay::mcp::era::meta::PROTOCOL_VERSION))
            .and_then(Value::as_str);
        let version = meta_version.map(str::to_owned).or_else(|| self.version.clone());
        let stateless = meta_version.is_some();
        let field = |name: &str| parsed.as_ref().and_then(|m| m.get(name)).and_then(Value::as_str);
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
        let headers = RequestHeaders {
            authorization: Some(format!("Bearer {token}")),
            version,
            method: stateless.then(|| field("method").map(str::to_owned)).flatten(),
            name: stateless.then(|| name.map(str::to_owned)).flatten(),
            session: if stateless { None } else { self.session.clone() },
            accept: Some("application/json, text/event-stream".into()),
            ..RequestHeaders::default()
        };
        let exchange = Exchange::begin(
            headers,
            false,
            &self.tokens,
            self.config,
            self.catalogue,
            &self.origin,
            now,
        );
        let line = body.as_ref().ok().cloned();
        let agent = self.agent;
        self.last_run += 1;
        self.running.push(Running {
            id: self.last_run,
            exchange,
            body: Some(body),
            asking: None,
            replay,
            line,
            agent,
        });
        // What it says at once (it asks for its body).
        self.exchange_turn(self.running.len() - 1, None, now);
    }

    /// Carries out what the machines said, in the order they said it (what that gives a
    /// machine is one more turn, its outputs queued behind), until none says more; then one
    /// consent step of each agent app, and what that made them say.
    pub fn pump(&mut self, now: u64) {
        let was = self.agent;
        self.carry_all(now);
        // Not within a saga's own ask (which runs this pump): one consent step at a time.
        if self.saga_ask.is_none() {
            for id in self.agent_ids() {
                self.enter(id);
                self.consent_step(now);
            }
            self.carry_all(now);
        }
        self.enter(was);
    }

    /// Carries out everything said, in order; then lets go of the exchanges that are over.
    fn carry_all(&mut self, now: u64) {
        while let Some(said) = self.said.pop_front() {
            match said {
                Said::Pairing(id, output) => self.carry_out(&id, output, now),
                Said::Exchange(run, output) => {
                    let Some(i) = self.running.iter().position(|r| r.id == run) else { continue };
                    self.enter(self.running[i].agent);
                    self.exchange_output(i, output, now);
                }
            }
        }
        self.running.retain(|r| !r.exchange.is_done() || r.asking.is_some());
    }

    /// One output of a pairing's object.
    fn carry_out(&mut self, id: &str, output: ObjectOutput, now: u64) {
        let Some(p) = self.pairings.get_mut(id) else { return };
        match output {
            ObjectOutput::Send(tab, text) => {
                if let Some((call, ended, grant)) = card_call(&text) {
                    match grant {
                        Some(grant) => self.cards.sent(id, call, &grant),
                        None => self.withdraw(id, call, ended),
                    }
                }
                let Some(p) = self.pairings.get_mut(id) else { return };
                if let Some(w) = p.sockets.get(&tab) {
                    // A socket that failed tells the loop through its reader.
                    let _ = sockets::send(w, &text);
                }
            }
            ObjectOutput::Close(tab, code, reason) => {
                if let Some(w) = p.sockets.remove(&tab) {
                    sockets::close(&w, code, reason);
                }
            }
            // Nothing hibernates here: the room holds its tabs.
            ObjectOutput::Attach(..) => {}
            ObjectOutput::SetAlarm(at) => p.alarm = Some(at),
            ObjectOutput::Verify(tab, proof, named) => {
                let valid = crate::consent::verify_p256(&proof.key, &proof.signature, &proof.data);
                let input = match named {
                    None => Input::Proved { tab, valid },
                    Some(named) => Input::PresenceProved { tab, named, valid },
                };
                self.pairing_turn(id, Some(input), now);
            }
            ObjectOutput::AskCode(tab, code, command, said) => {
                self.enter_owner(code.as_str());
                let reply = self.consent.code(&code, command.clone(), now, &mut OsRandom);
                let replied = Input::CodeReplied { tab, said, command, reply: Some(reply) };
                self.pairing_turn(id, Some(replied), now);
            }
            ObjectOutput::Reply(asker, reply) => {
                let ends = reply.ends();
                if let Some((pairing, a, got)) = &mut self.saga_ask {
                    if pairing == id && *a == asker {
                        *got = Some(reply);
                        return;
                    }
                }
                let Some(i) = self
                    .running
                    .iter()
                    .position(|r| r.asking.as_ref().is_some_and(|(p, a)| p == id && *a == asker))
                else {
                    return;
                };
                self.exchange_turn(i, Some(ExchangeInput::Reply(Some(reply))), now);
                if ends {
                    self.running[i].asking = None;
                    self.exchange_turn(i, Some(ExchangeInput::Reply(None)), now);
                }
            }
        }
    }

    /// One output of the `i`th exchange.
    fn exchange_output(&mut self, i: usize, output: Output, now: u64) {
        match output {
            Output::ReadBody(cap) => {
                let r = &mut self.running[i];
                let body = match r.body.take() {
                    Some(Ok(body)) if body.len() > cap => Err(TooLarge { cap }),
                    Some(body) => body,
                    None => Ok(Vec::new()),
                };
                self.exchange_turn(i, Some(ExchangeInput::Body(body)), now);
            }
            Output::Ask(request) => self.ask(i, request, now),
            Output::Respond(answer) => {
                let (replay, line) = (self.running[i].replay, self.running[i].line.take());
                self.let_go(i, now);
                self.answered(answer, replay, line, now);
            }
            Output::Send(text) => {
                for line in text.lines() {
                    if let Some(json) = line.strip_prefix("data: ") {
                        write_line(json);
                    }
                }
            }
            Output::Open => {}
            Output::End => self.let_go(i, now),
        }
    }

    /// The exchange's ask of its pairing (the one the token names), in place of its last.
    fn ask(&mut self, i: usize, request: Request, now: u64) {
        self.let_go(i, now);
        let Some(id) = self.running[i].exchange.pairing().map(str::to_owned) else { return };
        if let Request::Call(call) = &request {
            self.cards.calls_through(&call.tool_call.connection.id, self.running[i].agent);
        }
        let asker = self.request(&id, request, now);
        self.running[i].asking = Some((id, asker));
    }

    /// The exchange's ask in flight is let go of (its stream ended, or it asks again).
    fn let_go(&mut self, i: usize, now: u64) {
        if let Some((id, asker)) = self.running[i].asking.take() {
            self.pairing_turn(&id, Some(Input::Gone { asker }), now);
        }
    }

    /// A whole answer: its JSON written (a replayed `initialize`'s kept as the session);
    /// 401, the connection was forgotten in the tab: the message is answered as before any
    /// connection, with a new code.
    fn answered(&mut self, answer: Response, replay: bool, line: Option<Vec<u8>>, now: u64) {
        if answer.status == 401 {
            let kept = self.kept();
            self.consent.forgotten(kept.as_deref());
            self.session = None;
        }
        if replay {
            self.session = answer
                .headers
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case("mcp-session-id"))
                .map(|(_, v)| v.clone());
            if self.session.is_some() {
                // The list the agent app read before is the bundled one: it may read the tab's.
                write_line(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
            }
            return;
        }
        match answer.body {
            _ if answer.status == 401 => {
                if let Some(line) = line {
                    self.unconnected(Ok(line), now);
                }
            }
            Body::Json(value) => write_line(&tabrelay_bundle::fields::json_text(&value)),
            Body::Text(text) => eprintln!("tabrelay-local: {} {text}", answer.status),
            Body::Empty => {}
        }
    }

    /// Whether `line` of the agent app served now is for the cards ([`crate::elicit`]): its
    /// `initialize` is noted (and goes on), an answer to a card's question goes to the card's
    /// tab (taken here: the endpoint never asked it).
    fn card_answer(&mut self, line: Option<&[u8]>) -> bool {
        let Some(message) = line.and_then(|l| serde_json::from_slice::<Value>(l).ok()) else {
            return false;
        };
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            let capabilities = message.pointer("/params/capabilities");
            self.cards.declared(self.agent, capabilities);
            return false;
        }
        let Some(answered) = self.cards.answer(self.agent, &message) else { return false };
        let Some((asked, Some(choice))) = answered else { return true };
        let elicited = RelayMessage::Elicited { id: asked.call, choice: choice.into() };
        if let Some(w) = self.pairings.get(&asked.pairing).and_then(|p| p.sockets.get(&asked.tab)) {
            let _ = sockets::send(w, &elicited.to_text());
        }
        true
    }

    /// A tab's message, as the cards hear it: a card shown asks the agent app that can answer
    /// it; a card answered (or the call's result) withdraws the question.
    fn heard_card(&mut self, pairing: &str, tab: u64, text: &str) {
        let kind = ["asking", "answered", "result"]
            .into_iter()
            .find(|k| text.starts_with(&format!("{{\"type\":\"{k}\"")));
        let Some(kind) = kind else { return };
        let message = match (kind, TabMessage::parse(text)) {
            ("result", _) => {
                // Only its id is needed (a result may be large: not read twice whole).
                let id = text.get(..64).and_then(|head| head.split("\"id\":").nth(1));
                let id = id.and_then(|rest| rest.split([',', '}']).next()?.parse().ok());
                if let Some(id) = id {
                    self.withdraw(pairing, id, true);
                }
                return;
            }
            (_, Ok(message)) => message,
            (_, Err(_)) => return,
        };
        match message {
            TabMessage::Asking { id, sentence, app_may_allow } => {
                if let Some((agent, question)) =
                    self.cards.asking(pairing, tab, id, &sentence, app_may_allow)
                {
                    self.write_to(agent, &question);
                }
            }
            TabMessage::Answered { id } => self.withdraw(pairing, id, false),
            _ => {}
        }
    }

    /// `call`'s card was answered in the tab, or the call ended: its question withdrawn.
    fn withdraw(&mut self, pairing: &str, call: u64, ended: bool) {
        if let Some((agent, note)) = self.cards.settled(pairing, call, ended) {
            self.write_to(agent, &note);
        }
    }

    /// Writes `json` to agent app `agent` (the one served now stays so).
    fn write_to(&mut self, agent: u64, json: &str) {
        let was = self.agent;
        self.enter(agent);
        if self.agent == agent {
            write_line(json);
        }
        self.enter(was);
    }

    /// Remembers the revision an `initialize` negotiated (its answer's `protocolVersion`).
    pub fn negotiated(&mut self, version: Option<&str>) {
        self.version = version.map(str::to_owned);
    }
}

/// What a relay message to a tab says of a call, for the cards: a `call` (its id, and its
/// connection), or a `cancel` (its id: ended).
fn card_call(text: &str) -> Option<(u64, bool, Option<String>)> {
    if !text.starts_with("{\"type\":\"call\"") && !text.starts_with("{\"type\":\"cancel\"") {
        return None;
    }
    match tabrelay_bundle::from_json::<RelayMessage>(text.as_bytes())? {
        RelayMessage::Call { id, tool_call, .. } => {
            Some((id, false, Some(tool_call.connection.id)))
        }
        RelayMessage::Cancel { id } => Some((id, true, None)),
        _ => None,
    }
}

/// Writes one JSON-RPC message to the agent app served now, as a line (stdout, or the socket of
/// the `tabrelay-local` it started).
pub fn write_line(json: &str) {
    if let Some(writer) = OUT.with(|o| o.borrow().clone()) {
        let _ = sockets::send(&writer, json);
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(json.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(cap: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, TooLarge>> {
        let mut reader = LineReader::new(cap);
        let mut out = Vec::new();
        for chunk in chunks {
            let mut rest = *chunk;
            while !rest.is_empty() {
                let (used, line) = reader.take(rest);
                out.extend(line);
                rest = &rest[used..];
            }
        }
        out
    }

    #[test]
    fn a_line_is_whole_whatever_the_chunks_and_blank_lines_are_none() {
        let got = lines(16, &[b"{\"a\"", b":1}\n\n  \n{}\n"]);
        assert_eq!(got, [Ok(br#"{"a":1}"#.to_vec()), Ok(b"{}".to_vec())]);
    }

    #[test]
    fn a_line_over_the_cap_is_too_large_and_the_next_is_read() {
        let cap = 8;
        let got = lines(cap, &[b"0123", b"45678", b"9abc\n{}\n"]);
        assert_eq!(got, [Err(TooLarge { cap }), Ok(b"{}".to_vec())]);
        // Exactly the cap is taken.
        assert_eq!(lines(cap, &[b"01234567\n"]), [Ok(b"01234567".to_vec())]);
    }

    /// The pairing's presence credential outlives a run (else anyone could set up another in
    /// its place at the next), and goes when the pairing forgets everything.
    #[test]
    fn the_presence_credential_is_kept_between_runs() {
        let dir = std::env::temp_dir().join(format!("tabrelay-local-pump-{}", std::process::id()));
        let file = crate::state::presence_file(Some(&dir), "ab12");
        let row = r#"{"credential":"c","key":"k","origin":"http://localhost:1"}"#;
        let mut sql = Memory::default().presence_in(file.clone());
        let write = "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)";
        let binds = vec![Bind::Text("presence".into()), Bind::Text(row.into())];
        assert!(sql.exec(write, binds).is_ok());
        let mut next = Memory::default().presence_in(file.clone());
        let read = next.exec("SELECT k, v FROM meta", Vec::new()).unwrap_or_default();
        assert_eq!(read, [vec![Some("presence".to_owned()), Some(row.to_owned())]]);
        assert!(next.exec("DROP TABLE IF EXISTS meta", Vec::new()).is_ok());
        let after = Memory::default().presence_in(file);
        assert_eq!(after.presence, None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_line_over_the_cap_is_never_held_whole() {
        let cap = 8;
        let mut reader = LineReader::new(cap);
        for _ in 0..1000 {
            let _ = reader.take(b"xxxxxxxxxxxxxxxx");
        }
        assert!(reader.line.len() <= cap, "{} bytes held", reader.line.len());
        assert_eq!(reader.take(b"\n"), (1, Some(Err(TooLarge { cap }))));
    }
}
