//! What agents are told that the live check also reads: the relay's sentences of a tab that is
//! gone or absent, the tab end's sentence of a question withdrawn (the tab's copy of the bundle
//! carries it to tab/presence.js), and the view card's address. Written once, here.

/// No tab of the pairing is connected.
pub const NO_TAB: &str = "No tab of the app is open in the browser this connection was approved from: open the app there, then try again.";
/// The tab closed or reloaded while a call waited.
pub const TAB_GONE: &str = "The tab went away (closed or reloaded) before it answered, so whether the step was done is not known: read the history before trying again.";
/// Said for a call of a connection the person forgot in their tab (or that was revoked) while
/// it waited, ran or was asked about: by the relay to the waiting request, by the tab end for a
/// call of it still on its way.
pub const FORGOTTEN: &str = "The person forgot this connection in their tab (or it was revoked), so this call was stopped and nothing more of it will reach you; connect again only if the person asks you to.";
/// Said for a call of an agent the person stopped in their tab, until they let it go on: by the
/// relay (which refuses the connection's calls) and by the tab end.
pub const AGENT_STOPPED: &str = "The person stopped this agent in their tab, so this call did not run, and none will until they let it go on there; stop, and ask them in plain words whether to continue.";
/// The view card's address.
pub const VIEW_URI: &str = "ui://tabrelay/view";
/// The MIME type of an MCP App.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// Said by the tab end for a call whose question to the person became moot before they answered
/// (the app showed another dataset, the tab is closing); `{reason}` says which, in words.
pub const WITHDRAWN: &str = "The question about this call was withdrawn before the person answered ({reason}), so nothing was changed.";

/// Whether `text` says [`WITHDRAWN`] (with any reason), as the tab end words it.
#[must_use]
pub fn says_withdrawn(text: &str) -> bool {
    let (before, after) = WITHDRAWN.split_once("{reason}").unwrap_or((WITHDRAWN, ""));
    text.find(before).is_some_and(|at| text[at + before.len()..].contains(after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_withdrawal_is_known_by_its_sentence_whatever_the_reason() {
        let said = WITHDRAWN.replace("{reason}", "the app showed another dataset");
        assert!(says_withdrawn(&said));
        assert!(says_withdrawn(&alloc::format!("<data>\"{said}\"</data> The app said so.")));
        assert!(!says_withdrawn("The request was withdrawn."));
        assert!(!says_withdrawn(TAB_GONE));
    }
}
