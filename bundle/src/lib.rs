//! The bundle shared by the Worker, the live check and the tests: the tool catalogue, the
//! agent instructions, the tab wire protocol and the encoding of results.
#![no_std]
#![warn(missing_docs)]
#![warn(clippy::std_instead_of_core, clippy::alloc_instead_of_core)]

extern crate alloc;

pub mod agent;
pub mod catalogue;
pub mod code;
pub mod content;
mod digest;
pub mod fields;
pub mod protocol;
pub mod raw;
#[cfg(feature = "shapes")]
pub mod shapes;
#[cfg(feature = "shapes")]
pub mod tab_module;
#[cfg(feature = "shapes")]
pub mod tab_wire;
pub mod unshown;
pub mod words;

pub use digest::BUNDLE_DIGEST;

/// What only the tab end's generator reads (feature `shapes`: scripts/bundle and the tests),
/// never compiled into the Worker.
#[cfg(feature = "shapes")]
#[doc(hidden)]
#[macro_export]
macro_rules! __shapes {
    ($($item:tt)*) => { $($item)* };
}

/// Without feature `shapes`: nothing.
#[cfg(not(feature = "shapes"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __shapes {
    ($($item:tt)*) => {};
}

/// `parts` with `between` between each two, as `parts.join(between)` writes them: one function
/// for every join and concat of the Worker, where `join` and `concat` link std's copy loop
/// specialised for each length of `between` (1 KB of code).
#[must_use]
pub fn joined(parts: &[&str], between: &str) -> alloc::string::String {
    let mut out = alloc::string::String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push_str(between);
        }
        out.push_str(part);
    }
    out
}

/// Reads JSON into `T` through a `serde_json::Value`: the parser is compiled once, for `Value`,
/// and each `T` only reads a tree ([`fields`]), where `serde_json::from_slice::<T>` compiles a
/// parser for every `T` (tens of KiB of wasm across the relay's message types). Text is read
/// with `serde_json::from_slice::<Value>` everywhere too, never `from_str`, a second parser.
/// None when the text is not JSON or not the shape of `T`.
#[must_use]
pub fn from_json<T: fields::FromValue>(bytes: &[u8]) -> Option<T> {
    parse(bytes).and_then(T::from_value)
}

/// JSON text as a `Value` (None: not JSON): one copy for every reader, with its error's drop.
#[inline(never)]
pub(crate) fn parse(bytes: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(bytes).ok()
}

/// A message read from across a wire, as [`from_json`] reads it, with why it is not one.
///
/// # Errors
/// [`fields::WireError`]: not JSON, or not the shape of `T`.
pub fn read_wire<T: fields::FromValue>(bytes: &[u8]) -> Result<T, fields::WireError> {
    read_tree(parse(bytes))
}

/// A tree read as `T`, with why it is not one (None: the text was not JSON).
pub(crate) fn read_tree<T: fields::FromValue>(
    value: Option<serde_json::Value>,
) -> Result<T, fields::WireError> {
    T::from_value(value.ok_or(fields::WireError::NotJson)?).ok_or(fields::WireError::Not(T::WHAT))
}

/// The instructions the relay gives every agent (MCP `instructions`).
pub const INSTRUCTIONS: &str = include_str!("../data/instructions.md");

/// The part of the instructions for the chat bar only (`<tabrelay-chat>` in the tab): its model
/// reads INSTRUCTIONS, then this. Only the tab's copy of the bundle carries it (not the Worker).
pub const CHAT_INSTRUCTIONS: &str = include_str!("../data/instructions_chat.md");

/// The catalogue the app owner generated from the app's actions, as JSON.
pub const CATALOGUE_JSON: &str = include_str!("../data/catalogue.json");

#[cfg(test)]
mod tests {
    /// Joined as `join` joins and `concat` concatenates, for none, one and several parts.
    #[test]
    fn joined_as_join() {
        let parts = ["a", "", "bc", "é\n"];
        for n in 0..=parts.len() {
            for between in ["", ", ", "\n"] {
                assert_eq!(super::joined(&parts[..n], between), parts[..n].join(between));
            }
        }
    }
}
