//! The calls a pairing has in flight in its tabs, in one registry whoever holds them (a request
//! of the Worker waiting, a client's stream that dropped and will come back, or a task's
//! round): which tab each went to, whether the person is being asked, who may answer or cancel
//! it, when its wait runs out, and what the agent is told then. Every call obeys the same
//! bounds here ([`Calls::start`]: a connection's share and the pairing's), and every call has
//! its deadline in [`Calls::next_due`]. The calls left open after their wait (the person still
//! asked) are kept apart, stored ([`LeftCalls`]).

use tabrelay_bundle::content::quoted;
use tabrelay_bundle::protocol::MAX_CARD_CHARS;

use crate::limits::{
    AFTERWARDS_KEPT, LEFT_OPEN_PER_CONNECTION, MAX_AFTERWARDS, MAX_CALLS_PER_CONNECTION,
    MAX_ID_BYTES_PER_CONNECTION, MAX_LEFT_OPEN, MAX_PENDING_CALLS,
};
use crate::pairing::tasks::Carried;
use crate::pairing::{remove_where, take_where};
use crate::sentences;

/// Who holds a call in flight: who is told its events and its end.
#[derive(Debug, Clone, PartialEq)]
pub enum Holder {
    /// A request of the Worker waits for it.
    Waiter(Waiter),
    /// Its client's stream dropped; the client comes back for it (a resume): it runs on
    /// until its wait ends, and its end is kept.
    Detached,
    /// It carries a round of the task of this id.
    Task(String),
}

/// The request of the Worker waiting for a call.
#[derive(Debug, Clone, PartialEq)]
pub struct Waiter {
    /// The request.
    pub asker: u64,
    /// Whether it reads the call's events as a stream.
    pub stream: bool,
    /// Whether its client comes back when its stream drops (the call then keeps running).
    pub resumable: bool,
    /// Set when the call becomes a task should it wait: what will carry it.
    pub task: Option<Box<Carried>>,
}

/// One call in flight in a tab.
#[derive(Debug, Clone, PartialEq)]
pub struct Flight {
    /// Its id, as the tab knows it.
    pub id: u64,
    /// The tab it went to (only that tab answers it).
    pub tab: u64,
    /// The request key of the client's call (empty for a task's later round).
    pub request: String,
    /// The connection that made it, and the tool.
    pub grant: String,
    /// The tool.
    pub tool: String,
    /// The card while the person is asked about it.
    pub asking: Option<String>,
    /// Its whole wait, and when it runs out.
    pub wait_ms: u64,
    /// When its wait runs out.
    pub until_ms: u64,
    /// When its timer fires next (its wait's end, or sooner: when a call that may become a
    /// task becomes one); `u64::MAX`: never (a task's round left to the person).
    pub due_ms: u64,
    /// Who holds it.
    pub holder: Holder,
}

impl Flight {
    /// A call of connection `grant` (request key `request`, tool `tool`) held by `holder`,
    /// waiting `wait_ms` from `now_ms`; its timer fires at `due_ms` (None: at its wait's end).
    #[must_use]
    pub fn new(
        request: String,
        grant: &str,
        tool: &str,
        holder: Holder,
        now_ms: u64,
        wait_ms: u64,
        due_ms: Option<u64>,
    ) -> Self {
        let until_ms = now_ms + wait_ms;
        let (grant, tool) = (grant.to_owned(), tool.to_owned());
        let due_ms = due_ms.unwrap_or(until_ms);
        Self {
            id: 0,
            tab: 0,
            request,
            grant,
            tool,
            asking: None,
            wait_ms,
            until_ms,
            due_ms,
            holder,
        }
    }

    /// The request waiting for it, if one does.
    #[must_use]
    pub fn waiter(&self) -> Option<&Waiter> {
        match &self.holder {
            Holder::Waiter(w) => Some(w),
            _ => None,
        }
    }

    /// Whether its timer needs the object's alarm: nobody's request is in flight to wake for
    /// it (a dropped stream's call, a task's round).
    #[must_use]
    pub fn durable(&self) -> bool {
        !matches!(self.holder, Holder::Waiter(_))
    }
}

/// A call the relay stopped waiting for while the person was being asked: the question stays
/// open in the tab, and what comes of it is kept for the connection's `status`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Left {
    id: u64,
    tab: u64,
    grant: String,
    tool: String,
    /// The card while the person is asked; None once they answered (the step runs).
    asking: Option<String>,
}

