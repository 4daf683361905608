//! The tab wire protocol: the JSON messages between the relay and a tab over the tab's
//! WebSocket, with the version both ends state and the close codes the relay uses.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{Map, Value};

use crate::fields::{Fields, Flat, FromValue, JsonText, Object};
use crate::raw::parse_keeping;
#[cfg(feature = "shapes")]
use crate::shapes::Shape;

/// The version of this protocol; a tab states it in its `hello`. Version 2: the tab proves its
/// pairing by a signature over the relay's challenge ([`proof_text`]), not by a secret.
/// Version 3: the socket's address names the pairing id, and the public key travels in the
/// hello (an address lands in request logs).
pub const PROTOCOL_VERSION: u32 = 3;

/// The path of the tab's WebSocket; the pairing it is for travels as
/// `?`[`TAB_PAIRING_PARAM`]`=`, the browser's public pairing key in its hello.
pub const TAB_PATH: &str = "/tab";
/// The query parameter of [`TAB_PATH`] that names the pairing: its id, the lowercase hex
/// SHA-256 of the raw public key ([`PAIRING_KEY_BYTES`] bytes). Tokens carry the id too, so it
/// opens nothing by itself: only a hello with the key it derives from, and that key's
/// signature, proves a tab. (Protocol 2 named the key itself, `?key=`: such a page is told to
/// reload.)
pub const TAB_PAIRING_PARAM: &str = "pairing";
/// The length of a raw uncompressed P-256 public key: `0x04`, then x and y of 32 bytes each.
pub const PAIRING_KEY_BYTES: usize = 65;
/// The length of the relay's challenge, in random bytes (sent as base64url).
pub const CHALLENGE_BYTES: usize = 32;
/// The length of a tab's signature: ECDSA P-256 over SHA-256 in the IEEE P1363 form WebCrypto
/// gives (r then s, 32 bytes each), sent as base64url.
pub const SIGNATURE_BYTES: usize = 64;
/// What the tab's signature is over, before the relay's origin and the challenge: names the
/// purpose and its version, so the pairing key's signature means this and nothing else.
pub const PROOF_CONTEXT: &str = "tabrelay-tab-proof/v1";
/// What separates the parts of [`proof_text`].
pub const PROOF_SEPARATOR: &str = "\n";

/// The text a tab signs to prove its pairing: [`PROOF_CONTEXT`], the relay's origin as the
/// tab addressed it (`https://relay.example`: no path, no trailing slash) and the relay's
/// challenge (base64url), each after a [`PROOF_SEPARATOR`]. A proof made for one relay origin
/// or one challenge is worth nothing for another. `tab/generated/bundle.js` writes the same.
#[must_use]
pub fn proof_text(origin: &str, challenge: &str) -> String {
    crate::joined(&[PROOF_CONTEXT, origin, challenge], PROOF_SEPARATOR)
}

/// What a presence challenge names first: the purpose and its version, so an assertion of the
/// person's presence means this and nothing else.
pub const PRESENCE_CONTEXT: &str = "tabrelay-presence/v1";

/// The decisions the person's presence is proven for ([`presence_text`]'s `decision`). The
/// relay checks [`presence::CREATE`] and [`presence::APPROVE`]; the tab checks the rest itself.
pub mod presence {
    /// Making the pairing's presence credential (its subject: the pairing id).
    pub const CREATE: &str = "create";
    /// Approving a connect code (its subject: the code or link reference, as the tab sends it).
    pub const APPROVE: &str = "approve";
    /// A card's answer that gives power: Allow on an irreversible call, or "Always" (its
    /// subject: the call's id and the answer).
    pub const ANSWER: &str = "answer";
    /// A looser mode or setting, or letting a stopped agent go on (its subject: what changes).
    pub const SETTING: &str = "setting";
}

/// The text whose SHA-256 is the WebAuthn challenge of a presence check: [`PRESENCE_CONTEXT`],
/// the relay's origin as the tab addressed it, the decision ([`presence`]) and what it is about,
/// each after a [`PROOF_SEPARATOR`]. So an assertion made for one code, call or relay is worth
/// nothing for another. `tab/generated/bundle.js` writes the same.
#[must_use]
pub fn presence_text(origin: &str, decision: &str, subject: &str) -> String {
    crate::joined(&[PRESENCE_CONTEXT, origin, decision, subject], PROOF_SEPARATOR)
}

/// The largest message either end sends over the tab's WebSocket, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The largest message a socket may send before it has proven its pairing (its hello), in
/// bytes; a longer one is refused before it is read.
pub const MAX_UNPROVEN_MESSAGE_BYTES: usize = 4 * 1024;
/// The most sockets of one pairing still to prove themselves at once, apart from its proven
/// tabs ([`MAX_TABS_PER_PAIRING`]); another one makes room by closing the oldest of them.
pub const MAX_UNPROVEN_SOCKETS: usize = 4;

/// How long a socket has to prove its pairing after it opens, in milliseconds.
pub const HELLO_WAIT_MS: u64 = 10_000;

/// What a tab sends to keep its socket alive; the relay's runtime answers [`PONG`] without
/// waking the pairing (WebSocket auto-response), so an idle tab costs nothing.
pub const PING: &str = "ping";
/// The answer to [`PING`].
pub const PONG: &str = "pong";
/// How often a tab pings (under the ~100 s at which idle sockets are seen cut).
pub const PING_EVERY_MS: u64 = 30_000;

/// The most tabs one pairing holds; another is refused with [`close::TOO_MANY_TABS`].
pub const MAX_TABS_PER_PAIRING: usize = 16;
/// The most characters of a card's sentence the relay keeps and repeats.
pub const MAX_CARD_CHARS: usize = 300;

/// The most tools a tab may state ([`TabMessage::Tools`]).
pub const MAX_TOOLS: usize = 100;
/// The most bytes a tab's whole tool list may take, written as JSON.
pub const MAX_TOOL_LIST_BYTES: usize = 256 * 1024;
/// The most bytes one tool's definition may take, written as JSON (its schemas mostly).
pub const MAX_TOOL_BYTES: usize = 32 * 1024;
/// The most characters of a tool's name. The MCP specification (2025-11-25) allows 128, but
/// agent apps put a prefix before it and model APIs stop at 64, so a longer name can break them.
pub const MAX_TOOL_NAME_CHARS: usize = 64;
/// The most characters of a tool's title.
pub const MAX_TOOL_TITLE_CHARS: usize = 200;
/// The most characters of a tool's description.
pub const MAX_TOOL_DESCRIPTION_CHARS: usize = 4000;
/// The most characters of the shown dataset's name the relay keeps ([`TabMessage::View`]).
pub const MAX_DATASET_NAME_CHARS: usize = 200;
/// The tool the relay answers itself (whether tabs are connected, which one is focused, what
/// it shows); a tab may not state a tool of this name.
pub const STATUS_TOOL: &str = "status";
/// What a tab answers a call to a tool the person's settings refuse (the relay's tool list
/// leaves such tools out; an agent may still call one by name).
pub const TOOL_REFUSED: &str = "The person's settings in their tab refuse this tool, so nothing was done; ask them to allow it there if it is needed.";

/// Close codes the relay ends a tab's socket with (the reason says it in words).
pub mod close {
    /// The page's origin is not one the relay serves.
    pub const ORIGIN_REFUSED: u16 = 4403;
    /// The tab did not prove the pairing key it named (a signature over this socket's
    /// challenge), or not in time.
    pub const PROOF_FAILED: u16 = 4401;
    /// The tab sent something that is not this protocol.
    pub const PROTOCOL_ERROR: u16 = 4400;
    /// The page was built for another protocol version or bundle: reloading it fixes that.
    pub const OUTDATED: u16 = 4426;
    /// The pairing already holds as many tabs as it may (or as many sockets still to prove
    /// themselves: the oldest of those makes room).
    pub const TOO_MANY_TABS: u16 = 4429;
}

/// A connect code as a tab sends it: `{"code": …}` typed by the person from the waiting page,
/// or `{"link": …}` the reference the waiting page's link carried (not the code: only the
/// relay can read the code from it, and approves it only with the browser's confirmation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeSaid {
    /// The whole code, typed.
    Code(String),
    /// The waiting page's link reference.
    Link(String),
}

impl CodeSaid {
    /// What the tab sent, as the relay's answers echo it.
    #[must_use]
    pub fn text(&self) -> &str {
        match self {
            Self::Code(s) | Self::Link(s) => s,
        }
    }
}

