//! The Worker's MCP endpoint as one machine: one [`Exchange`] per request, from its headers to
//! its last byte. It is built from the request's headers, the relay's configuration and the
//! time; it is fed the body, the pairing's replies and its own timeouts, and polled for what to
//! do next ([`Output`]: read the body, ask the pairing, answer, open a stream, send an event,
//! end) and when it next needs waking ([`Exchange::poll_timeout`]). It never reads a clock: each
//! input comes with its `now` (as quinn-proto's `Connection` and str0m's `Rtc`). The shell only
//! carries out what it says (`src/shell/drive.rs`), so every rule here is tested natively, and
//! with the real pairing in `tests` (the pair harness).

use serde_json::{Map, Value};
use tabrelay_bundle::catalogue::Catalogue;

use super::{accepts_stream, batch, handle, resume, session, status_answer, tasks, tools_list};
use super::{Batch, Era, Headers, Reply as McpReply, KEEP_ALIVE};
use crate::config::Config;
use crate::http::{self, HeaderLines, TooLarge};
use crate::jsonrpc::{self, ErrorCode, Id};
use crate::limits::{FIRST_EVENT_WAIT_MS, KEEP_ALIVE_MS, PAIRING_LATE_MS, TOOL_LIST_WAIT_MS};
use crate::oauth::metadata;
use crate::oauth::token::{Access, Verified};
use crate::pairing::wire::{request_key, CallRequest, Reply, Request, TaskOp, Want};
use crate::routes;
use crate::{sentences, tools};

pub mod call;
#[cfg(test)]
mod tests;

use call::{Call, CallIdentity, CallInput, CallOutput, Listen, ReadCall, Start, Starting};

/// The headers the endpoint reads, read once ([`RequestHeaders::read`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[allow(missing_docs)] // each is the header of its name
pub struct RequestHeaders {
    pub origin: Option<String>,
    pub authorization: Option<String>,
    pub version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
    pub session: Option<String>,
    pub accept: Option<String>,
    pub last_event_id: Option<String>,
    /// Every `Mcp-Param-{Name}` header ([`Headers::params`]).
    pub params: Map<String, Value>,
}

impl RequestHeaders {
    /// The headers the endpoint reads, out of all of the request's. Only a 2026-07-28
    /// `tools/call` (the one request that names `Mcp-Method: tools/call`) may carry
    /// `Mcp-Param-*` headers to check, so only then are they gathered.
    #[must_use]
    pub fn read(headers: HeaderLines<'_>) -> Self {
        let get = |name| headers.get(name).map(str::to_owned);
        let method = get("mcp-method");
        let mut params = Map::new();
        if method.as_deref() == Some("tools/call") {
            // Inserted one by one: collecting into the map sorts first (KiBs of sort code).
            for (name, value) in headers.entries() {
                if let Some(name) = name.strip_prefix("mcp-param-") {
                    params.insert(name.to_owned(), Value::String(value.to_owned()));
                }
            }
        }
        Self {
            origin: get("origin"),
            authorization: get("authorization"),
            version: get("mcp-protocol-version"),
            method,
            name: get("mcp-name"),
            session: get("mcp-session-id"),
            accept: get("accept"),
            last_event_id: get("last-event-id"),
            params,
        }
    }

    /// The headers that say how to read a request.
    #[must_use]
    pub fn mcp(&self) -> Headers<'_> {
        Headers {
            version: self.version.as_deref(),
            method: self.method.as_deref(),
            name: self.name.as_deref(),
            session: self.session.as_deref(),
            params: Some(&self.params),
        }
    }
}

/// What the shell does next for an exchange.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
#[allow(clippy::large_enum_variant)] // one at a time, moved straight out: boxing only allocates
pub enum Output {
    /// Read the request's body, at most this many bytes; then [`Exchange::handle_body`].
    ReadBody(usize),
    /// Ask the pairing ([`Exchange::pairing`]) this, dropping the replies of any earlier ask;
    /// its reply lines go to [`Exchange::handle_reply`], and its end as None.
    Ask(Request),
    /// Answer the request with this; the exchange is over.
    Respond(Response),
    /// Answer with an event stream (its events follow as [`Output::Send`]).
    Open,
    /// Send this text on the stream.
    Send(String),
    /// End the stream; the exchange is over.
    End,
}

