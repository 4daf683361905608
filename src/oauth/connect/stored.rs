//! A code's session in its object's SQL storage: one row, in a table made with the code's
//! creation, so a command for a code never created writes nothing. [`CodeObject`] is the
//! object as the core's one machine shape; what it does with a command (`carry_out`): read
//! the row, [`apply`], write what comes of it.

use super::{apply, forget_at, CodeReply, Command, ConnectCode, Session};
use crate::crypto::Entropy;
use crate::sql::{Bind, Failed, Sql};

const TABLE: &str =
    "CREATE TABLE IF NOT EXISTS session (id INTEGER PRIMARY KEY, body TEXT NOT NULL)";
/// The statement that reads the session's row (its `body`, the session as JSON; no row: none).
pub const READ: &str = "SELECT body FROM session WHERE id = 1";
/// The statement that writes the session's row (its one binding: the body).
pub const WRITE: &str = "INSERT OR REPLACE INTO session (id, body) VALUES (1, ?)";
/// The statement that forgets the session.
pub const DELETE: &str = "DELETE FROM session";

/// Applies `command` to the session `sql` holds for `code` at `now_ms` and stores what comes
/// of it: the reply, and when the object forgets everything it stored (its alarm: `kept_ms`
/// after the session starts; None: as set before).
///
/// # Errors
/// [`Failed`]: a write failed (the runtime's failure; nothing is replied).
fn carry_out(
    sql: &mut dyn Sql,
    code: &ConnectCode,
    command: Command,
    now_ms: u64,
    kept_ms: u64,
    entropy: &mut dyn Entropy,
) -> Result<(CodeReply, Option<u64>), Failed> {
    // No table (nothing was ever written) reads as no session; the table holds one row.
    let rows = sql.exec(READ, Vec::new()).unwrap_or_default();
    let body = rows.first().and_then(|row| row.first()?.as_deref());
    let mut session: Option<Session> = body.and_then(|b| tabrelay_bundle::from_json(b.as_bytes()));
    let had = session.is_some();
    let reply = apply(&mut session, command, now_ms, entropy, code);
    match session {
        Some(s) => {
            let body = tabrelay_bundle::fields::json_text(&s);
            sql.exec(TABLE, Vec::new())?;
            sql.exec(WRITE, vec![Bind::Text(body)])?;
        }
        None if had => {
            sql.exec(DELETE, Vec::new())?;
        }
        None => {}
    }
    let forget = forget_at(&reply, now_ms, kept_ms);
    Ok((reply, forget))
}

/// What a code's object carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Reply to the command.
    Reply(CodeReply),
    /// Set the alarm (the code's end) to ring at this time.
    SetAlarm(u64),
    /// Forget everything stored (the alarm rang).
    Forget,
    /// A write failed: the command is not replied.
    Failed,
}

/// A connect code's object as the core's one machine shape: each command carried out on its
/// storage (`carry_out`), its end a timeout. A command says at most the alarm and its reply,
/// so those are its two slots (no queue: smaller in the Worker).
#[derive(Debug)]
pub struct CodeObject {
    code: ConnectCode,
    kept_ms: u64,
    alarm: Option<u64>,
    /// The alarm to set, not yet said.
    set: Option<u64>,
    /// What the last command came to, not yet said ([`Output::Reply`], [`Output::Failed`] or,
    /// at its end, [`Output::Forget`]).
    said: Option<Output>,
}

impl CodeObject {
    /// The object of `code`, whose sessions are kept `kept_ms`.
    #[must_use]
    pub fn new(code: ConnectCode, kept_ms: u64) -> Self {
        Self { code, kept_ms, alarm: None, set: None, said: None }
    }
}

impl crate::machine::Machine for CodeObject {
    type Input = Command;
    type Output = Output;
    type Host<'h> = crate::machine::Platform<'h>;

