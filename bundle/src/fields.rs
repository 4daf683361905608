//! The relay's own JSON messages read field by field from a `serde_json::Value`, without
//! serde's `Deserialize`: each derived one costs a few KiB of wasm, these readers are shared.
//!
//! A type implements [`FromValue`], written by [`codec!`](crate::codec) from the list of its
//! fields (each named once, as the Rust field, which is also its JSON key unless given);
//! [`crate::from_json`] reads it from JSON text. Each field is read by its type ([`Take`]):
//! None when it is missing or not of its type, as a derived `Deserialize` refuses it; an
//! `Option` field takes a missing or null field as None, as a derived `Option` field does.
//!
//! A message that crosses a wire (the Worker's requests to its objects and their replies, the
//! tab's socket) is declared once with [`codec!`](crate::codec), which writes both its reader
//! and its writer ([`Encode`]) from the same list, as rustls's codec does: a field cannot be
//! added to one direction only. What does not read is a [`WireError`].

use alloc::string::String;
#[doc(hidden)]
pub use alloc::vec::Vec;

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

    /// Which of `tags` the string field `key` names (its place in `tags`; `tags.len()` when
    /// it names none or is not a string): how a [`codec!`](crate::codec) enum tagged by a
    /// field finds its variant.
    #[doc(hidden)]
    #[inline(never)]
    pub fn tag(&mut self, key: &str, tags: &[&str]) -> usize {
        let Some(name) = self.string(key) else { return tags.len() };
        tags.iter().position(|tag| *tag == name).unwrap_or(tags.len())
    }

    /// Whether the field is missing or null (then taken): an `Option` field's None, checked
    /// by one copy for every type.
    #[inline(never)]
    fn absent(&mut self, key: &str) -> bool {
        match self.0.get(key) {
            None => true,
            Some(Value::Null) => self.0.remove(key).is_some(),
            Some(_) => false,
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
        let Some(Value::Array(items)) = self.0.remove(key) else { return None };
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            let Value::String(s) = item else { return None };
            list.push(s);
        }
        Some(list)
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
    /// The JSON kind of its value, for the tab end's generated reader.
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "any";

    /// The value as this type, when it is one.
    fn from_value(value: Value) -> Option<Self>;

    /// A variant's value (`{"name": value}`) as this type, when it is one: a type read from
    /// an object's fields reads them where they are, without making the object again.
    #[doc(hidden)]
    fn from_variant(inner: &mut Inner) -> Option<Self> {
        Self::from_value(inner.value()?)
    }
}

/// A message between the Worker and one of its objects: one [`codec!`](crate::codec)
/// declaration writes it ([`Encode`]) and reads it back ([`FromValue`]).
pub trait Message: Encode + FromValue {
    /// The message as a body.
    fn encode(&self) -> Vec<u8> {
        self.to_json()
    }

    /// A body read back.
    ///
    /// # Errors
    /// [`WireError`] when the body is not JSON, or not this message.
    fn decode(body: &[u8]) -> Result<Self, WireError> {
        crate::read_wire(body)
    }
}

/// Why bytes from across a wire (an object's fetch, its reply lines, a tab's socket) are not
/// the message expected: the one error of every wire between the relay's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// Not JSON text at all.
    NotJson,
    /// JSON, but not this message: what was expected ([`FromValue::WHAT`]).
    Not(&'static str),
}

impl core::fmt::Display for WireError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotJson => f.write_str("not JSON"),
            Self::Not(what) => write!(f, "not {what}"),
        }
    }
}

/// A field read by its type: how [`codec!`](crate::codec) reads each field.
pub trait Take: Sized {
    /// The JSON kind of the field, for the tab end's generated reader: `string`,
    /// `count` (a whole number from 0), `number`, `bool`, `list`, `object` or `any`.
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "any";

    /// The field `key` of `f`, taken (None: missing, or not of this type).
    fn take(f: &mut Fields, key: &str) -> Option<Self>;
}

impl Take for String {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "string";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.string(key)
    }
}

impl Take for u64 {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "count";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.u64(key)
    }
}

impl Take for u32 {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "count";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.u32(key)
    }
}

