//! Tabrelay: a remote MCP server and OAuth 2.1 server on Cloudflare Workers that carries an
//! agent's tool calls to a person's open browser tab. The modules outside `shell` are the pure
//! core (tested natively); `shell` translates between workerd and that core.
#![warn(missing_docs)]

pub mod config;
pub mod crypto;
pub mod http;
pub mod jsonrpc;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod pages;
pub mod pairing;
pub mod senders;
pub mod sentences;
pub mod sql;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod shell;
