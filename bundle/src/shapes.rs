//! The messages' shapes (feature `shapes`): what [`codec!`](crate::codec) declares of each
//! message, read only by the tab end's generator ([`crate::tab_wire`]) and the tests, never
//! compiled into the Worker.

use alloc::vec::Vec;

use crate::fields::{Flat, Take};

/// One field of a message as [`codec!`](crate::codec) declares it, for the tab end's
/// generated reader and writer (`tab/generated/wire.js`, written by [`crate::tab_wire`]): never
/// compiled into the Worker, which reads and writes through the same declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Its key.
    pub key: &'static str,
    /// Its JSON kind ([`Take::KIND`](crate::fields::Take::KIND)).
    pub kind: &'static str,
    /// What a missing field reads as, as declared (`None`, `false`, `Vec::new()`), which is
    /// then not written; `""`: the field is needed; [`Shape::EITHER`]: one of the fields so
    /// marked is needed.
    pub or: &'static str,
}

impl Shape {
    /// [`Shape::or`] of fields one of which is needed (a [`Flat`] type written by hand).
    pub const EITHER: &'static str = "either";
}

/// The kind of the field `field` picks out of `S` ([`Take::KIND`](crate::fields::Take::KIND)).
#[doc(hidden)]
pub fn kind_of<S, T: Take>(_field: impl Fn(&S) -> Option<&T>) -> &'static str {
    T::KIND
}

/// The fields of the [`Flat`] field `field` picks out of `S`.
#[doc(hidden)]
pub fn flat_of<S, T: Flat>(_field: impl Fn(&S) -> Option<&T>) -> Vec<Shape> {
    T::shapes()
}

/// A type tagged by one of its fields (`codec!(…, tag "type" { … })`): its variants' shapes,
/// for the tab end's generated reader and writer.
pub trait Tagged {
    /// The tag's key.
    const TAG: &'static str;
    /// Each variant's tag and fields (after the tag), in the declaration's order.
    fn variants() -> Vec<(&'static str, Vec<Shape>)>;
}

/// An enum written as one of its words (`codec!(…, enum { "word" => Variant, … })`): its words,
/// in the declaration's order, for the tab end's copy of the bundle (`DATA_CLASSES`, …).
pub trait Words {
    /// Each variant's word.
    const WORDS: &'static [&'static str];
}
