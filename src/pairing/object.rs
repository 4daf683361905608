//! The pairing's Durable Object as a machine, in the style of the endpoint's `Exchange`: the
//! [`Room`] and its [`Store`], with the effects of each input queued in order. The object gives
//! an event with its `now` and then takes its outputs until it says None (`machine::turn`):
//! storing effects are written as they come up (through [`Sql`], before anything after them),
//! a typed answer is rendered for the Worker, and the rest comes out as an [`Output`] the
//! object carries out (a socket message, a reply line, the alarm, a check or a question whose
//! outcome comes back as an input). It keeps which requests still wait for their last reply,
//! so a request's end reaches the room only when it stopped waiting early.

use tabrelay_bundle::catalogue::Catalogue;

use crate::crypto::Entropy;
use crate::keys::Keys;
use crate::oauth::connect::{Command, ConnectCode, Named};
use crate::pairing::room::{Asker, Effect, Input, Room};
use crate::pairing::store::{Sql, Store};
use crate::pairing::tabs::{Proof, Tab};
use crate::pairing::wire::{Reply, Request};

/// What the object carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send a tab this text.
    Send(u64, String),
    /// Close a tab's socket with this code and reason (it is gone from the room already).
    Close(u64, u16, &'static str),
    /// Keep this text as the tab's socket attachment (it survives hibernation; it reads back
    /// with [`read_attachment`]).
    Attach(u64, String),
    /// Check this proof, then give [`Input::Proved`] (a tab's hello), or
    /// [`Input::PresenceProved`] for the approval of the code or link it names (the person's
    /// presence): one check and one await in the shell for both.
    Verify(u64, Proof, Option<Named>),
    /// Ask a code's object, then give [`Input::CodeReplied`].
    AskCode(u64, ConnectCode, Command, String),
    /// Reply to a waiting request; [`Reply::ends`] says whether it is its last.
    Reply(Asker, Reply),
    /// Set the alarm to ring at this time.
    SetAlarm(u64),
}

/// One pairing's object.
pub struct Object {
    room: Room,
    store: Store,
    woke: bool,
    /// The effects not yet carried out, in order (a few tens at most: a vector, taken from
    /// its front, is smaller in the Worker than a deque of effects).
    queue: Vec<Effect>,
    /// The requests whose last reply has not gone.
    waiting: Vec<Asker>,
    last_asker: Asker,
    /// When the event last given happened.
    now: u64,
}

impl Object {
    /// An object whose room checks codes with `keys` and bundles `catalogue`; it wakes with
    /// [`Input::Woke`].
    #[must_use]
    pub fn new(keys: Option<Keys>, catalogue: &'static Catalogue) -> Self {
        Self {
            room: Room::new(keys, catalogue),
            store: Store::default(),
            woke: false,
            queue: Vec::new(),
            waiting: Vec::new(),
            last_asker: 0,
            now: 0,
        }
    }

    /// Whether it woke (read its storage back) yet.
    #[must_use]
    pub fn woke(&self) -> bool {
        self.woke
    }

    /// A request's number, for [`Input::Request`] (who waits for its replies, as
    /// [`Output::Reply`] names it).
    pub fn next_asker(&mut self) -> Asker {
        self.last_asker += 1;
        self.last_asker
    }

