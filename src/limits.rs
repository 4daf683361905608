//! Every tunable limit of the relay, in one place: sizes, counts and times. The bundle's
//! protocol limits (what the tab and the relay both hold to) stay in `tabrelay_bundle::protocol`.
//! How many connect codes and tab sockets one sender may make a minute is the platform's to
//! count, so it is said where the platform reads it: `[[ratelimits]]` in `wrangler.toml`
//! (keyed by `crate::senders`). Each body read without a token is capped below, refused past
//! its cap before it is held (`crate::routes::body_cap`).
//! Times are in milliseconds (`_MS`) or seconds (`_S`).
//!
//! **Each connection its own share.** Everything a connection can make its pairing hold (calls
//! in the tab, tasks, listeners, questions, kept ends, calls left open and what came of them)
//! is bounded per connection first, so one leftover or phished connection that fills its share
//! leaves the others theirs. Each pairing-wide bound is [`MAX_GRANTS`] shares: as a pairing
//! keeps at most that many connections, every connection may fill its share at once and the
//! person's own agent still has its whole share, so the pairing-wide bound never refuses a
//! connection within its share. It stays as the cap on the pairing's memory and storage (the
//! worst cases are said beside each), reached only while what connections already forgotten
//! held is still ending. (The alternative, a reserve for each connection inside a smaller
//! pairing-wide bound, gives the same guarantee only with the same sum, and less room to one
//! agent.) Where things are refused, the sentence says it is the connection's share; where
//! they are evicted (kept ends, calls left open, outcomes), the connection's own oldest go.
//! A connection is the grant its access token names (`Connection::id` of each call).

// OAuth: registration, client metadata documents, authorization, tokens.
/// The largest registration body read, in bytes.
pub const MAX_REGISTRATION_BYTES: usize = 8 * 1024;
/// The most redirect URIs a client may register.
pub const MAX_REDIRECT_URIS: usize = 5;
/// The longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_BYTES: usize = 512;
/// The longest client name kept, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 100;
/// The largest client metadata document read, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// How long the fetch of a client metadata document may take, in milliseconds.
pub const FETCH_TIMEOUT_MS: u64 = 5_000;
/// The longest client id URL (a metadata document's address), in bytes.
pub const MAX_URL_BYTES: usize = 512;
/// The shortest time a checked client metadata document is kept, in seconds (also when it asks for none).
pub const CACHE_MIN_S: u64 = 5 * 60;
/// The longest time a checked client metadata document is kept, in seconds.
pub const CACHE_MAX_S: u64 = 24 * 3600;
/// How long a checked client metadata document is kept when its response names no max-age, in seconds.
pub const CACHE_DEFAULT_S: u64 = 3600;
/// The most `Mcp-Param-*` header names a CORS preflight is answered with (distinct, each at
/// most [`MAX_PREFLIGHT_PARAM_NAME_BYTES`]): an outsider's preflight cannot make the answer grow
/// with what it asks.
pub const MAX_PREFLIGHT_PARAMS: usize = 32;
/// The longest `Mcp-Param-*` header name a preflight is answered with, in bytes.
pub const MAX_PREFLIGHT_PARAM_NAME_BYTES: usize = 64;
/// The longest value of any authorization parameter, in bytes.
pub const MAX_PARAM_BYTES: usize = 2048;
/// The longest sealed request the waiting page posts back, in bytes.
pub const MAX_SEAL_BYTES: usize = 32 * 1024;
/// How many codes a seal may draw before the relay gives up (each further draw is needed only
/// when another live request holds the drawn letters: one in 2^35 per live code).
pub const MAX_CODE_DRAWS: u8 = 4;
/// How long the waiting page may take to ask for its connect code with the sealed request it
/// was given, in milliseconds (it asks as soon as it runs).
pub const SEAL_TTL_MS: u64 = 5 * 60_000;
/// The largest token request body read, in bytes.
pub const MAX_FORM_BYTES: usize = 8 * 1024;
/// How long an access token lives, in seconds.
pub const ACCESS_TOKEN_TTL_S: u64 = 3600;
/// How many verified access tokens one isolate keeps to answer again without reading them
/// ([`crate::oauth::token::Verified`]): enough for the clients one isolate serves at once.
pub const VERIFIED_KEPT: usize = 16;
/// How long an authorization code may wait to be redeemed, in milliseconds.
pub const AUTH_CODE_TTL_MS: u64 = 60_000;
/// How long a connect code (and its waiting page) lives, in milliseconds.
pub const CONNECT_CODE_TTL_MS: u64 = 10 * 60_000;
/// How long a refresh token lives unused, in milliseconds (30 days).
pub const REFRESH_TOKEN_TTL_MS: u64 = 30 * 24 * 3600 * 1000;
/// The most characters of a place kept (the platform's city and country are short).
pub const MAX_PLACE_CHARS: usize = 80;
/// How many times a tab may describe, approve or deny one code before it is dead.
pub const MAX_CODE_TRIES: u32 = 5;
/// How long a tab's approval through the waiting page's link waits for the browser's
/// confirmation (the top-level step on the relay's origin that carries the waiting page's
/// cookie), in milliseconds; later, the approval is void and the code waits again.
pub const LINK_CONFIRM_TTL_MS: u64 = 2 * 60_000;

