//! The Durable Object of one connect code: gives each command to the core's [`CodeObject`] by
//! the one loop ([`machine::turn`]: its session read, changed and stored in the object's
//! SQLite), one at a time, and sets the alarm it names; at its end (the alarm) it deletes
//! everything it stored, table and all.

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
use crate::machine::{self, Platform};
use crate::oauth::connect::stored::{CodeObject, Output};
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
    let mut object = CodeObject::new(code, kept);
    let host = &mut Platform { sql: &mut Sqlite(platform), entropy: &mut PlatformRandom };
    let (mut reply, mut alarm) = (None, None);
    machine::turn(&mut object, Some(command), now_ms(), host, |output| match output {
        Output::Reply(said) => reply = Some(said),
        Output::SetAlarm(at) => alarm = Some(at),
        // A failed write is replied nothing; its end is the platform's alarm.
        Output::Failed | Output::Forget => {}
    });
    if let Some(at) = alarm {
        JsFuture::from(set_alarm(platform, at as f64)).await?;
    }
    let reply = reply.ok_or_else(|| failed("the code's storage failed"))?;
    Ok(bytes_response(200, &reply.encode()))
}
