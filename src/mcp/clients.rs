//! When each agent app gives up on a tool call, from sources: a call from a client that gives
//! up sooner than the relay's wait is answered before it does (the person is still being asked;
//! the agent reads the history afterwards). One table; a client is known by the name it gives
//! (`clientInfo.name` in 2026-07-28, else the name it registered with), matched word by word.
//!
//! Marks in the sources: "code" read in the client's own source or vendor changelog; "issue" a
//! public issue with logs; "secondary" a third-party page only. Read 2026-12-01 from stored
//! copies dated up to 2026-08; figures marked unknown had none anywhere.

/// A known client.
#[derive(Debug, Clone, Copy)]
pub struct KnownClient {
    /// Who it is.
    pub client: &'static str,
    /// The words its names contain (lower case, separated by one space), as sent in
    /// `clientInfo.name` or registered as `client_name`; the first entry that matches decides.
    pub names: &'static [&'static str],
    /// When it gives up on a tool call without an answer, in milliseconds; None: unknown, or it
    /// has no limit of its own.
    pub gives_up_ms: Option<u64>,
    /// Whether a progress notification restarts that limit (None: unknown).
    pub progress_resets: Option<bool>,
    /// Where the figures come from.
    #[cfg(test)]
    pub source: &'static str,
}

/// The table, most specific names first.
pub const KNOWN_CLIENTS: &[KnownClient] = &[
    KnownClient {
        client: "ChatGPT (connectors, apps, developer mode)",
        names: &["openai mcp", "chatgpt"],
        gives_up_ms: Some(60_000),
        progress_resets: Some(false), // it sends no progress token
        #[cfg(test)]
        source: "issue: community.openai.com/t/1369488 (\"tool calls timeout after ~60 seconds\", \"doesn't send progressToken\"); name: User-Agent openai-mcp/1.0.0 in t/1367543",
    },
    KnownClient {
        client: "Claude Code",
        names: &["claude code"],
        gives_up_ms: Some(300_000),
        progress_resets: Some(true),
        #[cfg(test)]
        source: "code: anthropics/claude-code CHANGELOG 2.1.187 (5-minute idle abort, CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT); issue: claude-code#78911 (\"no response or progress notification for 300s\"), #93143 (a body silent ~300 s is dropped); name: #43299",
    },
    KnownClient {
        client: "Claude (Desktop and claude.ai; both send claude-ai)",
        names: &["claude"],
        gives_up_ms: Some(240_000),
        progress_resets: Some(false),
        #[cfg(test)]
        source: "issue: anthropics/claude-code#64614, #44032, #65643 (Desktop: \"after waiting 4 minutes\", progress does not extend it); claude.ai: no figure found (claude-ai-mcp#115 suggests about 60 s), taken as Desktop's",
    },
    KnownClient {
        client: "Cursor",
        names: &["cursor"],
        gives_up_ms: Some(300_000),
        progress_resets: Some(false),
        #[cfg(test)]
        source: "issue: cursor/cursor#3510 (\"cancelled after exactly 5 minutes\"); name cursor-vscode in modelcontextprotocol/csharp-sdk#344",
    },
    KnownClient {
        client: "VS Code (Copilot agent mode)",
        names: &["visual studio code"],
        gives_up_ms: None, // no request timer; its fetch drops a body silent ~300 s
        progress_resets: None,
        #[cfg(test)]
        source: "code: microsoft/vscode src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts (cancellation only, tasks polled every 2 s, elicitation); issue: vscode#261734, #258869 (cut at 300 s)",
    },
    KnownClient {
        client: "Gemini CLI",
        names: &["gemini cli"],
        gives_up_ms: Some(600_000),
        progress_resets: Some(false),
        #[cfg(test)]
        source: "code: google-gemini/gemini-cli packages/core/src/tools/mcp-client.ts (MCP_DEFAULT_TIMEOUT_MSEC 10 min, no reset on progress), utils/fetch.ts (headers within 60 s, body silent 300 s), docs/tools/mcp-server.md",
    },
    KnownClient {
        client: "MCP Inspector (v1 web, v1 CLI, v2)",
        names: &["inspector"],
        gives_up_ms: Some(60_000),
        progress_resets: Some(false), // v2 resets; v1 web dies at the first progress after 60 s
        #[cfg(test)]
        source: "code: modelcontextprotocol/inspector client/src/lib/constants.ts (v1: 300 s, 60 s max total with progress), cli/src/client/tools.ts (SDK default 60 s), core/mcp/inspectorClient.ts (v2: 60 s idle)",
    },
    KnownClient {
        client: "Codex CLI",
        names: &["codex"],
        gives_up_ms: Some(60_000),
        progress_resets: None,
        #[cfg(test)]
        source: "secondary: openai/codex PR #3959 docs/config.md (tool_timeout_sec, default 60)",
    },
    KnownClient {
        client: "Zed",
        names: &["zed"],
        gives_up_ms: Some(60_000),
        progress_resets: Some(false),
        #[cfg(test)]
        source: "issue: zed-industries/zed#45378 (context_server_timeout, default 60 s), #56774 (not reset by progress)",
    },
    KnownClient {
        client: "Cline",
        names: &["cline"],
        gives_up_ms: Some(60_000),
        progress_resets: None,
        #[cfg(test)]
        source: "code: docs.cline.bot/mcp/configuring-mcp-servers (\"Network Timeout … default 1 minute\")",
    },
    KnownClient {
        client: "Goose",
        names: &["goose"],
        gives_up_ms: Some(300_000),
        progress_resets: None,
        #[cfg(test)]
        source: "secondary: goose extension docs' timeout: 300, quoted by developersdigest.tech",
    },
    KnownClient {
        client: "Windsurf",
        names: &["windsurf"],
        gives_up_ms: None,
        progress_resets: None,
        #[cfg(test)]
        source: "unknown: no figure found (names from apify/mcp-client-capabilities)",
    },
];

