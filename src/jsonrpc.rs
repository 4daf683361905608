//! JSON-RPC 2.0 as MCP uses it over HTTP: one message per POST, parsed into a request or a
//! notification, and the error a client reads when it cannot be; and the JSON helpers every
//! writer of a message shares ([`object`], `put`, `put_meta`: the endpoint, the tool list,
//! the routes), on this floor below them all so none of them imports another for them.

use serde_json::{Map, Value};
use tabrelay_bundle::fields::{Encode, Object};

/// A request id: a number or a string, never null.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    /// A numeric id.
    Number(i64),
    /// A string id.
    Text(String),
}

impl Id {
    /// The id a JSON value holds: an integer or a string.
    #[must_use]
    pub fn of(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Id::Text(s.clone())),
            Value::Number(n) => n.as_i64().map(Id::Number),
            _ => None,
        }
    }
}

impl Encode for Id {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Id::Number(n) => n.write_json(out),
            Id::Text(s) => s.write_json(out),
        }
    }
}

/// JSON text as it is (a constant of the relay's), written as a field's value unchanged.
pub struct Raw<'a>(pub &'a str);

impl Encode for Raw<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

/// A list of strings, written as a JSON array.
pub struct Texts<'a>(pub &'a [&'a str]);

impl Encode for Texts<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, text) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            text.write_json(out);
        }
        out.push(b']');
    }
}

/// A JSON object the relay writes field by field with the bundle's writer ([`Object`]), read
/// back as a `Value`: a few bytes of code per field, where `json!` builds each key and value
/// and inserts it (about a hundred bytes of wasm per key). Its keys come out sorted, as a
/// `Value`'s do.
pub fn object(write: &mut dyn FnMut(&mut Object<'_>)) -> Value {
    let mut out = Vec::new();
    let mut o = Object::open(&mut out);
    write(&mut o);
    o.close();
    // What the writer wrote is JSON, so it reads back.
    serde_json::from_slice(&out).unwrap_or_default()
}

/// Sets `key` in `object` (a JSON object; anything else is left as it is), without `Value`'s
/// `IndexMut` and the map entry code behind it.
pub(crate) fn put(object: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = object {
        map.insert(key.into(), value);
    }
}

/// Sets `key` in the `_meta` of the object `object` (made when it has none; a `_meta` that is
/// not an object is left as it is).
pub(crate) fn put_meta(object: &mut Map<String, Value>, key: &str, value: Value) {
    match object.get_mut("_meta") {
        Some(Value::Object(meta)) => {
            meta.insert(key.into(), value);
        }
        Some(_) => {}
        None => {
            let mut meta = Map::new();
            meta.insert(key.into(), value);
            object.insert("_meta".into(), Value::Object(meta));
        }
    }
}

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// The body is not JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON is not a JSON-RPC request.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The params are wrong for the method.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// The server failed.
    pub const INTERNAL_ERROR: Self = Self(-32603);
}

/// An error answer: the code, a message a person can act on, optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: ErrorCode,
    /// One sentence.
    pub message: String,
    /// Structured detail, when it helps the client.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
}

/// One message a client sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it gets an answer.
    Request(Request),
    /// A notification: no answer.
    Notification {
        /// The method.
        method: String,
        /// The params (an empty object when absent).
        params: Map<String, Value>,
    },
    /// A response to something the server asked (a tab's question, in the session era).
    Response {
        /// The id of the server's request it answers.
        id: Id,
        /// What came back: the `result`, or `{"error": …}` when the client answered with an
        /// error (the tab reads either as the response to its question).
        answer: Value,
    },
}

/// A request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Its id.
    pub id: Id,
    /// The method.
    pub method: String,
    /// The params, an object (absent params read as an empty object).
    pub params: Map<String, Value>,
}

/// Why a body is not a message; `id` is known when the request was readable that far.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    /// The id, when there was one.
    pub id: Option<Id>,
    /// The error to answer with.
    pub error: RpcError,
}

/// Reads one JSON-RPC message from a POST body.
pub fn parse(body: &[u8]) -> Result<Message, Malformed> {
    read(body).map_err(|(id, code, message)| Malformed { id, error: RpcError::new(code, message) })
}

