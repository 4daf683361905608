//! The tab proof's signature check by the runtime's own WebCrypto (`crypto.subtle`): no
//! signature crate in the wasm. The few lines of JavaScript that call it are bound here.

use wasm_bindgen::prelude::wasm_bindgen;
use worker::js_sys::Promise;
use worker::wasm_bindgen_futures::JsFuture;

use crate::pairing::Proof;

#[wasm_bindgen(module = "/src/shell/platform.js")]
extern "C" {
    /// Whether `signature` (P1363) is `key`'s (raw P-256) ECDSA signature over SHA-256 of
    /// `data`; false for a key WebCrypto refuses.
    #[wasm_bindgen(js_name = verifyP256)]
    fn verify_p256(key: &[u8], signature: &[u8], data: &[u8]) -> Promise;
}

/// Whether the proof's signature holds. A key WebCrypto refuses (a point off the curve, say)
/// holds nothing: false, as a wrong signature.
pub(crate) async fn verify(proof: &Proof) -> bool {
    let answer = verify_p256(&proof.key, &proof.signature, proof.text.as_bytes());
    JsFuture::from(answer).await.is_ok_and(|v| v.as_bool() == Some(true))
}
