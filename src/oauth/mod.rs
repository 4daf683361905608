//! The OAuth 2.1 authorization server: metadata, registration, authorization with the tab as
//! consent screen, and tokens. Every function here is pure: time and randomness come in.

pub mod authorize;
pub mod cimd;
pub mod clients;
pub mod connect;
pub mod error;
pub mod exchange;
pub mod hosts;
pub mod lookalike;
pub mod metadata;
pub mod pkce;
pub mod refresh;
pub mod token;