// Grants (connections) a pairing keeps.
/// How many retired refresh tokens a grant remembers, to recognise their reuse.
pub const RETIRED_KEPT: usize = 16;
/// The most grants (connections) one pairing keeps; another is refused until one is forgotten.
pub const MAX_GRANTS: usize = 50;
/// A connection unused this long is dropped (its refresh token expired with it).
pub const UNUSED_EXPIRY_MS: u64 = REFRESH_TOKEN_TTL_MS;
/// How long after a rotation the refresh token before the newest may still be presented (as a
/// retry, while the newest is unused), in milliseconds. A client whose token response was lost
/// retries within seconds; a previous token presented later is more likely a copy in someone
/// else's hands than a retry, so it is then treated as reuse and revokes the grant.
pub const PREVIOUS_TOKEN_GRACE_MS: u64 = 2 * 60_000;
/// How long a pairing refuses to make a grant revoked by a replay of its authorization code, in
/// milliseconds. The replay's revocation can reach the pairing before the first redemption's
/// creation of the grant (both follow the code's single use within moments), so the revocation
/// is kept that long and the late creation refused; ten minutes leave ample room.
pub const REPLAYED_KEPT_MS: u64 = 10 * 60_000;

// The MCP endpoint.
/// The largest request body the endpoint reads, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// The most messages one batch may hold (2025-03-26, the one revision with batches).
pub const MAX_BATCH: usize = 16;
/// How long a client may keep a tool list: it follows the focused tab, and a listening
/// client is told when it changes.
pub const TOOLS_TTL_MS: u64 = 0;
/// How long a client may keep the resource list and the view card (they change only with a
/// new version of the relay).
pub const RESOURCES_TTL_MS: u64 = 3_600_000;
/// How long a streamed call's answer may take to still go as plain JSON (with its own HTTP
/// status), in milliseconds; a later one goes on the stream, which opens then.
pub const FIRST_EVENT_WAIT_MS: u64 = 500;
/// The longest a client that gave a progress token goes without a progress notification while
/// its call waits (clients whose limit restarts on progress, such as Claude Code, then never
/// give up on a call the person is still deciding).
pub const PROGRESS_AT_LEAST_EVERY_MS: u64 = 30_000;
/// How long a client has to answer and retry, in milliseconds.
pub const STATE_LIFETIME_MS: u64 = 10 * 60 * 1000;
/// The largest `requestState` the relay issues or reads, in bytes.
pub const MAX_STATE_BYTES: usize = 32 * 1024;
/// The `retry` a resumable stream tells its client: how long to wait before it comes back
/// with `Last-Event-ID` when the stream drops, in milliseconds.
pub const RESUME_RETRY_MS: u64 = 1_000;
/// How long the end of a resumable call is kept for its client's return (its stream may have
/// dropped unseen), after the call's wait, in milliseconds.
pub const RESUME_KEPT_MS: u64 = 60_000;
/// The largest answer to one question a pairing keeps, in bytes held (its JSON and its tree,
/// `crate::pairing::tree_bytes`; it goes on to the tab with the call again).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

