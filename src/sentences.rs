//! The relay's own sentences that agents and people read; each is written once, here.

// The tab-gone and no-tab sentences live in the bundle: the live check reads them too.
pub use tabrelay_bundle::agent::{AGENT_STOPPED, FORGOTTEN, NO_TAB, TAB_GONE};
/// The tab sent something that is not an answer.
pub const TAB_MALFORMED: &str =
    "The tab's answer could not be read; read the history before trying again.";
/// The pairing's Durable Object could not be reached.
pub const PAIRING_UNAVAILABLE: &str = "The relay could not reach this browser's tabs just now (it may be restarting); wait a moment, read the history, then try again.";
/// The waiting page's sealed request is too old, altered or not this relay's.
pub const SEAL_STALE: &str =
    "This waiting page is too old to use; start connecting again from the app.";
/// The waiting page's sealed request already made its connect code (a page posts it once).
pub const SEAL_USED: &str = "This waiting page already has its connect code; if it does not show it, start connecting again from the app.";
/// The sender asked for more connect codes than a person needs ([`crate::senders`]).
pub const TOO_MANY_CODES: &str = "Too many connect codes were asked for from this address just now; wait a minute, then reload this page.";
/// A request the per-sender limit could not count: it names no sender address, or the relay's
/// limit is not set up ([`crate::senders::Limit::Uncounted`]).
pub const SENDER_UNCOUNTED: &str =
    "This relay cannot count this request against a sender's limit; tell its owner.";
/// The sender fetched more client metadata documents than a person needs ([`crate::senders`]).
pub const TOO_MANY_DOCUMENTS: &str =
    "Too many requests from this address just now; wait a minute, then try again.";
/// The sender opened more tab sockets than a browser needs ([`crate::senders`]); a close
/// reason, so at most 123 bytes.
pub const TOO_MANY_SOCKETS: &str =
    "Too many tab connections came from this address just now; the tab tries again later.";
/// No free connect code could be drawn.
pub const CODE_NOT_MADE: &str =
    "The relay could not make a connect code just now; reload this page.";
/// A session-era request carried an `Mcp-Session-Id` the relay did not issue for this
/// connection (the client initializes again).
pub const SESSION_NOT_FOUND: &str =
    "Session not found: this session id is not one the relay gave this connection; initialize again.";
/// A tab's question went to the agent app, which gave no answer within the call's wait.
pub const QUESTIONS_UNANSWERED: &str = "The app asked a question in the agent's app and no answer came in time, so the step did not go on; call the tool again to be asked again.";
/// The connection already holds its share of listen streams (the pairing's bound is its
/// connections' shares: reached only while forgotten connections' streams end).
#[must_use]
pub fn too_many_listeners(limit: usize) -> String {
    format!("This connection already holds {limit} listen streams, the most the relay keeps for one connection; close one, then listen again.")
}

/// The connection (or, rarely, the pairing) holds as many unanswered questions as it may.
pub const TOO_MANY_QUESTIONS: &str = "This connection already has as many questions of the app waiting for its answers as the relay keeps for one connection; answer or cancel those first, then try again.";
/// A client's JSON-RPC response answers no question the relay asked this connection (or
/// one answered already, or too large).
pub const NOT_ASKED: &str = "This response answers no question the relay is waiting for on this connection (it may have been answered already, have waited too long, or be too large).";
/// The connection's access token is no good.
pub const TOKEN_INVALID: &str =
    "The access token is missing, expired, revoked or not for this relay; connect again.";

/// A request's body is larger than its endpoint reads (it was refused unread past `cap`).
#[must_use]
pub fn too_large(cap: usize) -> String {
    format!("The request is larger than the {cap} bytes allowed.")
}

/// The call waited its whole time without an answer.
#[must_use]
pub fn wait_over(seconds: u64) -> String {
    format!("The tab did not answer within {seconds} s, so whether the step was done is not known: read the history before trying again.")
}

/// The page was built for another version of the relay protocol or bundle.
pub const TAB_OUTDATED: &str =
    "This page was built for another version of the relay: reload it to connect.";

/// The pairing already carries as many calls as it may (of all its connections).
#[must_use]
pub fn too_many_calls(limit: usize) -> String {
    format!("The tab already has {limit} calls waiting; wait for some to finish, then try again.")
}

/// The connection already has its share of the pairing's calls in the tab (its tasks' calls
/// counted); the other connections still have theirs.
#[must_use]
pub fn too_many_calls_here(limit: usize) -> String {
    format!("This connection already has {limit} calls (its tasks' included) waiting in the tab, the most the relay carries for one connection; wait for some to finish or cancel some, then try again.")
}

/// The connection's calls in the tab would keep more bytes of request ids than its share.
#[must_use]
pub fn ids_too_long(kib: usize) -> String {
    format!("This call's JSON-RPC id, with this connection's other calls' ids, would pass {kib} KiB, the most the relay keeps for one connection; use a short id, then call again.")
}

/// The wait ran out while the person was still being asked (`card` is marked as data).
#[must_use]
pub fn still_asking(card: &str) -> String {
    format!("The person is being asked about this step in their tab ({card}) and has not answered yet; the question stays open there. Read the history once they have answered, before trying again; `status` says what came of it.")
}

/// `status`: a call of this connection still open in the tab, the person being asked.
#[must_use]
pub fn left_asking(tool: &str, card: &str) -> String {
    format!(
        "Your call to {tool} still waits for the person, who is being asked in their tab ({card})."
    )
}