    /// One input (given through [`Machine::handle_input`]), its effects queued. What the
    /// object itself adds to the room's input:
    /// - [`Input::Woke`], given with the tabs the open sockets kept: the rest is read back
    ///   from storage, once (a later one changes nothing);
    /// - [`Input::Request`]: it waits for its last reply; a requestState's use is answered from
    ///   storage (a uniqueness its SQL keeps), a grant's creation comes to the room with the
    ///   replays recorded for its id (whatever `replayed` the shell gave);
    /// - [`Input::Gone`]: only a request still waiting for its last reply is let go of.
    ///
    /// [`Machine::handle_input`]: crate::machine::Machine::handle_input
    fn give(
        &mut self,
        mut input: Input,
        now_ms: u64,
        sql: &mut dyn Sql,
        entropy: &mut dyn Entropy,
    ) {
        self.now = now_ms;
        // Filled in place (no part of the input moved out: smaller in the Worker).
        match &mut input {
            Input::Woke(stored) => {
                if self.woke {
                    return;
                }
                self.woke = true;
                *stored = self.store.read_back(sql, std::mem::take(&mut stored.tabs));
            }
            Input::Request { asker, request, replayed } => {
                self.waiting.push(*asker);
                match request {
                    Request::UseState { key, expires_ms } => {
                        let first = self.store.first_use(sql, key, *expires_ms, now_ms);
                        let reply = if first { Reply::Done } else { Reply::StateUsed };
                        self.queue.push(Effect::Reply(*asker, reply));
                        return;
                    }
                    Request::Grant(grant) => *replayed = self.store.replayed(sql, &grant.id),
                    _ => {}
                }
            }
            Input::Gone { asker } => {
                let Some(i) = self.waiting.iter().position(|a| a == asker) else { return };
                self.waiting.swap_remove(i);
            }
            _ => {}
        }
        let mut effects = self.room.handle(input, now_ms, entropy);
        self.queue.append(&mut effects);
    }

    /// A socket's number, for [`Input::Opened`].
    pub fn next_tab_number(&mut self, now_ms: u64) -> u64 {
        self.room.next_tab_number(now_ms)
    }

    /// When the room next needs waking (None: nothing is due). Private: a shell asks it as a
    /// [`crate::machine::Machine`].
    #[must_use]
    fn poll_timeout(&self) -> Option<u64> {
        self.room.poll_timeout()
    }

    /// The next thing to carry out, the writes before it done; None when nothing is left.
    /// Private: a shell takes it by `machine::turn`.
    fn poll_output(&mut self, sql: &mut dyn Sql) -> Option<Output> {
        while !self.queue.is_empty() {
            let effect = self.queue.remove(0);
            if self.store.apply(sql, &effect, self.now) {
                continue;
            }
            return Some(match effect {
                Effect::Send(tab, message) => Output::Send(tab, message.to_text()),
                Effect::Close(tab, code, reason) => Output::Close(tab, code, reason),
                Effect::Attach(tab) => Output::Attach(tab.number, attachment(&tab)),
                Effect::Verify(tab, proof) => Output::Verify(tab, proof, None),
                Effect::VerifyPresence(tab, proof, named) => {
                    Output::Verify(tab, proof, Some(named))
                }
                Effect::AskCode(tab, code, command, said) => {
                    Output::AskCode(tab, code, command, said)
                }
                Effect::Reply(asker, reply) => self.reply(asker, reply),
                Effect::SetAlarm(at) => Output::SetAlarm(at),
                _ => continue, // stored above
            });
        }
        None
    }

    fn reply(&mut self, asker: Asker, reply: Reply) -> Output {
        if reply.ends() {
            crate::pairing::remove_where(&mut self.waiting, &|a| *a == asker);
        }
        Output::Reply(asker, reply)
    }
}

/// The object's reply lines (NDJSON) as the Worker reads them, arriving in chunks; a line that
/// does not read as a reply is skipped.
#[derive(Debug, Default)]
pub struct ReplyLines(crate::http::Lines);

impl ReplyLines {
    /// Takes the next chunk that arrived.
    pub fn push(&mut self, chunk: &[u8]) {
        self.0.push(chunk);
    }

    /// The next reply whole so far.
    pub fn next_reply(&mut self) -> Option<Reply> {
        while let Some(line) = self.0.next_line() {
            if let Ok(reply) = Reply::decode(&line) {
                return Some(reply);
            }
        }
        None
    }
}

/// What the object keeps by a number (a tab's socket by its tab number, a waiting request's
/// reply channel by its asker): a few entries at most, so a list, which costs the upload less
/// than a hash map.
#[derive(Debug)]
pub struct ByNumber<V>(Vec<(u64, V)>);

