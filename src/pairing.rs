//! The pairing's call routing: which tab gets a call, how a tab proves itself, which calls are
//! waiting and on what, how calls are grouped into turns, and the messages between the Worker
//! and the pairing's Durable Object.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::fields::{variant, Fields, FromValue};
use tabrelay_bundle::protocol::{
    close, Connection, Outcome, TabMessage, ToolList, MAX_CARD_CHARS, MAX_DATASET_NAME_CHARS,
    MAX_PENDING_CALLS, MAX_TABS_PER_PAIRING, PROTOCOL_VERSION,
};
use tabrelay_bundle::BUNDLE_DIGEST;

use crate::oauth::connect::{refusal, ConnectCode};
use crate::oauth::sha256_hex;
use crate::sentences;

/// How long a call waits for the tab, in milliseconds (under Claude's 240 s).
pub const TAB_CALL_WAIT_MS: u64 = 225_000;
/// A connection's calls share a turn until someone else steps or this long passes.
pub const AGENT_TURN_IDLE_MS: u64 = 120_000;
/// How often a streamed call says it is still waiting (SSE keep-alive), in milliseconds.
pub const KEEP_ALIVE_MS: u64 = 15_000;
/// How long the Worker waits for the pairing's tool list before answering with the bundled one.
pub const TOOL_LIST_WAIT_MS: u64 = 2_000;
/// The most `/listen` streams one pairing holds at once.
pub const MAX_LISTENERS: usize = 32;

/// What the Worker asks the pairing to do with a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The agent's name.
    pub agent: String,
    /// The connection it came through.
    pub connection: Connection,
    /// How long the caller waits, in milliseconds (at most [`TAB_CALL_WAIT_MS`]).
    pub wait_ms: u64,
    /// The request's key within the pairing ([`request_key`]), by which it can be cancelled.
    pub request: String,
    /// Whether to answer as a stream of [`CallEvent`] lines (the client listens to SSE).
    pub stream: bool,
    /// A retried call's input for the tab ([`tabrelay_bundle::protocol::RelayMessage::Call`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

/// The key of a client's request within a pairing: its connection (grant) and JSON-RPC id, so
/// one connection can never cancel another's call.
#[must_use]
pub fn request_key(connection: &str, id: &crate::jsonrpc::Id) -> String {
    format!("{connection} {}", serde_json::to_string(id).unwrap_or_default())
}

/// What the Worker asks the pairing to cancel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CancelRequest {
    /// The request's key ([`request_key`]).
    pub request: String,
}

/// One line of a streamed call's answer, from the pairing to the Worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEvent {
    /// The person is being asked; the sentence is the card's.
    Asking(String),
    /// The person answered; the step runs.
    Answered,
    /// Still waiting (every [`KEEP_ALIVE_MS`]).
    Tick,
    /// The end: the answer.
    Done(CallAnswer),
}

/// What the Worker asks the pairing when a code is redeemed: a new grant for this client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantRequest {
    /// The grant's id (chosen when the code was redeemed).
    pub id: String,
    /// The client's id.
    pub client_id: String,
    /// The client's name.
    pub client_name: String,
    /// The host of its redirect URI.
    pub host: String,
    /// Where the browser that asked was, when the platform said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
}

/// A new grant: its id and first refresh token's secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantAnswer {
    /// The grant's id.
    pub grant: String,
    /// The refresh token's secret part.
    pub secret: String,
}

/// What the Worker asks the pairing when a client refreshes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefreshRequest {
    /// The grant the token names.
    pub grant: String,
    /// The token's secret part.
    pub secret: String,
    /// The client refreshing.
    pub client_id: String,
}

/// What a refresh comes to, for the Worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshAnswer {
    /// New tokens may be issued for this grant.
    Rotated {
        /// The new refresh token's secret part.
        secret: String,
        /// The client's name.
        client_name: String,
        /// Its redirect host.
        host: String,
    },
    /// Refused (`invalid_grant`), with the sentence.
    Refused {
        /// Why.
        description: String,
    },
}

/// What the Worker asks the pairing before answering a request that does not reach a tab:
/// is this grant still live? (A 401 when not.) Posted to `/check` (204), `/tools` (200 with the
/// MCP `tools` array agents see, from the focused tab's list or the bundled catalogue: see
/// [`crate::tools::list`]) or `/status` (200 with the `status` tool's result), so a `tools/list`
/// or a `status` call costs one round trip to the pairing, as the check alone did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRequest {
    /// The grant the access token names.
    pub grant: String,
}

