//! What the fuzz targets share: the fixed keys, origin and clock they run with, and checks
//! that more than one target makes.

use serde_json::Value;
use tabrelay::keys::Keys;

/// The relay's origin in every target.
pub const ORIGIN: &str = "https://relay.example";

/// A fixed clock (2026-09-21), in milliseconds.
pub const NOW: u64 = 1_790_000_000_000;

/// The signing keys every target uses (the seeds' client ids are signed with them).
///
/// # Panics
/// Never: the key is long enough.
#[must_use]
pub fn keys() -> Keys {
    Keys::new(&"k".repeat(32), None).expect("32 bytes is a long enough key")
}

/// Random bytes for the fuzz targets: a fixed, repeatable sequence.
pub struct Fixed(pub u8);

impl tabrelay::crypto::Entropy for Fixed {
    fn fill(&mut self, buf: &mut [u8]) {
        for b in buf {
            *b = self.0;
            self.0 = self.0.wrapping_add(41);
        }
    }
}

/// Whether a JSON value holds a floating-point number anywhere. serde_json without its
/// `float_roundtrip` feature (the relay's build) may read a float back one ulp off, so
/// round-trip checks skip such values rather than assert what the code does not promise.
#[must_use]
pub fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(o) => o.values().any(has_float),
        _ => false,
    }
}

/// Whether `part` is a slice of `whole` (not merely equal to some part of it).
#[must_use]
pub fn is_slice_of(part: &str, whole: &str) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}

/// Whether `pairs` names some key twice.
#[must_use]
pub fn has_duplicate_key(pairs: &[(String, String)]) -> bool {
    pairs.iter().enumerate().any(|(i, (k, _))| pairs[..i].iter().any(|(k2, _)| k2 == k))
}

/// A request id as JSON (null when there is none): the relay writes it by its codec, not serde.
#[must_use]
pub fn id_value(id: Option<&tabrelay::jsonrpc::Id>) -> Value {
    use tabrelay::jsonrpc::Id;
    match id {
        None => Value::Null,
        Some(Id::Number(n)) => Value::from(*n),
        Some(Id::Text(s)) => Value::String(s.clone()),
    }
}