impl<V> Default for ByNumber<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> ByNumber<V> {
    /// An empty map.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps `value` under `key`, in place of what was under it.
    pub fn insert(&mut self, key: u64, value: V) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// What is under `key`.
    #[must_use]
    pub fn get(&self, key: &u64) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Takes what is under `key` out.
    pub fn remove(&mut self, key: &u64) -> Option<V> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.swap_remove(at).1)
    }

    /// The key of the first value that is `value`.
    #[must_use]
    pub fn key_of(&self, value: &V) -> Option<u64>
    where
        V: PartialEq,
    {
        self.0.iter().find(|(_, v)| v == value).map(|(k, _)| *k)
    }
}

/// A tab's state as its socket keeps it (JSON text: smaller than a JS object).
#[must_use]
pub fn attachment(tab: &Tab) -> String {
    tabrelay_bundle::fields::json_text(tab)
}

/// A tab's state from its socket's attachment; None when it holds none (a socket not yet
/// numbered) or one that does not read.
#[must_use]
pub fn read_attachment(text: &str) -> Option<Tab> {
    tabrelay_bundle::from_json(text.as_bytes())
}

/// The pairing's object as the core's one machine shape: its inputs the room's (its waking, a
/// socket's opening, message or close, a proof checked, a code's reply, a request of the
/// endpoint numbered by [`Object::next_asker`] and its letting go, a timeout or the alarm),
/// given with its storage and randomness at hand ([`Object::give`] says what it adds); its
/// outputs taken with its storage at hand.
impl crate::machine::Machine for Object {
    type Input = Input;
    type Output = Output;
    type Host<'h> = crate::machine::Platform<'h>;

    #[inline]
    fn handle_input(&mut self, input: Input, now_ms: u64, host: &mut Self::Host<'_>) {
        self.give(input, now_ms, host.sql, host.entropy);
    }

