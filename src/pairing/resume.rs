//! The ends of calls kept for their client's return (2025-11-25 resumable streams): a call of
//! a client that can resume keeps running in its tab when its stream goes (it is not
//! cancelled; the room's registry of calls holds it, [`super::calls::Holder::Detached`]), until
//! its wait runs out; its end is kept here a while; the client's GET with `Last-Event-ID` takes
//! the call up again, running (from the registry) or ended (from here). Bounded: a few ends of
//! each connection are kept, each for a while.

use super::remove_where;
use super::wire::{connection_of, is_request_of, CallReply};
use crate::limits::{
    MAX_KEPT_BYTES, MAX_KEPT_BYTES_PER_CONNECTION, MAX_KEPT_ENDS, MAX_KEPT_ENDS_PER_CONNECTION,
    RESUME_KEPT_MS,
};

/// The ends kept for a resume.
#[derive(Debug, Clone, Default)]
pub struct Resumable {
    kept: Vec<Kept>,
}

/// An end kept as its JSON (what it is written as anyway, to count its bytes): taken up, it
/// reads back as written, and the room needs no copy of the reply it sends meanwhile.
#[derive(Debug, Clone)]
struct Kept {
    request: String,
    reply: Vec<u8>,
    until_ms: u64,
}

impl Kept {
    /// What it holds: its reply's JSON and its key.
    fn bytes(&self) -> usize {
        self.reply.len() + self.request.len()
    }
}

impl Resumable {
    /// Keeps the end of the call of request key `request` (whose wait ran to `until_ms`) for
    /// a while: its stream may have dropped before the pairing could tell, so even an end
    /// sent to a stream is kept. Within its connection's share
    /// ([`MAX_KEPT_ENDS_PER_CONNECTION`], [`MAX_KEPT_BYTES_PER_CONNECTION`]), that connection's
    /// oldest going first, then within [`MAX_KEPT_ENDS`] and [`MAX_KEPT_BYTES`]; an end larger
    /// than a connection's whole share is not kept.
    pub fn keep(&mut self, request: &str, reply: &CallReply, until_ms: u64) {
        let reply = tabrelay_bundle::fields::Encode::to_json(reply);
        // Its key (the client's JSON-RPC id) is kept too.
        let bytes = reply.len() + request.len();
        if bytes > MAX_KEPT_BYTES_PER_CONNECTION {
            return;
        }
        remove_where(&mut self.kept, &|k| k.request == request);
        let connection = connection_of(request);
        let shares = [
            (Some(connection), MAX_KEPT_ENDS_PER_CONNECTION, MAX_KEPT_BYTES_PER_CONNECTION),
            (None, MAX_KEPT_ENDS, MAX_KEPT_BYTES),
        ];
        for (whose, ends, most) in shares {
            let counted = |k: &Kept| whose.is_none_or(|c| connection_of(&k.request) == c);
            loop {
                let held = self.kept.iter().filter(|k| counted(k));
                let (count, held_bytes) = held.fold((0, 0), |(n, b), k| (n + 1, b + k.bytes()));
                if count < ends && held_bytes + bytes <= most {
                    break;
                }
                let Some(oldest) = self.kept.iter().position(counted) else { break };
                self.kept.remove(oldest);
            }
        }
        let request = request.to_owned();
        self.kept.push(Kept { request, reply, until_ms: until_ms + RESUME_KEPT_MS });
    }

    /// A call of request key `request` starts (again: a round of questions answered): an
    /// end kept under that key is an earlier round's, no longer the call's.
    pub fn forget(&mut self, request: &str) {
        remove_where(&mut self.kept, &|k| k.request == request);
    }

    /// The client returns at `now_ms` for the call of request key `request`: its end, if
    /// kept (once).
    pub fn take(&mut self, request: &str, now_ms: u64) -> Option<CallReply> {
        remove_where(&mut self.kept, &|k| k.until_ms <= now_ms);
        let i = self.kept.iter().position(|k| k.request == request)?;
        tabrelay_bundle::from_json(&self.kept.remove(i).reply)
    }