/// What the `status` tool says: the pairing's tabs, the one calls go to, what it shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TabsStatus {
    /// How many tabs are connected (proven).
    pub tabs: usize,
    /// The position (from 1, in the order they connected) of the tab calls go to.
    pub focused: Option<usize>,
    /// The dataset that tab shows, as it said (page content: quote it as data).
    pub dataset: Option<String>,
    /// Whether that tab stated its own tool list.
    pub stated: bool,
    /// The tools its person's settings refuse, by name.
    pub refused: Vec<String>,
}

impl TabsStatus {
    /// The status of `tabs`, with what the focused one stated (its list and dataset).
    #[must_use]
    pub fn of<'a>(
        tabs: impl IntoIterator<Item = &'a Tab>,
        list: Option<&ToolList>,
        dataset: Option<String>,
    ) -> Self {
        let proven: Vec<&Tab> = tabs.into_iter().filter(|t| t.proven).collect();
        let Some(focused) = route(proven.iter().copied()) else { return Self::default() };
        // Its place in the order the tabs connected (numbers grow with each tab).
        let position = proven.iter().filter(|t| t.number <= focused.number).count();
        let refused = list.map_or_else(Vec::new, |l| {
            l.tools()
                .iter()
                .filter(|t| t.setting == tabrelay_bundle::protocol::Setting::Refused)
                .map(|t| t.name.clone())
                .collect()
        });
        Self {
            tabs: proven.len(),
            focused: Some(position),
            dataset,
            stated: list.is_some(),
            refused,
        }
    }
}

/// One line of the pairing's `/listen` stream (NDJSON): a keep-alive at once and every
/// [`KEEP_ALIVE_MS`], and a line each time the focused tab's tool list changes (a new list, focus
/// moving to a tab whose list differs, the focused tab going away). It ends when the listener
/// goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenEvent {
    /// `{"tools_changed":true}`: ask for the tool list again.
    ToolsChanged,
    /// `{"tick":true}`: still listening.
    Tick,
}

impl ListenEvent {
    /// The event as its line of the stream, newline included.
    #[must_use]
    pub fn line(self) -> &'static str {
        match self {
            Self::ToolsChanged => "{\"tools_changed\":true}\n",
            Self::Tick => "{\"tick\":true}\n",
        }
    }

    /// A line of the stream read back (without its newline), as [`ListenEvent::line`] wrote it.
    #[must_use]
    pub fn read(line: &[u8]) -> Option<Self> {
        [Self::ToolsChanged, Self::Tick]
            .into_iter()
            .find(|e| e.line().trim_end().as_bytes() == line)
    }
}

/// What the Worker asks the pairing to revoke (RFC 7009): a grant, proven by one of its
/// refresh tokens or by a valid access token naming it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevokeRequest {
    /// The grant.
    pub grant: String,
    /// A refresh token's secret part; None when an access token was verified instead.
    pub secret: Option<String>,
}

/// What the pairing answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallAnswer {
    /// The tab answered.
    Answered {
        /// Its outcome.
        outcome: Outcome,
    },
    /// The relay could not carry the call; the sentence says why.
    NotCarried {
        /// For the agent.
        sentence: String,
    },
    /// No tool of this name is in the list agents see (the focused tab's, else the bundled
    /// catalogue): a JSON-RPC error, not a tool error.
    NoSuchTool {
        /// The name called.
        tool: String,
    },
}

impl CallAnswer {
    /// A call the relay could not carry, with its sentence.
    #[must_use]
    pub fn not_carried(sentence: impl Into<String>) -> Self {
        Self::NotCarried { sentence: sentence.into() }
    }
}

/// What the pairing keeps about one tab, in its socket's attachment (survives hibernation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tab {
    /// The pairing the tab named when it connected.
    pub pairing: String,
    /// The tab's number within the pairing (later tabs have higher numbers).
    pub number: u64,
    /// Whether it proved the pairing's secret.
    pub proven: bool,
    /// When its socket opened.
    pub opened_ms: u64,
    /// When it last gained focus (its hello counts as gaining focus).
    pub focus_ms: u64,
}

/// What to do with a message a tab sent.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum TabAction {
    /// The tab proved the pairing: store the new state and welcome it.
    Welcome(Tab),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
    /// Ask the code's Durable Object who asks for it.
    Describe(ConnectCode),
    /// Ask the code's Durable Object to approve it for this pairing.
    Approve(ConnectCode),
    /// Ask the code's Durable Object to deny it.
    Deny(ConnectCode),
    /// Tell the tab its code was refused, with this sentence.
    RefuseCode(String, &'static str),
    /// Store the tab's new state (focus changed).
    Update(Tab),
    /// The person is being asked about this call.
    Asking(u64, String),
    /// The person answered about this call.
    Answered(u64),
    /// The person took a step: the agents' turn ends.
    PersonStep,
    /// Send the tab the pairing's connections.
    ListConnections,
    /// Forget this connection, then send the list.
    Forget(String),
    /// Deliver the answer to the waiting call.
    Answer(u64, Outcome),
    /// Keep this list as the tab's (replacing the one before).
    Tools(ToolList),
    /// Tell the tab its list was refused, with this sentence (its previous list stays).
    RefuseTools(String),
    /// Keep this as the name of the dataset the tab shows (cut to [`MAX_DATASET_NAME_CHARS`]).
    View(String),
    /// Nothing to do.
    Ignore,
}