    #[inline]
    fn poll_output(&mut self, host: &mut Self::Host<'_>) -> Option<Output> {
        Object::poll_output(self, host.sql)
    }

    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        Object::poll_timeout(self)
    }

    #[inline]
    fn handle_timeout(&mut self, now_ms: u64, host: &mut Self::Host<'_>) {
        self.give(Input::Timeout, now_ms, host.sql, host.entropy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::Counter;
    use crate::machine::{Machine as _, Platform};
    use crate::pairing::grants::Grant;
    use crate::pairing::wire::{ListenEvent, Want};
    use crate::sql::testing::Recorded;
    use tabrelay_bundle::protocol::ToolList;

    #[test]
    fn by_number_keeps_one_value_per_number() {
        let mut map = ByNumber::new();
        assert_eq!(map.get(&1), None);
        map.insert(1, "one");
        map.insert(2, "two");
        map.insert(3, "three");
        map.insert(1, "uno");
        assert_eq!(map.get(&1), Some(&"uno"));
        assert_eq!((map.key_of(&"two"), map.key_of(&"one")), (Some(2), None));
        assert_eq!(map.remove(&1), Some("uno"));
        assert_eq!(map.remove(&1), None);
        assert_eq!((map.get(&2), map.get(&3)), (Some(&"two"), Some(&"three")));
        assert_eq!(map.remove(&9), None);
    }

    fn catalogue() -> &'static Catalogue {
        Box::leak(Box::new(Catalogue::bundled()))
    }

    fn grant_row(id: &str) -> Vec<Option<String>> {
        let requester = crate::oauth::connect::Requester {
            client_name: "Claude".into(),
            host: "claude.ai".into(),
            place: None,
            verified: None,
        };
        let grant = Grant::new(id.into(), "cid".into(), requester, 1_000_000, &mut Counter(9)).0;
        vec![Some(tabrelay_bundle::fields::json_text(&grant))]
    }

    /// An object woken with grant `g1` stored.
    fn woken(sql: &mut Recorded) -> Object {
        sql.rows.push(("SELECT body FROM grants ORDER BY rowid", vec![grant_row("g1")]));
        let mut object = Object::new(None, catalogue());
        wake(&mut object, sql, 1_000_000, &mut Counter(1));
        while object.poll_output(sql).is_some() {}
        object
    }

    /// The object wakes (no tab kept).
    fn wake(object: &mut Object, sql: &mut Recorded, now: u64, rng: &mut Counter) {
        let woke = Input::Woke(crate::pairing::room::Stored::default());
        object.handle_input(woke, now, &mut Platform { sql, entropy: rng });
    }

    /// A request of the endpoint, numbered as a shell numbers it: who waits for its replies.
    fn ask(
        object: &mut Object,
        request: Request,
        sql: &mut Recorded,
        now: u64,
        rng: &mut Counter,
    ) -> Asker {
        let asker = object.next_asker();
        let input = Input::Request { asker, request, replayed: Vec::new() };
        object.handle_input(input, now, &mut Platform { sql, entropy: rng });
        asker
    }

    /// A request stops waiting: whether the object still held it as waiting.
    fn gone(object: &mut Object, asker: Asker, now: u64, rng: &mut Counter) -> bool {
        let (before, mut sql) = (object.waiting.len(), Recorded::default());
        let host = &mut Platform { sql: &mut sql, entropy: rng };
        object.handle_input(Input::Gone { asker }, now, host);
        object.waiting.len() < before
    }

    fn outputs(object: &mut Object, sql: &mut Recorded) -> Vec<Output> {
        std::iter::from_fn(|| object.poll_output(sql)).collect()
    }

    #[test]
    fn a_typed_answer_goes_out_as_its_last_reply() {
        let mut sql = Recorded::default();
        let mut object = woken(&mut sql);
        let check = Request::Check { grant: "g1".into(), want: Want::Tools };
        let asker = ask(&mut object, check, &mut sql, 1_000_001, &mut Counter(2));
        let answer = Reply::Tools { stated: None::<ToolList> };
        assert_eq!(outputs(&mut object, &mut sql), [Output::Reply(asker, answer)]);
        // Its last reply went: its end tells the room nothing.
        assert!(!gone(&mut object, asker, 1_000_002, &mut Counter(3)));
    }

    #[test]
    fn a_request_that_stops_waiting_early_is_let_go_of_once() {
        let mut sql = Recorded::default();
        let mut object = woken(&mut sql);
        let asker = ask(
            &mut object,
            Request::Listen { grant: "g1".into() },
            &mut sql,
            1_000_001,
            &mut Counter(2),
        );
        let first = outputs(&mut object, &mut sql);
        assert!(
            matches!(&first[..], [Output::Reply(a, Reply::Listen(ListenEvent::Tick))] if *a == asker),
            "{first:?}"
        );
        assert!(gone(&mut object, asker, 1_000_002, &mut Counter(3)));
        assert!(!gone(&mut object, asker, 1_000_003, &mut Counter(4)));
    }

    #[test]
    fn a_request_state_is_answered_from_storage() {
        let mut sql = Recorded::default();
        let mut object = woken(&mut sql);
        let inserted = "INSERT INTO used_states (key, expires) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key";
        sql.rows.push((inserted, vec![vec![Some("k".into())]]));
        let used = || Request::UseState { key: "k".into(), expires_ms: 2_000_000 };
        let first = ask(&mut object, used(), &mut sql, 1_000_001, &mut Counter(2));
        assert_eq!(outputs(&mut object, &mut sql), [Output::Reply(first, Reply::Done)]);
        sql.rows.retain(|(q, _)| *q != inserted);
        let again = ask(&mut object, used(), &mut sql, 1_000_002, &mut Counter(3));
        assert_eq!(outputs(&mut object, &mut sql), [Output::Reply(again, Reply::StateUsed)]);
    }

    #[test]
    fn a_write_is_done_before_the_reply_after_it_goes_out() {
        let mut sql = Recorded::default();
        let mut object = woken(&mut sql);
        let asker = ask(
            &mut object,
            Request::Revoke(crate::pairing::wire::RevokeRequest {
                grant: "g1".into(),
                secret: None,
            }),
            &mut sql,
            1_000_001,
            &mut Counter(2),
        );
        let before = sql.run.len();
        let output = object.poll_output(&mut sql);
        assert_eq!(output, Some(Output::Reply(asker, Reply::Done)));
        let written: Vec<&str> = sql.run[before..].iter().map(|(q, _)| q.as_str()).collect();
        assert!(written.contains(&"DELETE FROM grants WHERE id = ?"), "{written:?}");
    }

    /// A grant whose authorization code was replayed: the replay's record, kept in storage
    /// (perhaps by an earlier instance of the object), is read for the grant's id and handed
    /// to the room, which refuses to make it; a grant with no record is made.
    #[test]
    fn a_grant_whose_id_has_a_stored_replay_is_not_made() {
        use crate::pairing::wire::{GrantReply, GrantRequest};
        let mut sql = Recorded::default();
        let mut object = woken(&mut sql);
        let replayed = "SELECT CAST(until AS TEXT) FROM replayed WHERE id = ?";
        sql.rows.push((replayed, vec![vec![Some("1060000".into())]]));
        let request = |id: &str| {
            Request::Grant(GrantRequest {
                id: id.into(),
                client_id: "cid".into(),
                requester: crate::oauth::connect::Requester {
                    client_name: "Claude".into(),
                    host: "claude.ai".into(),
                    place: None,
                    verified: None,
                },
            })
        };
        let asker = ask(&mut object, request("g2"), &mut sql, 1_000_001, &mut Counter(2));
        let asked = sql.run.iter().find(|(q, _)| q == replayed).map(|(_, b)| b.clone());
        assert_eq!(asked, Some(vec![crate::sql::Bind::Text("g2".into())]), "read for its id");
        let out = outputs(&mut object, &mut sql);
        assert_eq!(out, [Output::Reply(asker, Reply::Grant(GrantReply::Replayed))]);
        assert!(!sql.queries().iter().any(|q| q.starts_with("INSERT INTO grants")));
        // Once the record's time has passed, the grant is made.
        let asker = ask(&mut object, request("g3"), &mut sql, 1_060_000, &mut Counter(3));
        let out = outputs(&mut object, &mut sql);
        let made = match &out[..] {
            [Output::Reply(a, Reply::Grant(GrantReply::Made { grant, .. }))] if *a == asker => {
                grant
            }
            _ => panic!("{out:?}"),
        };
        assert_eq!(made, "g3");
        assert!(sql.queries().iter().any(|q| q.starts_with("INSERT INTO grants")));
    }

    #[test]
    fn a_tabs_attachment_reads_back_as_the_tab() {
        let tab = crate::pairing::tabs::tests::proven(7, 1_000);
        assert_eq!(read_attachment(&attachment(&tab)), Some(tab));
        assert_eq!(read_attachment("not json"), None);
        assert_eq!(read_attachment(""), None);
    }

    #[test]
    fn a_woken_object_holds_what_storage_and_the_sockets_kept() {
        let mut sql = Recorded::default();
        sql.rows.push((
            "SELECT tab, tools, dataset FROM tab_state ORDER BY tab",
            vec![vec![Some("9".into()), None, Some("gone".into())]],
        ));
        let mut object = woken(&mut sql);
        assert!(object.woke());
        // A tab's statement without its socket is deleted; the grant read back is live.
        assert!(sql.run.iter().any(|(q, b)| q == "DELETE FROM tab_state WHERE tab = ?"
            && b == &[crate::sql::Bind::Text("9".into())]));
        let check = Request::Check { grant: "g1".into(), want: Want::Nothing };
        let asker = ask(&mut object, check, &mut sql, 1_000_001, &mut Counter(2));
        assert_eq!(outputs(&mut object, &mut sql), [Output::Reply(asker, Reply::Done)]);
        // A second wake reads nothing more.
        let before = sql.run.len();
        wake(&mut object, &mut sql, 1_000_002, &mut Counter(3));
        assert_eq!(sql.run.len(), before);
    }

    #[test]
    fn reply_lines_read_whole_whatever_the_chunks_and_skip_what_does_not_read() {
        let mut lines = ReplyLines::default();
        let (done, used) = (Reply::Done.line(), Reply::StateUsed.line());
        let (head, tail) = used.split_at(3);
        lines.push(b"not a reply\n");
        lines.push(&done);
        lines.push(head);
        assert_eq!(lines.next_reply(), Some(Reply::Done));
        assert_eq!(lines.next_reply(), None);
        lines.push(tail);
        assert_eq!(lines.next_reply(), Some(Reply::StateUsed));
    }
}
