//! The pages a person sees in the browser that is connecting: the waiting page with the
//! connect code, and the page for a request that cannot go back to its app; their paths,
//! headers and the escaping of every text they show ([`escape_html`]). Words of the relay, on a
//! floor below `http` (whose answer of a page carries [`PAGE_HEADERS`]) and the routes.

use crate::sentences::page;

/// The Content-Security-Policy of every page: its own script only, never framed.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The headers of every page: HTML, never cached, its own script only ([`PAGE_CSP`]), never
/// framed, and no address of it told to where its links lead.
pub const PAGE_HEADERS: [(&str, &str); 5] = [
    ("content-type", "text/html; charset=utf-8"),
    ("cache-control", "no-store"),
    ("content-security-policy", PAGE_CSP),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "no-referrer"),
];

use tabrelay_bundle::protocol::{CONFIRM_MESSAGE, CONNECT_FRAGMENT};

/// The path of the waiting page's script.
pub const WAIT_SCRIPT_PATH: &str = "/authorize/wait.js";

/// The path the waiting page asks whether it may go on.
pub const STATUS_PATH: &str = "/authorize/status";

/// The path the waiting page's script posts its sealed request to, for its connect code: no
/// code exists until the page runs in a browser.
pub const CODE_PATH: &str = "/authorize/code";

/// Who asks, as the waiting page shows it.
pub struct Asker<'a> {
    /// The client's name (registered, or from its metadata document; not verified).
    pub name: &'a str,
    /// The domain that published its metadata document (verified), for such a client.
    pub verified_domain: Option<&'a str>,
    /// The host of its redirect URI, where the person is sent after approving; None when
    /// nowhere (an agent app on this computer, through `tabrelay-local`).
    pub redirect_host: Option<&'a str>,
}

