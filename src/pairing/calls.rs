//! The calls a pairing waits on: which tab each went to, whether the person is being asked,
//! who may answer or cancel it, and what the agent is told when the wait runs out.

use serde::Serialize;
use tabrelay_bundle::content::quoted;
use tabrelay_bundle::protocol::MAX_CARD_CHARS;

use crate::limits::{
    AFTERWARDS_KEPT, LEFT_OPEN_PER_CONNECTION, MAX_AFTERWARDS, MAX_LEFT_OPEN, MAX_PENDING_CALLS,
};
use crate::sentences;

/// One call waiting for its tab.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pending {
    id: u64,
    tab: u64,
    request: String,
    asking: Option<String>,
    /// The connection that made it, and the tool.
    grant: String,
    tool: String,
}

/// A call the relay stopped waiting for while the person was being asked: the question stays
/// open in the tab, and what comes of it is kept for the connection's `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Left {
    id: u64,
    tab: u64,
    grant: String,
    tool: String,
    /// The card while the person is asked; None once they answered (the step runs).
    asking: Option<String>,
}

/// What came of a call its agent no longer waited for, as `status` tells that connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Afterwards {
    /// The connection.
    pub grant: String,
    /// The tool.
    pub tool: String,
    /// The relay's sentence, with what came from the tab marked as data.
    pub said: String,
}

tabrelay_bundle::read_json!(Left, "a call left open", { id, tab, grant, tool, asking });
tabrelay_bundle::read_json!(Afterwards, "what came of a call", { grant, tool, said });

/// The calls left open in their tabs and what came of others: kept in storage (a person may
/// take longer to decide than the pairing's object stays in memory).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LeftCalls {
    /// Still open in their tabs, oldest first (at most [`LEFT_OPEN_PER_CONNECTION`] of a
    /// connection, [`MAX_LEFT_OPEN`] in all).
    left: Vec<Left>,
    /// What came of them, newest last (at most [`AFTERWARDS_KEPT`] of a connection,
    /// [`MAX_AFTERWARDS`] in all).
    afterwards: Vec<Afterwards>,
}

tabrelay_bundle::read_json!(LeftCalls, "calls left open", { left, afterwards });

/// Whose answer a tab's result is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finished {
    /// A waiting call's: its waiter gets it.
    Waited,
    /// A call the relay stopped waiting for: kept for its connection's `status`.
    Left {
        /// The connection.
        grant: String,
        /// The tool.
        tool: String,
    },
    /// No call of this tab's.
    Not,
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
    /// Calls still open in their tab though nobody waits, and what came of others.
    open: LeftCalls,
    next: u64,
}

impl Calls {
    /// Starts a call to `tab`: its id, or the sentence when the pairing has too many waiting
    /// (each connection's share of them is the room's to check: its tasks' calls count too).
    /// Ids grow with time (`now_ms`), so they stay unique across a restart of the object.
    pub fn start(
        &mut self,
        tab: u64,
        now_ms: u64,
        request: String,
        grant: &str,
        tool: &str,
    ) -> Result<u64, String> {
        if self.pending.len() >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        let id = self.next_id(now_ms);
        let (grant, tool) = (grant.to_owned(), tool.to_owned());
        self.pending.push(Pending { id, tab, request, asking: None, grant, tool });
        Ok(id)
    }

    /// A new call id that no other call has (for a task's next round, carried outside these
    /// calls).
    pub fn next_id(&mut self, now_ms: u64) -> u64 {
        let id = self.next.max(now_ms.saturating_mul(1024));
        self.next = id + 1;
        id
    }

    /// Call `id` is handed over to a task: no longer waited on here. Its tab and the card, if
    /// the person is being asked.
    pub fn hand_over(&mut self, id: u64) -> Option<(u64, Option<String>)> {
        self.take(id).map(|p| (p.tab, p.asking))
    }

    /// The person is being asked about call `id` (told by `tab`): the card's sentence, cut to
    /// [`MAX_CARD_CHARS`], when the call is this tab's.
    pub fn asking(&mut self, id: u64, tab: u64, sentence: &str) -> Option<String> {
        let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
        if let Some(l) = self.open.left.iter_mut().find(|l| l.id == id && l.tab == tab) {
            l.asking = Some(card);
            return None; // nobody waits to hear it
        }
        let p = self.pending.iter_mut().find(|p| p.id == id && p.tab == tab)?;
        p.asking = Some(card.clone());
        Some(card)
    }