/// What came of a call its agent no longer waited for, as `status` tells that connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Afterwards {
    /// The connection.
    pub grant: String,
    /// The tool.
    pub tool: String,
    /// The relay's sentence, with what came from the tab marked as data.
    pub said: String,
}

tabrelay_bundle::codec!(Left, "a call left open", { id, tab, grant, tool, asking });
tabrelay_bundle::codec!(Afterwards, "what came of a call", { grant, tool, said });

/// The calls left open in their tabs and what came of others: kept in storage (a person may
/// take longer to decide than the pairing's object stays in memory).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftCalls {
    /// Still open in their tabs, oldest first (at most [`LEFT_OPEN_PER_CONNECTION`] of a
    /// connection, [`MAX_LEFT_OPEN`] in all).
    left: Vec<Left>,
    /// What came of them, newest last (at most [`AFTERWARDS_KEPT`] of a connection,
    /// [`MAX_AFTERWARDS`] in all).
    afterwards: Vec<Afterwards>,
}

tabrelay_bundle::codec!(LeftCalls, "calls left open", { left, afterwards });

impl LeftCalls {
    /// Whether none is left open and nothing came of any.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.left.is_empty() && self.afterwards.is_empty()
    }
}

/// Whose answer a tab's result is.
#[derive(Debug, Clone, PartialEq)]
pub enum Finished {
    /// A call in flight's: its holder gets it.
    Flight(Flight),
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

/// The calls a pairing has in flight, and those left open. Only the tab a call went to can
/// answer it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Calls {
    /// In the order they started (a few tens at most: a vector is smaller in the Worker than a
    /// map).
    flights: Vec<Flight>,
    /// Calls still open in their tab though nobody waits, and what came of others.
    open: LeftCalls,
    next: u64,
}

