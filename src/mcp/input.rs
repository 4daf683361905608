//! Calls that need the client's input (2026-07-28's multi-round-trip requests): a tab answers
//! with the requests it needs answered; the relay passes on those the client can answer, with a
//! `requestState` it seals (HMAC over the connection, the call and an expiry, holding the tab's
//! own state), and opens that state again when the client retries the call with its answers.

use base64::Engine as _;
use serde_json::{Map, Value};
use tabrelay_bundle::protocol::{askable, call_input};

use super::era::{codes, Era};
use crate::jsonrpc::{object, ErrorCode, RpcError};
use crate::keys::{Keys, Purpose};
use crate::limits::{MAX_STATE_BYTES, STATE_LIFETIME_MS};
use crate::sentences;
use tabrelay_bundle::fields::Object;

/// The call a state belongs to: its connection, tool and arguments.
#[derive(Debug, Clone, Copy)]
pub struct CallKey<'a> {
    /// The connection (grant) id.
    pub grant: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// Its arguments.
    pub args: &'a Value,
}

impl CallKey<'_> {
    fn digest(&self) -> String {
        let args = tabrelay_bundle::fields::json_text(self.args);
        let data = [self.grant.as_bytes(), b"\0", self.tool.as_bytes(), b"\0", args.as_bytes()];
        crate::crypto::sha256_hex(&data.concat())
    }
}

/// The result that asks the client for input: the requests it declared it can answer, and the
/// sealed state. A request the client cannot answer is left out; when none is left, the
/// refusal names the capabilities the call needs (-32021, HTTP 400).
pub fn ask(
    keys: &Keys,
    era: &Era,
    call: CallKey<'_>,
    requests: &Map<String, Value>,
    tab_state: Option<&Value>,
    now_ms: u64,
) -> Result<Value, (u16, RpcError)> {
    let (kept, missing) = askable(requests, |c| era.declared(c));
    if kept.is_empty() {
        return Err((
            400,
            RpcError {
                code: codes::MISSING_CAPABILITY,
                message: sentences::missing_capability(&missing),
                data: Some(object(&mut |o| o.field("requiredCapabilities", &missing))),
            },
        ));
    }
    let mut sealed = Vec::new();
    let mut o = Object::open(&mut sealed);
    o.text("c", &call.digest());
    o.field("e", &(now_ms + STATE_LIFETIME_MS));
    o.field("s", tab_state.unwrap_or(&Value::Null));
    o.close();
    let mut state = crate::crypto::base64url(&sealed);
    state.push('.');
    state.push_str(&crate::crypto::base64url(&keys.current.mac(Purpose::RequestState, &sealed)));
    if state.len() > MAX_STATE_BYTES {
        return Err((
            200,
            RpcError::new(ErrorCode::INTERNAL_ERROR, crate::sentences::STATE_TOO_LARGE),
        ));
    }
    Ok(object(&mut |o| {
        o.text("resultType", "input_required");
        o.field("inputRequests", &kept);
        o.text("requestState", &state);
    }))
}

/// What a retried call carries back: the client's responses and the tab's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    /// `params.inputResponses`.
    pub responses: Value,
    /// The tab's state (null when it kept none).
    pub tab_state: Value,
    /// The state's one use: its key and expiry, for the pairing to mark it used (a state
    /// comes back once; a replay is refused). None when the retry came without a state.
    pub once: Option<Once>,
}

/// A `requestState`'s single use, kept by the pairing until it expires (what the Worker posts
/// to the pairing's `/state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Once {
    /// A hash of the state.
    pub key: String,
    /// When it expires, in milliseconds since the epoch.
    pub expires_ms: u64,
}

impl Resume {
    /// What the tab receives with the call again.
    #[must_use]
    pub fn for_tab(&self) -> Value {
        call_input(self.responses.clone(), Some(self.tab_state.clone()))
    }
}

/// Opens a retried call's `requestState`: it must be the relay's, for this connection and this
/// very call, and not expired. Any other is refused (-32602) and the tab is never asked. A
/// retry without a state hands the tab the responses alone (the tab trusts them no more than
/// any argument).
pub fn resume(
    keys: &Keys,
    call: CallKey<'_>,
    state: Option<&str>,
    responses: Value,
    now_ms: u64,
) -> Result<Resume, RpcError> {
    if !responses.is_object() {
        return Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            crate::sentences::INPUT_RESPONSES_NOT_OBJECT,
        ));
    }
    let Some(state) = state else {
        return Ok(Resume { responses, tab_state: Value::Null, once: None });
    };
    let Some((tab_state, expires_ms)) = open(keys, &call, state, now_ms) else {
        return Err(RpcError::new(ErrorCode::INVALID_PARAMS, crate::sentences::STATE_REFUSED));
    };
    let key = crate::crypto::sha256_hex(state.as_bytes());
    Ok(Resume { responses, tab_state, once: Some(Once { key, expires_ms }) })
}

