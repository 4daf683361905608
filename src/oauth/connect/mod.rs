//! Connect codes: the short code a waiting page shows and the person's tab approves, and the
//! life of one connection attempt, from waiting to an authorization code redeemed once.
//!
//! Each code's session lives in its own Durable Object (named by the normalised code); the
//! object applies [`apply`] to what it stored and stores what it returns. By job: the code's
//! value ([`code`]), the session machine ([`session`]) and the wire between the Worker and the
//! object ([`wire`]).

pub mod code;
pub mod session;
pub mod wire;

#[cfg(test)]
mod fixtures;

pub use code::{
    read_ticket, ticket, ConnectCode, LinkRef, Named, CODE_ALPHABET, CODE_CHECK_LEN, CODE_LEN,
    CODE_RANDOM_LEN, LINK_LEN, LINK_NONCE_LEN,
};
pub use session::{apply, place, place_said, Session, Stage};
pub use wire::{CodeReply, CodeRequest, Command, Description, Granted, PollState, Revoke};

/// Sentences the tab shows when a code cannot be approved.
pub mod refusal {
    /// The code is not one the relay knows or has expired.
    pub const UNKNOWN: &str =
        "That connect code is not waiting for approval: check it against the waiting page, or start connecting again.";
    /// The code is not of the connect code's form.
    pub const MALFORMED: &str = "A connect code has ten letters and digits, such as ABCDE-12345.";
    /// The code was approved or denied already.
    pub const USED: &str = "That connect code was already approved or denied.";
    /// Tabs tried the code too often; it is dead.
    pub const TOO_MANY_TRIES: &str =
        "That connect code was tried too often and no longer works; start connecting again.";
    /// The confirm page's ticket is unknown, used or too old.
    pub const TICKET_STALE: &str =
        "This confirmation is no longer valid: press Approve in your tab again, or type the whole code shown on the waiting page there.";
    /// The browser that opened the confirm page did not open the waiting page.
    pub const NOT_THIS_BROWSER: &str = tabrelay_bundle::protocol::consent::NOT_THIS_BROWSER;
}
