//! The bundle shared by the Worker, the live check and the tests: the tool catalogue, the
//! agent instructions, the tab wire protocol and the encoding of results.
#![no_std]
#![warn(missing_docs)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;

pub mod catalogue;
pub mod content;
mod digest;
pub mod fields;
pub mod protocol;
pub mod tab_module;

pub use digest::BUNDLE_DIGEST;

/// Reads JSON into `T` through a `serde_json::Value`: the parser is compiled once, for `Value`,
/// and each `T` only reads a tree, where `serde_json::from_slice::<T>` compiles a parser for
/// every `T` (tens of KiB of wasm across the relay's message types). Text is read with
/// `serde_json::from_slice::<Value>` everywhere too, never `from_str`, which is a second parser.
///
/// # Errors
/// The text is not JSON, or not the shape of `T`.
pub fn from_json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<T> {
    serde_json::from_slice::<serde_json::Value>(bytes).and_then(T::deserialize)
}

/// The instructions the relay gives every agent (MCP `instructions`).
pub const INSTRUCTIONS: &str = include_str!("../data/instructions.md");

/// The catalogue the app owner generated from the app's actions, as JSON.
pub const CATALOGUE_JSON: &str = include_str!("../data/catalogue.json");