/// A whole answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Body,
    /// Headers beside the body's own (`Mcp-Session-Id`, `WWW-Authenticate`, `Allow`).
    pub headers: Vec<(&'static str, String)>,
}

/// An answer's body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// JSON, never cached.
    Json(Value),
    /// A sentence as plain text.
    Text(String),
    /// Nothing.
    Empty,
}

impl Response {
    /// The answer as HTTP: the body's own headers (JSON's), then the exchange's.
    #[must_use]
    pub fn http(mut self) -> http::Answer {
        let mut answer = match self.body {
            Body::Json(body) => http::Answer::json(self.status, &body),
            Body::Text(text) => http::Answer::text(self.status, &text),
            Body::Empty => http::Answer::empty(self.status),
        };
        answer.headers.append(&mut self.headers);
        answer
    }
}

/// The exchange's deadlines: one table, the earliest is when it next needs waking
/// (quinn-proto's `TimerTable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// A streaming client's call answered in time goes as JSON; after this the stream opens.
    FirstEvent,
    /// `tools/list` and `status` wait this long for the pairing, then answer without it.
    ToolList,
    /// A quiet stream says something (a comment, or progress when due).
    KeepAlive,
    /// A round of questions not answered by then ends the call.
    Round,
    /// A `tasks/result` asks the pairing again.
    TaskPoll,
    /// A `tasks/result` stops waiting for its task.
    Overall,
    /// The pairing's next line on the ask in flight is due ([`quiet_bound`]): past it, the
    /// pairing is taken as gone, as if its replies had ended (a pairing that never answers
    /// holds no client for ever).
    Pairing,
}

const TIMERS: [Timer; 7] = [
    Timer::FirstEvent,
    Timer::ToolList,
    Timer::KeepAlive,
    Timer::Round,
    Timer::TaskPoll,
    Timer::Overall,
    Timer::Pairing,
];

#[derive(Debug, Default)]
struct TimerTable([Option<u64>; TIMERS.len()]);

impl TimerTable {
    fn set(&mut self, timer: Timer, at: u64) {
        self.0[timer as usize] = Some(at);
    }

    fn stop(&mut self, timer: Timer) {
        self.0[timer as usize] = None;
    }

    /// The earliest deadline, and which.
    fn next(&self) -> Option<(Timer, u64)> {
        let mut earliest: Option<(Timer, u64)> = None;
        for timer in TIMERS {
            match (self.0[timer as usize], earliest) {
                (Some(at), Some((_, first))) if at >= first => {}
                (Some(at), _) => earliest = Some((timer, at)),
                (None, _) => {}
            }
        }
        earliest
    }
}

/// What answers one message, before it is written out (a batch gathers them).
#[derive(Debug)]
enum Settled {
    Json(u16, Value),
    Accepted,
    Unauthorized,
    /// An `initialize`'s answer and the session id it gives.
    Session(Value, String),
}

/// A call, and what asks the pairing again with the client's answers (None: a call taken up
/// again, which asks nothing).
#[derive(Debug)]
struct Calling<'a> {
    call: Call<'a>,
    request: Option<CallRequest>,
}