/// `status`: a call of this connection the person allowed, still running.
#[must_use]
pub fn left_running(tool: &str) -> String {
    format!("Your call to {tool}: the person answered and it is running in their tab.")
}

/// `status`: what came of a call of this connection nobody waited for.
#[must_use]
pub fn left_done(tool: &str, said: &str) -> String {
    format!("Your earlier call to {tool}, after the relay stopped waiting: {said}")
}

/// What came of it: it ran; its answer follows (data).
#[must_use]
pub fn left_ran(data: &str) -> String {
    format!("it ran; its answer: {data}")
}

/// What came of it: it did not run or failed; the tab's sentence follows (data).
#[must_use]
pub fn left_failed(error: &str) -> String {
    format!("it did not run or failed; the tab said {error}")
}

/// What came of it: it needed the agent app's input, which nobody was there to give.
pub const LEFT_NEEDS_INPUT: &str =
    "it needed input from your app, which was no longer waiting; call the tool again.";

/// What came of it: the tab closed first.
pub const LEFT_TAB_CLOSED: &str =
    "the tab closed before it finished; whether it ran is not known, so read the history.";

/// The agent cancelled the call before the tab answered.
pub const CANCELLED: &str =
    "The call was cancelled before the tab answered; the tab was told to drop it.";

/// Progress: the person is being asked about the call; `card` is what their card says, in the
/// tab's own words (marked as data).
#[must_use]
pub fn person_asked(card: &str) -> String {
    format!("The person is being asked about this step in their tab; the card says {card}.")
}

/// Progress: the person allowed the step asked about; it runs now. (A tab says nothing before a
/// Deny's result: the result itself says the person declined.)
pub const PERSON_ANSWERED: &str = "The person allowed this step; it runs in their tab now.";

/// `logging/setLevel` above `info`: the relay keeps no state per session to hold it.
pub const LOG_LEVEL_NOT_HELD: &str = "This relay keeps no state per session, so it cannot hold a log level above info: every log message it sends (what the tab says while it works) is at info. Set debug or info.";

/// `logging/setLevel` without one of the eight levels.
pub const LOG_LEVEL_UNKNOWN: &str =
    "The level must be one of debug, info, notice, warning, error, critical, alert or emergency.";

/// Progress while the tab works on a call and nothing new happened.
#[must_use]
pub fn still_working(seconds: u64) -> String {
    format!("The tab is still working on this step ({seconds} s so far); its answer comes here.")
}

/// A refresh token that is not (or no longer) valid.
pub const REFRESH_REFUSED: &str =
    "The refresh token is not valid (it was used, revoked or forgotten in the tab); connect again.";
/// An old refresh token was used again: the whole connection was revoked.
pub const REFRESH_REUSED: &str =
    "That refresh token was already used, so the connection was revoked to be safe; connect again.";

// The person's presence is said in the bundle, beside the tab's own sentences of it.
pub use tabrelay_bundle::words::presence::{
    HELD as PRESENCE_HELD, NOT_KEPT as PRESENCE_NOT_KEPT, NOT_PROVEN as PRESENCE_NOT_PROVEN,
};

/// The pairing got too many connect codes wrong in the last minute.
pub const TOO_MANY_WRONG_CODES: &str = "Too many wrong connect codes were tried in this browser in the last minute; wait a minute, then check the code against the waiting page.";
/// The tab refuses to approve a code: the pairing holds the most connections it keeps.
pub const TOO_MANY_CONNECTIONS: &str = "This tab already has the most connections it keeps, so nothing was approved: forget one you no longer use under Connections, then approve the code again.";
/// The token endpoint's refusal when the pairing filled up between the approval and the
/// redemption.
pub const GRANT_REFUSED_FULL: &str = "The person's tab holds the most connections it keeps; they must forget one in the tab, then connect again.";

/// A web page elsewhere tried to reach the MCP endpoint through the person's browser.
pub const ORIGIN_REFUSED: &str =
    "Requests from this web page's origin are refused (the relay serves its own origin and the app's).";

/// What a tool's description says when the person's settings ask them before each call.
pub const SETTING_ASKS: &str =
    "The person's settings: each call asks them in their tab first, and they may decline.";
/// What a tool's description says when the person's settings let calls run without asking.
pub const SETTING_RUNS: &str = "The person's settings: calls run in their tab without asking.";

/// The `status` tool's description in `tools/list`: a macro that expands to a literal, so the
/// tool's JSON text takes it in with `concat!` (no quote or backslash: it sits in a JSON string).
macro_rules! status_description {
    () => {
        "Whether a tab of the app is open and connected in the person's browser, how many, which one gets the calls (the one focused last), the dataset it shows, and which tools the person's settings refuse, then what came of your calls the relay stopped waiting for while the person was being asked. Answered by the relay without asking the tab; use it when a call says no tab is open, to check which dataset the calls will act on, or to learn what the person decided after a call said they were still being asked."
    };
}
pub(crate) use status_description;

/// What the `status` tool says when no tab is connected.
pub const STATUS_NO_TAB: &str = "No tab of the app is connected in the browser this connection was approved from, so every tool but status fails until the person opens the app there.";

/// What the `status` tool says to an agent the person stopped in their tab, until they let it go on.
pub const STATUS_STOPPED: &str = "The person stopped you in their tab: your calls are refused until they press Let it go on there. Stop, and ask them in plain words whether to continue.";