/// How long before a client gives up the relay answers: a tenth of its limit, at most 15 s.
#[must_use]
pub fn margin_ms(gives_up_ms: u64) -> u64 {
    (gives_up_ms / 10).min(15_000)
}

/// A name as words: ASCII letters and digits in lower case (the known names are ASCII; core's
/// Unicode tables cost 10 KiB of upload), every run of other characters one space, padded.
fn words(name: &str) -> String {
    let mut out = String::from(" ");
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// The table's entry for a client's name, if any.
#[must_use]
pub fn known(name: &str) -> Option<&'static KnownClient> {
    let name = words(name);
    KNOWN_CLIENTS
        .iter()
        .find(|k| k.names.iter().any(|n| crate::text::find(&name, &format!(" {n} ")).is_some()))
}

/// How long a call from this client may wait: the relay's wait, or less when the client is
/// known to give up sooner, unless the call gave a progress token and the client's limit
/// restarts on progress (the call path sends progress at least every 30 s).
#[must_use]
pub fn wait_ms(default_ms: u64, names: &[Option<&str>], progress_token: bool) -> u64 {
    let mut wait = default_ms;
    for known in names.iter().flatten().filter_map(|n| known(n)) {
        let kept_waiting = progress_token && known.progress_resets == Some(true);
        if let (Some(limit), false) = (known.gives_up_ms, kept_waiting) {
            wait = wait.min(limit - margin_ms(limit));
        }
    }
    wait
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_client_is_known_by_the_names_it_sends_and_registers() {
        for (name, client) in [
            ("openai-mcp", "ChatGPT"),
            ("ChatGPT", "ChatGPT"),
            ("claude-code", "Claude Code"),
            ("Claude Code", "Claude Code"),
            ("claude-ai", "Claude (Desktop"),
            ("Claude", "Claude (Desktop"),
            ("cursor-vscode", "Cursor"),
            ("Visual Studio Code - Insiders", "VS Code"),
            ("gemini-cli-mcp-client", "Gemini CLI"),
            ("Gemini CLI MCP Client", "Gemini CLI"),
            ("inspector-client", "MCP Inspector"),
            ("MCP Inspector", "MCP Inspector"),
            ("codex-mcp-client", "Codex"),
            ("Zed", "Zed"),
            ("windsurf-client", "Windsurf"),
        ] {
            let k = known(name).unwrap_or_else(|| panic!("{name} is known"));
            assert!(k.client.starts_with(client), "{name}: {}", k.client);
        }
        // Whole words only: a name that merely contains the letters is not the client.
        for name in ["optimized-agent", "mycursorless", "some-agent", "", "---"] {
            assert!(known(name).is_none(), "{name}");
        }
    }

    #[test]
    fn a_client_that_gives_up_sooner_is_answered_before_it_does() {
        assert_eq!(wait_ms(225_000, &[Some("openai-mcp"), None], false), 54_000);
        assert_eq!(wait_ms(225_000, &[None, Some("ChatGPT")], false), 54_000);
        assert_eq!(wait_ms(225_000, &[None, Some("MCP Inspector")], true), 54_000);
        assert_eq!(wait_ms(225_000, &[Some("claude-ai"), None], true), 225_000);
        assert_eq!(wait_ms(300_000, &[Some("claude-ai"), None], true), 225_000, "Desktop's 240 s");
        assert_eq!(wait_ms(225_000, &[Some("some-agent"), None], false), 225_000);
        assert_eq!(wait_ms(225_000, &[Some("Visual Studio Code")], false), 225_000, "no limit");
        // The smaller of the two names' limits decides.
        assert_eq!(wait_ms(225_000, &[Some("gemini-cli-mcp-client"), Some("Zed")], false), 54_000);
        // A shortened wait (tests) stays short.
        assert_eq!(wait_ms(6_000, &[Some("openai-mcp")], false), 6_000);
    }

    #[test]
    fn progress_keeps_a_client_waiting_only_when_its_limit_restarts_on_progress() {
        // Claude Code restarts its 300 s on progress: with a token the owner's longer wait holds.
        assert_eq!(wait_ms(600_000, &[Some("claude-code")], true), 600_000);
        assert_eq!(wait_ms(600_000, &[Some("claude-code")], false), 285_000);
        // Gemini CLI does not: 10 minutes whatever is sent.
        assert_eq!(wait_ms(900_000, &[Some("gemini-cli-mcp-client")], true), 585_000);
    }

    #[test]
    fn every_entry_says_where_its_figure_comes_from() {
        for k in KNOWN_CLIENTS {
            assert!(!k.source.is_empty() && !k.names.is_empty(), "{}", k.client);
            if let Some(limit) = k.gives_up_ms {
                assert!(margin_ms(limit) > 0 && margin_ms(limit) < limit, "{}", k.client);
            } else {
                assert!(
                    k.source.starts_with("unknown")
                        || k.source.contains("no request timer")
                        || k.client.starts_with("VS Code")
                );
            }
            for n in k.names {
                assert_eq!(words(n).trim(), *n, "{}: names are written as words", k.client);
            }
        }
    }
}