impl Asker<'_> {
    /// Who asks, as HTML: a verified domain (and the name it gives, when another), or the name
    /// marked as not verified.
    fn who(&self) -> (String, String) {
        let name = escape_html(self.name);
        match self.verified_domain {
            Some(domain) => {
                let domain = escape_html(domain);
                let calls = if name == domain {
                    String::new()
                } else {
                    format!(page::calls_itself!("{}"), name)
                };
                let who = format!(
                    concat!(
                        "<strong>{}</strong> <span class=\"verified\" id=\"verified\">",
                        page::verified_domain!(),
                        "</span>{}"
                    ),
                    domain, calls
                );
                (domain, who)
            }
            None => {
                let who = format!(
                    concat!(
                        "<strong>{}</strong> <span class=\"muted\" id=\"unverified\">",
                        page::name_not_verified!(),
                        "</span>"
                    ),
                    name
                );
                (name, who)
            }
        }
    }
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d2330}\
.code{font:600 2.2rem/1.2 ui-monospace,monospace;letter-spacing:.12em;padding:.6rem 1rem;border:2px solid #3b5bdb;border-radius:.5rem;display:inline-block}\
[hidden]{display:none!important}.muted{color:#5c6370}#app-url{overflow-wrap:anywhere}.verified{color:#2b8a3e}a.button{display:inline-block;margin:.5rem 0;padding:.5rem 1rem;background:#3b5bdb;color:#fff;border-radius:.4rem;text-decoration:none}";

/// The waiting page: who asks, in which app (`app`: its name, then the address the link opens),
/// and where it returns; its script then asks the relay for the connect code with `sealed` (the
/// checked request) and shows the code and the link that opens the app with it.
#[must_use]
pub fn waiting(sealed: &str, asker: &Asker<'_>, app: (&str, &str)) -> String {
    let (title, who) = asker.who();
    format!(
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>",
            page::waiting_title!(),
            "</title><style>{style}</style></head><body><h1>",
            page::waiting_heading!("{title}"),
            "</h1><p>",
            page::waiting_asks!(
                "{who}",
                "<strong id=\"app\">{app}</strong> (<span id=\"app-url\">{app_url}</span>)"
            ),
            "{returns}</p><p>",
            page::enter_code!(),
            "</p>\
<p class=\"code\" id=\"code\">…</p>\
<p><a class=\"button\" id=\"link\" hidden target=\"_blank\" rel=\"noopener\">",
            page::open_with_code!(),
            "</a></p>\
<p id=\"status\" role=\"status\" data-request=\"{sealed}\" data-code-path=\"{code_path}\" data-status=\"{status}\">",
            page::making_code!(),
            "</p><p class=\"muted\">",
            page::code_rules!(),
            "</p><script src=\"{script}\"></script></body></html>"
        ),
        style = STYLE,
        title = title,
        who = who,
        app = escape_html(app.0),
        app_url = escape_html(app.1),
        // The sentence's hole filled by a replace, not a second format: 0.2 KiB less upload.
        returns = asker.redirect_host.map_or(String::new(), |host| crate::text::replace(
            page::waiting_returns!("<strong id=\"redirect-host\">{host}</strong>"),
            "{host}",
            &escape_html(host)
        )),
        sealed = escape_html(sealed),
        code_path = CODE_PATH,
        status = STATUS_PATH,
        script = WAIT_SCRIPT_PATH,
    )
}

/// Whether `address` (`http://host:port/`) is this computer's own: localhost, 127.0.0.0/8, ::1.
fn loopback(address: &str) -> bool {
    let host = crate::text::split_once(address, "://").map_or("", |(_, rest)| rest);
    let name = host.split([':', '/']).next().unwrap_or_default();
    let numeric = name.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    name == "localhost" || (numeric && name.starts_with("127.")) || host.starts_with("[::1]")
}

/// The connector address opened in a browser: what it is and how to add it in the agent apps
/// people use, and, for a loopback address, which of them reach it (MCP clients asking for a
/// stream or JSON still get the endpoint's 405).
#[must_use]
pub fn connector(address: &str, app_url: &str) -> String {
    let local = if loopback(address) {
        concat!("<p id=\"local\">", page::connector_local!(), "</p>")
    } else {
        ""
    };
    format!(
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>",
            page::connector_title!(),
            "</title><style>{style}</style></head><body><h1>",
            page::connector_heading!(),
            "</h1><p>",
            page::connector_adds!(
                "<strong id=\"address\">{address}</strong>",
                "<a id=\"app\" href=\"{app}\">the app</a>"
            ),
            "</p><ul id=\"clients\">\
<li><strong>Claude</strong> (web and desktop): Settings → Connectors → Add custom connector, with this address.</li>\
<li><strong>ChatGPT</strong>: Settings → Apps &amp; Connectors → Advanced settings → Developer mode, then Create, with this address and OAuth.</li>\
<li><strong>Claude Code</strong>: <code>claude mcp add --transport http tabrelay {address}</code>, then <code>/mcp</code> to sign in.</li>\
<li><strong>MCP Inspector</strong>: <code>npx @modelcontextprotocol/inspector --transport http --server-url {address}</code>.</li>\
</ul>{local}<p>",
            page::connector_next!(),
            "</p></body></html>"
        ),
        style = STYLE,
        address = escape_html(address),
        app = escape_html(app_url),
        local = local,
    )
}

/// The approval link for a code: the app, with the code's link reference (never the code)
/// in the fragment.
#[must_use]
pub fn approval_link(app_url: &str, link: &str) -> String {
    let mut url = String::from(app_url);
    url.push('#');
    url.push_str(CONNECT_FRAGMENT);
    url.push('=');
    url.push_str(link);
    url
}

/// The confirm page, opened by the tab that approved through the waiting page's link: whether
/// this browser's confirmation approved the code (`client` named), or the sentence saying why
/// not. Its script drops the ticket from the address bar, tells the window that opened it
/// whether it worked (nothing secret) and closes itself.
#[must_use]
pub fn confirmed(outcome: Result<&str, &str>) -> String {
    let (ok, heading, text) = match outcome {
        Ok(client) => {
            (true, page::approved!(), format!(page::connecting!("{}"), escape_html(client)))
        }
        Err(sentence) => (false, page::not_approved!(), escape_html(sentence)),
    };
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>{heading}</title><style>{STYLE}</style></head><body>\
<h1>{heading}</h1><p id=\"confirmed\" role=\"status\" data-ok=\"{ok}\" data-message=\"{CONFIRM_MESSAGE}\">{text}</p>\
<script src=\"{WAIT_SCRIPT_PATH}\"></script></body></html>"
    )
}

