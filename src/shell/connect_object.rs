//! The Durable Object of one connect code: runs each command through the core
//! ([`carry_out`]: its session read, changed and stored in the object's SQLite), one at a time,
//! and sets the alarm the core names; at its end (the alarm) it deletes everything it stored,
//! table and all.

use tabrelay_bundle::fields::Message as _;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::{alarm_at, now_ms, routes, PlatformRandom, Sqlite};
use crate::config::CODE_KEPT_MS;
use crate::oauth::connect::stored::carry_out;
use crate::oauth::connect::CodeRequest;

/// One connect code's session. Only its fetch and alarm are exported (no socket ever reaches
/// it): the socket handlers' async exports cost 1.6 KiB of upload.
#[durable_object(alarm)]
pub struct ConnectCode {
    state: State,
    env: Env,
}

impl DurableObject for ConnectCode {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let Ok((code, command)) = CodeRequest::decode(&req.bytes().await?) else {
            return Response::error("Not a request to a connect code.", 400);
        };
        let kept = routes::config(&self.env).map_or(CODE_KEPT_MS, |c| c.code_kept_ms);
        let mut sql = Sqlite(&self.state.storage().sql());
        let (reply, forget) =
            carry_out(&mut sql, &code, command, now_ms(), kept, &mut PlatformRandom)
                .map_err(|_| worker::Error::RustError("the code's storage failed".into()))?;
        if let Some(at) = forget {
            self.state.storage().set_alarm(alarm_at(at)).await?;
        }
        Response::from_bytes(reply.encode())
    }

    async fn alarm(&self) -> Result<Response> {
        // Nothing of a code outlives it: not its session, nor the table that held it.
        self.state.storage().delete_all().await?;
        Response::ok("forgotten")
    }
}