/// A count.
impl Take for usize {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "count";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.u64(key).and_then(|n| usize::try_from(n).ok())
    }
}

/// A signed whole number (a JSON-RPC error's code).
impl Take for i64 {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "number";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.0.get(key).and_then(Value::as_i64)
    }
}

impl Take for bool {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "bool";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.bool(key)
    }
}

impl Take for Vec<String> {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "list";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.strings(key)
    }
}

impl Take for Vec<u64> {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "list";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        let Some(Value::Array(items)) = f.0.remove(key) else { return None };
        let mut list = Vec::with_capacity(items.len());
        for item in &items {
            list.push(item.as_u64()?);
        }
        Some(list)
    }
}

/// A pair written as a two-element array (`["g1", 1000]`).
impl Take for (String, u64) {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "list";
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
    #[cfg(feature = "shapes")]
    const KIND: &'static str = "list";
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        let Some(Value::Array(items)) = f.0.remove(key) else { return None };
        // A loop, not `collect` into an `Option`: less code for each type.
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            list.push(T::from_value(item)?);
        }
        Some(list)
    }
}

impl<T: FromValue> Take for T {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = T::KIND;
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.read(key)
    }
}

impl<T: Take> Take for Option<T> {
    #[cfg(feature = "shapes")]
    const KIND: &'static str = T::KIND;
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        if f.absent(key) {
            Some(None)
        } else {
            T::take(f, key).map(Some)
        }
    }
}

/// A whole value read by its type: how [`codec!`](crate::codec) reads a type around one value
/// and a variant of one value.
pub trait Whole: Sized {
    /// The value as this type, when it is one.
    fn whole(value: Value) -> Option<Self>;

    /// A variant's value (`{"name": value}`) as this type, when it is one.
    #[doc(hidden)]
    fn whole_variant(inner: &mut Inner) -> Option<Self> {
        Self::whole(inner.value()?)
    }
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

    fn whole_variant(inner: &mut Inner) -> Option<Self> {
        T::from_variant(inner)
    }
}

/// Which of `tags` a value written `"name"` or `{"name": value}` names (its place in
/// `tags`; `tags.len()` when it names none or is not written so), and its value: how a
/// [`codec!`](crate::codec) enum finds its variant, one copy for every enum.
#[doc(hidden)]
#[must_use]
#[inline(never)]
pub fn variant(value: Value, tags: &[&str]) -> (usize, Inner) {
    let (name, inner) = match value {
        Value::String(name) => (name, Inner::Bare),
        Value::Object(m) if m.len() == 1 => match m.into_iter().next() {
            Some((name, Value::Object(m))) => (name, Inner::Fields(Fields(m))),
            Some((name, value)) => (name, Inner::Value(value)),
            None => return (tags.len(), Inner::Bare),
        },
        _ => return (tags.len(), Inner::Bare),
    };
    (tags.iter().position(|tag| *tag == name).unwrap_or(tags.len()), inner)
}

/// A variant's value as [`variant`] found it: held by the enum's reader and dropped once,
/// whichever variant it reads.
#[doc(hidden)]
#[derive(Debug)]
pub enum Inner {
    /// A bare name (`"name"`).
    Bare,
    /// An object (`{"name": {…}}`), as its fields.
    Fields(Fields),
    /// Any other value.
    Value(Value),
}

impl Inner {
    /// Whether the variant was written as its bare name.
    #[must_use]
    pub fn bare(&self) -> bool {
        matches!(self, Self::Bare)
    }

    /// The variant's fields, when its value is an object.
    pub fn fields(&mut self) -> Option<&mut Fields> {
        match self {
            Self::Fields(f) => Some(f),
            _ => None,
        }
    }

    /// The variant's value, taken (None for a bare name).
    #[inline(never)]
    pub fn value(&mut self) -> Option<Value> {
        match core::mem::replace(self, Self::Bare) {
            Self::Bare => None,
            Self::Fields(f) => Some(Value::Object(f.0)),
            Self::Value(value) => Some(value),
        }
    }
}

/// A type written as JSON text: how a [`codec!`](crate::codec) type writes itself and each of
/// its fields. Compact, fields in their declared order, strings escaped as `serde_json` writes
/// them, so the bytes are what a derived `Serialize` wrote (without its code for every type).
pub trait Encode {
    /// Writes the value at the end of `out`.
    fn write_json(&self, out: &mut Vec<u8>);

