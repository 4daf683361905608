//! Connect codes: the short code a waiting page shows and the person's tab approves, and the
//! life of one connection attempt, from waiting to an authorization code redeemed once.
//!
//! Each code's session lives in its own Durable Object (named by the normalised code); the
//! object applies [`apply`] to what it stored and stores what that leaves. By job: the code's
//! value ([`code`]), the session machine ([`session`]), its row in the object's storage
//! ([`stored`]) and the wire between the Worker and the object ([`wire`]).

pub mod code;
pub mod session;
pub mod stored;
pub mod wire;

#[cfg(test)]
mod fixtures;

pub use code::{
    read_ticket, ticket, ConnectCode, LinkRef, Named, CODE_ALPHABET, CODE_CHECK_LEN, CODE_LEN,
    CODE_RANDOM_LEN, LINK_LEN, LINK_NONCE_LEN,
};
pub use session::{apply, forget_at, place, place_said, Session, Stage};
pub use wire::{
    CodeReply, CodeRequest, Command, Description, Granted, PollState, Redemption, Requester, Revoke,
};

/// Sentences the tab shows when a code cannot be approved.
pub use crate::sentences::connect_code as refusal;
