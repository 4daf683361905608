//! The relay's own JSON messages read field by field from a `serde_json::Value`, without
//! serde's `Deserialize`: each derived one costs a few KiB of wasm, these readers are shared.
//!
//! A type implements [`FromValue`]; [`crate::from_json`] reads it from JSON text. Each reader
//! is None when its field is missing or not of its type, as a derived `Deserialize` refuses
//! them; `optional_string` takes a missing or null field as None, as a derived `Option` field
//! does.

use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

/// A JSON object's fields, each taken once by name.
#[derive(Debug)]
pub struct Fields(Map<String, Value>);

impl Fields {
    /// The fields of `value`, when it is an object.
    #[must_use]
    pub fn of(value: Value) -> Option<Self> {
        match value {
            Value::Object(m) => Some(Self(m)),
            _ => None,
        }
    }

    /// Whether the field is there (null or not).
    #[must_use]
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// The field as it is (any JSON value).
    pub fn value(&mut self, key: &str) -> Option<Value> {
        self.0.remove(key)
    }

    /// A string field.
    pub fn string(&mut self, key: &str) -> Option<String> {
        match self.0.remove(key) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        }
    }

    /// A string field that may be missing or null (the outer None: of another type).
    pub fn optional_string(&mut self, key: &str) -> Option<Option<String>> {
        match self.0.remove(key) {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) => Some(Some(s)),
            Some(_) => None,
        }
    }

    /// A field of strings.
    pub fn strings(&mut self, key: &str) -> Option<Vec<String>> {
        match self.0.remove(key) {
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Some(s),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// A field of strings that may be missing or null (the outer None: of another type).
    pub fn optional_strings(&mut self, key: &str) -> Option<Option<Vec<String>>> {
        match self.0.get(key) {
            None | Some(Value::Null) => Some(None),
            Some(_) => self.strings(key).map(Some),
        }
    }

    /// A whole number field (0 or more).
    #[must_use]
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }

    /// A whole number field that fits 32 bits.
    #[must_use]
    pub fn u32(&self, key: &str) -> Option<u32> {
        self.u64(key).and_then(|n| u32::try_from(n).ok())
    }

    /// A true or false field.
    #[must_use]
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.0.get(key).and_then(Value::as_bool)
    }

    /// A field that is itself a [`FromValue`] type.
    pub fn read<T: FromValue>(&mut self, key: &str) -> Option<T> {
        T::from_value(self.0.remove(key)?)
    }
}

/// A type read from a JSON value, by [`Fields`] or [`variant`].
pub trait FromValue: Sized {
    /// What the type is, for the error when a value does not read as one.
    const WHAT: &'static str;

    /// The value as this type, when it is one.
    fn from_value(value: Value) -> Option<Self>;
}

/// The name of an externally tagged enum's variant (`"name"` or `{"name": {…}}`) and its
/// fields (None for a variant written as a bare name).
#[must_use]
pub fn variant(value: Value) -> Option<(String, Option<Fields>)> {
    match value {
        Value::String(name) => Some((name, None)),
        Value::Object(m) if m.len() == 1 => {
            let (name, inner) = m.into_iter().next()?;
            Some((name, Fields::of(inner)))
        }
        _ => None,
    }
}

impl FromValue for Value {
    const WHAT: &'static str = "JSON";
    fn from_value(value: Value) -> Option<Self> {
        Some(value)
    }
}