/// What the `status` tool says about connected tabs: `dataset` and each name in `refused`
/// (joined with commas) are already marked as data (they come from the page).
#[must_use]
pub fn status(
    tabs: usize,
    focused: usize,
    dataset: Option<&str>,
    stated: bool,
    refused: &str,
) -> String {
    let connected = if tabs == 1 {
        "1 tab of the app is connected".to_owned()
    } else {
        format!("{tabs} tabs of the app are connected")
    };
    let shows = dataset.map_or_else(
        || "which has not said what it shows".to_owned(),
        |d| format!("which shows the dataset {d}"),
    );
    let list = if !stated {
        "Its tool list is the app's bundled one.".to_owned()
    } else if refused.is_empty() {
        "Its tool list is its own, and the person's settings refuse none of its tools.".to_owned()
    } else {
        format!(
            "Its tool list is its own; the person's settings refuse {} (left out of the tool list): ask them to allow a tool in their tab if it is needed.",
            refused
        )
    };
    format!(
        "{connected}; calls go to tab {focused} of {tabs} (the one focused last), {shows}. {list}"
    )
}

/// A tool call names no tool in the list agents see.
#[must_use]
pub fn no_such_tool(quoted_name: &str) -> String {
    format!("There is no tool named {quoted_name}; tools/list names the tools.")
}

/// A 2026-07-28 tool call's header that mirrors an argument (the tool's `x-mcp-header`) does not
/// agree with the body.
#[must_use]
pub fn param_header_mismatch(quoted_header: &str) -> String {
    format!(
        "The {quoted_header} header must mirror the argument the tool names for it: sent when \
         the argument is, with its value (plain, or as =?base64?…?=), and left out when it is not."
    )
}

/// A route asked with a method it does not take (`methods` as in its `Allow` header).
#[must_use]
pub fn method_not_allowed(methods: &str) -> String {
    format!("This address takes {methods} only.")
}

/// An authorization code was redeemed twice: the connection it made is revoked.
pub const CODE_REPLAYED: &str = "The authorization code was used more than once, so the connection it made was revoked to be safe; connect again.";

/// A tab asked the client for input it did not declare it can give (`missing`: the capabilities,
/// as `requiredCapabilities` names them).
#[must_use]
pub fn missing_capability(missing: &serde_json::Map<String, serde_json::Value>) -> String {
    let mut names = String::new();
    for name in missing.keys() {
        if !names.is_empty() {
            names.push_str(", ");
        }
        names.push_str(name);
    }
    format!(
        "This call needs the client capability {names} to go on; the client did not declare it."
    )
}

/// A call that may become a task would take its connection's tasks past their share: in
/// number, or in bytes with its arguments.
#[must_use]
pub fn too_many_tasks(limit: usize, kib: usize) -> String {
    format!("This call would take this connection's tasks past {limit} tasks or {kib} KiB (their arguments included), the most the relay keeps for one connection; wait for a task to finish or cancel one, or call with smaller arguments, then call again.")
}

/// A task the client named is not this connection's (or it expired).
pub const TASK_UNKNOWN: &str = "No such task for this connection (it may have expired).";

/// A tool that runs only as a task, called by a client that takes none.
pub const TASK_REQUIRED: &str = "This tool runs only as a task (io.modelcontextprotocol/tasks), which this client did not declare it takes.";

/// A task's result was asked for after the client cancelled it.
pub const TASK_CANCELLED: &str = "The task was cancelled, so it has no result.";

/// `tasks/result` waited as long as a call may and the task still works.
pub const TASK_STILL_WORKING: &str =
    "The task is still working; read where it stands with tasks/get, then ask for its result again.";

/// A task's result would take its connection's tasks past what they may keep (`kib` KiB).
#[must_use]
pub fn task_results_full(kib: usize) -> String {
    format!("This connection's tasks already keep close to {kib} KiB of results, the most the relay keeps for one connection, so this one's was not kept; fetch what you need and let the older tasks expire (or cancel those still running), then call again.")
}

/// A client's answers to a task's questions past what the relay keeps for its connection.
#[must_use]
pub fn task_answers_full(kib: usize) -> String {
    format!("These answers would take this connection's tasks past {kib} KiB, the most the relay keeps for one connection, so they were not taken; answer with less, or let the older tasks expire (or cancel those still running), then answer again.")
}

/// A tab's answer too large to keep as a task's result.
pub const TASK_RESULT_TOO_LARGE: &str = "The tab's answer was too large to keep as a task's result; ask for less (a smaller picture, fewer rows), or call again from a client that takes no tasks.";

// What an MCP client reads about the form of its request (JSON-RPC and MCP errors).

