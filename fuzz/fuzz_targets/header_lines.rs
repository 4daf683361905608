//! `http::HeaderLines` (a request's headers, as the shell reads them in one crossing) and
//! `http::header_text` (a response's, as it writes them) on any text. Checks that every entry
//! read is a name without a colon and a value without a line break, that the endpoint's header
//! read never panics and takes `Mcp-Param-*` headers only for a `tools/call`, and that headers
//! written as text read back as they were, a line break refused rather than written.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::http::{header_text, HeaderLines};
use tabrelay::mcp::exchange::RequestHeaders;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = HeaderLines(text);
    let entries: Vec<(&str, &str)> = lines.entries().collect();
    for (name, value) in &entries {
        assert!(!name.contains([':', '\n']) && !value.contains('\n'), "{name:?}: {value:?}");
        assert!(lines.get(name).is_some(), "a name read is found");
    }
    let read = RequestHeaders::read(lines);
    if read.method.as_deref() != Some("tools/call") {
        assert!(read.params.is_empty());
    }
    match header_text(&entries) {
        Some(written) => {
            let back: Vec<(&str, &str)> = HeaderLines(&written).entries().collect();
            assert_eq!(back, entries);
        }
        None => assert!(entries.iter().any(|(n, v)| format!("{n}{v}").contains('\r'))),
    }
});
