//! The Room's listeners: `/listen` streams told when the list agents see changes, and
//! requests waiting for a session's answers.

use super::{reply_to, Asker, Effect, Room};
use crate::limits::{MAX_LISTENERS, MAX_LISTENERS_PER_CONNECTION};
use crate::pairing::answers::Taken;
use crate::pairing::remove_where;
use crate::pairing::wire::{ListenEvent, Reply};

impl Room {
    /// Connection `grant` opens a `/listen` stream: kept within its share and the pairing's
    /// bound.
    pub(super) fn listen(&mut self, asker: Asker, grant: String) -> Reply {
        if self.listeners.iter().filter(|(_, g)| *g == grant).count()
            >= MAX_LISTENERS_PER_CONNECTION
            || self.listeners.len() >= MAX_LISTENERS
        {
            return Reply::TooManyListeners;
        }
        self.listeners.push((asker, grant));
        Reply::Listen(ListenEvent::Tick)
    }

    /// The list agents see before an input, to tell a change after it (None: nobody listens;
    /// only with listeners is a change worth telling).
    pub(super) fn list_heard(&self) -> Option<Option<String>> {
        (!self.listeners.is_empty()).then(|| self.focused_list_text().map(str::to_owned))
    }

    /// Every listener hears that the list agents see changed from `before`, if it did.
    pub(super) fn tell_listeners(&self, before: Option<Option<String>>, out: &mut Vec<Effect>) {
        if before.is_some_and(|b| b.as_deref() != self.focused_list_text()) {
            for (asker, _) in &self.listeners {
                reply_to(out, *asker, Reply::Listen(ListenEvent::ToolsChanged));
            }
        }
    }

    /// Request `asker` stopped waiting: it listens no more and waits for no answers.
    pub(super) fn listener_gone(&mut self, asker: Asker) {
        remove_where(&mut self.listeners, &|(l, _)| *l == asker);
        self.questions.gone(asker);
    }

    /// A client answers question `id` it was asked: once all are, the request waiting for
    /// them gets them.
    pub(super) fn answer(
        &mut self,
        grant: &str,
        id: &str,
        answer: serde_json::Value,
        out: &mut Vec<Effect>,
    ) -> Reply {
        match self.questions.answer(grant, id, answer) {
            Taken::Kept => Reply::Done,
            Taken::All(waiter, answers) => {
                reply_to(out, waiter, Reply::Answers(answers));
                Reply::Done
            }
            Taken::NotAsked => Reply::NotAsked,
        }
    }
}