/// The body does not parse as JSON.
pub const NOT_JSON: &str = "The body is not valid JSON.";
/// A JSON array sent where one message goes (the revision takes no batches).
pub const NO_BATCHES: &str = "Batches are not supported: send one JSON-RPC message per request.";
/// The body is JSON but not an object.
pub const NOT_ONE_MESSAGE: &str = "The body must be one JSON-RPC message (a JSON object).";
/// An `id` neither a string nor an integer.
pub const BAD_ID: &str = "The id must be a string or an integer.";
/// No `"jsonrpc": "2.0"`.
pub const NOT_JSONRPC_2: &str = "The message must say \"jsonrpc\": \"2.0\".";
/// A `method` that is not a string.
pub const METHOD_NOT_STRING: &str = "The method must be a string.";
/// A message with neither a method nor a result.
pub const NO_METHOD: &str = "The message has no method.";
/// `params` that is not an object.
pub const PARAMS_NOT_OBJECT: &str = "The params must be an object.";
/// A batch under a revision that has none (`quoted_version` is marked as data).
#[must_use]
pub fn batch_not_in_revision(quoted_version: &str) -> String {
    format!("MCP revision {quoted_version} takes one JSON-RPC message per request (batches ended with 2025-06-18).")
}
/// A batch empty or over `max` messages (`len`: how many it has).
#[must_use]
pub fn batch_size(max: usize, len: usize) -> String {
    format!("A batch holds 1 to {max} messages; this one has {len}.")
}
/// `resources/read` of a resource the relay has not (`quoted_uri` is marked as data).
#[must_use]
pub fn no_such_resource(quoted_uri: &str) -> String {
    format!("There is no resource {quoted_uri}.")
}
/// `resources/read` without `params.uri`.
pub const RESOURCE_URI_MISSING: &str = "resources/read needs params.uri.";
/// A method the relay does not answer (`quoted_method` is marked as data).
#[must_use]
pub fn no_such_method(quoted_method: &str) -> String {
    format!("This server has no method {quoted_method}.")
}
/// A revision the relay does not speak (`quoted_version` is marked as data).
#[must_use]
pub fn unsupported_revision(quoted_version: &str) -> String {
    format!("This server does not speak MCP revision {quoted_version}.")
}
/// A 2026-07-28 request (its revision in `_meta`) without the header.
pub const VERSION_HEADER_MISSING: &str = "The MCP-Protocol-Version header is required.";
/// A 2026-07-28 request without `params._meta`.
pub const META_MISSING: &str =
    "A 2026-07-28 request needs params._meta with its revision and the client's capabilities.";
/// A 2026-07-28 request whose `_meta` states no revision.
pub const META_VERSION_MISSING: &str =
    "params._meta needs \"io.modelcontextprotocol/protocolVersion\".";
/// A 2026-07-28 request whose `_meta` states no capabilities.
pub const META_CAPABILITIES_MISSING: &str =
    "params._meta needs \"io.modelcontextprotocol/clientCapabilities\" (an object).";
/// The header's revision and `_meta`'s differ (`quoted_meta` is marked as data).
#[must_use]
pub fn version_mismatch(header: &str, quoted_meta: &str) -> String {
    format!("The MCP-Protocol-Version header says {header} but params._meta says {quoted_meta}.")
}
/// The `Mcp-Method` header and the body's method differ (both marked as data).
#[must_use]
pub fn method_mismatch(quoted_header: &str, quoted_body: &str) -> String {
    format!("The Mcp-Method header says {quoted_header} but the body's method is {quoted_body}.")
}
/// A 2026-07-28 request without the `Mcp-Method` header.
pub const METHOD_HEADER_MISSING: &str = "The Mcp-Method header is required.";
/// A method that names its target in `params.{field}` without it.
#[must_use]
pub fn name_param_missing(method: &str, field: &str) -> String {
    format!("{method} needs params.{field}.")
}
/// The `Mcp-Name` header differs from `params.{field}`.
#[must_use]
pub fn name_mismatch(field: &str) -> String {
    format!("The Mcp-Name header does not match params.{field}.")
}
/// A method that names its target without the `Mcp-Name` header.
#[must_use]
pub fn name_header_missing(method: &str) -> String {
    format!("{method} needs the Mcp-Name header.")
}
/// The tab's state for a call, sealed, is over the bound a client is handed.
pub const STATE_TOO_LARGE: &str =
    "The app's state for this call is too large to hand to the client.";
/// A `requestState` that does not verify, is another call's, or expired.
pub const STATE_REFUSED: &str = "The requestState is not one this relay gave for this call, or it expired: call the tool again without it.";
/// A `requestState` that came back a second time.
pub const STATE_REPLAYED: &str =
    "This requestState was already used; call the tool again without it.";
/// `inputResponses` that is not an object.
pub const INPUT_RESPONSES_NOT_OBJECT: &str = "params.inputResponses must be an object.";
/// A `requestState` that is not a string.
pub const STATE_NOT_STRING: &str = "params.requestState must be the string the relay gave.";
/// `tools/call` without `params.name`.
pub const TOOL_NAME_MISSING: &str = "tools/call needs params.name, the tool's name.";
/// `params.arguments` that is not an object.
pub const ARGUMENTS_NOT_OBJECT: &str = "params.arguments must be an object.";
/// `tasks/update` without its answers.
pub const TASK_UPDATE_NEEDS_RESPONSES: &str =
    "tasks/update needs params.inputResponses, an object.";
/// A tasks method from a client that did not declare the tasks extension (`extension`: its
/// name).
#[must_use]
pub fn tasks_not_declared(method: &str, extension: &str) -> String {
    format!("{method} is for clients that declare the tasks extension ({extension}).")
}
/// The view resource's description in `resources/list`.
pub const VIEW_DESCRIPTION: &str = "What the app's tab shows, with Refresh and Open in the app.";

/// What the person reads in the view card (MCP Apps) an agent app shows beside the `status`
/// tool's answer ([`crate::mcp::view`]). Macros that expand to literals, as in [`page`]. But for
/// `waiting!` (HTML text), each goes into the card's script as a JavaScript string in single
/// quotes, so holds no quote or backslash.
pub mod card {
    /// Before the tool's answer arrives.
    macro_rules! waiting {
        () => {
            "Waiting for the tool's answer…"
        };
    }
    /// The tool's answer holds no text.
    macro_rules! nothing_to_show {
        () => {
            "The tool answered nothing to show."
        };
    }
    /// After Refresh, until the tab answers.
    macro_rules! asking {
        () => {
            "Asking the tab…"
        };
    }
    /// Refresh failed.
    macro_rules! refresh_failed {
        () => {
            "The refresh did not reach the relay; try again."
        };
    }
    pub(crate) use {asking, nothing_to_show, refresh_failed, waiting};
}

