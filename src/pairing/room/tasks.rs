//! The Room's tasks: a waited call handed over as a task, its tab's result or questions, a
//! client's requests about it, and its next round.

use tabrelay_bundle::content::{self, quoted};
use tabrelay_bundle::fields::Encode as _;
use tabrelay_bundle::protocol::{askable, call_input, Outcome as TabOutcome, RelayMessage};

use super::{cancel, reply_to, send, Effect, Room, INTERNAL_ERROR, MISSING_CAPABILITY};
use crate::crypto::{random_token, Entropy};
use crate::limits::{MAX_TASK_BYTES_PER_CONNECTION, MAX_TASK_RESULT_BYTES, TAB_CALL_WAIT_MS};
use crate::pairing::calls::{Flight, Holder, Waiter};
use crate::pairing::tasks::{self, Task};
use crate::pairing::wire::{CallEvent, CallReply, Reply, TaskOp, TaskReply};
use crate::pairing::{map_tree_bytes, take_where, tree_bytes};
use crate::sentences;

impl Room {
    /// The call waited on as `call` becomes a task: its waiter is answered with the task, which
    /// is stored first; the call stays in flight, held by the task (its wait now a round's,
    /// from the call's start), and the tab's result goes to the task.
    pub(super) fn make_task(
        &mut self,
        call: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let Some(flight) = self.calls.get_mut(call) else { return };
        let Holder::Waiter(Waiter { asker, task, .. }) = &mut flight.holder else { return };
        // What carries the task moves to it (the waiter's holder goes below).
        let (asker, Some(mut carried)) = (*asker, task.take()) else { return };
        carried.tab = flight.tab;
        carried.call = Some(call);
        let mut task = Task::new(random_token(entropy, 16), *carried, now_ms);
        task.status_message =
            flight.asking.as_ref().map(|card| sentences::person_asked(&quoted(card)));
        // The client's cancel of its request no longer reaches the call: the task's does.
        flight.request = String::new();
        flight.holder = Holder::Task(task.id.clone());
        flight.until_ms = flight.until_ms - flight.wait_ms + TAB_CALL_WAIT_MS;
        flight.wait_ms = TAB_CALL_WAIT_MS;
        flight.due_ms = flight.until_ms;
        out.push(Effect::StoreTask(task.clone()));
        let made = CallReply::Task(task.view());
        reply_to(out, asker, Reply::Call(CallEvent::Done(made)));
        self.tasks.push(task);
    }

    /// The task whose round is call `call`.
    pub(super) fn task_of(&self, call: u64) -> Option<usize> {
        self.tasks.iter().position(|t| t.carried.call == Some(call))
    }

    /// The person is asked about task round `call` (the card cut already): the task's status
    /// says so.
    pub(super) fn task_asking(&mut self, call: u64, card: &str, out: &mut Vec<Effect>) {
        let Some(i) = self.task_of(call) else { return };
        self.tasks[i].status_message = Some(sentences::person_asked(&quoted(card)));
        self.store_task(i, out);
    }

    /// The person answered the card of task round `call`.
    pub(super) fn task_answered(&mut self, call: u64, out: &mut Vec<Effect>) {
        let Some(i) = self.task_of(call) else { return };
        self.tasks[i].status_message = Some(sentences::PERSON_ANSWERED.into());
        self.store_task(i, out);
    }