    /// Connection `grant` is gone: its kept ends go, so no resume finds them.
    pub fn forget_grant(&mut self, grant: &str) {
        remove_where(&mut self.kept, &|k| is_request_of(&k.request, grant));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(s: &str) -> CallReply {
        CallReply::not_carried(s)
    }

    #[test]
    fn an_end_is_taken_up_once_by_its_own_key_and_kept_a_while() {
        let mut r = Resumable::default();
        r.keep("g1 8", &end("done"), 10_000);
        assert_eq!(r.take("g2 8", 5_000), None, "another connection's key");
        assert_eq!(r.take("g1 8", 5_000), Some(end("done")));
        assert_eq!(r.take("g1 8", 5_000), None, "taken up once");
        r.keep("g1 9", &end("x"), 10_000);
        assert_eq!(r.take("g1 9", 10_000 + RESUME_KEPT_MS), None, "kept too long");
    }

    #[test]
    fn a_forgotten_connection_takes_up_nothing() {
        let mut r = Resumable::default();
        r.keep("g1 8", &end("done"), 10_000);
        r.keep("g10 8", &end("another's"), 10_000);
        r.forget_grant("g1");
        assert_eq!(r.take("g1 8", 100), None);
        assert_eq!(r.take("g10 8", 100), Some(end("another's")));
    }

    #[test]
    fn kept_ends_are_bounded_in_number_and_bytes() {
        let mut r = Resumable::default();
        for i in 0..=MAX_KEPT_ENDS as u64 {
            r.keep(&format!("k{i}"), &end("y"), 1_000);
        }
        assert_eq!(r.take("k0", 0), None, "the oldest went");
        assert_eq!(r.take("k1", 0), Some(end("y")));
        // Bounded in bytes too: a huge end is not kept, large ones push out the oldest.
        r.keep("g1 huge", &end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION)), 1_000);
        assert_eq!(r.take("g1 huge", 0), None);
        let big = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION / 2 - 100));
        for name in ["g1 b1", "g1 b2", "g1 b3"] {
            r.keep(name, &big(), 1_000);
        }
        assert_eq!(r.take("g1 b1", 0), None);
        assert_eq!(r.take("g1 b3", 0), Some(big()));
        r.keep("again", &end("round 1"), 1_000);
        r.forget("again");
        assert_eq!(r.take("again", 0), None, "a new round forgets the last one's end");
    }

    #[test]
    fn a_kept_ends_key_counts_in_its_connections_bytes() {
        let mut r = Resumable::default();
        // Two ends that fit the share as replies, but not with their long ids.
        let half = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION / 2 - 1_000));
        let id = "i".repeat(1_500);
        r.keep(&format!("g1 \"a{id}\""), &half(), 1_000);
        r.keep(&format!("g1 \"b{id}\""), &half(), 1_000);
        assert_eq!(r.take(&format!("g1 \"a{id}\""), 0), None, "the oldest went");
        assert_eq!(r.take(&format!("g1 \"b{id}\""), 0), Some(half()));
        let huge = format!("g1 \"{}\"", "i".repeat(MAX_KEPT_BYTES_PER_CONNECTION));
        r.keep(&huge, &end("small"), 1_000);
        assert_eq!(r.take(&huge, 0), None, "an end whose key passes the share is not kept");
    }

    #[test]
    fn a_connection_that_fills_its_kept_ends_pushes_out_its_own_only() {
        let mut r = Resumable::default();
        r.keep("g2 1", &end("theirs"), 1_000);
        for i in 0..MAX_KEPT_ENDS_PER_CONNECTION + 3 {
            r.keep(&format!("g1 {i}"), &end("mine"), 1_000);
        }
        assert_eq!(r.take("g1 2", 0), None, "its own oldest went");
        assert_eq!(r.take("g1 3", 0), Some(end("mine")));
        assert_eq!(r.take("g2 1", 0), Some(end("theirs")), "the other's is kept");
        // In bytes too: one connection's large ends push out its own.
        r.keep("g2 2", &end("theirs"), 1_000);
        let big = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION / 2 - 100));
        for i in 10..10 + MAX_KEPT_ENDS_PER_CONNECTION {
            r.keep(&format!("g1 {i}"), &big(), 1_000);
        }
        assert_eq!(r.take("g1 10", 0), None);
        assert_eq!(r.take("g2 2", 0), Some(end("theirs")));
        // The pairing-wide bound holds every connection's share at once, then the oldest goes.
        let mut r = Resumable::default();
        let full = || end(&"x".repeat(MAX_KEPT_BYTES_PER_CONNECTION - 100));
        for g in 0..crate::limits::MAX_GRANTS {
            r.keep(&format!("g{g} 1"), &full(), 1_000);
        }
        assert_eq!(r.take("g0 1", 0), Some(full()), "every share fits at once");
        r.keep("g0 1", &full(), 1_000);
        r.keep("extra 1", &full(), 1_000);
        assert_eq!(r.take("g1 1", 0), None, "past them all, the oldest went");
        assert_eq!(r.take("extra 1", 0), Some(full()));
    }
}