/// What an OAuth client reads: the `error_description` of an OAuth error (at /register,
/// /authorize, /token and /revoke), or the page /authorize shows the person instead.
pub mod oauth {
    /// /authorize: the client id is a signed id this relay did not issue.
    pub const CLIENT_NOT_REGISTERED: &str =
        "The app asking is not registered with this relay; start connecting again from the app.";
    /// /authorize: no `client_id`.
    pub const NO_CLIENT: &str = "The request names no client.";
    /// /authorize: a parameter sent twice.
    pub const PARAM_TWICE: &str =
        "The request names a parameter twice; start connecting again from the app.";
    /// /authorize: a parameter over its length bound.
    pub const PARAM_TOO_LONG: &str =
        "A parameter of the request is too long; start connecting again from the app.";
    /// /authorize: a `redirect_uri` the client did not register (said on the page, never
    /// redirected to).
    pub const REDIRECT_NOT_REGISTERED: &str = "The address to return to is not one the app registered, so the relay will not send you there.";
    /// /authorize: no `redirect_uri`, and the client registered more than one.
    pub const NO_REDIRECT: &str = "The request does not say where to return to.";
    /// /authorize: a `response_type` other than `code`.
    pub const RESPONSE_TYPE_UNSUPPORTED: &str = "Only response_type=code is supported.";
    /// /authorize: no `response_type`.
    pub const RESPONSE_TYPE_MISSING: &str = "The request needs response_type=code.";
    /// /authorize: a `code_challenge` that is not a base64url SHA-256.
    pub const CHALLENGE_NOT_S256: &str = "The code_challenge is not an S256 challenge.";
    /// /authorize: no `code_challenge`.
    pub const PKCE_REQUIRED: &str =
        "PKCE is required: send code_challenge with code_challenge_method=S256.";
    /// /authorize: a `code_challenge_method` other than S256.
    pub const CHALLENGE_METHOD_UNSUPPORTED: &str =
        "Only the S256 code_challenge_method is supported.";
    /// /authorize and /token: a `resource` that is not this relay's MCP endpoint.
    pub const RESOURCE_NOT_HERE: &str = "The resource is not this relay.";
    /// /token: a `resource` other than the one the code was authorized for.
    pub const RESOURCE_NOT_AUTHORIZED: &str = "The resource is not the one authorized.";

    /// /token: an authorization code this relay did not make, or one past its lifetime.
    pub const CODE_UNKNOWN: &str = "The authorization code is unknown or expired.";
    /// /token: an authorization code redeemed a second time.
    pub const CODE_USED: &str = "The authorization code was already used.";
    /// /token: the code was drawn for another client id.
    pub const CODE_OTHER_CLIENT: &str = "The authorization code was issued to another client.";
    /// /token: a `redirect_uri` other than the authorization request's.
    pub const REDIRECT_DIFFERS: &str = "The redirect_uri differs from the authorization request's.";
    /// /token: no `code_verifier`.
    pub const VERIFIER_MISSING: &str = "The code_verifier is missing.";
    /// /token: a `code_verifier` whose hash is not the code's challenge.
    pub const VERIFIER_WRONG: &str = "The code_verifier does not match the code_challenge.";
    /// The redirect back to the client when the person chose Deny in their tab.
    pub const DENIED: &str = "The person denied the connection in their tab.";
    /// /token: a `grant_type` other than the two issued.
    pub const GRANT_TYPE_UNSUPPORTED: &str =
        "Only the authorization_code and refresh_token grants are supported.";
    /// /token: no `grant_type`.
    pub const GRANT_TYPE_MISSING: &str = "The grant_type is missing.";
    /// /token: no `client_id`.
    pub const CLIENT_ID_MISSING: &str = "The client_id is missing.";
    /// /token: a refresh grant without `refresh_token`.
    pub const REFRESH_TOKEN_MISSING: &str = "The refresh_token is missing.";
    /// /token: a code grant without `code`.
    pub const CODE_MISSING: &str = "The code is missing.";
    /// /token: a parameter sent twice (`name`: the parameter).
    #[must_use]
    pub fn param_sent_twice(name: &str) -> String {
        format!("The parameter {name} is sent twice.")
    }
    /// /revoke: a body over its bound.
    pub const REVOKE_TOO_LARGE: &str = "The request is too large.";
    /// /revoke: no `token`.
    pub const REVOKE_TOKEN_MISSING: &str = "The token to revoke is missing.";