    /// The value as JSON text.
    fn to_json(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_json(&mut out);
        out
    }
}

/// A value's JSON text (the relay's stored rows, a socket's attachment): what it writes is
/// UTF-8, so nothing is lost. One copy for every type.
#[must_use]
pub fn json_text(value: &dyn Encode) -> String {
    let mut out = Vec::new();
    value.write_json(&mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// A type written as the fields of a JSON object, which may be another type's object (a shape
/// two messages share, or a variant tagged by a field): read from the fields it needs, the
/// others left to the rest.
pub trait Flat: Sized {
    /// Reads its fields out of `f`; None when one is missing or not of its type.
    fn from_fields(f: &mut Fields) -> Option<Self>;

    /// Writes its fields into the object `o`.
    fn write_fields(&self, o: &mut Object<'_>);

    /// Its fields' shapes, in the order they are written (for the tab end's generated JS).
    #[cfg(feature = "shapes")]
    fn shapes() -> Vec<crate::shapes::Shape> {
        Vec::new()
    }
}

impl<T: Flat> Encode for T {
    // Inlined into its callers (a field's writer, `to_json`): 0.03 KiB less upload (gzip) than
    // a copy of its own for each type.
    #[inline(always)]
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::open(out);
        self.write_fields(&mut o);
        o.close();
    }
}

/// A JSON object being written: `{`, then each field, then [`Object::close`]. Only the
/// text it writes into: a field follows `{` or a value, and a value never ends with `{`, so
/// the last byte says whether a comma comes first (a pointer alone, passed and returned as
/// one).
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Object<'a> {
    /// Opens an object at the end of `out`.
    #[inline(never)]
    pub fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Self { out }
    }

    /// Writes a field's key (the value follows): a name the code declares, which needs no
    /// escape. Not inlined: one copy serves every field.
    #[inline(never)]
    fn key(&mut self, key: &str) {
        if self.out.last() != Some(&b'{') {
            self.out.push(b',');
        }
        self.out.push(b'"');
        self.out.extend_from_slice(key.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    /// Writes a field.
    pub fn field<T: Encode + ?Sized>(&mut self, key: &str, value: &T) {
        self.key(key);
        value.write_json(self.out);
    }

    /// Writes a field of text (a variant's tag).
    pub fn text(&mut self, key: &str, value: &str) {
        self.key(key);
        value.write_json(self.out);
    }

    /// Opens an object as the value of field `key`.
    pub fn nested(&mut self, key: &str) -> Object<'_> {
        self.key(key);
        Object::open(self.out)
    }

    /// Ends the object.
    #[inline(never)]
    pub fn close(self) {
        self.out.push(b'}');
    }

    /// Opens `{"tag":{`, the fields of a variant written `{"tag": {…}}` ([`codec!`](crate::codec)),
    /// ended by [`Object::close_variant`]: one call for what `open` and `nested` write.
    #[doc(hidden)]
    #[inline(never)]
    pub fn open_variant(out: &'a mut Vec<u8>, tag: &str) -> Self {
        let mut o = Object::open(out);
        o.key(tag);
        o.out.push(b'{');
        o
    }

    /// Ends what [`Object::open_variant`] opened.
    #[doc(hidden)]
    #[inline(never)]
    pub fn close_variant(self) {
        self.out.extend_from_slice(b"}}");
    }
}

impl Encode for str {
    #[inline(never)]
    fn write_json(&self, out: &mut Vec<u8>) {
        // serde_json's own escapes (its writer is in the relay for `Value` already).
        out.extend_from_slice(&serde_json::to_vec(self).unwrap_or_default());
    }
}

impl Encode for String {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_str().write_json(out);
    }
}

impl Encode for u64 {
    #[inline(never)]
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = *self;
        loop {
            at -= 1;
            // The remainder of a division by 10 fits a byte.
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[at..]);
    }
}

impl Encode for u32 {
    fn write_json(&self, out: &mut Vec<u8>) {
        u64::from(*self).write_json(out);
    }
}