    /// The tab's result for task round `call`: the tool's result, or its requests for the
    /// client's input (those the client cannot answer left out; none left: the task fails).
    /// What a task keeps is bounded: one result in [`MAX_TASK_RESULT_BYTES`], all its
    /// connection's tasks in [`MAX_TASK_BYTES_PER_CONNECTION`]; what does not fit is said.
    pub(super) fn task_result(
        &mut self,
        call: u64,
        outcome: TabOutcome,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let Some(i) = self.task_of(call) else { return };
        self.tasks[i].carried.call = None;
        let event = match outcome {
            TabOutcome::InputRequired { requests, state } => {
                let declared = &self.tasks[i].carried.declared;
                let (kept, missing) = askable(&requests, |c| declared.iter().any(|d| d == c));
                if kept.is_empty() {
                    let sentence = sentences::missing_capability(&missing);
                    tasks::Event::Lost(MISSING_CAPABILITY, sentence)
                } else {
                    tasks::Event::NeedsInput { requests: kept, state }
                }
            }
            other => tasks::Event::Answered(content::tool_result(&other)),
        };
        // A task is one stored row: what does not fit is said, not kept.
        let size = match &event {
            tasks::Event::Answered(result) => result.to_json().len() + tree_bytes(result),
            // As the JSON array `[requests,state]`.
            tasks::Event::NeedsInput { requests, state } => {
                let state_bytes = state.as_ref().map_or(0, tree_bytes) + state.to_json().len();
                requests.to_json().len() + map_tree_bytes(requests) + state_bytes + 3
            }
            _ => 0,
        };
        let held = self.tasks_held(&self.tasks[i].grant, Some(i)).1 + self.tasks[i].held_bytes();
        let event = if size > MAX_TASK_RESULT_BYTES {
            let sentence = sentences::TASK_RESULT_TOO_LARGE;
            tasks::Event::Answered(content::error_result(sentence))
        } else if held + size > MAX_TASK_BYTES_PER_CONNECTION {
            let sentence = sentences::task_results_full(MAX_TASK_BYTES_PER_CONNECTION / 1024);
            tasks::Event::Answered(content::error_result(&sentence))
        } else {
            event
        };
        self.task_event(i, event, now_ms, out);
    }