    /// The person answered about call `id`: whether the call is this tab's and waited on.
    pub fn answered(&mut self, id: u64, tab: u64) -> bool {
        if let Some(l) = self.open.left.iter_mut().find(|l| l.id == id && l.tab == tab) {
            l.asking = None;
            return false;
        }
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

    /// `tab` answered call `id`: whose answer it is (the call is done either way).
    pub fn finish(&mut self, id: u64, tab: u64) -> Finished {
        if self.pending.iter().any(|p| p.id == id && p.tab == tab) {
            self.take(id);
            return Finished::Waited;
        }
        match self.open.left.iter().position(|l| l.id == id && l.tab == tab) {
            Some(i) => {
                let Left { grant, tool, .. } = self.open.left.remove(i);
                Finished::Left { grant, tool }
            }
            None => Finished::Not,
        }
    }

    /// What came of a call nobody waited for, kept for its connection (its oldest go first).
    pub fn afterwards(&mut self, grant: String, tool: String, said: String) {
        let list = &mut self.open.afterwards;
        make_room(list, |a| a.grant == grant, AFTERWARDS_KEPT, MAX_AFTERWARDS);
        list.push(Afterwards { grant, tool, said });
    }

    /// How many calls of connection `grant` wait here.
    #[must_use]
    pub fn of(&self, grant: &str) -> usize {
        self.pending.iter().filter(|p| p.grant == grant).count()
    }

    /// `tab` went away: the calls that waited on it, now failed (and those left open there
    /// are told to their connections' `status`).
    pub fn tab_gone(&mut self, tab: u64) -> Vec<u64> {
        let gone: Vec<u64> = self.pending.iter().filter(|p| p.tab == tab).map(|p| p.id).collect();
        self.pending.retain(|p| p.tab != tab);
        let (closed, kept): (Vec<Left>, Vec<Left>) =
            core::mem::take(&mut self.open.left).into_iter().partition(|l| l.tab == tab);
        self.open.left = kept;
        for l in closed {
            self.afterwards(l.grant, l.tool, sentences::LEFT_TAB_CLOSED.to_owned());
        }
        gone
    }

    /// The calls left open and what came of others, to store.
    #[must_use]
    pub fn left_calls(&self) -> &LeftCalls {
        &self.open
    }

    /// The calls left open and what came of others, read back after a wake.
    pub fn restore(&mut self, open: LeftCalls) {
        self.open = open;
    }

    /// What `status` tells connection `grant` of its calls nobody waits for any more: those
    /// still open in the tab, then what came of the others, oldest first.
    #[must_use]
    pub fn told_to(&self, grant: &str) -> Vec<String> {
        let open = self.open.left.iter().filter(|l| l.grant == grant).map(|l| match &l.asking {
            Some(card) => sentences::left_asking(&quoted(&l.tool), &quoted(card)),
            None => sentences::left_running(&quoted(&l.tool)),
        });
        let done = self
            .open
            .afterwards
            .iter()
            .filter(|a| a.grant == grant)
            .map(|a| sentences::left_done(&quoted(&a.tool), &a.said));
        open.chain(done).collect()
    }

    /// The wait for call `id` ran out. While the person is being asked, the tab keeps the
    /// question open and the agent is told so (what comes of it, `status` tells later);
    /// otherwise the tab is told to drop the call.
    pub fn give_up(&mut self, id: u64, waited_ms: u64) -> GaveUp {
        match self.take(id) {
            Some(Pending { id, tab, asking: Some(card), grant, tool, .. }) => {
                let list = &mut self.open.left;
                make_room(list, |l| l.grant == grant, LEFT_OPEN_PER_CONNECTION, MAX_LEFT_OPEN);
                let sentence = sentences::still_asking(&quoted(&card));
                self.open.left.push(Left { id, tab, grant, tool, asking: Some(card) });
                GaveUp { sentence, cancel_in: None }
            }
            Some(Pending { tab, .. }) => {
                GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: Some(tab) }
            }
            None => GaveUp { sentence: sentences::wait_over(waited_ms / 1000), cancel_in: None },
        }
    }