/// Why a tab is refused before its hello: the close code and reason.
pub type Refusal = (u16, &'static str);

impl Tab {
    /// A tab whose socket just opened for `pairing`, or the refusal when the pairing is full.
    pub fn admit(
        pairing: String,
        number: u64,
        now_ms: u64,
        tabs_open: usize,
    ) -> Result<Self, Refusal> {
        if tabs_open >= MAX_TABS_PER_PAIRING {
            return Err((close::TOO_MANY_TABS, "Too many tabs of the app are open in this browser; close some, then reload this one."));
        }
        Ok(Self { pairing, number, proven: false, opened_ms: now_ms, focus_ms: now_ms })
    }

    /// Decides what a message from this tab means.
    pub fn on_message(&self, text: &str, now_ms: u64) -> TabAction {
        let Ok(message) = TabMessage::parse(text) else {
            return if self.proven {
                TabAction::Ignore
            } else {
                TabAction::Close(
                    close::PROTOCOL_ERROR,
                    "The first message must be the tab's hello.",
                )
            };
        };
        match (self.proven, message) {
            (false, TabMessage::Hello { protocol, secret, bundle }) => {
                if sha256_hex(secret.as_bytes()) != self.pairing {
                    TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing.")
                } else if protocol != PROTOCOL_VERSION || bundle != BUNDLE_DIGEST {
                    TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED)
                } else {
                    TabAction::Welcome(Self { proven: true, focus_ms: now_ms, ..self.clone() })
                }
            }
            (false, _) => {
                TabAction::Close(close::PROOF_FAILED, "The tab must prove its pairing first.")
            }
            (true, TabMessage::Hello { .. }) => TabAction::Ignore,
            (true, TabMessage::Describe { code }) => Self::with_code(code, TabAction::Describe),
            (true, TabMessage::Approve { code }) => Self::with_code(code, TabAction::Approve),
            (true, TabMessage::Deny { code }) => Self::with_code(code, TabAction::Deny),
            (true, TabMessage::Focus { focused: true }) => {
                TabAction::Update(Self { focus_ms: now_ms, ..self.clone() })
            }
            // Losing focus hands nothing on: the tab stays the one focused last.
            (true, TabMessage::Focus { focused: false }) => TabAction::Ignore,
            (true, TabMessage::Asking { id, sentence }) => TabAction::Asking(id, sentence),
            (true, TabMessage::Answered { id }) => TabAction::Answered(id),
            (true, TabMessage::Step) => TabAction::PersonStep,
            (true, TabMessage::Connections) => TabAction::ListConnections,
            (true, TabMessage::Forget { id }) => TabAction::Forget(id),
            (true, TabMessage::Result { id, outcome }) => TabAction::Answer(id, outcome),
            (true, TabMessage::Tools { tools }) => TabAction::Tools(tools),
            (true, TabMessage::BadTools { why }) => TabAction::RefuseTools(why.sentence()),
            (true, TabMessage::View { dataset }) => {
                TabAction::View(dataset.chars().take(MAX_DATASET_NAME_CHARS).collect())
            }
        }
    }
}

impl Tab {
    fn with_code(typed: String, action: fn(ConnectCode) -> TabAction) -> TabAction {
        match ConnectCode::parse(&typed) {
            Some(code) => action(code),
            None => TabAction::RefuseCode(typed.chars().take(40).collect(), refusal::MALFORMED),
        }
    }
}

/// How many codes a pairing may get wrong per [`WRONG_CODE_WINDOW_MS`].
pub const WRONG_CODES_ALLOWED: usize = 5;
/// The window of [`WRONG_CODES_ALLOWED`].
pub const WRONG_CODE_WINDOW_MS: u64 = 60_000;

/// A pairing's recent wrong connect codes: a few a minute, then every code is refused until
/// the minute passes (so no tab can search the code space). Kept in storage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WrongCodes {
    at: Vec<u64>,
}

