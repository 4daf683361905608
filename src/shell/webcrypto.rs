//! The tab proof's signature check by the runtime's own WebCrypto (`crypto.subtle`), through
//! two bindings of our own: no signature crate in the wasm, no web-sys features for it.

use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use worker::js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use worker::wasm_bindgen_futures::JsFuture;

use crate::pairing::Proof;

#[wasm_bindgen]
extern "C" {
    /// The runtime's `SubtleCrypto`.
    type Subtle;

    #[wasm_bindgen(method, catch, js_name = importKey)]
    fn import_key(
        this: &Subtle,
        format: &str,
        key: &Uint8Array,
        algorithm: &Object,
        extractable: bool,
        usages: &Array,
    ) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn verify(
        this: &Subtle,
        algorithm: &Object,
        key: &JsValue,
        signature: &Uint8Array,
        data: &Uint8Array,
    ) -> Result<Promise, JsValue>;
}

/// An object of string fields, as WebCrypto takes its algorithm parameters.
fn fields(pairs: &[(&str, &str)]) -> Result<Object, JsValue> {
    let o = Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &(*k).into(), &(*v).into())?;
    }
    Ok(o)
}

async fn check(proof: &Proof) -> Result<bool, JsValue> {
    let crypto = Reflect::get(&worker::js_sys::global(), &"crypto".into())?;
    let subtle: Subtle = Reflect::get(&crypto, &"subtle".into())?.unchecked_into();
    let usages = Array::of1(&"verify".into());
    let algorithm = fields(&[("name", "ECDSA"), ("namedCurve", "P-256")])?;
    let raw = Uint8Array::from(proof.key.as_slice());
    let key = JsFuture::from(subtle.import_key("raw", &raw, &algorithm, false, &usages)?).await?;
    let algorithm = fields(&[("name", "ECDSA"), ("hash", "SHA-256")])?;
    let signature = Uint8Array::from(proof.signature.as_slice());
    let data = Uint8Array::from(proof.text.as_bytes());
    let valid = JsFuture::from(subtle.verify(&algorithm, &key, &signature, &data)?).await?;
    Ok(valid.as_bool() == Some(true))
}

/// Whether the proof's signature holds. A key WebCrypto refuses (a point off the curve, say)
/// holds nothing: false, as a wrong signature.
pub(crate) async fn verify(proof: &Proof) -> bool {
    check(proof).await.unwrap_or(false)
}
