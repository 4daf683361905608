//! The Durable Object of one connect code: runs each command through the core
//! ([`carry_out`]: its session read, changed and stored in the object's SQLite), one at a time,
//! and sets the alarm the core names; at its end (the alarm) it deletes everything it stored,
//! table and all.

use tabrelay_bundle::fields::Message as _;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::JsCast as _;
use worker::js_sys::Promise;
use worker::wasm_bindgen_futures::JsFuture;
use worker::web_sys::{Request, Response};
use worker::worker_sys::DurableObjectState;
use worker::Env;

use super::{
    body_bytes, bytes_response, delete_all, failed, now_ms, promise, routes, set_alarm,
    PlatformRandom, Result, Sqlite,
};
use crate::config::CODE_KEPT_MS;
use crate::oauth::connect::stored::carry_out;
use crate::oauth::connect::CodeRequest;

/// The connect code's class as workerd calls it: its fetch and alarm (no socket ever reaches
/// it), bound as the pairing's are ([`promise`], one future type for every method).
#[wasm_bindgen]
pub struct ConnectCode {
    /// The platform's state of the object: its SQL storage and its alarm.
    platform: DurableObjectState,
    env: Env,
}

#[wasm_bindgen]
impl ConnectCode {
    #[wasm_bindgen(constructor)]
    pub fn new(platform: DurableObjectState, env: Env) -> Self {
        Self { platform, env }
    }

    /// A command to the code's session.
    pub fn fetch(&self, req: Request) -> Promise {
        let (platform, env) = (self.platform.clone().unchecked_into(), self.env.clone());
        promise(Box::pin(async move { fetch(&platform, &env, req).await.map(Into::into) }))
    }

    /// The code's end: nothing of a code outlives it, not its session, nor the table that held
    /// it (the platform's own promise: no future of ours).
    pub fn alarm(&self) -> Promise {
        delete_all(&self.platform)
    }
}

async fn fetch(platform: &DurableObjectState, env: &Env, req: Request) -> Result<Response> {
    let Ok((code, command)) = CodeRequest::decode(&body_bytes(&req).await?) else {
        return Ok(bytes_response(400, crate::sentences::shell::NOT_FOR_CODE.as_bytes()));
    };
    let kept = routes::config(env).map_or(CODE_KEPT_MS, |c| c.code_kept_ms);
    let (reply, forget) =
        carry_out(&mut Sqlite(platform), &code, command, now_ms(), kept, &mut PlatformRandom)
            .map_err(|_| failed("the code's storage failed"))?;
    if let Some(at) = forget {
        JsFuture::from(set_alarm(platform, at as f64)).await?;
    }
    Ok(bytes_response(200, &reply.encode()))
}