/// The path of the relay's confirm page: a tab that approved a link's reference opens it, as
/// a top-level window, with `?`[`CONFIRM_TICKET_PARAM`]`=` the ticket it was given; it approves
/// when that browser carries the waiting page's cookie.
pub const CONFIRM_PATH: &str = "/authorize/confirm";
/// The query parameter of [`CONFIRM_PATH`] carrying the ticket.
pub const CONFIRM_TICKET_PARAM: &str = "ticket";
/// What the confirm page posts to the window that opened it (`{"type": …, "ok": bool}`),
/// nothing secret.
pub const CONFIRM_MESSAGE: &str = "tabrelay-confirm";
/// The fragment key of the waiting page's link (`APP_URL#tabrelay-connect=REFERENCE`).
pub const CONNECT_FRAGMENT: &str = "tabrelay-connect";

/// What a tab sends. Read by [`TabMessage::parse`] (by hand from a JSON value: serde's
/// internally tagged enums cost the Worker about 50 KB of wasm).
#[derive(Debug, Clone, PartialEq)]
pub enum TabMessage {
    /// The first message, answering [`RelayMessage::Challenge`]: the protocol version, the
    /// browser's public pairing key and its proof.
    Hello {
        /// The protocol version the tab speaks (a hello of another version reads as one, so
        /// its page is told to reload whatever else it carries).
        protocol: u32,
        /// The browser's public pairing key: base64url (no padding) of the raw, uncompressed
        /// P-256 public key ([`PAIRING_KEY_BYTES`] bytes, `0x04` first), whose SHA-256 is the
        /// pairing the socket named.
        key: String,
        /// The pairing key's signature over [`proof_text`] of the relay's origin and this
        /// socket's challenge: base64url of [`SIGNATURE_BYTES`] bytes.
        signature: String,
        /// The digest of the bundle the page was built with ([`crate::BUNDLE_DIGEST`]); a page
        /// too old to send one is told to reload.
        bundle: String,
    },
    /// The person is being asked about a call; `sentence` is what the tab's card says.
    Asking {
        /// The call's id.
        id: u64,
        /// The card's sentence.
        sentence: String,
        /// Whether an agent app that can be asked (the local way in, elicitation) may allow
        /// the call too: false for a card whose Allow needs the person's presence (an
        /// irreversible call), which it may only deny.
        app_may_allow: bool,
    },
    /// The person answered the question about a call (the result follows).
    Answered {
        /// The call's id.
        id: u64,
    },
    /// The person took a step in the app themselves: agents' turns end.
    Step,
    /// The tab asks for the pairing's connections (to show and forget them).
    Connections,
    /// The person forgets a connection: its tokens stop at once, and so does everything it
    /// sent (the relay answers with [`RelayMessage::Forgotten`] to every tab).
    Forget {
        /// The connection's id.
        id: String,
    },
    /// The person stopped an agent: the relay refuses the connection's calls until the tab
    /// sends [`TabMessage::GoOn`] for it.
    Stop {
        /// The connection's id.
        connection: String,
    },
    /// The person lets a stopped agent go on.
    GoOn {
        /// The connection's id.
        connection: String,
    },
    /// The person typed a connect code, or pressed to see the one the waiting page's link
    /// opened: who asks for it?
    Describe {
        /// The code typed, or the link's reference.
        said: CodeSaid,
    },
    /// The person approved a connect code in this tab. A typed code is approved; a link's
    /// reference waits for the browser's confirmation ([`RelayMessage::Confirm`]).
    Approve {
        /// The code typed, or the link's reference.
        said: CodeSaid,
        /// The person's presence, proven on this device ([`presence::APPROVE`] of `said`): the
        /// relay requires it once the pairing holds a presence credential.
        proof: Option<Assertion>,
    },
    /// The person made the pairing's presence credential on this device (a WebAuthn platform
    /// credential, user verification required, [`presence::CREATE`] of the pairing id). The
    /// relay keeps the first one; a pairing that holds one refuses another.
    Presence {
        /// The credential's id (base64url).
        credential: String,
        /// Its public key: base64url of the raw uncompressed P-256 key ([`PAIRING_KEY_BYTES`]).
        key: String,
        /// The creation's `clientDataJSON` (base64url).
        client_data: String,
        /// The creation's authenticator data (base64url).
        authenticator: String,
    },
    /// The person denied a connect code in this tab.
    Deny {
        /// The code typed, or the link's reference.
        said: CodeSaid,
    },
    /// The tab gained or lost focus.
    Focus {
        /// Whether the tab has focus now.
        focused: bool,
    },
    /// The tab's tool list: full MCP tool definitions, each with the person's setting. Sent
    /// after the welcome and whenever the list or the settings change; the latest replaces the
    /// one before. A tab that never sends one gets the bundled catalogue.
    Tools {
        /// The tools, as read and checked by [`ToolList::read`].
        tools: ToolList,
    },
    /// A tool list the relay refuses, and why (it keeps the tab's previous list). Never sent
    /// by a tab: what [`TabMessage::parse`] makes of a `tools` message it cannot take.
    BadTools {
        /// What is wrong with the list.
        why: ToolsError,
    },
    /// What the tab shows: the dataset's name (page content, so quoted to agents as data).
    View {
        /// The shown dataset's name.
        dataset: String,
    },
    /// The answer to a call.
    Result {
        /// The call's id, as the relay sent it.
        id: u64,
        /// The outcome.
        outcome: Outcome,
    },
}

/// A WebAuthn assertion of the person's presence, each part base64url as the browser gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    /// The credential's id.
    pub credential: String,
    /// The `clientDataJSON`.
    pub client_data: String,
    /// The authenticator data.
    pub authenticator: String,
    /// The signature (ASN.1 DER, as WebAuthn gives it).
    pub signature: String,
}

/// The pairing's presence credential, as the relay tells its tabs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresenceKey {
    /// The credential's id (base64url).
    pub credential: String,
    /// Its public key: base64url of the raw uncompressed P-256 key.
    pub key: String,
}

/// What a call came to in the tab: `{"data": …, "image"?: …}` or `{"error": "…"}`.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The tool ran; `data` is its JSON result and `image` an optional picture.
    Done {
        /// The tool's JSON result, as the tab wrote it.
        data: JsonText,
        /// A picture, when the tool makes one.
        image: Option<Image>,
        /// A sound, when the tool makes one.
        audio: Option<Audio>,
        /// A document the tool hands over whole (an embedded text resource).
        resource: Option<Embedded>,
        /// The tab stated the tool with an `outputSchema` and `data` is its structured result:
        /// the agent gets it as the result's `structuredContent` too (MCP: a client refuses a
        /// result without it from such a tool). Written `"structured": true`; absent: false.
        structured: bool,
    },
    /// The tool was refused or failed; one sentence says why.
    Failed {
        /// What the person or agent can act on.
        error: String,
    },
    /// The tool needs input from the agent's app before it can finish (2026-07-28's
    /// multi-round-trip requests): `{"input_required": {key: request, …}, "state"?: …}`. The
    /// relay passes the requests on and, when the client retries, sends the same call again
    /// with the client's responses and this state.
    InputRequired {
        /// The requests by key, each `{"method": …, "params": …}` as MCP says.
        requests: Map<String, Value>,
        /// The tab's own state for the next round, when it keeps one.
        state: Option<Value>,
    },
}

impl Outcome {
    /// Puts a result's data, kept as the tab wrote it ([`crate::raw`]), in its place (the tree
    /// it was read from held null there).
    pub fn keep(&mut self, kept: Option<JsonText>) {
        if let (Self::Done { data, .. }, Some(kept)) = (self, kept) {
            *data = kept;
        }
    }
}

/// The methods a tab may ask the client through [`Outcome::InputRequired`], each with the
/// client capability it needs.
pub static INPUT_METHODS: [(&str, &str); 3] = [
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
];

/// The capability a request a tab asks the client needs (its method's, from [`INPUT_METHODS`]).
#[must_use]
pub fn capability_of(request: &Value) -> &'static str {
    let method = request.get("method").and_then(Value::as_str).unwrap_or_default();
    INPUT_METHODS.iter().find(|(m, _)| *m == method).map_or("", |(_, c)| *c)
}