impl WrongCodes {
    /// Whether the pairing may try a code at `now_ms`.
    pub fn allows(&mut self, now_ms: u64) -> bool {
        self.at.retain(|t| now_ms < t + WRONG_CODE_WINDOW_MS);
        self.at.len() < WRONG_CODES_ALLOWED
    }

    /// A code the pairing tried was wrong.
    pub fn record(&mut self, now_ms: u64) {
        self.at.push(now_ms);
    }
}

/// The proven tab focused last; among equals, the one opened last (the highest number).
#[must_use]
pub fn route<'a>(tabs: impl IntoIterator<Item = &'a Tab>) -> Option<&'a Tab> {
    tabs.into_iter().filter(|t| t.proven).max_by_key(|t| (t.focus_ms, t.number))
}

/// One call waiting for its tab.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    tab: u64,
    request: String,
    asking: Option<String>,
}

/// A call the relay stops waiting for, and what to tell whom.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct GaveUp {
    /// The sentence for the agent.
    pub sentence: String,
    /// The tab to tell to drop the call: set unless the person is being asked about it (then
    /// the question stays open in the tab).
    pub cancel_in: Option<u64>,
}

/// The calls a pairing is waiting on: which tab each went to and whether the person is being
/// asked about it. Only the tab a call went to can answer it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    pending: BTreeMap<u64, Pending>,
    next: u64,
}

impl Calls {
    /// Starts a call to `tab`: its id, or the sentence when the pairing has too many waiting.
    /// Ids grow with time (`now_ms`), so they stay unique across a restart of the object.
    pub fn start(&mut self, tab: u64, now_ms: u64, request: String) -> Result<u64, String> {
        if self.pending.len() >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        let id = self.next.max(now_ms.saturating_mul(1024));
        self.next = id + 1;
        self.pending.insert(id, Pending { tab, request, asking: None });
        Ok(id)
    }

    /// The person is being asked about call `id` (told by `tab`): the card's sentence, cut to
    /// [`MAX_CARD_CHARS`], when the call is this tab's.
    pub fn asking(&mut self, id: u64, tab: u64, sentence: &str) -> Option<String> {
        let p = self.pending.get_mut(&id).filter(|p| p.tab == tab)?;
        let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
        p.asking = Some(card.clone());
        Some(card)
    }

    /// The person answered about call `id`: whether the call is this tab's.
    pub fn answered(&mut self, id: u64, tab: u64) -> bool {
        match self.pending.get_mut(&id).filter(|p| p.tab == tab) {
            Some(p) => {
                p.asking = None;
                true
            }
            None => false,
        }
    }

    /// The agent cancelled its request: the call's id and the tab to tell, if it still waits.
    pub fn cancel(&mut self, request: &str) -> Option<(u64, u64)> {
        let id = self.pending.iter().find(|(_, p)| p.request == request).map(|(id, _)| *id)?;
        self.pending.remove(&id).map(|p| (id, p.tab))
    }

    /// The agent stopped listening (its stream closed): the tab to tell, if the call still waits.
    pub fn abandon(&mut self, id: u64) -> Option<u64> {
        self.pending.remove(&id).map(|p| p.tab)
    }

    /// `tab` answered call `id`: whether that answer is the call's (and the call is done).
    pub fn finish(&mut self, id: u64, tab: u64) -> bool {
        let mine = self.pending.get(&id).is_some_and(|p| p.tab == tab);
        if mine {
            self.pending.remove(&id);
        }
        mine
    }

    /// `tab` went away: the calls that waited on it, now failed.
    pub fn tab_gone(&mut self, tab: u64) -> Vec<u64> {
        let gone: Vec<u64> =
            self.pending.iter().filter(|(_, p)| p.tab == tab).map(|(id, _)| *id).collect();
        for id in &gone {
            self.pending.remove(id);
        }
        gone
    }

    /// The wait for call `id` ran out. While the person is being asked, the tab keeps the
    /// question open and the agent is told so; otherwise the tab is told to drop the call.
    pub fn give_up(&mut self, id: u64, waited_ms: u64) -> GaveUp {
        match self.pending.remove(&id) {
            Some(Pending { asking: Some(card), .. }) => {
                GaveUp { sentence: sentences::still_asking(&quoted(&card)), cancel_in: None }
            }
            Some(Pending { tab, .. }) => {
                GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: Some(tab) }
            }
            None => GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: None },
        }
    }

    /// How many calls wait.
    #[must_use]
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no call waits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The turns of a pairing: a connection's calls share one until another connection calls, the
/// person takes a step, or [`AGENT_TURN_IDLE_MS`] passes. Kept in storage across hibernation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Turns {
    last: Option<(String, u64)>,
    turn: u64,
}

