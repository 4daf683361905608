//! Whether a call may go to a tab, by the list agents see (the focused tab's stated list, else
//! the bundled catalogue): the tool is known, its `Mcp-Param-*` headers agree with its
//! arguments, and how it takes tasks. The pairing decides it (the list is the pairing's); the
//! rendering of the list for agents is the Worker's side's.

use serde_json::{Map, Value};
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::protocol::{Setting, StatedTool, ToolList};

use crate::pairing::tasks::Support;

/// Whether `name` is a tool of the list agents see (a tool the person refused included: the
/// tab refuses its calls with a sentence). `status` is answered before this is asked.
#[must_use]
pub fn known(stated: Option<&ToolList>, catalogue: &Catalogue, name: &str) -> bool {
    match stated {
        Some(list) => list.tool(name).is_some(),
        None => catalogue.tool(name).is_some(),
    }
}

/// How a tool of the list agents see takes tasks (what [`list`] says of it): as the tab's
/// definition says, else "optional" when the person is asked first (the call waits for them),
/// else "forbidden" (answered in one piece). The bundled catalogue says nothing of tasks.
#[must_use]
pub fn task_support(stated: Option<&ToolList>, name: &str) -> Support {
    let Some(tool) = stated.and_then(|l| l.tool(name)) else { return Support::Forbidden };
    match tool.definition.get("execution") {
        Some(execution) => Support::of_execution(execution),
        None => default_support(tool).unwrap_or(Support::Forbidden),
    }
}

/// The input schema of `name` in the list agents see (the focused tab's stated list, else the
/// bundled catalogue).
#[must_use]
pub fn input_schema<'a>(
    stated: Option<&'a ToolList>,
    catalogue: &'a Catalogue,
    name: &str,
) -> Option<&'a Value> {
    match stated {
        Some(list) => list.tool(name)?.definition.get("inputSchema"),
        None => catalogue.tool(name).map(|t| &t.input),
    }
}

/// The first `Mcp-Param-{Name}` header of a 2026-07-28 call that does not mirror its argument
/// (SEP-2243 custom headers): a property of `schema`, at any depth, that says `x-mcp-header:
/// Name` has its argument in `args` exactly when `headers` (lowercased `name` → raw value) has
/// the header, and the header (whitespace dropped, `=?base64?…?=` decoded) says the argument's
/// value: a string as it is, a boolean as `true`/`false`, an integer as its value. A header the
/// client got wrong, or could not decode, names the header; None: all agree.
///
/// Checked where the tool's schema is (the pairing, from the focused tab's stated list), not in
/// the Worker, which has no tool list of its own: the Worker passes the headers with the call,
/// and a mismatch is answered before the call reaches the tab, so an intermediary that routed
/// on the header never disagrees with what the tab was asked.
#[must_use]
pub fn param_header_mismatch(
    schema: &Value,
    args: Option<&Value>,
    headers: &Map<String, Value>,
) -> Option<String> {
    let Some(Value::Object(properties)) = schema.get("properties") else { return None };
    for (key, property) in properties {
        let arg = args.and_then(|a| a.get(key)).filter(|v| !v.is_null());
        let Some(Value::String(name)) = property.get("x-mcp-header") else {
            match param_header_mismatch(property, arg, headers) {
                Some(header) => return Some(header),
                None => continue,
            }
        };
        let sent = headers.get(name.to_ascii_lowercase().as_str()).and_then(Value::as_str);
        let agrees = match (arg, sent.map(crate::http::header_value)) {
            (None, None) => true,
            (Some(arg), Some(Some(header))) => mirrors(arg, &header),
            _ => false,
        };
        if !agrees {
            return Some(tabrelay_bundle::joined(&["Mcp-Param-", name], ""));
        }
    }
    None
}

/// Whether a header's decoded value says an argument's value (an object or array cannot be
/// mirrored: clients leave such a tool out).
fn mirrors(arg: &Value, header: &str) -> bool {
    match arg {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        // An integer by value ("07" is 7); another number (which the spec does not let a
        // header mirror) as JSON writes it. No float parsing: it would cost the upload KiBs.
        Value::Number(n) => match n.as_i64() {
            Some(i) => header.parse::<i64>() == Ok(i),
            None => header.as_bytes() == tabrelay_bundle::fields::Encode::to_json(arg),
        },
        _ => false,
    }
}

/// How the relay lets a tab's tool that states no `execution` take tasks (the list agents see
/// says it as the tool's `execution`): a tool the person is asked about may become a task (a
/// client that polls tasks polls while the person decides).
#[must_use]
pub fn default_support(tool: &StatedTool) -> Option<Support> {
    let unsaid = !tool.definition.contains_key("execution");
    (unsaid && tool.setting == Setting::Asks).then_some(Support::Optional)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_number_other_than_an_integer_is_mirrored_as_json_writes_it() {
        for (arg, same, other) in [
            (json!(1.5), "1.5", "1.50"),
            (json!(u64::MAX), "18446744073709551615", "1.8446744073709552e19"),
            (json!(-7), "-07", "7"),
        ] {
            assert!(mirrors(&arg, same), "{arg} {same}");
            assert!(!mirrors(&arg, other), "{arg} {other}");
        }
    }
}
