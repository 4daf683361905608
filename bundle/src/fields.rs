//! The relay's own JSON messages read field by field from a `serde_json::Value`, without
//! serde's `Deserialize`: each derived one costs a few KiB of wasm, these readers are shared.
//!
//! A type implements [`FromValue`], written by [`read_json!`](crate::read_json) from the list
//! of its fields (each named once, as the Rust field, which is also its JSON key unless given);
//! [`crate::from_json`] reads it from JSON text. Each field is read by its type ([`Take`]):
//! None when it is missing or not of its type, as a derived `Deserialize` refuses it; an
//! `Option` field takes a missing or null field as None, as a derived `Option` field does.

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

    /// The fields not taken yet, as an object's map.
    #[must_use]
    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// A type read from a JSON value, by [`Fields`] or [`variant`].
pub trait FromValue: Sized {
    /// What the type is, for the error when a value does not read as one.
    const WHAT: &'static str;

    /// The value as this type, when it is one.
    fn from_value(value: Value) -> Option<Self>;
}

/// A message between the Worker and one of its objects: written as JSON, read back through
/// [`FromValue`] (one codec for every such message).
pub trait Message: serde::Serialize + FromValue {
    /// The message as a body.
    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A body read back; None when it is not this message.
    fn decode(body: &[u8]) -> Option<Self> {
        crate::from_json(body)
    }
}

/// A field read by its type: how [`read_json!`](crate::read_json) reads each field.
pub trait Take: Sized {
    /// The field `key` of `f`, taken (None: missing, or not of this type).
    fn take(f: &mut Fields, key: &str) -> Option<Self>;
}

impl Take for String {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.string(key)
    }
}

impl Take for u64 {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.u64(key)
    }
}

impl Take for u32 {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.u32(key)
    }
}

impl Take for bool {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.bool(key)
    }
}

impl Take for Vec<String> {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.strings(key)
    }
}

impl Take for Vec<u64> {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        match f.0.remove(key) {
            Some(Value::Array(items)) => items.iter().map(Value::as_u64).collect(),
            _ => None,
        }
    }
}

