//! What the relay says to agents that the live check also reads: the sentences of a tab that
//! is gone or absent, and the view card's address. Written once, here.

/// No tab of the pairing is connected.
pub const NO_TAB: &str = "No tab of the app is open in the browser this connection was approved from: open the app there, then try again.";
/// The tab closed or reloaded while a call waited.
pub const TAB_GONE: &str = "The tab went away (closed or reloaded) before it answered, so whether the step was done is not known: read the history before trying again.";
/// The view card's address.
pub const VIEW_URI: &str = "ui://tabrelay/view";
/// The MIME type of an MCP App.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
