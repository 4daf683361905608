//! The view card: a small MCP App (`ui://` resource, `text/html;profile=mcp-app`) that an agent
//! app able to show one renders beside the tools that declare it. It shows what the tool
//! answered, refreshes by asking its host to call the status tool again, and opens the app.
//! It talks to nothing but its host (`postMessage`); its CSP allows no network at all.

use crate::sentences::card;
use serde_json::Value;

use crate::jsonrpc::{object, Raw};
use tabrelay_bundle::fields::json_text;

// The card's address and type live in the bundle: the live check reads them too.
pub use tabrelay_bundle::agent::{VIEW_MIME, VIEW_URI};
/// The tool the card's Refresh calls.
pub const REFRESH_TOOL: &str = "status";

/// The card's `_meta`: no domain may be reached, no border asked.
const RESOURCE_META: Raw<'_> =
    Raw(r#"{"ui":{"csp":{"connectDomains":[],"resourceDomains":[]},"prefersBorder":true}}"#);

/// The card as `resources/list` names it.
#[must_use]
pub fn listing() -> Value {
    object(&mut |o| {
        o.text("uri", VIEW_URI);
        o.text("name", "view");
        o.text("title", "Tabrelay view");
        o.text("description", crate::sentences::VIEW_DESCRIPTION);
        o.text("mimeType", VIEW_MIME);
        o.field("_meta", &RESOURCE_META);
    })
}

/// The card as `resources/read` answers it; `app_url` is where Open in the app goes.
#[must_use]
pub fn contents(app_url: &str) -> Value {
    let text = html(app_url);
    object(&mut |o| {
        o.text("uri", VIEW_URI);
        o.text("mimeType", VIEW_MIME);
        o.text("text", &text);
        o.field("_meta", &RESOURCE_META);
    })
}

/// The card's page. The app's address enters only as a JSON string inside the script, with
/// `<` escaped so it cannot end the script element.
#[must_use]
pub fn html(app_url: &str) -> String {
    // Written as the relay writes every JSON string (serde_json's escapes).
    let app = json_text(&app_url.to_owned()).replace('<', "\\u003c");
    format!(
        concat!(
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>Tabrelay</title>
<style>
body{{font:14px system-ui,sans-serif;margin:0;padding:12px;color:#222;background:#fff}}
pre{{white-space:pre-wrap;word-break:break-word;background:#f5f5f5;padding:8px;border-radius:6px;max-height:320px;overflow:auto}}
button{{font:inherit;margin-right:8px;padding:4px 10px}}
</style></head>
<body>
<div><button id="refresh" type="button">Refresh</button><button id="open" type="button">Open in the app</button></div>
<pre id="shown">"#,
            card::waiting!(),
            r#"</pre>
<script>
(() => {{
  const APP_URL = {app};
  const shown = document.getElementById('shown');
  const waiting = new Map();
  let next = 1;
  const ask = (method, params) => new Promise((resolve, reject) => {{
    const id = next++;
    waiting.set(id, {{resolve, reject}});
    window.parent.postMessage({{jsonrpc: '2.0', id, method, params}}, '*');
  }});
  const show = (result) => {{
    const blocks = (result && Array.isArray(result.content)) ? result.content : [];
    const text = blocks.filter((b) => b && b.type === 'text').map((b) => String(b.text)).join('\n\n');
    shown.textContent = text || '"#,
            card::nothing_to_show!(),
            r#"';
  }};
  window.addEventListener('message', (event) => {{
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== '2.0') return;
    if (m.id !== undefined && waiting.has(m.id) && !m.method) {{
      const w = waiting.get(m.id); waiting.delete(m.id);
      m.error ? w.reject(m.error) : w.resolve(m.result);
    }} else if (m.method === 'ui/notifications/tool-result') {{
      show(m.params);
    }}
  }});
  document.getElementById('refresh').addEventListener('click', () => {{
    shown.textContent = '"#,
            card::asking!(),
            r#"';
    ask('tools/call', {{name: '{refresh}', arguments: {{}}}}).then(show,
      () => {{ shown.textContent = '"#,
            card::refresh_failed!(),
            r#"'; }});
  }});
  document.getElementById('open').addEventListener('click', () => {{
    ask('ui/open-link', {{url: APP_URL}}).catch(() => {{}});
  }});
  ask('ui/initialize', {{protocolVersion: '2026-01-26', appInfo: {{name: 'tabrelay-view', version: '1'}}, appCapabilities: {{}}}})
    .then(() => window.parent.postMessage({{jsonrpc: '2.0', method: 'ui/notifications/initialized'}}, '*'), () => {{}});
}})();
</script>
</body></html>
"#
        ),
        app = app,
        refresh = REFRESH_TOOL,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_cards_sentences_fit_its_script() {
        for s in [card::nothing_to_show!(), card::asking!(), card::refresh_failed!()] {
            assert!(!s.contains(['\'', '\\', '<']), "{s}");
        }
    }

    #[test]
    fn the_card_is_an_mcp_app_that_reaches_nothing() {
        let c = contents("https://app.example/");
        assert_eq!(c["mimeType"], VIEW_MIME);
        assert_eq!(c["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
        let page = c["text"].as_str().unwrap();
        assert!(page.contains("default-src 'none'"));
        assert!(page.contains(r#"const APP_URL = "https://app.example/";"#));
        assert!(!page.contains("fetch(") && !page.contains("XMLHttpRequest"));
    }

    #[test]
    fn the_app_address_cannot_end_the_script() {
        let page = html("https://a.example/</script><script>alert(1)</script>");
        assert_eq!(page.matches("</script>").count(), 1);
    }
}
