//! A tool call's and a listen stream's answer to the client, under the [`super::Exchange`]:
//! the whole answer as JSON, or an event stream (which progress, which keep-alives, the final
//! answer), decided from what the pairing says and the exchange's timers (the exchange keeps
//! the clock: the first-event wait, the keep-alive and a round's wait come in as inputs).

use serde_json::Value;
use tabrelay_bundle::content::quoted;

use crate::config::Config;
use crate::jsonrpc::{self, Id};
use crate::keys::Keys;
use crate::limits::{KEEP_ALIVE_MS, PROGRESS_AT_LEAST_EVERY_MS};
use crate::mcp::asking::{self, Round};
use crate::mcp::resume::EventIds;
use crate::mcp::session::Declared;
use crate::mcp::{call_reply, clients, input, listen_acknowledged, listen_ended, progress};
use crate::mcp::{logging, sse_event, tools_changed, Era, Retry, KEEP_ALIVE};
use crate::oauth::token::Access;
use crate::pairing::wire::{request_key, CallRequest};
use crate::pairing::wire::{CallEvent, CallReply, ListenEvent, Reply};
use crate::sentences;
use tabrelay_bundle::protocol::{Connection, Outcome, ToolCall};

/// A `tools/call` as the MCP endpoint read it from the request's body.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsCall {
    /// The request's id.
    pub id: Id,
    /// The tool's name (valid by the rule; the pairing checks it is in the list).
    pub tool: String,
    /// Its arguments (an object).
    pub args: Value,
    /// The client's progress token, when it asked for progress.
    pub progress_token: Option<Value>,
    /// The revision the call came in (its answer is shaped by it).
    pub era: Era,
    /// A retried call's answers to the input it was asked for (2026-07-28).
    pub retry: Option<Retry>,
    /// Set when the client takes tasks.
    pub tasks: Option<crate::pairing::wire::TaskTerms>,
}

/// A `tools/call` as the MCP endpoint read it: from its body, passed whole, and from its
/// headers.
#[derive(Debug, Clone)]
pub struct ReadCall {
    /// What the body said.
    pub call: ToolsCall,
    /// Whether the client takes a stream.
    pub stream: bool,
    /// What a session-era client declared at `initialize` (its session id), when it said.
    pub session: Option<Declared>,
    /// Whether the client comes back for the call when its stream drops
    /// ([`crate::mcp::resume::resumable`]).
    pub resumable: bool,
    /// The request's `Mcp-Param-{Name}` headers ([`crate::mcp::Headers::params`]).
    pub params: serde_json::Map<String, Value>,
}

/// What a call becomes before the pairing is asked.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made once per call and taken apart at once
pub enum Start<'k> {
    /// Refused at once (a retried state that does not open): the JSON-RPC response.
    Refused(Value),
    /// The retried state's one use must be marked first (the pairing's `UseState` with this
    /// key and expiry); then [`Starting::state_used`] says what follows.
    MarkState {
        /// The state's key.
        key: String,
        /// Until when the pairing keeps it.
        expires_ms: u64,
        /// The call, once the state is marked.
        then: Box<Starting<'k>>,
    },
    /// Ask the pairing with this request; the client's answer comes through the [`Call`].
    Ask(CallRequest, Call<'k>),
}

/// A call waiting for its retried state to be marked used.
#[derive(Debug)]
pub struct Starting<'k> {
    request: CallRequest,
    call: Call<'k>,
}

impl<'k> Starting<'k> {
    /// Whether the pairing marked the state used now (false: it came back before, or the
    /// pairing could not say): the call goes on, or is refused.
    pub fn state_used(self, first: bool) -> Result<(CallRequest, Call<'k>), Value> {
        if first {
            Ok((self.request, self.call))
        } else {
            Err(jsonrpc::error(Some(&self.call.who.id), &input::replayed()))
        }
    }
}

/// What a call from connection `access` becomes at `now_ms`: its wait (the relay's, or less for
/// a client known to give up sooner), a retried state opened (or refused) and marked used once,
/// the request to the pairing and the answer's state machine.
#[must_use]
pub fn start<'k>(asked: ReadCall, access: &Access, config: &'k Config, now_ms: u64) -> Start<'k> {
    let ReadCall { call, stream, session, resumable, params } = asked;
    let ToolsCall { id, tool, args, progress_token, era, retry, tasks } = call;
    let told = match &era {
        Era::Stateless { client_name, .. } => client_name.as_deref(),
        Era::Session => None,
    };
    let names = [told, Some(access.client.as_str())];
    let wait_ms = clients::wait_ms(config.call_wait_ms, &names, progress_token.is_some());
    let identity = input::CallKey { grant: &access.grant, tool: &tool, args: &args };
    let (input, once) = match retry {
        None => (None, None),
        Some(r) => {
            match input::resume(&config.keys, identity, r.state.as_deref(), r.responses, now_ms) {
                Ok(resume) => (Some(resume.for_tab()), resume.once),
                Err(e) => return Start::Refused(jsonrpc::error(Some(&id), &e)),
            }
        }
    };
    let request = CallRequest {
        tool_call: ToolCall {
            tool: tool.clone(),
            args: args.clone(),
            agent: access.client.clone(),
            connection: Connection {
                id: access.grant.clone(),
                kind: "connector".into(),
                client: access.client.clone(),
                host: access.host.clone(),
                verified: None,
            },
        },
        wait_ms,
        request: request_key(&access.grant, &id),
        stream,
        input,
        resumable,
        task: tasks,
        // Only the 2026-07-28 revision mirrors arguments in headers; the pairing checks them.
        param_headers: era.is_stateless().then_some(Value::Object(params)),
    };
    let keys = &config.keys;
    let who = CallIdentity { id, era, keys, grant: access.grant.clone(), tool, args };
    let mut call = Call::new(who, stream, progress_token, now_ms).asking(session, wait_ms);
    if resumable {
        call.ids = Some(EventIds::new(&call.who.id, call.progress_token.as_ref(), 0));
    }
    match once {
        Some(once) => Start::MarkState {
            key: once.key,
            expires_ms: once.expires_ms,
            then: Box::new(Starting { request, call }),
        },
        None => Start::Ask(request, call),
    }
}

