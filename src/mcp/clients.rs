//! The clients known to give up on a tool call sooner than the relay's wait, and when: a call
//! from one is answered before it gives up. One table; a client is known by the name it gives
//! (`clientInfo.name` in 2026-07-28, else the name it registered with).

/// A known client: a piece of its name (lower case) and when it gives up on a call, in ms.
pub struct KnownClient {
    /// What its name contains, lower case.
    pub name_contains: &'static str,
    /// When it gives up on a tool call, in milliseconds.
    pub gives_up_ms: u64,
    /// Where that figure comes from.
    pub source: &'static str,
}

/// The table.
pub const KNOWN_CLIENTS: [KnownClient; 2] = [
    KnownClient {
        name_contains: "claude",
        gives_up_ms: 240_000,
        source: "Claude Desktop reports a 4-minute tool timeout (claude.ai: 300 s)",
    },
    KnownClient {
        name_contains: "inspector",
        gives_up_ms: 10_000,
        source: "MCP Inspector: MCP_SERVER_REQUEST_TIMEOUT defaults to 10 s",
    },
];

/// How long before a client gives up the relay answers: a tenth of its limit, at most 15 s.
#[must_use]
pub fn margin_ms(gives_up_ms: u64) -> u64 {
    (gives_up_ms / 10).min(15_000)
}

/// How long a call from this client may wait: the relay's wait, or less when the client is
/// known to give up sooner.
#[must_use]
pub fn wait_ms(default_ms: u64, names: &[Option<&str>]) -> u64 {
    let mut wait = default_ms;
    for name in names.iter().flatten() {
        let name = name.to_ascii_lowercase();
        for known in &KNOWN_CLIENTS {
            if name.contains(known.name_contains) {
                wait = wait.min(known.gives_up_ms - margin_ms(known.gives_up_ms));
            }
        }
    }
    wait
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_client_is_answered_before_it_gives_up() {
        assert_eq!(wait_ms(225_000, &[Some("Claude"), None]), 225_000);
        assert_eq!(wait_ms(225_000, &[None, Some("MCP Inspector")]), 9_000);
        assert_eq!(wait_ms(225_000, &[Some("some-agent"), None]), 225_000);
        // A shortened wait (tests) stays short.
        assert_eq!(wait_ms(6_000, &[Some("claude-ai")]), 6_000);
        for known in &KNOWN_CLIENTS {
            assert!(margin_ms(known.gives_up_ms) > 0 && !known.source.is_empty());
        }
    }
}
