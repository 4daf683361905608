//! The one shape of every machine of the core, in the manner of quinn-proto's `Connection`: a
//! shell gives it what happened ([`Machine::handle_input`], with the `now` it read for that
//! event), then takes what to carry out ([`Machine::poll_output`]) until it says None, and
//! sleeps until the next event or [`Machine::poll_timeout`], whichever comes first (a timeout
//! is one of its inputs). The machines: the endpoint's
//! [`Exchange`](crate::mcp::exchange::Exchange) (one request to `/`), the pairing's
//! [`Object`](crate::pairing::object::Object) (one browser's tabs, calls and grants), an OAuth
//! request's [`SagaRun`](crate::saga::SagaRun), and a connect code's
//! [`CodeObject`](crate::oauth::connect::stored::CodeObject). Each shell's loop is written once against
//! this shape ([`due`], [`earliest`]); what a machine needs of its platform besides
//! the clock (randomness, storage) it names as its [`Machine::Host`], given with each call.

/// A sans-IO machine of the core.
pub trait Machine {
    /// What happens to it.
    type Input;
    /// What it says to carry out.
    type Output;
    /// What it needs of the platform for one call (randomness, storage; `()` for nothing).
    type Host<'h>;

    /// Takes one input that happened at `now_ms`.
    fn handle_input(&mut self, input: Self::Input, now_ms: u64, host: Self::Host<'_>);

    /// The next thing to carry out; None: wait for an input or [`Self::poll_timeout`].
    fn poll_output(&mut self, host: Self::Host<'_>) -> Option<Self::Output>;

    /// When it next needs [`Self::handle_timeout`] (None: only an input moves it).
    fn poll_timeout(&self) -> Option<u64>;

    /// The clock reached [`Self::poll_timeout`] (or later) at `now_ms`.
    fn handle_timeout(&mut self, now_ms: u64, host: Self::Host<'_>);
}

/// Whether `machine` is due its timeout at `now_ms`.
pub fn due<M: Machine>(machine: &M, now_ms: u64) -> bool {
    machine.poll_timeout().is_some_and(|at| at <= now_ms)
}

/// The earliest of the deadlines given (the loop's next wake).
pub fn earliest(deadlines: impl IntoIterator<Item = Option<u64>>) -> Option<u64> {
    deadlines.into_iter().flatten().min()
}

/// What the pairing's object needs of its platform: its SQL storage and randomness.
pub struct Platform<'h> {
    /// The object's storage.
    pub sql: &'h mut dyn crate::sql::Sql,
    /// Randomness.
    pub entropy: &'h mut dyn crate::crypto::Entropy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_wakes_at_the_earliest_deadline_of_any_machine() {
        assert_eq!(earliest([None, Some(30), Some(10), None]), Some(10));
        assert_eq!(earliest([None, None]), None);
    }
}