impl Encode for usize {
    fn write_json(&self, out: &mut Vec<u8>) {
        (*self as u64).write_json(out);
    }
}

impl Encode for i64 {
    fn write_json(&self, out: &mut Vec<u8>) {
        if *self < 0 {
            out.push(b'-');
        }
        self.unsigned_abs().write_json(out);
    }
}

impl Encode for bool {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl Encode for Value {
    #[inline(never)]
    fn write_json(&self, out: &mut Vec<u8>) {
        // Writing a Value cannot fail: every map key is a string.
        out.extend_from_slice(&serde_json::to_vec(self).unwrap_or_default());
    }
}

/// A JSON value carried as the text it was written in, never read into a tree and written
/// again: a tab's result on its way to the agent ([`crate::raw::parse_keeping`] keeps it so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonText(String);

impl JsonText {
    /// A tree's text (compact, as the relay writes JSON).
    #[must_use]
    pub fn of(value: &Value) -> Self {
        Self(json_text(value))
    }

    /// Text the parser read as one JSON value.
    pub(crate) fn kept(text: String) -> Self {
        Self(text)
    }

    /// The JSON text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A field read as a tree (what is not kept by [`crate::raw::parse_keeping`]): its text.
impl Take for JsonText {
    fn take(f: &mut Fields, key: &str) -> Option<Self> {
        f.value(key).map(|value| Self::of(&value))
    }
}

impl Encode for JsonText {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
}

impl Encode for Map<String, Value> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&serde_json::to_vec(self).unwrap_or_default());
    }
}

impl<T: Encode> Encode for Option<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(v) => v.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

impl<T: Encode> Encode for Vec<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out);
        }
        out.push(b']');
    }
}

/// A pair written as a two-element array (`["g1",1000]`).
impl Encode for (String, u64) {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        self.0.write_json(out);
        out.push(b',');
        self.1.write_json(out);
        out.push(b']');
    }
}

/// Serializes a [`codec!`](crate::codec) type for a serde-derived type that holds it (a stored
/// row): through its own JSON text, so it is written once, by its declaration.
///
/// # Errors
/// Those of the serializer.
pub fn serialize<T: Encode, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    use serde::Serialize as _;
    // What the codec writes is JSON, so it reads back.
    let read: Value = serde_json::from_slice(&value.to_json()).unwrap_or_default();
    read.serialize(s)
}

