//! The tab wire protocol: the JSON messages between the relay and a tab over the tab's
//! WebSocket, with the version both ends state and the close codes the relay uses.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The version of this protocol; a tab states it in its `hello`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The path of the tab's WebSocket; the pairing id travels as `?pairing=`.
pub const TAB_PATH: &str = "/tab";

/// The largest message either end sends over the tab's WebSocket, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How long a tab has to prove its secret after the socket opens, in milliseconds.
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
/// The most calls one pairing carries at once; another is answered with a sentence.
pub const MAX_PENDING_CALLS: usize = 64;

/// Close codes the relay ends a tab's socket with (the reason says it in words).
pub mod close {
    /// The page's origin is not one the relay serves.
    pub const ORIGIN_REFUSED: u16 = 4403;
    /// The tab did not prove the secret of the pairing it named.
    pub const PROOF_FAILED: u16 = 4401;
    /// The tab sent something that is not this protocol.
    pub const PROTOCOL_ERROR: u16 = 4400;
    /// The page was built for another protocol version or bundle: reloading it fixes that.
    pub const OUTDATED: u16 = 4426;
    /// The pairing already holds as many tabs as it may.
    pub const TOO_MANY_TABS: u16 = 4429;
}

/// What a tab sends. Read by [`TabMessage::parse`] (by hand from a JSON value: serde's
/// internally tagged enums cost the Worker about 50 KB of wasm).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TabMessage {
    /// The first message: the protocol version and the tab secret that proves the pairing.
    Hello {
        /// The protocol version the tab speaks.
        protocol: u32,
        /// The tab secret (base64url of 32 random bytes); its hash names the pairing.
        secret: String,
        /// The digest of the bundle the page was built with ([`crate::BUNDLE_DIGEST`]); a page
        /// too old to send one is told to reload.
        #[serde(default)]
        bundle: String,
    },
    /// The person is being asked about a call; `sentence` is what the tab's card says.
    Asking {
        /// The call's id.
        id: u64,
        /// The card's sentence.
        sentence: String,
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
    /// The person forgets a connection: its tokens stop at once.
    Forget {
        /// The connection's id.
        id: String,
    },
    /// The person typed or opened a connect code: who asks for it?
    Describe {
        /// The connect code, as typed.
        code: String,
    },
    /// The person approved a connect code in this tab.
    Approve {
        /// The connect code, as typed.
        code: String,
    },
    /// The person denied a connect code in this tab.
    Deny {
        /// The connect code, as typed.
        code: String,
    },
    /// The tab gained or lost focus.
    Focus {
        /// Whether the tab has focus now.
        focused: bool,
    },
    /// The answer to a call.
    Result {
        /// The call's id, as the relay sent it.
        id: u64,
        /// The outcome.
        #[serde(flatten)]
        outcome: Outcome,
    },
}

/// What a call came to in the tab: `{"data": …, "image"?: …}` or `{"error": "…"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    /// The tool ran; `data` is its JSON result and `image` an optional picture.
    Done {
        /// The tool's JSON result.
        data: Value,
        /// A picture, when the tool makes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image: Option<Image>,
        /// A sound, when the tool makes one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        audio: Option<Audio>,
        /// A document the tool hands over whole (an embedded text resource).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resource: Option<Embedded>,
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
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<Value>,
    },
}

/// The methods a tab may ask the client through [`Outcome::InputRequired`], each with the
/// client capability it needs.
pub const INPUT_METHODS: [(&str, &str); 3] = [
    ("elicitation/create", "elicitation"),
    ("sampling/createMessage", "sampling"),
    ("roots/list", "roots"),
];

/// The most input requests in one answer.
pub const MAX_INPUT_REQUESTS: usize = 8;

/// A picture in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// Base64 of the picture's bytes.
    pub data: String,
    /// Its media type, such as `image/png`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
}

/// A sound in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audio {
    /// Base64 of the sound's bytes.
    pub data: String,
    /// Its media type, such as `audio/wav`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// A text document in a result (an MCP embedded resource).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Embedded {
    /// Its address, as the app names it.
    pub uri: String,
    /// Its media type, such as `text/plain`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

/// What the relay sends a tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RelayMessage {
    /// The tab proved its pairing.
    Welcome {
        /// The pairing id (the hash of the tab secret).
        pairing: String,
        /// The protocol version the relay speaks.
        protocol: u32,
    },
    /// An agent calls a tool.
    Call {
        /// The call's id within the pairing.
        id: u64,
        /// The tool's name.
        tool: String,
        /// The tool's arguments.
        args: Value,
        /// The agent's name, as its client gave it.
        agent: String,
        /// The connection the call came through.
        connection: Connection,
        /// The turn this call belongs to.
        turn: u64,
        /// A retried call's input (2026-07-28): `{"responses": {key: response, …}, "state"?:
        /// …}`, the client's answers to the tab's [`Outcome::InputRequired`] and the state the
        /// tab gave with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verified: Option<String>,
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
    /// The connect code was not approved; the sentence says why.
    Refused {
        /// The code, as the tab sent it.
        code: String,
        /// What the person can act on.
        sentence: String,
    },
}

/// A connection as the tab lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// A connection of an agent app to the pairing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    /// The grant's id.
    pub id: String,
    /// How the agent reached the tab; always `connector` for the relay.
    pub kind: String,
    /// The client's name.
    pub client: String,
    /// The host of the client's redirect URI.
    pub host: String,
}

