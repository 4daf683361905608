//! The calls a pairing waits on: which tab each went to, whether the person is being asked,
//! who may answer or cancel it, and what the agent is told when the wait runs out.

use tabrelay_bundle::content::quoted;
use tabrelay_bundle::protocol::{MAX_CARD_CHARS, MAX_PENDING_CALLS};

use crate::sentences;

/// One call waiting for its tab.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    id: u64,
    tab: u64,
    request: String,
    asking: Option<String>,
}

/// A call the relay stops waiting for, and what to tell whom.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct GaveUp {
    /// The sentence for the agent.
    pub sentence: String,
    /// The tab to tell to drop the call: set unless the person is being asked about it (then
    /// the question stays open in the tab).
    pub cancel_in: Option<u64>,
}

/// The calls a pairing is waiting on: which tab each went to and whether the person is being
/// asked about it. Only the tab a call went to can answer it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    /// In the order they started (a few tens at most: a vector is smaller in the Worker than a
    /// map).
    pending: Vec<Pending>,
    next: u64,
}

impl Calls {
    /// Starts a call to `tab`: its id, or the sentence when the pairing has too many waiting.
    /// Ids grow with time (`now_ms`), so they stay unique across a restart of the object.
    pub fn start(&mut self, tab: u64, now_ms: u64, request: String) -> Result<u64, String> {
        if self.pending.len() >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        let id = self.next.max(now_ms.saturating_mul(1024));
        self.next = id + 1;
        self.pending.push(Pending { id, tab, request, asking: None });
        Ok(id)
    }

    /// The person is being asked about call `id` (told by `tab`): the card's sentence, cut to
    /// [`MAX_CARD_CHARS`], when the call is this tab's.
    pub fn asking(&mut self, id: u64, tab: u64, sentence: &str) -> Option<String> {
        let p = self.pending.iter_mut().find(|p| p.id == id && p.tab == tab)?;
        let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
        p.asking = Some(card.clone());
        Some(card)
    }

    /// The person answered about call `id`: whether the call is this tab's.
    pub fn answered(&mut self, id: u64, tab: u64) -> bool {
        match self.pending.iter_mut().find(|p| p.id == id && p.tab == tab) {
            Some(p) => {
                p.asking = None;
                true
            }
            None => false,
        }
    }

    /// The agent cancelled its request: the call's id and the tab to tell, if it still waits.
    pub fn cancel(&mut self, request: &str) -> Option<(u64, u64)> {
        let i = self.pending.iter().position(|p| p.request == request)?;
        let p = self.pending.remove(i);
        Some((p.id, p.tab))
    }

    /// The agent stopped listening (its stream closed): the tab to tell, if the call still waits.
    pub fn abandon(&mut self, id: u64) -> Option<u64> {
        self.take(id).map(|p| p.tab)
    }

    /// `tab` answered call `id`: whether that answer is the call's (and the call is done).
    pub fn finish(&mut self, id: u64, tab: u64) -> bool {
        let mine = self.pending.iter().any(|p| p.id == id && p.tab == tab);
        if mine {
            self.take(id);
        }
        mine
    }

    /// `tab` went away: the calls that waited on it, now failed.
    pub fn tab_gone(&mut self, tab: u64) -> Vec<u64> {
        let gone: Vec<u64> = self.pending.iter().filter(|p| p.tab == tab).map(|p| p.id).collect();
        self.pending.retain(|p| p.tab != tab);
        gone
    }

    /// The wait for call `id` ran out. While the person is being asked, the tab keeps the
    /// question open and the agent is told so; otherwise the tab is told to drop the call.
    pub fn give_up(&mut self, id: u64, waited_ms: u64) -> GaveUp {
        match self.take(id) {
            Some(Pending { asking: Some(card), .. }) => {
                GaveUp { sentence: sentences::still_asking(&quoted(&card)), cancel_in: None }
            }
            Some(Pending { tab, .. }) => {
                GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: Some(tab) }
            }
            None => GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: None },
        }
    }

    fn take(&mut self, id: u64) -> Option<Pending> {
        let i = self.pending.iter().position(|p| p.id == id)?;
        Some(self.pending.remove(i))
    }

    /// How many calls wait.
    #[must_use]
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no call waits.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::TAB_CALL_WAIT_MS;
    use crate::pairing::wire::request_key;

    #[test]
    fn only_the_tab_a_call_went_to_can_answer_it() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "r".into()).unwrap();
        assert!(!calls.finish(id, 2));
        assert!(calls.finish(id, 1));
        assert!(!calls.finish(id, 1), "an answer comes once");
    }

    #[test]
    fn call_ids_are_unique_and_grow_across_a_restart() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into()).unwrap();
        let b = calls.start(1, 5, "b".into()).unwrap();
        assert_ne!(a, b);
        let mut restarted = Calls::default();
        assert!(restarted.start(1, 6, "c".into()).unwrap() > b);
    }

    #[test]
    fn a_tab_going_away_fails_its_calls_only() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into()).unwrap();
        let b = calls.start(2, 5, "b".into()).unwrap();
        assert_eq!(calls.tab_gone(1), vec![a]);
        assert_eq!(calls.len(), 1);
        assert!(calls.finish(b, 2));
    }

    #[test]
    fn a_wait_that_runs_out_while_the_person_is_asked_says_so() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into()).unwrap();
        assert_eq!(calls.asking(id, 2, "ignored: another tab"), None);
        assert_eq!(calls.asking(id, 1, "Delete 3 items?").as_deref(), Some("Delete 3 items?"));
        let gave_up = calls.give_up(id, TAB_CALL_WAIT_MS);
        let s = &gave_up.sentence;
        assert!(
            s.contains("being asked") && s.contains("Delete 3 items?") && s.contains("history"),
            "{s}"
        );
        assert_eq!(gave_up.cancel_in, None, "the question stays open in the tab");
        let id = calls.start(1, 6, "b".into()).unwrap();
        calls.asking(id, 1, "Delete?");
        assert!(calls.answered(id, 1));
        let gave_up = calls.give_up(id, 225_000);
        assert!(gave_up.sentence.contains("within 225 s"));
        assert_eq!(gave_up.cancel_in, Some(1), "the tab is told to drop a call nobody waits for");
        assert!(calls.is_empty());
    }

    #[test]
    fn a_cards_sentence_is_kept_bounded() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into()).unwrap();
        let card = calls.asking(id, 1, &"é".repeat(MAX_CARD_CHARS + 50)).unwrap();
        assert_eq!(card.chars().count(), MAX_CARD_CHARS);
    }

    #[test]
    fn a_connection_cancels_its_own_request_only() {
        use crate::jsonrpc::Id;
        let mut calls = Calls::default();
        let mine = request_key("grant-a", &Id::Number(7));
        let id = calls.start(3, 5, mine.clone()).unwrap();
        assert_eq!(calls.cancel(&request_key("grant-b", &Id::Number(7))), None);
        assert_eq!(calls.cancel(&request_key("grant-a", &Id::Text("7".into()))), None);
        assert_eq!(calls.cancel(&mine), Some((id, 3)));
        assert_eq!(calls.cancel(&mine), None, "cancelled once");
        assert!(!calls.finish(id, 3), "a late answer goes nowhere");
    }

    #[test]
    fn too_many_waiting_calls_get_a_sentence() {
        let mut calls = Calls::default();
        for i in 0..MAX_PENDING_CALLS {
            calls.start(1, 5, i.to_string()).unwrap();
        }
        assert!(calls
            .start(1, 5, "x".into())
            .unwrap_err()
            .contains(&MAX_PENDING_CALLS.to_string()));
    }
}