/// Writes [`Encode`] and [`FromValue`] for a type from one list of its fields, so the two
/// directions of a message cannot differ (a field missing from the list fails to compile:
/// both the reader's struct literal and the writer's pattern name every field). Each field is
/// read ([`Take`]) and written by its type:
///
/// - a type around one value: `codec!(SealId, "a seal", (String))`;
/// - a struct: `codec!(Image, "a picture", { data, mime_type = "mimeType", width })`, which
///   is [`Flat`] too; `field or expr` reads a missing field as `expr` and writes nothing when
///   it equals `expr` (`place or None`, `resumable or false`); `field else "other"` reads a
///   missing field as the field `other`; `field as flat` reads and writes a [`Flat`] field's
///   own fields in this object (a shape two messages share);
/// - an enum written `"name"` or `{"name": …}`: `codec!(Stage, "a stage", enum { "waiting" =>
///   Waiting, "approved" => Approved { pairing }, "done" => Done(CallReply) })`;
/// - an enum tagged by one of its fields (`{"state": "waiting", …}`), which is [`Flat`]:
///   `codec!(PollState, "a state", tag "state" { "waiting" => Waiting { expires_in_ms },
///   "done" => Done })`; a variant of one value is a [`Flat`] type, its fields beside the tag;
///   `… } else "tools" => BadTools` names a variant made by hand and never read, written as
///   its tag alone.
#[macro_export]
macro_rules! codec {
    ($ty:ident, $what:literal, { $($body:tt)* }) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            $crate::__shapes! { const KIND: &'static str = "object"; }
            fn from_value(value: serde_json::Value) -> Option<Self> {
                <Self as $crate::fields::Flat>::from_fields(&mut $crate::fields::Fields::of(value)?)
            }
            fn from_variant(inner: &mut $crate::fields::Inner) -> Option<Self> {
                <Self as $crate::fields::Flat>::from_fields(inner.fields()?)
            }
        }
        impl $crate::fields::Flat for $ty {
            fn from_fields(f: &mut $crate::fields::Fields) -> Option<Self> {
                $crate::codec!(@read f, [Self], $($body)*)
            }
            $crate::__shapes! {
                #[allow(clippy::vec_init_then_push)]
                fn shapes() -> $crate::fields::Vec<$crate::shapes::Shape> {
                    $crate::codec!(@shapes [Self], $($body)*)
                }
            }
            #[allow(clippy::partialeq_to_none, clippy::bool_comparison)]
            fn write_fields(&self, o: &mut $crate::fields::Object<'_>) {
                let $crate::codec!(@names [Self], $($body)*) = self;
                $crate::codec!(@write o, $($body)*);
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
        impl $crate::fields::Encode for $ty {
            fn write_json(&self, out: &mut $crate::fields::Vec<u8>) {
                $crate::fields::Encode::write_json(&self.0, out);
            }
        }
    };
    ($ty:ident, $what:literal, enum { $($tag:literal => $variant:ident $(($one:ty))? $({ $($body:tt)* })?),* $(,)? }) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            #[allow(unused_assignments)]
            fn from_value(value: serde_json::Value) -> Option<Self> {
                let mut found = $crate::fields::variant(value, &[$($tag),*]);
                // Borrowed where it was returned (not moved), and dropped once, after the
                // block (which has no early return).
                let (which, inner) = (found.0, &mut found.1);
                let read = 'read: {
                    let mut at = 0;
                    $(
                        if which == at {
                            break 'read $crate::codec!(@variant inner, $variant $(($one))? $({ $($body)* })?);
                        }
                        at += 1;
                    )*
                    None
                };
                read
            }
        }
        $crate::__shapes! {
            impl $crate::shapes::Words for $ty {
                const WORDS: &'static [&'static str] = &[$($tag),*];
            }
        }
        impl $crate::fields::Encode for $ty {
            #[allow(clippy::partialeq_to_none, clippy::bool_comparison)]
            fn write_json(&self, out: &mut $crate::fields::Vec<u8>) {
                match self {
                    $(
                        $crate::codec!(@any $variant $(($one))? $({ $($body)* })?) => {
                            $crate::codec!(@external self, out, $tag, $variant $(($one))? $({ $($body)* })?)
                        }
                    )*
                }
            }
        }
    };
    ($ty:ident, $what:literal, tag $key:literal { $($tag:literal => $variant:ident $(($one:ty))? $({ $($body:tt)* })?),* $(,)? } $(else $ntag:literal => $never:ident)?) => {
        impl $crate::fields::FromValue for $ty {
            const WHAT: &'static str = $what;
            $crate::__shapes! { const KIND: &'static str = "object"; }
            fn from_value(value: serde_json::Value) -> Option<Self> {
                <Self as $crate::fields::Flat>::from_fields(&mut $crate::fields::Fields::of(value)?)
            }
            fn from_variant(inner: &mut $crate::fields::Inner) -> Option<Self> {
                <Self as $crate::fields::Flat>::from_fields(inner.fields()?)
            }
        }
        $crate::__shapes! {
            impl $crate::shapes::Tagged for $ty {
                const TAG: &'static str = $key;
                #[allow(clippy::vec_init_then_push)]
                fn variants() -> $crate::fields::Vec<(&'static str, $crate::fields::Vec<$crate::shapes::Shape>)> {
                    $crate::fields::Vec::from([$(
                        ($tag, $crate::codec!(@variant_shapes $variant $(($one))? $({ $($body)* })?)),
                    )*])
                }
            }
        }
        impl $crate::fields::Flat for $ty {
            #[allow(unused_assignments)]
            fn from_fields(f: &mut $crate::fields::Fields) -> Option<Self> {
                let which = f.tag($key, &[$($tag),*]);
                let mut at = 0;
                $(
                    if which == at {
                        return $crate::codec!(@tagged f, $variant $(($one))? $({ $($body)* })?);
                    }
                    at += 1;
                )*
                None
            }
            #[allow(clippy::partialeq_to_none, clippy::bool_comparison)]
            fn write_fields(&self, o: &mut $crate::fields::Object<'_>) {
                match self {
                    $(
                        $crate::codec!(@any $variant $(($one))? $({ $($body)* })?) => {
                            o.text($key, $tag);
                            $crate::codec!(@internal self, o, $variant $(($one))? $({ $($body)* })?)
                        }
                    )*
                    $(Self::$never { .. } => o.text($key, $ntag),)?
                }
            }
        }
    };
    // Reading: the fields of a struct or a variant, into `Some($path { … })`. Every field is
    // read first, then all are checked at once: one drop of what was read when one is missing
    // (rather than an early return after each field, each dropping the fields before it).
    (@read $f:ident, [$($path:tt)*], $($field:ident $(= $key:literal)? $(else $fallback:literal)? $(as $flat:ident)? $(or $default:expr)?),* $(,)?) => {{
        $( let $field = $crate::codec!(@take $f, $field $(= $key)? $(else $fallback)? $(as $flat)? $(or $default)?); )*
        if $($field.is_some())&&* {
            Some($($path)* { $($field: $field?),* })
        } else {
            None
        }
    }};
    (@take $f:ident, $field:ident) => {
        $crate::fields::Take::take($f, stringify!($field))
    };
    (@take $f:ident, $field:ident = $key:literal) => {
        $crate::fields::Take::take($f, $key)
    };
    (@take $f:ident, $field:ident else $fallback:literal) => {
        if $f.has(stringify!($field)) {
            $crate::fields::Take::take($f, stringify!($field))
        } else {
            $crate::fields::Take::take($f, $fallback)
        }
    };
    (@take $f:ident, $field:ident as flat) => {
        $crate::fields::Flat::from_fields($f)
    };
    (@take $f:ident, $field:ident $(= $key:literal)? or $default:expr) => {
        if $f.has($crate::codec!(@key $field $(= $key)?)) {
            $crate::fields::Take::take($f, $crate::codec!(@key $field $(= $key)?))
        } else {
            Some($default)
        }
    };
    // Shapes: each field's key, kind and default, for the tab end's generated JS.
    (@shapes [$path:path], $($field:ident $(= $key:literal)? $(else $fallback:literal)? $(as $flat:ident)? $(or $default:expr)?),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut shapes = $crate::fields::Vec::new();
        $( $crate::codec!(@shape shapes, [$path], $field $(= $key)? $(else $fallback)? $(as $flat)? $(or $default)?); )*
        shapes
    }};
    (@shape $v:ident, [$path:path], $field:ident as flat) => {
        #[allow(unreachable_patterns)]
        $v.extend($crate::shapes::flat_of(|m: &Self| match m { $path { $field, .. } => Some($field), _ => None }))
    };
    (@shape $v:ident, [$path:path], $field:ident $(= $key:literal)? $(else $fallback:literal)? $(or $default:expr)?) => {
        #[allow(unreachable_patterns)]
        $v.push($crate::shapes::Shape {
            key: $crate::codec!(@key $field $(= $key)?),
            kind: $crate::shapes::kind_of(|m: &Self| match m { $path { $field, .. } => Some($field), _ => None }),
            or: concat!("" $(, stringify!($default))?),
        })
    };
    (@variant_shapes $variant:ident) => { $crate::fields::Vec::new() };
    (@variant_shapes $variant:ident ($one:ty)) => { <$one as $crate::fields::Flat>::shapes() };
    (@variant_shapes $variant:ident { $($body:tt)* }) => {
        $crate::codec!(@shapes [Self::$variant], $($body)*)
    };
    (@key $field:ident) => { stringify!($field) };
    (@key $field:ident = $key:literal) => { $key };
    // Writing: the pattern naming every field, then each field.
    (@names [$($path:tt)*], $($field:ident $(= $key:literal)? $(else $fallback:literal)? $(as $flat:ident)? $(or $default:expr)?),* $(,)?) => {
        $($path)* { $($field),* }
    };
    (@write $o:ident, $($field:ident $(= $key:literal)? $(else $fallback:literal)? $(as $flat:ident)? $(or $default:expr)?),* $(,)?) => {
        $( $crate::codec!(@put $o, $field $(= $key)? $(else $fallback)? $(as $flat)? $(or $default)?); )*
    };
    (@put $o:ident, $field:ident $(= $key:literal)?) => {
        $o.field($crate::codec!(@key $field $(= $key)?), $field)
    };
    (@put $o:ident, $field:ident else $fallback:literal) => {
        $o.field(stringify!($field), $field)
    };
    (@put $o:ident, $field:ident as flat) => {
        $crate::fields::Flat::write_fields($field, $o)
    };
    (@put $o:ident, $field:ident $(= $key:literal)? or $default:expr) => {
        if *$field != $default {
            $o.field($crate::codec!(@key $field $(= $key)?), $field)
        }
    };
    // A variant's pattern, naming nothing (the match is exhaustive over the variants listed).
    (@any $variant:ident) => { Self::$variant };
    (@any $variant:ident ($one:ty)) => { Self::$variant(..) };
    (@any $variant:ident { $($body:tt)* }) => { Self::$variant { .. } };
    // An externally tagged variant: from its value, and written `"name"` or `{"name": …}`.
    (@variant $inner:ident, $variant:ident) => {
        if $inner.bare() { Some(Self::$variant) } else { None }
    };
    (@variant $inner:ident, $variant:ident ($one:ty)) => {
        <$one as $crate::fields::Whole>::whole_variant($inner).map(Self::$variant)
    };
    (@variant $inner:ident, $variant:ident { $($body:tt)* }) => {
        match $inner.fields() {
            Some(f) => $crate::codec!(@read f, [Self::$variant], $($body)*),
            None => None,
        }
    };
    (@external $me:ident, $out:ident, $tag:literal, $variant:ident) => {
        $crate::fields::Encode::write_json($tag, $out)
    };
    (@external $me:ident, $out:ident, $tag:literal, $variant:ident ($one:ty)) => {
        if let Self::$variant(inner) = $me {
            let mut o = $crate::fields::Object::open($out);
            o.field($tag, inner);
            o.close();
        }
    };
    (@external $me:ident, $out:ident, $tag:literal, $variant:ident { $($body:tt)* }) => {
        if let $crate::codec!(@names [Self::$variant], $($body)*) = $me {
            let mut i = $crate::fields::Object::open_variant($out, $tag);
            {
                let i = &mut i;
                $crate::codec!(@write i, $($body)*);
            }
            i.close_variant();
        }
    };
    // A variant tagged by a field: from the rest of the object, and its fields after the tag.
    (@tagged $f:ident, $variant:ident) => {
        Some(Self::$variant)
    };
    (@tagged $f:ident, $variant:ident ($one:ty)) => {
        <$one as $crate::fields::Flat>::from_fields($f).map(Self::$variant)
    };
    (@tagged $f:ident, $variant:ident { $($body:tt)* }) => {
        $crate::codec!(@read $f, [Self::$variant], $($body)*)
    };
    (@internal $me:ident, $o:ident, $variant:ident) => { () };
    (@internal $me:ident, $o:ident, $variant:ident ($one:ty)) => {
        if let Self::$variant(inner) = $me {
            $crate::fields::Flat::write_fields(inner, $o);
        }
    };
    (@internal $me:ident, $o:ident, $variant:ident { $($body:tt)* }) => {
        if let $crate::codec!(@names [Self::$variant], $($body)*) = $me {
            $crate::codec!(@write $o, $($body)*);
        }
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
    use alloc::vec;
    use serde_json::json;

    #[derive(Debug, PartialEq)]
    struct Picture {
        data: String,
        mime_type: String,
        width: u32,
        alt: Option<String>,
        tries: u32,
    }
    crate::codec!(Picture, "a picture", { data, mime_type = "mimeType", width, alt, tries or 0 });

    #[derive(Debug, PartialEq)]
    enum Stage {
        Waiting,
        Approved { pairing: String },
        Said(String),
    }
    crate::codec!(Stage, "a stage", enum {
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
    crate::codec!(Poll, "a poll", tag "state" {
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

    #[derive(Debug, Clone, PartialEq)]
    struct Who {
        name: String,
        place: Option<String>,
    }
    crate::codec!(Who, "who", { name, place or None });

    #[derive(Debug, Clone, PartialEq)]
    struct Card {
        id: u64,
        who: Who,
        seen: bool,
        tags: Vec<String>,
        note: Option<String>,
    }
    crate::codec!(Card, "a card", { id, who as flat, seen or false, tags, note });

    #[derive(Debug, Clone, PartialEq)]
    enum Said {
        Quiet,
        Card(Card),
        Named { who: Who },
        Hidden,
    }
    crate::codec!(Said, "what is said", tag "kind" {
        "quiet" => Quiet,
        "card" => Card(Card),
        "named" => Named { who },
    } else "hidden" => Hidden);

    #[derive(Debug, Clone, PartialEq)]
    enum Line {
        End,
        Said(Said),
        Pair { at: (String, u64) },
    }
    crate::codec!(Line, "a line", enum {
        "end" => End,
        "said" => Said(Said),
        "pair" => Pair { at },
    });

    fn text(v: &impl Encode) -> String {
        String::from_utf8(v.to_json()).unwrap()
    }

    #[test]
    fn one_declaration_writes_what_it_reads() {
        let who = Who { name: "Ada".into(), place: None };
        let card = Card { id: 7, who: who.clone(), seen: false, tags: vec![], note: None };
        assert_eq!(text(&card), r#"{"id":7,"name":"Ada","tags":[],"note":null}"#);
        let full = Card {
            id: u64::MAX,
            who: Who { place: Some("Lisbon".into()), ..who.clone() },
            seen: true,
            tags: vec!["a".into(), "b".into()],
            note: Some("n".into()),
        };
        assert_eq!(
            text(&full),
            r#"{"id":18446744073709551615,"name":"Ada","place":"Lisbon","seen":true,"tags":["a","b"],"note":"n"}"#
        );
        let lines = [
            Line::End,
            Line::Said(Said::Quiet),
            Line::Said(Said::Card(card.clone())),
            Line::Said(Said::Named { who: who.clone() }),
            Line::Pair { at: ("g1".into(), 0) },
        ];
        let written: Vec<String> = lines.iter().map(text).collect();
        assert_eq!(
            written,
            [
                r#""end""#,
                r#"{"said":{"kind":"quiet"}}"#,
                r#"{"said":{"kind":"card","id":7,"name":"Ada","tags":[],"note":null}}"#,
                r#"{"said":{"kind":"named","who":{"name":"Ada"}}}"#,
                r#"{"pair":{"at":["g1",0]}}"#,
            ]
        );
        for line in lines {
            assert_eq!(crate::from_json::<Line>(&line.to_json()), Some(line));
        }
        for bad in [
            json!("said"),
            json!({"said": 1}),
            json!({"said": {"kind": "gone"}}),
            json!({"end": {}}),
            json!({"end": null}),
            json!({"pair": "g1"}),
            json!({"pair": {}}),
            json!({"said": {"kind": "quiet"}, "end": null}),
            json!("other"),
            json!(7),
        ] {
            assert_eq!(read::<Line>(bad.clone()), None, "{bad}");
        }
        // A variant made by hand is written as its tag alone, and never read.
        assert_eq!(text(&Said::Hidden), r#"{"kind":"hidden"}"#);
        assert_eq!(crate::from_json::<Said>(br#"{"kind":"hidden"}"#), None);
    }

    #[test]
    fn text_is_escaped_as_serde_json_escapes_it() {
        let every: String =
            (0u32..0x80).filter_map(char::from_u32).chain("é\u{2028}😀".chars()).collect();
        for s in [every.as_str(), "", "plain", "\"\\"] {
            assert_eq!(s.to_json(), serde_json::to_vec(s).unwrap());
        }
        for n in [0, 9, 10, 99, 100, u64::MAX] {
            assert_eq!(n.to_json(), serde_json::to_vec(&n).unwrap());
        }
    }

    #[test]
    fn what_does_not_read_says_why() {
        assert_eq!(crate::read_wire::<Line>(b"{"), Err(WireError::NotJson));
        assert_eq!(crate::read_wire::<Line>(b"\"other\""), Err(WireError::Not("a line")));
        assert_eq!(crate::read_wire::<Line>(b"\"end\""), Ok(Line::End));
    }
}
