//! Tabrelay: a remote MCP server and OAuth 2.1 server on Cloudflare Workers that carries an
//! agent's tool calls to a person's open browser tab. The modules outside `shell` are the pure
//! core (tested natively); `shell` translates between workerd and that core.
#![warn(missing_docs)]

/// The wasm heap: rlsf's TLSF (two-level segregated fit), 3.0 KiB less upload (gzip) than
/// std's dlmalloc. Allocation and free take constant time however long a Durable Object's heap
/// lives (a free block is found from two bitmaps, never by walking a list), and it needs no
/// `unsafe` here.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: rlsf::GlobalTlsf<Heap> = rlsf::GlobalTlsf::new();

/// The heap's options: the memory it grows into joined into one pool (a block of more than the
/// 64 KiB page is served from the pages before it once freed); a reallocation is a new block
/// and a copy, as a `Vec`'s doubling makes anyway (0.4 KiB of code less than growing in place).
#[cfg(target_arch = "wasm32")]
struct Heap;

#[cfg(target_arch = "wasm32")]
impl rlsf::GlobalTlsfOptions for Heap {
    const ENABLE_REALLOCATION: bool = false;
}

pub mod config;
pub mod crypto;
pub mod http;
pub mod jsonrpc;
pub mod keys;
pub mod limits;
pub mod machine;
pub mod mcp;
pub mod oauth;
pub mod pages;
pub mod pairing;
pub mod routes;
pub mod saga;
pub mod senders;
pub mod sentences;
pub mod sql;
pub mod text;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod shell;