impl Turns {
    /// The turn of a call from `connection` at `now_ms`.
    pub fn of_call(&mut self, connection: &str, now_ms: u64) -> u64 {
        let same = matches!(&self.last, Some((c, at)) if c == connection && now_ms < at + AGENT_TURN_IDLE_MS);
        if !same {
            self.turn += 1;
        }
        self.last = Some((connection.to_owned(), now_ms));
        self.turn
    }

    /// The person took a step: the next call starts a new turn.
    pub fn person_stepped(&mut self) {
        self.last = None;
    }
}

// The messages between the Worker and the pairing, read by hand (see `tabrelay_bundle::fields`).

impl FromValue for CallRequest {
    const WHAT: &'static str = "a call request";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self {
            tool: f.string("tool")?,
            args: f.value("args")?,
            agent: f.string("agent")?,
            connection: f.read("connection")?,
            wait_ms: f.u64("wait_ms")?,
            request: f.string("request")?,
            stream: f.bool("stream")?,
            input: f.value("input").filter(|v| !v.is_null()),
        })
    }
}

impl FromValue for CancelRequest {
    const WHAT: &'static str = "a cancel request";
    fn from_value(value: Value) -> Option<Self> {
        Some(Self { request: Fields::of(value)?.string("request")? })
    }
}

impl FromValue for CallEvent {
    const WHAT: &'static str = "a call event";
    fn from_value(value: Value) -> Option<Self> {
        match value {
            Value::String(name) => match name.as_str() {
                "answered" => Some(Self::Answered),
                "tick" => Some(Self::Tick),
                _ => None,
            },
            Value::Object(m) if m.len() == 1 => match m.into_iter().next()? {
                (name, Value::String(sentence)) if name == "asking" => Some(Self::Asking(sentence)),
                (name, answer) if name == "done" => CallAnswer::from_value(answer).map(Self::Done),
                _ => None,
            },
            _ => None,
        }
    }
}

impl FromValue for GrantRequest {
    const WHAT: &'static str = "a grant request";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self {
            id: f.string("id")?,
            client_id: f.string("client_id")?,
            client_name: f.string("client_name")?,
            host: f.string("host")?,
            place: f.optional_string("place")?,
        })
    }
}

impl FromValue for GrantAnswer {
    const WHAT: &'static str = "a grant";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self { grant: f.string("grant")?, secret: f.string("secret")? })
    }
}

impl FromValue for RefreshRequest {
    const WHAT: &'static str = "a refresh request";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self {
            grant: f.string("grant")?,
            secret: f.string("secret")?,
            client_id: f.string("client_id")?,
        })
    }
}

impl FromValue for RefreshAnswer {
    const WHAT: &'static str = "a refresh answer";
    fn from_value(value: Value) -> Option<Self> {
        let (name, f) = variant(value)?;
        let mut f = f?;
        match name.as_str() {
            "rotated" => Some(Self::Rotated {
                secret: f.string("secret")?,
                client_name: f.string("client_name")?,
                host: f.string("host")?,
            }),
            "refused" => Some(Self::Refused { description: f.string("description")? }),
            _ => None,
        }
    }
}

impl FromValue for CheckRequest {
    const WHAT: &'static str = "a check request";
    fn from_value(value: Value) -> Option<Self> {
        Some(Self { grant: Fields::of(value)?.string("grant")? })
    }
}

impl FromValue for RevokeRequest {
    const WHAT: &'static str = "a revoke request";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self { grant: f.string("grant")?, secret: f.optional_string("secret")? })
    }
}

impl FromValue for CallAnswer {
    const WHAT: &'static str = "a call answer";
    fn from_value(value: Value) -> Option<Self> {
        let (name, f) = variant(value)?;
        let mut f = f?;
        match name.as_str() {
            "answered" => Some(Self::Answered { outcome: f.read("outcome")? }),
            "not_carried" => Some(Self::NotCarried { sentence: f.string("sentence")? }),
            "no_such_tool" => Some(Self::NoSuchTool { tool: f.string("tool")? }),
            _ => None,
        }
    }
}

impl FromValue for Tab {
    const WHAT: &'static str = "a tab";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self {
            pairing: f.string("pairing")?,
            number: f.u64("number")?,
            proven: f.bool("proven")?,
            opened_ms: f.u64("opened_ms")?,
            focus_ms: f.u64("focus_ms")?,
        })
    }
}

impl FromValue for WrongCodes {
    const WHAT: &'static str = "wrong codes";
    fn from_value(value: Value) -> Option<Self> {
        let at = Fields::of(value)?.value("at")?;
        Some(Self { at: at.as_array()?.iter().map(Value::as_u64).collect::<Option<_>>()? })
    }
}

