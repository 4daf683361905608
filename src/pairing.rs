//! The pairing's call routing: which tab gets a call, how a tab proves itself, which calls are
//! waiting and on what, how calls are grouped into turns, and the messages between the Worker
//! and the pairing's Durable Object.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::fields::{variant, Fields, FromValue};
use tabrelay_bundle::protocol::{
    close, proof_text, Connection, Outcome, RelayMessage, TabMessage, ToolList, CHALLENGE_BYTES,
    HELLO_WAIT_MS, MAX_CARD_CHARS, MAX_DATASET_NAME_CHARS, MAX_PENDING_CALLS, MAX_TABS_PER_PAIRING,
    MAX_UNPROVEN_MESSAGE_BYTES, MAX_UNPROVEN_SOCKETS, PAIRING_KEY_BYTES, PROTOCOL_VERSION,
    SIGNATURE_BYTES, TAB_KEY_PARAM,
};
use tabrelay_bundle::BUNDLE_DIGEST;

use crate::oauth::connect::{refusal, ConnectCode};
use crate::oauth::{random_token, sha256_hex, Entropy};
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

/// A browser's pairing key as a tab's socket names it ([`TAB_KEY_PARAM`]): the raw,
/// uncompressed P-256 public key of the browser's non-extractable key pair. Only its shape is
/// read here (the runtime's WebCrypto refuses a point off the curve when the proof is checked).
/// The pairing id derives from it; the key itself is never in a token or a stored grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingKey(Vec<u8>);

impl PairingKey {
    /// The key named by base64url text (no padding, canonical), when it has a key's shape:
    /// [`PAIRING_KEY_BYTES`] bytes, `0x04` first.
    #[must_use]
    pub fn read(text: &str) -> Option<Self> {
        use base64::Engine as _;
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
        (raw.len() == PAIRING_KEY_BYTES && raw.first() == Some(&0x04)).then_some(Self(raw))
    }

    /// The pairing id: the lowercase hex SHA-256 of the raw key. Tokens name the pairing by it;
    /// a hash cannot open the pairing's socket, which takes the key and its signature.
    #[must_use]
    pub fn pairing(&self) -> String {
        sha256_hex(&self.0)
    }

    /// The raw key, as WebCrypto imports it (`raw`).
    #[must_use]
    pub fn raw(&self) -> &[u8] {
        &self.0
    }

    /// The key as the socket's query names it (base64url).
    #[must_use]
    pub fn text(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&self.0)
    }
}

/// The pairing key a tab's socket names in its query ([`TAB_KEY_PARAM`]), or why the socket
/// is refused. A page of the first protocol named the pairing id (`?pairing=`), which tokens
/// carry and which opens nothing now: it is told to reload (the new page names its key).
pub fn socket_key(query: &[(String, String)]) -> Result<PairingKey, Refusal> {
    let named = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    match named(TAB_KEY_PARAM).and_then(PairingKey::read) {
        Some(key) => Ok(key),
        None if named("pairing").is_some() => Err((close::OUTDATED, sentences::TAB_OUTDATED)),
        None => Err((close::PROTOCOL_ERROR, "The tab must name its pairing key.")),
    }
}

/// A signature to check: whether `signature` is the pairing key's ECDSA P-256 signature over
/// SHA-256 of `text` (P1363 form). The shell checks it with the runtime's WebCrypto and gives
/// the answer to [`Tab::proved`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The raw public key ([`PairingKey::raw`]).
    pub key: Vec<u8>,
    /// What was signed: [`proof_text`] of the relay's origin and the socket's challenge.
    pub text: String,
    /// The signature, [`SIGNATURE_BYTES`] bytes.
    pub signature: Vec<u8>,
}

/// What the pairing keeps about one tab, in its socket's attachment (survives hibernation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tab {
    /// The pairing id the socket's key names ([`PairingKey::pairing`]).
    pub pairing: String,
    /// The pairing key the socket named (base64url), which its hello must prove.
    pub key: String,
    /// The relay's origin as the tab addressed it (the socket request's), which the proof names.
    pub origin: String,
    /// The challenge sent to the socket (base64url), until a hello uses it: one hello per socket.
    pub challenge: Option<String>,
    /// The tab's number within the pairing (later tabs have higher numbers).
    pub number: u64,
    /// Whether it proved the pairing key (a signature over its challenge).
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
    /// Store the tab's new state (its challenge used), check the proof, and give the answer
    /// to [`Tab::proved`].
    Verify(Tab, Proof),
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

