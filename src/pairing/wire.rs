//! The messages between the Worker and the pairing's Durable Object, and how each is read.

pub use crate::oauth::exchange::{RefreshRequest, RevokeRequest};
use serde::Serialize;
use serde_json::Value;
use tabrelay_bundle::fields::{variant, Fields, FromValue};
use tabrelay_bundle::protocol::{Connection, Outcome};

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
    /// How long the caller waits, in milliseconds (at most [`crate::limits::TAB_CALL_WAIT_MS`]).
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

/// One line of a streamed call's reply, from the pairing to the Worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallEvent {
    /// The person is being asked; the sentence is the card's.
    Asking(String),
    /// The person answered; the step runs.
    Answered,
    /// Still waiting (every [`crate::limits::KEEP_ALIVE_MS`]).
    Tick,
    /// The end: the reply.
    Done(CallReply),
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
pub struct GrantReply {
    /// The grant's id.
    pub grant: String,
    /// The refresh token's secret part.
    pub secret: String,
}

/// What a refresh comes to, for the Worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefreshReply {
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

/// One line of the pairing's `/listen` stream (NDJSON): a keep-alive at once and every
/// [`crate::limits::KEEP_ALIVE_MS`], and a line each time the focused tab's tool list changes (a new list, focus
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

/// What the pairing replies about a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallReply {
    /// The tab's result.
    TabResult {
        /// The result.
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

impl CallReply {
    /// A call the relay could not carry, with its sentence.
    #[must_use]
    pub fn not_carried(sentence: impl Into<String>) -> Self {
        Self::NotCarried { sentence: sentence.into() }
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
                (name, answer) if name == "done" => CallReply::from_value(answer).map(Self::Done),
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

impl FromValue for GrantReply {
    const WHAT: &'static str = "a grant";
    fn from_value(value: Value) -> Option<Self> {
        let mut f = Fields::of(value)?;
        Some(Self { grant: f.string("grant")?, secret: f.string("secret")? })
    }
}

impl FromValue for RefreshReply {
    const WHAT: &'static str = "a refresh reply";
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

impl FromValue for CallReply {
    const WHAT: &'static str = "a call reply";
    fn from_value(value: Value) -> Option<Self> {
        let (name, f) = variant(value)?;
        let mut f = f?;
        match name.as_str() {
            "tab_result" => Some(Self::TabResult { outcome: f.read("outcome")? }),
            "not_carried" => Some(Self::NotCarried { sentence: f.string("sentence")? }),
            "no_such_tool" => Some(Self::NoSuchTool { tool: f.string("tool")? }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::round_trip;

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
            CallReply::TabResult { outcome },
            CallReply::not_carried("gone"),
            CallReply::NoSuchTool { tool: "x".into() },
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
        round_trip(&GrantReply { grant: "g".into(), secret: "s".into() });
        round_trip(&RefreshRequest {
            grant: "g".into(),
            secret: "s".into(),
            client_id: "c".into(),
        });
        round_trip(&RefreshReply::Rotated {
            secret: "s".into(),
            client_name: "n".into(),
            host: "h".into(),
        });
        round_trip(&RefreshReply::Refused { description: "d".into() });
        round_trip(&CheckRequest { grant: "g".into() });
        round_trip(&RevokeRequest { grant: "g".into(), secret: None });
        round_trip(&RevokeRequest { grant: "g".into(), secret: Some("s".into()) });
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
}