    /// /register: a body over `cap` bytes.
    #[must_use]
    pub fn registration_too_large(cap: usize) -> String {
        format!("The registration is larger than the {cap} bytes allowed.")
    }
    /// /register: a body that is not a JSON object of client metadata.
    pub const REGISTRATION_NOT_METADATA: &str =
        "The registration must be a JSON object of client metadata.";
    /// /register: `redirect_uris` is not an array.
    pub const REDIRECT_URIS_NOT_ARRAY: &str = "redirect_uris must be an array of URIs.";
    /// /register: no redirect URI.
    pub const NO_REDIRECT_URIS: &str = "The registration needs at least one redirect URI.";
    /// The name of a registered client that gave none (or only characters never shown).
    pub const UNNAMED_CLIENT: &str = "An unnamed app";
    /// /register: more than `limit` redirect URIs.
    #[must_use]
    pub fn too_many_redirect_uris(limit: usize) -> String {
        format!("A client may register at most {limit} redirect URIs.")
    }
    /// /register: a redirect URI that is not a string.
    pub const REDIRECT_URI_NOT_STRING: &str = "Every redirect URI must be a string.";
    /// /register: a grant type other than the two issued.
    pub const GRANT_TYPES_UNSUPPORTED: &str =
        "Only the authorization_code and refresh_token grant types are issued.";
    /// /register: a response type other than `code`.
    pub const RESPONSE_TYPES_UNSUPPORTED: &str = "Only the code response type is issued.";
    /// A signed client id that does not verify.
    pub const CLIENT_ID_UNKNOWN: &str =
        "The client id is not one this relay issued; register again.";
    /// A redirect URI over `cap` bytes.
    #[must_use]
    pub fn redirect_uri_too_long(cap: usize) -> String {
        format!("A redirect URI may be at most {cap} bytes.")
    }
    /// A redirect URI holding whitespace, control characters or backslashes.
    pub const REDIRECT_URI_CHARACTERS: &str =
        "A redirect URI may not hold spaces, control characters or backslashes.";
    /// A redirect URI with a fragment.
    pub const REDIRECT_URI_FRAGMENT: &str = "A redirect URI may not have a fragment.";
    /// A redirect URI that is not absolute.
    pub const REDIRECT_URI_NOT_ABSOLUTE: &str = "A redirect URI must be an absolute https URL.";
    /// A redirect URI with userinfo.
    pub const REDIRECT_URI_USERINFO: &str = "A redirect URI may not carry a user name or password.";
    /// A redirect URI with no host.
    pub const REDIRECT_URI_NO_HOST: &str = "A redirect URI must name a host.";
    /// A redirect URI whose port is not a port.
    pub const REDIRECT_URI_PORT: &str = "A redirect URI's port must be a number from 0 to 65535.";
    /// A redirect URI over plain http to a host that is not loopback, or of another scheme.
    pub const REDIRECT_URI_SCHEME: &str =
        "A redirect URI must use https, or http on a loopback address only.";

    /// What a client metadata document's refusal tells the person to do.
    const MAKERS: &str = "tell the app's makers";
    /// The metadata document's URL is not https.
    pub const CIMD_NOT_HTTPS: &str = "The app's client id is an address that is not https, so the relay cannot verify who is asking; tell the app's makers.";
    /// The metadata document's URL names a numeric or local host.
    pub const CIMD_HOST_REFUSED: &str = "The app's client id points at a numeric or local address, which the relay does not fetch; tell the app's makers.";
    /// The metadata document's URL breaks a URL rule (`why`: which).
    #[must_use]
    pub fn cimd_bad_url(why: &str) -> String {
        format!(
            "The app's client id is not a usable address of its client metadata ({why}); {MAKERS}."
        )
    }
    /// Why a metadata document's URL is not usable, said in [`cimd_bad_url`].
    pub mod url {
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_TOO_LONG: &str = "it is longer than 512 bytes";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_CHARACTERS: &str = "it holds spaces, control characters or backslashes";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_FRAGMENT: &str = "it has a fragment";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_USERINFO: &str = "it carries a user name or password";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_PORT_NOT_NUMBER: &str = "its port is not a number";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_PORT_RANGE: &str = "its port is out of range";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_NO_PATH: &str = "it has no path";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_DOT_SEGMENTS: &str = "its path has . or .. segments";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_NO_HOST: &str = "it names no host";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_HOST_TOO_LONG: &str = "its host name is too long";
        /// A reason [`super::cimd_bad_url`] gives.
        pub const URL_HOST_NOT_DOMAIN: &str = "its host is not a lower-case domain name";
    }
    /// Why a metadata document lists no acceptable redirect URI: it lists none.
    pub const CIMD_NO_REDIRECTS: &str = "it lists none";
    /// Why a metadata document lists no acceptable redirect URI: more than `limit`.
    #[must_use]
    pub fn cimd_too_many_redirects(limit: usize) -> String {
        format!("it lists more than {limit}")
    }
    /// The document at `domain` could not be fetched or read (whatever failed: the log says).
    #[must_use]
    pub fn cimd_unreadable(domain: &str) -> String {
        format!("The relay could not read the client's metadata document from {domain}; try again in a moment, or {MAKERS}.")
    }
    /// The document at `domain` names another `client_id` than its own address.
    #[must_use]
    pub fn cimd_mismatch(domain: &str) -> String {
        format!("The client metadata at {domain} names another client id than the address it was fetched from, so it cannot be trusted; {MAKERS}.")
    }
    /// The document at `domain` lists no acceptable redirect URI (`why`: the last refusal,
    /// without its full stop).
    #[must_use]
    pub fn cimd_bad_redirect(domain: &str, why: &str) -> String {
        format!("The app's client metadata at {domain} lists no acceptable redirect URIs ({why}); {MAKERS}.")
    }
    /// The document at `domain` asks for client authentication.
    #[must_use]
    pub fn cimd_not_public(domain: &str) -> String {
        format!("The app's client metadata at {domain} asks for client authentication, and this relay serves public clients only (token_endpoint_auth_method none); {MAKERS}.")
    }
    /// The document at `domain` holds a client secret.
    #[must_use]
    pub fn cimd_has_secret(domain: &str) -> String {
        format!("The app's client metadata at {domain} holds a client secret, which a published document must never hold; {MAKERS}.")
    }
    /// The document at `domain` has `field` of the wrong type.
    #[must_use]
    pub fn cimd_bad_field(domain: &str, field: &str) -> String {
        format!("The app's client metadata at {domain} has a {field} of the wrong type; {MAKERS}.")
    }
}