/// What happened: the pairing said something, or the clock ran ([`crate::limits::FIRST_EVENT_WAIT_MS`]).
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one input at a time, moved straight in: boxing would only add an allocation
pub enum CallInput {
    /// One event line from the pairing.
    Event(CallEvent),
    /// A reply that is not a call's event (skipped).
    Unreadable,
    /// The pairing's answer ended without its last event (it went away).
    Ended,
    /// The first wait passed with nothing from the pairing: the stream opens.
    FirstWaitOver,
    /// The stream was quiet for [`KEEP_ALIVE_MS`]: progress when it is due, a comment
    /// otherwise (the pairing's own ticks are not needed: the exchange keeps the clock).
    KeepAlive,
    /// The round of questions was not answered within its wait.
    RoundOver,
    /// The client answered every question of the round (id → answer).
    Answers(Value),
}

impl CallInput {
    /// A reply of the pairing as an input; None (its replies ended) is [`Self::Ended`].
    #[must_use]
    pub fn of_reply(reply: Option<Reply>) -> Self {
        match reply {
            None => Self::Ended,
            Some(Reply::Call(event)) => Self::Event(event),
            Some(Reply::Answers(answers)) => Self::Answers(answers),
            Some(Reply::TooManyQuestions) => {
                Self::Event(CallEvent::Done(CallReply::not_carried(sentences::TOO_MANY_QUESTIONS)))
            }
            Some(_) => Self::Unreadable,
        }
    }
}

/// What to do with the client's response.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutput {
    /// Nothing yet: give the next input.
    Wait,
    /// The whole answer as one JSON response with this HTTP status (only before the stream
    /// opened).
    Json {
        /// The HTTP status.
        status: u16,
        /// The JSON-RPC response.
        body: Value,
    },
    /// Open the event stream if it is not open, and send this text.
    Send(String),
    /// Send this text and end the stream: the call is answered.
    Last(String),
    /// Open the event stream if it is not open, send these questions to the client, and ask
    /// the pairing to wait for its answers to `ids` (its replies are the next inputs).
    Ask {
        /// The questions, as events.
        text: String,
        /// Their ids.
        ids: Vec<String>,
    },
    /// Ask the pairing again with the same call, with this `input` for the tab (the client's
    /// answers); its replies are the next inputs.
    Again(Value),
}

/// What a call's answer needs to know of the call.
#[derive(Debug, Clone)]
pub struct CallIdentity<'k> {
    /// The JSON-RPC id.
    pub id: Id,
    /// The revision the client speaks.
    pub era: Era,
    /// The relay's keys (a 2026-07-28 `input_required` state is sealed with them).
    pub keys: &'k Keys,
    /// The connection's grant.
    pub grant: String,
    /// The tool called.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
}

/// One tool call's answer to its client.
#[derive(Debug)]
pub struct Call<'k> {
    who: CallIdentity<'k>,
    /// The client listens to a stream (its `Accept` names it).
    stream: bool,
    progress_token: Option<Value>,
    /// Progress notifications sent (the count each carries).
    progress_sent: u64,
    /// When the last progress went out (or the call began).
    last_progress_ms: u64,
    /// The person's card while they are being asked.
    asking: Option<String>,
    /// When the call began.
    started_ms: u64,
    open: bool,
    done: bool,
    /// What a session-era client declared it can be asked (None: it cannot be asked).
    session: Option<Declared>,
    /// The round of questions waiting for the client's answers.
    round: Option<Round>,
    /// Rounds asked so far.
    rounds: u64,
    /// How long a round may wait for the client's answers.
    wait_ms: u64,
    /// The ids of a resumable stream's events (None: its client does not come back).
    ids: Option<EventIds>,
}

impl<'k> Call<'k> {
    /// A call that began at `now_ms`.
    #[must_use]
    pub fn new(
        who: CallIdentity<'k>,
        stream: bool,
        progress_token: Option<Value>,
        now_ms: u64,
    ) -> Self {
        Self {
            who,
            stream,
            progress_token,
            progress_sent: 0,
            last_progress_ms: now_ms,
            asking: None,
            started_ms: now_ms,
            open: false,
            done: false,
            session: None,
            round: None,
            rounds: 0,
            wait_ms: 0,
            ids: None,
        }
    }

    /// A call taken up again by its client (its stream dropped) after the event numbered
    /// `last`: a stream from the start, numbered on, its progress (when the call asked for
    /// it) counting on past any the client saw (each went out as a numbered event).
    #[must_use]
    pub fn resumed(who: CallIdentity<'k>, progress: Option<Value>, last: u64, now_ms: u64) -> Self {
        let ids = Some(EventIds::new(&who.id, progress.as_ref(), last + 1));
        let mut call = Self::new(who, true, progress, now_ms);
        call.open = true;
        call.ids = ids;
        call.progress_sent = last;
        call
    }