// The pairing: calls, turns, listeners, codes.
/// How long a call waits for the tab, in milliseconds (under Claude's 240 s); a task's round
/// in a tab too (then the tab drops it and the task fails), unless the person is being asked.
pub const TAB_CALL_WAIT_MS: u64 = 225_000;
/// A connection's calls share a turn until someone else steps or this long passes.
pub const AGENT_TURN_IDLE_MS: u64 = 120_000;
/// How often a streamed call says it is still waiting (SSE keep-alive), in milliseconds.
pub const KEEP_ALIVE_MS: u64 = 15_000;
/// How much later than it is due the pairing's next line may come before the Worker takes the
/// pairing as gone (evicted or broken mid-request) and ends the request as if its replies had
/// ended: a call in one piece is due by its wait, anything else hears the pairing at least every
/// [`KEEP_ALIVE_MS`] (`crate::mcp::exchange`'s bound for every ask).
pub const PAIRING_LATE_MS: u64 = 10_000;
/// The longest a platform timer waits: setTimeout takes a signed 32-bit count of milliseconds,
/// so a longer one would fire at once.
pub const LONGEST_WAIT_MS: u64 = i32::MAX as u64;

/// How long to sleep from `now_ms` until `at` (milliseconds since the epoch): nothing due
/// (None) or due later than a timer can wait sleeps [`LONGEST_WAIT_MS`] (about 24 days).
#[must_use]
pub fn wait_ms(at: Option<u64>, now_ms: u64) -> u64 {
    at.map_or(LONGEST_WAIT_MS, |at| at.saturating_sub(now_ms).min(LONGEST_WAIT_MS))
}

/// How long a pairing's object holds a request's response for its first reply: a request
/// answered by then (most calls are, in milliseconds) goes back as one whole body, which costs
/// the Worker and the object less than a stream; else its replies stream as they come, and a
/// Worker that stops reading (its client went away) lets go of the request.
pub const WHOLE_REPLY_WAIT_MS: u64 = 1_000;
/// How long the Worker waits for the pairing's tool list before answering with the bundled one.
pub const TOOL_LIST_WAIT_MS: u64 = 2_000;
/// How many codes a pairing may get wrong per [`WRONG_CODE_WINDOW_MS`].
pub const WRONG_CODES_ALLOWED: usize = 5;
/// The window of [`WRONG_CODES_ALLOWED`].
pub const WRONG_CODE_WINDOW_MS: u64 = 60_000;
/// How often a connection's "last used" time is written (a write per call would cost more).
pub const USED_GRANULARITY_MS: u64 = 60_000;
/// The most of a late answer's data `status` repeats, in characters.
pub const AFTERWARDS_DATA_CHARS: usize = 600;
/// How often a turn that goes on is written again: a call that starts a turn is stored at once,
/// the calls that continue it only this often (a write on every call was the hot path's largest
/// cost). After an eviction the stored time of a turn's last call is at most this old, so a
/// turn may end this much sooner than [`AGENT_TURN_IDLE_MS`] after it.
pub const TURN_STORED_EVERY_MS: u64 = 30_000;

// Tasks (io.modelcontextprotocol/tasks).
/// How long a call from a client that takes tasks may take before it becomes a task, in
/// milliseconds (sooner when the person is asked): a quick answer stays one response. Shorter
/// than [`FIRST_EVENT_WAIT_MS`], so the task is made before any stream opens.
pub const TASK_AFTER_MS: u64 = 400;
const _: () = assert!(TASK_AFTER_MS < FIRST_EVENT_WAIT_MS);
/// How long a task stays readable after it was made, in milliseconds (a person deciding takes
/// minutes; a client that comes back the next day finds it gone).
pub const TASK_TTL_MS: u64 = 6 * 3600 * 1000;
/// How often the relay suggests a client polls a task, in milliseconds.
pub const TASK_POLL_INTERVAL_MS: u64 = 2_000;
/// The most tasks one connection holds at once (finished ones count until they expire, and a
/// call that may become one counts from its start): a connection cannot fill its pairing's
/// storage, nor crowd out the others' (see [`MAX_CALLS_PER_CONNECTION`] for the calls they run
/// in the tab).
pub const MAX_TASKS_PER_CONNECTION: usize = 32;
/// The largest result or set of questions a task keeps, in bytes held (its JSON and its tree,
/// `crate::pairing::tree_bytes`; a larger one is replaced by a sentence): a connection's whole
/// share ([`MAX_TASK_BYTES_PER_CONNECTION`]), so one large result can still be kept, and well
/// inside a stored row's 2 MB.
pub const MAX_TASK_RESULT_BYTES: usize = MAX_TASK_BYTES_PER_CONNECTION;
/// The most bytes one connection's tasks hold in all (`crate::pairing::tasks::Task::held_bytes`:
/// its call's arguments and the rest of its row, its results, errors, questions, the client's
/// answers so far and the tab's state, as JSON and as trees, `crate::pairing::tree_bytes`),
/// until they expire, a call that may become a task holding its arguments and its row from its
/// start: every task is held in the pairing's memory, so one connection cannot fill it (or its
/// storage) for the others (its 32 tasks could otherwise keep 32 MB of arguments alone). A call
/// whose arguments would pass it is refused with a sentence; a result past it is replaced by
/// one, as a too large one is; answers past it are refused. Sized so that every connection's
/// shares of all the pairing holds fit in [`PAIRING_MEMORY_BYTES`] together (at 2 MiB, the
/// tasks alone would fill it).
pub const MAX_TASK_BYTES_PER_CONNECTION: usize = 512 * 1024;