/// What a tab reads as the reason its socket was closed (at most 123 bytes, as WebSocket
/// allows; `tab/relay-client.js` shows it to the person).
pub mod tab {
    /// The socket's URL names no pairing.
    pub const NO_PAIRING: &str = "The tab must name its pairing.";
    /// The socket closed to make room for a newer one while too many waited to prove the
    /// pairing.
    pub const MADE_ROOM: &str =
        "Too many sockets were waiting to prove this pairing; this one made room for a newer one.";
    /// A proof that does not hold (a wrong signature, key or challenge).
    pub const NOT_PROVEN: &str = "The tab did not prove its pairing.";
    /// A socket that did not prove itself within its wait.
    pub const NOT_PROVEN_IN_TIME: &str = "The tab did not prove its pairing in time.";
    /// An unproven socket sent a message over its bound.
    pub const UNPROVEN_TOO_LONG: &str =
        "A tab's messages before it proves its pairing must be short; this one is too long.";
    /// An unproven socket's first message is not a hello.
    pub const HELLO_FIRST: &str = "The first message must be the tab's hello.";
    /// An unproven socket sent something other than its hello.
    pub const PROVE_FIRST: &str = "The tab must prove its pairing first.";
    /// A second hello on a socket whose challenge was used.
    pub const PROVES_ONCE: &str = "A tab proves its pairing once.";
    /// The pairing already holds the most tabs it keeps.
    pub const TOO_MANY_TABS: &str =
        "Too many tabs of the app are open in this browser; close some, then reload this one.";
    /// A message that is not text, or over the size limit.
    pub const MESSAGE_TOO_LARGE: &str = "Messages must be JSON text within the size limit.";
}

/// What the person reads in their tab when a connect code cannot be approved (re-exported as
/// `oauth::connect::refusal`).
pub mod connect_code {
    /// The code is not one the relay knows or has expired.
    pub const UNKNOWN: &str =
        "That connect code is not waiting for approval: check it against the waiting page, or start connecting again.";
    /// The code is not of the connect code's form.
    pub const MALFORMED: &str = "A connect code has ten letters and digits, such as ABCDE-12345.";
    /// The code was approved or denied already.
    pub const USED: &str = "That connect code was already approved or denied.";
    /// Tabs tried the code too often; it is dead.
    pub const TOO_MANY_TRIES: &str =
        "That connect code was tried too often and no longer works; start connecting again.";
    /// The confirm page's ticket is unknown, used or too old.
    pub const TICKET_STALE: &str =
        "This confirmation is no longer valid: press Approve in your tab again, or type the whole code shown on the waiting page there.";
    /// The browser that opened the confirm page did not open the waiting page.
    pub const NOT_THIS_BROWSER: &str = tabrelay_bundle::protocol::consent::NOT_THIS_BROWSER;
}

/// What the Worker's shell answers on its own (plain text or a close reason).
pub mod shell {
    /// The log's line when the relay starts without one of its rate-limiting bindings (its
    /// name follows).
    pub const LIMIT_UNBOUND: &str = "refusing what it limits: no rate-limiting binding";
    /// Any request while the relay's secrets are missing or bad (the log says which).
    pub const MISCONFIGURED: &str =
        "This relay is misconfigured: its owner must set its secrets (the log says which).";
    /// A plain request to the tab socket's address.
    pub const WEBSOCKET_ONLY: &str = "This address takes a WebSocket from the app's tab.";
    /// A tab socket from a page whose origin is not one of the app's (a close reason).
    pub const ORIGIN_MAY_NOT_PAIR: &str = "This page's origin may not pair with this relay.";
    /// A call's answer the core said is JSON came as something else.
    pub const CALL_NOT_ANSWERED: &str = "The relay could not answer the call.";
    /// The Worker's own failure (the log has what was thrown).
    pub const INTERNAL: &str = "INTERNAL SERVER ERROR";
    /// What a pairing's object answers a body that is not one of the Worker's requests.
    pub const NOT_FOR_PAIRING: &str = "Not a request to the pairing.";
    /// What a connect code's object answers a body that is not one of the Worker's requests.
    pub const NOT_FOR_CODE: &str = "Not a request to a connect code.";
}

