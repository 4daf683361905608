//! Turns: how a pairing groups the agents' calls, so the person can undo a turn at once.

use crate::limits::AGENT_TURN_IDLE_MS;

/// person takes a step, or [`AGENT_TURN_IDLE_MS`] passes. Kept in storage across hibernation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turns {
    last: Option<(String, u64)>,
    turn: u64,
}

impl Turns {
    /// The turn of a call from `connection` at `now_ms`.
    pub fn of_call(&mut self, connection: &str, now_ms: u64) -> u64 {
        let same = matches!(&self.last, Some((c, at)) if c == connection && now_ms < at + AGENT_TURN_IDLE_MS);
        if !same {
            self.turn += 1;
        }
        self.last = Some((connection.to_owned(), now_ms));
        self.turn
    }

    /// The number of the latest turn (0: none yet).
    #[must_use]
    pub fn current(&self) -> u64 {
        self.turn
    }

    /// Whether no call made a turn yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.last.is_none() && self.turn == 0
    }

    /// The person took a step: the next call starts a new turn.
    pub fn person_stepped(&mut self) {
        self.last = None;
    }
}

tabrelay_bundle::codec!(Turns, "turns", { last, turn });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::round_trip;

    #[test]
    fn turns_read_back_as_written() {
        let mut turns = Turns::default();
        round_trip(&turns);
        turns.of_call("g1", 10);
        round_trip(&turns);
    }

    #[test]
    fn a_connections_calls_share_a_turn_until_another_steps_or_time_passes() {
        let mut turns = Turns::default();
        let a1 = turns.of_call("a", 0);
        assert_eq!(turns.of_call("a", 1000), a1);
        let b = turns.of_call("b", 2000);
        assert_ne!(b, a1);
        let a2 = turns.of_call("a", 3000);
        assert_ne!(a2, b);
        assert_ne!(turns.of_call("a", 3000 + AGENT_TURN_IDLE_MS), a2);
        let a3 = turns.of_call("a", 3001 + AGENT_TURN_IDLE_MS);
        turns.person_stepped();
        assert_ne!(
            turns.of_call("a", 3002 + AGENT_TURN_IDLE_MS),
            a3,
            "the person's step ends the turn"
        );
    }
}