    #[inline]
    fn handle_input(&mut self, command: Command, now_ms: u64, host: &mut Self::Host<'_>) {
        let (code, kept) = (&self.code, self.kept_ms);
        self.said = Some(match carry_out(host.sql, code, command, now_ms, kept, host.entropy) {
            Ok((reply, forget)) => {
                if let Some(at) = forget {
                    self.alarm = Some(at);
                    self.set = Some(at);
                }
                Output::Reply(reply)
            }
            Err(Failed) => Output::Failed,
        });
    }

    #[inline]
    fn poll_output(&mut self, _: &mut Self::Host<'_>) -> Option<Output> {
        self.set.take().map(Output::SetAlarm).or_else(|| self.said.take())
    }

    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        self.alarm
    }

    #[inline]
    fn handle_timeout(&mut self, now_ms: u64, _: &mut Self::Host<'_>) {
        if self.alarm.is_some_and(|at| at <= now_ms) {
            self.alarm = None;
            self.said = Some(Output::Forget);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::Counter;
    use crate::sql::testing::Recorded;

    fn code() -> ConnectCode {
        ConnectCode::parse("ABCDE-12345").unwrap()
    }

    #[test]
    fn a_command_for_a_code_never_created_writes_nothing() {
        let mut sql = Recorded { fails: vec!["FROM session"], ..Recorded::default() };
        let (reply, forget) =
            carry_out(&mut sql, &code(), Command::Describe, 1_000, 60_000, &mut Counter(1))
                .unwrap();
        assert_eq!(reply, CodeReply::refused(super::super::refusal::UNKNOWN));
        assert_eq!(forget, None);
        assert_eq!(sql.queries(), [READ]);
    }

    #[test]
    fn a_created_code_is_stored_with_its_table_and_forgotten_its_kept_time_later() {
        let mut sql = Recorded::default();
        let create = super::super::fixtures::create();
        let (reply, forget) =
            carry_out(&mut sql, &code(), create, 1_000, 60_000, &mut Counter(1)).unwrap();
        assert_eq!(reply, CodeReply::Created);
        assert_eq!(forget, Some(61_000));
        assert_eq!(sql.queries(), [READ, TABLE, WRITE]);
        let Bind::Text(body) = &sql.run[2].1[0] else { panic!("{:?}", sql.run) };
        // What was stored reads back as the session: the next command finds it.
        let row: &'static str = Box::leak(body.clone().into_boxed_str());
        let mut sql =
            Recorded { rows: vec![(READ, vec![vec![Some(row.into())]])], ..Recorded::default() };
        let (reply, forget) = carry_out(
            &mut sql,
            &code(),
            super::super::fixtures::create(),
            2_000,
            60_000,
            &mut Counter(1),
        )
        .unwrap();
        assert_eq!((reply, forget), (CodeReply::SealUsed, None));
    }

    #[test]
    fn a_failed_write_is_an_error_not_a_reply() {
        let mut sql = Recorded { fails: vec!["INSERT"], ..Recorded::default() };
        let create = super::super::fixtures::create();
        assert!(carry_out(&mut sql, &code(), create, 1_000, 60_000, &mut Counter(1)).is_err());
    }

    #[test]
    fn a_code_object_replies_sets_its_end_and_forgets_at_it() {
        use crate::machine::{due, turn, Platform};
        let (mut sql, mut rng, mut out) = (Recorded::default(), Counter(1), Vec::new());
        let mut object = CodeObject::new(code(), 60_000);
        let create = super::super::fixtures::create();
        let host = &mut Platform { sql: &mut sql, entropy: &mut rng };
        let wake = turn(&mut object, Some(create), 1_000, host, |o| out.push(o));
        assert_eq!(out, [Output::SetAlarm(61_000), Output::Reply(CodeReply::Created)]);
        assert_eq!(wake, Some(61_000));
        assert!(!due(&object, 60_999) && due(&object, 61_000));
        out.clear();
        assert_eq!(
            turn(&mut object, None, 61_000, host, |o| out.push(o)),
            None,
            "its end came once"
        );
        assert_eq!(out, [Output::Forget]);
    }
}