    /// Connection `grant` is gone (forgotten or revoked): its calls waited on and those left
    /// open in their tabs, each with its tab to tell (they are no longer anyone's), and what
    /// came of its earlier calls goes too.
    pub fn forget_grant(&mut self, grant: &str) -> Vec<(u64, u64)> {
        let mut ended: Vec<(u64, u64)> =
            self.pending.iter().filter(|p| p.grant == grant).map(|p| (p.id, p.tab)).collect();
        self.pending.retain(|p| p.grant != grant);
        ended.extend(self.open.left.iter().filter(|l| l.grant == grant).map(|l| (l.id, l.tab)));
        self.open.left.retain(|l| l.grant != grant);
        self.open.afterwards.retain(|a| a.grant != grant);
        ended
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

/// Makes room in `list` (oldest first) for one more of a connection's (`mine`): its oldest go
/// while it holds its `share`, then the oldest of all while the list holds `all`.
fn make_room<T>(list: &mut Vec<T>, mine: impl Fn(&T) -> bool, share: usize, all: usize) {
    while list.iter().filter(|t| mine(t)).count() >= share {
        let Some(i) = list.iter().position(&mine) else { break };
        list.remove(i);
    }
    while !list.is_empty() && list.len() >= all {
        list.remove(0);
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
        let id = calls.start(1, 5, "r".into(), "g1", "t").unwrap();
        assert_eq!(calls.finish(id, 2), Finished::Not);
        assert_eq!(calls.finish(id, 1), Finished::Waited);
        assert_eq!(calls.finish(id, 1), Finished::Not, "an answer comes once");
    }

    #[test]
    fn call_ids_are_unique_and_grow_across_a_restart() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into(), "g1", "t").unwrap();
        let b = calls.start(1, 5, "b".into(), "g1", "t").unwrap();
        assert_ne!(a, b);
        let mut restarted = Calls::default();
        assert!(restarted.start(1, 6, "c".into(), "g1", "t").unwrap() > b);
    }