/// Splits a tab's input requests into those a client that declared what `declared` says can
/// answer, and the capabilities the others need (as `{capability: {}}`, the shape of
/// `requiredCapabilities`).
#[must_use]
pub fn askable(
    requests: &Map<String, Value>,
    declared: impl Fn(&str) -> bool,
) -> (Map<String, Value>, Map<String, Value>) {
    split_askable(requests, &declared)
}

/// [`askable`]'s work, one copy for every caller's `declared`.
fn split_askable(
    requests: &Map<String, Value>,
    declared: &dyn Fn(&str) -> bool,
) -> (Map<String, Value>, Map<String, Value>) {
    let mut kept = Map::new();
    let mut missing = Map::new();
    for (key, request) in requests {
        let capability = capability_of(request);
        if declared(capability) {
            kept.insert(key.clone(), request.clone());
        } else {
            missing.insert(capability.into(), Value::Object(Map::new()));
        }
    }
    (kept, missing)
}

/// The `input` of a call sent to its tab again with the client's answers to the tab's
/// [`Outcome::InputRequired`]: `{"responses": {key: answer, …}, "state"?: the tab's state}`.
#[must_use]
pub fn call_input(responses: Value, state: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("responses".into(), responses);
    if let Some(state) = state.filter(|s| !s.is_null()) {
        m.insert("state".into(), state);
    }
    Value::Object(m)
}

/// The most input requests in one answer.
pub const MAX_INPUT_REQUESTS: usize = 8;

/// A picture in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Base64 of the picture's bytes.
    pub data: String,
    /// Its media type, such as `image/png`.
    pub mime_type: String,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
}

/// A sound in a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    /// Base64 of the sound's bytes.
    pub data: String,
    /// Its media type, such as `audio/wav`.
    pub mime_type: String,
}

/// A text document in a result (an MCP embedded resource).
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    /// Its address, as the app names it.
    pub uri: String,
    /// Its media type, such as `text/plain`.
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

/// What the relay sends a tab.
#[derive(Debug, Clone, PartialEq)]
pub enum RelayMessage {
    /// The relay's first message on a tab's socket: a fresh challenge (base64url of
    /// [`CHALLENGE_BYTES`] random bytes) for the tab to sign ([`proof_text`]).
    Challenge {
        /// The challenge.
        challenge: String,
    },
    /// The tab proved its pairing.
    Welcome {
        /// The pairing id (the hex SHA-256 of the pairing key).
        pairing: String,
        /// The protocol version the relay speaks.
        protocol: u32,
        /// The pairing's presence credential, once the person made one.
        presence: Option<PresenceKey>,
    },
    /// The pairing now holds this presence credential (sent to every tab).
    Presence {
        /// The credential.
        held: PresenceKey,
    },
    /// The presence credential a tab sent was not kept; the sentence says why.
    PresenceRefused {
        /// What the person can act on.
        sentence: String,
    },
    /// An agent calls a tool.
    Call {
        /// The call's id within the pairing.
        id: u64,
        /// The tool, its arguments, the agent and its connection.
        tool_call: ToolCall,
        /// The turn this call belongs to.
        turn: u64,
        /// A retried call's input (2026-07-28): `{"responses": {key: response, …}, "state"?:
        /// …}`, the client's answers to the tab's [`Outcome::InputRequired`] and the state the
        /// tab gave with it.
        input: Option<Value>,
    },
    /// Who asks for a connect code (answering `describe`).
    Described {
        /// The code, normalised.
        code: String,
        /// The client's name, as it registered or its metadata document says (not verified).
        client: String,
        /// The host its browser returns to.
        host: String,
        /// The domain that published the client's metadata document (verified by the relay
        /// fetching it); absent for a client that registered.
        verified: Option<String>,
        /// How long ago the request started (its connect code was made), in milliseconds.
        age_ms: u64,
        /// Where the browser that started it was ("City, CC"), when the platform said; absent
        /// when it did not (the tab then says nothing of where).
        place: Option<String>,
        /// The well-known agent app the name looks like or claims, when `name_warning` is
        /// [`consent::warning::LOOKS_LIKE`] or [`consent::warning::CLAIMS`].
        lookalike: Option<String>,
        /// This pairing's connections of the same client (same client id or verified domain),
        /// oldest first: where and when each started.
        connections: Vec<ConnectionInfo>,
        /// What about the name should make the person look twice: one of [`consent::warning`]'s
        /// kinds; the tab shows that kind's sentence ([`consent::warning::sentence`]).
        name_warning: Option<String>,
    },
    /// The link's reference was approved in this tab; the approval holds once this browser
    /// opens [`CONFIRM_PATH`] with `ticket` (carrying the waiting page's cookie, which only the
    /// browser that opened the waiting page has).
    Confirm {
        /// The link's reference, as the tab sent it.
        code: String,
        /// Who asked for it.
        client: String,
        /// The ticket for [`CONFIRM_TICKET_PARAM`]: short-lived, good once.
        ticket: String,
    },
    /// The connect code was denied: the waiting page returns to the agent app with a refusal.
    Denied {
        /// The code, normalised.
        code: String,
    },
    /// The connect code was approved: the waiting page goes on to the agent app.
    Approved {
        /// The code, normalised.
        code: String,
        /// Who asked for it.
        client: String,
    },
    /// The pairing's connections (answering `connections` and `forget`).
    Connections {
        /// Every connection, oldest first.
        list: Vec<ConnectionInfo>,
    },
    /// The call is no longer waited for (the agent cancelled it or gave up): drop its card.
    Cancel {
        /// The call's id.
        id: u64,
    },
    /// The person answered the call's card in the agent app (the local server's elicitation):
    /// the card goes as if clicked, `choice` being `once` or `deny`. Only the local server
    /// sends it.
    Elicited {
        /// The call's id.
        id: u64,
        /// `once` (Allow once) or `deny`.
        choice: String,
    },
    /// The connection was forgotten (or revoked): drop its cards, its queued and running
    /// calls, and refuse any call of it still on its way (the relay takes no result of it).
    Forgotten {
        /// The connection's id.
        connection: String,
    },
    /// The person stopped a connection's agent, or let it go on, in one of the pairing's tabs
    /// (sent to every tab, so each refuses or runs its calls alike).
    Stopped {
        /// The connection's id.
        connection: String,
        /// Whether it is stopped now.
        stopped: bool,
    },
    /// The connect code was not approved; the sentence says why.
    Refused {
        /// The code, as the tab sent it.
        code: String,
        /// What the person can act on.
        sentence: String,
    },
    /// The tab's tool list was refused (the relay keeps its previous one); the sentence says
    /// which tool and what is wrong.
    ToolsRefused {
        /// For the app's developer.
        sentence: String,
    },
}

/// The words of [`Setting`] as a tab states them ([`Setting::word`]), in its order, each with
/// what the tab's Agents panel says a tool of that setting does now (the tab's copy of the
/// bundle carries them: `SETTINGS`, `SETTING_WORDS`). Only the generator reads the panel's words.
#[cfg(feature = "shapes")]
pub const SETTINGS: [(&str, &str); 3] = [
    (Setting::Asks.word(), "asks you first"),
    (Setting::Runs.word(), "runs without asking"),
    (Setting::Refused.word(), "refused"),
];

/// What the person's settings make of a tool (written as its [`Setting::word`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// Each call asks the person in the tab first.
    Asks,
    /// Calls run without asking.
    Runs,
    /// Calls are refused.
    Refused,
}

impl Setting {
    /// Its word, as a tab states it (`setting`) and the relay writes it: the one place the
    /// words are spelled.
    #[must_use]
    pub const fn word(self) -> &'static str {
        match self {
            Self::Asks => "asks",
            Self::Runs => "runs",
            Self::Refused => "refused",
        }
    }

    /// The setting whose word is `word`.
    #[must_use]
    pub fn of(word: &str) -> Option<Self> {
        [Self::Asks, Self::Runs, Self::Refused].into_iter().find(|s| s.word() == word)
    }
}

/// One tool a tab states: its MCP tool definition and the person's setting for it.
#[derive(Debug, Clone, PartialEq)]
pub struct StatedTool {
    /// The tool's name (also in `definition`).
    pub name: String,
    /// What the person's settings make of it.
    pub setting: Setting,
    /// The MCP tool definition: `name`, `inputSchema` and those of `title`, `description`,
    /// `outputSchema`, `annotations`, `execution` and `_meta` the tab gave (other keys are
    /// dropped).
    pub definition: Map<String, Value>,
}

