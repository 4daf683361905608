//! The Room's timers, in the style of quinn-proto's `TimerTable`: every call's wait (in the
//! registry of calls in flight), every quiet stream's keep-alive tick, a socket's hello and
//! bounds, and the record of a replayed code that keeps the pairing's rows. The object asks
//! [`Room::poll_timeout`] when to wake, sleeps until then and gives [`Input::Timeout`]; it
//! reads no time of its own beyond the one `now` of each input. What must wake the object
//! when no request is in flight (nothing else would) also sets its alarm: the room says when
//! ([`Effect::SetAlarm`], only when that time changes); the rest is a request's to wake for.

use super::{reply_to, Asker, Effect, Room};
use crate::crypto::Entropy;
use crate::limits::KEEP_ALIVE_MS;
use crate::pairing::tabs::{next_check, sockets_to_close};
use crate::pairing::wire::{CallEvent, ListenEvent, Reply, Request};

impl Room {
    /// When the room next needs an [`Input::Timeout`] (None: nothing is timed).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        let mut next = earliest(&[self.durable_next(), self.calls.next_due(false)]);
        for (at, _) in self.ticks.values() {
            next = earliest(&[next, Some(*at)]);
        }
        next
    }

    /// What is due at `now_ms` is done: [`Room::handle`] with [`Input::Timeout`].
    pub fn handle_timeout(&mut self, now_ms: u64, entropy: &mut dyn Entropy) -> Vec<Effect> {
        self.handle(super::Input::Timeout, now_ms, entropy)
    }

    /// The timers due at `now_ms`: sockets past their bounds close, calls whose wait ran out
    /// give up (or become tasks), quiet streams say a tick.
    pub(super) fn timeout(
        &mut self,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        for &(tab, (code, reason)) in &sockets_to_close(self.tabs.values(), now_ms) {
            self.close(tab, code, reason, now_ms, out);
        }
        for &id in &self.calls.due(now_ms) {
            self.flight_due(id, now_ms, entropy, out);
        }
        // A stream that heard something now is not quiet.
        let heard = |asker: &Asker, out: &[Effect]| {
            out.iter().any(|e| matches!(e, Effect::Reply(a, _) if a == asker))
        };
        for (asker, (at, tick)) in self.ticks.iter() {
            if *at <= now_ms && !heard(asker, out) {
                reply_to(out, *asker, tick.reply());
            }
        }
    }

    /// A request whose stream says a tick when quiet starts its keep-alive timer: a streamed
    /// call, a `/listen` stream, a wait for a session's answers, a call taken up.
    pub(super) fn watch_quiet(&mut self, asker: Asker, request: &Request, now_ms: u64) {
        let tick = match request {
            Request::Call(call) if call.stream => Tick::Call,
            Request::Listen { .. } => Tick::Listen,
            Request::AwaitAnswers { .. } | Request::Resume { .. } => Tick::Call,
            _ => return,
        };
        self.ticks.insert(asker, (now_ms + KEEP_ALIVE_MS, tick));
    }

    /// After an input: a stream's last reply ends its timer, any other reply restarts it (a
    /// tick comes after [`KEEP_ALIVE_MS`] of quiet); the alarm is set when what it must wake
    /// for changed.
    pub(super) fn keep_time(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        for effect in out.iter() {
            match effect {
                Effect::Reply(asker, reply) if reply.ends() => {
                    self.ticks.remove(asker);
                }
                Effect::Reply(asker, _) => {
                    if let Some((at, _)) = self.ticks.get_mut(asker) {
                        *at = now_ms + KEEP_ALIVE_MS;
                    }
                }
                _ => {}
            }
        }
        if self.alarm.is_some_and(|at| at <= now_ms) {
            self.alarm = None; // it rang (or rings now)
        }
        let next = self.durable_next();
        if next.is_some() && next != self.alarm {
            out.push(Effect::SetAlarm(next.unwrap_or_default()));
            self.alarm = next;
        }
    }

    /// When the alarm must ring: a socket's hello or bounds, a call no request waits for (its
    /// stream dropped, or a task's round), the end of a replayed code's record (then the
    /// pairing's rows go).
    fn durable_next(&self) -> Option<u64> {
        let sockets = next_check(self.tabs.values(), self.now);
        let forget = (self.wrote && self.keeps_nothing()).then_some(self.replayed_until);
        earliest(&[sockets, self.calls.next_due(true), forget])
    }
}

/// The earliest of `times` that are set (None: none is).
fn earliest(times: &[Option<u64>]) -> Option<u64> {
    let mut first: Option<u64> = None;
    for t in times.iter().copied().flatten() {
        if first.is_none_or(|f| t < f) {
            first = Some(t);
        }
    }
    first
}

/// The keep-alive a quiet stream says: a call's (or a wait for answers') or a listener's.
#[derive(Debug, Clone, Copy)]
pub(super) enum Tick {
    Call,
    Listen,
}

impl Tick {
    fn reply(self) -> Reply {
        match self {
            Tick::Call => Reply::Call(CallEvent::Tick),
            Tick::Listen => Reply::Listen(ListenEvent::Tick),
        }
    }
}