// Each connection's share of what the pairing holds (why these shares: the module's doc).

/// The most calls one connection has in the tab at once: those waited on (streaming or not,
/// resumable ones whose stream dropped), and those that carry its tasks (a task's call and its
/// next rounds count as calls). As many as a whole pairing carried before it had shares, so one
/// agent (or a 64-way benchmark through one connection) loses nothing; the tab runs each
/// connection's calls in lines of their own, so they do not queue behind another's either.
pub const MAX_CALLS_PER_CONNECTION: usize = 64;
/// The most calls a pairing carries at once; another is answered with a sentence. Each holds at
/// most [`CALL_HELD_BYTES`] beside its request key (its arguments go to the tab; a call that
/// may become a task holds them in its connection's share of tasks), so 3,200 stay well inside
/// an object's memory.
pub const MAX_PENDING_CALLS: usize = MAX_GRANTS * MAX_CALLS_PER_CONNECTION;
const _: () = assert!(MAX_CALLS_PER_CONNECTION >= MAX_BATCH);
/// The most bytes of request keys (the connection's id and the client's JSON-RPC id, which may
/// be of any length) one connection's calls in the tab hold at once: 256 bytes a call at its
/// whole share of calls. A call past it is refused with a sentence.
pub const MAX_ID_BYTES_PER_CONNECTION: usize = 16 * 1024;
/// What a call in flight holds beside its request key, at most: a card of
/// `tabrelay_bundle::protocol::MAX_CARD_CHARS` (4 bytes a character at most), a tool's name, the
/// connection's id, its numbers and its slot.
pub const CALL_HELD_BYTES: usize = 2 * 1024;
/// What a task holds beside what its share counts ([`MAX_TASK_BYTES_PER_CONNECTION`]: its row
/// and its trees), at most: its slot and the slots of its parts.
pub const TASK_HELD_BYTES: usize = 1024;
/// The most `/listen` streams one connection holds at once (a client needs one; a second
/// while it reconnects).
pub const MAX_LISTENERS_PER_CONNECTION: usize = 4;
/// The most `/listen` streams one pairing holds at once.
pub const MAX_LISTENERS: usize = MAX_GRANTS * MAX_LISTENERS_PER_CONNECTION;
/// The most questions one connection's session-era client holds unanswered at once: two calls'
/// worth (each call asks at most `tabrelay_bundle::protocol::MAX_INPUT_REQUESTS`). Each answer
/// kept is at most [`MAX_ANSWER_BYTES`], so a connection holds at most 1 MiB of answers.
pub const MAX_QUESTIONS_PER_CONNECTION: usize = 2 * tabrelay_bundle::protocol::MAX_INPUT_REQUESTS;
/// The most questions a pairing holds unanswered for its session-era clients at once (50 MiB of
/// answers at worst, every connection's share full).
pub const MAX_PENDING_QUESTIONS: usize = MAX_GRANTS * MAX_QUESTIONS_PER_CONNECTION;
/// The most ends of resumable calls one connection has kept at once (its oldest goes first).
pub const MAX_KEPT_ENDS_PER_CONNECTION: usize = 4;
/// The most bytes (as JSON, with their keys) of ends of resumable calls one connection has kept
/// at once; a larger end is not kept.
pub const MAX_KEPT_BYTES_PER_CONNECTION: usize = 256 * 1024;
/// The most ends of resumable calls a pairing keeps at once.
pub const MAX_KEPT_ENDS: usize = MAX_GRANTS * MAX_KEPT_ENDS_PER_CONNECTION;
/// The most bytes (as JSON) of ends of resumable calls a pairing keeps at once (12.5 MiB, each
/// kept for [`RESUME_KEPT_MS`] at most).
pub const MAX_KEPT_BYTES: usize = MAX_GRANTS * MAX_KEPT_BYTES_PER_CONNECTION;
/// The most calls of one connection left open in the tab (the person still asked after the
/// relay stopped waiting) that the pairing remembers; its oldest is forgotten first.
pub const LEFT_OPEN_PER_CONNECTION: usize = 8;
/// The most calls left open a pairing remembers.
pub const MAX_LEFT_OPEN: usize = MAX_GRANTS * LEFT_OPEN_PER_CONNECTION;
/// How many outcomes of calls nobody waited for a pairing keeps for each connection's `status`
/// (its oldest goes first; in memory and storage, one row with the calls left open).
pub const AFTERWARDS_KEPT: usize = 4;
/// How many outcomes of calls nobody waited for a pairing keeps for all its connections.
pub const MAX_AFTERWARDS: usize = MAX_GRANTS * AFTERWARDS_KEPT;
// The row of calls left open and their outcomes stays inside a stored row's 2 MB: a call left
// open is a card of at most 300 characters and a tool name of 64, an outcome at most 600
// characters of data, a sentence and a tool name, each character at most 6 bytes as JSON.
const _: () = assert!(MAX_LEFT_OPEN * 2_300 + MAX_AFTERWARDS * 4_300 < 2_000_000);

