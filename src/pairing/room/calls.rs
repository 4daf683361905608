//! The Room's waited calls: a tool call sent to a tab and its waiter, its events, its end or
//! its giving up, the calls left open, and a dropped stream's call taken up again.

use serde_json::Value;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::protocol::{Outcome as TabOutcome, RelayMessage};

use super::{Asker, Effect, Room, Waiter};
use crate::crypto::Entropy;
use crate::limits::{
    AFTERWARDS_DATA_CHARS, MAX_CALLS_PER_CONNECTION, MAX_PENDING_CALLS, MAX_TASKS_PER_CONNECTION,
    TAB_CALL_WAIT_MS, TASK_AFTER_MS, TURN_STORED_EVERY_MS, USED_GRANULARITY_MS,
};
use crate::pairing::calls::{Finished, LeftCalls};
use crate::pairing::resume::Found;
use crate::pairing::tasks::{self, Carried, Dispatch};
use crate::pairing::wire::{CallEvent, CallReply, CallRequest, Reply};
use crate::{sentences, tools};

impl Room {
    /// A tool call: to the tab calls go to, or answered at once (None: it waits).
    pub(super) fn call(
        &mut self,
        asker: Asker,
        call: CallRequest,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) -> Option<Reply> {
        // A forgotten or revoked connection's access token stops at once.
        let grant = self.grants.iter_mut().find(|g| g.id == call.tool_call.connection.id);
        let Some(grant) = grant else { return Some(Reply::NoGrant) };
        // Whether the client was verified is the grant's to say, not the call's.
        let mut call = call;
        call.tool_call.connection.verified.clone_from(&grant.requester.verified);
        if now_ms >= grant.used_ms + USED_GRANULARITY_MS {
            grant.used_ms = now_ms;
            out.push(Effect::StoreGrant(grant.clone()));
        }
        let done = |reply| Some(Reply::Call(CallEvent::Done(reply)));
        // The person stopped this agent in their tab: nothing of it runs until they let it go on.
        if grant.stopped {
            return done(CallReply::not_carried(sentences::AGENT_STOPPED));
        }
        if !tools::known(self.focused_list(), self.catalogue, &call.tool_call.tool) {
            return done(CallReply::NoSuchTool { tool: call.tool_call.tool });
        }
        // A 2026-07-28 call's headers that mirror arguments must agree with them (see
        // `tools::param_header_mismatch`): refused before the tab hears of it.
        if let Some(Value::Object(headers)) = &call.param_headers {
            let schema =
                tools::input_schema(self.focused_list(), self.catalogue, &call.tool_call.tool);
            let args = Some(&call.tool_call.args);
            if let Some(header) =
                schema.and_then(|s| tools::param_header_mismatch(s, args, headers))
            {
                return done(CallReply::HeaderMismatch { header });
            }
        }
        let support = tools::task_support(self.focused_list(), &call.tool_call.tool);
        let as_task = match tasks::dispatch(support, call.task.is_some()) {
            Dispatch::NeedsTasks => return done(CallReply::NeedsTasks),
            Dispatch::Direct => false,
            Dispatch::Task => true,
        };
        if as_task
            && self.tasks_of(&call.tool_call.connection.id, now_ms, out) >= MAX_TASKS_PER_CONNECTION
        {
            return done(CallReply::not_carried(sentences::too_many_tasks(
                MAX_TASKS_PER_CONNECTION,
            )));
        }
        let Some(tab) = self.focused().map(|t| t.number) else {
            return done(CallReply::not_carried(sentences::NO_TAB));
        };
        let grant = &call.tool_call.connection.id;
        if let Err(sentence) = self.room_for_call(grant) {
            return done(CallReply::not_carried(sentence));
        }
        let started =
            self.calls.start(tab, now_ms, call.request.clone(), grant, &call.tool_call.tool);
        let id = match started {
            Ok(id) => id,
            Err(sentence) => return done(CallReply::not_carried(sentence)),
        };
        let turn = self.turns.of_call(&call.tool_call.connection.id, now_ms);
        let (stored_turn, stored_ms) = self.turns_stored;
        if turn != stored_turn || now_ms >= stored_ms + TURN_STORED_EVERY_MS {
            self.turns_stored = (turn, now_ms);
            out.push(Effect::StoreTurns(self.turns.clone()));
        }
        let wait_ms = call.wait_ms.min(TAB_CALL_WAIT_MS);
        let task = as_task.then(|| {
            Box::new(Carried {
                tab,
                call: Some(id),
                tool_call: call.tool_call.clone(),
                declared: call.task.as_ref().map(|t| t.declared.clone()).unwrap_or_default(),
            })
        });
        // A call that may become a task waits a moment only: then the task is made.
        let until = now_ms + if as_task { TASK_AFTER_MS } else { wait_ms };
        self.resume.forget(&call.request);
        let (request, resumable) = (call.request.clone(), call.resumable && call.stream);
        let until_ms = now_ms + wait_ms;
        let waiter =
            Waiter { asker, stream: call.stream, wait_ms, task, request, resumable, until_ms };
        self.waiters.insert(id, waiter);
        out.push(Effect::Send(
            tab,
            RelayMessage::Call { id, tool_call: call.tool_call, turn, input: call.input },
        ));
        out.push(Effect::Deadline(asker, id, until));
        if as_task && call.task.is_some_and(|t| t.at_once) {
            self.make_task(id, now_ms, entropy, out);
        }
        None
    }

