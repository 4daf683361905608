//! Log messages (`notifications/message`, the session era's `logging` capability): what a tab
//! says while it works on a call (the person being asked, and allowing the step) goes to the
//! client on the call's stream at `info`, as well as progress when the client asked for that.
//!
//! The relay keeps no state per session (see [`super::session`]), so it cannot hold a level a
//! client sets: every message it sends is at `info`, a level at or below that (`debug`, `info`)
//! asks for what the client gets anyway and is taken, and a higher one is refused with a
//! sentence rather than taken and not honoured. A session that set no level hears them too
//! (the revision lets the server choose then). The stateless revision declares no `logging` and
//! sends none (its per-request `logLevel` is not read).

use serde_json::{Map, Value};

use crate::jsonrpc::{object, ErrorCode, RpcError};
use crate::sentences;

/// The levels of RFC 5424 as MCP names them, least severe first.
pub const LEVELS: [&str; 8] =
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// The level of every message the relay sends.
pub const LEVEL: &str = "info";

/// Who a message is from (its `logger`): the tab the call went to.
pub const LOGGER: &str = "tab";

fn rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == level)
}

/// The answer to `logging/setLevel` with these params: `{}` for a level at or below
/// [`LEVEL`] (every message goes out, as asked), an error the client can act on otherwise.
pub fn set_level(params: &Map<String, Value>) -> Result<Value, RpcError> {
    let invalid = |m: &str| RpcError::new(ErrorCode::INVALID_PARAMS, m);
    let level = params.get("level").and_then(Value::as_str);
    match level.map(|l| (l, rank(l))) {
        Some((_, Some(r))) if Some(r) <= rank(LEVEL) => Ok(Value::Object(Map::new())),
        Some((_, Some(_))) => Err(invalid(sentences::LOG_LEVEL_NOT_HELD)),
        _ => Err(invalid(sentences::LOG_LEVEL_UNKNOWN)),
    }
}

/// The log message saying `data` (a sentence of the relay's; a tab's words in it are quoted).
#[must_use]
pub fn message(data: &str) -> Value {
    object(&mut |o| {
        o.text("jsonrpc", "2.0");
        o.text("method", "notifications/message");
        let mut params = o.nested("params");
        params.text("level", LEVEL);
        params.text("logger", LOGGER);
        params.text("data", data);
        params.close();
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn level(l: Value) -> Result<Value, RpcError> {
        set_level(json!({ "level": l }).as_object().unwrap())
    }

    #[test]
    fn a_level_at_or_below_info_is_taken_and_a_higher_one_refused_not_pretended() {
        assert_eq!(level(json!("debug")).unwrap(), json!({}));
        assert_eq!(level(json!("info")).unwrap(), json!({}));
        for higher in &LEVELS[2..] {
            let e = level(json!(higher)).unwrap_err();
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{higher}");
            assert_eq!(e.message, sentences::LOG_LEVEL_NOT_HELD);
        }
        for bad in [json!("verbose"), json!(1), json!(null), json!("INFO")] {
            assert_eq!(level(bad).unwrap_err().message, sentences::LOG_LEVEL_UNKNOWN);
        }
        assert!(set_level(&Map::new()).is_err(), "no level at all");
    }

    #[test]
    fn a_message_is_at_info_from_the_tab() {
        let m = message("The person allowed this step.");
        assert_eq!(m["method"], "notifications/message");
        assert_eq!(
            m["params"],
            json!({"level": "info", "logger": "tab", "data": "The person allowed this step."})
        );
        assert_eq!(rank(LEVEL), Some(1));
    }
}
