//! Calls whose client's stream dropped, kept for the client's return (2025-11-25 resumable
//! streams): a call of a client that can resume keeps running in its tab when its stream goes
//! (it is not cancelled), until its wait runs out; its end is kept a while; the client's GET
//! with `Last-Event-ID` takes the call up again, running or ended. Bounded: a call detached is
//! one of the pairing's calls (already bounded), and a few ends of each connection are kept,
//! each for a while.

use super::wire::{connection_of, is_request_of, CallReply};
use crate::limits::{
    MAX_KEPT_BYTES, MAX_KEPT_BYTES_PER_CONNECTION, MAX_KEPT_ENDS, MAX_KEPT_ENDS_PER_CONNECTION,
    RESUME_KEPT_MS,
};

/// The calls detached from their streams and the ends kept for a resume.
#[derive(Debug, Clone, Default)]
pub struct Resumable {
    detached: Vec<Detached>,
    kept: Vec<Kept>,
}

#[derive(Debug, Clone)]
struct Detached {
    call: u64,
    request: String,
    until_ms: u64,
    wait_ms: u64,
}

#[derive(Debug, Clone)]
struct Kept {
    request: String,
    reply: CallReply,
    until_ms: u64,
    bytes: usize,
}

/// What a resume finds of a call (by its request key).
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// It ended while nobody listened: its end.
    Ended(CallReply),
    /// It still runs: wait for it again, until `until_ms` (its wait was `wait_ms`).
    Running {
        /// The call's number.
        call: u64,
        /// When its wait runs out.
        until_ms: u64,
        /// Its whole wait.
        wait_ms: u64,
    },
    /// Nothing to resume (never detached, resumed already, or kept too long).
    Nothing,
}

impl Resumable {
    /// Call `call` (request key `request`) lost its stream; its wait runs out at `until_ms`.
    pub fn detach(&mut self, call: u64, request: String, until_ms: u64, wait_ms: u64) {
        self.detached.push(Detached { call, request, until_ms, wait_ms });
    }

    /// Call `call` ended with `reply` while detached: kept for the client's return (false: it
    /// was not detached).
    pub fn ended(&mut self, call: u64, reply: CallReply) -> bool {
        let Some(i) = self.detached.iter().position(|d| d.call == call) else { return false };
        let d = self.detached.swap_remove(i);
        self.keep(d.request, reply, d.until_ms);
        true
    }

    /// Keeps the end of the call of request key `request` (whose wait ran to `until_ms`) for
    /// a while: its stream may have dropped before the pairing could tell, so even an end
    /// sent to a stream is kept. Within its connection's share
    /// ([`MAX_KEPT_ENDS_PER_CONNECTION`], [`MAX_KEPT_BYTES_PER_CONNECTION`]), that connection's
    /// oldest going first, then within [`MAX_KEPT_ENDS`] and [`MAX_KEPT_BYTES`]; an end larger
    /// than a connection's whole share is not kept.
    pub fn keep(&mut self, request: String, reply: CallReply, until_ms: u64) {
        let bytes = tabrelay_bundle::fields::Encode::to_json(&reply).len();
        if bytes > MAX_KEPT_BYTES_PER_CONNECTION {
            return;
        }
        self.kept.retain(|k| k.request != request);
        let connection = connection_of(&request);
        let shares = [
            (Some(connection), MAX_KEPT_ENDS_PER_CONNECTION, MAX_KEPT_BYTES_PER_CONNECTION),
            (None, MAX_KEPT_ENDS, MAX_KEPT_BYTES),
        ];
        for (whose, ends, most) in shares {
            let counted = |k: &Kept| whose.is_none_or(|c| connection_of(&k.request) == c);
            loop {
                let held = self.kept.iter().filter(|k| counted(k));
                let (count, held_bytes) = held.fold((0, 0), |(n, b), k| (n + 1, b + k.bytes));
                if count < ends && held_bytes + bytes <= most {
                    break;
                }
                let Some(oldest) = self.kept.iter().position(counted) else { break };
                self.kept.remove(oldest);
            }
        }
        self.kept.push(Kept { request, reply, until_ms: until_ms + RESUME_KEPT_MS, bytes });
    }

    /// A call of request key `request` starts (again: a round of questions answered): an
    /// end kept under that key is an earlier round's, no longer the call's.
    pub fn forget(&mut self, request: &str) {
        self.kept.retain(|k| k.request != request);
    }

    /// The client returns for the call of request key `request` at `now_ms`.
    pub fn resume(&mut self, request: &str, now_ms: u64) -> Found {
        self.expire(now_ms);
        if let Some(i) = self.kept.iter().position(|k| k.request == request) {
            return Found::Ended(self.kept.remove(i).reply);
        }
        match self.detached.iter().position(|d| d.request == request) {
            Some(i) => {
                let d = self.detached.swap_remove(i);
                Found::Running { call: d.call, until_ms: d.until_ms, wait_ms: d.wait_ms }
            }
            None => Found::Nothing,
        }
    }

    /// The detached calls whose wait ran out by `now_ms` (call, its wait): they give up as a
    /// waited call would, and [`Self::ended`] keeps what they said. Ends kept too long go.
    pub fn overdue(&mut self, now_ms: u64) -> Vec<(u64, u64)> {
        self.expire(now_ms);
        self.detached.iter().filter(|d| d.until_ms <= now_ms).map(|d| (d.call, d.wait_ms)).collect()
    }

    /// When the alarm must ring next for a detached call's wait (None: none detached).
    #[must_use]
    pub fn next_alarm(&self) -> Option<u64> {
        self.detached.iter().map(|d| d.until_ms).min()
    }