/// A pair written as a two-element array (`["g1", 1000]`).
impl Take for (String, u64) {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        match f.0.remove(key) {
            Some(Value::Array(pair)) => match pair.as_slice() {
                [Value::String(s), n] => Some((s.clone(), n.as_u64()?)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl<T: FromValue> Take for Vec<T> {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        match f.0.remove(key) {
            Some(Value::Array(items)) => items.into_iter().map(T::from_value).collect(),
            _ => None,
        }
    }
}

impl<T: FromValue> Take for T {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.read(key)
    }
}

impl<T: Take> Take for Option<T> {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        match f.0.get(key) {
            None | Some(Value::Null) => {
                f.0.remove(key);
                Some(None)
            }
            Some(_) => T::take(f, key).map(Some),
        }
    }
}

/// A whole value read by its type: how [`read_json!`](crate::read_json) reads a variant of one
/// value.
pub trait Whole: Sized {
    /// The value as this type, when it is one.
    fn whole(value: Value) -> Option<Self>;
}

impl Whole for String {
    fn whole(value: Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

impl<T: FromValue> Whole for T {
    fn whole(value: Value) -> Option<Self> {
        T::from_value(value)
    }
}

/// The name of an enum's variant written `"name"` or `{"name": value}` and its value (None
/// for a bare name).
#[must_use]
pub fn tagged(value: Value) -> Option<(String, Option<Value>)> {
    match value {
        Value::String(name) => Some((name, None)),
        Value::Object(m) if m.len() == 1 => {
            let (name, inner) = m.into_iter().next()?;
            Some((name, Some(inner)))
        }
        _ => None,
    }
}

/// Writes [`FromValue`] for a type from the list of its fields, each named once:
///
/// - a type around one value: `read_json!(SealId, "a seal", (String))`;
/// - a struct: `read_json!(Image, "a picture", { data, mime_type = "mimeType", width })`:
///   each field read by its type ([`Take`]) under its own name or the key given;
///   `field or expr` reads a missing field as `expr`, `field else "other"` as the field
///   `other` (read before it by a reader that leaves it, as numbers do);
/// - an enum written as serde writes it by default (`"name"` or `{"name": …}`):
///   `read_json!(Stage, "a stage", enum { "waiting" => Waiting, "approved" => Approved {
///   pairing }, "done" => Done(CallReply) })`: a bare name, named fields, or one value;
/// - an enum tagged by one of its fields (`{"state": "waiting", …}`): `read_json!(PollState,
///   "a state", tag "state" { "waiting" => Waiting { expires_in_ms }, "done" => Done })`; a
///   variant of one value reads the rest of the object as it.
#[macro_export]
macro_rules! read_json {
    ($ty:ident, $what:literal, { $($body:tt)* }) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            fn from_value(value: serde_json::Value) -> Option<Self> {
                #[allow(unused_mut)]
                let mut f = $crate::fields::Fields::of(value)?;
                Some($crate::read_json!(@fields f, [Self], $($body)*))
            }
        }
    };
    ($ty:ident, $what:literal, ($one:ty)) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            fn from_value(value: serde_json::Value) -> Option<Self> {
                <$one as $crate::fields::Whole>::whole(value).map(Self)
            }
        }
    };
    ($ty:ident, $what:literal, enum { $($tag:literal => $variant:ident $(($one:ty))? $({ $($body:tt)* })?),* $(,)? }) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            fn from_value(value: serde_json::Value) -> Option<Self> {
                let (name, inner) = $crate::fields::tagged(value)?;
                $(
                    if name == $tag {
                        return $crate::read_json!(@variant inner, $variant $(($one))? $({ $($body)* })?);
                    }
                )*
                None
            }
        }
    };
    ($ty:ident, $what:literal, tag $key:literal { $($tag:literal => $variant:ident $(($one:ty))? $({ $($body:tt)* })?),* $(,)? }) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            fn from_value(value: serde_json::Value) -> Option<Self> {
                let mut f = $crate::fields::Fields::of(value)?;
                let name = f.string($key)?;
                $(
                    if name == $tag {
                        return $crate::read_json!(@tagged f, $variant $(($one))? $({ $($body)* })?);
                    }
                )*
                None
            }
        }
    };
    // The fields of a struct or a variant, into `$path { … }`.
    (@fields $f:ident, [$($path:tt)*], $($field:ident $(= $key:literal)? $(else $fallback:literal)? $(or $default:expr)?),* $(,)?) => {
        $($path)* { $($field: $crate::read_json!(@field $f, $field $(= $key)? $(else $fallback)? $(or $default)?)),* }
    };
    (@field $f:ident, $field:ident) => {
        $crate::fields::Take::take(&mut $f, stringify!($field))?
    };
    (@field $f:ident, $field:ident = $key:literal) => {
        $crate::fields::Take::take(&mut $f, $key)?
    };
    (@field $f:ident, $field:ident else $fallback:literal) => {
        if $f.has(stringify!($field)) {
            $crate::fields::Take::take(&mut $f, stringify!($field))?
        } else {
            $crate::fields::Take::take(&mut $f, $fallback)?
        }
    };
    (@field $f:ident, $field:ident or $default:expr) => {
        if $f.has(stringify!($field)) {
            $crate::fields::Take::take(&mut $f, stringify!($field))?
        } else {
            $default
        }
    };
    // An externally tagged variant from its value.
    (@variant $inner:ident, $variant:ident) => {
        $inner.is_none().then_some(Self::$variant)
    };
    (@variant $inner:ident, $variant:ident ($one:ty)) => {
        <$one as $crate::fields::Whole>::whole($inner?).map(Self::$variant)
    };
    (@variant $inner:ident, $variant:ident { $($body:tt)* }) => {{
        #[allow(unused_mut)]
        let mut f = $crate::fields::Fields::of($inner?)?;
        Some($crate::read_json!(@fields f, [Self::$variant], $($body)*))
    }};
    // A variant tagged by a field, from the rest of the object.
    (@tagged $f:ident, $variant:ident) => {
        Some(Self::$variant)
    };
    (@tagged $f:ident, $variant:ident ($one:ty)) => {
        <$one as $crate::fields::FromValue>::from_value(serde_json::Value::Object($f.into_map()))
            .map(Self::$variant)
    };
    (@tagged $f:ident, $variant:ident { $($body:tt)* }) => {
        Some($crate::read_json!(@fields $f, [Self::$variant], $($body)*))
    };
}

