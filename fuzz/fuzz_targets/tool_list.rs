//! `ToolList::read` on any JSON a tab's `tools` message may hold, then the `tools/list` the
//! relay makes of it. Checks that a list the relay takes keeps every limit (count, bytes,
//! names by the rule, distinct, none the relay's own), reads back the same when written out,
//! and becomes a tool list sorted by name with `status`, no refused tool, and each other
//! tool's setting said; and that a refused list has a sentence.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tabrelay::tools::{self, SETTING_META};
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::protocol::{
    valid_tool_name, Setting, ToolList, MAX_TOOLS, MAX_TOOL_LIST_BYTES, STATUS_TOOL,
};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else { return };
    // Read once: parsing the bundled catalogue on every input would dominate the run.
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    let catalogue = CATALOGUE.get_or_init(Catalogue::bundled);
    let list = match ToolList::read(&value) {
        Ok(list) => list,
        Err(why) => {
            let s = why.sentence();
            assert!(s.starts_with("The tool list was refused") && s.ends_with('.'), "{s}");
            return;
        }
    };
    assert!(list.tools().len() <= MAX_TOOLS);
    assert!(
        data.len() >= MAX_TOOL_LIST_BYTES
            || serde_json::to_vec(&value).unwrap().len() <= MAX_TOOL_LIST_BYTES
    );
    for (i, t) in list.tools().iter().enumerate() {
        assert!(valid_tool_name(&t.name) && t.name != STATUS_TOOL, "{:?}", t.name);
        assert!(list.tools()[..i].iter().all(|o| o.name != t.name), "{} twice", t.name);
        assert_eq!(t.definition["name"], Value::from(t.name.as_str()));
        assert_eq!(t.definition["inputSchema"]["type"], "object");
    }
    if !tabrelay_fuzz::has_float(&value) {
        assert_eq!(ToolList::read(&list.to_value()).as_ref(), Ok(&list), "reads back differently");
    }
    let shown = tools::list(Some(&list), catalogue);
    let shown = shown.as_array().unwrap();
    let names: Vec<&str> = shown.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "not sorted by name: {names:?}");
    assert!(names.contains(&STATUS_TOOL));
    let kept = list.tools().iter().filter(|t| t.setting != Setting::Refused).count();
    assert_eq!(shown.len(), kept + 1);
    for t in shown.iter().filter(|t| t["name"] != STATUS_TOOL) {
        let setting = t["_meta"][SETTING_META].as_str().unwrap();
        assert!(["asks", "runs"].contains(&setting));
        assert!(t["description"].is_string());
        assert!(tools::known(Some(&list), catalogue, t["name"].as_str().unwrap()));
    }
});
