//! The Room's tab sockets: a tab opening, proving itself, speaking and going away, what it
//! stated, and which tab calls go to.

use tabrelay_bundle::fields::json_text;
use tabrelay_bundle::protocol::{close, ToolList, MAX_MESSAGE_BYTES};

use super::{Effect, Room};
use crate::crypto::Entropy;
use crate::pairing::tabs::{route, Tab, TabsStatus};
use crate::pairing::wire::CallReply;
use crate::pairing::wire::Reply;
use crate::sentences;

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

    /// A tab went away: its calls in flight fail (nothing will answer them; a task's fails
    /// its task), what it stated goes.
    pub(super) fn tab_gone(&mut self, tab: u64, now_ms: u64, out: &mut Vec<Effect>) {
        if self.tabs.remove(&tab).is_none() {
            return;
        }
        if self.stated.remove(&tab).is_some() {
            out.push(Effect::ForgetStated(tab));
        }
        let before = json_text(self.calls.left_calls());
        for flight in &self.calls.tab_gone(tab) {
            self.end(flight, CallReply::not_carried(sentences::TAB_GONE), now_ms, out);
        }
        self.store_left_if_changed(&before, out);
    }

    /// What connection `grant`'s status call reads: the tabs, the list and dataset of the tab
    /// calls go to, whether the person stopped it, and what came of its calls left open.
    pub(super) fn status(&self, grant: &str) -> Reply {
        let dataset =
            self.focused().and_then(|t| self.stated.get(&t.number)).and_then(|s| s.dataset.clone());
        let status = TabsStatus::of(self.tabs.values(), self.focused_list(), dataset);
        let mut told = self.calls.told_to(grant);
        if self.grants.iter().any(|g| g.id == grant && g.stopped) {
            told.insert(0, sentences::STATUS_STOPPED.to_owned());
        }
        Reply::Status { tabs: status, told }
    }

    /// The tab calls go to.
    pub(super) fn focused(&self) -> Option<&Tab> {
        route(self.tabs.values())
    }

    /// The tool list the tab calls go to stated.
    pub(super) fn focused_list(&self) -> Option<&ToolList> {
        self.focused().and_then(|t| self.stated.get(&t.number)).and_then(|s| s.tools.as_ref())
    }

    /// The list agents see (None: the bundled one).
    pub(super) fn focused_list_seen(&self) -> Option<ToolList> {
        self.focused_list().cloned()
    }

    /// The JSON text of the list agents see, to tell a change (None: the bundled one).
    pub(super) fn focused_list_text(&self) -> Option<&str> {
        let statement = self.focused().and_then(|t| self.stated.get(&t.number));
        statement.and_then(|s| s.tools_text.as_deref())
    }
}