/// A message that is not this protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotProtocol;

impl TabMessage {
    /// Reads a tab's message.
    pub fn parse(text: &str) -> Result<Self, NotProtocol> {
        let Ok(Value::Object(mut m)) = serde_json::from_str::<Value>(text) else {
            return Err(NotProtocol);
        };
        let string = |m: &Map<String, Value>, k: &str| {
            m.get(k).and_then(Value::as_str).map(String::from).ok_or(NotProtocol)
        };
        let id = |m: &Map<String, Value>| m.get("id").and_then(Value::as_u64).ok_or(NotProtocol);
        let kind = string(&m, "type")?;
        Ok(match kind.as_str() {
            "hello" => TabMessage::Hello {
                protocol: m
                    .get("protocol")
                    .and_then(Value::as_u64)
                    .and_then(|p| u32::try_from(p).ok())
                    .ok_or(NotProtocol)?,
                secret: string(&m, "secret")?,
                bundle: string(&m, "bundle").unwrap_or_default(),
            },
            "asking" => TabMessage::Asking { id: id(&m)?, sentence: string(&m, "sentence")? },
            "answered" => TabMessage::Answered { id: id(&m)? },
            "step" => TabMessage::Step,
            "connections" => TabMessage::Connections,
            "forget" => TabMessage::Forget { id: string(&m, "id")? },
            "describe" => TabMessage::Describe { code: string(&m, "code")? },
            "approve" => TabMessage::Approve { code: string(&m, "code")? },
            "deny" => TabMessage::Deny { code: string(&m, "code")? },
            "focus" => TabMessage::Focus {
                focused: m.get("focused").and_then(Value::as_bool).ok_or(NotProtocol)?,
            },
            "result" => TabMessage::Result { id: id(&m)?, outcome: Outcome::take(&mut m)? },
            _ => return Err(NotProtocol),
        })
    }
}

impl Outcome {
    /// The outcome held by a result message's fields.
    fn take(m: &mut Map<String, Value>) -> Result<Self, NotProtocol> {
        if let Some(data) = m.remove("data") {
            return Ok(Outcome::Done {
                data,
                image: optional(m, "image")?,
                audio: optional(m, "audio")?,
                resource: optional(m, "resource")?,
            });
        }
        if let Some(requests) = m.remove("input_required") {
            let Value::Object(requests) = requests else { return Err(NotProtocol) };
            let known = |r: &Value| {
                let method = r.get("method").and_then(Value::as_str);
                INPUT_METHODS.iter().any(|(m, _)| Some(*m) == method)
            };
            if requests.is_empty()
                || requests.len() > MAX_INPUT_REQUESTS
                || !requests.values().all(known)
            {
                return Err(NotProtocol);
            }
            let state = m.remove("state").filter(|s| !s.is_null());
            return Ok(Outcome::InputRequired { requests, state });
        }
        match m.remove("error") {
            Some(Value::String(error)) => Ok(Outcome::Failed { error }),
            _ => Err(NotProtocol),
        }
    }
}

/// An optional field of a result, read as its type when present.
fn optional<T: serde::de::DeserializeOwned>(
    m: &mut Map<String, Value>,
    key: &str,
) -> Result<Option<T>, NotProtocol> {
    match m.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v).map(Some).map_err(|_| NotProtocol),
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(mut m) => Outcome::take(&mut m),
            _ => Err(NotProtocol),
        }
        .map_err(|_| serde::de::Error::custom("an outcome has data or an error"))
    }
}

impl RelayMessage {
    /// This message as the JSON text sent on the socket.
    #[must_use]
    pub fn to_text(&self) -> String {
        // Serialising these types cannot fail: every map key is a string.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tab_messages_read_as_the_tab_writes_them() {
        let hello =
            TabMessage::parse(r#"{"type":"hello","protocol":1,"secret":"abc","bundle":"d"}"#)
                .unwrap();
        assert_eq!(
            hello,
            TabMessage::Hello { protocol: 1, secret: "abc".into(), bundle: "d".into() }
        );
        let asking = TabMessage::parse(r#"{"type":"asking","id":3,"sentence":"Delete 2 items?"}"#);
        assert_eq!(
            asking.unwrap(),
            TabMessage::Asking { id: 3, sentence: "Delete 2 items?".into() }
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
        let done = TabMessage::parse(r#"{"type":"result","id":7,"data":{"n":1}}"#).unwrap();
        assert_eq!(
            done,
            TabMessage::Result {
                id: 7,
                outcome: Outcome::Done {
                    data: json!({"n":1}),
                    image: None,
                    audio: None,
                    resource: None
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
        assert!(TabMessage::parse(r#"{"type":"hello","protocol":1}"#).is_err());
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
        for bad in [r#"{}"#, r#"{"q":{"method":"tools/call"}}"#, r#"[1]"#] {
            let text = alloc::format!(r#"{{"type":"result","id":3,"input_required":{bad}}}"#);
            assert!(TabMessage::parse(&text).is_err(), "{bad}");
        }
        assert!(TabMessage::parse("[]").is_err());
    }

    #[test]
    fn relay_messages_carry_their_type() {
        let m = RelayMessage::Welcome { pairing: "p".into(), protocol: PROTOCOL_VERSION };
        let v: Value = serde_json::from_str(&m.to_text()).unwrap();
        assert_eq!(v, json!({"type":"welcome","pairing":"p","protocol":1}));
    }
}