/// What a pairing may hold in memory at worst for what its connections make it keep between
/// requests, every connection's share full at once ([`MAX_HELD_BYTES_PER_CONNECTION`] each),
/// whatever they send (1 MiB arguments, 1 MiB ids, JSON shaped to take the most memory): a
/// Durable Object has 128 MB for everything, its code and the runtime's own share included.
/// Not in it: the one request being read and handled at a time (its body at most
/// [`MAX_BODY_BYTES`], its tree while it is handled).
pub const PAIRING_MEMORY_BYTES: usize = 100 * 1024 * 1024;
/// What one connection can make its pairing hold in memory at worst: its tasks' bytes (their
/// arguments included, a call that may become a task's too), its questions' answers, its kept
/// ends (their keys included), its calls' request keys, and what each call and task holds beside
/// ([`CALL_HELD_BYTES`], [`TASK_HELD_BYTES`]). Client JSON kept as a tree counts as the tree
/// takes memory, not as its text (`crate::pairing::tree_bytes`). What the pairing holds apart
/// from connections (its tabs, their tool lists, the calls left open and their outcomes: one
/// row of at most 2 MB) is bounded where it is declared.
pub const MAX_HELD_BYTES_PER_CONNECTION: usize = MAX_TASK_BYTES_PER_CONNECTION
    + MAX_QUESTIONS_PER_CONNECTION * MAX_ANSWER_BYTES
    + MAX_KEPT_BYTES_PER_CONNECTION
    + MAX_ID_BYTES_PER_CONNECTION
    + MAX_CALLS_PER_CONNECTION * CALL_HELD_BYTES
    + MAX_TASKS_PER_CONNECTION * TASK_HELD_BYTES;
const _: () =
    assert!(MAX_GRANTS * MAX_HELD_BYTES_PER_CONNECTION + 2_000_000 <= PAIRING_MEMORY_BYTES);

#[cfg(test)]
mod tests {
    use super::{wait_ms, LONGEST_WAIT_MS};

    #[test]
    fn a_wait_is_until_its_time_and_never_longer_than_a_timer_can_wait() {
        assert_eq!(wait_ms(Some(1_500), 1_000), 500);
        assert_eq!(wait_ms(Some(900), 1_000), 0, "past due: at once");
        assert_eq!(wait_ms(None, 1_000), LONGEST_WAIT_MS, "nothing due");
        assert_eq!(wait_ms(Some(u64::MAX), 1_000), LONGEST_WAIT_MS);
    }
}
