//! The Durable Object of one connect code: stores its session in SQLite and applies the
//! core's commands to it, one at a time. Its table is made on its first write (the code's
//! creation), so a command for a code never created writes nothing; at its end (its alarm)
//! it deletes everything it stored, table and all.

use tabrelay_bundle::fields::Message as _;
use worker::{durable_object, DurableObject, Env, Request, Response, Result, State};

use super::{from_json, now_ms, routes, texts, PlatformRandom};
use crate::config::CODE_KEPT_MS;
use crate::oauth::connect::{apply, forget_at, CodeRequest, Session};

/// One connect code's session.
#[durable_object]
pub struct ConnectCode {
    state: State,
    env: Env,
}

impl ConnectCode {
    /// The stored session; None when there is none (or no table: nothing was ever written).
    fn load(&self) -> Option<Session> {
        let sql = self.state.storage().sql();
        let rows = texts(sql.exec("SELECT body FROM session WHERE id = 1", None).ok()?, "body");
        rows.first().and_then(|body| from_json(body.as_bytes()))
    }

    /// Stores what the core returned; `had` says whether a session was stored before (when
    /// neither was nor is, nothing is touched).
    fn store(&self, had: bool, session: Option<&Session>) -> Result<()> {
        let sql = self.state.storage().sql();
        match session {
            Some(s) => {
                let body = serde_json::to_string(s)
                    .map_err(|e| worker::Error::RustError(e.to_string()))?;
                sql.exec(
                    "CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
                    None,
                )?;
                sql.exec(
                    "INSERT OR REPLACE INTO session (id, body) VALUES (1, ?)",
                    vec![body.into()],
                )?;
            }
            None if had => {
                sql.exec("DELETE FROM session", None)?;
            }
            None => {}
        }
        Ok(())
    }
}

impl DurableObject for ConnectCode {
    fn new(state: State, env: Env) -> Self {
        Self { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let Ok((code, command)) = CodeRequest::decode(&req.bytes().await?) else {
            return Response::error("Not a request to a connect code.", 400);
        };
        let (stored, now) = (self.load(), now_ms());
        let had = stored.is_some();
        let (session, reply) = apply(stored, command, now, &mut PlatformRandom, &code);
        self.store(had, session.as_ref())?;
        let kept = routes::config(&self.env).map_or(CODE_KEPT_MS, |c| c.code_kept_ms);
        if let Some(at) = forget_at(&reply, now, kept) {
            // A time, not a bare number (worker's `set_alarm` reads that as an offset).
            let at = worker::js_sys::Date::new(&(at as f64).into());
            self.state.storage().set_alarm(worker::ScheduledTime::new(at)).await?;
        }
        Response::from_bytes(reply.encode())
    }

    async fn alarm(&self) -> Result<Response> {
        // Nothing of a code outlives it: not its session, nor the table that held it.
        self.state.storage().delete_all().await?;
        Response::ok("forgotten")
    }
}