    #[test]
    fn a_tab_going_away_fails_its_calls_only() {
        let mut calls = Calls::default();
        let a = calls.start(1, 5, "a".into(), "g1", "t").unwrap();
        let b = calls.start(2, 5, "b".into(), "g1", "t").unwrap();
        assert_eq!(calls.tab_gone(1), vec![a]);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls.finish(b, 2), Finished::Waited);
    }

    #[test]
    fn a_wait_that_runs_out_while_the_person_is_asked_says_so() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into(), "g1", "t").unwrap();
        assert_eq!(calls.asking(id, 2, "ignored: another tab"), None);
        assert_eq!(calls.asking(id, 1, "Delete 3 items?").as_deref(), Some("Delete 3 items?"));
        let gave_up = calls.give_up(id, TAB_CALL_WAIT_MS);
        let s = &gave_up.sentence;
        assert!(
            s.contains("being asked") && s.contains("Delete 3 items?") && s.contains("history"),
            "{s}"
        );
        assert_eq!(gave_up.cancel_in, None, "the question stays open in the tab");
        let id = calls.start(1, 6, "b".into(), "g1", "t").unwrap();
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
        let id = calls.start(1, 5, "a".into(), "g1", "t").unwrap();
        let card = calls.asking(id, 1, &"é".repeat(MAX_CARD_CHARS + 50)).unwrap();
        assert_eq!(card.chars().count(), MAX_CARD_CHARS);
    }

    #[test]
    fn a_connection_cancels_its_own_request_only() {
        use crate::jsonrpc::Id;
        let mut calls = Calls::default();
        let mine = request_key("grant-a", &Id::Number(7));
        let id = calls.start(3, 5, mine.clone(), "g1", "t").unwrap();
        assert_eq!(calls.cancel(&request_key("grant-b", &Id::Number(7))), None);
        assert_eq!(calls.cancel(&request_key("grant-a", &Id::Text("7".into()))), None);
        assert_eq!(calls.cancel(&mine), Some((id, 3)));
        assert_eq!(calls.cancel(&mine), None, "cancelled once");
        assert_eq!(calls.finish(id, 3), Finished::Not, "a late answer goes nowhere");
    }

    #[test]
    fn a_forgotten_connections_calls_end_and_no_answer_of_them_is_taken() {
        let mut calls = Calls::default();
        let waited = calls.start(1, 5, "a".into(), "g1", "t").unwrap();
        let other = calls.start(1, 5, "b".into(), "g2", "t").unwrap();
        let left = calls.start(2, 5, "c".into(), "g1", "items_delete").unwrap();
        calls.asking(left, 2, "Delete?");
        let _ = calls.give_up(left, 54_000);
        calls.afterwards("g1".into(), "t".into(), "it ran".into());
        assert_eq!(calls.forget_grant("g1"), vec![(waited, 1), (left, 2)]);
        assert!(calls.told_to("g1").is_empty(), "nothing is kept for it");
        assert_eq!(calls.finish(waited, 1), Finished::Not, "its tab's late answer goes nowhere");
        assert_eq!(calls.finish(left, 2), Finished::Not);
        assert_eq!(calls.asking(waited, 1, "Delete?"), None);
        assert_eq!(calls.finish(other, 1), Finished::Waited, "another connection's call stays");
    }

    #[test]
    fn too_many_waiting_calls_get_a_sentence() {
        let mut calls = Calls::default();
        for i in 0..MAX_PENDING_CALLS {
            calls.start(1, 5, i.to_string(), "g1", "t").unwrap();
        }
        assert!(calls
            .start(1, 5, "x".into(), "g1", "t")
            .unwrap_err()
            .contains(&MAX_PENDING_CALLS.to_string()));
    }

    #[test]
    fn a_connection_that_leaves_many_calls_open_pushes_out_its_own_only() {
        let mut calls = Calls::default();
        let theirs = calls.start(1, 5, "b".into(), "g2", "t").unwrap();
        calls.asking(theirs, 1, "Theirs?");
        let _ = calls.give_up(theirs, 54_000);
        calls.afterwards("g2".into(), "t".into(), "theirs ran".into());
        for i in 0..LEFT_OPEN_PER_CONNECTION + 3 {
            let id = calls.start(1, 6, format!("a{i}"), "g1", "t").unwrap();
            calls.asking(id, 1, &format!("Mine {i}?"));
            let _ = calls.give_up(id, 54_000);
        }
        for i in 0..AFTERWARDS_KEPT + 3 {
            calls.afterwards("g1".into(), "t".into(), format!("mine {i} ran"));
        }
        let mine = calls.told_to("g1");
        assert_eq!(mine.len(), LEFT_OPEN_PER_CONNECTION + AFTERWARDS_KEPT, "{mine:?}");
        assert!(!mine.iter().any(|t| t.contains("Mine 0?") || t.ends_with("mine 0 ran")));
        assert!(mine.iter().any(|t| t.ends_with(&format!("mine {} ran", AFTERWARDS_KEPT + 2))));
        let told = calls.told_to("g2");
        assert_eq!(told.len(), 2, "the other connection keeps its own: {told:?}");
        assert!(told[0].contains("Theirs?") && told[1].ends_with("theirs ran"));
    }

    #[test]
    fn a_call_left_open_while_the_person_is_asked_is_told_to_its_connection_later() {
        let mut calls = Calls::default();
        let id = calls.start(1, 5, "a".into(), "g1", "items_delete").unwrap();
        calls.asking(id, 1, "Delete 3 items?");
        let gave_up = calls.give_up(id, 54_000);
        assert!(gave_up.sentence.contains("`status`"), "{}", gave_up.sentence);
        let told = calls.told_to("g1");
        assert_eq!(told.len(), 1);
        assert!(
            told[0].contains("still waits for the person") && told[0].contains("Delete 3 items?")
        );
        assert!(calls.told_to("g2").is_empty(), "another connection hears nothing of it");
        assert_eq!(calls.asking(id, 1, "Delete 3 items, really?"), None, "nobody waits to hear it");
        assert!(!calls.answered(id, 1));
        assert!(calls.told_to("g1")[0].contains("is running"), "{:?}", calls.told_to("g1"));
        assert_eq!(calls.finish(id, 2), Finished::Not, "only its tab answers it");
        let Finished::Left { grant, tool } = calls.finish(id, 1) else { panic!("left") };
        calls.afterwards(grant, tool, "it ran".into());
        assert_eq!(calls.finish(id, 1), Finished::Not, "an answer comes once");
        let told = calls.told_to("g1");
        assert_eq!(told.len(), 1);
        assert!(told[0].contains("earlier call") && told[0].ends_with("it ran"), "{told:?}");
        // A tab that closes first: its connection hears that, and the outcomes kept are bounded.
        let other = calls.start(2, 6, "b".into(), "g1", "t").unwrap();
        calls.asking(other, 2, "?");
        let _ = calls.give_up(other, 54_000);
        calls.tab_gone(2);
        assert!(calls.told_to("g1").last().unwrap().contains("tab closed"));
        for _ in 0..AFTERWARDS_KEPT + 3 {
            calls.afterwards("g3".into(), "t".into(), "x".into());
        }
        assert_eq!(calls.told_to("g3").len(), AFTERWARDS_KEPT);
    }
}
