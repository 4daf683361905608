//! The pairing's allowance of wrong connect codes.

use crate::limits::{WRONG_CODES_ALLOWED, WRONG_CODE_WINDOW_MS};
use serde::Serialize;
use serde_json::Value;
use tabrelay_bundle::fields::{Fields, FromValue};

/// A pairing's recent wrong connect codes: a few a minute, then every code is refused until
/// the minute passes (so no tab can search the code space). Kept in storage.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WrongCodes {
    at: Vec<u64>,
}

impl WrongCodes {
    /// Whether the pairing may try a code at `now_ms`.
    pub fn allows(&mut self, now_ms: u64) -> bool {
        self.at.retain(|t| now_ms < t + WRONG_CODE_WINDOW_MS);
        self.at.len() < WRONG_CODES_ALLOWED
    }

    /// A code the pairing tried was wrong.
    pub fn record(&mut self, now_ms: u64) {
        self.at.push(now_ms);
    }
}

impl FromValue for WrongCodes {
    const WHAT: &'static str = "wrong codes";
    fn from_value(value: Value) -> Option<Self> {
        let at = Fields::of(value)?.value("at")?;
        Some(Self { at: at.as_array()?.iter().map(Value::as_u64).collect::<Option<_>>()? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::round_trip;

    #[test]
    fn wrong_codes_read_back_as_written() {
        let mut wrong = WrongCodes::default();
        round_trip(&wrong);
        wrong.allows(5);
        wrong.record(5);
        round_trip(&wrong);
    }

    #[test]
    fn a_pairing_gets_a_few_wrong_codes_a_minute() {
        let mut wrong = WrongCodes::default();
        for i in 0..WRONG_CODES_ALLOWED as u64 {
            assert!(wrong.allows(i));
            wrong.record(i);
        }
        assert!(!wrong.allows(10));
        assert!(wrong.allows(WRONG_CODE_WINDOW_MS + 1), "a minute later it may try again");
    }
}