    /// What a resumable stream opens with (its priming event), once; empty otherwise.
    pub fn opening(&mut self) -> String {
        self.ids.as_mut().map(|ids| ids.frame("")).unwrap_or_default()
    }

    /// The call of a session-era client that declared `session` (None: no session id, so the
    /// tab's questions go to it as a sentence): each round waits `wait_ms` for its answers.
    #[must_use]
    pub fn asking(mut self, session: Option<Declared>, wait_ms: u64) -> Self {
        self.session = session;
        self.wait_ms = wait_ms;
        self
    }

    /// A tab's questions the client can be asked on its stream, asked (None: not such a
    /// client or not such an answer, or none it can take).
    fn ask_client(&mut self, answer: Option<&CallReply>) -> Option<CallOutput> {
        let Some(CallReply::TabResult { outcome: Outcome::InputRequired { requests, state } }) =
            answer
        else {
            return None;
        };
        let declared = self.session.as_ref().filter(|_| self.stream)?;
        let call = format!("{}@{}", request_key(&self.who.grant, &self.who.id), self.started_ms);
        let round = self.rounds + 1;
        let asked = asking::ask(self.who.keys, &call, round, declared, requests, state.as_ref())?;
        self.rounds = round;
        let ids = asked.round.ids();
        self.round = Some(asked.round);
        self.open = true;
        Some(CallOutput::Ask { text: asked.text, ids })
    }

    /// How long a round of questions waits for the client's answers.
    #[must_use]
    pub fn round_wait_ms(&self) -> u64 {
        self.wait_ms
    }

    /// Whether the client takes a stream (its `Accept` names one).
    #[must_use]
    pub fn takes_stream(&self) -> bool {
        self.stream
    }

    /// Whether the client gets a stream: it accepts one, and the answer did not come at once.
    #[must_use]
    pub fn streaming(&self) -> bool {
        self.open
    }

    /// Whether the call is answered (nothing more goes out).
    #[must_use]
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The HTTP status and JSON-RPC response for the pairing's answer (None: none came).
    #[must_use]
    pub fn reply(&self, answer: Option<CallReply>, now_ms: u64) -> (u16, Value) {
        let w = &self.who;
        let call = input::CallKey { grant: &w.grant, tool: &w.tool, args: &w.args };
        call_reply(&w.id, &w.era, w.keys, call, answer, now_ms)
    }

    /// The client's response for the pairing's whole answer when the client takes no stream
    /// (the pairing answered in one piece).
    #[must_use]
    pub fn whole(&mut self, answer: Option<CallReply>, now_ms: u64) -> CallOutput {
        self.done = true;
        let (status, body) = self.reply(answer, now_ms);
        CallOutput::Json { status, body }
    }

    /// Takes one input at `now_ms`; says what goes to the client (on a resumable stream, its
    /// events numbered, after the priming event).
    pub fn input(&mut self, input: CallInput, now_ms: u64) -> CallOutput {
        let mut output = self.step(input, now_ms);
        let Some(ids) = self.ids.as_mut().filter(|_| self.open) else { return output };
        if let CallOutput::Send(text) | CallOutput::Last(text) | CallOutput::Ask { text, .. } =
            &mut output
        {
            *text = ids.frame(text);
        }
        output
    }

    fn step(&mut self, input: CallInput, now_ms: u64) -> CallOutput {
        if self.done {
            return CallOutput::Wait;
        }
        let answer = match input {
            CallInput::Event(CallEvent::Done(answer)) => Some(answer),
            CallInput::Ended => None,
            CallInput::Unreadable => return CallOutput::Wait,
            CallInput::FirstWaitOver => {
                if !self.stream || self.open {
                    return CallOutput::Wait;
                }
                self.open = true;
                // A resumable stream opens with its priming event at once.
                if self.ids.is_some() {
                    return CallOutput::Send(String::new());
                }
                return CallOutput::Wait;
            }
            CallInput::Event(CallEvent::Asking(card)) => {
                let text = self.said(now_ms, &sentences::person_asked(&quoted(&card)));
                self.asking = Some(card);
                return self.send(text);
            }
            CallInput::Event(CallEvent::Answered) => {
                self.asking = None;
                let text = self.said(now_ms, sentences::PERSON_ANSWERED);
                return self.send(text);
            }
            CallInput::Answers(answers) => {
                return match self.round.take() {
                    Some(round) => CallOutput::Again(round.input(&answers)),
                    None => CallOutput::Wait,
                };
            }
            // The pairing's ticks: the exchange's own keep-alive speaks instead.
            CallInput::Event(CallEvent::Tick) => return CallOutput::Wait,
            CallInput::RoundOver if self.round.is_some() => {
                self.round = None;
                Some(CallReply::not_carried(sentences::QUESTIONS_UNANSWERED))
            }
            CallInput::RoundOver => return CallOutput::Wait,
            CallInput::KeepAlive => {
                // Progress when the last went out long enough ago that waiting for the next
                // keep-alive could break the promise; a keep-alive comment otherwise.
                let due = now_ms.saturating_sub(self.last_progress_ms)
                    >= PROGRESS_AT_LEAST_EVERY_MS - KEEP_ALIVE_MS;
                let text = match (&self.progress_token, due) {
                    (Some(_), true) => {
                        let sentence = self.still_waiting(now_ms);
                        self.progress(now_ms, &sentence)
                    }
                    _ => KEEP_ALIVE.to_owned(),
                };
                return self.send(text);
            }
        };
        if let Some(asked) = self.ask_client(answer.as_ref()) {
            return asked;
        }
        self.done = true;
        let (status, body) = self.reply(answer, now_ms);
        if self.open {
            CallOutput::Last(sse_event(&body))
        } else {
            // The answer came before the stream opened: plain JSON, with its own status.
            CallOutput::Json { status, body }
        }
    }