/// Why a body is not a message: the id when it was read, the code and the sentence (the
/// refusal made once, in [`parse`]).
type Refusal = (Option<Id>, ErrorCode, &'static str);

fn read(body: &[u8]) -> Result<Message, Refusal> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Err((None, ErrorCode::PARSE_ERROR, crate::sentences::NOT_JSON));
    };
    let invalid = ErrorCode::INVALID_REQUEST;
    let Value::Object(mut object) = value else {
        return Err(if value.is_array() {
            (None, invalid, crate::sentences::NO_BATCHES)
        } else {
            (None, invalid, crate::sentences::NOT_ONE_MESSAGE)
        });
    };
    let id = match object.remove("id") {
        None => None,
        Some(v) => match Id::of(&v) {
            Some(id) => Some(id),
            None => return Err((None, invalid, crate::sentences::BAD_ID)),
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, invalid, crate::sentences::NOT_JSONRPC_2));
    }
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err((id, invalid, crate::sentences::METHOD_NOT_STRING)),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            let answer = match (object.remove("result"), object.remove("error")) {
                (Some(result), None) => result,
                (_, Some(error)) => self::object(&mut |o| o.field("error", &error)),
                (None, None) => Value::Null,
            };
            return Ok(Message::Response { id: id.unwrap_or(Id::Number(0)), answer });
        }
        None => return Err((id, invalid, crate::sentences::NO_METHOD)),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err((id, ErrorCode::INVALID_PARAMS, crate::sentences::PARAMS_NOT_OBJECT))
        }
    };
    Ok(match id {
        Some(id) => Message::Request(Request { id, method, params }),
        None => Message::Notification { method, params },
    })
}

/// A success response.
#[must_use]
pub fn result(id: &Id, result: Value) -> Value {
    let id = match id {
        Id::Number(n) => Value::from(*n),
        Id::Text(s) => Value::String(s.clone()),
    };
    // Moved in (`json!` would copy the result through serde's value serializer).
    let mut response = Map::new();
    response.insert("jsonrpc".into(), "2.0".into());
    response.insert("id".into(), id);
    response.insert("result".into(), result);
    Value::Object(response)
}

/// An error response; `id` is null when the request's id could not be read.
#[must_use]
pub fn error(id: Option<&Id>, error: &RpcError) -> Value {
    written_error(id, error.code, &error.message, error.data.as_ref())
}

/// An error response without data, from its code and sentence (no [`RpcError`] made for it).
#[must_use]
pub fn refusal(id: Option<&Id>, code: ErrorCode, message: &str) -> Value {
    written_error(id, code, message, None)
}

fn written_error(id: Option<&Id>, code: ErrorCode, message: &str, data: Option<&Value>) -> Value {
    object(&mut |o| {
        o.text("jsonrpc", "2.0");
        match id {
            Some(id) => o.field("id", id),
            None => o.field("id", &Raw("null")),
        }
        let mut e = o.nested("error");
        e.field("code", &i64::from(code.0));
        e.text("message", message);
        if let Some(data) = data {
            e.field("data", data);
        }
        e.close();
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn code_of(body: &str) -> i32 {
        parse(body.as_bytes()).unwrap_err().error.code.0
    }

    #[test]
    fn requests_and_notifications_are_told_apart() {
        let r = parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert_eq!(
            r,
            Message::Request(Request {
                id: Id::Number(1),
                method: "ping".into(),
                params: Map::new()
            })
        );
        let n = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert_eq!(
            n,
            Message::Notification {
                method: "notifications/initialized".into(),
                params: Map::new()
            }
        );
        let s = parse(br#"{"jsonrpc":"2.0","id":"a","result":{"action":"accept"}}"#).unwrap();
        assert_eq!(
            s,
            Message::Response { id: Id::Text("a".into()), answer: json!({"action": "accept"}) }
        );
        let e = parse(br#"{"jsonrpc":"2.0","id":"b","error":{"code":-1,"message":"no"}}"#).unwrap();
        assert_eq!(
            e,
            Message::Response {
                id: Id::Text("b".into()),
                answer: json!({"error": {"code": -1, "message": "no"}})
            }
        );
    }

    #[test]
    fn malformed_bodies_get_the_matching_code() {
        assert_eq!(code_of("{"), -32700);
        assert_eq!(code_of(""), -32700);
        assert_eq!(code_of("[]"), -32600);
        assert_eq!(code_of("3"), -32600);
        assert_eq!(code_of(r#"{"id":1,"method":"ping"}"#), -32600);
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), -32600);
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#), -32600);
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"method":7}"#), -32600);
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#), -32602);
    }

    #[test]
    fn an_error_keeps_the_id_when_it_was_readable() {
        let m = parse(br#"{"jsonrpc":"1.0","id":"k","method":"ping"}"#).unwrap_err();
        assert_eq!(m.id, Some(Id::Text("k".into())));
        let v = error(m.id.as_ref(), &m.error);
        assert_eq!(v["id"], "k");
        assert_eq!(v["error"]["code"], -32600);
    }
}