/// Where the exchange is.
#[derive(Debug, Default)]
enum Job<'a> {
    /// Waiting for the body.
    Body,
    /// The grant's check, then this successful answer (the grant-first rule: a forgotten or
    /// revoked connection stops at once, on every method); an `initialize`'s with the session
    /// id of what its client declared.
    Check { body: Value, initialize: Option<(session::Declared, &'static str)> },
    /// `tools/list` (`tools`) or the `status` tool, asked with the grant's check.
    Listing { id: Id, era: Era, tools: bool },
    /// A cancellation told to the pairing.
    Cancel,
    /// The client's answer to a question, given to the pairing.
    Answer,
    /// `subscriptions/listen`, asked; then (once the pairing first answers, acknowledged) its
    /// stream.
    Listen(Listen),
    /// A tasks request: asked (true), or waiting to ask again.
    Task(tasks::TaskRequest, bool),
    /// A call's retried state being marked used.
    Marking(Box<Starting<'a>>),
    /// A call.
    Call(Box<Calling<'a>>),
    /// A dropped stream's call, asked for.
    Resume(resume::LastEvent),
    /// Over.
    #[default]
    Done,
}

/// One request to the MCP endpoint (a POST, or a GET taking up a dropped stream).
#[derive(Debug)]
pub struct Exchange<'a> {
    config: &'a Config,
    catalogue: &'a Catalogue,
    /// The relay's origin, as the request addressed it.
    origin: String,
    headers: RequestHeaders,
    access: Option<Access>,
    /// The session the request's `Mcp-Session-Id` names, when the relay opened it for the
    /// token's connection ([`session::opened`]).
    session: Option<session::Opened>,
    /// The client takes a stream.
    stream: bool,
    /// What to do next, first first (a handful at most).
    out: Vec<Output>,
    timers: TimerTable,
    job: Job<'a>,
    /// A batch's messages still to answer, and the answers so far.
    batch: Option<(std::vec::IntoIter<Vec<u8>>, Vec<Value>)>,
    opened: bool,
    /// How long the ask in flight may go without a line from the pairing ([`quiet_bound`]).
    quiet_ms: u64,
    /// When the last input came.
    now_ms: u64,
}

impl<'a> Exchange<'a> {
    /// The exchange of a request with `headers` at `now_ms`, its caller and token checked first
    /// (a token verified before is found in `tokens`): a GET taking up a dropped stream
    /// (`resume`: [`Self::resume`]), else a POST ([`Self::post`]).
    #[must_use]
    pub fn begin(
        headers: RequestHeaders,
        resume: bool,
        tokens: &Verified,
        config: &'a Config,
        catalogue: &'a Catalogue,
        origin: &str,
        now_ms: u64,
    ) -> Self {
        let mut exchange = Self::new(headers, tokens, config, catalogue, origin, now_ms);
        if let Some(access) = exchange.access.clone() {
            match resume {
                true => exchange.resume(access),
                false => exchange.post(),
            }
        }
        exchange
    }

    /// A POST: its body read next.
    fn post(&mut self) {
        self.job = Job::Body;
        self.out.push(Output::ReadBody(routes::body_cap("/")));
    }

    /// A GET with `Last-Event-ID` from a client whose call's stream dropped: the rest of the
    /// call's events (or its end) on a new stream, for the connection that made it. Nothing to
    /// take up: 405, as a GET without it (the relay offers no stream of its own).
    fn resume(&mut self, access: Access) {
        let h = &self.headers;
        // The check reads the revision and the session id alone.
        let declared = match session::check(self.session, &h.mcp(), false) {
            Ok(declared) => declared,
            Err(body) => return self.settle(Settled::Json(404, body)),
        };
        let last = h.last_event_id.as_deref().and_then(resume::read_event_id);
        let Some(last) = last.filter(|_| declared.is_some()) else {
            return self.out.push(Output::Respond(not_allowed()));
        };
        let request = request_key(&access.grant, &last.id);
        self.ask(Request::Resume { grant: access.grant, request });
        self.job = Job::Resume(last);
    }

    /// The caller's origin and the token checked: past them, the access (or the answer).
    fn new(
        headers: RequestHeaders,
        tokens: &Verified,
        config: &'a Config,
        catalogue: &'a Catalogue,
        origin: &str,
        now_ms: u64,
    ) -> Self {
        let stream = accepts_stream(headers.accept.as_deref());
        let mut exchange = Self {
            config,
            catalogue,
            origin: origin.to_owned(),
            headers,
            access: None,
            session: None,
            stream,
            out: Vec::new(),
            timers: TimerTable::default(),
            job: Job::Done,
            batch: None,
            opened: false,
            quiet_ms: 0,
            now_ms,
        };
        if !config.allows_caller(exchange.headers.origin.as_deref(), origin) {
            let e = jsonrpc::refusal(None, ErrorCode::INVALID_REQUEST, sentences::ORIGIN_REFUSED);
            exchange.respond(403, Body::Json(e));
            return exchange;
        }
        let presented = http::bearer(exchange.headers.authorization.as_deref());
        exchange.access =
            presented.and_then(|t| tokens.verify(&config.keys, origin, t, now_ms).ok());
        let Some(access) = &exchange.access else {
            let answer = unauthorized(origin, presented.is_some());
            exchange.out.push(Output::Respond(answer));
            return exchange;
        };
        // A request in a session the relay opened is read in that session's revision, whatever
        // its header says: every rule that reads the header (the era, batches, resumable
        // streams) reads the session's.
        let h = &mut exchange.headers;
        exchange.session = session::opened(&config.keys, &access.grant, &h.mcp());
        if let Some(opened) = exchange.session {
            h.version = opened.version(h.version.as_deref()).map(str::to_owned);
        }
        exchange
    }

    /// The pairing the token reaches (what [`Output::Ask`] asks).
    #[must_use]
    pub fn pairing(&self) -> Option<&str> {
        self.access.as_ref().map(|a| a.pairing.as_str())
    }

    /// What to do next (None: wait for an input or [`Self::poll_timeout`]).
    pub fn poll_output(&mut self) -> Option<Output> {
        (!self.out.is_empty()).then(|| self.out.remove(0))
    }

    /// When the exchange next needs [`Self::handle_timeout`] (None: only an input moves it).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.next().map(|(_, at)| at)
    }

    /// Whether the exchange is over (its answer written or its stream ended).
    #[must_use]
    pub fn is_done(&self) -> bool {
        matches!(self.job, Job::Done) && self.out.is_empty()
    }

    /// The request's body ([`Output::ReadBody`]), or that it passed its cap.
    fn handle_body(&mut self, body: Result<Vec<u8>, TooLarge>, now_ms: u64) {
        self.now_ms = now_ms;
        if !matches!(self.job, Job::Body) {
            return;
        }
        self.job = Job::Done;
        let body = match body {
            Ok(body) => body,
            Err(too_large) => {
                let sentence = sentences::too_large(too_large.cap);
                let e = jsonrpc::refusal(None, ErrorCode::INVALID_REQUEST, &sentence);
                return self.respond(413, Body::Json(e));
            }
        };
        match batch(&body, &self.headers.mcp()) {
            Batch::One => self.start(&body, self.stream, now_ms),
            Batch::Refused(body) => self.respond(400, Body::Json(body)),
            // A 2025-03-26 batch: each message answered in turn (calls as JSON), the answers
            // together.
            Batch::Many(items) => {
                self.batch = Some((items.into_iter(), Vec::new()));
                self.next_in_batch(now_ms);
            }
        }
    }

    /// One of the pairing's replies to the last [`Output::Ask`] (None: its replies ended, or it
    /// could not be asked).
    fn handle_reply(&mut self, reply: Option<Reply>, now_ms: u64) {
        self.now_ms = now_ms;
        // A line is the pairing alive: its next is due as the ask's bound says.
        match reply {
            Some(_) => self.timers.set(Timer::Pairing, now_ms + self.quiet_ms),
            None => self.timers.stop(Timer::Pairing),
        }
        // A grant gone ends every job waiting on the pairing with 401 (a call whose stream
        // opened goes on to hear its end); checked once, before the job is taken.
        let stops = match &self.job {
            Job::Check { .. } | Job::Listing { .. } | Job::Answer | Job::Resume(_) => true,
            // A stream acknowledged hears its end as the listen's own.
            Job::Listen(listen) => !listen.is_acknowledged(),
            Job::Task(_, asked) => *asked,
            Job::Call(_) => !self.opened,
            _ => false,
        };
        if stops && matches!(reply, Some(Reply::NoGrant)) {
            return self.settle(Settled::Unauthorized);
        }
        match std::mem::take(&mut self.job) {
            Job::Check { body, initialize: None } => self.settle(Settled::Json(200, body)),
            Job::Check { body, initialize: Some((declared, revision)) } => {
                let grant = self.access.as_ref().map(|a| a.grant.as_str()).unwrap_or_default();
                let id = session::issue(&self.config.keys, grant, declared, revision);
                self.settle(Settled::Session(body, id));
            }
            Job::Listing { id, era, tools } => {
                // The pairing says what the list and the status are made of; rendered here.
                let answer = match reply {
                    Some(Reply::Tools { stated }) => {
                        Some(tools::list(stated.as_ref(), self.catalogue))
                    }
                    Some(Reply::Status { tabs, told }) => Some(tools::status_result(&tabs, &told)),
                    _ => None,
                };
                self.listed(&id, &era, tools, answer);
            }
            Job::Cancel => self.settle(Settled::Accepted),
            Job::Answer if matches!(reply, Some(Reply::Done)) => self.settle(Settled::Accepted),
            Job::Answer => {
                let e = jsonrpc::refusal(None, ErrorCode::INVALID_REQUEST, sentences::NOT_ASKED);
                self.settle(Settled::Json(400, e));
            }
            Job::Listen(mut listen) => {
                self.open(now_ms);
                if let Some(ack) = listen.start() {
                    self.send(ack, now_ms);
                }
                self.listening(listen, reply.as_ref(), now_ms);
            }
            Job::Task(asked, true) => {
                let said = match reply {
                    Some(Reply::Task(reply)) => Some(reply),
                    _ => None,
                };
                match tasks::answer(&asked.id, &asked.era, &asked.method, said) {
                    tasks::Next::Answer(body) => self.settle(Settled::Json(200, body)),
                    tasks::Next::AskAgain(after_ms) => {
                        self.timers.set(Timer::TaskPoll, now_ms + after_ms);
                        self.job = Job::Task(asked, false);
                    }
                }
            }
            Job::Marking(starting) => match starting.state_used(matches!(reply, Some(Reply::Done)))
            {
                Ok((request, call)) => self.call(request, call, now_ms),
                Err(body) => self.settle(Settled::Json(200, body)),
            },
            Job::Call(calling) => self.step_call(calling, CallInput::of_reply(reply), now_ms),
            Job::Resume(_) if matches!(reply, Some(Reply::NotAsked) | None) => {
                self.out.push(Output::Respond(not_allowed()));
            }
            Job::Resume(resume::LastEvent { id, progress, number }) => {
                let Some(access) = &self.access else { return };
                let keys = &self.config.keys;
                let (grant, tool, args) = (access.grant.clone(), String::new(), Value::Null);
                let who = CallIdentity { id, era: Era::Session, keys, grant, tool, args };
                let mut call = Call::resumed(who, progress, number, now_ms);
                self.open(now_ms);
                let opening = call.opening();
                self.send(opening, now_ms);
                let calling = Box::new(Calling { call, request: None });
                self.step_call(calling, CallInput::of_reply(reply), now_ms);
            }
            // A reply nothing waits for (the end of an answered ask): nothing to do.
            job @ (Job::Body | Job::Task(..) | Job::Done) => self.job = job,
        }
    }

    /// The clock reached [`Self::poll_timeout`] (or later): each deadline passed, in order.
    fn handle_timeout(&mut self, now_ms: u64) {
        self.now_ms = now_ms;
        while let Some((timer, at)) = self.timers.next() {
            if at > now_ms {
                break;
            }
            self.timers.stop(timer);
            if timer == Timer::Pairing {
                // The pairing said nothing for longer than it ever should: gone, as if its
                // replies had ended (each job says what its client then hears).
                self.handle_reply(None, now_ms);
                continue;
            }
            match (timer, std::mem::take(&mut self.job)) {
                (Timer::FirstEvent, Job::Call(calling)) => {
                    self.step_call(calling, CallInput::FirstWaitOver, now_ms)
                }
                (Timer::KeepAlive, Job::Call(calling)) => {
                    self.step_call(calling, CallInput::KeepAlive, now_ms)
                }
                (Timer::Round, Job::Call(calling)) => {
                    self.step_call(calling, CallInput::RoundOver, now_ms)
                }
                (Timer::KeepAlive, Job::Listen(listen)) => {
                    self.send(KEEP_ALIVE.to_owned(), now_ms);
                    self.job = Job::Listen(listen);
                }
                (Timer::ToolList, Job::Listing { id, era, tools }) => {
                    self.listed(&id, &era, tools, None)
                }
                (Timer::TaskPoll, Job::Task(asked, _)) => {
                    let grant = self.access.as_ref().map(|a| a.grant.clone()).unwrap_or_default();
                    let again = Request::Task { grant, task: asked.task.clone(), op: TaskOp::Get };
                    self.ask(again);
                    self.job = Job::Task(asked, true);
                }
                // A `tasks/result` whose task still works when a call's wait ran out.
                (Timer::Overall, Job::Task(asked, _)) => {
                    self.settle(Settled::Json(200, tasks::still_working(&asked.id)))
                }
                (_, job) => self.job = job,
            }
        }
    }

    /// Starts answering one message (`stream`: the client takes a stream for it).
    fn start(&mut self, body: &[u8], stream: bool, now_ms: u64) {
        let Some(access) = self.access.clone() else { return };
        let headers = self.headers.mcp();
        let reply = handle(body, &headers, &self.config.app_url);
        let initialize = matches!(reply, McpReply::Initialize { .. });
        let declared = match session::check(self.session, &headers, initialize) {
            Ok(declared) => declared,
            Err(body) => return self.settle(Settled::Json(404, body)),
        };
        let grant = access.grant.clone();
        match reply {
            McpReply::Json { status, body } => self.settle(Settled::Json(status, body)),
            McpReply::Accepted => self.settle(Settled::Accepted),
            McpReply::Granted(body) => {
                self.check(&grant, Want::Nothing, Job::Check { body, initialize: None })
            }
            McpReply::Initialize { body, declared, revision } => {
                let initialize = Some((declared, revision));
                self.check(&grant, Want::Nothing, Job::Check { body, initialize })
            }
            // The grant's check and the answer in one round trip, within a short wait; a
            // pairing that cannot answer in time gets the bundled list (or, for status, says so).
            McpReply::ListTools { id, era } => {
                self.timers.set(Timer::ToolList, now_ms + TOOL_LIST_WAIT_MS);
                self.check(&grant, Want::Tools, Job::Listing { id, era, tools: true });
            }
            McpReply::Status { id, era } => {
                self.timers.set(Timer::ToolList, now_ms + TOOL_LIST_WAIT_MS);
                self.check(&grant, Want::Status, Job::Listing { id, era, tools: false });
            }
            McpReply::Cancel { request_id } => {
                // Nothing to tell the client either way: a cancellation has no answer.
                self.ask(Request::Cancel { request: request_key(&grant, &request_id) });
                self.job = Job::Cancel;
            }
            McpReply::Listen { id, tools } => {
                self.ask(Request::Listen { grant });
                self.job = Job::Listen(Listen::new(id, tools));
            }
            McpReply::Task(asked) => {
                self.ask(Request::Task { grant, task: asked.task.clone(), op: asked.method.op() });
                self.timers.set(Timer::Overall, now_ms + self.config.call_wait_ms);
                self.job = Job::Task(asked, true);
            }
            McpReply::Answer { id, answer } => {
                self.ask(Request::Answer { grant, id, answer });
                self.job = Job::Answer;
            }
            McpReply::Call(call) => {
                let resumable = resume::resumable(&headers, declared.as_ref(), stream);
                let session = declared;
                let params = self.headers.params.clone();
                let asked = ReadCall { call, stream, session, resumable, params };
                match call::start(asked, &access, self.config, now_ms) {
                    Start::Refused(body) => self.settle(Settled::Json(200, body)),
                    Start::Ask(request, call) => self.call(request, call, now_ms),
                    Start::MarkState { key, expires_ms, then } => {
                        self.ask(Request::UseState { key, expires_ms });
                        self.job = Job::Marking(then);
                    }
                }
            }
        }
    }

    /// The next message of a batch, or the batch's answer once none is left.
    fn next_in_batch(&mut self, now_ms: u64) {
        let Some((items, answers)) = self.batch.as_mut() else { return };
        match items.next() {
            Some(item) => self.start(&item, false, now_ms),
            None if answers.is_empty() => {
                self.batch = None;
                self.respond(202, Body::Empty);
            }
            None => {
                let answers = std::mem::take(answers);
                self.batch = None;
                self.respond(200, Body::Json(Value::Array(answers)));
            }
        }
    }

    /// One message answered: the request's answer, or (in a batch) one of its answers.
    fn settle(&mut self, settled: Settled) {
        self.timers = TimerTable::default();
        self.job = Job::Done;
        if let Some((_, answers)) = self.batch.as_mut() {
            match settled {
                // A connection that is not live answers nothing of its batch.
                Settled::Unauthorized => self.batch = None,
                Settled::Accepted => return self.next_in_batch(self.now_ms),
                Settled::Json(_, body) | Settled::Session(body, _) => {
                    answers.push(body);
                    return self.next_in_batch(self.now_ms);
                }
            }
        }
        let answer = match settled {
            Settled::Json(status, body) => return self.respond(status, Body::Json(body)),
            Settled::Accepted => return self.respond(202, Body::Empty),
            Settled::Unauthorized => unauthorized(&self.origin, true),
            Settled::Session(body, id) => Response {
                status: 200,
                body: Body::Json(body),
                headers: vec![("mcp-session-id", id)],
            },
        };
        self.out.push(Output::Respond(answer));
    }

    fn respond(&mut self, status: u16, body: Body) {
        self.job = Job::Done;
        self.out.push(Output::Respond(Response { status, body, headers: Vec::new() }));
    }

    /// Asks the pairing for the grant's check (with what `want` names), then waits as `job`.
    fn check(&mut self, grant: &str, want: Want, job: Job<'a>) {
        self.ask(Request::Check { grant: grant.to_owned(), want });
        self.job = job;
    }

    fn ask(&mut self, request: Request) {
        self.quiet_ms = quiet_bound(&request);
        self.timers.set(Timer::Pairing, self.now_ms + self.quiet_ms);
        self.out.push(Output::Ask(request));
    }

    /// Asks the pairing with a call; a client that takes a stream gets one if the answer does
    /// not come within the first wait.
    fn call(&mut self, request: CallRequest, call: Call<'a>, now_ms: u64) {
        self.ask(Request::Call(request.clone()));
        if call.takes_stream() {
            self.timers.set(Timer::FirstEvent, now_ms + FIRST_EVENT_WAIT_MS);
        }
        self.job = Job::Call(Box::new(Calling { call, request: Some(request) }));
    }

    /// One input to the call; what it says goes out.
    fn step_call(&mut self, mut calling: Box<Calling<'a>>, input: CallInput, now_ms: u64) {
        let output = calling.call.input(input, now_ms);
        if calling.call.streaming() {
            self.open(now_ms);
        }
        match output {
            CallOutput::Wait => {}
            CallOutput::Json { status, body } => return self.settle(Settled::Json(status, body)),
            CallOutput::Send(text) => self.send(text, now_ms),
            CallOutput::Last(text) => {
                self.send(text, now_ms);
                return self.end();
            }
            CallOutput::Ask { text, ids } => {
                self.send(text, now_ms);
                // The pairing holds the questions before the client can answer them.
                let Some(grant) = calling.request.as_ref().and(self.access.as_ref()) else {
                    return self.step_call(calling, CallInput::Ended, now_ms);
                };
                self.ask(Request::AwaitAnswers { grant: grant.grant.clone(), ids });
                self.timers.set(Timer::Round, now_ms + calling.call.round_wait_ms());
            }
            CallOutput::Again(input) => {
                // The client's answers: the call goes to the tab again with them.
                self.timers.stop(Timer::Round);
                let Some(again) = calling.request.as_mut() else {
                    return self.step_call(calling, CallInput::Ended, now_ms);
                };
                again.input = Some(input);
                self.ask(Request::Call(again.clone()));
            }
        }
        self.job = Job::Call(calling);
    }

    /// `tools/list` or `status` answered (None: the pairing did not say in time).
    fn listed(&mut self, id: &Id, era: &Era, tools: bool, answer: Option<Value>) {
        let body = if tools {
            tools_list(id, era, answer.unwrap_or_else(|| tools::list(None, self.catalogue)))
        } else {
            status_answer(id, era, answer)
        };
        self.settle(Settled::Json(200, body));
    }

    /// One reply of a listen stream.
    fn listening(&mut self, mut listen: Listen, reply: Option<&Reply>, now_ms: u64) {
        match listen.input(reply) {
            Some((text, last)) => {
                self.send(text, now_ms);
                if last {
                    return self.end();
                }
            }
            None => return self.end(),
        }
        self.job = Job::Listen(listen);
    }

    /// The event stream opens (once); a quiet stream keeps alive from now.
    fn open(&mut self, now_ms: u64) {
        if !self.opened {
            self.opened = true;
            self.timers.stop(Timer::FirstEvent);
            self.timers.set(Timer::KeepAlive, now_ms + KEEP_ALIVE_MS);
            self.out.push(Output::Open);
        }
    }

    /// Text on the stream (nothing for the empty text); the keep-alive counts from it.
    fn send(&mut self, text: String, now_ms: u64) {
        self.open(now_ms);
        if !text.is_empty() {
            self.out.push(Output::Send(text));
            self.timers.set(Timer::KeepAlive, now_ms + KEEP_ALIVE_MS);
        }
    }

    fn end(&mut self) {
        self.timers = TimerTable::default();
        self.job = Job::Done;
        self.out.push(Output::End);
    }
}

/// How long the pairing may say nothing on an ask before the exchange takes it as gone: a call
/// answered in one piece says only its end, within its wait (the pairing's own per-call bound,
/// which so still governs the call); every other ask is answered at once or hears the room's
/// tick after [`KEEP_ALIVE_MS`] of quiet. Then [`PAIRING_LATE_MS`] more, so the pairing's own
/// end (with its better sentence) always comes first.
fn quiet_bound(request: &Request) -> u64 {
    let said_by = match request {
        Request::Call(call) if !call.stream => call.wait_ms,
        _ => KEEP_ALIVE_MS,
    };
    said_by + PAIRING_LATE_MS
}

/// 401 with the header that tells a client where to authorize.
fn unauthorized(origin: &str, token_presented: bool) -> Response {
    let body = jsonrpc::object(&mut |o| {
        o.text("error", "invalid_token");
        o.text("error_description", sentences::TOKEN_INVALID);
    });
    let challenge = metadata::www_authenticate(origin, token_presented);
    Response { status: 401, body: Body::Json(body), headers: vec![("www-authenticate", challenge)] }
}

/// 405 naming the methods the endpoint takes.
fn not_allowed() -> Response {
    let methods = routes::allow("/").unwrap_or_default();
    let body = Body::Text(sentences::method_not_allowed(&methods));
    Response { status: 405, body, headers: vec![("allow", methods)] }
}

impl crate::machine::Machine for Exchange<'_> {
    type Input = Input;
    type Output = Output;
    type Host<'h> = ();

    #[inline]
    fn handle_input(&mut self, input: Input, now_ms: u64, (): &mut ()) {
        match input {
            Input::Body(body) => self.handle_body(body, now_ms),
            Input::Reply(reply) => self.handle_reply(reply, now_ms),
        }
    }

    #[inline]
    fn poll_output(&mut self, (): &mut ()) -> Option<Output> {
        Exchange::poll_output(self)
    }

    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        Exchange::poll_timeout(self)
    }

    #[inline]
    fn handle_timeout(&mut self, now_ms: u64, (): &mut ()) {
        Exchange::handle_timeout(self, now_ms);
    }
}

/// What happens to an exchange (its [`crate::machine::Machine::Input`]).
#[derive(Debug)]
pub enum Input {
    /// The request's body ([`Output::ReadBody`]), or that it passed its cap.
    Body(Result<Vec<u8>, TooLarge>),
    /// One of the pairing's replies to the last [`Output::Ask`] (None: its replies ended, or
    /// it could not be asked).
    Reply(Option<Reply>),
}