impl Calls {
    /// Starts `flight` in `tab`: its id, or the sentence when connection `flight.grant` holds
    /// its share of calls ([`MAX_CALLS_PER_CONNECTION`], their request keys in
    /// [`MAX_ID_BYTES_PER_CONNECTION`]) or the pairing its bound
    /// ([`MAX_PENDING_CALLS`]); every call counts, whoever holds it. Ids grow with time
    /// (`now_ms`), so they stay unique across a restart of the object.
    pub fn start(&mut self, tab: u64, now_ms: u64, flight: Flight) -> Result<u64, String> {
        // The client's ids, of any length, are kept with its calls: they count in its share.
        let (mut calls, mut ids) = (0, flight.request.len());
        for f in &self.flights {
            if f.grant == flight.grant {
                calls += 1;
                ids += f.request.len();
            }
        }
        if calls >= MAX_CALLS_PER_CONNECTION {
            return Err(sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION));
        }
        if ids > MAX_ID_BYTES_PER_CONNECTION {
            return Err(sentences::ids_too_long(MAX_ID_BYTES_PER_CONNECTION / 1024));
        }
        if self.flights.len() >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        let id = self.next.max(now_ms.saturating_mul(1024));
        self.next = id + 1;
        self.flights.push(Flight { id, tab, ..flight });
        Ok(id)
    }

    /// A call already in a tab taken back after a restart (a task's round read back): held
    /// again, whatever the bounds (it runs already).
    pub fn restore_flight(&mut self, flight: Flight) {
        self.next = self.next.max(flight.id + 1);
        self.flights.push(flight);
    }

    /// Call `id`, if in flight.
    #[must_use]
    pub fn get(&self, id: u64) -> Option<&Flight> {
        self.flights.iter().find(|f| f.id == id)
    }

    /// Call `id`, if in flight, to change who holds it or when its timer fires.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Flight> {
        self.flights.iter_mut().find(|f| f.id == id)
    }

    /// Every call in flight.
    pub fn flights(&self) -> impl Iterator<Item = &Flight> {
        self.flights.iter()
    }

    /// The calls whose timer fired by `now_ms`.
    #[must_use]
    pub fn due(&self, now_ms: u64) -> Vec<u64> {
        let mut due = Vec::new();
        for f in self.flights.iter().filter(|f| f.due_ms <= now_ms) {
            due.push(f.id);
        }
        due
    }

    /// When the next call's timer fires (`durable`: of those only the alarm wakes for).
    #[must_use]
    pub fn next_due(&self, durable: bool) -> Option<u64> {
        let mut next: Option<u64> = None;
        for f in self.flights.iter().filter(|f| !durable || f.durable()) {
            if f.due_ms != u64::MAX && next.is_none_or(|n| f.due_ms < n) {
                next = Some(f.due_ms);
            }
        }
        next
    }

    /// The person is being asked about call `id` (told by `tab`): the card's sentence, cut to
    /// [`MAX_CARD_CHARS`], when the call is this tab's and in flight.
    pub fn asking(&mut self, id: u64, tab: u64, sentence: &str) -> Option<String> {
        let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
        if let Some(l) = self.open.left.iter_mut().find(|l| l.id == id && l.tab == tab) {
            l.asking = Some(card);
            return None; // nobody waits to hear it
        }
        let f = self.flights.iter_mut().find(|f| f.id == id && f.tab == tab)?;
        f.asking = Some(card.clone());
        Some(card)
    }

    /// The person answered about call `id`: whether the call is this tab's and in flight.
    pub fn answered(&mut self, id: u64, tab: u64) -> bool {
        if let Some(l) = self.open.left.iter_mut().find(|l| l.id == id && l.tab == tab) {
            l.asking = None;
            return false;
        }
        match self.flights.iter_mut().find(|f| f.id == id && f.tab == tab) {
            Some(f) => {
                f.asking = None;
                true
            }
            None => false,
        }
    }

    /// The agent cancelled its request: the call, if it is still in flight.
    pub fn cancel(&mut self, request: &str) -> Option<Flight> {
        let i = self.flights.iter().position(|f| !f.request.is_empty() && f.request == request)?;
        Some(self.flights.remove(i))
    }

    /// `tab` answered call `id`: whose answer it is (the call is done either way).
    pub fn finish(&mut self, id: u64, tab: u64) -> Finished {
        if self.flights.iter().any(|f| f.id == id && f.tab == tab) {
            return self.take(id).map_or(Finished::Not, Finished::Flight);
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

    /// `tab` went away: the calls in flight there, now failed (and those left open there
    /// are told to their connections' `status`).
    pub fn tab_gone(&mut self, tab: u64) -> Vec<Flight> {
        let gone = take_where(&mut self.flights, &|f| f.tab == tab);
        // Gone over by reference (their grant and tool copied): no iterator of them by value.
        for l in &take_where(&mut self.open.left, &|l| l.tab == tab) {
            let said = sentences::LEFT_TAB_CLOSED.to_owned();
            self.afterwards(l.grant.clone(), l.tool.clone(), said);
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
        let mut told = Vec::new();
        for l in self.open.left.iter().filter(|l| l.grant == grant) {
            told.push(match &l.asking {
                Some(card) => sentences::left_asking(&quoted(&l.tool), &quoted(card)),
                None => sentences::left_running(&quoted(&l.tool)),
            });
        }
        for a in self.open.afterwards.iter().filter(|a| a.grant == grant) {
            told.push(sentences::left_done(&quoted(&a.tool), &a.said));
        }
        told
    }

    /// The wait for call `flight` (taken out) ran out. While the person is being asked, the
    /// tab keeps the question open and the agent is told so (what comes of it, `status` tells
    /// later); otherwise the tab is told to drop the call.
    pub fn give_up(&mut self, flight: &Flight) -> GaveUp {
        let Flight { id, tab, ref grant, ref tool, ref asking, wait_ms, .. } = *flight;
        match asking.clone() {
            Some(card) => {
                let (grant, tool) = (grant.clone(), tool.clone());
                let list = &mut self.open.left;
                make_room(list, |l| l.grant == grant, LEFT_OPEN_PER_CONNECTION, MAX_LEFT_OPEN);
                let sentence = sentences::still_asking(&quoted(&card));
                self.open.left.push(Left { id, tab, grant, tool, asking: Some(card) });
                GaveUp { sentence, cancel_in: None }
            }
            None => GaveUp { sentence: sentences::wait_over(wait_ms / 1000), cancel_in: Some(tab) },
        }
    }

    /// Connection `grant` is gone (forgotten or revoked): its calls in flight (each to drop in
    /// its tab: they are no longer anyone's), and the ids and tabs of those left open in their
    /// tabs; what came of its earlier calls goes too.
    pub fn forget_grant(&mut self, grant: &str) -> (Vec<Flight>, Vec<(u64, u64)>) {
        let ended = take_where(&mut self.flights, &|f| f.grant == grant);
        let mut left = Vec::new();
        for l in &take_where(&mut self.open.left, &|l| l.grant == grant) {
            left.push((l.id, l.tab));
        }
        remove_where(&mut self.open.afterwards, &|a| a.grant == grant);
        (ended, left)
    }

    /// Takes call `id` out of flight.
    pub fn take(&mut self, id: u64) -> Option<Flight> {
        let i = self.flights.iter().position(|f| f.id == id)?;
        Some(self.flights.remove(i))
    }

    /// How many calls are in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.flights.len()
    }

    /// Whether no call is in flight.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.flights.is_empty()
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

    /// Starts a call waited on by request 1, as the room does.
    fn start(
        c: &mut Calls,
        tab: u64,
        now: u64,
        request: String,
        grant: &str,
        tool: &str,
    ) -> Result<u64, String> {
        let waiter = Waiter { asker: 1, stream: false, resumable: false, task: None };
        let flight = Flight::new(request, grant, tool, Holder::Waiter(waiter), now, 1000, None);
        c.start(tab, now, flight)
    }

    /// Gives up on call `id` after a wait of `wait_ms`.
    fn give_up(c: &mut Calls, id: u64, wait_ms: u64) -> GaveUp {
        match c.take(id) {
            Some(f) => c.give_up(&Flight { wait_ms, ..f }),
            None => GaveUp { sentence: sentences::wait_over(wait_ms / 1000), cancel_in: None },
        }
    }

    fn is_flight(f: Finished) -> bool {
        matches!(f, Finished::Flight(_))
    }

    #[test]
    fn only_the_tab_a_call_went_to_can_answer_it() {
        let mut calls = Calls::default();
        let id = start(&mut calls, 1, 5, "r".into(), "g1", "t").unwrap();
        assert_eq!(calls.finish(id, 2), Finished::Not);
        assert!(is_flight(calls.finish(id, 1)));
        assert_eq!(calls.finish(id, 1), Finished::Not, "an answer comes once");
    }

    #[test]
    fn call_ids_are_unique_and_grow_across_a_restart() {
        let mut calls = Calls::default();
        let a = start(&mut calls, 1, 5, "a".into(), "g1", "t").unwrap();
        let b = start(&mut calls, 1, 5, "b".into(), "g1", "t").unwrap();
        assert_ne!(a, b);
        let mut restarted = Calls::default();
        assert!(start(&mut restarted, 1, 6, "c".into(), "g1", "t").unwrap() > b);
    }

    #[test]
    fn a_tab_going_away_fails_its_calls_only() {
        let mut calls = Calls::default();
        let a = start(&mut calls, 1, 5, "a".into(), "g1", "t").unwrap();
        let b = start(&mut calls, 2, 5, "b".into(), "g1", "t").unwrap();
        assert_eq!(calls.tab_gone(1).iter().map(|f| f.id).collect::<Vec<_>>(), vec![a]);
        assert_eq!(calls.len(), 1);
        assert!(is_flight(calls.finish(b, 2)));
    }

    #[test]
    fn a_wait_that_runs_out_while_the_person_is_asked_says_so() {
        let mut calls = Calls::default();
        let id = start(&mut calls, 1, 5, "a".into(), "g1", "t").unwrap();
        assert_eq!(calls.asking(id, 2, "ignored: another tab"), None);
        assert_eq!(calls.asking(id, 1, "Delete 3 items?").as_deref(), Some("Delete 3 items?"));
        let gave_up = give_up(&mut calls, id, TAB_CALL_WAIT_MS);
        let s = &gave_up.sentence;
        assert!(
            s.contains("being asked") && s.contains("Delete 3 items?") && s.contains("history"),
            "{s}"
        );
        assert_eq!(gave_up.cancel_in, None, "the question stays open in the tab");
        let id = start(&mut calls, 1, 6, "b".into(), "g1", "t").unwrap();
        calls.asking(id, 1, "Delete?");
        assert!(calls.answered(id, 1));
        let gave_up = give_up(&mut calls, id, 225_000);
        assert!(gave_up.sentence.contains("within 225 s"));
        assert_eq!(gave_up.cancel_in, Some(1), "the tab is told to drop a call nobody waits for");
        assert!(calls.is_empty());
    }

    #[test]
    fn a_cards_sentence_is_kept_bounded() {
        let mut calls = Calls::default();
        let id = start(&mut calls, 1, 5, "a".into(), "g1", "t").unwrap();
        let card = calls.asking(id, 1, &"é".repeat(MAX_CARD_CHARS + 50)).unwrap();
        assert_eq!(card.chars().count(), MAX_CARD_CHARS);
    }

    #[test]
    fn a_connection_cancels_its_own_request_only() {
        use crate::jsonrpc::Id;
        let mut calls = Calls::default();
        let mine = request_key("grant-a", &Id::Number(7));
        let id = start(&mut calls, 3, 5, mine.clone(), "g1", "t").unwrap();
        assert!(calls.cancel(&request_key("grant-b", &Id::Number(7))).is_none());
        assert!(calls.cancel(&request_key("grant-a", &Id::Text("7".into()))).is_none());
        assert_eq!(calls.cancel(&mine).map(|f| (f.id, f.tab)), Some((id, 3)));
        assert!(calls.cancel(&mine).is_none(), "cancelled once");
        assert_eq!(calls.finish(id, 3), Finished::Not, "a late answer goes nowhere");
    }

    #[test]
    fn a_forgotten_connections_calls_end_and_no_answer_of_them_is_taken() {
        let mut calls = Calls::default();
        let waited = start(&mut calls, 1, 5, "a".into(), "g1", "t").unwrap();
        let other = start(&mut calls, 1, 5, "b".into(), "g2", "t").unwrap();
        let left = start(&mut calls, 2, 5, "c".into(), "g1", "items_delete").unwrap();
        calls.asking(left, 2, "Delete?");
        let _ = give_up(&mut calls, left, 54_000);
        calls.afterwards("g1".into(), "t".into(), "it ran".into());
        let (ended, left_open) = calls.forget_grant("g1");
        assert_eq!(ended.iter().map(|f| (f.id, f.tab)).collect::<Vec<_>>(), vec![(waited, 1)]);
        assert_eq!(left_open, vec![(left, 2)]);
        assert!(calls.told_to("g1").is_empty(), "nothing is kept for it");
        assert_eq!(calls.finish(waited, 1), Finished::Not, "its tab's late answer goes nowhere");
        assert_eq!(calls.finish(left, 2), Finished::Not);
        assert_eq!(calls.asking(waited, 1, "Delete?"), None);
        assert!(is_flight(calls.finish(other, 1)), "another connection's call stays");
    }

    #[test]
    fn too_many_waiting_calls_get_a_sentence() {
        let mut calls = Calls::default();
        for i in 0..MAX_PENDING_CALLS {
            let grant = format!("g{}", i / MAX_CALLS_PER_CONNECTION);
            start(&mut calls, 1, 5, i.to_string(), &grant, "t").unwrap();
        }
        assert!(start(&mut calls, 1, 5, "x".into(), "extra", "t")
            .unwrap_err()
            .contains(&MAX_PENDING_CALLS.to_string()));
    }

    #[test]
    fn a_connection_that_leaves_many_calls_open_pushes_out_its_own_only() {
        let mut calls = Calls::default();
        let theirs = start(&mut calls, 1, 5, "b".into(), "g2", "t").unwrap();
        calls.asking(theirs, 1, "Theirs?");
        let _ = give_up(&mut calls, theirs, 54_000);
        calls.afterwards("g2".into(), "t".into(), "theirs ran".into());
        for i in 0..LEFT_OPEN_PER_CONNECTION + 3 {
            let id = start(&mut calls, 1, 6, format!("a{i}"), "g1", "t").unwrap();
            calls.asking(id, 1, &format!("Mine {i}?"));
            let _ = give_up(&mut calls, id, 54_000);
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
        let id = start(&mut calls, 1, 5, "a".into(), "g1", "items_delete").unwrap();
        calls.asking(id, 1, "Delete 3 items?");
        let gave_up = give_up(&mut calls, id, 54_000);
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
        let other = start(&mut calls, 2, 6, "b".into(), "g1", "t").unwrap();
        calls.asking(other, 2, "?");
        let _ = give_up(&mut calls, other, 54_000);
        calls.tab_gone(2);
        assert!(calls.told_to("g1").last().unwrap().contains("tab closed"));
        for _ in 0..AFTERWARDS_KEPT + 3 {
            calls.afterwards("g3".into(), "t".into(), "x".into());
        }
        assert_eq!(calls.told_to("g3").len(), AFTERWARDS_KEPT);
    }
}