/// The tab's state and expiry sealed in a `requestState`, when it is the relay's, for this
/// call, and not expired (None: refused, whatever the reason; one refusal is made of it).
fn open(keys: &Keys, call: &CallKey<'_>, state: &str, now_ms: u64) -> Option<(Value, u64)> {
    if state.len() > MAX_STATE_BYTES {
        return None;
    }
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = state.split_once('.')?;
    let payload = b64.decode(payload).ok()?;
    let tag = b64.decode(tag).ok()?;
    if !keys.verify(Purpose::RequestState, &payload, &tag) {
        return None;
    }
    let sealed: Value = serde_json::from_slice(&payload).ok()?;
    let expires_ms = sealed["e"].as_u64().unwrap_or(0);
    if sealed["c"].as_str() != Some(call.digest().as_str()) || now_ms > expires_ms {
        return None;
    }
    Some((sealed["s"].clone(), expires_ms))
}

tabrelay_bundle::codec!(Once, "a state's use", { key, expires_ms });

/// The refusal of a state that already came back once.
#[must_use]
pub fn replayed() -> RpcError {
    RpcError::new(ErrorCode::INVALID_PARAMS, crate::sentences::STATE_REPLAYED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn era(caps: Value) -> Era {
        Era::Stateless { capabilities: caps.as_object().unwrap().clone(), client_name: None }
    }

    fn requests() -> Map<String, Value> {
        json!({
            "name": {"method": "elicitation/create", "params": {"message": "Name?"}},
            "draft": {"method": "sampling/createMessage", "params": {}},
        })
        .as_object()
        .unwrap()
        .clone()
    }

    const ARGS: &str = r#"{"a":1}"#;

    fn call(args: &Value) -> CallKey<'_> {
        CallKey { grant: "g1", tool: "t", args }
    }

    /// A call's digest is SHA-256 over its connection, tool and arguments, NUL between them,
    /// in lower-case hex: a state sealed before this relay was deployed still names its call.
    #[test]
    fn a_calls_digest_is_the_hash_of_its_parts() {
        use sha2::Digest as _;
        let args = json!({"b": [1, "x"], "a": null});
        let mut h = sha2::Sha256::new();
        h.update(b"g1\0t\0{\"a\":null,\"b\":[1,\"x\"]}");
        let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(call(&args).digest(), hex);
    }

    #[test]
    fn only_what_the_client_can_answer_is_asked() {
        let args: Value = serde_json::from_str(ARGS).unwrap();
        let r =
            ask(&keys(), &era(json!({"sampling": {}})), call(&args), &requests(), None, 0).unwrap();
        assert_eq!(r["resultType"], "input_required");
        assert_eq!(r["inputRequests"].as_object().unwrap().keys().collect::<Vec<_>>(), ["draft"]);
        let (status, e) =
            ask(&keys(), &era(json!({})), call(&args), &requests(), None, 0).unwrap_err();
        assert_eq!((status, e.code.0), (400, -32021));
        assert_eq!(
            e.message,
            "This call needs the client capability elicitation, sampling to go on; the client did \
             not declare it."
        );
        let needed = &e.data.unwrap()["requiredCapabilities"];
        assert!(needed["sampling"].is_object() && needed["elicitation"].is_object());
    }

    #[test]
    fn the_state_comes_back_only_for_the_same_call_in_time() {
        let args: Value = serde_json::from_str(ARGS).unwrap();
        let caps = era(json!({"elicitation": {}}));
        let tab_state = json!({"round": 2});
        let r = ask(&keys(), &caps, call(&args), &requests(), Some(&tab_state), 1000).unwrap();
        let state = r["requestState"].as_str().unwrap();
        let back = resume(&keys(), call(&args), Some(state), json!({"name": {}}), 2000).unwrap();
        assert_eq!(back.tab_state, tab_state);
        let once = back.once.clone().unwrap();
        assert_eq!((once.key.len(), once.expires_ms), (64, 1000 + STATE_LIFETIME_MS));
        let sent = tabrelay_bundle::fields::Encode::to_json(&once);
        assert_eq!(tabrelay_bundle::from_json::<Once>(&sent), Some(once.clone()));
        assert_eq!(back.for_tab()["state"], tab_state);
        // Another call, another connection, too late, tampered, another key: refused.
        let other: Value = json!({"a": 2});
        assert!(resume(&keys(), call(&other), Some(state), json!({}), 2000).is_err());
        let elsewhere = CallKey { grant: "g2", tool: "t", args: &args };
        assert!(resume(&keys(), elsewhere, Some(state), json!({}), 2000).is_err());
        assert!(resume(&keys(), call(&args), Some(state), json!({}), 1000 + STATE_LIFETIME_MS + 1)
            .is_err());
        let mut tampered = state.to_owned();
        tampered.insert(3, 'x');
        assert!(resume(&keys(), call(&args), Some(&tampered), json!({}), 2000).is_err());
        let other_key = Keys::new(&"z".repeat(32), None).unwrap();
        assert!(resume(&other_key, call(&args), Some(state), json!({}), 2000).is_err());
        assert!(resume(&keys(), call(&args), Some("garbage"), json!({}), 2000).is_err());
        assert!(resume(&keys(), call(&args), Some(state), json!([1]), 2000).is_err());
        // Without a state the responses go alone.
        let alone = resume(&keys(), call(&args), None, json!({"name": {}}), 2000).unwrap();
        assert_eq!(alone.for_tab(), json!({"responses": {"name": {}}}));
        assert_eq!(alone.once, None);
    }
}