    /// Text sent before the answer opens the stream (a client that takes none hears nothing
    /// until the answer).
    fn send(&mut self, text: String) -> CallOutput {
        if !self.stream {
            return CallOutput::Wait;
        }
        self.open = true;
        CallOutput::Send(text)
    }

    /// What the tab said, as a log message in the session era ([`super::logging`]) and as
    /// progress (or a keep-alive when neither goes).
    fn said(&mut self, now_ms: u64, sentence: &str) -> String {
        let progress = self.progress(now_ms, sentence);
        match (&self.who.era, self.progress_token.is_some()) {
            (Era::Session, true) => sse_event(&logging::message(sentence)) + &progress,
            (Era::Session, false) => sse_event(&logging::message(sentence)),
            (Era::Stateless { .. }, _) => progress,
        }
    }

    /// A progress notification with `message`, or a keep-alive when the client asked none.
    fn progress(&mut self, now_ms: u64, message: &str) -> String {
        match &self.progress_token {
            Some(token) => {
                self.progress_sent += 1;
                self.last_progress_ms = now_ms;
                sse_event(&progress(token, self.progress_sent, message))
            }
            None => KEEP_ALIVE.to_owned(),
        }
    }

    /// What a progress notification says while nothing new happened.
    fn still_waiting(&self, now_ms: u64) -> String {
        match &self.asking {
            Some(card) => sentences::person_asked(&quoted(card)),
            None => sentences::still_working(now_ms.saturating_sub(self.started_ms) / 1000),
        }
    }
}

/// A `subscriptions/listen` stream: the acknowledgement first, then each change the pairing
/// reports (as asked) and keep-alives, and a complete result when the pairing stops.
#[derive(Debug)]
pub struct Listen {
    id: Id,
    tools: bool,
    acknowledged: bool,
    done: bool,
}

impl Listen {
    /// A listen request `id`, asking for tool list changes when `tools`.
    #[must_use]
    pub fn new(id: Id, tools: bool) -> Self {
        Self { id, tools, acknowledged: false, done: false }
    }

    /// Whether the acknowledgement went out ([`Self::start`]).
    #[must_use]
    pub fn is_acknowledged(&self) -> bool {
        self.acknowledged
    }

    /// What to send first (the acknowledgement), once; None afterwards.
    pub fn start(&mut self) -> Option<String> {
        if self.acknowledged {
            return None;
        }
        self.acknowledged = true;
        Some(sse_event(&listen_acknowledged(&self.id, self.tools)))
    }