/// A tab's tool list, checked: at most [`MAX_TOOLS`] tools of distinct valid names, within
/// [`MAX_TOOL_LIST_BYTES`]. Written out as the tab wrote it (each definition and `setting`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolList(Vec<StatedTool>);

/// Why a tab's tool list is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsError {
    /// `tools` is not an array.
    NotAList,
    /// More tools than [`MAX_TOOLS`].
    TooMany(usize),
    /// The list is larger than [`MAX_TOOL_LIST_BYTES`].
    TooLarge(usize),
    /// The tool at this position is not an object.
    NotAnObject(usize),
    /// The tool at this position has no name by the rule ([`valid_tool_name`]).
    BadName(usize),
    /// A name the relay keeps for its own tool ([`STATUS_TOOL`]).
    Reserved(String),
    /// Two tools share a name.
    Duplicate(String),
    /// One of the tool's fields is missing, of the wrong kind, or too long.
    BadField(String, &'static str),
    /// The tool's definition is larger than [`MAX_TOOL_BYTES`].
    ToolTooLarge(String),
}

/// A connection as the tab lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// The connection's (grant's) id.
    pub id: String,
    /// The client's name.
    pub client: String,
    /// Its redirect host.
    pub host: String,
    /// When it was made, in milliseconds since the epoch.
    pub created_ms: u64,
    /// When it was last used.
    pub used_ms: u64,
    /// Where the browser that asked for it was ("City, CC"), when the platform said.
    pub place: Option<String>,
    /// Whether the person stopped it (its calls are refused until they let it go on).
    pub stopped: bool,
}

/// What the tab's consent says beside who asks, in the relay's words (the tab's copy of the
/// bundle carries them), and what approving through the waiting page's link says.
pub mod consent {
    /// Said with every request to approve.
    pub const APPROVE_ONLY_YOURS: &str = "Approve only a request you started yourself just now, from an app you use. If someone sent you this link or code, or you did not just start connecting, Deny it.";
    /// An unverified name like a well-known app's; `{app}` is that app's name.
    pub const LOOKALIKE: &str = "This name looks like {app}'s, but nobody verified it: any app can call itself {app}. Approve only if you started this yourself just now.";
    /// A link to the app carried a request to connect; nothing is asked until the person
    /// presses to see it.
    pub const LINK_OPENED: &str = "This page was opened with a link that asks to connect an agent app. Press Show who asks to see the request; if you did not just start connecting, ignore it.";
    /// A linked approval is being confirmed in the relay's window.
    pub const LINK_CONFIRMING: &str = "Confirming in a small window of the relay that this browser opened the waiting page; it closes by itself.";
    /// The relay's window closed before it said whether it approved.
    pub const LINK_WINDOW_CLOSED: &str = "The relay's window closed before it confirmed: press Approve again, or type the whole code shown on the waiting page.";
    /// The browser blocked the relay's window.
    pub const LINK_WINDOW_BLOCKED: &str = "The browser blocked the relay's window: press Confirm in a new window to finish approving, or type the whole code shown on the waiting page.";
    /// The browser that approved through the link did not open the waiting page (a link
    /// someone sent): only the whole code, typed, approves it.
    pub const NOT_THIS_BROWSER: &str = "This browser did not open the waiting page, so a link cannot approve it: type the whole code shown on the waiting page into your tab. If someone sent you this link, deny it: approving would connect their agent to your tab.";
    /// A verified client whose name or domain claims a well-known app that is not its domain's;
    /// `{app}` is that app's name, `{domain}` the verified domain.
    pub const CLAIMS: &str = "This app is verified only as {domain}, which is not {app}'s: whatever its name or its address says of {app} is its own claim. Approve only if you meant to connect an app from {domain}.";
    /// A word of the name written in letters of two alphabets.
    pub const MIXED_SCRIPTS: &str = "This name mixes letters of different alphabets in one word, as names made to pass for another app's do. Approve only if you started this yourself just now.";
    /// An unverified name with no Latin letter.
    pub const NOT_LATIN: &str = "This name has no Latin letters, so it cannot be compared with well-known apps' names, and nobody verified it: any app can call itself anything. Approve only if you started this yourself just now.";

    /// The kinds of `name_warning` in a `described` message, each with its sentence.
    pub mod warning {
        /// An unverified name like a well-known app's ([`super::LOOKALIKE`]).
        pub const LOOKS_LIKE: &str = "looks_like";
        /// A verified client claiming another app's name ([`super::CLAIMS`]).
        pub const CLAIMS: &str = "claims";
        /// Two alphabets in one word ([`super::MIXED_SCRIPTS`]).
        pub const MIXED_SCRIPTS: &str = "mixed_scripts";
        /// No Latin letter ([`super::NOT_LATIN`]).
        pub const NOT_LATIN: &str = "not_latin";

        /// The sentence of a warning `kind` (`{app}` and `{domain}` still to fill), if it is one.
        #[must_use]
        pub fn sentence(kind: &str) -> Option<&'static str> {
            Some(match kind {
                LOOKS_LIKE => super::LOOKALIKE,
                CLAIMS => super::CLAIMS,
                MIXED_SCRIPTS => super::MIXED_SCRIPTS,
                NOT_LATIN => super::NOT_LATIN,
                _ => return None,
            })
        }
    }
}

/// A connection of an agent app to the pairing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// The grant's id.
    pub id: String,
    /// How the agent reached the tab; always `connector` for the relay.
    pub kind: String,
    /// The client's name.
    pub client: String,
    /// The host of the client's redirect URI.
    pub host: String,
    /// The domain that published the client's metadata document when the connection was made
    /// (verified by the relay fetching it); absent for a client that registered. Filled in by
    /// the pairing from its grant, whatever the call carried.
    pub verified: Option<String>,
}

/// A tool call as the relay carries it from the agent to the tab: written as these fields of
/// the Worker's call request, of the tab's `call` message and of a task's stored call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// The tool's arguments.
    pub args: Value,
    /// The agent's name, as its client gave it.
    pub agent: String,
    /// The connection the call came through.
    pub connection: Connection,
}

/// A message that is not this protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotProtocol;

impl Flat for CodeSaid {
    /// The code a tab's `describe`, `approve` or `deny` names: `code` (typed) or `link`, not
    /// both.
    fn from_fields(f: &mut Fields) -> Option<Self> {
        match (f.string("code"), f.string("link")) {
            (Some(code), None) => Some(Self::Code(code)),
            (None, Some(link)) => Some(Self::Link(link)),
            _ => None,
        }
    }

    fn write_fields(&self, o: &mut Object<'_>) {
        match self {
            Self::Code(code) => o.field("code", code),
            Self::Link(link) => o.field("link", link),
        }
    }

    #[cfg(feature = "shapes")]
    fn shapes() -> Vec<Shape> {
        let either = |key| Shape { key, kind: "string", or: Shape::EITHER };
        Vec::from([either("code"), either("link")])
    }
}

impl TabMessage {
    /// Reads a tab's message.
    ///
    /// # Errors
    /// [`NotProtocol`] when the text is not a message of this protocol.
    pub fn parse(text: &str) -> Result<Self, NotProtocol> {
        // A result's data is kept as the tab wrote it (see `raw`): read, it is put in its place.
        let (value, data) = parse_keeping(text.as_bytes(), &["data"]).ok_or(NotProtocol)?;
        // A tool list the relay refuses is still a `tools` message: why it is refused.
        if value.get("type").and_then(Value::as_str) == Some("tools") {
            return Ok(match ToolList::read(value.get("tools").unwrap_or(&Value::Null)) {
                Ok(tools) => TabMessage::Tools { tools },
                Err(why) => TabMessage::BadTools { why },
            });
        }
        let mut message = Self::from_value(value).ok_or(NotProtocol)?;
        if let Self::Result { outcome, .. } = &mut message {
            outcome.keep(data);
        }
        Ok(message)
    }
}