/// Why a socket is closed: the close code and reason (at most 123 bytes, as WebSocket allows).
pub type Refusal = (u16, &'static str);

/// The socket closed to make room for a newer one when [`MAX_UNPROVEN_SOCKETS`] wait to prove.
pub const MADE_ROOM: Refusal = (
    close::TOO_MANY_TABS,
    "Too many sockets were waiting to prove this pairing; this one made room for a newer one.",
);
/// A proof that does not hold (a wrong signature, key or challenge).
pub const NOT_PROVEN: Refusal = (close::PROOF_FAILED, "The tab did not prove its pairing.");
/// A socket that did not prove itself within [`HELLO_WAIT_MS`].
pub const NOT_PROVEN_IN_TIME: Refusal =
    (close::PROOF_FAILED, "The tab did not prove its pairing in time.");

/// A socket just opened: its tab and what to send it first.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Admitted {
    /// The new socket's tab, not yet proven.
    pub tab: Tab,
    /// Its first message: the challenge to sign.
    pub first: RelayMessage,
}

impl Tab {
    /// A socket just opened for `key` on the relay's `origin`, with a fresh challenge of
    /// [`CHALLENGE_BYTES`] random bytes. It is always taken: sockets still to prove themselves
    /// have their own bound, apart from proven tabs, kept by [`sockets_to_close`] (the oldest
    /// make room, so silent sockets cannot keep a tab of the browser out); whether a proven tab
    /// fits is decided once it proves ([`Tab::proved`]).
    pub fn admit(
        key: &PairingKey,
        origin: &str,
        number: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Admitted {
        let challenge = random_token(entropy, CHALLENGE_BYTES);
        let tab = Self {
            pairing: key.pairing(),
            key: key.text(),
            origin: origin.to_owned(),
            challenge: Some(challenge.clone()),
            number,
            proven: false,
            opened_ms: now_ms,
            focus_ms: now_ms,
        };
        Admitted { tab, first: RelayMessage::Challenge { challenge } }
    }

    /// Decides what a message from this tab means. Before the tab has proven its pairing, a
    /// message over [`MAX_UNPROVEN_MESSAGE_BYTES`] is refused unread, and only a hello that
    /// answers the challenge is taken: it becomes a proof to check ([`TabAction::Verify`]).
    pub fn on_message(&self, text: &str, now_ms: u64) -> TabAction {
        if !self.proven && text.len() > MAX_UNPROVEN_MESSAGE_BYTES {
            return TabAction::Close(
                close::PROTOCOL_ERROR,
                "A tab's messages before it proves its pairing must be short; this one is too long.",
            );
        }
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
            (false, TabMessage::Hello { protocol, signature, bundle }) => {
                self.hello(protocol, &signature, &bundle)
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

    /// An unproven tab's hello: a proof to check, once per socket.
    fn hello(&self, protocol: u32, signature: &str, bundle: &str) -> TabAction {
        use base64::Engine as _;
        let Some(challenge) = &self.challenge else {
            return TabAction::Close(close::PROOF_FAILED, "A tab proves its pairing once.");
        };
        if protocol != PROTOCOL_VERSION || bundle != BUNDLE_DIGEST {
            return TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED);
        }
        let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .ok()
            .filter(|s| s.len() == SIGNATURE_BYTES);
        match (PairingKey::read(&self.key), signature) {
            (Some(key), Some(signature)) => TabAction::Verify(
                Self { challenge: None, ..self.clone() },
                Proof { key: key.0, text: proof_text(&self.origin, challenge), signature },
            ),
            _ => TabAction::Close(NOT_PROVEN.0, NOT_PROVEN.1),
        }
    }

    /// The answer to this tab's [`Proof`] (`valid`: the signature holds), with `proven_tabs`
    /// other tabs of the pairing proven: welcome it, or close it.
    pub fn proved(&self, valid: bool, now_ms: u64, proven_tabs: usize) -> TabAction {
        if self.proven || self.challenge.is_some() || !valid {
            return TabAction::Close(NOT_PROVEN.0, NOT_PROVEN.1);
        }
        if proven_tabs >= MAX_TABS_PER_PAIRING {
            return TabAction::Close(close::TOO_MANY_TABS, "Too many tabs of the app are open in this browser; close some, then reload this one.");
        }
        TabAction::Welcome(Self { proven: true, focus_ms: now_ms, ..self.clone() })
    }

    /// Whether this socket has had its [`HELLO_WAIT_MS`] to prove itself, in vain.
    #[must_use]
    pub fn overdue(&self, now_ms: u64) -> bool {
        !self.proven && now_ms >= self.opened_ms.saturating_add(HELLO_WAIT_MS)
    }
}

/// The sockets to close among a pairing's `open` ones at `now_ms`, by number, each with why:
/// every one still to prove itself after its [`HELLO_WAIT_MS`], and the oldest of those still
/// in time beyond [`MAX_UNPROVEN_SOCKETS`] (newer ones made room).
#[must_use]
pub fn sockets_to_close<'a>(
    open: impl IntoIterator<Item = &'a Tab>,
    now_ms: u64,
) -> Vec<(u64, Refusal)> {
    let waiting: Vec<&Tab> = open.into_iter().filter(|t| !t.proven).collect();
    let mut close: Vec<(u64, Refusal)> = Vec::new();
    let mut in_time: Vec<u64> = Vec::new();
    for t in waiting {
        if t.overdue(now_ms) {
            close.push((t.number, NOT_PROVEN_IN_TIME));
        } else {
            in_time.push(t.number);
        }
    }
    // The oldest (lowest numbers) beyond the bound; a handful at most, so no sort.
    while in_time.len() > MAX_UNPROVEN_SOCKETS {
        let Some((i, oldest)) = in_time.iter().copied().enumerate().min_by_key(|(_, n)| *n) else {
            break;
        };
        in_time.swap_remove(i);
        close.push((oldest, MADE_ROOM));
    }
    close
}

/// When the pairing's alarm should next ring for its `open` sockets still to prove themselves:
/// at once when some are to close ([`sockets_to_close`]), else when the next runs out of time
/// (None: none waits).
#[must_use]
pub fn next_check<'a>(open: impl IntoIterator<Item = &'a Tab> + Clone, now_ms: u64) -> Option<u64> {
    if !sockets_to_close(open.clone(), now_ms).is_empty() {
        return Some(now_ms);
    }
    open.into_iter().filter(|t| !t.proven).map(|t| t.opened_ms.saturating_add(HELLO_WAIT_MS)).min()
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
            key: f.string("key")?,
            origin: f.string("origin")?,
            challenge: f.optional_string("challenge")?,
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

    use crate::oauth::testing::Counter;
    use base64::Engine as _;

    const ORIGIN: &str = "https://relay.example";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A key of the right shape (the core never checks the curve: WebCrypto does).
    fn key() -> PairingKey {
        let mut raw = vec![7u8; PAIRING_KEY_BYTES];
        raw[0] = 0x04;
        PairingKey::read(&b64(&raw)).unwrap()
    }

    fn tab(number: u64) -> Tab {
        Tab::admit(&key(), ORIGIN, number, 1000, &mut Counter(number as u8)).tab
    }

    fn hello(signature: &str, protocol: u32, bundle: &str) -> String {
        format!(
            r#"{{"type":"hello","protocol":{protocol},"signature":"{signature}","bundle":"{bundle}"}}"#
        )
    }

    impl TabAction {
        fn unwrap_close(self) -> Refusal {
            match self {
                TabAction::Close(code, reason) => (code, reason),
                other => panic!("not closed: {other:?}"),
            }
        }
    }

    fn signature() -> String {
        b64(&[9u8; SIGNATURE_BYTES])
    }

    /// A tab whose hello's proof held at `at`.
    fn proven(number: u64, at: u64) -> Tab {
        let TabAction::Verify(t, _) =
            tab(number).on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), at)
        else {
            panic!("the hello should be checked")
        };
        let TabAction::Welcome(t) = t.proved(true, at, 0) else { panic!("the proof held") };
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
    fn a_socket_names_its_pairing_by_the_shape_of_a_public_key() {
        let k = key();
        assert_eq!(k.pairing(), sha256_hex(k.raw()), "the pairing id is the key's hash");
        assert_eq!(PairingKey::read(&k.text()), Some(k.clone()));
        let mut compressed = k.raw().to_vec();
        compressed[0] = 0x02;
        let padded = format!("{}=", k.text());
        for bad in [
            b64(&compressed),
            b64(&k.raw()[..64]),
            b64(&[k.raw(), &[1]].concat()),
            padded,
            k.text().replace('B', "+"),
            k.pairing(),
            String::new(),
        ] {
            assert_eq!(PairingKey::read(&bad), None, "{bad}");
        }
    }

    #[test]
    fn a_socket_names_its_key_and_the_pairing_id_opens_nothing() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };
        let k = key();
        assert_eq!(socket_key(&q(&[("key", &k.text())])), Ok(k.clone()));
        assert_eq!(
            socket_key(&q(&[("pairing", &k.pairing())])).unwrap_err().0,
            close::OUTDATED,
            "a first-protocol page (or a token's id) is told to reload"
        );
        for bad in [q(&[("key", &k.pairing())]), q(&[("key", "x")]), q(&[])] {
            assert_eq!(socket_key(&bad).unwrap_err().0, close::PROTOCOL_ERROR, "{bad:?}");
        }
    }

    #[test]
    fn each_socket_gets_a_fresh_challenge_first() {
        let a = Tab::admit(&key(), ORIGIN, 1, 1000, &mut Counter(1));
        let b = Tab::admit(&key(), ORIGIN, 2, 1000, &mut Counter(2));
        let RelayMessage::Challenge { challenge } = &a.first else { panic!("{:?}", a.first) };
        assert_eq!(a.tab.challenge.as_ref(), Some(challenge));
        assert_eq!(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(challenge).unwrap().len(),
            CHALLENGE_BYTES
        );
        assert_ne!(a.tab.challenge, b.tab.challenge);
        assert_eq!(
            (a.tab.pairing.as_str(), a.tab.origin.as_str()),
            (key().pairing().as_str(), ORIGIN)
        );
        assert!(!a.tab.proven);
        round_trip(&a.tab);
    }

    #[test]
    fn a_hello_is_a_proof_over_the_relays_origin_and_this_sockets_challenge() {
        let t = tab(1);
        let challenge = t.challenge.clone().unwrap();
        let TabAction::Verify(checking, proof) =
            t.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 2000)
        else {
            panic!("a hello is checked")
        };
        assert_eq!(
            proof,
            Proof {
                key: key().raw().to_vec(),
                text: proof_text(ORIGIN, &challenge),
                signature: vec![9u8; SIGNATURE_BYTES],
            }
        );
        assert_eq!(checking.challenge, None, "the challenge is used once");
        assert_eq!(
            checking.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 2001),
            TabAction::Close(close::PROOF_FAILED, "A tab proves its pairing once.")
        );
        assert_eq!(
            checking.proved(false, 2002, 0),
            TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing.")
        );
        assert_eq!(
            checking.proved(true, 2002, 0),
            TabAction::Welcome(Tab { proven: true, focus_ms: 2002, ..checking.clone() })
        );
        assert!(
            matches!(t.proved(true, 2002, 0), TabAction::Close(close::PROOF_FAILED, _)),
            "no answer proves a tab whose hello was not checked"
        );
        for bad in [b64(&[9u8; SIGNATURE_BYTES - 1]), "!!".into(), String::new()] {
            assert_eq!(
                t.on_message(&hello(&bad, PROTOCOL_VERSION, BUNDLE_DIGEST), 2000),
                TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing."),
                "{bad}"
            );
        }
        assert!(matches!(
            t.on_message(r#"{"type":"focus","focused":true}"#, 2000),
            TabAction::Close(close::PROOF_FAILED, _)
        ));
        assert!(matches!(
            t.on_message("garbage", 2000),
            TabAction::Close(close::PROTOCOL_ERROR, _)
        ));
        assert!(
            matches!(
                t.on_message(r#"{"type":"hello","protocol":1,"secret":"s","bundle":"b"}"#, 2000),
                TabAction::Close(close::PROTOCOL_ERROR, _)
            ),
            "a first-version hello proves nothing"
        );
    }

    #[test]
    fn a_message_before_the_proof_is_bounded_before_it_is_read() {
        let t = tab(1);
        let padded = format!(
            r#"{{"type":"hello","protocol":{PROTOCOL_VERSION},"signature":"{}","bundle":"{BUNDLE_DIGEST}","pad":"{}"}}"#,
            signature(),
            "p".repeat(MAX_UNPROVEN_MESSAGE_BYTES)
        );
        assert!(
            matches!(t.on_message(&padded, 2000), TabAction::Close(close::PROTOCOL_ERROR, r) if r.contains("too long"))
        );
        let trimmed = padded.replacen(&"p".repeat(MAX_UNPROVEN_MESSAGE_BYTES), "", 1);
        assert!(matches!(t.on_message(&trimmed, 2000), TabAction::Verify(..)));
        let long = format!(r#"{{"type":"view","dataset":"{}"}}"#, "d".repeat(8000));
        assert!(
            matches!(proven(1, 10).on_message(&long, 11), TabAction::View(_)),
            "a proven tab's messages have the larger bound"
        );
    }

    #[test]
    fn a_page_of_another_version_or_bundle_is_told_to_reload() {
        let t = tab(1);
        for h in [
            hello(&signature(), 99, BUNDLE_DIGEST),
            hello(&signature(), PROTOCOL_VERSION, "0000000000000000"),
        ] {
            assert_eq!(
                t.on_message(&h, 2000),
                TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED)
            );
        }
        assert!(sentences::TAB_OUTDATED.contains("reload"));
    }

    #[test]
    fn proven_tabs_and_sockets_still_to_prove_have_their_own_bounds() {
        let full: Vec<Tab> = (1..=MAX_TABS_PER_PAIRING as u64).map(|n| proven(n, 10)).collect();
        let newcomer = Tab::admit(&key(), ORIGIN, 100, 20, &mut Counter(3)).tab;
        let mut open = full.clone();
        open.push(newcomer.clone());
        assert_eq!(sockets_to_close(&open, 21), [], "proven tabs leave the unproven sockets' room");
        let TabAction::Verify(checking, _) =
            newcomer.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 21)
        else {
            panic!()
        };
        assert_eq!(
            checking.proved(true, 22, MAX_TABS_PER_PAIRING).unwrap_close().0,
            close::TOO_MANY_TABS
        );
        assert!(matches!(
            checking.proved(true, 22, MAX_TABS_PER_PAIRING - 1),
            TabAction::Welcome(_)
        ));
        // Silent sockets beyond the bound: the oldest make room, at once.
        let mut open = full.clone();
        open.extend((200..202 + MAX_UNPROVEN_SOCKETS as u64).rev().map(tab));
        assert_eq!(sockets_to_close(&open, 1001), [(200, MADE_ROOM), (201, MADE_ROOM)]);
        assert_eq!(next_check(&open, 1001), Some(1001));
        assert_eq!(MADE_ROOM.0, close::TOO_MANY_TABS, "a tab that made room tries again");
        let kept: Vec<Tab> = open.into_iter().filter(|t| t.number >= 202).collect();
        assert_eq!(sockets_to_close(&kept, 1001), []);
        assert_eq!(next_check(&kept, 1001), Some(1000 + HELLO_WAIT_MS));
    }

    #[test]
    fn a_socket_that_does_not_prove_itself_in_time_is_closed() {
        let t = tab(1); // opened at 1000
        assert!(!t.overdue(1000 + HELLO_WAIT_MS - 1));
        assert!(t.overdue(1000 + HELLO_WAIT_MS));
        assert!(!proven(2, 5).overdue(u64::MAX));
        let later = Tab { opened_ms: 4000, ..tab(3) };
        let open = [later.clone(), proven(2, 5), t.clone()];
        assert_eq!(next_check(&open, 1500), Some(1000 + HELLO_WAIT_MS));
        assert_eq!(sockets_to_close(&open, 1000 + HELLO_WAIT_MS), [(1, NOT_PROVEN_IN_TIME)]);
        assert_eq!(
            next_check(&[later, proven(2, 5)], 1000 + HELLO_WAIT_MS),
            Some(4000 + HELLO_WAIT_MS)
        );
        assert_eq!(next_check(&[proven(2, 5)], 0), None);
        for refusal in [MADE_ROOM, NOT_PROVEN, NOT_PROVEN_IN_TIME] {
            assert!(refusal.1.len() <= 123, "a close reason fits a close frame: {}", refusal.1);
        }
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
        let TabAction::Verify(checking, _) =
            tab(4).on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 50)
        else {
            panic!()
        };
        assert!(route([&checking]).is_none(), "nor one whose proof is being checked");
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
