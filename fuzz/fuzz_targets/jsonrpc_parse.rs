//! `jsonrpc::parse` on any POST body: never panics, picks the code its input deserves, keeps
//! what it read, and a message it accepted reads the same when written out again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tabrelay::jsonrpc::{self, ErrorCode, Message};
use tabrelay_fuzz::id_value;

fuzz_target!(|data: &[u8]| {
    let parsed = jsonrpc::parse(data);
    assert_eq!(parsed, jsonrpc::parse(data), "parsing is deterministic");
    let is_json = serde_json::from_slice::<Value>(data).is_ok();
    match parsed {
        Err(bad) => {
            let code = bad.error.code;
            assert_eq!(code == ErrorCode::PARSE_ERROR, !is_json, "-32700 exactly when not JSON");
            assert!(
                [ErrorCode::PARSE_ERROR, ErrorCode::INVALID_REQUEST, ErrorCode::INVALID_PARAMS]
                    .contains(&code),
                "unexpected code {code:?}"
            );
            if code == ErrorCode::PARSE_ERROR {
                assert!(bad.id.is_none());
            }
            assert!(!bad.error.message.is_empty());
            let answer = jsonrpc::error(bad.id.as_ref(), &bad.error);
            assert_eq!(answer["jsonrpc"], "2.0");
            assert_eq!(answer["error"]["code"], code.0);
            assert_eq!(answer["id"], id_value(bad.id.as_ref()));
        }
        Ok(message) => {
            assert!(is_json);
            match message {
                Message::Request(r) => {
                    let (id, method, params) = (id_value(Some(&r.id)), &r.method, &r.params);
                    let again =
                        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                    let text = serde_json::to_vec(&again).unwrap();
                    let Ok(Message::Request(back)) = jsonrpc::parse(&text) else {
                        panic!("a request written out does not read back: {again}");
                    };
                    assert_eq!((&back.id, &back.method), (&r.id, &r.method));
                    if !tabrelay_fuzz::has_float(&Value::Object(r.params.clone())) {
                        assert_eq!(back.params, r.params);
                    }
                    assert_eq!(jsonrpc::result(&r.id, json!({}))["id"], again["id"]);
                }
                Message::Notification { method, params } => {
                    let again = json!({"jsonrpc": "2.0", "method": method, "params": params});
                    let text = serde_json::to_vec(&again).unwrap();
                    let Ok(Message::Notification { method: m, params: p }) = jsonrpc::parse(&text)
                    else {
                        panic!("a notification written out does not read back: {again}");
                    };
                    assert_eq!(m, method);
                    if !tabrelay_fuzz::has_float(&Value::Object(params.clone())) {
                        assert_eq!(p, params);
                    }
                }
                Message::Response { id, answer } => {
                    // The answer is the result, or the error under "error".
                    let Ok(Value::Object(whole)) = serde_json::from_slice::<Value>(data) else {
                        panic!("a response from no object")
                    };
                    assert_eq!(whole.get("id").and_then(jsonrpc::Id::of), Some(id));
                    match whole.get("error") {
                        Some(error) => assert_eq!(answer, json!({ "error": error })),
                        None => assert_eq!(Some(&answer), whole.get("result")),
                    }
                }
            }
        }
    }
});
