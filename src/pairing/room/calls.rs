//! The Room's calls in flight: a tool call sent to a tab and whoever holds it (its waiting
//! request, its dropped stream's client, a task), its events, its end or its giving up, the
//! calls left open, and a dropped stream's call taken up again.

use serde_json::Value;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::fields::json_text;
use tabrelay_bundle::protocol::{Outcome as TabOutcome, RelayMessage};

use super::{cancel, reply_to, send, Asker, Effect, Room, INTERNAL_ERROR};
use crate::crypto::Entropy;
use crate::limits::{
    AFTERWARDS_DATA_CHARS, MAX_TASKS_PER_CONNECTION, MAX_TASK_BYTES_PER_CONNECTION,
    TAB_CALL_WAIT_MS, TASK_AFTER_MS, TURN_STORED_EVERY_MS, USED_GRANULARITY_MS,
};
use crate::pairing::admit;
use crate::pairing::calls::{Finished, Flight, Holder, Waiter};
use crate::pairing::tasks::{self, Carried, Dispatch};
use crate::pairing::wire::{CallEvent, CallReply, CallRequest, Reply};
use crate::sentences;

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
        call.tool_call.connection.verified = grant.requester.verified.clone();
        if now_ms >= grant.used_ms + USED_GRANULARITY_MS {
            grant.used_ms = now_ms;
            out.push(Effect::StoreGrant(grant.clone()));
        }
        let done = |reply| Some(Reply::Call(CallEvent::Done(reply)));
        // The person stopped this agent in their tab: nothing of it runs until they let it go on.
        if grant.stopped {
            return done(CallReply::not_carried(sentences::AGENT_STOPPED));
        }
        if !admit::known(self.focused_list(), self.catalogue, &call.tool_call.tool) {
            // The name copied, so the call is dropped whole (one drop, not one per part).
            return done(CallReply::NoSuchTool { tool: call.tool_call.tool.clone() });
        }
        // A 2026-07-28 call's headers that mirror arguments must agree with them (see
        // `admit::param_header_mismatch`): refused before the tab hears of it.
        if let Some(Value::Object(headers)) = &call.param_headers {
            let schema =
                admit::input_schema(self.focused_list(), self.catalogue, &call.tool_call.tool);
            let args = Some(&call.tool_call.args);
            if let Some(header) =
                schema.and_then(|s| admit::param_header_mismatch(s, args, headers))
            {
                return done(CallReply::HeaderMismatch { header });
            }
        }
        let support = admit::task_support(self.focused_list(), &call.tool_call.tool);
        let as_task = match tasks::dispatch(support, call.task.is_some()) {
            Dispatch::NeedsTasks => return done(CallReply::NeedsTasks),
            Dispatch::Direct => false,
            Dispatch::Task => true,
        };
        // A call that may become a task holds a task's place and its arguments from its start.
        if as_task {
            self.expire_tasks(now_ms, out);
            let (count, bytes) = self.tasks_held(&call.tool_call.connection.id, None);
            let held = bytes + tasks::call_held_bytes(&call.tool_call);
            if count >= MAX_TASKS_PER_CONNECTION || held > MAX_TASK_BYTES_PER_CONNECTION {
                let kib = MAX_TASK_BYTES_PER_CONNECTION / 1024;
                let sentence = sentences::too_many_tasks(MAX_TASKS_PER_CONNECTION, kib);
                return done(CallReply::not_carried(sentence));
            }
        }
        let Some(tab) = self.focused().map(|t| t.number) else {
            return done(CallReply::not_carried(sentences::NO_TAB));
        };
        let wait_ms = call.wait_ms.min(TAB_CALL_WAIT_MS);
        let task = as_task.then(|| {
            Box::new(Carried {
                tab,
                call: None,
                tool_call: call.tool_call.clone(),
                declared: call.task.as_ref().map(|t| t.declared.clone()).unwrap_or_default(),
            })
        });
        let resumable = call.resumable && call.stream;
        let holder = Holder::Waiter(Waiter { asker, stream: call.stream, resumable, task });
        // A call that may become a task waits a moment only: then the task is made.
        let due = as_task.then_some(now_ms + TASK_AFTER_MS);
        let grant = &call.tool_call.connection.id;
        let flight = Flight::new(
            call.request.clone(),
            grant,
            &call.tool_call.tool,
            holder,
            now_ms,
            wait_ms,
            due,
        );
        let id = match self.calls.start(tab, now_ms, flight) {
            Ok(id) => id,
            Err(sentence) => return done(CallReply::not_carried(sentence)),
        };
        let turn = self.turns.of_call(&call.tool_call.connection.id, now_ms);
        let (stored_turn, stored_ms) = self.turns_stored;
        if turn != stored_turn || now_ms >= stored_ms + TURN_STORED_EVERY_MS {
            self.turns_stored = (turn, now_ms);
            out.push(Effect::StoreTurns(json_text(&self.turns)));
        }
        self.resume.forget(&call.request);
        send(
            out,
            tab,
            RelayMessage::Call { id, tool_call: call.tool_call, turn, input: call.input },
        );
        if as_task && call.task.as_ref().is_some_and(|t| t.at_once) {
            self.make_task(id, now_ms, entropy, out);
        }
        None
    }

    /// Call `id`'s timer fired: a call that may become a task becomes one; a task's round
    /// whose person is asked waits for them (its task's time to live bounds it); any other
    /// gives up (dropped in its tab, or kept as left open) and its holder is told.
    pub(super) fn flight_due(
        &mut self,
        id: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let Some(flight) = self.calls.get_mut(id) else { return };
        match &flight.holder {
            Holder::Waiter(Waiter { task: Some(_), .. }) => {
                self.make_task(id, now_ms, entropy, out)
            }
            Holder::Task(_) if flight.asking.is_some() => flight.due_ms = u64::MAX,
            _ => {
                let Some(flight) = self.calls.take(id) else { return };
                let gave_up = self.calls.give_up(&flight);
                match gave_up.cancel_in {
                    Some(tab) => cancel(out, tab, id),
                    // Left open in the tab: kept, for the connection's status.
                    None => out.push(Effect::StoreLeft(json_text(self.calls.left_calls()))),
                }
                let reply = CallReply::not_carried(gave_up.sentence);
                self.end(&flight, reply, now_ms, out);
            }
        }
    }

    /// Request `asker` stopped waiting: its calls are dropped in their tabs, or (a resumable
    /// one) kept running for its client's return.
    pub(super) fn waiter_gone(&mut self, asker: Asker, out: &mut Vec<Effect>) {
        let mut calls = Vec::new();
        for f in self.calls.flights().filter(|f| f.waiter().is_some_and(|w| w.asker == asker)) {
            calls.push(f.id);
        }
        for &id in &calls {
            let Some(flight) = self.calls.get_mut(id) else { continue };
            if flight.waiter().is_some_and(|w| w.resumable) {
                // Its client comes back for it: it keeps running until its wait ends.
                flight.holder = Holder::Detached;
                flight.due_ms = flight.until_ms;
                continue;
            }
            if let Some(flight) = self.calls.take(id) {
                cancel(out, flight.tab, id);
            }
        }
    }

    /// The client cancelled its call `request`: dropped in its tab, its holder told.
    pub(super) fn cancel(&mut self, request: &str, now_ms: u64, out: &mut Vec<Effect>) {
        if let Some(flight) = self.calls.cancel(request) {
            cancel(out, flight.tab, flight.id);
            self.end(&flight, CallReply::not_carried(sentences::CANCELLED), now_ms, out);
        }
    }

    /// Tab `tab` asks the person about `call`: a task's status says so, a waiter that may
    /// poll tasks gets one, a stream hears the card.
    pub(super) fn asking(
        &mut self,
        tab: u64,
        call: u64,
        sentence: &str,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let before = json_text(self.calls.left_calls());
        if let Some(card) = self.calls.asking(call, tab, sentence) {
            match self.calls.get(call).map(|f| &f.holder) {
                Some(Holder::Task(_)) => self.task_asking(call, &card, out),
                // The person is asked: a client that polls tasks polls this one.
                Some(Holder::Waiter(Waiter { task: Some(_), .. })) => {
                    self.make_task(call, now_ms, entropy, out);
                }
                _ => self.event(call, CallEvent::Asking(card), out),
            }
        }
        self.store_left_if_changed(&before, out);
    }

    /// The person answered tab `tab`'s card for `call`.
    pub(super) fn answered(&mut self, tab: u64, call: u64, out: &mut Vec<Effect>) {
        let before = json_text(self.calls.left_calls());
        if self.calls.answered(call, tab) {
            match self.calls.get(call).map(|f| &f.holder) {
                Some(Holder::Task(_)) => self.task_answered(call, out),
                _ => self.event(call, CallEvent::Answered, out),
            }
        }
        self.store_left_if_changed(&before, out);
    }

    /// Tab `tab`'s result for `call`: to its holder, or (left open) kept for the status.
    pub(super) fn result(
        &mut self,
        tab: u64,
        call: u64,
        outcome: TabOutcome,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        match self.calls.finish(call, tab) {
            Finished::Flight(Flight { holder: Holder::Task(_), .. }) => {
                self.task_result(call, outcome, now_ms, out);
            }
            Finished::Flight(flight) => {
                self.end(&flight, CallReply::TabResult { outcome }, now_ms, out);
            }
            Finished::Left { grant, tool } => {
                self.calls.afterwards(grant, tool, afterwards_said(&outcome));
                out.push(Effect::StoreLeft(json_text(self.calls.left_calls())));
            }
            Finished::Not => {}
        }
    }

    /// The person stepped in a tab: a new turn, stored.
    pub(super) fn person_stepped(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        self.turns.person_stepped();
        self.turns_stored = (self.turns.current(), now_ms);
        out.push(Effect::StoreTurns(json_text(&self.turns)));
    }

    /// A client comes back for a call whose stream dropped: its end, or (a tick at once) its
    /// events again.
    pub(super) fn take_up(&mut self, asker: Asker, request: &str, now_ms: u64) -> Reply {
        if let Some(reply) = self.resume.take(request, now_ms) {
            return Reply::Call(CallEvent::Done(reply));
        }
        // Running, its stream dropped; or its stream dropped before the pairing could tell
        // (the client came back first): the call's holder is the client's new stream.
        let found = self.calls.flights().find(|f| {
            f.request == request
                && match &f.holder {
                    Holder::Detached => true,
                    Holder::Waiter(w) => w.resumable,
                    Holder::Task(_) => false,
                }
        });
        let Some(id) = found.map(|f| f.id) else { return Reply::NotAsked };
        if let Some(flight) = self.calls.get_mut(id) {
            let task = match &mut flight.holder {
                Holder::Waiter(w) => w.task.take(),
                _ => None,
            };
            flight.holder = Holder::Waiter(Waiter { asker, stream: true, resumable: true, task });
            flight.due_ms = flight.due_ms.min(flight.until_ms);
        }
        // A first line at once: the client's new stream opens now, not at the end.
        Reply::Call(CallEvent::Tick)
    }

    /// An event of a call before its end, for a waiter that reads a stream.
    fn event(&self, call: u64, event: CallEvent, out: &mut Vec<Effect>) {
        let waiter = self.calls.get(call).and_then(Flight::waiter);
        if let Some(waiter) = waiter.filter(|w| w.stream) {
            reply_to(out, waiter.asker, Reply::Call(event));
        }
    }

    /// The end of a call out of flight, to its holder: its waiter gets the reply (a
    /// resumable one's kept too, its stream may have dropped unseen); a dropped stream's is
    /// kept for the client's return; a task's round that could not be carried fails its task.
    pub(super) fn end(
        &mut self,
        flight: &Flight,
        reply: CallReply,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        match &flight.holder {
            Holder::Waiter(waiter) => {
                if waiter.resumable {
                    self.resume.keep(&flight.request, &reply, flight.until_ms);
                }
                reply_to(out, waiter.asker, Reply::Call(CallEvent::Done(reply)));
            }
            Holder::Detached => self.resume.keep(&flight.request, &reply, flight.until_ms),
            Holder::Task(_) => {
                let sentence = match reply {
                    CallReply::NotCarried { sentence } => sentence,
                    _ => sentences::TAB_GONE.to_owned(),
                };
                if let Some(i) = self.task_of(flight.id) {
                    self.task_event(i, tasks::Event::Lost(INTERNAL_ERROR, sentence), now_ms, out);
                }
            }
        }
    }

    /// Stores the calls left open when they changed from `before` (their JSON, as stored:
    /// the text tells a change without a copy of them to compare).
    pub(super) fn store_left_if_changed(&self, before: &str, out: &mut Vec<Effect>) {
        let now = json_text(self.calls.left_calls());
        if now != before {
            out.push(Effect::StoreLeft(now));
        }
    }
}

/// What came of a call nobody waited for, in the relay's words with the tab's marked as data
/// (its data cut to [`AFTERWARDS_DATA_CHARS`]).
fn afterwards_said(outcome: &TabOutcome) -> String {
    match outcome {
        TabOutcome::Done { data, .. } => {
            let cut: String = data.as_str().chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_ran(&quoted(&cut))
        }
        TabOutcome::Failed { error } => {
            let cut: String = error.chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_failed(&quoted(&cut))
        }
        TabOutcome::InputRequired { .. } => sentences::LEFT_NEEDS_INPUT.to_owned(),
    }
}
