//! The one shape of every machine of the core, in the manner of quinn-proto's `Connection`: a
//! shell gives it what happened ([`Machine::handle_input`], with the `now` it read for that
//! event), then takes what to carry out ([`Machine::poll_output`]) until it says None, and
//! sleeps until the next event or [`Machine::poll_timeout`], whichever comes first (a timeout
//! is one of its inputs). The machines: the endpoint's
//! [`Exchange`](crate::mcp::exchange::Exchange) (one request to `/`), the pairing's
//! [`Object`](crate::pairing::object::Object) (one browser's tabs, calls and grants), an OAuth
//! request's [`SagaRun`](crate::saga::SagaRun), and a connect code's
//! [`CodeObject`](crate::oauth::connect::stored::CodeObject). Every shell (the Worker's fetch
//! handler and Durable Objects, the local server's loop, the pair harness) moves every machine
//! by [`turn`], the loop written once; what a machine needs of its platform besides the clock
//! (randomness, storage) it names as its [`Machine::Host`], lent to each call.

/// A sans-IO machine of the core.
pub trait Machine {
    /// What happens to it.
    type Input;
    /// What it says to carry out.
    type Output;
    /// What it needs of the platform for one call (randomness, storage; `()` for nothing).
    type Host<'h>: ?Sized;

    /// Takes one input that happened at `now_ms`.
    fn handle_input(&mut self, input: Self::Input, now_ms: u64, host: &mut Self::Host<'_>);

    /// The next thing to carry out; None: wait for an input or [`Self::poll_timeout`].
    fn poll_output(&mut self, host: &mut Self::Host<'_>) -> Option<Self::Output>;

    /// When it next needs [`Self::handle_timeout`] (None: only an input moves it).
    fn poll_timeout(&self) -> Option<u64>;

    /// The clock reached [`Self::poll_timeout`] (or later) at `now_ms`.
    fn handle_timeout(&mut self, now_ms: u64, host: &mut Self::Host<'_>);
}

/// One turn of a shell's loop, the one place its order is written: gives `machine` what
/// happened at `now_ms` (`input`; None: its timeout, when it is [`due`], else nothing, as for
/// a machine just made), then hands every output to `carry` in order until it says no more,
/// and says when it next needs waking (its [`Machine::poll_timeout`]: the shell sleeps until
/// then or the next input). A shell whose carrying out must wait (an await) keeps the outputs
/// `carry` is given and gives what came of them in a later turn. Inlined: a shell that always
/// gives an input loses the timeout's path (in the Worker 90 bytes of wasm less than one
/// `turn` per machine, before gzip).
#[inline]
pub fn turn<M: Machine + ?Sized>(
    machine: &mut M,
    input: Option<M::Input>,
    now_ms: u64,
    host: &mut M::Host<'_>,
    mut carry: impl FnMut(M::Output),
) -> Option<u64> {
    match input {
        Some(input) => machine.handle_input(input, now_ms, host),
        None if due(machine, now_ms) => machine.handle_timeout(now_ms, host),
        None => {}
    }
    while let Some(output) = machine.poll_output(host) {
        carry(output);
    }
    machine.poll_timeout()
}

/// Whether `machine` is due its timeout at `now_ms`.
pub fn due<M: Machine + ?Sized>(machine: &M, now_ms: u64) -> bool {
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

    /// A machine that says back each input (and each timeout) twice, and wants waking
    /// `every` ms after the last thing that moved it; its host counts the calls it lent to.
    struct Echo {
        every: u64,
        at: Option<u64>,
        out: Vec<String>,
    }

    impl Machine for Echo {
        type Input = &'static str;
        type Output = String;
        type Host<'h> = u32;

        fn handle_input(&mut self, input: &'static str, now_ms: u64, host: &mut u32) {
            *host += 1;
            self.out.extend([format!("{input}@{now_ms}"), format!("{input} again")]);
            self.at = Some(now_ms + self.every);
        }

        fn poll_output(&mut self, host: &mut u32) -> Option<String> {
            *host += 1;
            (!self.out.is_empty()).then(|| self.out.remove(0))
        }

        fn poll_timeout(&self) -> Option<u64> {
            self.at
        }

        fn handle_timeout(&mut self, now_ms: u64, host: &mut u32) {
            self.handle_input("timeout", now_ms, host);
        }
    }

    fn echo() -> Echo {
        Echo { every: 100, at: None, out: vec!["made".into()] }
    }

    #[test]
    fn a_turn_gives_the_input_then_every_output_in_order_then_the_next_wake() {
        let (mut machine, mut host, mut seen) = (echo(), 0, Vec::new());
        // A machine just made: what it says already, no input, no wake yet.
        assert_eq!(turn(&mut machine, None, 5, &mut host, |o| seen.push(o)), None);
        assert_eq!(seen, ["made"]);
        let wake = turn(&mut machine, Some("a"), 10, &mut host, |o| seen.push(o));
        assert_eq!(seen, ["made", "a@10", "a again"], "the input first, then all it said");
        assert_eq!(wake, Some(110));
        assert_eq!(machine.poll_output(&mut host), None, "nothing is left for later");
        assert!(host > 0, "the host is lent to every call");
    }

    #[test]
    fn a_turn_without_an_input_gives_the_timeout_only_once_it_is_due() {
        let (mut machine, mut host, mut seen) = (echo(), 0, Vec::new());
        turn(&mut machine, Some("a"), 10, &mut host, |o| seen.push(o));
        seen.clear();
        // Woken early (another input's wake, say): nothing happens, the wake stands.
        assert_eq!(turn(&mut machine, None, 109, &mut host, |o| seen.push(o)), Some(110));
        assert!(seen.is_empty(), "{seen:?}");
        assert_eq!(turn(&mut machine, None, 110, &mut host, |o| seen.push(o)), Some(210));
        assert_eq!(seen, ["timeout@110", "timeout again"]);
    }

    #[test]
    fn the_loop_wakes_at_the_earliest_deadline_of_any_machine() {
        assert_eq!(earliest([None, Some(30), Some(10), None]), Some(10));
        assert_eq!(earliest([None, None]), None);
    }
}
