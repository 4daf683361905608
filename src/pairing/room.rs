//! The pairing as a state machine: [`Room`] takes one [`Input`] at a time with the time it
//! happened (a tab's socket opening, a tab's message, a proof checked, a code's reply, a
//! socket closing, a request of the Worker, a wait running out, a waiter gone, the alarm, the
//! rows read back after a wake) and returns the [`Effect`]s the Durable Object carries out (send
//! to a tab, close it, keep its state in its socket, reply to a waiting request, store or
//! delete a row, set the alarm, check a proof, ask a code's object). The object keeps only
//! sockets, SQL, timers and the translation of each to inputs and effects; every decision is
//! here, tested natively with a made-up clock (see the tests at the end).
//!
//! What the hot path needs is held in memory once the rows are read back: the tabs and the one
//! calls go to, the focused tab's tool list, and the grants (so a call's check of its grant and
//! of the tool it names reads no storage).

use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::content::{self, quoted};
use tabrelay_bundle::protocol::{
    askable, call_input, close, Outcome as TabOutcome, RelayMessage, ToolList, MAX_CARD_CHARS,
    MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};

use super::answers::{Questions, Taken};
use super::calls::{Calls, Finished, LeftCalls};
use super::codes::{self, WrongCodes};
use super::grants::{self, Grant, Refreshed};
use super::resume::{Found, Resumable};
use super::tabs::{next_check, route, sockets_to_close, Proof, Tab, TabAction, TabsStatus};
use super::tasks::{self, Carried, Dispatch, Task};
use super::turns::Turns;
use super::wire::{
    is_request_of, CallEvent, CallReply, CallRequest, GrantReply, GrantRequest, ListenEvent,
    RefreshReply, Reply, Request, TaskOp, TaskReply, Want,
};
use crate::crypto::{random_token, Entropy};
use crate::limits::{
    AFTERWARDS_DATA_CHARS, MAX_CALLS_PER_CONNECTION, MAX_LISTENERS, MAX_LISTENERS_PER_CONNECTION,
    MAX_PENDING_CALLS, MAX_TASKS_PER_CONNECTION, MAX_TASK_RESULT_BYTES, REPLAYED_KEPT_MS,
    TAB_CALL_WAIT_MS, TASK_AFTER_MS, TURN_STORED_EVERY_MS, USED_GRANULARITY_MS,
};
use crate::oauth::connect::{refusal, CodeReply, Command, ConnectCode, Named};
use crate::oauth::keys::Keys;
use crate::{sentences, tools};

/// A request of the Worker waiting for its reply (the object's own number for its fetch).
pub type Asker = u64;

/// What storage holds, read back when the object starts (after a wake, say).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    /// The tabs, from their sockets' attachments.
    pub tabs: Vec<Tab>,
    /// What each tab stated: its number, its tool list (as JSON text) and its dataset's name.
    pub stated: Vec<(u64, Option<String>, Option<String>)>,
    /// The grants.
    pub grants: Vec<Grant>,
    /// The turns.
    pub turns: Turns,
    /// The recent wrong codes.
    pub wrong_codes: WrongCodes,
    /// The calls left open in their tabs and what came of others.
    pub left: LeftCalls,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Until when the last record of a replayed code's grant is kept (0: none).
    pub replayed_until: u64,
}

/// One thing that happened to the pairing.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The object started: what storage holds.
    Woke(Stored),
    /// A tab's socket opened, numbered by [`Room::next_tab_number`].
    Opened {
        /// Its number.
        number: u64,
        /// The pairing id it named.
        pairing: String,
        /// The relay's origin as it addressed it.
        origin: String,
        /// Who opened it ([`crate::senders::sender_key`]).
        sender: String,
    },
    /// A tab sent a message: its text (None: it was not text).
    Message {
        /// The tab.
        tab: u64,
        /// The text.
        text: Option<String>,
    },
    /// A tab's proof was checked ([`Effect::Verify`]).
    Proved {
        /// The tab.
        tab: u64,
        /// Whether the signature holds.
        valid: bool,
    },
    /// A code's object replied to a tab's command ([`Effect::AskCode`]); None: it could not be
    /// reached.
    CodeReplied {
        /// The tab.
        tab: u64,
        /// The code or link reference the tab sent, as the tab's answer echoes it.
        said: String,
        /// The command.
        command: Command,
        /// The reply.
        reply: Option<CodeReply>,
    },
    /// A tab's socket closed or failed.
    Closed {
        /// The tab.
        tab: u64,
    },
    /// A request of the Worker. A grant's creation comes with the replays recorded for its id
    /// (`replayed`, read back from storage).
    Request {
        /// Who waits for the reply.
        asker: Asker,
        /// What it asks.
        request: Request,
        /// For [`Request::Grant`]: the replays recorded for the grant's id, with until when each
        /// is kept.
        replayed: Vec<u64>,
    },
    /// The wait for a call ran out ([`Effect::Deadline`]).
    Deadline {
        /// The call.
        call: u64,
    },
    /// A request stopped waiting (its stream was closed: the agent went away).
    Gone {
        /// Who.
        asker: Asker,
    },
    /// The alarm rang.
    Alarm,
}

/// What the object carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send a tab this message.
    Send(u64, RelayMessage),
    /// Close a tab's socket with this code and reason (it is gone from the room already).
    Close(u64, u16, &'static str),
    /// Keep this state in the tab's socket (it survives hibernation).
    Attach(Tab),
    /// Check this proof of a tab, then give [`Input::Proved`].
    Verify(u64, Proof),
    /// Ask a code's object, then give [`Input::CodeReplied`] (with the code or link reference
    /// the tab sent, last).
    AskCode(u64, ConnectCode, Command, String),
    /// Reply to a waiting request; [`Reply::ends`] says whether it is its last.
    Reply(Asker, Reply),
    /// Give [`Input::Deadline`] for this request's call at this time.
    Deadline(Asker, u64, u64),
    /// Store what a tab stated: its tool list (JSON text) or its dataset's name.
    StoreStated(u64, Stated),
    /// Delete what a gone tab stated.
    ForgetStated(u64),
    /// Store the turns.
    StoreTurns(Turns),
    /// Store the calls left open and what came of others.
    StoreLeft(LeftCalls),
    /// Store a task (made or changed); its row is written before any reply that names it.
    StoreTask(Task),
    /// Delete a task (its time to live passed).
    DeleteTask(String),
    /// Store the wrong codes.
    StoreWrongCodes(WrongCodes),
    /// Store a grant.
    StoreGrant(Grant),
    /// Delete a grant.
    DeleteGrant(String),
    /// Record that the code making this grant was replayed, until this time.
    RecordReplayed(String, u64),
    /// Ring the alarm at this time (unless it rings sooner).
    SetAlarm(u64),
    /// Delete everything the pairing stored: it holds no grant, no task and no tab, so nothing
    /// it stored is worth keeping (see [`Room::keeps_nothing`]).
    ForgetAll,
}

impl Effect {
    /// Whether carrying it out writes to the pairing's storage.
    fn writes(&self) -> bool {
        match self {
            Effect::StoreStated(..)
            | Effect::ForgetStated(_)
            | Effect::StoreTurns(_)
            | Effect::StoreLeft(_)
            | Effect::StoreTask(_)
            | Effect::DeleteTask(_)
            | Effect::StoreWrongCodes(_)
            | Effect::StoreGrant(_)
            | Effect::DeleteGrant(_)
            | Effect::RecordReplayed(..) => true,
            Effect::Send(..)
            | Effect::Close(..)
            | Effect::Attach(_)
            | Effect::Verify(..)
            | Effect::AskCode(..)
            | Effect::Reply(..)
            | Effect::Deadline(..)
            | Effect::SetAlarm(_)
            | Effect::ForgetAll => false,
        }
    }
}

/// What a tab stated, to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stated {
    /// Its tool list, as JSON text.
    Tools(String),
    /// Its dataset's name.
    Dataset(String),
}

/// A few values by number (tabs, what they stated, waiting calls: tens at most), in a vector:
/// smaller in the Worker than a map of each kind.
#[derive(Debug, Clone)]
struct Slots<V>(Vec<(u64, V)>);

impl<V> Default for Slots<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> Slots<V> {
    fn get(&self, key: &u64) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn contains_key(&self, key: &u64) -> bool {
        self.get(key).is_some()
    }