/// What a call came to, written as the fields of the tab's `result` (and as the pairing hands
/// it to the Worker): `{"data": …}`, `{"input_required": …}` or `{"error": …}`, in that order.
impl Flat for Outcome {
    fn from_fields(f: &mut Fields) -> Option<Self> {
        if let Some(data) = f.value("data") {
            return Some(Outcome::Done {
                data: JsonText::of(&data),
                image: crate::fields::Take::take(f, "image")?,
                audio: crate::fields::Take::take(f, "audio")?,
                resource: crate::fields::Take::take(f, "resource")?,
                structured: f.bool("structured").unwrap_or(false),
            });
        }
        if let Some(requests) = f.value("input_required") {
            let Value::Object(requests) = requests else { return None };
            let known = |r: &Value| {
                let method = r.get("method").and_then(Value::as_str);
                INPUT_METHODS.iter().any(|(m, _)| Some(*m) == method)
            };
            if requests.is_empty()
                || requests.len() > MAX_INPUT_REQUESTS
                || !requests.values().all(known)
            {
                return None;
            }
            let state = f.value("state").filter(|s| !s.is_null());
            return Some(Outcome::InputRequired { requests, state });
        }
        f.string("error").map(|error| Outcome::Failed { error })
    }

    fn write_fields(&self, o: &mut Object<'_>) {
        match self {
            Self::Done { data, image, audio, resource, structured } => {
                o.field("data", data);
                if *structured {
                    o.field("structured", structured);
                }
                if let Some(image) = image {
                    o.field("image", image);
                }
                if let Some(audio) = audio {
                    o.field("audio", audio);
                }
                if let Some(resource) = resource {
                    o.field("resource", resource);
                }
            }
            Self::Failed { error } => o.field("error", error),
            Self::InputRequired { requests, state } => {
                o.field("input_required", requests);
                if let Some(state) = state {
                    o.field("state", state);
                }
            }
        }
    }

    /// In the order [`Outcome::write_fields`] writes them: one of `data`, `error` and
    /// `input_required` is needed.
    #[cfg(feature = "shapes")]
    fn shapes() -> Vec<Shape> {
        let shape = |key, kind, or| Shape { key, kind, or };
        Vec::from([
            shape("data", "any", Shape::EITHER),
            shape("structured", "bool", "false"),
            shape("image", "object", "None"),
            shape("audio", "object", "None"),
            shape("resource", "object", "None"),
            shape("error", "string", Shape::EITHER),
            shape("input_required", "object", Shape::EITHER),
            shape("state", "any", "None"),
        ])
    }
}

impl FromValue for Outcome {
    const WHAT: &'static str = "an outcome (data or an error)";
    fn from_value(value: Value) -> Option<Self> {
        Self::from_fields(&mut Fields::of(value)?)
    }
}

crate::codec!(Image, "a picture", { data, mime_type = "mimeType", width, height });
crate::codec!(Audio, "a sound", { data, mime_type = "mimeType" });
crate::codec!(Embedded, "a text document", { uri, mime_type = "mimeType", text });
crate::codec!(Assertion, "an assertion", { credential, client_data, authenticator, signature });
crate::codec!(PresenceKey, "a presence credential", { credential, key });
crate::codec!(Connection, "a connection", { id, kind, client, host, verified or None });
crate::codec!(ToolCall, "a tool call", { tool, args, agent, connection });
crate::codec!(ConnectionInfo, "a connection as the tab lists it", {
    id, client, host, created_ms, used_ms, place or None, stopped or false
});

crate::codec!(RelayMessage, "a message of the relay", tag "type" {
    "challenge" => Challenge { challenge },
    "welcome" => Welcome { pairing, protocol, presence or None },
    "presence" => Presence { held as flat },
    "presence_refused" => PresenceRefused { sentence },
    "call" => Call { id, tool_call as flat, turn, input or None },
    "described" => Described {
        code, client, host, verified or None, age_ms, place or None, lookalike or None,
        connections or Vec::new(), name_warning or None
    },
    "confirm" => Confirm { code, client, ticket },
    "denied" => Denied { code },
    "approved" => Approved { code, client },
    "connections" => Connections { list },
    "cancel" => Cancel { id },
    "elicited" => Elicited { id, choice },
    "forgotten" => Forgotten { connection },
    "stopped" => Stopped { connection, stopped },
    "refused" => Refused { code, sentence },
    "tools_refused" => ToolsRefused { sentence },
});

// A hello of another version reads as one whatever else it carries (its page is told to
// reload), so its key, signature and bundle may be missing.
crate::codec!(TabMessage, "a message of a tab", tag "type" {
    "hello" => Hello {
        protocol, key or String::new(), signature or String::new(), bundle or String::new()
    },
    "asking" => Asking { id, sentence, app_may_allow or false },
    "answered" => Answered { id },
    "step" => Step,
    "connections" => Connections,
    "forget" => Forget { id },
    "stop" => Stop { connection },
    "go_on" => GoOn { connection },
    "describe" => Describe { said as flat },
    "approve" => Approve { said as flat, proof or None },
    "presence" => Presence { credential, key, client_data, authenticator },
    "deny" => Deny { said as flat },
    "focus" => Focus { focused },
    "tools" => Tools { tools },
    "view" => View { dataset },
    "result" => Result { id, outcome as flat },
} else "tools" => BadTools);

/// A tool list as the tab writes it, read and checked by [`ToolList::read`] (None: refused).
impl crate::fields::Take for ToolList {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "list";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        ToolList::read(&f.value(key)?).ok()
    }
}

impl crate::fields::Encode for ToolList {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.to_value().write_json(out);
    }
}

/// Whether `name` is a tool name by the rule: 1 to [`MAX_TOOL_NAME_CHARS`] of ASCII letters,
/// digits, `_`, `-` and `.` (the MCP specification's characters).
#[must_use]
pub fn valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_CHARS).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

impl ToolList {
    /// Reads and checks the `tools` array of a tab's `tools` message.
    pub fn read(tools: &Value) -> Result<Self, ToolsError> {
        let Value::Array(items) = tools else { return Err(ToolsError::NotAList) };
        if items.len() > MAX_TOOLS {
            return Err(ToolsError::TooMany(items.len()));
        }
        let bytes = json_len(tools);
        if bytes > MAX_TOOL_LIST_BYTES {
            return Err(ToolsError::TooLarge(bytes));
        }
        let mut list: Vec<StatedTool> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let tool = StatedTool::read(i, item)?;
            if list.iter().any(|t| t.name == tool.name) {
                return Err(ToolsError::Duplicate(tool.name));
            }
            list.push(tool);
        }
        Ok(Self(list))
    }

    /// The tools, in the tab's order.
    #[must_use]
    pub fn tools(&self) -> &[StatedTool] {
        &self.0
    }

    /// The tool of this name.
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&StatedTool> {
        self.0.iter().find(|t| t.name == name)
    }

    /// The list as the tab wrote it (read back by [`ToolList::read`]).
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut tools = Vec::with_capacity(self.0.len());
        for tool in &self.0 {
            tools.push(tool.to_value());
        }
        Value::Array(tools)
    }
}

impl StatedTool {
    /// The keys of an MCP tool definition the relay carries.
    const KEPT: [&'static str; 6] =
        ["title", "description", "outputSchema", "annotations", "execution", "_meta"];

    fn read(position: usize, item: &Value) -> Result<Self, ToolsError> {
        let Value::Object(m) = item else { return Err(ToolsError::NotAnObject(position)) };
        let name = match m.get("name") {
            Some(Value::String(n)) if valid_tool_name(n) => n.clone(),
            _ => return Err(ToolsError::BadName(position)),
        };
        if name == STATUS_TOOL {
            return Err(ToolsError::Reserved(name));
        }
        let bad = |field: &'static str| ToolsError::BadField(name.clone(), field);
        let Some(setting) = m.get("setting").and_then(Value::as_str).and_then(Setting::of) else {
            return Err(bad("setting"));
        };
        let mut definition = Map::new();
        definition.insert("name".into(), Value::String(name.clone()));
        match m.get("inputSchema") {
            Some(schema) if is_object_schema(schema) => {
                definition.insert("inputSchema".into(), schema.clone());
            }
            _ => return Err(bad("inputSchema")),
        }
        for key in Self::KEPT {
            let Some(v) = m.get(key) else { continue };
            let fits = match (key, v) {
                ("title", Value::String(t)) => t.chars().count() <= MAX_TOOL_TITLE_CHARS,
                ("description", Value::String(d)) => {
                    d.chars().count() <= MAX_TOOL_DESCRIPTION_CHARS
                }
                ("outputSchema", schema) => is_object_schema(schema),
                ("annotations" | "_meta", Value::Object(_)) => true,
                // How the tool takes tasks: "forbidden", "optional" or "required".
                ("execution", Value::Object(e)) => match e.get("taskSupport") {
                    None => true,
                    Some(Value::String(t)) => {
                        ["forbidden", "optional", "required"].contains(&t.as_str())
                    }
                    Some(_) => false,
                },
                _ => false,
            };
            if !fits {
                return Err(bad(key));
            }
            definition.insert(key.into(), v.clone());
        }
        let tool = Self { name, setting, definition };
        if json_len(&tool.to_value()) > MAX_TOOL_BYTES {
            return Err(ToolsError::ToolTooLarge(tool.name));
        }
        Ok(tool)
    }

    /// The tool as the tab wrote it: its definition and `setting`.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut m = self.definition.clone();
        m.insert("setting".into(), Value::String(self.setting.word().into()));
        Value::Object(m)
    }
}