    /// Takes one reply of the pairing's listen stream (None: it ended, or something other than
    /// a listen event came); what to send, and whether it is the last (the empty text: nothing,
    /// as for the pairing's ticks: the exchange's own keep-alive speaks instead). Nothing once
    /// ended.
    pub fn input(&mut self, reply: Option<&Reply>) -> Option<(String, bool)> {
        if self.done {
            return None;
        }
        let text = match reply {
            Some(Reply::Listen(ListenEvent::ToolsChanged)) if self.tools => {
                sse_event(&tools_changed(&self.id))
            }
            Some(Reply::Listen(ListenEvent::ToolsChanged)) => KEEP_ALIVE.to_owned(),
            Some(Reply::Listen(_)) => String::new(),
            Some(Reply::TooManyListeners) => {
                self.done = true;
                let limit = crate::limits::MAX_LISTENERS_PER_CONNECTION;
                let sentence = sentences::too_many_listeners(limit);
                let code = jsonrpc::ErrorCode::INTERNAL_ERROR;
                return Some((sse_event(&jsonrpc::refusal(Some(&self.id), code, &sentence)), true));
            }
            _ => {
                self.done = true;
                return Some((sse_event(&listen_ended(&self.id)), true));
            }
        };
        Some((text, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{FIRST_EVENT_WAIT_MS, TAB_CALL_WAIT_MS};
    use serde_json::json;
    use tabrelay_bundle::fields::JsonText;
    use tabrelay_bundle::protocol::Outcome;

    /// The call's identity; its keys live as long as the test (a call borrows the relay's).
    fn who() -> CallIdentity<'static> {
        CallIdentity {
            id: Id::Number(7),
            era: Era::Session,
            keys: Box::leak(Box::new(Keys::new(&"k".repeat(32), None).unwrap())),
            grant: "g".into(),
            tool: "history_list".into(),
            args: json!({}),
        }
    }

    fn done() -> CallInput {
        let outcome = Outcome::Done {
            data: JsonText::of(&json!({"rows": 3})),
            image: None,
            audio: None,
            resource: None,
            structured: false,
        };
        CallInput::Event(CallEvent::Done(CallReply::TabResult { outcome }))
    }

    /// The JSON-RPC message an event carries, past any log message (None: a comment).
    fn message(text: &str) -> Option<Value> {
        logged(text).into_iter().find(|m| m["method"] != "notifications/message")
    }

    /// Every JSON-RPC message the text's events carry.
    fn logged(text: &str) -> Vec<Value> {
        let data = text.split("\n\n").filter_map(|e| e.strip_prefix("event: message\ndata: "));
        data.map(|d| serde_json::from_str(d).unwrap()).collect()
    }

    fn access(client: &str) -> Access {
        Access {
            iss: "o".into(),
            aud: "o".into(),
            pairing: "p".into(),
            grant: "g1".into(),
            client: client.into(),
            host: "claude.ai".into(),
        }
    }

    /// The relay's configuration, living as long as the test (a call borrows its keys).
    fn config() -> &'static Config {
        Box::leak(Box::new(Config::for_tests()))
    }

    #[test]
    fn only_a_2026_07_28_call_passes_its_param_headers_to_the_pairing() {
        let access = access("x");
        let params = json!({"region": "eu"}).as_object().unwrap().clone();
        let request = |era| match start(
            ReadCall {
                call: ToolsCall { era, ..asked(None, None).call },
                params: params.clone(),
                ..asked(None, None)
            },
            &access,
            config(),
            0,
        ) {
            Start::Ask(request, _) => request.param_headers,
            other => panic!("{other:?}"),
        };
        assert_eq!(request(Era::Session), None);
        let stateless = Era::Stateless { capabilities: serde_json::Map::new(), client_name: None };
        assert_eq!(request(stateless), Some(json!({"region": "eu"})));
    }

    fn asked(retry: Option<Retry>, progress_token: Option<Value>) -> ReadCall {
        let args = json!({"ids": [1]});
        let (id, tool, era) = (Id::Number(9), "items_delete".to_owned(), Era::Session);
        let (session, tasks) = (None, None);
        ReadCall {
            call: ToolsCall { id, tool, args, progress_token, era, retry, tasks },
            stream: true,
            session,
            resumable: false,
            params: serde_json::Map::new(),
        }
    }

    #[test]
    fn a_call_asks_the_pairing_with_its_connection_and_the_wait_its_client_allows() {
        let Start::Ask(request, call) = start(asked(None, None), &access("ChatGPT"), config(), 0)
        else {
            panic!("ask")
        };
        assert_eq!(request.wait_ms, 54_000, "ChatGPT gives up at 60 s");
        assert_eq!(request.tool_call.connection.id, "g1");
        assert_eq!(request.tool_call.connection.host, "claude.ai");
        assert_eq!(request.request, request_key("g1", &Id::Number(9)));
        assert!(request.stream && request.input.is_none());
        assert!(!call.streaming());
        let Start::Ask(request, _) =
            start(asked(None, Some(json!("t"))), &access("claude-code"), config(), 0)
        else {
            panic!("ask")
        };
        assert_eq!(request.wait_ms, TAB_CALL_WAIT_MS, "progress keeps Claude Code waiting");
    }

    #[test]
    fn a_retried_state_is_opened_marked_used_once_or_refused() {
        let bad = Retry { state: Some("forged".into()), responses: json!({}) };
        let Start::Refused(body) = start(asked(Some(bad), None), &access("x"), config(), 0) else {
            panic!("refused")
        };
        assert_eq!(body["error"]["code"], -32602);
        assert_eq!(body["id"], 9);
        // A state the relay sealed for this call.
        let caps = json!({"elicitation": {}});
        let era =
            Era::Stateless { capabilities: caps.as_object().unwrap().clone(), client_name: None };
        let args = json!({"ids": [1]});
        let mut requests = serde_json::Map::new();
        requests.insert("ok".into(), json!({"method": "elicitation/create", "params": {}}));
        let identity = input::CallKey { grant: "g1", tool: "items_delete", args: &args };
        let asked_for =
            input::ask(&config().keys, &era, identity, &requests, Some(&json!({"n": 1})), 0)
                .unwrap();
        let state = asked_for["requestState"].as_str().unwrap().to_owned();
        let retry =
            || Retry { state: Some(state.clone()), responses: json!({"ok": {"action": "accept"}}) };
        let Start::MarkState { then, .. } =
            start(asked(Some(retry()), None), &access("x"), config(), 10)
        else {
            panic!("mark the state first")
        };
        let (request, _) = then.state_used(true).unwrap();
        assert_eq!(request.input.as_ref().unwrap()["responses"]["ok"]["action"], "accept");
        assert_eq!(request.input.as_ref().unwrap()["state"], json!({"n": 1}));
        let Start::MarkState { then, .. } =
            start(asked(Some(retry()), None), &access("x"), config(), 10)
        else {
            panic!("mark the state first")
        };
        let refused = then.state_used(false).unwrap_err();
        assert_eq!(refused["error"]["code"], -32602, "a state that came back before: {refused}");
    }

    #[test]
    fn an_answer_before_the_first_wait_is_plain_json_even_to_a_streaming_client() {
        let mut call = Call::new(who(), true, None, 0);
        let CallOutput::Json { status, body } = call.input(done(), 100) else { panic!("json") };
        assert_eq!(status, 200);
        assert_eq!(body["id"], 7);
        assert!(body["result"]["content"][0]["text"].as_str().unwrap().contains("rows"));
        assert!(call.is_done() && !call.streaming());
        assert_eq!(call.input(done(), 200), CallOutput::Wait, "nothing after the answer");
    }

    #[test]
    fn after_the_first_wait_the_answer_ends_the_stream() {
        let mut call = Call::new(who(), true, None, 0);
        assert_eq!(call.input(CallInput::FirstWaitOver, FIRST_EVENT_WAIT_MS), CallOutput::Wait);
        assert!(call.streaming(), "the stream opens with nothing to say yet");
        assert_eq!(call.input(CallInput::Unreadable, 600), CallOutput::Wait, "skipped");
        let CallOutput::Last(text) = call.input(done(), 700) else { panic!("last") };
        assert_eq!(message(&text).unwrap()["id"], 7);
        assert!(call.is_done());
    }

    #[test]
    fn a_pairing_that_goes_away_ends_the_stream_with_the_relays_sentence() {
        let mut call = Call::new(who(), true, None, 0);
        call.input(CallInput::FirstWaitOver, 500);
        let CallOutput::Last(text) = call.input(CallInput::Ended, 900) else { panic!("last") };
        let body = message(&text).unwrap();
        assert_eq!(body["result"]["isError"], true);
        assert_eq!(body["result"]["content"][0]["text"], sentences::PAIRING_UNAVAILABLE);
        // Before the stream opened, the same as JSON.
        let mut early = Call::new(who(), true, None, 0);
        assert!(matches!(early.input(CallInput::Ended, 10), CallOutput::Json { status: 200, .. }));
    }

    #[test]
    fn the_person_being_asked_and_answering_are_progress_with_a_token_and_comments_without() {
        let mut call = Call::new(who(), true, Some(json!("tok")), 0);
        let CallOutput::Send(asked) =
            call.input(CallInput::Event(CallEvent::Asking("Delete 3 rows?".into())), 100)
        else {
            panic!("send")
        };
        let asked = message(&asked).unwrap();
        assert_eq!(asked["method"], "notifications/progress");
        assert_eq!(asked["params"]["progressToken"], "tok");
        assert_eq!(asked["params"]["progress"], 1);
        let said = asked["params"]["message"].as_str().unwrap();
        assert!(said.contains(&quoted("Delete 3 rows?")), "the card is quoted as data: {said}");
        assert!(call.streaming(), "something was said: the stream opened before 500 ms");
        let CallOutput::Send(answered) = call.input(CallInput::Event(CallEvent::Answered), 2000)
        else {
            panic!("send")
        };
        let answered = message(&answered).unwrap();
        assert_eq!(answered["params"]["progress"], 2);
        assert_eq!(answered["params"]["message"], sentences::PERSON_ANSWERED);

        let stateless = Era::Stateless { capabilities: serde_json::Map::new(), client_name: None };
        let mut quiet = Call::new(CallIdentity { era: stateless, ..who() }, true, None, 0);
        let asking = CallInput::Event(CallEvent::Asking("x".into()));
        assert_eq!(quiet.input(asking, 100), CallOutput::Send(KEEP_ALIVE.into()));
    }

    #[test]
    fn in_the_session_era_what_the_tab_says_goes_as_log_messages_too_with_a_token_or_without() {
        for token in [None, Some(json!("tok"))] {
            let mut call = Call::new(who(), true, token.clone(), 0);
            let asking = CallInput::Event(CallEvent::Asking("Delete 3 rows?".into()));
            let CallOutput::Send(asked) = call.input(asking, 100) else { panic!("send") };
            let CallOutput::Send(answered) = call.input(CallInput::Event(CallEvent::Answered), 200)
            else {
                panic!("send")
            };
            let said = [logged(&asked), logged(&answered)].map(|m| m[0].clone());
            assert_eq!(
                said[0],
                logging::message(&sentences::person_asked(&quoted("Delete 3 rows?")))
            );
            assert_eq!(said[1], logging::message(sentences::PERSON_ANSWERED));
            // One log message per event, and progress beside it only when asked for.
            let counts = [logged(&asked).len(), logged(&answered).len()];
            assert_eq!(counts, if token.is_some() { [2, 2] } else { [1, 1] });
            // Ticks are no news: never logged.
            let tick = call.input(CallInput::Event(CallEvent::Tick), 15_000);
            assert!(!matches!(tick, CallOutput::Send(t) if t.contains("notifications/message")));
        }
    }

    #[test]
    fn a_client_that_takes_no_stream_hears_nothing_until_the_answer() {
        let mut call = Call::new(who(), false, Some(json!(1)), 0);
        assert_eq!(
            call.input(CallInput::Event(CallEvent::Asking("x".into())), 10),
            CallOutput::Wait
        );
        assert_eq!(call.input(CallInput::Event(CallEvent::Tick), 15_000), CallOutput::Wait);
        assert_eq!(call.input(CallInput::FirstWaitOver, 500), CallOutput::Wait);
        assert!(!call.streaming());
        assert!(matches!(call.input(done(), 20_000), CallOutput::Json { status: 200, .. }));
    }

    #[test]
    fn a_waiting_call_with_a_token_gets_progress_at_least_every_30_s_for_its_whole_wait() {
        let mut call = Call::new(who(), true, Some(json!("t")), 0);
        call.input(CallInput::FirstWaitOver, 500);
        let mut last_progress = 0;
        let mut count = 0;
        let mut now = 0;
        // The exchange wakes the call every KEEP_ALIVE_MS of quiet; the person is asked at
        // 20 s and answers at 200 s.
        while now < TAB_CALL_WAIT_MS {
            now += KEEP_ALIVE_MS;
            let input = match now {
                n if (20_000..20_000 + KEEP_ALIVE_MS).contains(&n) => {
                    CallInput::Event(CallEvent::Asking("Delete?".into()))
                }
                n if (200_000..200_000 + KEEP_ALIVE_MS).contains(&n) => {
                    CallInput::Event(CallEvent::Answered)
                }
                _ => CallInput::KeepAlive,
            };
            let CallOutput::Send(text) = call.input(input, now) else { panic!("send") };
            if let Some(m) = message(&text) {
                count += 1;
                assert_eq!(m["params"]["progress"], count, "the count grows by one");
                let said = m["params"]["message"].as_str().unwrap().to_owned();
                if (30_000..200_000).contains(&now) {
                    assert!(said.contains(&quoted("Delete?")), "while asked, the card: {said}");
                }
                last_progress = now;
            }
            assert!(
                now - last_progress <= PROGRESS_AT_LEAST_EVERY_MS,
                "{now}: no progress since {last_progress}"
            );
        }
        assert!(count >= (TAB_CALL_WAIT_MS / PROGRESS_AT_LEAST_EVERY_MS) as i64);
        // Without a token only comments go out (progress needs a token).
        let mut plain = Call::new(who(), true, None, 0);
        plain.input(CallInput::FirstWaitOver, 500);
        assert_eq!(plain.input(CallInput::KeepAlive, 60_000), CallOutput::Send(KEEP_ALIVE.into()));
    }

    #[test]
    fn a_tick_soon_after_progress_is_a_comment() {
        let mut call = Call::new(who(), true, Some(json!("t")), 0);
        call.input(CallInput::Event(CallEvent::Asking("x".into())), 1000);
        let tick = CallInput::KeepAlive;
        assert_eq!(call.input(tick.clone(), 1000 + 5_000), CallOutput::Send(KEEP_ALIVE.into()));
        let pairing_tick = CallInput::Event(CallEvent::Tick);
        assert_eq!(
            call.input(pairing_tick, 1000 + 6_000),
            CallOutput::Wait,
            "the exchange's clock"
        );
        let CallOutput::Send(text) = call.input(tick, 1000 + 15_000) else { panic!("send") };
        assert!(message(&text).is_some(), "15 s after the last progress a tick is progress");
    }

    #[test]
    fn a_listen_stream_acknowledges_once_passes_changes_asked_for_and_ends_with_a_result() {
        let mut listen = Listen::new(Id::Number(3), true);
        let ack = message(&listen.start().unwrap()).unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(listen.start(), None, "acknowledged once");
        let changed = &Reply::Listen(ListenEvent::ToolsChanged);
        let tick = &Reply::Listen(ListenEvent::Tick);
        let (text, last) = listen.input(Some(changed)).unwrap();
        assert_eq!(message(&text).unwrap()["method"], "notifications/tools/list_changed");
        assert!(!last);
        assert_eq!(
            listen.input(Some(tick)).unwrap(),
            (String::new(), false),
            "the exchange's clock"
        );
        let (end_early, last) = Listen::new(Id::Number(5), true).input(Some(&Reply::Done)).unwrap();
        assert!(last && message(&end_early).is_some(), "a reply that is no listen event ends it");
        let mut full = Listen::new(Id::Number(6), true);
        full.start();
        let (refused, last) = full.input(Some(&Reply::TooManyListeners)).unwrap();
        let refused = message(&refused).unwrap();
        assert!(last && refused["id"] == 6, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().starts_with("This connection"));
        let (end, last) = listen.input(None).unwrap();
        assert!(last);
        assert_eq!(message(&end).unwrap()["id"], 3);
        assert_eq!(listen.input(Some(changed)), None, "nothing after the end");
        // A listener that did not ask for tool changes gets comments instead.
        let mut other = Listen::new(Id::Number(4), false);
        other.start();
        assert_eq!(other.input(Some(changed)).unwrap(), (KEEP_ALIVE.to_owned(), false));
    }

    fn asks(requests: Value) -> CallInput {
        let requests = requests.as_object().unwrap().clone();
        let outcome = Outcome::InputRequired { requests, state: Some(json!({"round": 1})) };
        CallInput::Event(CallEvent::Done(CallReply::TabResult { outcome }))
    }

    fn name_and_draft() -> CallInput {
        asks(json!({
            "name": {"method": "elicitation/create", "params": {"message": "Name?"}},
            "draft": {"method": "sampling/createMessage", "params": {}},
        }))
    }

    fn elicits() -> Declared {
        Declared { elicitation_form: true, ..Declared::default() }
    }

    #[test]
    fn a_session_client_that_can_be_asked_is_asked_on_its_stream_and_its_answers_go_to_the_tab() {
        let mut call = Call::new(who(), true, None, 0).asking(Some(elicits()), 60_000);
        let CallOutput::Ask { text, ids } = call.input(name_and_draft(), 100) else {
            panic!("ask")
        };
        assert!(call.streaming() && !call.is_done(), "the question opens the stream");
        let question = message(&text).unwrap();
        assert_eq!(question["method"], "elicitation/create", "only what it declared");
        assert_eq!(question["id"], ids[0].as_str());
        assert_eq!(ids.len(), 1);
        // Keep-alives while the client answers keep the stream alive.
        let tick = CallInput::KeepAlive;
        assert_eq!(call.input(tick.clone(), 15_000), CallOutput::Send(KEEP_ALIVE.into()));
        let answers = json!({ ids[0].clone(): {"action": "accept", "content": {"name": "Ada"}} });
        let CallOutput::Again(input) = call.input(CallInput::Answers(answers), 20_000) else {
            panic!("again")
        };
        assert_eq!(
            input,
            json!({"responses": {"name": {"action": "accept", "content": {"name": "Ada"}}}, "state": {"round": 1}})
        );
        // The tab asks again: a new round with new ids; then it is done.
        let CallOutput::Ask { ids: again, .. } = call.input(name_and_draft(), 21_000) else {
            panic!("ask again")
        };
        assert_ne!(again, ids);
        assert_eq!(call.input(CallInput::Answers(json!({})), 22_000).clone(), {
            CallOutput::Again(json!({"responses": {"name": null}, "state": {"round": 1}}))
        });
        let CallOutput::Last(text) = call.input(done(), 23_000) else { panic!("last") };
        assert!(message(&text).unwrap()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("rows"));
    }

    #[test]
    fn a_round_not_answered_within_the_wait_ends_the_call_with_a_sentence() {
        let mut call = Call::new(who(), true, None, 0).asking(Some(elicits()), 60_000);
        assert!(matches!(call.input(name_and_draft(), 100), CallOutput::Ask { .. }));
        assert_eq!(call.input(CallInput::KeepAlive, 59_000), CallOutput::Send(KEEP_ALIVE.into()));
        let CallOutput::Last(text) = call.input(CallInput::RoundOver, 60_100) else {
            panic!("last")
        };
        let body = message(&text).unwrap();
        assert_eq!(body["result"]["content"][0]["text"], sentences::QUESTIONS_UNANSWERED);
        assert!(call.is_done());
        // The pairing holding too many questions: a sentence too.
        let mut full = Call::new(who(), true, None, 0).asking(Some(elicits()), 60_000);
        full.input(name_and_draft(), 100);
        let too_many = CallInput::of_reply(Some(Reply::TooManyQuestions));
        let CallOutput::Last(text) = full.input(too_many, 200) else { panic!("last") };
        assert_eq!(
            message(&text).unwrap()["result"]["content"][0]["text"],
            sentences::TOO_MANY_QUESTIONS
        );
    }

    #[test]
    fn a_client_that_cannot_be_asked_gets_the_sentence_as_before() {
        let sentence = |mut call: Call| {
            let out = call.input(name_and_draft(), 100);
            let CallOutput::Json { body, .. } = out else { panic!("json: {out:?}") };
            body["result"]["content"][0]["text"].as_str().unwrap().to_owned()
        };
        let roots_only = Declared { roots: true, ..Declared::default() };
        for call in [
            Call::new(who(), true, None, 0),
            Call::new(who(), true, None, 0).asking(Some(roots_only), 60_000),
            Call::new(who(), false, None, 0).asking(Some(elicits()), 60_000),
        ] {
            assert_eq!(sentence(call), tabrelay_bundle::content::INPUT_NOT_POSSIBLE);
        }
    }

    /// The id of each event of a stream's text, in order ("" for the priming event's data).
    fn event_ids(text: &str) -> Vec<(String, String)> {
        text.split("\n\n")
            .filter_map(|block| {
                let id = block.lines().find_map(|l| l.strip_prefix("id: "))?;
                let data = block.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or("");
                Some((id.to_owned(), data.to_owned()))
            })
            .collect()
    }

    #[test]
    fn a_resumable_stream_primes_numbers_its_events_and_is_taken_up_after_the_last_seen() {
        let resumable = ReadCall { resumable: true, ..asked(None, Some(json!("t"))) };
        let Start::Ask(request, mut call) = start(resumable, &access("x"), config(), 0) else {
            panic!("ask")
        };
        assert!(request.resumable, "the pairing keeps the call when the stream drops");
        let CallOutput::Send(first) = call.input(CallInput::FirstWaitOver, 500) else {
            panic!("the stream opens with its priming event")
        };
        let primed = event_ids(&first);
        assert_eq!(primed.len(), 1);
        assert_eq!(primed[0].1, "", "priming: an id and empty data");
        assert!(first.contains("retry: "));
        let CallOutput::Send(card) =
            call.input(CallInput::Event(CallEvent::Asking("Delete?".into())), 900)
        else {
            panic!("send")
        };
        let ids = event_ids(&card);
        assert_eq!(ids.len(), 2, "the log message, then the progress");
        let read = crate::mcp::resume::read_event_id(&ids[1].0).unwrap();
        assert_eq!((&read.id, read.number), (&Id::Number(9), 2));
        assert_eq!(read.progress, Some(json!("t")), "the progress token rides along");
        // The client comes back after event 2: a stream numbered on, progress counting on,
        // its end with an id.
        let mut again = Call::resumed(who(), read.progress, read.number, 5_000);
        let opening = event_ids(&again.opening());
        assert_eq!(crate::mcp::resume::read_event_id(&opening[0].0).unwrap().number, 3);
        let CallOutput::Send(card) =
            again.input(CallInput::Event(CallEvent::Asking("Delete?".into())), 5_500)
        else {
            panic!("send")
        };
        let progress = event_ids(&card);
        let said: Value = serde_json::from_str(&progress[1].1).unwrap();
        assert_eq!(said["params"]["progressToken"], "t");
        assert_eq!(said["params"]["progress"], 3, "past the 2 the client saw");
        let CallOutput::Last(end) = again.input(done(), 6_000) else { panic!("last") };
        let end = event_ids(&end);
        assert_eq!(end.len(), 1, "primed once");
        assert_eq!(crate::mcp::resume::read_event_id(&end[0].0).unwrap().number, 6);
        assert!(end[0].1.contains("rows"));
        // Not resumable: no ids, as before.
        let Start::Ask(request, mut plain) = start(asked(None, None), &access("x"), config(), 0)
        else {
            panic!("ask")
        };
        assert!(!request.resumable);
        assert_eq!(plain.input(CallInput::FirstWaitOver, 500), CallOutput::Wait);
        let CallOutput::Last(end) = plain.input(done(), 900) else { panic!("last") };
        assert!(event_ids(&end).is_empty());
    }
}