    /// The wait for `call` ran out: it becomes a task if it may, else it gives up (dropped in
    /// its tab, or kept as left open) and its waiter is told.
    pub(super) fn deadline(
        &mut self,
        call: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let becomes_task = self.waiters.get(&call).is_some_and(|w| w.task.is_some());
        if becomes_task {
            self.make_task(call, now_ms, entropy, out);
        } else if let Some(waiter) = self.waiters.remove(&call) {
            let gave_up = self.calls.give_up(call, waiter.wait_ms);
            match gave_up.cancel_in {
                Some(tab) => out.push(Effect::Send(tab, RelayMessage::Cancel { id: call })),
                // Left open in the tab: kept, for the connection's status.
                None => out.push(Effect::StoreLeft(self.calls.left_calls().clone())),
            }
            let reply = CallReply::not_carried(gave_up.sentence);
            out.push(Effect::Reply(waiter.asker, Reply::Call(CallEvent::Done(reply))));
        }
    }

    /// Request `asker` stopped waiting: its calls are dropped in their tabs, or (a resumable
    /// one) kept running for its client's return.
    pub(super) fn waiter_gone(&mut self, asker: Asker, out: &mut Vec<Effect>) {
        let calls: Vec<u64> =
            self.waiters.iter().filter(|(_, w)| w.asker == asker).map(|(c, _)| *c).collect();
        for call in calls {
            let Some(waiter) = self.waiters.remove(&call) else { continue };
            if waiter.resumable {
                // Its client comes back for it: it keeps running until its wait ends.
                out.push(Effect::SetAlarm(waiter.until_ms));
                self.resume.detach(call, waiter.request, waiter.until_ms, waiter.wait_ms);
                continue;
            }
            if let Some(tab) = self.calls.abandon(call) {
                out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
            }
        }
    }

    /// The client cancelled its call `request`: dropped in its tab, its waiter told.
    pub(super) fn cancel(&mut self, request: &str, out: &mut Vec<Effect>) {
        if let Some((call, tab)) = self.calls.cancel(request) {
            out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
            self.done(call, CallReply::not_carried(sentences::CANCELLED), out);
        }
    }

    /// Tab `tab` asks the person about `call`: a waiter that may poll tasks gets one, a stream
    /// hears the card.
    pub(super) fn asking(
        &mut self,
        tab: u64,
        call: u64,
        sentence: &str,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let before = self.calls.left_calls().clone();
        if let Some(card) = self.calls.asking(call, tab, sentence) {
            if self.waiters.get(&call).is_some_and(|w| w.task.is_some()) {
                // The person is asked: a client that polls tasks polls this one.
                self.make_task(call, now_ms, entropy, out);
            } else {
                self.event(call, CallEvent::Asking(card), out);
            }
        }
        self.store_left_if_changed(&before, out);
    }

    /// The person answered tab `tab`'s card for `call`.
    pub(super) fn answered(&mut self, tab: u64, call: u64, out: &mut Vec<Effect>) {
        let before = self.calls.left_calls().clone();
        if self.calls.answered(call, tab) {
            self.event(call, CallEvent::Answered, out);
        }
        self.store_left_if_changed(&before, out);
    }

    /// Tab `tab`'s result for `call`: to its waiter, or (left open) kept for the status.
    pub(super) fn result(
        &mut self,
        tab: u64,
        call: u64,
        outcome: TabOutcome,
        out: &mut Vec<Effect>,
    ) {
        match self.calls.finish(call, tab) {
            Finished::Waited => self.done(call, CallReply::TabResult { outcome }, out),
            Finished::Left { grant, tool } => {
                self.calls.afterwards(grant, tool, afterwards_said(&outcome));
                out.push(Effect::StoreLeft(self.calls.left_calls().clone()));
            }
            Finished::Not => {}
        }
    }

    /// The person stepped in a tab: a new turn, stored.
    pub(super) fn person_stepped(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        self.turns.person_stepped();
        self.turns_stored = (self.turns.current(), now_ms);
        out.push(Effect::StoreTurns(self.turns.clone()));
    }