impl FromValue for Turns {
    const WHAT: &'static str = "turns";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        let last = match f.value("last") {
            None | Some(Value::Null) => None,
            Some(Value::Array(pair)) => match pair.as_slice() {
                [Value::String(c), at] => Some((c.clone(), at.as_u64()?)),
                _ => return None,
            },
            Some(_) => return None,
        };
        Some(Self { last, turn: f.u64("turn")? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::testing::round_trip;

    const SECRET: &str = "k5Hn0Nd3e1oDqJ7b6v1wQm0Kc9eYtq2ZpW8xR4sLfA0";

    fn tab(number: u64) -> Tab {
        Tab::admit(sha256_hex(SECRET.as_bytes()), number, 1000, 0).unwrap()
    }

    fn hello(secret: &str, protocol: u32, bundle: &str) -> String {
        format!(
            r#"{{"type":"hello","protocol":{protocol},"secret":"{secret}","bundle":"{bundle}"}}"#
        )
    }

    fn proven(number: u64, at: u64) -> Tab {
        let TabAction::Welcome(t) = tab(number).on_message(&hello(SECRET, 1, BUNDLE_DIGEST), at)
        else {
            panic!("the hello should be welcome")
        };
        t
    }

    #[test]
    fn the_messages_between_the_worker_and_the_pairing_read_back_as_written() {
        let connection = Connection {
            id: "g1".into(),
            kind: "connector".into(),
            client: "Claude".into(),
            host: "claude.ai".into(),
        };
        let call = CallRequest {
            tool: "add".into(),
            args: serde_json::json!({"a": 1}),
            agent: "Claude".into(),
            connection,
            wait_ms: 1000,
            request: "g1 7".into(),
            stream: true,
            input: None,
        };
        round_trip(&call);
        round_trip(&CallRequest { input: Some(serde_json::json!({"x": [1]})), ..call });
        round_trip(&CancelRequest { request: "g1 7".into() });
        let outcome = Outcome::Failed { error: "no".into() };
        let answers = [
            CallAnswer::Answered { outcome },
            CallAnswer::not_carried("gone"),
            CallAnswer::NoSuchTool { tool: "x".into() },
        ];
        for answer in answers {
            round_trip(&CallEvent::Done(answer.clone()));
            round_trip(&answer);
        }
        for event in [CallEvent::Asking("May I?".into()), CallEvent::Answered, CallEvent::Tick] {
            round_trip(&event);
        }
        round_trip(&GrantRequest {
            id: "g".into(),
            client_id: "c".into(),
            client_name: "n".into(),
            host: "h".into(),
            place: Some("Lisbon, PT".into()),
        });
        round_trip(&GrantAnswer { grant: "g".into(), secret: "s".into() });
        round_trip(&RefreshRequest {
            grant: "g".into(),
            secret: "s".into(),
            client_id: "c".into(),
        });
        round_trip(&RefreshAnswer::Rotated {
            secret: "s".into(),
            client_name: "n".into(),
            host: "h".into(),
        });
        round_trip(&RefreshAnswer::Refused { description: "d".into() });
        round_trip(&CheckRequest { grant: "g".into() });
        round_trip(&RevokeRequest { grant: "g".into(), secret: None });
        round_trip(&RevokeRequest { grant: "g".into(), secret: Some("s".into()) });
        round_trip(&proven(3, 2000));
        let mut wrong = WrongCodes::default();
        round_trip(&wrong);
        wrong.allows(5);
        wrong.record(5);
        round_trip(&wrong);
        let mut turns = Turns::default();
        round_trip(&turns);
        turns.of_call("g1", 10);
        round_trip(&turns);
    }

    #[test]
    fn a_tab_proves_its_pairing_with_the_secret_in_its_first_message() {
        let t = tab(1);
        assert!(proven(1, 2000).proven);
        assert_eq!(
            t.on_message(&hello("wrong", 1, BUNDLE_DIGEST), 2000),
            TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing.")
        );
        assert!(matches!(
            t.on_message(r#"{"type":"focus","focused":true}"#, 2000),
            TabAction::Close(close::PROOF_FAILED, _)
        ));
        assert!(matches!(
            t.on_message("garbage", 2000),
            TabAction::Close(close::PROTOCOL_ERROR, _)
        ));
    }

    #[test]
    fn a_page_of_another_version_or_bundle_is_told_to_reload() {
        let t = tab(1);
        for h in [hello(SECRET, 99, BUNDLE_DIGEST), hello(SECRET, 1, "0000000000000000")] {
            assert_eq!(
                t.on_message(&h, 2000),
                TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED)
            );
        }
        assert!(sentences::TAB_OUTDATED.contains("reload"));
    }

    #[test]
    fn a_pairing_holds_a_bounded_number_of_tabs() {
        assert!(Tab::admit("p".into(), 1, 0, MAX_TABS_PER_PAIRING - 1).is_ok());
        assert_eq!(
            Tab::admit("p".into(), 1, 0, MAX_TABS_PER_PAIRING).unwrap_err().0,
            close::TOO_MANY_TABS
        );
    }

    #[test]
    fn calls_go_to_the_tab_focused_last_ties_to_the_newest() {
        let a = proven(1, 10);
        let b = proven(2, 20);
        assert_eq!(route([&a, &b]).unwrap().number, 2);
        let TabAction::Update(a) = a.on_message(r#"{"type":"focus","focused":true}"#, 30) else {
            panic!()
        };
        assert_eq!(route([&a, &b]).unwrap().number, 1);
        assert_eq!(a.on_message(r#"{"type":"focus","focused":false}"#, 40), TabAction::Ignore);
        let same = Tab { focus_ms: 30, ..b.clone() };
        assert_eq!(route([&a, &same]).unwrap().number, 2, "a tie goes to the newest tab");
        assert_eq!(
            route([&same, &a]).unwrap().number,
            2,
            "whatever the order the tabs are listed in"
        );
        assert!(route([&tab(3)]).is_none(), "an unproven tab gets no calls");
    }

    #[test]
    fn a_proven_tab_approves_codes_asks_and_answers() {
        let t = proven(1, 10);
        assert!(
            matches!(t.on_message(r#"{"type":"approve","code":"abcde-12345"}"#, 11), TabAction::Approve(c) if c.as_str() == "ABCDE12345")
        );
        assert!(matches!(
            t.on_message(r#"{"type":"approve","code":"nope"}"#, 11),
            TabAction::RefuseCode(_, refusal::MALFORMED)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"result","id":5,"data":[1]}"#, 12),
            TabAction::Answer(5, _)
        ));
        assert_eq!(
            t.on_message(r#"{"type":"asking","id":5,"sentence":"Delete?"}"#, 12),
            TabAction::Asking(5, "Delete?".into())
        );
        assert_eq!(t.on_message(r#"{"type":"answered","id":5}"#, 12), TabAction::Answered(5));
        assert_eq!(t.on_message(r#"{"type":"step"}"#, 12), TabAction::PersonStep);
        assert_eq!(t.on_message(r#"{"type":"connections"}"#, 12), TabAction::ListConnections);
        assert_eq!(
            t.on_message(r#"{"type":"forget","id":"g"}"#, 12),
            TabAction::Forget("g".into())
        );
        assert_eq!(
            tab(2).on_message(r#"{"type":"connections"}"#, 12),
            TabAction::Close(close::PROOF_FAILED, "The tab must prove its pairing first.")
        );
        assert_eq!(t.on_message("garbage", 12), TabAction::Ignore);
    }

    #[test]
    fn a_proven_tab_states_its_tools_and_view_and_hears_why_a_list_is_refused() {
        let t = proven(1, 10);
        let list = r#"{"type":"tools","tools":[{"name":"a","inputSchema":{"type":"object"},"setting":"asks"}]}"#;
        assert!(matches!(t.on_message(list, 11), TabAction::Tools(l) if l.tool("a").is_some()));
        let TabAction::RefuseTools(sentence) =
            t.on_message(r#"{"type":"tools","tools":[{"name":"status","inputSchema":{"type":"object"},"setting":"runs"}]}"#, 11)
        else {
            panic!("a list naming status is refused")
        };
        assert!(sentence.contains("relay's own tool"), "{sentence}");
        let long =
            format!(r#"{{"type":"view","dataset":"{}"}}"#, "é".repeat(MAX_DATASET_NAME_CHARS + 5));
        assert!(
            matches!(t.on_message(&long, 11), TabAction::View(d) if d.chars().count() == MAX_DATASET_NAME_CHARS)
        );
        assert!(matches!(tab(2).on_message(list, 11), TabAction::Close(close::PROOF_FAILED, _)));
    }

    #[test]
    fn listen_lines_are_one_json_object_each() {
        for (event, key) in
            [(ListenEvent::ToolsChanged, "tools_changed"), (ListenEvent::Tick, "tick")]
        {
            let line = event.line();
            assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v, serde_json::json!({ key: true }));
            assert_eq!(ListenEvent::read(line.trim_end().as_bytes()), Some(event));
        }
        assert_eq!(ListenEvent::read(b"{\"tools_changed\":false}"), None);
    }

    #[test]
    fn only_the_tab_a_call_went_to_can_answer_it() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "r".into()).unwrap();
        assert!(!calls.finish(id, 2));
        assert!(calls.finish(id, 1));
        assert!(!calls.finish(id, 1), "an answer comes once");
    }

    #[test]
    fn call_ids_are_unique_and_grow_across_a_restart() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into()).unwrap();
        let b = calls.start(1, 5, "b".into()).unwrap();
        assert_ne!(a, b);
        let mut restarted = Calls::default();
        assert!(restarted.start(1, 6, "c".into()).unwrap() > b);
    }

    #[test]
    fn a_tab_going_away_fails_its_calls_only() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into()).unwrap();
        let b = calls.start(2, 5, "b".into()).unwrap();
        assert_eq!(calls.tab_gone(1), vec![a]);
        assert_eq!(calls.len(), 1);
        assert!(calls.finish(b, 2));
    }

    #[test]
    fn a_wait_that_runs_out_while_the_person_is_asked_says_so() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into()).unwrap();
        assert_eq!(calls.asking(id, 2, "ignored: another tab"), None);
        assert_eq!(calls.asking(id, 1, "Delete 3 items?").as_deref(), Some("Delete 3 items?"));
        let gave_up = calls.give_up(id, TAB_CALL_WAIT_MS);
        let s = &gave_up.sentence;
        assert!(
            s.contains("being asked") && s.contains("Delete 3 items?") && s.contains("history"),
            "{s}"
        );
        assert_eq!(gave_up.cancel_in, None, "the question stays open in the tab");
        let id = calls.start(1, 6, "b".into()).unwrap();
        calls.asking(id, 1, "Delete?");
        assert!(calls.answered(id, 1));
        let gave_up = calls.give_up(id, 225_000);
        assert!(gave_up.sentence.contains("within 225 s"));
        assert_eq!(gave_up.cancel_in, Some(1), "the tab is told to drop a call nobody waits for");
        assert!(calls.is_empty());
    }

    #[test]
    fn a_cards_sentence_is_kept_bounded() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into()).unwrap();
        let card = calls.asking(id, 1, &"é".repeat(MAX_CARD_CHARS + 50)).unwrap();
        assert_eq!(card.chars().count(), MAX_CARD_CHARS);
    }

    #[test]
    fn a_connection_cancels_its_own_request_only() {
        use crate::jsonrpc::Id;
        let mut calls = Calls::default();
        let mine = request_key("grant-a", &Id::Number(7));
        let id = calls.start(3, 5, mine.clone()).unwrap();
        assert_eq!(calls.cancel(&request_key("grant-b", &Id::Number(7))), None);
        assert_eq!(calls.cancel(&request_key("grant-a", &Id::Text("7".into()))), None);
        assert_eq!(calls.cancel(&mine), Some((id, 3)));
        assert_eq!(calls.cancel(&mine), None, "cancelled once");
        assert!(!calls.finish(id, 3), "a late answer goes nowhere");
    }

    #[test]
    fn too_many_waiting_calls_get_a_sentence() {
        let mut calls = Calls::default();
        for i in 0..MAX_PENDING_CALLS {
            calls.start(1, 5, i.to_string()).unwrap();
        }
        assert!(calls
            .start(1, 5, "x".into())
            .unwrap_err()
            .contains(&MAX_PENDING_CALLS.to_string()));
    }

    #[test]
    fn a_pairing_gets_a_few_wrong_codes_a_minute() {
        let mut wrong = WrongCodes::default();
        for i in 0..WRONG_CODES_ALLOWED as u64 {
            assert!(wrong.allows(i));
            wrong.record(i);
        }
        assert!(!wrong.allows(10));
        assert!(wrong.allows(WRONG_CODE_WINDOW_MS + 1), "a minute later it may try again");
    }

    #[test]
    fn a_connections_calls_share_a_turn_until_another_steps_or_time_passes() {
        let mut turns = Turns::default();
        let a1 = turns.of_call("a", 0);
        assert_eq!(turns.of_call("a", 1000), a1);
        let b = turns.of_call("b", 2000);
        assert_ne!(b, a1);
        let a2 = turns.of_call("a", 3000);
        assert_ne!(a2, b);
        assert_ne!(turns.of_call("a", 3000 + AGENT_TURN_IDLE_MS), a2);
        let a3 = turns.of_call("a", 3001 + AGENT_TURN_IDLE_MS);
        turns.person_stepped();
        assert_ne!(
            turns.of_call("a", 3002 + AGENT_TURN_IDLE_MS),
            a3,
            "the person's step ends the turn"
        );
    }
}