/// Whether a JSON Schema describes an object (`"type": "object"`), as MCP requires of a
/// tool's input and output schemas.
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The length of a value written as JSON, in bytes.
fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map(|b| b.len()).unwrap_or(usize::MAX)
}

impl ToolsError {
    /// One sentence for the app's developer: which tool, what is wrong, the limit.
    #[must_use]
    pub fn sentence(&self) -> String {
        match self {
            Self::NotAList => "The tool list was refused: `tools` must be an array of tool definitions.".into(),
            Self::TooMany(n) => format!("The tool list was refused: it has {n} tools, over the {MAX_TOOLS} allowed."),
            Self::TooLarge(n) => format!("The tool list was refused: it takes {n} bytes as JSON, over the {MAX_TOOL_LIST_BYTES} allowed."),
            Self::NotAnObject(i) => format!("The tool list was refused: tool {} is not an object.", i + 1),
            Self::BadName(i) => format!("The tool list was refused: tool {} has no valid name (1 to {MAX_TOOL_NAME_CHARS} of A-Z, a-z, 0-9, _, - and .).", i + 1),
            Self::Reserved(n) => format!("The tool list was refused: the name {n} is the relay's own tool."),
            Self::Duplicate(n) => format!("The tool list was refused: two tools are named {n}."),
            Self::BadField(n, "setting") => format!("The tool list was refused: tool {n} needs a setting of asks, runs or refused."),
            Self::BadField(n, field @ ("inputSchema" | "outputSchema")) => format!("The tool list was refused: the {field} of tool {n} must be a JSON Schema object with \"type\": \"object\"."),
            Self::BadField(n, field @ ("annotations" | "_meta")) => format!("The tool list was refused: the {field} of tool {n} must be an object."),
            Self::BadField(n, "execution") => format!("The tool list was refused: the execution of tool {n} must be an object whose taskSupport is \"forbidden\", \"optional\" or \"required\"."),
            Self::BadField(n, field) => format!("The tool list was refused: the {field} of tool {n} must be text of at most {} characters.", if *field == "title" { MAX_TOOL_TITLE_CHARS } else { MAX_TOOL_DESCRIPTION_CHARS }),
            Self::ToolTooLarge(n) => format!("The tool list was refused: tool {n} takes over the {MAX_TOOL_BYTES} bytes one tool may."),
        }
    }
}