    /// A client comes back for a call whose stream dropped: its end, or (a tick at once) its
    /// events again.
    pub(super) fn take_up(
        &mut self,
        asker: Asker,
        request: &str,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) -> Reply {
        match self.resume.resume(request, now_ms) {
            Found::Ended(reply) => Reply::Call(CallEvent::Done(reply)),
            Found::Running { call, until_ms, wait_ms } => {
                let request = request.to_owned();
                let waiter = Waiter {
                    asker,
                    stream: true,
                    wait_ms,
                    task: None,
                    request,
                    resumable: true,
                    until_ms,
                };
                self.waiters.insert(call, waiter);
                out.push(Effect::Deadline(asker, call, until_ms));
                // A first line at once: the client's new stream opens now, not at the end.
                Reply::Call(CallEvent::Tick)
            }
            Found::Nothing => {
                // Its stream dropped before the pairing could tell (the client came back first):
                // the call's waiter is the client's new stream.
                let attached = self
                    .waiters
                    .iter()
                    .find(|(_, w)| w.resumable && w.request == request)
                    .map(|(call, _)| *call);
                let waiter = attached.and_then(|call| Some((call, self.waiters.remove(&call)?)));
                let Some((call, waiter)) = waiter else { return Reply::NotAsked };
                out.push(Effect::Deadline(asker, call, waiter.until_ms));
                self.waiters.insert(call, Waiter { asker, ..waiter });
                Reply::Call(CallEvent::Tick)
            }
        }
    }

    /// Calls whose stream dropped and whose wait ran out give up as a waited call does; what
    /// they said is kept for the client's return.
    pub(super) fn resumable_overdue(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        for (call, wait_ms) in self.resume.overdue(now_ms) {
            let gave_up = self.calls.give_up(call, wait_ms);
            match gave_up.cancel_in {
                Some(tab) => out.push(Effect::Send(tab, RelayMessage::Cancel { id: call })),
                None => out.push(Effect::StoreLeft(self.calls.left_calls().clone())),
            }
            self.resume.ended(call, CallReply::not_carried(gave_up.sentence));
        }
        if let Some(at) = self.resume.next_alarm() {
            out.push(Effect::SetAlarm(at));
        }
    }

    /// An event of a call before its end, for a waiter that reads a stream.
    fn event(&self, call: u64, event: CallEvent, out: &mut Vec<Effect>) {
        if let Some(waiter) = self.waiters.get(&call).filter(|w| w.stream) {
            out.push(Effect::Reply(waiter.asker, Reply::Call(event)));
        }
    }

    /// The end of a call: its waiter gets the reply (or, its stream gone, it is kept for
    /// the client's return).
    pub(super) fn done(&mut self, call: u64, reply: CallReply, out: &mut Vec<Effect>) {
        match self.waiters.remove(&call) {
            Some(waiter) => {
                if waiter.resumable {
                    self.resume.keep(waiter.request, reply.clone(), waiter.until_ms);
                }
                out.push(Effect::Reply(waiter.asker, Reply::Call(CallEvent::Done(reply))))
            }
            None => {
                self.resume.ended(call, reply);
            }
        }
    }

    /// Stores the calls left open when they changed from `before`.
    pub(super) fn store_left_if_changed(&self, before: &LeftCalls, out: &mut Vec<Effect>) {
        if self.calls.left_calls() != before {
            out.push(Effect::StoreLeft(self.calls.left_calls().clone()));
        }
    }

    /// How many calls connection `grant` has in the tabs (None: every connection): those waited
    /// on and those that carry its tasks.
    fn calls_in_flight(&self, grant: Option<&str>) -> usize {
        let waited = grant.map_or(self.calls.len(), |g| self.calls.of(g));
        let tasks = self.tasks.iter().filter(|t| grant.is_none_or(|g| t.grant == g));
        waited + tasks.filter(|t| t.carried.call.is_some()).count()
    }

    /// Whether connection `grant` may start another call (a task's next round too): within its
    /// share of calls, and the pairing within its bound; else the sentence saying which is full.
    pub(super) fn room_for_call(&self, grant: &str) -> Result<(), String> {
        if self.calls_in_flight(Some(grant)) >= MAX_CALLS_PER_CONNECTION {
            return Err(sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION));
        }
        if self.calls_in_flight(None) >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        Ok(())
    }
}

/// What came of a call nobody waited for, in the relay's words with the tab's marked as data
/// (its data cut to [`AFTERWARDS_DATA_CHARS`]).
fn afterwards_said(outcome: &TabOutcome) -> String {
    match outcome {
        TabOutcome::Done { data, .. } => {
            let json = serde_json::to_string(data).unwrap_or_default();
            let cut: String = json.chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_ran(&quoted(&cut))
        }
        TabOutcome::Failed { error } => {
            let cut: String = error.chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_failed(&quoted(&cut))
        }
        TabOutcome::InputRequired { .. } => sentences::LEFT_NEEDS_INPUT.to_owned(),
    }
}
