//! The pages a person sees in the browser that is connecting: the waiting page with the
//! connect code, and the page for a request that cannot go back to its app.

use crate::http::escape_html;

/// The Content-Security-Policy of every page: its own script only, never framed.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The fragment key the approval link puts the code under (the tab client reads it).
pub const CONNECT_FRAGMENT: &str = "tabrelay-connect";

/// The path of the waiting page's script.
pub const WAIT_SCRIPT_PATH: &str = "/authorize/wait.js";

/// The path the waiting page asks whether it may go on.
pub const STATUS_PATH: &str = "/authorize/status";

/// Who asks, as the waiting page shows it.
pub struct Asker<'a> {
    /// The client's registered name (not verified).
    pub name: &'a str,
    /// The host of its redirect URI.
    pub redirect_host: &'a str,
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d2330}\
.code{font:600 2.2rem/1.2 ui-monospace,monospace;letter-spacing:.12em;padding:.6rem 1rem;border:2px solid #3b5bdb;border-radius:.5rem;display:inline-block}\
.muted{color:#5c6370}a.button{display:inline-block;margin:.5rem 0;padding:.5rem 1rem;background:#3b5bdb;color:#fff;border-radius:.4rem;text-decoration:none}";

/// The waiting page: the code to type in the app's tab, the link that opens it there, who asks.
#[must_use]
pub fn waiting(code_display: &str, app_url: &str, asker: &Asker<'_>) -> String {
    let link = format!("{}#{CONNECT_FRAGMENT}={}", app_url, code_display);
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>Connect to your tab</title><style>{STYLE}</style></head><body>\
<h1>Connect {name} to your tab</h1>\
<p><strong>{name}</strong> <span class=\"muted\">(name given by the app, not verified)</span> asks to act in your open tab of the app. \
After approval you will be sent back to <strong>{host}</strong>.</p>\
<p>In your tab of the app, enter this code and approve it:</p>\
<p class=\"code\" id=\"code\">{code}</p>\
<p><a class=\"button\" href=\"{link}\" target=\"_blank\" rel=\"noopener\">Open the app with this code</a></p>\
<p id=\"status\" role=\"status\" data-code=\"{code}\" data-status=\"{status}\">Waiting for approval in your tab…</p>\
<p class=\"muted\">The code works once and for ten minutes. If you did not start this, close this page.</p>\
<script src=\"{script}\"></script></body></html>",
        name = escape_html(asker.name),
        host = escape_html(asker.redirect_host),
        code = escape_html(code_display),
        link = escape_html(&link),
        status = STATUS_PATH,
        script = WAIT_SCRIPT_PATH,
    )
}

/// A page that says why a request cannot go on and what to do.
#[must_use]
pub fn refused(sentence: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Cannot connect</title><style>{STYLE}</style></head>\
<body><h1>This connection cannot go on</h1><p id=\"reason\">{}</p></body></html>",
        escape_html(sentence)
    )
}

/// The waiting page's script: asks every 1.5 s whether the code was approved, then goes on.
pub const WAIT_SCRIPT: &str = r#"(() => {
  const el = document.getElementById('status');
  const code = el.dataset.code;
  const ask = async () => {
    let state;
    try {
      const r = await fetch(el.dataset.status + '?code=' + encodeURIComponent(code), { credentials: 'same-origin', cache: 'no-store' });
      state = await r.json();
    } catch {
      el.textContent = 'Cannot reach the relay; still trying…';
      return setTimeout(ask, 3000);
    }
    if ((state.state === 'approved' || state.state === 'denied') && state.redirect) {
      el.textContent = state.state === 'approved' ? 'Approved. Going back to the app…' : 'Denied in your tab. Going back to the app…';
      location.replace(state.redirect);
    } else if (state.state === 'waiting') {
      setTimeout(ask, 1500);
    } else {
      el.textContent = state.sentence || 'This code can no longer be used; start connecting again from the app.';
    }
  };
  setTimeout(ask, 1000);
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_supplied_string_is_escaped() {
        let page = waiting(
            "ABCDE-12345",
            "https://app.example/",
            &Asker { name: "<script>alert(1)</script>", redirect_host: "a\"b.example" },
        );
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("a&quot;b.example"));
        assert!(page.contains("https://app.example/#tabrelay-connect=ABCDE-12345"));
    }
}