    fn insert(&mut self, key: u64, value: V) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key, value)),
        }
    }

    fn remove(&mut self, key: &u64) -> Option<V> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.swap_remove(i).1)
    }

    fn values(&self) -> impl Iterator<Item = &V> + Clone {
        self.0.iter().map(|(_, v)| v)
    }

    fn iter(&self) -> impl Iterator<Item = (&u64, &V)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    fn entry_or_default(&mut self, key: u64) -> &mut V
    where
        V: Default,
    {
        let i = match self.0.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                self.0.push((key, V::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }
}

/// What a tab stated, held in memory.
#[derive(Debug, Clone, Default)]
struct Statement {
    tools: Option<ToolList>,
    dataset: Option<String>,
}

/// A call's waiting request.
#[derive(Debug, Clone, PartialEq)]
struct Waiter {
    asker: Asker,
    stream: bool,
    wait_ms: u64,
    /// The call's request key.
    request: String,
    /// Whether its client comes back when its stream drops (the call then keeps running).
    resumable: bool,
    /// When its wait runs out.
    until_ms: u64,
    /// Set when the call becomes a task should it wait: what will carry it.
    task: Option<Box<Carried>>,
}

/// One browser's pairing.
pub struct Room {
    keys: Option<Keys>,
    catalogue: &'static Catalogue,
    tabs: Slots<Tab>,
    stated: Slots<Statement>,
    calls: Calls,
    waiters: Slots<Waiter>,
    /// The `/listen` streams, and whose (the grant).
    listeners: Vec<(Asker, String)>,
    turns: Turns,
    /// The turn last stored, and when.
    turns_stored: (u64, u64),
    wrong_codes: WrongCodes,
    grants: Vec<Grant>,
    tasks: Vec<Task>,
    last_tab: u64,
    /// Questions a session-era client was asked, waiting for its answers.
    questions: Questions,
    /// Calls whose stream dropped, kept for their client's return.
    resume: Resumable,
    /// Whether the pairing may hold rows (it wrote, or woke with some) since it last forgot all.
    wrote: bool,
    /// Until when a replayed code's grant is recorded (refused should it be made): kept so long.
    replayed_until: u64,
}

impl Room {
    /// A room for a pairing whose codes are checked with `keys` (None: the relay's keys could
    /// not be read, so no code is taken) and whose bundled tools are `catalogue`.
    #[must_use]
    pub fn new(keys: Option<Keys>, catalogue: &'static Catalogue) -> Self {
        Self {
            keys,
            catalogue,
            tabs: Slots::default(),
            stated: Slots::default(),
            calls: Calls::default(),
            waiters: Slots::default(),
            listeners: Vec::new(),
            turns: Turns::default(),
            turns_stored: (0, 0),
            wrong_codes: WrongCodes::default(),
            grants: Vec::new(),
            tasks: Vec::new(),
            last_tab: 0,
            questions: Questions::default(),
            resume: Resumable::default(),
            wrote: false,
            replayed_until: 0,
        }
    }

    /// The number of a tab opening at `now_ms` (numbers grow, even within one millisecond).
    pub fn next_tab_number(&mut self, now_ms: u64) -> u64 {
        self.last_tab = (self.last_tab + 1).max(now_ms.saturating_mul(1024));
        self.last_tab
    }

    /// Takes one input at `now_ms`; what to carry out, in order.
    pub fn handle(&mut self, input: Input, now_ms: u64, entropy: &mut dyn Entropy) -> Vec<Effect> {
        let mut out = Vec::new();
        // Only with listeners is a change of the list agents see worth telling.
        let before = (!self.listeners.is_empty()).then(|| self.focused_list_seen());
        match input {
            Input::Woke(stored) => self.woke(stored, now_ms, &mut out),
            Input::Opened { number, pairing, origin, sender } => {
                let admitted = Tab::admit(&pairing, &origin, &sender, number, now_ms, entropy);
                self.last_tab = self.last_tab.max(number);
                out.push(Effect::Attach(admitted.tab.clone()));
                out.push(Effect::Send(number, admitted.first));
                self.tabs.insert(number, admitted.tab);
                self.watch_hellos(now_ms, &mut out);
            }
            Input::Message { tab, text } => {
                self.message(tab, text.as_deref(), now_ms, entropy, &mut out);
            }
            Input::Proved { tab, valid } => {
                if let Some(t) = self.tabs.get(&tab) {
                    let proven = self.tabs.values().filter(|o| o.proven && o.number != tab).count();
                    let action = t.proved(valid, now_ms, proven);
                    self.act(tab, action, now_ms, entropy, &mut out);
                }
            }
            Input::CodeReplied { tab, said, command, reply } => {
                let (message, wrong) = match reply {
                    Some(reply) => codes::told(&said, &command, reply, &self.grants),
                    None => (
                        RelayMessage::Refused {
                            code: said,
                            sentence: sentences::PAIRING_UNAVAILABLE.into(),
                        },
                        false,
                    ),
                };
                if wrong {
                    self.wrong_codes.record(now_ms);
                    out.push(Effect::StoreWrongCodes(self.wrong_codes.clone()));
                }
                if self.tabs.contains_key(&tab) {
                    out.push(Effect::Send(tab, message));
                }
            }
            Input::Closed { tab } => self.tab_gone(tab, now_ms, &mut out),
            Input::Request { asker, request, replayed } => {
                self.request(asker, request, &replayed, now_ms, entropy, &mut out);
            }
            Input::Deadline { call } => {
                let becomes_task = self.waiters.get(&call).is_some_and(|w| w.task.is_some());
                if becomes_task {
                    self.make_task(call, now_ms, entropy, &mut out);
                } else if let Some(waiter) = self.waiters.remove(&call) {
                    let gave_up = self.calls.give_up(call, waiter.wait_ms);
                    match gave_up.cancel_in {
                        Some(tab) => out.push(Effect::Send(tab, RelayMessage::Cancel { id: call })),
                        // Left open in the tab: kept, for the connection's status.
                        None => out.push(Effect::StoreLeft(self.calls.left_calls().clone())),
                    }
                    let reply = CallReply::not_carried(gave_up.sentence);
                    out.push(Effect::Reply(waiter.asker, Reply::Call(CallEvent::Done(reply))));
                }
            }
            Input::Gone { asker } => {
                self.listeners.retain(|(l, _)| *l != asker);
                self.questions.gone(asker);
                let calls: Vec<u64> = self
                    .waiters
                    .iter()
                    .filter(|(_, w)| w.asker == asker)
                    .map(|(c, _)| *c)
                    .collect();
                for call in calls {
                    let Some(waiter) = self.waiters.remove(&call) else { continue };
                    if waiter.resumable {
                        // Its client comes back for it: it keeps running until its wait ends.
                        out.push(Effect::SetAlarm(waiter.until_ms));
                        self.resume.detach(call, waiter.request, waiter.until_ms, waiter.wait_ms);
                        continue;
                    }
                    if let Some(tab) = self.calls.abandon(call) {
                        out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
                    }
                }
            }
            Input::Alarm => {
                for (tab, (code, reason)) in sockets_to_close(self.tabs.values(), now_ms) {
                    self.close(tab, code, reason, now_ms, &mut out);
                }
                if let Some(at) = next_check(self.tabs.values(), now_ms) {
                    out.push(Effect::SetAlarm(at));
                }
                self.resumable_overdue(now_ms, &mut out);
            }
        }
        if before.is_some_and(|b| b != self.focused_list_seen()) {
            for (asker, _) in &self.listeners {
                out.push(Effect::Reply(*asker, Reply::Listen(ListenEvent::ToolsChanged)));
            }
        }
        self.wrote |= out.iter().any(Effect::writes);
        if self.wrote && self.keeps_nothing() {
            if now_ms >= self.replayed_until {
                out.push(Effect::ForgetAll);
                self.wrote = false;
            } else {
                out.push(Effect::SetAlarm(self.replayed_until));
            }
        }
        out
    }

    /// Whether the pairing holds nothing worth keeping: no grant, no task, no socket (not even
    /// one still proving itself). Then what it stored (what its tabs stated, turns, wrong codes,
    /// used states) goes once any record of a replayed code has run its time: a pairing no agent
    /// was let into (a self-made key's, say) keeps nothing past its last socket.
    fn keeps_nothing(&self) -> bool {
        self.tabs.0.is_empty() && self.grants.is_empty() && self.tasks.is_empty()
    }

    fn woke(&mut self, stored: Stored, now_ms: u64, out: &mut Vec<Effect>) {
        self.wrote = stored != Stored::default();
        self.replayed_until = stored.replayed_until;
        for tab in stored.tabs {
            self.last_tab = self.last_tab.max(tab.number);
            self.tabs.insert(tab.number, tab);
        }
        for (number, tools, dataset) in stored.stated {
            if !self.tabs.contains_key(&number) {
                // A tab that went away while its close was not seen.
                out.push(Effect::ForgetStated(number));
                continue;
            }
            let tools = tools
                .and_then(|t| serde_json::from_str(&t).ok())
                .and_then(|v| ToolList::read(&v).ok());
            self.stated.insert(number, Statement { tools, dataset });
        }
        self.grants = stored.grants;
        self.turns = stored.turns;
        // When it was stored is not known: the next call of the turn stores it again.
        self.turns_stored = (self.turns.current(), 0);
        self.wrong_codes = stored.wrong_codes;
        self.calls.restore(stored.left);
        self.tasks = stored.tasks;
        // A task whose call was in a tab that is gone (the relay restarted, its sockets with
        // it) fails; the others go on as the tabs answer.
        let lost: Vec<usize> = (0..self.tasks.len())
            .filter(|i| {
                let c = &self.tasks[*i].carried;
                c.call.is_some() && !self.tabs.contains_key(&c.tab)
            })
            .collect();
        for i in lost {
            let gone = tasks::Event::Lost(INTERNAL_ERROR, sentences::TAB_GONE.into());
            self.task_event(i, gone, now_ms, out);
        }
    }

    /// The tab calls go to.
    fn focused(&self) -> Option<&Tab> {
        route(self.tabs.values())
    }

    /// The tool list the tab calls go to stated.
    fn focused_list(&self) -> Option<&ToolList> {
        self.focused().and_then(|t| self.stated.get(&t.number)).and_then(|s| s.tools.as_ref())
    }

    /// The list agents see, to tell a change (None: the bundled one).
    fn focused_list_seen(&self) -> Option<ToolList> {
        self.focused_list().cloned()
    }

    fn watch_hellos(&self, now_ms: u64, out: &mut Vec<Effect>) {
        if let Some(at) = next_check(self.tabs.values(), now_ms) {
            out.push(Effect::SetAlarm(at));
        }
    }

    fn message(
        &mut self,
        tab: u64,
        text: Option<&str>,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let Some(text) = text.filter(|t| t.len() <= MAX_MESSAGE_BYTES) else {
            let reason = "Messages must be JSON text within the size limit.";
            self.close(tab, close::PROTOCOL_ERROR, reason, now_ms, out);
            return;
        };
        let Some(t) = self.tabs.get(&tab) else { return };
        let action = t.on_message(text, now_ms);
        self.act(tab, action, now_ms, entropy, out);
    }

    /// Closes a tab's socket: it is gone at once.
    fn close(
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
    fn tab_gone(&mut self, tab: u64, now_ms: u64, out: &mut Vec<Effect>) {
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

    /// Stores the calls left open when they changed from `before`.
    fn store_left_if_changed(&self, before: &LeftCalls, out: &mut Vec<Effect>) {
        if self.calls.left_calls() != before {
            out.push(Effect::StoreLeft(self.calls.left_calls().clone()));
        }
    }

    /// The end of a call: its waiter gets the reply (or, its stream gone, it is kept for
    /// the client's return).
    fn done(&mut self, call: u64, reply: CallReply, out: &mut Vec<Effect>) {
        match self.waiters.remove(&call) {
            Some(waiter) => {
                if waiter.resumable {
                    self.resume.keep(waiter.request, reply.clone(), waiter.until_ms);
                }
                out.push(Effect::Reply(waiter.asker, Reply::Call(CallEvent::Done(reply))))
            }
            None => {
                self.resume.ended(call, reply);
            }
        }
    }

    /// Calls whose stream dropped and whose wait ran out give up as a waited call does; what
    /// they said is kept for the client's return.
    fn resumable_overdue(&mut self, now_ms: u64, out: &mut Vec<Effect>) {
        for (call, wait_ms) in self.resume.overdue(now_ms) {
            let gave_up = self.calls.give_up(call, wait_ms);
            match gave_up.cancel_in {
                Some(tab) => out.push(Effect::Send(tab, RelayMessage::Cancel { id: call })),
                None => out.push(Effect::StoreLeft(self.calls.left_calls().clone())),
            }
            self.resume.ended(call, CallReply::not_carried(gave_up.sentence));
        }
        if let Some(at) = self.resume.next_alarm() {
            out.push(Effect::SetAlarm(at));
        }
    }

    /// A client comes back for a call whose stream dropped: its end, or (a tick at once) its
    /// events again.
    fn take_up(
        &mut self,
        asker: Asker,
        request: &str,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) -> Reply {
        match self.resume.resume(request, now_ms) {
            Found::Ended(reply) => Reply::Call(CallEvent::Done(reply)),
            Found::Running { call, until_ms, wait_ms } => {
                let request = request.to_owned();
                let waiter = Waiter {
                    asker,
                    stream: true,
                    wait_ms,
                    task: None,
                    request,
                    resumable: true,
                    until_ms,
                };
                self.waiters.insert(call, waiter);
                out.push(Effect::Deadline(asker, call, until_ms));
                // A first line at once: the client's new stream opens now, not at the end.
                Reply::Call(CallEvent::Tick)
            }
            Found::Nothing => {
                // Its stream dropped before the pairing could tell (the client came back first):
                // the call's waiter is the client's new stream.
                let attached = self
                    .waiters
                    .iter()
                    .find(|(_, w)| w.resumable && w.request == request)
                    .map(|(call, _)| *call);
                let waiter = attached.and_then(|call| Some((call, self.waiters.remove(&call)?)));
                let Some((call, waiter)) = waiter else { return Reply::NotAsked };
                out.push(Effect::Deadline(asker, call, waiter.until_ms));
                self.waiters.insert(call, Waiter { asker, ..waiter });
                Reply::Call(CallEvent::Tick)
            }
        }
    }

    /// An event of a call before its end, for a waiter that reads a stream.
    fn event(&self, call: u64, event: CallEvent, out: &mut Vec<Effect>) {
        if let Some(waiter) = self.waiters.get(&call).filter(|w| w.stream) {
            out.push(Effect::Reply(waiter.asker, Reply::Call(event)));
        }
    }

    fn act(
        &mut self,
        tab: u64,
        action: TabAction,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        match action {
            TabAction::Welcome(t) => {
                let pairing = t.pairing.clone();
                out.push(Effect::Attach(t.clone()));
                self.tabs.insert(tab, t);
                out.push(Effect::Send(
                    tab,
                    RelayMessage::Welcome { pairing, protocol: PROTOCOL_VERSION },
                ));
            }
            TabAction::Verify(t, proof) => {
                // The challenge is used before the check: a second hello meanwhile proves nothing.
                out.push(Effect::Attach(t.clone()));
                self.tabs.insert(tab, t);
                out.push(Effect::Verify(tab, proof));
            }
            TabAction::Close(code, reason) => self.close(tab, code, reason, now_ms, out),
            TabAction::Describe(named) => {
                self.code_command(tab, &named, Command::Describe, now_ms, out)
            }
            TabAction::Approve(named) => {
                let pairing = self.tabs.get(&tab).map(|t| t.pairing.clone()).unwrap_or_default();
                // The relay, not the tab's script, knows a link's reference from a typed code.
                let linked = matches!(named, Named::Linked(_));
                self.code_command(tab, &named, Command::Approve { pairing, linked }, now_ms, out);
            }
            TabAction::Deny(named) => self.code_command(tab, &named, Command::Deny, now_ms, out),
            TabAction::RefuseCode(code, sentence) => {
                out.push(Effect::Send(
                    tab,
                    RelayMessage::Refused { code, sentence: sentence.into() },
                ));
            }
            TabAction::Update(t) => {
                out.push(Effect::Attach(t.clone()));
                self.tabs.insert(tab, t);
            }
            TabAction::Asking(call, sentence) if self.task_carrying(tab, call).is_some() => {
                if let Some(i) = self.task_carrying(tab, call) {
                    let card: String = sentence.chars().take(MAX_CARD_CHARS).collect();
                    self.tasks[i].status_message = Some(sentences::person_asked(&quoted(&card)));
                    out.push(Effect::StoreTask(self.tasks[i].clone()));
                }
            }
            TabAction::Answered(call) if self.task_carrying(tab, call).is_some() => {
                if let Some(i) = self.task_carrying(tab, call) {
                    self.tasks[i].status_message = Some(sentences::PERSON_ANSWERED.into());
                    out.push(Effect::StoreTask(self.tasks[i].clone()));
                }
            }
            TabAction::Result(call, outcome) if self.task_carrying(tab, call).is_some() => {
                if let Some(i) = self.task_carrying(tab, call) {
                    self.task_result(i, outcome, now_ms, out);
                }
            }
            TabAction::Asking(call, sentence) => {
                let before = self.calls.left_calls().clone();
                if let Some(card) = self.calls.asking(call, tab, &sentence) {
                    if self.waiters.get(&call).is_some_and(|w| w.task.is_some()) {
                        // The person is asked: a client that polls tasks polls this one.
                        self.make_task(call, now_ms, entropy, out);
                    } else {
                        self.event(call, CallEvent::Asking(card), out);
                    }
                }
                self.store_left_if_changed(&before, out);
            }
            TabAction::Answered(call) => {
                let before = self.calls.left_calls().clone();
                if self.calls.answered(call, tab) {
                    self.event(call, CallEvent::Answered, out);
                }
                self.store_left_if_changed(&before, out);
            }
            TabAction::PersonStep => {
                self.turns.person_stepped();
                self.turns_stored = (self.turns.current(), now_ms);
                out.push(Effect::StoreTurns(self.turns.clone()));
            }
            TabAction::ListConnections => self.send_connections(tab, now_ms, out),
            TabAction::Forget(id) => {
                self.delete_grant(&id, out);
                self.send_connections(tab, now_ms, out);
            }
            TabAction::Stopped(id, stopped) => {
                let grant = self.grants.iter().find(|g| g.id == id && g.stopped != stopped);
                if let Some(mut grant) = grant.cloned() {
                    grant.stopped = stopped;
                    self.store_grant(grant, out);
                    for t in self.tabs.values().filter(|t| t.proven) {
                        let connection = id.clone();
                        out.push(Effect::Send(
                            t.number,
                            RelayMessage::Stopped { connection, stopped },
                        ));
                    }
                }
            }
            TabAction::Result(call, outcome) => match self.calls.finish(call, tab) {
                Finished::Waited => self.done(call, CallReply::TabResult { outcome }, out),
                Finished::Left { grant, tool } => {
                    self.calls.afterwards(grant, tool, afterwards_said(&outcome));
                    out.push(Effect::StoreLeft(self.calls.left_calls().clone()));
                }
                Finished::Not => {}
            },
            TabAction::Tools(list) => {
                let json = serde_json::to_string(&list).unwrap_or_default();
                self.stated.entry_or_default(tab).tools = Some(list);
                out.push(Effect::StoreStated(tab, Stated::Tools(json)));
            }
            TabAction::RefuseTools(sentence) => {
                out.push(Effect::Send(tab, RelayMessage::ToolsRefused { sentence }));
            }
            TabAction::View(dataset) => {
                self.stated.entry_or_default(tab).dataset = Some(dataset.clone());
                out.push(Effect::StoreStated(tab, Stated::Dataset(dataset)));
            }
            TabAction::Ignore => {}
        }
    }

    /// A tab's describe, approve or deny of a code: within the pairing's allowance of wrong
    /// codes, a code this relay made, and (to approve) room for another connection, it goes to
    /// the code's object.
    fn code_command(
        &mut self,
        tab: u64,
        named: &Named,
        command: Command,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let said = named.as_str();
        let refused = |sentence: &str| {
            Effect::Send(
                tab,
                RelayMessage::Refused { code: said.into(), sentence: sentence.into() },
            )
        };
        if !self.wrong_codes.allows(now_ms) {
            out.push(refused(sentences::TOO_MANY_WRONG_CODES));
            return;
        }
        // A code (or link) this relay did not make is wrong without asking any code's object.
        let Some(code) = self.keys.as_ref().and_then(|k| named.code(k)) else {
            self.wrong_codes.record(now_ms);
            out.push(Effect::StoreWrongCodes(self.wrong_codes.clone()));
            out.push(refused(refusal::UNKNOWN));
            return;
        };
        if matches!(command, Command::Approve { .. }) && !self.has_room(now_ms, out) {
            // Approving never pushes out a connection: the person forgets one first.
            out.push(refused(sentences::TOO_MANY_CONNECTIONS));
            return;
        }
        out.push(Effect::AskCode(tab, code, command, said.to_owned()));
    }

    /// The grants, those unused for too long dropped first.
    fn live_grants(&mut self, now_ms: u64, out: &mut Vec<Effect>) -> &[Grant] {
        for id in grants::expired(&self.grants, now_ms) {
            self.delete_grant(&id, out);
        }
        &self.grants
    }

    fn has_room(&mut self, now_ms: u64, out: &mut Vec<Effect>) -> bool {
        grants::has_room(self.live_grants(now_ms, out), now_ms)
    }

    fn delete_grant(&mut self, id: &str, out: &mut Vec<Effect>) {
        let before = self.grants.len();
        self.grants.retain(|g| g.id != id);
        if self.grants.len() != before {
            out.push(Effect::DeleteGrant(id.to_owned()));
            self.end_connection(id, out);
        }
    }

    /// Connection `grant` is gone (forgotten in a tab, or revoked): what it set going stops
    /// too. Its calls are dropped in their tabs and their waiting requests told
    /// [`sentences::FORGOTTEN`], as are requests waiting for its questions' answers; its tasks,
    /// questions and kept ends go; every tab is told first, so its cards and calls go there.
    /// A result of its calls that still comes is nobody's (the calls are no longer known).
    fn end_connection(&mut self, grant: &str, out: &mut Vec<Effect>) {
        let forgotten =
            || Reply::Call(CallEvent::Done(CallReply::not_carried(sentences::FORGOTTEN)));
        // The tabs hear it first: a call's cancel that follows then reads as its forgetting.
        for tab in self.tabs.values().filter(|t| t.proven) {
            let connection = grant.to_owned();
            out.push(Effect::Send(tab.number, RelayMessage::Forgotten { connection }));
        }
        let before = self.calls.left_calls().clone();
        for (call, tab) in self.calls.forget_grant(grant) {
            out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
            if let Some(waiter) = self.waiters.remove(&call) {
                out.push(Effect::Reply(waiter.asker, forgotten()));
            }
        }
        self.store_left_if_changed(&before, out);
        self.resume.forget_grant(grant);
        // Its listen streams end (any reply but a listen event ends one).
        let (gone, kept): (Vec<_>, Vec<_>) =
            core::mem::take(&mut self.listeners).into_iter().partition(|(_, g)| g == grant);
        self.listeners = kept;
        for (asker, _) in gone {
            out.push(Effect::Reply(asker, forgotten()));
        }
        for asker in self.questions.forget_grant(grant) {
            out.push(Effect::Reply(asker, forgotten()));
        }
        let (gone, kept): (Vec<Task>, Vec<Task>) =
            core::mem::take(&mut self.tasks).into_iter().partition(|t| t.grant == grant);
        self.tasks = kept;
        for task in gone {
            if let Some(call) = task.carried.call {
                out.push(Effect::Send(task.carried.tab, RelayMessage::Cancel { id: call }));
            }
            out.push(Effect::DeleteTask(task.id));
        }
    }

    fn store_grant(&mut self, grant: Grant, out: &mut Vec<Effect>) {
        out.push(Effect::StoreGrant(grant.clone()));
        match self.grants.iter_mut().find(|g| g.id == grant.id) {
            Some(g) => *g = grant,
            None => self.grants.push(grant),
        }
    }

    fn send_connections(&mut self, tab: u64, now_ms: u64, out: &mut Vec<Effect>) {
        let list = self.live_grants(now_ms, out).iter().map(Grant::info).collect();
        out.push(Effect::Send(tab, RelayMessage::Connections { list }));
    }

    fn live(&self, grant: &str) -> bool {
        self.grants.iter().any(|g| g.id == grant)
    }

    fn request(
        &mut self,
        asker: Asker,
        request: Request,
        replayed: &[u64],
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        let reply = match request {
            Request::Call(call) => match self.call(asker, call, now_ms, entropy, out) {
                Some(reply) => reply,
                None => return, // it waits for the tab
            },
            Request::Check { grant, .. }
            | Request::Listen { grant }
            | Request::Task { grant, .. }
                if !self.live(&grant) =>
            {
                Reply::NoGrant
            }
            Request::Task { grant, task, op } => {
                Reply::Task(self.task_request(&grant, &task, op, now_ms, out))
            }
            Request::Check { want: Want::Nothing, .. } => Reply::Done,
            Request::Check { want: Want::Tools, .. } => {
                Reply::Tools(tools::list(self.focused_list(), self.catalogue))
            }
            Request::Check { want: Want::Status, grant } => {
                let dataset = self
                    .focused()
                    .and_then(|t| self.stated.get(&t.number))
                    .and_then(|s| s.dataset.clone());
                let status = TabsStatus::of(self.tabs.values(), self.focused_list(), dataset);
                Reply::Status(tools::status_result(&status, &self.calls.told_to(&grant)))
            }
            Request::Listen { grant }
                if self.listeners.iter().filter(|(_, g)| *g == grant).count()
                    >= MAX_LISTENERS_PER_CONNECTION
                    || self.listeners.len() >= MAX_LISTENERS =>
            {
                Reply::TooManyListeners
            }
            Request::Listen { grant } => {
                self.listeners.push((asker, grant));
                Reply::Listen(ListenEvent::Tick)
            }
            // Never given: the object answers it from its storage (a uniqueness its SQL keeps);
            // refused here should it come.
            Request::UseState { .. } => Reply::StateUsed,
            Request::Grant(request) => {
                Reply::Grant(self.new_grant(request, replayed, now_ms, entropy, out))
            }
            Request::Refresh(request) => {
                let refused = |d: &str| RefreshReply::Refused { description: d.to_owned() };
                let grant = self
                    .grants
                    .iter()
                    .find(|g| g.id == request.grant && g.client_id == request.client_id);
                Reply::Refresh(match grant.cloned() {
                    None => refused(sentences::REFRESH_REFUSED),
                    Some(grant) => match grant.refresh(&request.secret, now_ms, entropy) {
                        Refreshed::Rotated { grant, secret } => {
                            let (client_name, host) =
                                (grant.client_name.clone(), grant.host.clone());
                            self.store_grant(*grant, out);
                            RefreshReply::Rotated { secret, client_name, host }
                        }
                        Refreshed::Reused => {
                            self.delete_grant(&request.grant, out);
                            refused(sentences::REFRESH_REUSED)
                        }
                        Refreshed::Unknown => refused(sentences::REFRESH_REFUSED),
                    },
                })
            }
            Request::Revoke(request) => {
                let known = self.grants.iter().any(|g| {
                    g.id == request.grant
                        && match &request.secret {
                            Some(secret) => g.issued(secret),
                            None => true, // an access token naming it was verified by the Worker
                        }
                });
                if known {
                    self.delete_grant(&request.grant, out);
                }
                Reply::Done
            }
            Request::Replayed { grant } => {
                self.replayed_until = self.replayed_until.max(now_ms + REPLAYED_KEPT_MS);
                out.push(Effect::RecordReplayed(grant.clone(), now_ms + REPLAYED_KEPT_MS));
                self.delete_grant(&grant, out);
                Reply::Done
            }
            Request::Cancel { request } => {
                if let Some((call, tab)) = self.calls.cancel(&request) {
                    out.push(Effect::Send(tab, RelayMessage::Cancel { id: call }));
                    self.done(call, CallReply::not_carried(sentences::CANCELLED), out);
                }
                Reply::Done
            }
            Request::AwaitAnswers { grant, .. } | Request::Answer { grant, .. }
                if !self.live(&grant) =>
            {
                Reply::NoGrant
            }
            Request::AwaitAnswers { grant, ids } => match self.questions.ask(asker, &grant, ids) {
                Ok(()) => return, // it waits for the answers
                Err(_) => Reply::TooManyQuestions,
            },
            Request::Answer { grant, id, answer } => {
                match self.questions.answer(&grant, &id, answer) {
                    Taken::Kept => Reply::Done,
                    Taken::All(waiter, answers) => {
                        out.push(Effect::Reply(waiter, Reply::Answers(answers)));
                        Reply::Done
                    }
                    Taken::NotAsked => Reply::NotAsked,
                }
            }
            Request::Resume { grant, .. } if !self.live(&grant) => Reply::NoGrant,
            // A call is taken up by the connection that made it (its key starts with the grant).
            Request::Resume { grant, request } if !is_request_of(&request, &grant) => {
                Reply::NotAsked
            }
            Request::Resume { request, .. } => self.take_up(asker, &request, now_ms, out),
        };
        out.push(Effect::Reply(asker, reply));
    }

    /// A new grant for a redeemed code; it removes no other.
    fn new_grant(
        &mut self,
        request: GrantRequest,
        replayed: &[u64],
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) -> GrantReply {
        let replays: Vec<(String, u64)> =
            replayed.iter().map(|u| (request.id.clone(), *u)).collect();
        if !grants::may_make(&request.id, &replays, now_ms) {
            return GrantReply::Replayed;
        }
        if !self.has_room(now_ms, out) {
            return GrantReply::Full;
        }
        let (mut grant, secret) = Grant::new(
            request.id,
            request.client_id,
            request.client_name,
            request.host,
            now_ms,
            entropy,
        );
        grant.place = request.place;
        grant.verified = request.verified;
        let id = grant.id.clone();
        self.store_grant(grant, out);
        // Every tab lists the new connection at once, not at its first call.
        let tabs: Vec<u64> = self.tabs.values().filter(|t| t.proven).map(|t| t.number).collect();
        for tab in tabs {
            self.send_connections(tab, now_ms, out);
        }
        GrantReply::Made { grant: id, secret }
    }

    /// A tool call: to the tab calls go to, or answered at once (None: it waits).
    fn call(
        &mut self,
        asker: Asker,
        call: CallRequest,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) -> Option<Reply> {
        // A forgotten or revoked connection's access token stops at once.
        let grant = self.grants.iter_mut().find(|g| g.id == call.connection.id);
        let Some(grant) = grant else { return Some(Reply::NoGrant) };
        // Whether the client was verified is the grant's to say, not the call's.
        let mut call = call;
        call.connection.verified.clone_from(&grant.verified);
        if now_ms >= grant.used_ms + USED_GRANULARITY_MS {
            grant.used_ms = now_ms;
            out.push(Effect::StoreGrant(grant.clone()));
        }
        let done = |reply| Some(Reply::Call(CallEvent::Done(reply)));
        // The person stopped this agent in their tab: nothing of it runs until they let it go on.
        if grant.stopped {
            return done(CallReply::not_carried(sentences::AGENT_STOPPED));
        }
        if !tools::known(self.focused_list(), self.catalogue, &call.tool) {
            return done(CallReply::NoSuchTool { tool: call.tool });
        }
        let support = tools::task_support(self.focused_list(), &call.tool);
        let as_task = match tasks::dispatch(support, call.task.is_some()) {
            Dispatch::NeedsTasks => return done(CallReply::NeedsTasks),
            Dispatch::Direct => false,
            Dispatch::Task => true,
        };
        if as_task && self.tasks_of(&call.connection.id, now_ms, out) >= MAX_TASKS_PER_CONNECTION {
            return done(CallReply::not_carried(sentences::too_many_tasks(
                MAX_TASKS_PER_CONNECTION,
            )));
        }
        let Some(tab) = self.focused().map(|t| t.number) else {
            return done(CallReply::not_carried(sentences::NO_TAB));
        };
        let grant = &call.connection.id;
        if let Err(sentence) = self.room_for_call(grant) {
            return done(CallReply::not_carried(sentence));
        }
        let started = self.calls.start(tab, now_ms, call.request.clone(), grant, &call.tool);
        let id = match started {
            Ok(id) => id,
            Err(sentence) => return done(CallReply::not_carried(sentence)),
        };
        let turn = self.turns.of_call(&call.connection.id, now_ms);
        let (stored_turn, stored_ms) = self.turns_stored;
        if turn != stored_turn || now_ms >= stored_ms + TURN_STORED_EVERY_MS {
            self.turns_stored = (turn, now_ms);
            out.push(Effect::StoreTurns(self.turns.clone()));
        }
        let wait_ms = call.wait_ms.min(TAB_CALL_WAIT_MS);
        let task = as_task.then(|| {
            Box::new(Carried {
                tab,
                call: Some(id),
                tool: call.tool.clone(),
                args: call.args.clone(),
                agent: call.agent.clone(),
                connection: call.connection.clone(),
                declared: call.task.as_ref().map(|t| t.declared.clone()).unwrap_or_default(),
            })
        });
        // A call that may become a task waits a moment only: then the task is made.
        let until = now_ms + if as_task { TASK_AFTER_MS } else { wait_ms };
        self.resume.forget(&call.request);
        let (request, resumable) = (call.request.clone(), call.resumable && call.stream);
        let until_ms = now_ms + wait_ms;
        let waiter =
            Waiter { asker, stream: call.stream, wait_ms, task, request, resumable, until_ms };
        self.waiters.insert(id, waiter);
        out.push(Effect::Send(
            tab,
            RelayMessage::Call {
                id,
                tool: call.tool,
                args: call.args,
                agent: call.agent,
                connection: call.connection,
                turn,
                input: call.input,
            },
        ));
        out.push(Effect::Deadline(asker, id, until));
        if as_task && call.task.is_some_and(|t| t.at_once) {
            self.make_task(id, now_ms, entropy, out);
        }
        None
    }

    /// How many calls connection `grant` has in the tabs (None: every connection): those waited
    /// on and those that carry its tasks.
    fn calls_in_flight(&self, grant: Option<&str>) -> usize {
        let waited = grant.map_or(self.calls.len(), |g| self.calls.of(g));
        let tasks = self.tasks.iter().filter(|t| grant.is_none_or(|g| t.grant == g));
        waited + tasks.filter(|t| t.carried.call.is_some()).count()
    }

    /// Whether connection `grant` may start another call (a task's next round too): within its
    /// share of calls, and the pairing within its bound; else the sentence saying which is full.
    fn room_for_call(&self, grant: &str) -> Result<(), String> {
        if self.calls_in_flight(Some(grant)) >= MAX_CALLS_PER_CONNECTION {
            return Err(sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION));
        }
        if self.calls_in_flight(None) >= MAX_PENDING_CALLS {
            return Err(sentences::too_many_calls(MAX_PENDING_CALLS));
        }
        Ok(())
    }

    /// The task whose call in `tab` is `call`.
    fn task_carrying(&self, tab: u64, call: u64) -> Option<usize> {
        self.tasks.iter().position(|t| t.carried.tab == tab && t.carried.call == Some(call))
    }

    /// How many tasks connection `grant` holds; those past their time to live are deleted first.
    fn tasks_of(&mut self, grant: &str, now_ms: u64, out: &mut Vec<Effect>) -> usize {
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

    /// The call waited on as `call` becomes a task: its waiter is answered with the task, which
    /// is stored first; the tab's result goes to the task.
    fn make_task(
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

    /// What happened to task `i`, applied; stored when it changed.
    fn task_event(&mut self, i: usize, event: tasks::Event, now_ms: u64, out: &mut Vec<Effect>) {
        if self.tasks[i].apply(event, now_ms) != tasks::Effect::Unchanged {
            out.push(Effect::StoreTask(self.tasks[i].clone()));
        }
    }

    /// The tab's result for task `i`'s call: the tool's result, or its requests for the
    /// client's input (those the client cannot answer left out; none left: the task fails).
    fn task_result(&mut self, i: usize, outcome: TabOutcome, now_ms: u64, out: &mut Vec<Effect>) {
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
    fn task_request(
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
                tool: c.tool.clone(),
                args: c.args.clone(),
                agent: c.agent.clone(),
                connection: c.connection.clone(),
                turn,
                input: Some(call_input(serde_json::Value::Object(responses), state)),
            },
        ));
        out.push(Effect::StoreTask(self.tasks[i].clone()));
    }
}

/// The JSON-RPC error codes a failed task carries: the relay could not carry its call, or the
/// tab asked for input the client did not declare it can give.
const INTERNAL_ERROR: i64 = -32603;
const MISSING_CAPABILITY: i64 = -32021;

/// What came of a call nobody waited for, in the relay's words with the tab's marked as data
/// (its data cut to [`AFTERWARDS_DATA_CHARS`]).
fn afterwards_said(outcome: &TabOutcome) -> String {
    match outcome {
        TabOutcome::Done { data, .. } => {
            let json = serde_json::to_string(data).unwrap_or_default();
            let cut: String = json.chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_ran(&quoted(&cut))
        }
        TabOutcome::Failed { error } => {
            let cut: String = error.chars().take(AFTERWARDS_DATA_CHARS).collect();
            sentences::left_failed(&quoted(&cut))
        }
        TabOutcome::InputRequired { .. } => sentences::LEFT_NEEDS_INPUT.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    //! Simulations in the style of quinn-proto's: the room driven input by input with a
    //! made-up clock, the effects checked as the object would carry them out.
    use super::*;
    use crate::crypto::testing::Counter;
    use crate::limits::{WRONG_CODES_ALLOWED, WRONG_CODE_WINDOW_MS};
    use crate::pairing::tabs::tests::{hello, key, signature, ORIGIN, SENDER};
    use crate::pairing::wire::{RevokeRequest, TaskTerms};
    use serde_json::json;
    use tabrelay_bundle::protocol::{
        Connection, HELLO_WAIT_MS, MAX_TABS_PER_PAIRING, MAX_UNPROVEN_SOCKETS,
    };
    use tabrelay_bundle::BUNDLE_DIGEST;

    /// A tool of the bundled catalogue, whichever app's catalogue the relay is built with.
    fn tool() -> String {
        Catalogue::bundled().tools[0].name.clone()
    }

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    /// A room, a clock, and what it said so far.
    struct Sim {
        room: Room,
        now: u64,
        rng: Counter,
        next_asker: Asker,
    }

    impl Sim {
        fn new() -> Self {
            let catalogue: &'static Catalogue = Box::leak(Box::new(Catalogue::bundled()));
            let mut sim = Self {
                room: Room::new(Some(keys()), catalogue),
                now: 1_000_000,
                rng: Counter(1),
                next_asker: 0,
            };
            sim.go(Input::Woke(Stored {
                grants: vec![grant("g1"), grant("g2")],
                ..Stored::default()
            }));
            sim
        }

        fn go(&mut self, input: Input) -> Vec<Effect> {
            self.room.handle(input, self.now, &mut self.rng)
        }

        fn later(&mut self, ms: u64) {
            self.now += ms;
        }

        /// A socket opens: its number.
        fn open(&mut self) -> u64 {
            let number = self.room.next_tab_number(self.now);
            let (pairing, origin, sender) = (key().pairing(), ORIGIN.into(), SENDER.into());
            let effects = self.go(Input::Opened { number, pairing, origin, sender });
            assert!(
                matches!(&effects[..2], [Effect::Attach(_), Effect::Send(n, RelayMessage::Challenge { .. })] if *n == number)
            );
            number
        }

        /// A socket opens and proves the pairing: its number.
        fn tab(&mut self) -> u64 {
            let number = self.open();
            let effects = self.say(number, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
            assert!(
                matches!(effects.last(), Some(Effect::Verify(n, _)) if *n == number),
                "{effects:?}"
            );
            let effects = self.go(Input::Proved { tab: number, valid: true });
            assert!(
                effects.iter().any(
                    |e| matches!(e, Effect::Send(n, RelayMessage::Welcome { .. }) if *n == number)
                ),
                "{effects:?}"
            );
            number
        }

        fn say(&mut self, tab: u64, text: &str) -> Vec<Effect> {
            self.go(Input::Message { tab, text: Some(text.into()) })
        }

        fn ask(&mut self, request: Request) -> (Asker, Vec<Effect>) {
            self.next_asker += 1;
            let asker = self.next_asker;
            (asker, self.go(Input::Request { asker, request, replayed: Vec::new() }))
        }

        fn call(
            &mut self,
            grant: &str,
            id: u64,
            stream: bool,
            wait_ms: u64,
        ) -> (Asker, Vec<Effect>) {
            self.ask(Request::Call(CallRequest { wait_ms, stream, ..call_request(grant, id) }))
        }
    }

    /// A call of the catalogue's first tool from connection `grant` as its request `id`: no
    /// stream, the longest wait, no task, not resumable.
    fn call_request(grant: &str, id: u64) -> CallRequest {
        CallRequest {
            tool: tool(),
            args: json!({}),
            agent: "Claude".into(),
            connection: Connection {
                id: grant.into(),
                kind: "connector".into(),
                client: "Claude".into(),
                host: "claude.ai".into(),
                verified: None,
            },
            wait_ms: TAB_CALL_WAIT_MS,
            request: format!("{grant} {id}"),
            stream: false,
            input: None,
            resumable: false,
            task: None,
        }
    }

    /// A call from a client that takes tasks (and declared elicitation).
    fn task_call(sim: &mut Sim, grant: &str, id: u64) -> (Asker, Vec<Effect>) {
        sim.ask(Request::Call(CallRequest {
            args: json!({"n": 1}),
            task: Some(TaskTerms { declared: vec!["elicitation".into()], at_once: false }),
            ..call_request(grant, id)
        }))
    }

    /// A task-taking call that the tab is slow to answer: the task it became, and the call's id
    /// in tab `tab`.
    fn slow_task(sim: &mut Sim, grant: &str, id: u64, tab: u64) -> (String, u64) {
        let (asker, effects) = task_call(sim, grant, id);
        let (call, _) = sent_call(&effects, tab);
        sim.later(TASK_AFTER_MS);
        (made_task(&sim.go(Input::Deadline { call }), asker), call)
    }

    /// The tab's list: the tool, which asks the person first (so it may become a task).
    fn asked_list() -> String {
        let t = tool();
        format!(
            r#"{{"type":"tools","tools":[{{"name":"{t}","inputSchema":{{"type":"object"}},"setting":"asks"}}]}}"#
        )
    }

    /// A task request's reply.
    fn about_task(sim: &mut Sim, grant: &str, task: &str, op: TaskOp) -> (TaskReply, Vec<Effect>) {
        let request = Request::Task { grant: grant.into(), task: task.into(), op };
        let (asker, effects) = sim.ask(request);
        match replies(&effects, asker).pop() {
            Some(Reply::Task(reply)) => (reply, effects),
            other => panic!("no task reply: {other:?}"),
        }
    }

    /// The task a call became, from its waiter's end (its row stored before).
    fn made_task(effects: &[Effect], asker: Asker) -> String {
        let CallReply::Task { created } = done(effects, asker) else { panic!("{effects:?}") };
        let stored = effects.iter().position(|e| matches!(e, Effect::StoreTask(_)));
        let replied = effects.iter().position(|e| matches!(e, Effect::Reply(a, _) if *a == asker));
        assert!(stored < replied && stored.is_some(), "stored before the reply: {effects:?}");
        assert_eq!(created["resultType"], "task");
        created["taskId"].as_str().unwrap().to_owned()
    }

    fn stored_tasks(effects: &[Effect]) -> Vec<Task> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::StoreTask(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    fn grant(id: &str) -> Grant {
        Grant::new(
            id.into(),
            "cid".into(),
            "Claude".into(),
            "claude.ai".into(),
            1_000_000,
            &mut Counter(9),
        )
        .0
    }

    /// The call a tab was sent: its id and turn.
    fn sent_call(effects: &[Effect], tab: u64) -> (u64, u64) {
        effects
            .iter()
            .find_map(|e| match e {
                Effect::Send(n, RelayMessage::Call { id, turn, .. }) if *n == tab => {
                    Some((*id, *turn))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no call sent to tab {tab}: {effects:?}"))
    }

    /// The replies to `asker`.
    fn replies(effects: &[Effect], asker: Asker) -> Vec<Reply> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Reply(a, r) if *a == asker => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    fn done(effects: &[Effect], asker: Asker) -> CallReply {
        match replies(effects, asker).pop() {
            Some(Reply::Call(CallEvent::Done(reply))) => reply,
            other => panic!("no end for {asker}: {other:?} in {effects:?}"),
        }
    }

    fn tools_message(names: &[&str]) -> String {
        let tools: Vec<_> = names
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"type": "object"}, "setting": "runs"}))
            .collect();
        json!({"type": "tools", "tools": tools}).to_string()
    }

    #[test]
    fn calls_follow_the_tab_focused_last_and_the_newest_on_a_tie() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.later(10);
        let b = sim.tab();
        let (_, effects) = sim.call("g1", 1, false, 5000);
        sent_call(&effects, b);
        sim.later(10);
        sim.say(a, r#"{"type":"focus","focused":true}"#);
        let (_, effects) = sim.call("g1", 2, false, 5000);
        sent_call(&effects, a);
        sim.say(a, r#"{"type":"focus","focused":false}"#);
        let (_, effects) = sim.call("g1", 3, false, 5000);
        sent_call(&effects, a);
        // An unproven socket gets no call.
        let c = sim.open();
        let (_, effects) = sim.call("g1", 4, false, 5000);
        assert_ne!(sent_call(&effects, a).0, c);
    }

    #[test]
    fn a_call_is_answered_by_its_tab_only_and_reads_no_storage() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let b = sim.tab();
        let (asker, effects) = sim.call("g1", 1, false, 5000);
        // The grant's check and the tool list come from memory: the only effects are the turn
        // stored, the call sent and its deadline.
        let (id, _) = sent_call(&effects, b);
        assert_eq!(effects.len(), 3, "{effects:?}");
        assert!(matches!(effects[0], Effect::StoreTurns(_)));
        assert_eq!(effects[2], Effect::Deadline(asker, id, sim.now + 5000));
        let result = format!(r#"{{"type":"result","id":{id},"data":[1]}}"#);
        assert!(replies(&sim.say(a, &result), asker).is_empty(), "another tab cannot answer");
        assert!(matches!(done(&sim.say(b, &result), asker), CallReply::TabResult { .. }));
        assert!(sim.say(b, &result).is_empty(), "an answer comes once");
    }

    #[test]
    fn a_connection_that_is_gone_or_a_tool_not_listed_is_answered_at_once() {
        let mut sim = Sim::new();
        let (asker, effects) = sim.call("nope", 1, false, 5000);
        assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
        let (asker, effects) = sim.call("g1", 1, false, 5000);
        assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::NO_TAB));
        let a = sim.tab();
        sim.say(a, &tools_message(&["other"]));
        let (asker, effects) = sim.call("g1", 2, false, 5000);
        assert_eq!(done(&effects, asker), CallReply::NoSuchTool { tool: tool() });
        // Forgotten from the tab: its token stops at once.
        sim.say(a, r#"{"type":"forget","id":"g1"}"#);
        let (asker, effects) = sim.call("g1", 3, false, 5000);
        assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
    }

    #[test]
    fn a_new_connection_is_listed_to_every_tab_as_soon_as_it_is_made() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let b = sim.tab();
        let request = GrantRequest {
            id: "gn".into(),
            client_id: "https://agent.example/client".into(),
            client_name: "Agent".into(),
            host: "agent.example".into(),
            place: None,
            verified: None,
        };
        let (_, effects) = sim.ask(Request::Grant(request));
        let listed: Vec<u64> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send(tab, RelayMessage::Connections { list })
                    if list.iter().any(|c| c.id == "gn") =>
                {
                    Some(*tab)
                }
                _ => None,
            })
            .collect();
        assert_eq!(listed, [a, b], "each tab hears the list with the new connection");
    }

    #[test]
    fn a_call_tells_the_tab_the_domain_that_verified_its_connection_as_the_grant_says() {
        let mut sim = Sim::new();
        sim.tab();
        let request = GrantRequest {
            id: "gv".into(),
            client_id: "https://claude.ai/oauth/mcp-oauth-client-metadata".into(),
            client_name: "Claude".into(),
            host: "claude.ai".into(),
            place: None,
            verified: Some("claude.ai".into()),
        };
        let (asker, effects) = sim.ask(Request::Grant(request));
        assert!(matches!(replies(&effects, asker)[..], [Reply::Grant(GrantReply::Made { .. })]));
        let verified_of = |effects: &[Effect]| {
            effects.iter().find_map(|e| match e {
                Effect::Send(_, RelayMessage::Call { connection, .. }) => {
                    Some(connection.verified.clone())
                }
                _ => None,
            })
        };
        // Whatever the call carried, the grant's record says.
        let mut call = call_request("gv", 1);
        call.connection.verified = Some("evil.example".into());
        let (_, effects) = sim.ask(Request::Call(call));
        assert_eq!(verified_of(&effects), Some(Some("claude.ai".into())));
        // A registered client's connection is not verified, whatever its call says.
        let mut call = call_request("g1", 2);
        call.connection.verified = Some("claude.ai".into());
        let (_, effects) = sim.ask(Request::Call(call));
        assert_eq!(verified_of(&effects), Some(None));
    }

    #[test]
    fn after_a_wake_the_rows_read_back_route_the_call_and_list_the_tools() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &tools_message(&[&tool(), "extra"]));
        sim.say(a, r#"{"type":"view","dataset":"Evicted set"}"#);
        let tab = sim.room.tabs.get(&a).unwrap().clone();
        // The object is evicted; what it stored is read back by a new one.
        let stored = Stored {
            tabs: vec![tab],
            stated: vec![
                (
                    a,
                    Some(serde_json::to_string(sim.room.focused_list().unwrap()).unwrap()),
                    Some("Evicted set".into()),
                ),
                (a - 1, None, None),
            ],
            grants: vec![grant("g1")],
            turns: sim.room.turns.clone(),
            wrong_codes: WrongCodes::default(),
            left: LeftCalls::default(),
            tasks: Vec::new(),
            replayed_until: 0,
        };
        let catalogue = sim.room.catalogue;
        sim.room = Room::new(Some(keys()), catalogue);
        let woke = sim.go(Input::Woke(stored));
        assert_eq!(woke, [Effect::ForgetStated(a - 1)], "a gone tab's row is dropped");
        let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Tools });
        let [Reply::Tools(list)] = &replies(&effects, asker)[..] else { panic!("{effects:?}") };
        assert!(list.to_string().contains("extra"), "the tab's list survived");
        let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Status });
        assert!(format!("{:?}", replies(&effects, asker)).contains("Evicted set"));
        let (_, effects) = sim.call("g1", 1, false, 5000);
        sent_call(&effects, a);
        assert!(sim.room.next_tab_number(0) > a, "numbers keep growing");
    }

    #[test]
    fn a_call_left_open_while_the_person_decides_outlives_an_eviction_and_status_tells_it() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let (asker, effects) = sim.call("g1", 1, false, 5000);
        let (id, _) = sent_call(&effects, a);
        sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete?"}}"#));
        let effects = sim.go(Input::Deadline { call: id });
        assert!(
            matches!(done(&effects, asker), CallReply::NotCarried { sentence } if sentence.contains("`status`"))
        );
        let Some(Effect::StoreLeft(left)) =
            effects.iter().find(|e| matches!(e, Effect::StoreLeft(_))).cloned()
        else {
            panic!("the call left open is stored: {effects:?}")
        };
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
        // Evicted while the person decides; a new object reads the rows back.
        let tab = sim.room.tabs.get(&a).unwrap().clone();
        let stored = Stored {
            tabs: vec![tab],
            grants: vec![grant("g1"), grant("g2")],
            left: left.clone(),
            ..Stored::default()
        };
        let catalogue = sim.room.catalogue;
        sim.room = Room::new(Some(keys()), catalogue);
        sim.go(Input::Woke(stored));
        let status = |sim: &mut Sim, grant: &str| {
            let (asker, effects) =
                sim.ask(Request::Check { grant: grant.into(), want: Want::Status });
            format!("{:?}", replies(&effects, asker))
        };
        assert!(status(&mut sim, "g1").contains("still waits for the person"));
        assert!(!status(&mut sim, "g2").contains("Your call"), "another connection hears nothing");
        let effects =
            sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":{{"deleted":3}}}}"#));
        assert!(effects.iter().any(|e| matches!(e, Effect::StoreLeft(l) if *l != left)));
        let told = status(&mut sim, "g1");
        assert!(told.contains("it ran") && told.contains("deleted"), "{told}");
    }

    #[test]
    fn a_cancel_while_the_person_is_asked_ends_the_call_and_tells_the_tab() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let (asker, effects) = sim.call("g1", 7, true, 5000);
        let (id, _) = sent_call(&effects, a);
        let effects =
            sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete 3 items?"}}"#));
        assert_eq!(
            replies(&effects, asker),
            [Reply::Call(CallEvent::Asking("Delete 3 items?".into()))]
        );
        // Another connection's cancel of the same id does nothing.
        let (_, effects) = sim.ask(Request::Cancel { request: "g2 7".into() });
        assert!(replies(&effects, asker).is_empty());
        let (_, effects) = sim.ask(Request::Cancel { request: "g1 7".into() });
        assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })));
        assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::CANCELLED));
        let late = sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":[1]}}"#));
        assert!(replies(&late, asker).is_empty(), "a late result goes nowhere");
    }

    #[test]
    fn a_tab_going_away_mid_call_fails_its_calls_only() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let (first, effects) = sim.call("g1", 1, false, 5000);
        sent_call(&effects, a);
        sim.later(5);
        let b = sim.tab();
        let (second, effects) = sim.call("g1", 2, false, 5000);
        let (id_b, _) = sent_call(&effects, b);
        let effects = sim.go(Input::Closed { tab: a });
        assert_eq!(done(&effects, first), CallReply::not_carried(sentences::TAB_GONE));
        assert!(replies(&effects, second).is_empty());
        let effects = sim.say(b, &format!(r#"{{"type":"result","id":{id_b},"data":[2]}}"#));
        assert!(matches!(done(&effects, second), CallReply::TabResult { .. }));
        // A message too large closes the tab and fails its calls, never a hang.
        let (third, effects) = sim.call("g1", 3, false, 5000);
        sent_call(&effects, b);
        let effects =
            sim.go(Input::Message { tab: b, text: Some("x".repeat(MAX_MESSAGE_BYTES + 1)) });
        assert!(matches!(effects[0], Effect::Close(n, close::PROTOCOL_ERROR, _) if n == b));
        assert_eq!(done(&effects, third), CallReply::not_carried(sentences::TAB_GONE));
    }

    #[test]
    fn a_turn_is_stored_when_it_starts_and_then_only_every_so_often() {
        let mut sim = Sim::new();
        sim.tab();
        let stores = |effects: &[Effect]| {
            effects.iter().filter(|e| matches!(e, Effect::StoreTurns(_))).count()
        };
        let (_, effects) = sim.call("g1", 1, false, 5000);
        assert_eq!(stores(&effects), 1, "a new turn is stored at once");
        sim.later(1_000);
        let (_, effects) = sim.call("g1", 2, false, 5000);
        assert_eq!(stores(&effects), 0, "the same turn a second later: no write");
        sim.later(TURN_STORED_EVERY_MS);
        let (_, effects) = sim.call("g1", 3, false, 5000);
        assert_eq!(stores(&effects), 1, "the same turn, long enough after: written again");
        let (_, effects) = sim.call("g2", 4, false, 5000);
        assert_eq!(stores(&effects), 1, "another connection's call starts a turn: stored");
    }

    #[test]
    fn a_connections_calls_share_a_turn_until_another_calls_or_the_person_steps() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let turn = |sim: &mut Sim, grant: &str, id: u64| {
            let (_, effects) = sim.call(grant, id, false, 5000);
            sent_call(&effects, a).1
        };
        let t1 = turn(&mut sim, "g1", 1);
        assert_eq!(turn(&mut sim, "g1", 2), t1);
        let t2 = turn(&mut sim, "g2", 3);
        assert_ne!(t2, t1);
        let t3 = turn(&mut sim, "g1", 4);
        assert_ne!(t3, t2);
        let effects = sim.say(a, r#"{"type":"step"}"#);
        assert!(matches!(effects[..], [Effect::StoreTurns(_)]));
        assert_ne!(turn(&mut sim, "g1", 5), t3, "the person's step ends the turn");
    }

    #[test]
    fn the_wait_is_225_s_at_most_and_what_the_agent_is_told_depends_on_the_person() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let (asker, effects) = sim.call("g1", 1, false, 10 * TAB_CALL_WAIT_MS);
        let (id, _) = sent_call(&effects, a);
        assert!(effects.contains(&Effect::Deadline(asker, id, sim.now + 225_000)), "{effects:?}");
        sim.later(225_000);
        let effects = sim.go(Input::Deadline { call: id });
        assert!(
            effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })),
            "the tab drops it"
        );
        let CallReply::NotCarried { sentence } = done(&effects, asker) else { panic!() };
        assert!(sentence.contains("225 s"), "{sentence}");
        // While the person is asked, the question stays open and the agent is told so.
        let (asker, effects) = sim.call("g1", 2, true, 60_000);
        let (id, _) = sent_call(&effects, a);
        sim.say(a, &format!(r#"{{"type":"asking","id":{id},"sentence":"Delete?"}}"#));
        sim.later(60_000);
        let effects = sim.go(Input::Deadline { call: id });
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))), "{effects:?}");
        let CallReply::NotCarried { sentence } = done(&effects, asker) else { panic!() };
        assert!(sentence.contains("being asked") && sentence.contains("Delete?"), "{sentence}");
        assert!(
            sim.go(Input::Deadline { call: id }).is_empty(),
            "a deadline after the end is nothing"
        );
    }

    #[test]
    fn an_agent_that_stops_listening_has_its_call_dropped_in_the_tab() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let (asker, effects) = sim.call("g1", 1, true, 5000);
        let (id, _) = sent_call(&effects, a);
        assert_eq!(sim.go(Input::Gone { asker }), [Effect::Send(a, RelayMessage::Cancel { id })]);
        assert!(sim.go(Input::Deadline { call: id }).is_empty());
    }

    #[test]
    fn listeners_hear_when_the_list_agents_see_changes_and_only_then() {
        let mut sim = Sim::new();
        let (_, effects) = sim.ask(Request::Listen { grant: "nope".into() });
        assert!(matches!(effects[..], [Effect::Reply(_, Reply::NoGrant)]));
        let (listener, effects) = sim.ask(Request::Listen { grant: "g1".into() });
        assert_eq!(replies(&effects, listener), [Reply::Listen(ListenEvent::Tick)]);
        let changed = |effects: &[Effect]| {
            replies(effects, listener).contains(&Reply::Listen(ListenEvent::ToolsChanged))
        };
        let a = sim.tab();
        assert!(
            !changed(&sim.say(a, r#"{"type":"view","dataset":"d"}"#)),
            "a tab without a list: the bundled one still"
        );
        assert!(changed(&sim.say(a, &tools_message(&["x"]))), "a new list");
        assert!(!changed(&sim.say(a, &tools_message(&["x"]))), "the same list again");
        sim.later(5);
        let b = sim.tab();
        assert!(changed(&sim.say(b, &tools_message(&["y"]))));
        sim.later(5);
        let effects = sim.say(a, r#"{"type":"focus","focused":true}"#);
        assert!(changed(&effects), "focus moved to a tab with another list");
        assert!(changed(&sim.go(Input::Closed { tab: a })), "the focused tab went away");
        assert!(!changed(&sim.go(Input::Closed { tab: 12345 })));
        sim.go(Input::Gone { asker: listener });
        assert!(!changed(&sim.say(b, &tools_message(&["z"]))), "a listener gone hears nothing");
    }

    #[test]
    fn a_pairing_gets_a_few_wrong_codes_a_minute_then_even_a_right_code_waits() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let refused = |effects: &[Effect]| {
            effects.iter().find_map(|e| match e {
                Effect::Send(_, RelayMessage::Refused { sentence, .. }) => Some(sentence.clone()),
                _ => None,
            })
        };
        let right = ConnectCode::generate(&mut Counter(3), &keys());
        // A code the relay did not make is wrong without asking any code's object.
        for _ in 0..WRONG_CODES_ALLOWED - 1 {
            let effects = sim.say(a, r#"{"type":"approve","code":"ABCDE-12345"}"#);
            assert_eq!(refused(&effects).as_deref(), Some(refusal::UNKNOWN));
        }
        // A made code that its object does not know is wrong too.
        let approve = format!(r#"{{"type":"approve","code":"{}"}}"#, right.as_str());
        let effects = sim.say(a, &approve);
        let Some(Effect::AskCode(_, _, command, said)) = effects.last().cloned() else {
            panic!("{effects:?}")
        };
        let effects = sim.go(Input::CodeReplied {
            tab: a,
            said,
            command,
            reply: Some(CodeReply::Refused { sentence: refusal::UNKNOWN.into() }),
        });
        assert!(effects.iter().any(|e| matches!(e, Effect::StoreWrongCodes(_))));
        let effects = sim.say(a, &approve);
        assert_eq!(refused(&effects).as_deref(), Some(sentences::TOO_MANY_WRONG_CODES));
        sim.later(WRONG_CODE_WINDOW_MS);
        assert!(
            matches!(sim.say(a, &approve).last(), Some(Effect::AskCode(..))),
            "a minute later it may"
        );
    }

    #[test]
    fn a_links_approval_asks_for_the_browsers_confirmation_and_a_typed_code_does_not() {
        use crate::oauth::connect::{Description, LinkRef};
        let refused = |effects: &[Effect]| {
            effects.iter().find_map(|e| match e {
                Effect::Send(_, RelayMessage::Refused { sentence, .. }) => Some(sentence.clone()),
                _ => None,
            })
        };
        let mut sim = Sim::new();
        let a = sim.tab();
        let code = ConnectCode::generate(&mut Counter(3), &keys());
        let link = LinkRef::for_code(&code, &keys(), &mut Counter(9));
        let effects = sim.say(a, &format!(r#"{{"type":"approve","link":"{}"}}"#, link.as_str()));
        let Some(Effect::AskCode(_, asked, command, said)) = effects.last().cloned() else {
            panic!("{effects:?}")
        };
        assert_eq!((asked, said.as_str()), (code.clone(), link.as_str()));
        assert!(matches!(command, Command::Approve { linked: true, .. }), "{command:?}");
        // The tab gets a ticket that names the link, never the code.
        let reply = CodeReply::ToConfirm { client: "Claude".into(), secret: "s3cret".into() };
        let effects = sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(reply) });
        let sent = effects.iter().find_map(|e| match e {
            Effect::Send(_, m @ RelayMessage::Confirm { .. }) => Some(m.clone()),
            _ => None,
        });
        let Some(RelayMessage::Confirm { code: echoed, ticket, .. }) = sent else {
            panic!("{effects:?}")
        };
        assert_eq!(echoed, link.as_str());
        assert_eq!(ticket, format!("{}.s3cret", link.as_str()));
        assert!(!ticket.contains(code.as_str()));
        // The same code typed whole approves without a confirmation.
        let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.display()));
        assert!(matches!(
            effects.last(),
            Some(Effect::AskCode(_, _, Command::Approve { linked: false, .. }, _))
        ));
        // A link's reference sent as if typed is no code at all.
        let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, link.as_str()));
        assert_eq!(refused(&effects).as_deref(), Some(refusal::MALFORMED));
        // A made-up reference reaches no code's object.
        let effects = sim.say(a, r#"{"type":"approve","link":"ABCDEFGH0123456789"}"#);
        assert_eq!(refused(&effects).as_deref(), Some(refusal::UNKNOWN));
        // Who asks comes with this pairing's connections of the same client.
        let described = |client_id: &str| {
            CodeReply::Described(Description {
                client: "Claude".into(),
                host: "claude.ai".into(),
                verified: None,
                client_id: client_id.into(),
                age_ms: 1,
                place: None,
                lookalike: None,
                name_warning: None,
            })
        };
        let describe = |said: &str| (said.to_owned(), Command::Describe);
        let (said, command) = describe(link.as_str());
        let effects =
            sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(described("cid")) });
        let Some(Effect::Send(_, RelayMessage::Described { connections, .. })) = effects.last()
        else {
            panic!("{effects:?}")
        };
        assert_eq!(connections.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["g1", "g2"]);
        let (said, command) = describe(link.as_str());
        let effects =
            sim.go(Input::CodeReplied { tab: a, said, command, reply: Some(described("another")) });
        assert!(matches!(
            effects.last(),
            Some(Effect::Send(_, RelayMessage::Described { connections, .. })) if connections.is_empty()
        ));
    }

    #[test]
    fn an_approval_at_the_bound_of_connections_is_refused_and_removes_none() {
        let mut sim = Sim::new();
        let a = sim.tab();
        for i in 0..crate::limits::MAX_GRANTS {
            let request = GrantRequest {
                id: format!("n{i}"),
                client_id: "c".into(),
                client_name: "n".into(),
                host: "h".into(),
                place: None,
                verified: None,
            };
            let (asker, effects) = sim.ask(Request::Grant(request));
            let made =
                matches!(replies(&effects, asker)[..], [Reply::Grant(GrantReply::Made { .. })]);
            assert_eq!(made, i + 2 < crate::limits::MAX_GRANTS, "{i}");
        }
        let code = ConnectCode::generate(&mut Counter(3), &keys());
        let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.as_str()));
        assert!(
            matches!(&effects[..], [Effect::Send(_, RelayMessage::Refused { sentence, .. })] if sentence == sentences::TOO_MANY_CONNECTIONS),
            "{effects:?}"
        );
        let (_, effects) =
            sim.ask(Request::Revoke(RevokeRequest { grant: "g1".into(), secret: None }));
        assert!(effects.contains(&Effect::DeleteGrant("g1".into())));
        let effects = sim.say(a, &format!(r#"{{"type":"approve","code":"{}"}}"#, code.as_str()));
        assert!(matches!(effects.last(), Some(Effect::AskCode(..))));
    }

    #[test]
    fn a_grant_revoked_by_a_replay_is_refused_when_made_later() {
        let mut sim = Sim::new();
        let (_, effects) = sim.ask(Request::Replayed { grant: "late".into() });
        let until = sim.now + REPLAYED_KEPT_MS;
        assert!(effects.contains(&Effect::RecordReplayed("late".into(), until)));
        let request = GrantRequest {
            id: "late".into(),
            client_id: "c".into(),
            client_name: "n".into(),
            host: "h".into(),
            place: None,
            verified: None,
        };
        sim.next_asker += 1;
        let asker = sim.next_asker;
        let effects = sim.go(Input::Request {
            asker,
            request: Request::Grant(request),
            replayed: vec![until],
        });
        assert_eq!(replies(&effects, asker), [Reply::Grant(GrantReply::Replayed)]);
    }

    /// Both halves of a replayed authorization code on one clock: the code's object (through
    /// its wire encoding) and the pairing, with the replay's revocation reaching the pairing
    /// before or after the first redemption's grant. wrangler dev always delivers the grant
    /// first (tests/e2e/code_replay.test.mjs sees that order), so the other order is driven here.
    #[test]
    fn a_replayed_code_leaves_no_connection_whichever_request_reaches_the_pairing_first() {
        use crate::oauth::authorize::{AuthRequest, SealId};
        use crate::oauth::connect::{apply, CodeRequest, PollState, Revoke};
        use tabrelay_bundle::fields::Message as _;
        const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        for replay_first in [false, true] {
            let mut sim = Sim::new();
            let code = ConnectCode::generate(&mut Counter(3), &keys());
            let mut stored = None;
            let mut object = |command: Command, now: u64| {
                // The Worker's request and the object's reply, each through its encoding.
                let request = CodeRequest { code: code.as_str().into(), command };
                let (c, command) = CodeRequest::decode(&request.encode()).unwrap();
                let (s, reply) = apply(stored.take(), command, now, &mut Counter(5), &c);
                stored = s;
                CodeReply::decode(&reply.encode()).unwrap()
            };
            let request = AuthRequest {
                client_id: "cid".into(),
                client_name: "Claude".into(),
                verified_domain: None,
                redirect_uri: "https://claude.ai/cb".into(),
                state: None,
                code_challenge: CHALLENGE.into(),
                resource: None,
                scope: None,
            };
            let seal = SealId("s".into());
            let place = None;
            object(Command::Create { request, seal, browser_hash: "b".into(), place }, sim.now);
            object(Command::Approve { pairing: "p".into(), linked: false }, sim.now);
            let poll = Command::Poll { browser_hash: "b".into(), issuer: "https://r".into() };
            let CodeReply::Poll(PollState::Approved { redirect }) = object(poll, sim.now) else {
                panic!("not approved")
            };
            let issued = redirect.split("code=").nth(1).unwrap().split('&').next().unwrap();
            let secret = issued.split_once('.').unwrap().1.to_owned();
            let redeem = |grant: &str| Command::Redeem {
                secret: secret.clone(),
                client_id: "cid".into(),
                redirect_uri: None,
                code_verifier: Some(VERIFIER.into()),
                resource: None,
                origin: "https://r".into(),
                grant: grant.into(),
            };
            // Both redemptions reach the code's object; the first is granted, the replay names
            // the first's grant to revoke.
            let CodeReply::Redeemed { granted } = object(redeem("new"), sim.now) else {
                panic!("the first redemption")
            };
            let CodeReply::RedeemRefused { revoke: Some(Revoke { grant, .. }), .. } =
                object(redeem("other"), sim.now)
            else {
                panic!("the replay names no grant")
            };
            assert_eq!(grant, "new");
            // Then the pairing, in either order (the shell keeps the recorded replay).
            let mut kept = Vec::new();
            let make = |sim: &mut Sim, kept: &[u64]| {
                sim.next_asker += 1;
                let asker = sim.next_asker;
                let request = Request::Grant(GrantRequest {
                    id: "new".into(),
                    client_id: "cid".into(),
                    client_name: granted.client_name.clone(),
                    host: granted.host.clone(),
                    place: None,
                    verified: None,
                });
                let effects = sim.go(Input::Request { asker, request, replayed: kept.to_vec() });
                replies(&effects, asker)
            };
            let revoke = |sim: &mut Sim, kept: &mut Vec<u64>| {
                let (_, effects) = sim.ask(Request::Replayed { grant: grant.clone() });
                for e in effects {
                    if let Effect::RecordReplayed(_, until) = e {
                        kept.push(until);
                    }
                }
            };
            if replay_first {
                revoke(&mut sim, &mut kept);
                sim.later(1);
                assert_eq!(make(&mut sim, &kept), [Reply::Grant(GrantReply::Replayed)]);
            } else {
                let made = make(&mut sim, &kept);
                assert!(matches!(made[..], [Reply::Grant(GrantReply::Made { .. })]), "{made:?}");
                sim.later(1);
                revoke(&mut sim, &mut kept);
            }
            let (asker, effects) =
                sim.ask(Request::Check { grant: "new".into(), want: Want::Nothing });
            assert_eq!(replies(&effects, asker), [Reply::NoGrant], "replay first: {replay_first}");
            assert!(sim.room.grants.iter().all(|g| g.id != "new"), "replay first: {replay_first}");
        }
    }

    /// A room that woke with nothing stored (a new pairing: a self-made key's, say).
    fn empty_sim() -> Sim {
        let mut sim = Sim::new();
        sim.room = Room::new(Some(keys()), sim.room.catalogue);
        assert_eq!(sim.go(Input::Woke(Stored::default())), []);
        sim
    }

    #[test]
    fn a_pairing_no_agent_was_let_into_keeps_nothing_past_its_last_socket() {
        let mut sim = empty_sim();
        let a = sim.tab();
        let b = sim.tab();
        // What a self-keyed tab can make the pairing write: its statements, a step, wrong codes.
        let mut wrote = sim.say(a, &tools_message(&[&tool()]));
        wrote.extend(sim.say(a, r#"{"type":"view","dataset":"Mine"}"#));
        wrote.extend(sim.say(b, r#"{"type":"step"}"#));
        wrote.extend(sim.say(b, r#"{"type":"approve","code":"nope"}"#));
        for _ in 0..=WRONG_CODES_ALLOWED {
            let code = sim.say(b, r#"{"type":"describe","code":"ABCDE-FGHJK"}"#);
            wrote.extend(code);
        }
        assert!(wrote.iter().any(Effect::writes), "{wrote:?}");
        assert!(!wrote.contains(&Effect::ForgetAll), "not while its tabs are open");
        assert!(!sim.go(Input::Closed { tab: a }).contains(&Effect::ForgetAll), "b is still open");
        let last = sim.go(Input::Closed { tab: b });
        assert_eq!(last.last(), Some(&Effect::ForgetAll), "{last:?}");
        // Once forgotten, nothing more to forget; a socket that never proves writes nothing.
        let c = sim.open();
        sim.later(HELLO_WAIT_MS);
        let closed = sim.go(Input::Alarm);
        assert!(
            matches!(closed[0], Effect::Close(n, ..) if n == c)
                && !closed.contains(&Effect::ForgetAll)
        );
    }

    #[test]
    fn a_pairing_keeps_its_rows_while_a_grant_or_a_replays_record_needs_them() {
        let mut sim = Sim::new(); // woke with grants g1 and g2
        let a = sim.tab();
        sim.say(a, r#"{"type":"step"}"#);
        assert!(!sim.go(Input::Closed { tab: a }).contains(&Effect::ForgetAll), "its grants stay");
        sim.ask(Request::Revoke(RevokeRequest { grant: "g1".into(), secret: None }));
        let (_, effects) =
            sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
        assert_eq!(effects.last(), Some(&Effect::ForgetAll), "its last grant revoked, no tab open");
        // A replayed code's record is kept its time, then goes at the alarm.
        let mut sim = empty_sim();
        let a = sim.tab();
        let (_, effects) = sim.ask(Request::Replayed { grant: "late".into() });
        assert!(effects.iter().any(|e| matches!(e, Effect::RecordReplayed(..))));
        let until = sim.now + REPLAYED_KEPT_MS;
        let closed = sim.go(Input::Closed { tab: a });
        assert_eq!(closed.last(), Some(&Effect::SetAlarm(until)), "{closed:?}");
        sim.later(REPLAYED_KEPT_MS - 1);
        assert!(!sim.go(Input::Alarm).contains(&Effect::ForgetAll));
        sim.later(1);
        assert_eq!(sim.go(Input::Alarm).last(), Some(&Effect::ForgetAll));
        // Rows whose tab's close was never seen (the relay restarted) go when it wakes.
        let mut sim = empty_sim();
        let stored = Stored { stated: vec![(7, Some("[]".into()), None)], ..Stored::default() };
        sim.room = Room::new(Some(keys()), sim.room.catalogue);
        assert_eq!(sim.go(Input::Woke(stored)), [Effect::ForgetStated(7), Effect::ForgetAll]);
    }

    #[test]
    fn tabs_and_sockets_still_to_prove_have_their_bounds() {
        let mut sim = Sim::new();
        for _ in 0..MAX_TABS_PER_PAIRING {
            sim.tab();
        }
        let extra = sim.open();
        sim.say(extra, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
        let effects = sim.go(Input::Proved { tab: extra, valid: true });
        assert!(
            matches!(effects[..], [Effect::Close(n, close::TOO_MANY_TABS, _)] if n == extra),
            "{effects:?}"
        );
        // Silent sockets: beyond their bound the oldest make room when the alarm rings, and
        // each one not proven in time is closed.
        let silent: Vec<u64> = (0..=MAX_UNPROVEN_SOCKETS).map(|_| sim.open()).collect();
        let effects = sim.go(Input::Alarm);
        assert_eq!(effects.iter().filter(|e| matches!(e, Effect::Close(..))).count(), 1);
        assert!(matches!(effects[0], Effect::Close(n, close::TOO_MANY_TABS, _) if n == silent[0]));
        sim.later(HELLO_WAIT_MS);
        let effects = sim.go(Input::Alarm);
        assert_eq!(
            effects
                .iter()
                .filter(|e| matches!(e, Effect::Close(_, close::PROOF_FAILED, _)))
                .count(),
            MAX_UNPROVEN_SOCKETS
        );
        // A proof that does not hold closes the socket.
        let bad = sim.open();
        sim.say(bad, &hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST));
        assert!(matches!(
            sim.go(Input::Proved { tab: bad, valid: false })[..],
            [Effect::Close(_, close::PROOF_FAILED, _)]
        ));
    }

    #[test]
    fn a_clients_answers_reach_the_request_that_waits_for_them_and_no_other_connection_answers() {
        let mut sim = Sim::new();
        let ids = vec!["q-a".to_owned(), "q-b".to_owned()];
        let (waiter, effects) =
            sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: ids.clone() });
        assert!(replies(&effects, waiter).is_empty(), "it waits");
        let answer = |grant: &str, id: &str| Request::Answer {
            grant: grant.into(),
            id: id.into(),
            answer: json!({"action": "accept", "by": grant}),
        };
        let (other, effects) = sim.ask(answer("g2", "q-a"));
        assert_eq!(replies(&effects, other), [Reply::NotAsked], "another connection's answer");
        assert!(replies(&effects, waiter).is_empty());
        let (first, effects) = sim.ask(answer("g1", "q-a"));
        assert_eq!(replies(&effects, first), [Reply::Done]);
        assert!(replies(&effects, waiter).is_empty(), "one of two");
        let (last, effects) = sim.ask(answer("g1", "q-b"));
        assert_eq!(replies(&effects, last), [Reply::Done]);
        assert_eq!(
            replies(&effects, waiter),
            [Reply::Answers(json!({
                "q-a": {"action": "accept", "by": "g1"},
                "q-b": {"action": "accept", "by": "g1"},
            }))]
        );
        // A request that went takes its questions; a revoked connection answers nothing.
        let (gone, _) = sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: ids.clone() });
        sim.go(Input::Gone { asker: gone });
        let (late, effects) = sim.ask(answer("g1", "q-a"));
        assert_eq!(replies(&effects, late), [Reply::NotAsked]);
        sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
        let (revoked, effects) = sim.ask(Request::AwaitAnswers { grant: "g2".into(), ids });
        assert_eq!(replies(&effects, revoked), [Reply::NoGrant]);
    }

    #[test]
    fn a_resumable_call_outlives_its_dropped_stream_and_is_taken_up_running_or_ended() {
        let mut sim = Sim::new();
        let tab = sim.tab();
        let resumable = |id: u64| {
            Request::Call(CallRequest {
                wait_ms: 60_000,
                stream: true,
                resumable: true,
                ..call_request("g1", id)
            })
        };
        // The stream drops: the tab is not told to drop the call.
        let (first, effects) = sim.ask(resumable(1));
        let (call, _) = sent_call(&effects, tab);
        let effects = sim.go(Input::Gone { asker: first });
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
        assert!(effects.contains(&Effect::SetAlarm(sim.now + 60_000)));
        // Another connection cannot take it up; its own can, and waits again.
        let (other, effects) =
            sim.ask(Request::Resume { grant: "g2".into(), request: "g1 1".into() });
        assert_eq!(replies(&effects, other), [Reply::NotAsked], "not the key of g2's call");
        let (back, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 1".into() });
        assert_eq!(replies(&effects, back), [Reply::Call(CallEvent::Tick)], "it waits again");
        assert!(effects
            .iter()
            .any(|e| matches!(e, Effect::Deadline(a, c, _) if *a == back && *c == call)));
        let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[1]}}"#));
        assert!(matches!(done(&effects, back), CallReply::TabResult { .. }));
        // Dropped again and ended meanwhile: the end is kept, once.
        let (second, effects) = sim.ask(resumable(2));
        let (call, _) = sent_call(&effects, tab);
        sim.go(Input::Gone { asker: second });
        sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[2]}}"#));
        let (late, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 2".into() });
        assert!(matches!(done(&effects, late), CallReply::TabResult { .. }));
        let (again, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 2".into() });
        assert_eq!(replies(&effects, again), [Reply::NotAsked]);
        // Dropped and never taken up: at its wait the alarm gives up on it (the tab drops it).
        let (third, effects) = sim.ask(resumable(3));
        let (call, _) = sent_call(&effects, tab);
        sim.go(Input::Gone { asker: third });
        sim.later(60_000);
        let effects = sim.go(Input::Alarm);
        assert!(effects.contains(&Effect::Send(tab, RelayMessage::Cancel { id: call })));
        let (late, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 3".into() });
        assert!(
            matches!(done(&effects, late), CallReply::NotCarried { .. }),
            "the wait-over sentence"
        );
        // The client comes back before the pairing saw its stream drop: the new stream takes
        // the call over; an end sent to the old stream is kept for the client too.
        let (old, effects) = sim.ask(resumable(5));
        let (call, _) = sent_call(&effects, tab);
        let (new, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 5".into() });
        assert_eq!(replies(&effects, new), [Reply::Call(CallEvent::Tick)], "it waits again");
        let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[5]}}"#));
        assert!(matches!(done(&effects, new), CallReply::TabResult { .. }));
        assert!(replies(&effects, old).is_empty());
        let (six, effects) = sim.ask(resumable(6));
        let (call, _) = sent_call(&effects, tab);
        let effects = sim.say(tab, &format!(r#"{{"type":"result","id":{call},"data":[6]}}"#));
        assert!(
            matches!(done(&effects, six), CallReply::TabResult { .. }),
            "sent to a dead stream"
        );
        let (back, effects) =
            sim.ask(Request::Resume { grant: "g1".into(), request: "g1 6".into() });
        assert!(matches!(done(&effects, back), CallReply::TabResult { .. }), "and kept");
        // A call that is not resumable is dropped with its stream, as before.
        let (plain, effects) = sim.call("g1", 4, true, 60_000);
        let (call, _) = sent_call(&effects, tab);
        let effects = sim.go(Input::Gone { asker: plain });
        assert!(effects.contains(&Effect::Send(tab, RelayMessage::Cancel { id: call })));
    }

    #[test]
    fn a_quick_answer_stays_one_reply_and_a_call_that_waits_becomes_a_task() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        // Answered within the moment: one reply, no task.
        let (asker, effects) = task_call(&mut sim, "g1", 1);
        let (call, _) = sent_call(&effects, a);
        let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
        assert!(stored_tasks(&effects).is_empty());
        // Slow: after TASK_AFTER_MS the waiter gets a task, stored first.
        let (asker, effects) = task_call(&mut sim, "g1", 2);
        let (call, _) = sent_call(&effects, a);
        sim.later(TASK_AFTER_MS);
        let effects = sim.go(Input::Deadline { call });
        let task = made_task(&effects, asker);
        assert!(
            !effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))),
            "the call goes on in the tab"
        );
        let (reply, _) = about_task(&mut sim, "g1", &task, TaskOp::Get);
        let TaskReply::Detailed(got) = reply else { panic!() };
        assert_eq!(got["status"], "working");
        // The tab's result completes it; tasks/get inlines it; the other connection finds none.
        let effects =
            sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{{"rows":2}}}}"#));
        assert_eq!(stored_tasks(&effects)[0].status, tasks::Status::Completed);
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "completed");
        assert!(got["result"]["content"][0]["text"].as_str().unwrap().contains("rows"));
        let (other, _) = about_task(&mut sim, "g2", &task, TaskOp::Get);
        assert_eq!(other, TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() });
        // A connection that takes no tasks waits as before.
        let (_, effects) = sim.call("g1", 3, false, TAB_CALL_WAIT_MS);
        assert!(effects
            .iter()
            .any(|e| matches!(e, Effect::Deadline(_, _, at) if *at == sim.now + TAB_CALL_WAIT_MS)));
    }

    #[test]
    fn the_person_being_asked_makes_the_task_at_once_and_it_outlives_an_eviction() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (asker, effects) = task_call(&mut sim, "g1", 1);
        let (call, _) = sent_call(&effects, a);
        let effects =
            sim.say(a, &format!(r#"{{"type":"asking","id":{call},"sentence":"Delete 3 rows?"}}"#));
        let task = made_task(&effects, asker);
        let stored = stored_tasks(&effects);
        assert!(stored[0].status_message.as_deref().unwrap().contains("Delete 3 rows?"));
        // A restart loses the tab's socket: woken without it, the task fails (its row kept).
        let mut restarted = Room::new(Some(keys()), sim.room.catalogue);
        let rows: Vec<Task> =
            stored.iter().map(|t| tasks::read(serde_json::to_value(t).unwrap()).unwrap()).collect();
        let woke = restarted.handle(
            Input::Woke(Stored { grants: vec![grant("g1")], tasks: rows, ..Stored::default() }),
            sim.now,
            &mut Counter(3),
        );
        assert_eq!(stored_tasks(&woke)[0].status, tasks::Status::Failed);
        // Evicted: a new object reads the task back; the person's answer still reaches it.
        let tab = sim.room.tabs.get(&a).unwrap().clone();
        let catalogue = sim.room.catalogue;
        sim.room = Room::new(Some(keys()), catalogue);
        sim.go(Input::Woke(Stored {
            tabs: vec![tab],
            grants: vec![grant("g1"), grant("g2")],
            tasks: stored
                .iter()
                .map(|t| tasks::read(serde_json::to_value(t).unwrap()).unwrap())
                .collect(),
            ..Stored::default()
        }));
        sim.later(30 * 60_000);
        let effects =
            sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":3}}}}"#));
        assert_eq!(stored_tasks(&effects)[0].status, tasks::Status::Completed);
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "completed");
        // Past its time to live it is gone, and its row deleted.
        sim.later(crate::limits::TASK_TTL_MS);
        let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Get);
        assert_eq!(reply, TaskReply::Refused { sentence: sentences::TASK_UNKNOWN.into() });
        assert!(effects.contains(&Effect::DeleteTask(task)));
    }

    #[test]
    fn a_cancelled_task_stops_its_call_in_the_tab_and_a_closed_tab_fails_its_task() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (task, call) = slow_task(&mut sim, "g1", 1, a);
        // Another connection cannot cancel it.
        let (reply, effects) = about_task(&mut sim, "g2", &task, TaskOp::Cancel);
        assert!(matches!(reply, TaskReply::Refused { .. }) && stored_tasks(&effects).is_empty());
        let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Cancel);
        assert_eq!(reply, TaskReply::Acknowledged);
        assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id: call })));
        // Again: acknowledged, nothing sent; a late result changes nothing.
        let (reply, effects) = about_task(&mut sim, "g1", &task, TaskOp::Cancel);
        assert_eq!(reply, TaskReply::Acknowledged);
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..))));
        let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        assert!(stored_tasks(&effects).is_empty());
        // A task whose tab closes fails, with an error and no result.
        let (task, _) = slow_task(&mut sim, "g1", 2, a);
        sim.go(Input::Closed { tab: a });
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "failed");
        assert_eq!(got["error"]["message"], sentences::TAB_GONE);
    }

    #[test]
    fn a_tasks_questions_go_to_the_client_and_its_answers_start_the_next_round() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (task, call) = slow_task(&mut sim, "g1", 1, a);
        let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
        let roots = r#"{"method":"roots/list","params":{}}"#;
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask},"where":{roots}}},"state":{{"round":1}}}}"#));
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "input_required");
        let asked: Vec<&String> = got["inputRequests"].as_object().unwrap().keys().collect();
        assert_eq!(asked, ["who"], "roots were not declared: left out");
        // An answer to something not asked is ignored; the right one resumes the call.
        let stray = TaskOp::Update(json!({"where": {"roots": []}}));
        let (reply, effects) = about_task(&mut sim, "g1", &task, stray);
        assert_eq!(reply, TaskReply::Acknowledged);
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(..) | Effect::StoreTask(_))));
        let answer =
            TaskOp::Update(json!({"who": {"action": "accept", "content": {"name": "Ada"}}}));
        let (reply, effects) = about_task(&mut sim, "g1", &task, answer);
        assert_eq!(reply, TaskReply::Acknowledged);
        let again = effects.iter().find_map(|e| match e {
            Effect::Send(n, RelayMessage::Call { id, input, args, .. }) if *n == a => {
                Some((*id, input.clone(), args.clone()))
            }
            _ => None,
        });
        let (next, input, args) = again.expect("the next round went to the tab");
        assert_ne!(next, call);
        assert_eq!(args, json!({"n": 1}));
        assert_eq!(
            input.unwrap(),
            json!({"responses": {"who": {"action": "accept", "content": {"name": "Ada"}}}, "state": {"round": 1}})
        );
        sim.say(a, &format!(r#"{{"type":"result","id":{next},"data":"Hello, Ada"}}"#));
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "completed");
        // Only undeclared questions: the task fails, naming the capability.
        let (task, call) = slow_task(&mut sim, "g1", 2, a);
        sim.say(
            a,
            &format!(r#"{{"type":"result","id":{call},"input_required":{{"where":{roots}}}}}"#),
        );
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "failed");
        assert_eq!(got["error"]["code"], MISSING_CAPABILITY);
        assert!(got.get("result").is_none());
    }

    #[test]
    fn a_connection_holds_a_bounded_number_of_tasks_and_a_tool_that_needs_tasks_says_so() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        for i in 0..MAX_TASKS_PER_CONNECTION as u64 {
            let (asker, effects) = task_call(&mut sim, "g1", i);
            let (call, _) = sent_call(&effects, a);
            let effects = sim.go(Input::Deadline { call });
            made_task(&effects, asker);
            sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        }
        // A result too large for a task's row is said, not kept.
        let (asker, effects) = task_call(&mut sim, "g2", 50);
        let (call, _) = sent_call(&effects, a);
        made_task(&sim.go(Input::Deadline { call }), asker);
        let big = "A".repeat(MAX_TASK_RESULT_BYTES + 1);
        let image = format!(r#"{{"data":"{big}","mimeType":"image/png","width":1,"height":1}}"#);
        let result = format!(r#"{{"type":"result","id":{call},"data":1,"image":{image}}}"#);
        let effects = sim.say(a, &result);
        let kept = &stored_tasks(&effects)[0];
        assert!(serde_json::to_vec(kept).unwrap().len() < 4096);
        let said = kept.result.as_ref().unwrap();
        assert_eq!(said["isError"], true);
        assert!(said.to_string().contains("too large to keep"));
        let (asker, effects) = task_call(&mut sim, "g1", 99);
        assert_eq!(
            done(&effects, asker),
            CallReply::not_carried(sentences::too_many_tasks(MAX_TASKS_PER_CONNECTION))
        );
        // The other connection is not crowded out.
        let (_, effects) = task_call(&mut sim, "g2", 1);
        sent_call(&effects, a);
        // A tool the tab says runs only as a task: refused to a client that takes none.
        let list = format!(
            r#"{{"type":"tools","tools":[{{"name":"{}","inputSchema":{{"type":"object"}},"execution":{{"taskSupport":"required"}},"setting":"runs"}}]}}"#,
            tool()
        );
        sim.say(a, &list);
        let (asker, effects) = sim.call("g1", 7, false, TAB_CALL_WAIT_MS);
        assert_eq!(done(&effects, asker), CallReply::NeedsTasks);
    }

    #[test]
    fn a_call_a_2025_11_25_client_asks_to_be_a_task_is_one_at_once() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (asker, effects) = sim.ask(Request::Call(CallRequest {
            task: Some(TaskTerms { declared: Vec::new(), at_once: true }),
            ..call_request("g1", 1)
        }));
        let (call, _) = sent_call(&effects, a);
        let task = made_task(&effects, asker);
        let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        assert_eq!(stored_tasks(&effects)[0].id, task);
    }

    /// How many of `attempts` calls of connection `grant` (request ids from `first`) went to tab
    /// `tab`; each other one must be refused with `sentence`.
    fn calls_taken(
        sim: &mut Sim,
        grant: &str,
        first: u64,
        attempts: usize,
        tab: u64,
        sentence: &str,
    ) -> usize {
        let mut taken = 0;
        for i in 0..attempts as u64 {
            let (asker, effects) = sim.call(grant, first + i, false, TAB_CALL_WAIT_MS);
            let sent = effects
                .iter()
                .any(|e| matches!(e, Effect::Send(n, RelayMessage::Call { .. }) if *n == tab));
            if sent {
                taken += 1;
            } else {
                assert_eq!(done(&effects, asker), CallReply::not_carried(sentence));
            }
        }
        taken
    }

    #[test]
    fn a_connection_that_fills_its_share_of_calls_leaves_the_others_theirs() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        // Half its share as tasks whose calls still run in the tab: they count.
        let half = MAX_CALLS_PER_CONNECTION / 2;
        for i in 0..half as u64 {
            slow_task(&mut sim, "g1", 1000 + i, a);
        }
        // Then it tries as many calls as the whole pairing carries: only the rest of its share
        // goes to the tab, every other is refused at once with a sentence naming its share.
        let mine = sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION);
        let taken = calls_taken(&mut sim, "g1", 0, MAX_PENDING_CALLS, a, &mine);
        assert_eq!(taken, MAX_CALLS_PER_CONNECTION - half);
        assert!(mine.contains("This connection"), "{mine}");
        // The person's other agent still gets through, and its answer reaches it.
        let (asker, effects) = sim.call("g2", 1, false, TAB_CALL_WAIT_MS);
        let (call, _) = sent_call(&effects, a);
        let effects = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":2}}"#));
        assert!(matches!(done(&effects, asker), CallReply::TabResult { .. }));
        // As each connection may fill its share at once, the pairing's bound holds them all.
        let mut taken_by_all = 0;
        let mut grants = Vec::new();
        for g in 3..crate::limits::MAX_GRANTS + 1 {
            grants.push(grant(&format!("g{g}")));
        }
        sim.room.grants.extend(grants);
        for g in 2..crate::limits::MAX_GRANTS + 1 {
            let grant = format!("g{g}");
            let first = 10_000 * g as u64;
            taken_by_all +=
                calls_taken(&mut sim, &grant, first, MAX_CALLS_PER_CONNECTION, a, &mine);
        }
        assert_eq!(taken_by_all, (crate::limits::MAX_GRANTS - 1) * MAX_CALLS_PER_CONNECTION);
        // A connection already forgotten may still hold calls: past the pairing's bound, its
        // sentence says the tab is full.
        sim.room.grants.push(grant("late"));
        let (asker, effects) = sim.call("late", 1, false, TAB_CALL_WAIT_MS);
        assert_eq!(
            done(&effects, asker),
            CallReply::not_carried(sentences::too_many_calls(MAX_PENDING_CALLS))
        );
    }

    #[test]
    fn a_tasks_next_round_is_a_call_within_its_connections_share() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (task, call) = slow_task(&mut sim, "g1", 1, a);
        let ask = r#"{"method":"elicitation/create","params":{"message":"Name?"}}"#;
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask}}}}}"#));
        // Between rounds the task has no call in the tab: the connection fills its share.
        let mine = sentences::too_many_calls_here(MAX_CALLS_PER_CONNECTION);
        let taken = calls_taken(&mut sim, "g1", 100, MAX_CALLS_PER_CONNECTION + 1, a, &mine);
        assert_eq!(taken, MAX_CALLS_PER_CONNECTION);
        // Its answer would start a next round past its share: the task fails, saying so.
        let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {}}}));
        let (reply, effects) = about_task(&mut sim, "g1", &task, answer);
        assert_eq!(reply, TaskReply::Acknowledged);
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))));
        let (TaskReply::Detailed(got), _) = about_task(&mut sim, "g1", &task, TaskOp::Get) else {
            panic!()
        };
        assert_eq!(got["status"], "failed");
        assert_eq!(got["error"]["message"], mine.as_str());
        // The other connection's task goes on to its next round.
        let (theirs, call) = slow_task(&mut sim, "g2", 1, a);
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{{"who":{ask}}}}}"#));
        let answer = TaskOp::Update(json!({"who": {"action": "accept", "content": {}}}));
        let (_, effects) = about_task(&mut sim, "g2", &theirs, answer);
        sent_call(&effects, a);
    }

    #[test]
    fn a_connection_that_fills_its_listeners_or_questions_leaves_the_others_theirs() {
        let mut sim = Sim::new();
        let mut listening = 0;
        for _ in 0..MAX_LISTENERS {
            let (asker, effects) = sim.ask(Request::Listen { grant: "g1".into() });
            match &replies(&effects, asker)[..] {
                [Reply::Listen(ListenEvent::Tick)] => listening += 1,
                [Reply::TooManyListeners] => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(listening, MAX_LISTENERS_PER_CONNECTION);
        let (asker, effects) = sim.ask(Request::Listen { grant: "g2".into() });
        assert_eq!(replies(&effects, asker), [Reply::Listen(ListenEvent::Tick)]);
        // Questions: one connection's share full, the other's questions still wait.
        let questions = crate::limits::MAX_QUESTIONS_PER_CONNECTION;
        let mut held = 0;
        for i in 0..crate::limits::MAX_PENDING_QUESTIONS {
            let ids = vec![format!("g1-{i}")];
            let (asker, effects) = sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids });
            match &replies(&effects, asker)[..] {
                [] => held += 1,
                [Reply::TooManyQuestions] => {}
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(held, questions);
        let ids = vec!["g2-1".to_owned()];
        let (waiter, effects) = sim.ask(Request::AwaitAnswers { grant: "g2".into(), ids });
        assert!(replies(&effects, waiter).is_empty(), "it waits");
        let answer = Request::Answer { grant: "g2".into(), id: "g2-1".into(), answer: json!({}) };
        let (_, effects) = sim.ask(answer);
        assert_eq!(replies(&effects, waiter), [Reply::Answers(json!({"g2-1": {}}))]);
    }

    #[test]
    fn a_connection_that_leaves_many_ends_or_calls_open_pushes_out_its_own_only() {
        use crate::limits::{LEFT_OPEN_PER_CONNECTION, MAX_KEPT_ENDS_PER_CONNECTION};
        let mut sim = Sim::new();
        let a = sim.tab();
        // A resumable call whose stream dropped and whose end came meanwhile: kept.
        let dropped = |sim: &mut Sim, grant: &str, id: u64| {
            let request = CallRequest {
                wait_ms: 60_000,
                stream: true,
                resumable: true,
                ..call_request(grant, id)
            };
            let (asker, effects) = sim.ask(Request::Call(request));
            let (call, _) = sent_call(&effects, a);
            sim.go(Input::Gone { asker });
            sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":{id}}}"#));
        };
        // A call whose wait ran out while the person is asked: left open in the tab.
        let left_open = |sim: &mut Sim, grant: &str, id: u64| {
            let (_, effects) = sim.call(grant, id, false, 5000);
            let (call, _) = sent_call(&effects, a);
            sim.say(a, &format!(r#"{{"type":"asking","id":{call},"sentence":"Step {id}?"}}"#));
            sim.go(Input::Deadline { call });
        };
        dropped(&mut sim, "g2", 1);
        left_open(&mut sim, "g2", 2);
        for i in 0..(MAX_KEPT_ENDS_PER_CONNECTION + LEFT_OPEN_PER_CONNECTION) as u64 * 2 {
            dropped(&mut sim, "g1", 100 + i);
            left_open(&mut sim, "g1", 200 + i);
        }
        let resume = |sim: &mut Sim, grant: &str, id: u64| {
            let request = Request::Resume { grant: grant.into(), request: format!("{grant} {id}") };
            let (asker, effects) = sim.ask(request);
            replies(&effects, asker)
        };
        assert_eq!(resume(&mut sim, "g1", 100), [Reply::NotAsked], "its own oldest end went");
        let (asker, effects) =
            sim.ask(Request::Resume { grant: "g2".into(), request: "g2 1".into() });
        assert!(
            matches!(done(&effects, asker), CallReply::TabResult { .. }),
            "the other's is kept"
        );
        let status = |sim: &mut Sim, grant: &str| {
            let (asker, effects) =
                sim.ask(Request::Check { grant: grant.into(), want: Want::Status });
            format!("{:?}", replies(&effects, asker))
        };
        let mine = status(&mut sim, "g1");
        assert!(!mine.contains("Step 200?") && mine.contains("Step 2"), "{mine}");
        assert!(status(&mut sim, "g2").contains("Step 2?"), "the other's call left open is told");
    }

    /// The effects of the person forgetting connection `grant` in tab `tab`.
    fn forget(sim: &mut Sim, tab: u64, grant: &str) -> Vec<Effect> {
        let effects = sim.say(tab, &format!(r#"{{"type":"forget","id":"{grant}"}}"#));
        assert!(effects.contains(&Effect::DeleteGrant(grant.into())), "{effects:?}");
        effects
    }

    fn forgotten() -> CallReply {
        CallReply::not_carried(sentences::FORGOTTEN)
    }

    /// Whether any request was replied to.
    fn any_reply(effects: &[Effect]) -> bool {
        effects.iter().any(|e| matches!(e, Effect::Reply(..)))
    }

    #[test]
    fn forget_ends_the_connections_call_in_flight_and_no_result_of_it_reaches_it() {
        let mut sim = Sim::new();
        let (a, b) = (sim.tab(), sim.tab());
        let (mine, effects) = sim.call("g1", 7, true, 60_000);
        let (call, _) = sent_call(&effects, b);
        let (theirs, effects) = sim.call("g2", 7, true, 60_000);
        let (other, _) = sent_call(&effects, b);
        // Forgotten from another tab than the one running its call: every tab hears of it.
        let effects = forget(&mut sim, a, "g1");
        assert_eq!(done(&effects, mine), forgotten());
        assert!(effects.contains(&Effect::Send(b, RelayMessage::Cancel { id: call })));
        for tab in [a, b] {
            let told = RelayMessage::Forgotten { connection: "g1".into() };
            assert!(effects.contains(&Effect::Send(tab, told)), "{effects:?}");
        }
        let at = |wanted: fn(&RelayMessage) -> bool| {
            effects.iter().position(|e| matches!(e, Effect::Send(t, m) if *t == b && wanted(m)))
        };
        let told = at(|m| matches!(m, RelayMessage::Forgotten { .. }));
        let cancelled = at(|m| matches!(m, RelayMessage::Cancel { .. }));
        assert!(told < cancelled, "the tab hears why before the cancel: {effects:?}");
        assert!(replies(&effects, theirs).is_empty(), "another connection's call goes on");
        // The tab's result of it comes anyway: nobody's.
        let late =
            sim.say(b, &format!(r#"{{"type":"result","id":{call},"data":{{"deleted":1}}}}"#));
        assert!(
            !any_reply(&late) && !late.iter().any(|e| matches!(e, Effect::StoreLeft(_))),
            "{late:?}"
        );
        let effects = sim.say(b, &format!(r#"{{"type":"result","id":{other},"data":[1]}}"#));
        assert!(matches!(done(&effects, theirs), CallReply::TabResult { .. }));
        let (again, effects) = sim.call("g1", 8, true, 60_000);
        assert_eq!(replies(&effects, again), [Reply::NoGrant]);
        // A connection revoked by its client ends what it set going the same way.
        let (call, effects) = sim.call("g2", 9, false, 60_000);
        assert!(effects
            .iter()
            .any(|e| matches!(e, Effect::Send(t, RelayMessage::Call { .. }) if *t == b)));
        let (_, effects) =
            sim.ask(Request::Revoke(RevokeRequest { grant: "g2".into(), secret: None }));
        assert_eq!(done(&effects, call), forgotten());
    }

    #[test]
    fn forget_ends_a_call_the_person_is_asked_about_waited_on_or_left_open() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let asking =
            |id: u64| format!(r#"{{"type":"asking","id":{id},"sentence":"Delete 3 items?"}}"#);
        // Left open: the agent's wait ran out while the person was asked.
        let (_, effects) = sim.call("g1", 1, true, 5_000);
        let (left, _) = sent_call(&effects, a);
        sim.say(a, &asking(left));
        sim.later(5_000);
        let effects = sim.go(Input::Deadline { call: left });
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Cancel { .. }))));
        // Waited on: the card is showing.
        let (waiting, effects) = sim.call("g1", 2, true, 60_000);
        let (asked, _) = sent_call(&effects, a);
        sim.say(a, &asking(asked));
        let effects = forget(&mut sim, a, "g1");
        assert_eq!(done(&effects, waiting), forgotten());
        for id in [left, asked] {
            assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })), "{effects:?}");
        }
        let stored = effects.iter().find_map(|e| match e {
            Effect::StoreLeft(l) => Some(l.clone()),
            _ => None,
        });
        assert_eq!(stored, Some(LeftCalls::default()), "nothing kept for it: {effects:?}");
        // The person presses Allow anyway (a tab that did not drop its card): nothing of it
        // reaches anyone.
        for id in [left, asked] {
            let late = sim.say(a, &format!(r#"{{"type":"answered","id":{id}}}"#));
            assert!(!any_reply(&late), "{late:?}");
            let late =
                sim.say(a, &format!(r#"{{"type":"result","id":{id},"data":{{"deleted":1}}}}"#));
            assert!(late.is_empty(), "{late:?}");
        }
    }

    #[test]
    fn forget_ends_the_connections_listen_streams_only() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (mine, _) = sim.ask(Request::Listen { grant: "g1".into() });
        let (other, _) = sim.ask(Request::Listen { grant: "g2".into() });
        let effects = forget(&mut sim, a, "g1");
        assert_eq!(replies(&effects, mine), [Reply::Call(CallEvent::Done(forgotten()))]);
        assert!(replies(&effects, other).is_empty(), "{effects:?}");
        let effects = sim.say(a, r#"{"type":"tools","tools":[]}"#);
        assert!(replies(&effects, mine).is_empty(), "a forgotten listener hears nothing more");
        assert_eq!(replies(&effects, other), [Reply::Listen(ListenEvent::ToolsChanged)]);
    }

    #[test]
    fn forget_ends_the_connections_tasks_questions_and_kept_ends() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (task, call) = slow_task(&mut sim, "g1", 1, a);
        let (other_task, _) = slow_task(&mut sim, "g2", 1, a);
        // A question of g1 waits for the client's answers; a call's stream dropped (detached),
        // another's end is kept for the client's return.
        let (questions, _) =
            sim.ask(Request::AwaitAnswers { grant: "g1".into(), ids: vec!["q".into()] });
        let resumable = |id: u64| {
            Request::Call(CallRequest { stream: true, resumable: true, ..call_request("g1", id) })
        };
        let (dropped, effects) = sim.ask(resumable(2));
        let (detached, _) = sent_call(&effects, a);
        sim.go(Input::Gone { asker: dropped });
        let (ended, effects) = sim.ask(resumable(3));
        let (kept, _) = sent_call(&effects, a);
        let effects = sim.say(a, &format!(r#"{{"type":"result","id":{kept},"data":[3]}}"#));
        assert!(matches!(done(&effects, ended), CallReply::TabResult { .. }));
        let effects = forget(&mut sim, a, "g1");
        assert!(effects.contains(&Effect::DeleteTask(task.clone())), "{effects:?}");
        assert!(!effects.contains(&Effect::DeleteTask(other_task.clone())));
        for id in [call, detached] {
            assert!(effects.contains(&Effect::Send(a, RelayMessage::Cancel { id })), "{effects:?}");
        }
        assert_eq!(done(&effects, questions), forgotten());
        assert_eq!(sim.room.resume.resume("g1 2", sim.now), Found::Nothing);
        assert_eq!(sim.room.resume.resume("g1 3", sim.now), Found::Nothing);
        assert_eq!(sim.room.resume.next_alarm(), None, "no alarm for a detached call of it");
        // The task's result comes anyway: stored nowhere.
        let late = sim.say(a, &format!(r#"{{"type":"result","id":{call},"data":1}}"#));
        assert!(stored_tasks(&late).is_empty() && !any_reply(&late), "{late:?}");
        let (reply, _) = about_task(&mut sim, "g2", &other_task, TaskOp::Get);
        assert!(matches!(reply, TaskReply::Detailed(_)), "another connection's task stays");
        let (asker, effects) = sim.ask(Request::Task { grant: "g1".into(), task, op: TaskOp::Get });
        assert_eq!(replies(&effects, asker), [Reply::NoGrant]);
    }

    #[test]
    fn a_stopped_agents_calls_are_refused_until_the_person_lets_it_go_on() {
        let mut sim = Sim::new();
        let a = sim.tab();
        let effects = sim.say(a, r#"{"type":"stop","connection":"g1"}"#);
        let stored = effects.iter().find_map(|e| match e {
            Effect::StoreGrant(g) => Some(g.clone()),
            _ => None,
        });
        let stored = stored.expect("the stop is kept in the grant's row");
        assert!(stored.stopped && stored.id == "g1");
        let told = RelayMessage::Stopped { connection: "g1".into(), stopped: true };
        assert!(effects.contains(&Effect::Send(a, told)), "every tab hears it: {effects:?}");
        let refused = |sim: &mut Sim, id: u64| {
            let (asker, effects) = sim.call("g1", id, false, 60_000);
            assert!(
                !effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))),
                "nothing reaches the tab: {effects:?}"
            );
            assert_eq!(done(&effects, asker), CallReply::not_carried(sentences::AGENT_STOPPED));
        };
        refused(&mut sim, 1);
        refused(&mut sim, 2);
        let (_, effects) = sim.call("g2", 1, false, 60_000);
        sent_call(&effects, a); // another agent is not stopped
        let (asker, effects) = sim.ask(Request::Check { grant: "g1".into(), want: Want::Nothing });
        assert_eq!(replies(&effects, asker), [Reply::Done], "its token still works");
        let listed = sim.say(a, r#"{"type":"connections"}"#);
        let list = listed.iter().find_map(|e| match e {
            Effect::Send(_, RelayMessage::Connections { list }) => Some(list.clone()),
            _ => None,
        });
        let list = list.unwrap();
        assert!(list.iter().any(|c| c.id == "g1" && c.stopped));
        assert!(list.iter().any(|c| c.id == "g2" && !c.stopped));
        // An eviction does not let it go on: the row says it is stopped.
        let mut woken = Sim::new();
        woken.go(Input::Woke(Stored { grants: vec![stored, grant("g2")], ..Stored::default() }));
        let b = woken.tab();
        refused(&mut woken, 3);
        // The person lets it go on: its next call runs.
        let effects = woken.say(b, r#"{"type":"go_on","connection":"g1"}"#);
        assert!(effects
            .iter()
            .any(|e| matches!(e, Effect::StoreGrant(g) if g.id == "g1" && !g.stopped)));
        let (_, effects) = woken.call("g1", 4, false, 60_000);
        sent_call(&effects, b);
        // Stopping one that is not a connection here changes nothing.
        assert!(woken.say(b, r#"{"type":"stop","connection":"nope"}"#).is_empty());
    }

    #[test]
    fn a_stopped_agents_task_does_not_go_on_to_its_next_round() {
        let mut sim = Sim::new();
        let a = sim.tab();
        sim.say(a, &asked_list());
        let (task, call) = slow_task(&mut sim, "g1", 1, a);
        let needs = r#"{"q":{"method":"elicitation/create","params":{"message":"Which?","requestedSchema":{"type":"object"}}}}"#;
        sim.say(a, &format!(r#"{{"type":"result","id":{call},"input_required":{needs}}}"#));
        sim.say(a, r#"{"type":"stop","connection":"g1"}"#);
        let (reply, effects) =
            about_task(&mut sim, "g1", &task, TaskOp::Update(json!({"q": {"action": "accept"}})));
        assert_eq!(reply, TaskReply::Acknowledged);
        assert!(!effects.iter().any(|e| matches!(e, Effect::Send(_, RelayMessage::Call { .. }))));
        let ended = stored_tasks(&effects).pop().expect("the task is stored as ended");
        assert_eq!(ended.status, tasks::Status::Completed);
        assert!(ended.result.unwrap().to_string().contains("stopped this agent"));
    }
}
