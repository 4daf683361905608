//! The Room's tasks: a waited call handed over as a task, its tab's result or questions, a
//! client's requests about it, and its next round.

use tabrelay_bundle::content::{self, quoted};
use tabrelay_bundle::protocol::{
    askable, call_input, Outcome as TabOutcome, RelayMessage, MAX_CARD_CHARS,
};

use super::{Effect, Room, Waiter, INTERNAL_ERROR, MISSING_CAPABILITY};
use crate::crypto::{random_token, Entropy};
use crate::limits::MAX_TASK_RESULT_BYTES;
use crate::pairing::tasks::{self, Task};
use crate::pairing::wire::{CallEvent, CallReply, Reply, TaskOp, TaskReply};
use crate::sentences;

impl Room {
    /// The call waited on as `call` becomes a task: its waiter is answered with the task, which
    /// is stored first; the tab's result goes to the task.
    pub(super) fn make_task(
        &mut self,
        call: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let Some(Waiter { asker, task: Some(mut carried), .. }) = self.waiters.remove(&call) else {
            return;
        };
        let Some((tab, asking)) = self.calls.hand_over(call) else { return };
        carried.tab = tab;
        carried.call = Some(call);
        let mut task = Task::new(random_token(entropy, 16), *carried, now_ms);
        task.status_message = asking.map(|card| sentences::person_asked(&quoted(&card)));
        out.push(Effect::StoreTask(task.clone()));
        let created = CallReply::Task { created: task.created() };
        out.push(Effect::Reply(asker, Reply::Call(CallEvent::Done(created))));
        self.tasks.push(task);
    }

    /// The person is asked about task `i`'s call: the task's status says so.
    pub(super) fn task_asking(&mut self, i: usize, sentence: &str, out: &mut Vec<Effect>) {
        let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
        self.tasks[i].status_message = Some(sentences::person_asked(&quoted(&card)));
        out.push(Effect::StoreTask(self.tasks[i].clone()));
    }

    /// The person answered the card of task `i`'s call.
    pub(super) fn task_answered(&mut self, i: usize, out: &mut Vec<Effect>) {
        self.tasks[i].status_message = Some(sentences::PERSON_ANSWERED.into());
        out.push(Effect::StoreTask(self.tasks[i].clone()));
    }

    /// The tab's result for task `i`'s call: the tool's result, or its requests for the
    /// client's input (those the client cannot answer left out; none left: the task fails).
    pub(super) fn task_result(
        &mut self,
        i: usize,
        outcome: TabOutcome,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        self.tasks[i].carried.call = None;
        let event = match outcome {
            TabOutcome::InputRequired { requests, state } => {
                let declared = &self.tasks[i].carried.declared;
                let (kept, missing) = askable(&requests, |c| declared.iter().any(|d| d == c));
                if kept.is_empty() {
                    let names: Vec<&str> = missing.keys().map(String::as_str).collect();
                    let sentence = sentences::missing_capability(&names.join(", "));
                    tasks::Event::Lost(MISSING_CAPABILITY, sentence)
                } else {
                    tasks::Event::NeedsInput { requests: kept, state }
                }
            }
            other => tasks::Event::Answered(content::tool_result(&other)),
        };
        // A task is one stored row: what does not fit is said, not kept.
        let size = match &event {
            tasks::Event::Answered(result) => serde_json::to_vec(result).map_or(0, |v| v.len()),
            tasks::Event::NeedsInput { requests, state } => {
                serde_json::to_vec(&(requests, state)).map_or(0, |v| v.len())
            }
            _ => 0,
        };
        let event = if size > MAX_TASK_RESULT_BYTES {
            let sentence = sentences::TASK_RESULT_TOO_LARGE;
            tasks::Event::Answered(content::error_result(sentence))
        } else {
            event
        };
        self.task_event(i, event, now_ms, out);
    }

    /// A client's request about its task `id`.
    pub(super) fn task_request(
        &mut self,
        grant: &str,
        id: &str,
        op: TaskOp,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) -> TaskReply {
        self.tasks_of(grant, now_ms, out);
        let Some(i) = self.tasks.iter().position(|t| t.id == id && t.visible_to(grant, now_ms))
        else {
            return TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() };
        };
        let event = match op {
            TaskOp::Get => return TaskReply::Detailed(self.tasks[i].detailed()),
            TaskOp::Cancel => tasks::Event::Cancel,
            TaskOp::Update(answers) => match answers {
                serde_json::Value::Object(answers) => tasks::Event::Update(answers),
                _ => tasks::Event::Update(serde_json::Map::new()),
            },
        };
        let running = self.tasks[i].carried.call.map(|call| (self.tasks[i].carried.tab, call));
        match self.tasks[i].apply(event, now_ms) {
            tasks::Effect::Unchanged => {}
            tasks::Effect::Store => out.push(Effect::StoreTask(self.tasks[i].clone())),
            tasks::Effect::StopInTab => {
                if let Some((tab, call)) = running {
                    out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
                }
                out.push(Effect::StoreTask(self.tasks[i].clone()));
            }
            tasks::Effect::Resume { responses, state } => {
                self.next_round(i, responses, state, now_ms, out);
            }
        }
        TaskReply::Acknowledged
    }

    /// Task `i`'s call goes to a tab again with the client's answers: to the tab that asked
    /// while it is open, else to the tab calls go to.
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
        // A round is a call like any other: within the connection's share.
        if let Err(sentence) = self.room_for_call(&self.tasks[i].grant) {
            return self.task_event(i, tasks::Event::Lost(INTERNAL_ERROR, sentence), now_ms, out);
        }
        let id = self.calls.next_id(now_ms);
        let turn = self.turns.of_call(&self.tasks[i].grant, now_ms);
        let c = &mut self.tasks[i].carried;
        c.tab = tab;
        c.call = Some(id);
        out.push(Effect::Send(
            tab,
            RelayMessage::Call {
                id,
                tool_call: c.tool_call.clone(),
                turn,
                input: Some(call_input(serde_json::Value::Object(responses), state)),
            },
        ));
        out.push(Effect::StoreTask(self.tasks[i].clone()));
    }

    /// What happened to task `i`, applied; stored when it changed.
    pub(super) fn task_event(
        &mut self,
        i: usize,
        event: tasks::Event,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        if self.tasks[i].apply(event, now_ms) != tasks::Effect::Unchanged {
            out.push(Effect::StoreTask(self.tasks[i].clone()));
        }
    }

    /// The task whose call in `tab` is `call`.
    pub(super) fn task_carrying(&self, tab: u64, call: u64) -> Option<usize> {
        self.tasks.iter().position(|t| t.carried.tab == tab && t.carried.call == Some(call))
    }

    /// How many tasks connection `grant` holds; those past their time to live are deleted first.
    pub(super) fn tasks_of(&mut self, grant: &str, now_ms: u64, out: &mut Vec<Effect>) -> usize {
        let (expired, kept): (Vec<Task>, Vec<Task>) =
            core::mem::take(&mut self.tasks).into_iter().partition(|t| now_ms >= t.expires_ms());
        self.tasks = kept;
        for task in expired {
            if let Some(call) = task.carried.call {
                out.push(Effect::Send(task.carried.tab, RelayMessage::Cancel { id: call }));
            }
            out.push(Effect::DeleteTask(task.id));
        }
        self.tasks.iter().filter(|t| t.grant == grant).count()
    }
}
