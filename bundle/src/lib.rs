//! The bundle shared by the Worker, the live check and the tests: the tool catalogue, the
//! agent instructions, the tab wire protocol and the encoding of results.
#![no_std]
#![warn(missing_docs)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;

pub mod catalogue;
pub mod content;
mod digest;
pub mod protocol;
pub mod tab_module;

pub use digest::BUNDLE_DIGEST;

/// The instructions the relay gives every agent (MCP `instructions`).
pub const INSTRUCTIONS: &str = include_str!("../data/instructions.md");

/// The catalogue the app owner generated from the app's actions, as JSON.
pub const CATALOGUE_JSON: &str = include_str!("../data/catalogue.json");