/// What the person reads on the relay's own pages ([`crate::pages`]). Each is a macro that
/// expands to a string literal, so a page's template takes it in with `concat!` when it is
/// compiled and costs the Worker nothing more than a sentence written inline; a sentence with a
/// hole takes what fills it (markup, or a format argument such as `"{who}"`).
pub mod page {
    // Who asks, as the tab's consent names them too: the bundle's.
    pub(crate) use tabrelay_bundle::{
        who_calls_itself as calls_itself, who_not_verified as name_not_verified,
        who_verified as verified_domain,
    };
    /// The waiting page's title.
    macro_rules! waiting_title {
        () => {
            "Connect to your tab"
        };
    }
    /// The waiting page's heading.
    macro_rules! waiting_heading {
        ($who:literal) => {
            concat!("Connect ", $who, " to your tab")
        };
    }
    /// The waiting page: who asks, in which app (`$app`: its name and address).
    macro_rules! waiting_asks {
        ($who:literal, $app:literal) => {
            concat!($who, " asks to act in your open tab of ", $app, ".")
        };
    }
    /// The waiting page, after who asks: where the person returns after approving (said only
    /// when somewhere: an agent app on this computer, through `tabrelay-local`, sends nowhere).
    macro_rules! waiting_returns {
        ($host:literal) => {
            concat!(" After approval you will be sent back to ", $host, ".")
        };
    }
    /// The waiting page, above the code.
    macro_rules! enter_code {
        () => {
            "In that tab, enter this code and approve it:"
        };
    }
    /// The waiting page's button that opens the app with the code.
    macro_rules! open_with_code {
        () => {
            "Open the app with this code"
        };
    }
    /// The waiting page until its script has the code.
    macro_rules! making_code {
        () => {
            "Making a connect code…"
        };
    }
    /// The waiting page, below the code.
    macro_rules! code_rules {
        () => {
            "The code works once and for ten minutes. The link approves with one press only in this browser; anywhere else, type the whole code. If you did not start this, close this page."
        };
    }
    /// The connector address opened in a browser: its title.
    macro_rules! connector_title {
        () => {
            "Tabrelay connector"
        };
    }
    /// The connector address opened in a browser: its heading.
    macro_rules! connector_heading {
        () => {
            "This is a connector address for agent apps"
        };
    }
    /// The connector address opened in a browser: what it does (`$app`: a link to the app).
    macro_rules! connector_adds {
        ($address:literal, $app:literal) => {
            concat!(
                "Add ",
                $address,
                " to an agent app and it can act in your open tab of ",
                $app,
                ", with your approval there. There is nothing to see here in a browser."
            )
        };
    }
    /// The connector address opened in a browser, when it is this computer's own (loopback):
    /// the bundle's words, as the tab's Agents panel says them.
    pub(crate) use tabrelay_bundle::local_reach as connector_local;
    /// The connector address opened in a browser: what happens next.
    macro_rules! connector_next {
        () => {
            "The agent app then opens a page with a connect code: open the app, type the code there and approve it."
        };
    }
    /// The confirm page's heading when this browser's confirmation approved the code.
    macro_rules! approved {
        () => {
            "Approved"
        };
    }
    /// The confirm page's heading when it did not.
    macro_rules! not_approved {
        () => {
            "Not approved"
        };
    }
    /// The confirm page when it approved (`$client`: who connects).
    macro_rules! connecting {
        ($client:literal) => {
            concat!($client, " is connecting to your tab. This window closes by itself.")
        };
    }
    /// The refusal page's title.
    macro_rules! refused_title {
        () => {
            "Cannot connect"
        };
    }
    /// The refusal page's heading (its sentence says why).
    macro_rules! refused_heading {
        () => {
            "This connection cannot go on"
        };
    }
    /// The waiting page's script, when its code can no longer be approved and the relay gave no
    /// sentence. The script's sentences go into JavaScript strings in single quotes, so hold no
    /// quote or backslash.
    macro_rules! code_dead {
        () => {
            "This code can no longer be used; start connecting again from the app."
        };
    }
    /// The waiting page's script, while the relay does not answer (it tries again).
    macro_rules! relay_unreachable {
        () => {
            "Cannot reach the relay; still trying…"
        };
    }
    /// The waiting page's script, once it shows the code.
    macro_rules! waiting_for_approval {
        () => {
            "Waiting for approval in your tab…"
        };
    }
    /// The waiting page's script, when the person approved in their tab.
    macro_rules! going_back_approved {
        () => {
            "Approved. Going back to the app…"
        };
    }
    /// The waiting page's script, when the person denied in their tab.
    macro_rules! going_back_denied {
        () => {
            "Denied in your tab. Going back to the app…"
        };
    }
    pub(crate) use {
        approved, code_dead, code_rules, connecting, connector_adds, connector_heading,
        connector_next, connector_title, enter_code, going_back_approved, going_back_denied,
        making_code, not_approved, open_with_code, refused_heading, refused_title,
        relay_unreachable, waiting_asks, waiting_for_approval, waiting_heading, waiting_returns,
        waiting_title,
    };
}

/// What `tabrelay-local` (the local way in) says to its agent app while the person has not
/// connected it yet. The Worker never says them (no byte of the upload).
pub mod local {
    /// A tool call, `status`, or another request, before the person approved the connection
    /// in their tab: the code they type there, the waiting page's `link` (which opens the app
    /// with it), and what to do.
    #[must_use]
    pub fn not_connected(code: &str, link: &str) -> String {
        format!(
            "Not connected to the person's tab yet. Ask them to open the app, and in its Agents panel type the connect code {code} and press Approve (or to open {link} in the browser where they use the app and press Open the app with this code); then call again."
        )
    }

    /// The line added to the instructions of an `initialize` answered before the approval.
    #[must_use]
    pub fn connect_line(code: &str, link: &str) -> String {
        format!(
            "\n\nThis is tabrelay-local, on the person's computer. It is not connected to their tab yet: they type the connect code {code} into the app's Agents panel and press Approve, or open {link} in the browser where they use the app and press Open the app with this code. Until then every call answers with this code; the status tool says it too."
        )
    }

    /// Before any code could be made (no request has named the agent app yet).
    pub const NO_CODE_YET: &str = "(not made yet: send initialize first)";

    /// The waiting page's poll once its code was taken up (`done`): on the local server's page,
    /// only the server itself takes a code up, for its agent app, at once.
    pub const TAKEN_UP: &str = "Approved: the agent app is connected. You may close this page.";

    /// A waiting page's address whose code is no longer waiting (connected, denied, or dead).
    pub const PAGE_GONE: &str = "This waiting page is no longer open: the agent app's code was used or ran out. Ask the agent app for its status: it gives the code, and the page, to use now.";
}