    /// A client's request about its task `id`: the reply (the task as it stands, for `get`).
    pub(super) fn task_request(
        &mut self,
        grant: &str,
        id: &str,
        op: TaskOp,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) -> TaskReply {
        self.expire_tasks(now_ms, out);
        let Some(i) = self.tasks.iter().position(|t| t.id == id && t.visible_to(grant, now_ms))
        else {
            return TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() };
        };
        let event = match op {
            TaskOp::Get => return TaskReply::Detailed(self.tasks[i].view()),
            TaskOp::Cancel => tasks::Event::Cancel,
            TaskOp::Update(answers) => match answers {
                serde_json::Value::Object(answers) => tasks::Event::Update(answers),
                _ => tasks::Event::Update(serde_json::Map::new()),
            },
        };
        let running = self.tasks[i].carried.call;
        let mut changed = self.tasks[i].clone();
        let effect = changed.apply(event, now_ms);
        // Answers kept until the last comes count toward the connection's share, as results do.
        if matches!(effect, tasks::Effect::Store)
            && self.tasks_held(grant, Some(i)).1 + changed.held_bytes()
                > MAX_TASK_BYTES_PER_CONNECTION
        {
            let kib = MAX_TASK_BYTES_PER_CONNECTION / 1024;
            return TaskReply::Refused { sentence: sentences::task_answers_full(kib) };
        }
        self.tasks[i] = changed;
        match effect {
            tasks::Effect::Unchanged => {}
            tasks::Effect::Store => self.store_task(i, out),
            tasks::Effect::StopInTab => {
                if let Some(flight) = running.and_then(|call| self.calls.take(call)) {
                    cancel(out, flight.tab, flight.id);
                }
                self.store_task(i, out);
            }
            tasks::Effect::Resume { responses, state } => {
                self.next_round(i, responses, state, now_ms, out);
            }
        }
        TaskReply::Acknowledged
    }

    /// Task `i`'s call goes to a tab again with the client's answers: to the tab that asked
    /// while it is open, else to the tab calls go to. The round is a call in flight like any
    /// other: within the same bounds, with its wait ([`TAB_CALL_WAIT_MS`]).
    fn next_round(
        &mut self,
        i: usize,
        responses: serde_json::Map<String, serde_json::Value>,
        state: Option<serde_json::Value>,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let asked = self.tasks[i].carried.tab;
        let tab = match self.tabs.get(&asked) {
            Some(t) if t.proven => Some(asked),
            _ => self.focused().map(|t| t.number),
        };
        let Some(tab) = tab else {
            let lost = tasks::Event::Lost(INTERNAL_ERROR, sentences::NO_TAB.into());
            return self.task_event(i, lost, now_ms, out);
        };
        if self.grants.iter().any(|g| g.id == self.tasks[i].grant && g.stopped) {
            let result = content::error_result(sentences::AGENT_STOPPED);
            return self.task_event(i, tasks::Event::Answered(result), now_ms, out);
        }
        let t = &self.tasks[i];
        let holder = Holder::Task(t.id.clone());
        let flight = Flight::new(
            String::new(),
            &t.grant,
            &t.carried.tool_call.tool,
            holder,
            now_ms,
            TAB_CALL_WAIT_MS,
            None,
        );
        let id = match self.calls.start(tab, now_ms, flight) {
            Ok(id) => id,
            Err(sentence) => {
                let lost = tasks::Event::Lost(INTERNAL_ERROR, sentence);
                return self.task_event(i, lost, now_ms, out);
            }
        };
        let turn = self.turns.of_call(&self.tasks[i].grant, now_ms);
        let c = &mut self.tasks[i].carried;
        c.tab = tab;
        c.call = Some(id);
        send(
            out,
            tab,
            RelayMessage::Call {
                id,
                tool_call: c.tool_call.clone(),
                turn,
                input: Some(call_input(serde_json::Value::Object(responses), state)),
            },
        );
        self.store_task(i, out);
    }

    /// Task `i` is stored as it is now (one copy of the clone and push for every change).
    #[inline(never)]
    fn store_task(&self, i: usize, out: &mut Vec<Effect>) {
        out.push(Effect::StoreTask(self.tasks[i].clone()));
    }

    /// What connection `grant`'s tasks hold beside task `except`: how many, and their bytes
    /// ([`Task::held_bytes`]). A call that may become a task counts as one from its start (its
    /// arguments held for it), so however many such calls start at once, the connection's tasks
    /// never pass their share ([`crate::limits::MAX_TASKS_PER_CONNECTION`],
    /// [`MAX_TASK_BYTES_PER_CONNECTION`]).
    pub(super) fn tasks_held(&self, grant: &str, except: Option<usize>) -> (usize, usize) {
        let (mut count, mut bytes) = (0, 0);
        for (j, t) in self.tasks.iter().enumerate() {
            if t.grant == grant && Some(j) != except {
                count += 1;
                bytes += t.held_bytes();
            }
        }
        for f in self.calls.flights() {
            match f.waiter() {
                Some(Waiter { task: Some(carried), .. }) if f.grant == grant => {
                    count += 1;
                    bytes += tasks::call_held_bytes(&carried.tool_call);
                }
                _ => {}
            }
        }
        (count, bytes)
    }

    /// What happened to task `i`, applied; stored when it changed.
    pub(super) fn task_event(
        &mut self,
        i: usize,
        event: tasks::Event,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        if !matches!(self.tasks[i].apply(event, now_ms), tasks::Effect::Unchanged) {
            self.store_task(i, out);
        }
    }

    /// The tasks past their time to live are deleted (their calls dropped in their tabs).
    pub(super) fn expire_tasks(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        // Gone over by reference, then dropped as one list (no iterator of tasks by value).
        let expired = take_where(&mut self.tasks, &|t| now_ms >= t.expires_ms());
        for task in &expired {
            if let Some(flight) = task.carried.call.and_then(|call| self.calls.take(call)) {
                cancel(out, flight.tab, flight.id);
            }
            out.push(Effect::DeleteTask(task.id.clone()));
        }
    }
}