    /// Connection `grant` is gone: its detached calls (ended by the pairing) and its kept ends
    /// go, so no resume finds them.
    pub fn forget_grant(&mut self, grant: &str) {
        self.detached.retain(|d| !is_request_of(&d.request, grant));
        self.kept.retain(|k| !is_request_of(&k.request, grant));
    }

    fn expire(&mut self, now_ms: u64) {
        self.kept.retain(|k| k.until_ms > now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(s: &str) -> CallReply {
        CallReply::not_carried(s)
    }

    #[test]
    fn a_detached_call_is_taken_up_again_running_or_ended_once() {
        let mut r = Resumable::default();
        r.detach(1, "g1 7".into(), 10_000, 9_000);
        assert_eq!(r.resume("g2 7", 100), Found::Nothing, "another connection's key");
        assert_eq!(
            r.resume("g1 7", 100),
            Found::Running { call: 1, until_ms: 10_000, wait_ms: 9_000 }
        );
        assert_eq!(r.resume("g1 7", 100), Found::Nothing, "taken up once");
        r.detach(2, "g1 8".into(), 10_000, 9_000);
        assert!(r.ended(2, end("done")));
        assert!(!r.ended(3, end("never detached")));
        assert_eq!(r.resume("g1 8", 5_000), Found::Ended(end("done")));
        assert_eq!(r.resume("g1 8", 5_000), Found::Nothing);
    }

    #[test]
    fn a_forgotten_connection_takes_up_nothing() {
        let mut r = Resumable::default();
        r.detach(1, "g1 7".into(), 10_000, 9_000);
        r.keep("g1 8".into(), end("done"), 10_000);
        r.keep("g10 8".into(), end("another's"), 10_000);
        r.forget_grant("g1");
        assert_eq!(r.resume("g1 7", 100), Found::Nothing);
        assert_eq!(r.resume("g1 8", 100), Found::Nothing);
        assert_eq!(r.next_alarm(), None, "its detached call needs no alarm");
        assert_eq!(r.resume("g10 8", 100), Found::Ended(end("another's")));
    }

    #[test]
    fn a_detached_call_gives_up_at_its_wait_and_an_end_is_kept_a_while() {
        let mut r = Resumable::default();
        r.detach(1, "a".into(), 10_000, 9_000);
        r.detach(2, "b".into(), 20_000, 9_000);
        assert_eq!(r.next_alarm(), Some(10_000));
        assert_eq!(r.overdue(9_999), []);
        assert_eq!(r.overdue(10_000), [(1, 9_000)]);
        assert!(r.ended(1, end("wait over")));
        assert_eq!(r.next_alarm(), Some(20_000));
        assert_eq!(r.resume("a", 10_001), Found::Ended(end("wait over")));
        assert!(r.ended(2, end("x")));
        assert_eq!(r.next_alarm(), None);
        assert_eq!(r.resume("b", 20_000 + RESUME_KEPT_MS), Found::Nothing, "kept too long");
        for i in 0..=MAX_KEPT_ENDS as u64 {
            r.keep(format!("k{i}"), end("y"), 1_000);
        }
        assert_eq!(r.resume("k0", 0), Found::Nothing, "the oldest went");
        assert_eq!(r.resume("k1", 0), Found::Ended(end("y")));
        // Bounded in bytes too: a huge end is not kept, large ones push out the oldest.
        r.keep("g1 huge".into(), end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION)), 1_000);
        assert_eq!(r.resume("g1 huge", 0), Found::Nothing);
        let big = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION / 2 - 100));
        for name in ["g1 b1", "g1 b2", "g1 b3"] {
            r.keep(name.into(), big(), 1_000);
        }
        assert_eq!(r.resume("g1 b1", 0), Found::Nothing);
        assert_eq!(r.resume("g1 b3", 0), Found::Ended(big()));
        r.keep("again".into(), end("round 1"), 1_000);
        r.forget("again");
        assert_eq!(r.resume("again", 0), Found::Nothing, "a new round forgets the last one's end");
    }

    #[test]
    fn a_connection_that_fills_its_kept_ends_pushes_out_its_own_only() {
        let mut r = Resumable::default();
        r.keep("g2 1".into(), end("theirs"), 1_000);
        for i in 0..MAX_KEPT_ENDS_PER_CONNECTION + 3 {
            r.keep(format!("g1 {i}"), end("mine"), 1_000);
        }
        assert_eq!(r.resume("g1 2", 0), Found::Nothing, "its own oldest went");
        assert_eq!(r.resume("g1 3", 0), Found::Ended(end("mine")));
        assert_eq!(r.resume("g2 1", 0), Found::Ended(end("theirs")), "the other's is kept");
        // In bytes too: one connection's large ends push out its own.
        r.keep("g2 2".into(), end("theirs"), 1_000);
        let big = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION / 2 - 100));
        for i in 10..10 + MAX_KEPT_ENDS_PER_CONNECTION {
            r.keep(format!("g1 {i}"), big(), 1_000);
        }
        assert_eq!(r.resume("g1 10", 0), Found::Nothing);
        assert_eq!(r.resume("g2 2", 0), Found::Ended(end("theirs")));
        // The pairing-wide bound holds every connection's share at once, then the oldest goes.
        let mut r = Resumable::default();
        let full = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION - 100));
        for g in 0..crate::limits::MAX_GRANTS {
            r.keep(format!("g{g} 1"), full(), 1_000);
        }
        assert_eq!(r.resume("g0 1", 0), Found::Ended(full()), "every share fits at once");
        r.keep("g0 1".into(), full(), 1_000);
        r.keep("extra 1".into(), full(), 1_000);
        assert_eq!(r.resume("g1 1", 0), Found::Nothing, "past them all, the oldest went");
        assert_eq!(r.resume("extra 1", 0), Found::Ended(full()));
    }
}