/// A page that says why a request cannot go on and what to do; `error` is the OAuth error
/// code, for a program reading the page.
#[must_use]
pub fn refused(error: &str, sentence: &str) -> String {
    format!(
        concat!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>",
            page::refused_title!(),
            "</title><style>{}</style></head><body><h1>",
            page::refused_heading!(),
            "</h1><p id=\"reason\" data-error=\"{}\">{}</p></body></html>"
        ),
        STYLE,
        escape_html(error),
        escape_html(sentence)
    )
}

/// The waiting page's script: asks once for its connect code (handing back the sealed
/// request), shows it, then asks every 1.5 s whether the code was approved, then goes on.
pub const WAIT_SCRIPT: &str = concat!(
    r#"(() => {
  const done = document.getElementById('confirmed');
  if (done) {
    // The confirm page: the ticket leaves the address bar; the tab that opened it hears whether
    // it worked (nothing secret), and the window closes once a success was read.
    history.replaceState(null, '', location.pathname);
    const ok = done.dataset.ok === 'true';
    if (window.opener) window.opener.postMessage({ type: done.dataset.message, ok }, '*');
    if (ok) setTimeout(() => window.close(), 1500);
    return;
  }
  const el = document.getElementById('status');
  let code = null;
  const stop = (sentence) => { el.textContent = sentence || '"#,
    page::code_dead!(),
    r#"'; };
  const start = async () => {
    let made;
    try {
      const r = await fetch(el.dataset.codePath, { method: 'POST', body: el.dataset.request, credentials: 'same-origin', cache: 'no-store' });
      made = await r.json();
    } catch {
      el.textContent = '"#,
    page::relay_unreachable!(),
    r#"';
      return setTimeout(start, 3000);
    }
    if (!made.code) return stop(made.sentence);
    code = made.code;
    document.getElementById('code').textContent = code;
    const link = document.getElementById('link');
    link.href = made.link;
    link.hidden = false;
    el.dataset.code = code;
    el.textContent = '"#,
    page::waiting_for_approval!(),
    r#"';
    setTimeout(ask, 1000);
  };
  const ask = async () => {
    let state;
    try {
      const r = await fetch(el.dataset.status + '?code=' + encodeURIComponent(code), { credentials: 'same-origin', cache: 'no-store' });
      state = await r.json();
    } catch {
      el.textContent = '"#,
    page::relay_unreachable!(),
    r#"';
      return setTimeout(ask, 3000);
    }
    if ((state.state === 'approved' || state.state === 'denied') && state.redirect) {
      el.textContent = state.state === 'approved' ? '"#,
    page::going_back_approved!(),
    r#"' : '"#,
    page::going_back_denied!(),
    r#"';
      location.replace(state.redirect);
    } else if (state.state === 'waiting') {
      setTimeout(ask, 1500);
    } else {
      stop(state.sentence);
    }
  };
  start();
})();
"#
);

