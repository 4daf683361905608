//! The Room's tab sockets: a tab opening, proving itself, speaking and going away, what it
//! stated, and which tab calls go to.

use tabrelay_bundle::protocol::{close, ToolList, MAX_MESSAGE_BYTES};

use super::{Effect, Room, INTERNAL_ERROR};
use crate::crypto::Entropy;
use crate::pairing::tabs::{next_check, route, sockets_to_close, Tab, TabsStatus};
use crate::pairing::tasks::{self};
use crate::pairing::wire::{CallReply, Reply};
use crate::{sentences, tools};

impl Room {
    pub(super) fn message(
        &mut self,
        tab: u64,
        text: Option<&str>,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let Some(text) = text.filter(|t| t.len() <= MAX_MESSAGE_BYTES) else {
            let reason = crate::sentences::tab::MESSAGE_TOO_LARGE;
            self.close(tab, close::PROTOCOL_ERROR, reason, now_ms, out);
            return;
        };
        let Some(t) = self.tabs.get(&tab) else { return };
        let action = t.on_message(text, now_ms);
        self.act(tab, action, now_ms, entropy, out);
    }

    /// Closes a tab's socket: it is gone at once.
    pub(super) fn close(
        &mut self,
        tab: u64,
        code: u16,
        reason: &'static str,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        if self.tabs.contains_key(&tab) {
            out.push(Effect::Close(tab, code, reason));
            self.tab_gone(tab, now_ms, out);
        }
    }

    /// A tab went away: its calls fail (nothing will answer them), what it stated goes.
    pub(super) fn tab_gone(&mut self, tab: u64, now_ms: u64, out: &mut Vec<Effect>) {
        if self.tabs.remove(&tab).is_none() {
            return;
        }
        if self.stated.remove(&tab).is_some() {
            out.push(Effect::ForgetStated(tab));
        }
        let before = self.calls.left_calls().clone();
        for call in self.calls.tab_gone(tab) {
            self.done(call, CallReply::not_carried(sentences::TAB_GONE), out);
        }
        self.store_left_if_changed(&before, out);
        let lost: Vec<usize> = (0..self.tasks.len())
            .filter(|i| self.tasks[*i].carried.tab == tab && self.tasks[*i].carried.call.is_some())
            .collect();
        for i in lost {
            let gone = tasks::Event::Lost(INTERNAL_ERROR, sentences::TAB_GONE.into());
            self.task_event(i, gone, now_ms, out);
        }
    }

    /// The alarm rang: sockets past their bounds close, the next check is set, and calls whose
    /// stream dropped and whose wait ran out give up.
    pub(super) fn alarm(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        for (tab, (code, reason)) in sockets_to_close(self.tabs.values(), now_ms) {
            self.close(tab, code, reason, now_ms, out);
        }
        if let Some(at) = next_check(self.tabs.values(), now_ms) {
            out.push(Effect::SetAlarm(at));
        }
        self.resumable_overdue(now_ms, out);
    }

    pub(super) fn watch_hellos(&self, now_ms: u64, out: &mut Vec<Effect>) {
        if let Some(at) = next_check(self.tabs.values(), now_ms) {
            out.push(Effect::SetAlarm(at));
        }
    }

    /// What connection `grant`'s status call reads: the tabs, the list and dataset of the tab
    /// calls go to, and what came of its calls left open.
    pub(super) fn status(&self, grant: &str) -> Reply {
        let dataset =
            self.focused().and_then(|t| self.stated.get(&t.number)).and_then(|s| s.dataset.clone());
        let status = TabsStatus::of(self.tabs.values(), self.focused_list(), dataset);
        Reply::Status(tools::status_result(&status, &self.calls.told_to(grant)))
    }

    /// The tab calls go to.
    pub(super) fn focused(&self) -> Option<&Tab> {
        route(self.tabs.values())
    }

    /// The tool list the tab calls go to stated.
    pub(super) fn focused_list(&self) -> Option<&ToolList> {
        self.focused().and_then(|t| self.stated.get(&t.number)).and_then(|s| s.tools.as_ref())
    }

    /// The list agents see, to tell a change (None: the bundled one).
    pub(super) fn focused_list_seen(&self) -> Option<ToolList> {
        self.focused_list().cloned()
    }
}