impl RelayMessage {
    /// This message as the JSON text sent on the socket.
    #[must_use]
    pub fn to_text(&self) -> String {
        // What the codec writes is UTF-8: strings as they are, escapes in ASCII.
        String::from_utf8(crate::fields::Encode::to_json(self)).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::Encode;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::json;

    /// A message as the codec writes it.
    fn text(m: &impl Encode) -> String {
        String::from_utf8(m.to_json()).unwrap()
    }

    #[test]
    fn the_consent_names_what_the_person_presses_and_types() {
        assert!(consent::LINK_OPENED.contains("Show who asks"));
        assert!(consent::NOT_THIS_BROWSER.contains("whole code"));
        assert!(consent::LOOKALIKE.contains("{app}"));
        assert!(consent::CLAIMS.contains("{app}") && consent::CLAIMS.contains("{domain}"));
        for kind in [
            consent::warning::LOOKS_LIKE,
            consent::warning::CLAIMS,
            consent::warning::MIXED_SCRIPTS,
            consent::warning::NOT_LATIN,
        ] {
            assert!(consent::warning::sentence(kind).is_some_and(|s| s.ends_with('.')), "{kind}");
        }
        assert_eq!(consent::warning::sentence("other"), None);
    }

    #[test]
    fn a_code_is_sent_typed_or_as_the_links_reference_never_both() {
        let read = |text: &str| TabMessage::parse(text);
        assert_eq!(
            read(r#"{"type":"approve","code":"ABCDE-12345"}"#),
            Ok(TabMessage::Approve { said: CodeSaid::Code("ABCDE-12345".into()), proof: None })
        );
        assert_eq!(
            read(r#"{"type":"describe","link":"ABCDEFGH0123456789"}"#),
            Ok(TabMessage::Describe { said: CodeSaid::Link("ABCDEFGH0123456789".into()) })
        );
        assert!(read(r#"{"type":"approve","code":"A","link":"B"}"#).is_err(), "not both");
        assert!(read(r#"{"type":"deny"}"#).is_err(), "nor neither");
        let m = TabMessage::Deny { said: CodeSaid::Link("L".into()) };
        assert_eq!(read(&text(&m)), Ok(m), "written as read");
    }

    #[test]
    fn tab_messages_read_as_the_tab_writes_them() {
        let hello = TabMessage::parse(
            r#"{"type":"hello","protocol":3,"key":"k","signature":"abc","bundle":"d"}"#,
        )
        .unwrap();
        assert_eq!(
            hello,
            TabMessage::Hello {
                protocol: 3,
                key: "k".into(),
                signature: "abc".into(),
                bundle: "d".into()
            }
        );
        assert_eq!(
            TabMessage::parse(r#"{"type":"hello","protocol":1,"secret":"abc"}"#),
            Ok(TabMessage::Hello {
                protocol: 1,
                key: String::new(),
                signature: String::new(),
                bundle: String::new()
            }),
            "a hello of another version reads as one (its page is told to reload)"
        );
        let asking = TabMessage::parse(r#"{"type":"asking","id":3,"sentence":"Delete 2 items?"}"#);
        assert_eq!(
            asking.unwrap(),
            TabMessage::Asking { id: 3, sentence: "Delete 2 items?".into(), app_may_allow: false }
        );
        assert_eq!(TabMessage::parse(r#"{"type":"step"}"#).unwrap(), TabMessage::Step);
        assert_eq!(
            TabMessage::parse(r#"{"type":"connections"}"#).unwrap(),
            TabMessage::Connections
        );
        assert_eq!(
            TabMessage::parse(r#"{"type":"forget","id":"g1"}"#).unwrap(),
            TabMessage::Forget { id: "g1".into() }
        );
        assert_eq!(
            TabMessage::parse(r#"{"type":"stop","connection":"g1"}"#).unwrap(),
            TabMessage::Stop { connection: "g1".into() }
        );
        assert_eq!(
            TabMessage::parse(r#"{"type":"go_on","connection":"g1"}"#).unwrap(),
            TabMessage::GoOn { connection: "g1".into() }
        );
        assert!(TabMessage::parse(r#"{"type":"stop"}"#).is_err(), "a stop names its connection");
        let done = TabMessage::parse(r#"{"type":"result","id":7,"data":{"n":1}}"#).unwrap();
        assert_eq!(
            done,
            TabMessage::Result {
                id: 7,
                outcome: Outcome::Done {
                    data: JsonText::of(&json!({"n":1})),
                    image: None,
                    audio: None,
                    resource: None,
                    structured: false,
                }
            }
        );
        let failed = TabMessage::parse(r#"{"type":"result","id":8,"error":"No."}"#).unwrap();
        assert_eq!(
            failed,
            TabMessage::Result { id: 8, outcome: Outcome::Failed { error: "No.".into() } }
        );
        assert!(TabMessage::parse(r#"{"type":"launch"}"#).is_err());
        assert!(TabMessage::parse(r#"{"type":"result","id":8}"#).is_err());
        assert!(TabMessage::parse(r#"{"type":"result","id":8,"error":3}"#).is_err());
        assert!(TabMessage::parse(r#"{"type":"hello"}"#).is_err(), "a hello states its version");
        let image = r#"{"type":"result","id":9,"data":1,"image":{"data":"AA","mimeType":"image/png","width":1,"height":1}}"#;
        assert!(matches!(
            TabMessage::parse(image),
            Ok(TabMessage::Result { outcome: Outcome::Done { image: Some(_), .. }, .. })
        ));
        assert!(TabMessage::parse(r#"{"type":"result","id":-1,"data":1}"#).is_err());
        let asks = TabMessage::parse(
            r#"{"type":"result","id":3,"input_required":{"q":{"method":"elicitation/create","params":{}}},"state":{"n":1}}"#,
        );
        assert!(matches!(
            asks,
            Ok(TabMessage::Result { outcome: Outcome::InputRequired { state: Some(_), .. }, .. })
        ));
        // Written as it was read (the pairing hands it to the Worker this way).
        if let Ok(TabMessage::Result { outcome, .. }) = asks {
            let back = crate::from_json::<Outcome>(&outcome.to_json()).unwrap();
            assert_eq!(back, outcome);
        }
        for bad in [r#"{}"#, r#"{"q":{"method":"tools/call"}}"#, r#"[1]"#] {
            let text = alloc::format!(r#"{{"type":"result","id":3,"input_required":{bad}}}"#);
            assert!(TabMessage::parse(&text).is_err(), "{bad}");
        }
        assert!(TabMessage::parse("[]").is_err());
    }

    fn tool(name: &str, setting: &str) -> Value {
        json!({"name": name, "title": "T", "description": "D", "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": true}, "_meta": {"x/y": 1}, "icons": [], "setting": setting})
    }

    fn tools_message(tools: &Value) -> Result<TabMessage, NotProtocol> {
        TabMessage::parse(&json!({"type": "tools", "tools": tools}).to_string())
    }

    #[test]
    fn a_tool_list_reads_with_its_settings_and_writes_back_the_same() {
        let m = tools_message(&json!([
            tool("b.x", "asks"),
            tool("a-1", "runs"),
            tool("c_", "refused")
        ]))
        .unwrap();
        let TabMessage::Tools { tools } = m else { panic!("not a list: {m:?}") };
        let names: Vec<&str> = tools.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["b.x", "a-1", "c_"], "the tab's order is kept");
        assert_eq!(tools.tool("c_").unwrap().setting, Setting::Refused);
        let def = &tools.tool("a-1").unwrap().definition;
        assert!(def.get("icons").is_none(), "keys beyond the carried ones are dropped");
        assert_eq!(def["_meta"], json!({"x/y": 1}));
        assert_eq!(ToolList::read(&tools.to_value()).unwrap(), tools);
        let written = text(&TabMessage::Tools { tools: tools.clone() });
        assert_eq!(TabMessage::parse(&written).unwrap(), TabMessage::Tools { tools });
        assert_eq!(
            TabMessage::parse(r#"{"type":"view","dataset":"Survey 4"}"#).unwrap(),
            TabMessage::View { dataset: "Survey 4".into() }
        );
        assert!(TabMessage::parse(r#"{"type":"view"}"#).is_err());
    }

    #[test]
    fn a_setting_is_read_and_written_as_its_word() {
        let settings = [Setting::Asks, Setting::Runs, Setting::Refused];
        for ((word, _), setting) in SETTINGS.iter().zip(settings) {
            let list = ToolList::read(&json!([tool("a", word)])).unwrap();
            assert_eq!(list.tool("a").unwrap().setting, setting);
            assert_eq!(list.to_value()[0]["setting"], json!(word));
        }
    }

    #[test]
    fn tool_names_follow_the_rule() {
        for ok in ["a", "test_simple_text", "admin.tools.list", "A-9", &"x".repeat(64)] {
            assert!(valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "a b", "a/b", "é", "a<b", &"x".repeat(65)] {
            assert!(!valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_bad_tool_list_is_refused_with_its_cause() {
        let bad = |tools: Value| match tools_message(&tools) {
            Ok(TabMessage::BadTools { why }) => why,
            other => panic!("not refused: {other:?}"),
        };
        assert_eq!(bad(json!({})), ToolsError::NotAList);
        assert_eq!(bad(json!([1])), ToolsError::NotAnObject(0));
        assert_eq!(bad(json!([tool("a", "runs"), tool("a b", "runs")])), ToolsError::BadName(1));
        assert_eq!(bad(json!([tool("status", "runs")])), ToolsError::Reserved("status".into()));
        assert_eq!(
            bad(json!([tool("a", "runs"), tool("a", "asks")])),
            ToolsError::Duplicate("a".into())
        );
        assert_eq!(
            bad(json!([tool("a", "sometimes")])),
            ToolsError::BadField("a".into(), "setting")
        );
        let mut t = tool("a", "runs");
        t["inputSchema"] = json!({"type": "string"});
        assert_eq!(bad(json!([t])), ToolsError::BadField("a".into(), "inputSchema"));
        let mut t = tool("a", "runs");
        t["description"] = json!("d".repeat(MAX_TOOL_DESCRIPTION_CHARS + 1));
        assert_eq!(bad(json!([t])), ToolsError::BadField("a".into(), "description"));
        let mut t = tool("a", "runs");
        t["outputSchema"] = json!(3);
        assert_eq!(bad(json!([t])), ToolsError::BadField("a".into(), "outputSchema"));
        let mut t = tool("a", "runs");
        t["inputSchema"]["description"] = json!("s".repeat(MAX_TOOL_BYTES));
        assert_eq!(bad(json!([t])), ToolsError::ToolTooLarge("a".into()));
        let many: Vec<Value> = (0..=MAX_TOOLS).map(|i| tool(&format!("t{i}"), "runs")).collect();
        assert_eq!(bad(Value::Array(many)), ToolsError::TooMany(MAX_TOOLS + 1));
        let big: Vec<Value> = (0..MAX_TOOLS)
            .map(|i| {
                let mut t = tool(&format!("t{i}"), "runs");
                t["description"] = json!("d".repeat(MAX_TOOL_DESCRIPTION_CHARS));
                t["_meta"] = json!({"pad": "p".repeat(MAX_TOOL_BYTES / 2)});
                t
            })
            .collect();
        assert!(matches!(bad(Value::Array(big)), ToolsError::TooLarge(_)));
        for why in [
            ToolsError::NotAList,
            ToolsError::BadField("a".into(), "title"),
            ToolsError::BadName(2),
        ] {
            let s = why.sentence();
            assert!(s.starts_with("The tool list was refused") && s.ends_with('.'), "{s}");
        }
        assert!(TabMessage::parse(r#"{"type":"tools"}"#)
            .is_ok_and(|m| matches!(m, TabMessage::BadTools { .. })));
    }

    #[test]
    fn relay_messages_carry_their_type() {
        let m = RelayMessage::Welcome {
            pairing: "p".into(),
            protocol: PROTOCOL_VERSION,
            presence: None,
        };
        let v: Value = serde_json::from_str(&m.to_text()).unwrap();
        assert_eq!(v, json!({"type":"welcome","pairing":"p","protocol":3}));
        let m = RelayMessage::Challenge { challenge: "c".into() };
        let v: Value = serde_json::from_str(&m.to_text()).unwrap();
        assert_eq!(v, json!({"type":"challenge","challenge":"c"}));
    }

    #[test]
    fn the_proof_text_names_its_purpose_the_relay_and_the_challenge() {
        // The same vector is checked against the tab's copy in tests/js/proof_text.test.mjs.
        assert_eq!(
            proof_text("https://relay.example", "AAEC"),
            "tabrelay-tab-proof/v1\nhttps://relay.example\nAAEC"
        );
        assert_ne!(proof_text("https://a.example", "c"), proof_text("https://b.example", "c"));
        assert_ne!(proof_text("https://a.example", "c"), proof_text("https://a.example", "d"));
    }
    /// Every message of the relay, once or twice.
    pub(crate) fn relay_messages() -> Vec<RelayMessage> {
        let connection = Connection {
            id: "g1".into(),
            kind: "connector".into(),
            client: "Claude".into(),
            host: "claude.ai".into(),
            verified: None,
        };
        let info = ConnectionInfo {
            id: "g1".into(),
            client: "Claude".into(),
            host: "claude.ai".into(),
            created_ms: 1,
            used_ms: 2,
            place: None,
            stopped: false,
        };
        vec![
            RelayMessage::Challenge { challenge: "c".into() },
            RelayMessage::Welcome {
                pairing: "p".into(),
                protocol: PROTOCOL_VERSION,
                presence: None,
            },
            RelayMessage::Call {
                id: 1,
                tool_call: ToolCall {
                    tool: "add".into(),
                    args: json!({"b": [1, 2.5, null], "a": "\u{1}é\u{2028}"}),
                    agent: "Claude".into(),
                    connection: connection.clone(),
                },
                turn: 3,
                input: None,
            },
            RelayMessage::Call {
                // The largest id JavaScript reads exactly (a tab's ids are far below it).
                id: 9_007_199_254_740_991,
                tool_call: ToolCall {
                    tool: "add".into(),
                    args: json!({}),
                    agent: "A \"quoted\"\\ \t agent".into(),
                    connection: Connection { verified: Some("claude.ai".into()), ..connection },
                },
                turn: 0,
                input: Some(json!({"responses": {"q": {"action": "accept"}}})),
            },
            RelayMessage::Described {
                code: "ABCDE12345".into(),
                client: "Claude".into(),
                host: "claude.ai".into(),
                verified: None,
                age_ms: 5,
                place: None,
                lookalike: None,
                connections: vec![],
                name_warning: None,
            },
            RelayMessage::Described {
                code: "ABCDE12345".into(),
                client: "Claude".into(),
                host: "claude.ai".into(),
                verified: Some("claude.ai".into()),
                age_ms: 5,
                place: Some("Lisbon, PT".into()),
                lookalike: Some("Claude".into()),
                connections: vec![
                    info.clone(),
                    ConnectionInfo {
                        place: Some("Porto, PT".into()),
                        stopped: true,
                        ..info.clone()
                    },
                ],
                name_warning: Some("looks_like".into()),
            },
            RelayMessage::Confirm { code: "L".into(), client: "C".into(), ticket: "t".into() },
            RelayMessage::Denied { code: "ABCDE12345".into() },
            RelayMessage::Approved { code: "ABCDE12345".into(), client: "C".into() },
            RelayMessage::Connections { list: vec![] },
            RelayMessage::Connections { list: vec![info] },
            RelayMessage::Cancel { id: 7 },
            RelayMessage::Elicited { id: 7, choice: "once".into() },
            RelayMessage::Forgotten { connection: "g1".into() },
            RelayMessage::Stopped { connection: "g1".into(), stopped: true },
            RelayMessage::Stopped { connection: "g1".into(), stopped: false },
            RelayMessage::Refused { code: "X".into(), sentence: "No\u{7f}\u{1f}.".into() },
            RelayMessage::ToolsRefused { sentence: "Bad.".into() },
            RelayMessage::Welcome {
                pairing: "p".into(),
                protocol: PROTOCOL_VERSION,
                presence: Some(PresenceKey { credential: "c".into(), key: "k".into() }),
            },
            RelayMessage::Presence {
                held: PresenceKey { credential: "c".into(), key: "k".into() },
            },
            RelayMessage::PresenceRefused { sentence: "One is held.".into() },
        ]
    }

    /// Every message a tab writes (but a hello, whose empty fields serde wrote).
    pub(crate) fn tab_messages() -> Vec<TabMessage> {
        let image = Image { data: "AA".into(), mime_type: "image/png".into(), width: 1, height: 2 };
        let audio = Audio { data: "BB".into(), mime_type: "audio/wav".into() };
        let embedded =
            Embedded { uri: "u".into(), mime_type: "text/plain".into(), text: "t".into() };
        let mut requests = Map::new();
        requests.insert("q".into(), json!({"method": "roots/list"}));
        vec![
            TabMessage::Hello {
                protocol: 3,
                key: "k".into(),
                signature: "s".into(),
                bundle: "d".into(),
            },
            TabMessage::Asking { id: 3, sentence: "Delete?".into(), app_may_allow: false },
            TabMessage::Asking { id: 4, sentence: "Add?".into(), app_may_allow: true },
            TabMessage::Answered { id: 3 },
            TabMessage::Step,
            TabMessage::Connections,
            TabMessage::Forget { id: "g1".into() },
            TabMessage::Stop { connection: "g1".into() },
            TabMessage::GoOn { connection: "g1".into() },
            TabMessage::Describe { said: CodeSaid::Code("ABCDE-12345".into()) },
            TabMessage::Approve { said: CodeSaid::Link("L".into()), proof: None },
            TabMessage::Deny { said: CodeSaid::Code("X".into()) },
            TabMessage::Focus { focused: true },
            TabMessage::View { dataset: "Survey 4".into() },
            TabMessage::Result { id: 1, outcome: Outcome::Failed { error: "No.".into() } },
            TabMessage::Result {
                id: 2,
                outcome: Outcome::Done {
                    data: JsonText::of(&json!({"n": 1})),
                    image: None,
                    audio: None,
                    resource: None,
                    structured: false,
                },
            },
            TabMessage::Result {
                id: 2,
                outcome: Outcome::Done {
                    data: JsonText::of(&json!(null)),
                    image: Some(image),
                    audio: Some(audio),
                    resource: Some(embedded),
                    structured: false,
                },
            },
            TabMessage::Result {
                id: 4,
                outcome: Outcome::InputRequired { requests: requests.clone(), state: None },
            },
            TabMessage::Result {
                id: 4,
                outcome: Outcome::InputRequired { requests, state: Some(json!({"round": 1})) },
            },
            TabMessage::Approve {
                said: CodeSaid::Code("ABCDE-12345".into()),
                proof: Some(Assertion {
                    credential: "c".into(),
                    client_data: "d".into(),
                    authenticator: "a".into(),
                    signature: "s".into(),
                }),
            },
            TabMessage::Presence {
                credential: "c".into(),
                key: "k".into(),
                client_data: "d".into(),
                authenticator: "a".into(),
            },
            TabMessage::Tools {
                tools: ToolList::read(&json!([
                    {"name": "add", "description": "Adds.", "inputSchema": {"type": "object"},
                     "annotations": {"readOnlyHint": true}, "setting": "asks"},
                    {"name": "wipe", "inputSchema": {"type": "object"}, "setting": "refused"}
                ]))
                .unwrap(),
            },
            TabMessage::Result {
                id: 5,
                outcome: Outcome::Done {
                    data: JsonText::of(&json!({"sum": 3})),
                    image: None,
                    audio: None,
                    resource: None,
                    structured: true,
                },
            },
        ]
    }

    /// The bytes on the socket (as the derived `Serialize` wrote them before the codec): each
    /// of [`relay_messages`] after `# relay`, then each of [`tab_messages`] after `# tab`, one
    /// a line. A change to the tab protocol's bytes fails here; tests/js/wire_golden.test.mjs
    /// reads and writes the same lines with the tab's generated reader and writer.
    const GOLDEN: &str = include_str!("../../tests/data/wire/tab.txt");

    /// The golden lines of one side (`# relay` or `# tab`).
    fn golden(side: &str) -> Vec<&'static str> {
        let mut lines = GOLDEN.lines().skip_while(|l| *l != side).skip(1);
        let lines = lines.by_ref().take_while(|l| !l.starts_with('#'));
        lines.collect()
    }

    #[test]
    fn every_message_reads_back_and_is_written_as_before() {
        let relay: Vec<String> = relay_messages().iter().map(RelayMessage::to_text).collect();
        assert_eq!(relay, golden("# relay"));
        let tab: Vec<String> = tab_messages().iter().map(text).collect();
        assert_eq!(tab, golden("# tab"));
        for line in golden("# relay") {
            let m = crate::from_json::<RelayMessage>(line.as_bytes()).unwrap();
            assert_eq!(m.to_text(), line, "read and written again, the same");
        }
        for line in golden("# tab") {
            assert_eq!(text(&TabMessage::parse(line).unwrap()), line, "the same, read and written");
        }
        // Every message of either side is there.
        use crate::shapes::Tagged as _;
        let tag = |l: &&str| serde_json::from_str::<Value>(l).unwrap()["type"].clone();
        for (side, variants) in
            [("# relay", RelayMessage::variants()), ("# tab", TabMessage::variants())]
        {
            let tags: Vec<Value> = golden(side).iter().map(tag).collect();
            for (t, _) in variants {
                assert!(tags.contains(&json!(t)), "{side} has no {t} message");
            }
        }
        // An id beyond JavaScript's exact numbers still reads back on the relay's side.
        let far = RelayMessage::Cancel { id: u64::MAX };
        assert_eq!(crate::from_json::<RelayMessage>(far.to_text().as_bytes()), Some(far));
    }
}