/// Text safe inside HTML text and quoted attributes.
#[must_use]
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped_in_text_and_quoted_attributes() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    const APP: (&str, &str) = ("Orders", "https://app.example/");

    #[test]
    fn the_wait_scripts_sentences_fit_its_strings() {
        for s in [
            page::code_dead!(),
            page::relay_unreachable!(),
            page::waiting_for_approval!(),
            page::going_back_approved!(),
            page::going_back_denied!(),
        ] {
            assert!(!s.contains(['\'', '\\']), "{s}");
        }
    }

    #[test]
    fn the_connector_page_names_its_address_and_the_app_escaped() {
        let page = connector("https://relay.example/", "https://app.example/?a=1&b=<2>");
        assert!(page.contains("<strong id=\"address\">https://relay.example/</strong>"));
        assert!(page.contains("--server-url https://relay.example/"));
        assert!(page.contains("href=\"https://app.example/?a=1&amp;b=&lt;2&gt;\""));
        assert!(!page.contains("<script"), "the page needs no script");
        assert!(!page.contains("id=\"local\""), "an https address is reached from the web");
        for local in ["http://127.0.0.1:8787/", "http://localhost:8787/", "http://[::1]:8787/"] {
            assert!(connector(local, "x").contains("Only agent apps on this computer"), "{local}");
        }
        assert!(!connector("https://127.example/", "x").contains("id=\"local\""));
    }

    #[test]
    fn every_client_supplied_string_is_escaped() {
        let page = waiting(
            "seal.\"tag<",
            &Asker {
                name: "<script>alert(1)</script>",
                verified_domain: None,
                redirect_host: Some("a\"b.example"),
            },
            ("<i>App</i>", "https://app.example/?a=1&b=2"),
        );
        assert!(page.contains("not verified"));
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("a&quot;b.example"));
        assert!(page.contains(
            "your open tab of <strong id=\"app\">&lt;i&gt;App&lt;/i&gt;</strong> (<span id=\"app-url\">https://app.example/?a=1&amp;b=2</span>)"
        ));
        assert!(page.contains("data-request=\"seal.&quot;tag&lt;\""), "{page}");
        assert_eq!(
            approval_link("https://app.example/", "ABCDEFGH0123456789"),
            "https://app.example/#tabrelay-connect=ABCDEFGH0123456789"
        );
    }

    /// The page says where the person is sent after approving only when somewhere: an agent
    /// app on this computer (through `tabrelay-local`) sends them nowhere.
    #[test]
    fn the_page_says_where_approval_sends_the_person_only_when_somewhere() {
        let asker =
            |redirect_host| Asker { name: "Claude Code", verified_domain: None, redirect_host };
        let page = waiting("s.t", &asker(Some("127.0.0.1")), APP);
        assert!(page.contains(". After approval you will be sent back to <strong id=\"redirect-host\">127.0.0.1</strong>.</p>"), "{page}");
        let page = waiting("s.t", &asker(None), APP);
        assert!(!page.contains("sent back") && !page.contains("redirect-host"), "{page}");
        assert!(page.contains("</span>).</p>"), "{page}");
    }

    #[test]
    fn a_document_client_is_shown_by_its_verified_domain() {
        let asker = |name| Asker {
            name,
            verified_domain: Some("claude.ai"),
            redirect_host: Some("claude.ai"),
        };
        let page = waiting("s.t", &asker("Claude"), APP);
        assert!(page.contains("Connect claude.ai to your tab"), "{page}");
        assert!(page.contains("verified domain") && !page.contains("not verified"));
        assert!(page.contains("calls itself “Claude”"));
        let page = waiting("s.t", &asker("claude.ai"), APP);
        assert!(!page.contains("calls itself"), "a name that is the domain is said once");
        let page = waiting("s.t", &asker("<b>"), APP);
        assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
    }

    #[test]
    fn the_confirm_page_says_what_came_of_it_escaped() {
        let page = confirmed(Ok("<b>Claude"));
        assert!(
            page.contains(r#"data-ok="true""#) && page.contains("&lt;b&gt;Claude is connecting")
        );
        let page = confirmed(Err("Not <this> browser."));
        assert!(page.contains(r#"data-ok="false""#) && page.contains("Not &lt;this&gt; browser."));
        assert!(page.contains(WAIT_SCRIPT_PATH) && !page.contains("<script>"));
    }

    #[test]
    fn a_refusal_page_names_the_oauth_error() {
        let page = refused("invalid_client", "Can't <fetch>.");
        assert!(page.contains(r#"data-error="invalid_client""#));
        assert!(page.contains("Can&#39;t &lt;fetch&gt;."));
    }
}