impl FromValue for Value {
    const WHAT: &'static str = "JSON";
    fn from_value(value: Value) -> Option<Self> {
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq)]
    struct Picture {
        data: String,
        mime_type: String,
        width: u32,
        alt: Option<String>,
        tries: u32,
    }
    crate::read_json!(Picture, "a picture", { data, mime_type = "mimeType", width, alt, tries or 0 });

    #[derive(Debug, PartialEq)]
    enum Stage {
        Waiting,
        Approved { pairing: String },
        Said(String),
    }
    crate::read_json!(Stage, "a stage", enum {
        "waiting" => Waiting,
        "approved" => Approved { pairing },
        "said" => Said(String),
    });

    #[derive(Debug, PartialEq)]
    enum Poll {
        Done,
        Waiting { left_ms: u64 },
        Picture(Picture),
    }
    crate::read_json!(Poll, "a poll", tag "state" {
        "done" => Done,
        "waiting" => Waiting { left_ms },
        "picture" => Picture(Picture),
    });

    fn read<T: FromValue>(v: Value) -> Option<T> {
        T::from_value(v)
    }

    #[test]
    fn a_struct_reads_each_field_by_its_type_and_name() {
        let p = read::<Picture>(json!({"data": "x", "mimeType": "image/png", "width": 3}));
        let want = Picture {
            data: "x".into(),
            mime_type: "image/png".into(),
            width: 3,
            alt: None,
            tries: 0,
        };
        assert_eq!(p, Some(want));
        let full = json!({"data": "x", "mimeType": "m", "width": 3, "alt": "a", "tries": 2});
        assert_eq!(read::<Picture>(full).map(|p| (p.alt, p.tries)), Some((Some("a".into()), 2)));
        assert!(read::<Picture>(json!({"data": "x", "mimeType": "m", "width": 3, "alt": null}))
            .is_some());
        for bad in [
            json!({"data": "x", "width": 3}),                   // missing
            json!({"data": 1, "mimeType": "m", "width": 3}),    // wrong type
            json!({"data": "x", "mimeType": "m", "width": -1}), // not a whole number
            json!({"data": "x", "mimeType": "m", "width": 3, "alt": 5}), // an option of another type
            json!({"data": "x", "mimeType": "m", "width": 3, "tries": "2"}), // a default of another type
            json!("x"),
        ] {
            assert_eq!(read::<Picture>(bad.clone()), None, "{bad}");
        }
    }

    #[test]
    fn an_enum_reads_a_bare_name_named_fields_or_one_value() {
        assert_eq!(read::<Stage>(json!("waiting")), Some(Stage::Waiting));
        assert_eq!(
            read::<Stage>(json!({"approved": {"pairing": "p"}})),
            Some(Stage::Approved { pairing: "p".into() })
        );
        assert_eq!(read::<Stage>(json!({"said": "hi"})), Some(Stage::Said("hi".into())));
        for bad in [
            json!("approved"),
            json!({"waiting": {}}),
            json!({"approved": {}}),
            json!({"said": 1}),
            json!("other"),
            json!({"approved": {"pairing": "p"}, "waiting": null}),
        ] {
            assert_eq!(read::<Stage>(bad.clone()), None, "{bad}");
        }
    }

    #[test]
    fn a_tagged_enum_reads_its_tag_then_the_rest() {
        assert_eq!(read::<Poll>(json!({"state": "done"})), Some(Poll::Done));
        assert_eq!(
            read::<Poll>(json!({"state": "waiting", "left_ms": 5})),
            Some(Poll::Waiting { left_ms: 5 })
        );
        let pic = json!({"state": "picture", "data": "d", "mimeType": "m", "width": 1});
        assert!(matches!(read::<Poll>(pic), Some(Poll::Picture(p)) if p.data == "d"));
        for bad in [json!({"state": "waiting"}), json!({"state": "gone"}), json!({}), json!("done")]
        {
            assert_eq!(read::<Poll>(bad.clone()), None, "{bad}");
        }
    }
}
