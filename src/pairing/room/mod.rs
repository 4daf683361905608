//! The pairing as a state machine: [`Room`] takes one [`Input`] at a time with the time it
//! happened (a tab's socket opening, a tab's message, a proof checked, a code's reply, a
//! socket closing, a request of the Worker, a waiter gone, a timeout, the rows read back after
//! a wake) and returns the [`Effect`]s the Durable Object carries out (send to a tab, close it,
//! keep its state in its socket, reply to a waiting request, store or delete a row, set the
//! alarm, check a proof, ask a code's object). Time is the room's too, in the style of
//! quinn-proto's `Connection`: it keeps its timers (each call's wait, each stream's keep-alive
//! tick, a socket's hello, a replayed code's record), says when it next needs waking
//! ([`Room::poll_timeout`]) and takes [`Input::Timeout`]; the object sleeps until then and sets
//! its alarm where [`Effect::SetAlarm`] says (only for what outlives a request). The object
//! keeps only sockets, SQL and the translation of each to inputs and effects; every decision
//! is here, tested natively with a made-up clock (the simulations in `tests/`).
//!
//! Here are the types and the one dispatch ([`Room::handle`], and within it a request of the
//! Worker and what a tab's message comes to); each job of the room lives in its own module, as
//! `impl Room` blocks: `sockets` (tabs opening, proving, speaking and going away), `calls`
//! (calls in flight whoever holds them, left-open calls and a dropped stream's call taken up),
//! `tasks`, `grants` (grants and connect codes), `listeners` (`/listen` streams and a session's
//! answers) and `timers`. Every call in a tab is in one registry ([`Calls`]), whether a request
//! waits for it, its stream dropped, or it carries a task's round: one set of bounds and one
//! deadline for each.
//!
//! What the hot path needs is held in memory once the rows are read back: the tabs and the one
//! calls go to, the focused tab's tool list, and the grants (so a call's check of its grant and
//! of the tool it names reads no storage).

use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::protocol::{RelayMessage, ToolList, PROTOCOL_VERSION};

use crate::crypto::Entropy;
use crate::keys::Keys;
use crate::limits::TAB_CALL_WAIT_MS;
use crate::oauth::connect::{CodeReply, Command, ConnectCode, Named};
use crate::pairing::answers::Questions;
use crate::pairing::calls::{Calls, Flight, Holder, LeftCalls};
use crate::pairing::codes::WrongCodes;
use crate::pairing::grants::Grant;
use crate::pairing::presence::Held;
use crate::pairing::resume::Resumable;
use crate::pairing::tabs::{Proof, Tab, TabAction};
use crate::pairing::tasks::{Event as TaskEvent, Task};
use crate::pairing::turns::Turns;
use crate::pairing::wire::{is_request_of, Reply, Request, Want};
use crate::sentences;

mod calls;
mod grants;
mod listeners;
mod presence;
mod sockets;
mod tasks;
#[cfg(test)]
mod tests;
mod timers;

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
    /// The pairing's presence credential.
    pub presence: Option<Held>,
}

impl Stored {
    /// Whether it holds nothing but defaults (every part named, so a new one is not missed;
    /// smaller in the Worker than comparing it whole with the default).
    fn is_empty(&self) -> bool {
        let Stored {
            tabs,
            stated,
            grants,
            turns,
            wrong_codes,
            left,
            tasks,
            replayed_until,
            presence,
        } = self;
        tabs.is_empty()
            && stated.is_empty()
            && grants.is_empty()
            && turns.is_empty()
            && wrong_codes.is_empty()
            && left.is_empty()
            && tasks.is_empty()
            && *replayed_until == 0
            && presence.is_none()
    }
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
    /// The person's presence for a tab's approval was checked ([`Effect::VerifyPresence`]).
    PresenceProved {
        /// The tab.
        tab: u64,
        /// The code or link reference it approves.
        named: Named,
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
    /// A request stopped waiting (its stream was closed: the agent went away).
    Gone {
        /// Who.
        asker: Asker,
    },
    /// The time [`Room::poll_timeout`] said came (or the alarm rang): what is due is done.
    Timeout,
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
    /// Check this proof of the person's presence for a tab's approval of a code, then give
    /// [`Input::PresenceProved`].
    VerifyPresence(u64, Proof, Named),
    /// Store the pairing's presence credential (its JSON).
    StorePresence(String),
    /// Ask a code's object, then give [`Input::CodeReplied`] (with the code or link reference
    /// the tab sent, last).
    AskCode(u64, ConnectCode, Command, String),
    /// Reply to a waiting request; [`Reply::ends`] says whether it is its last.
    Reply(Asker, Reply),
    /// Store what a tab stated: its tool list (JSON text) or its dataset's name.
    StoreStated(u64, Stated),
    /// Delete what a gone tab stated.
    ForgetStated(u64),
    /// Store the turns (their JSON: the room keeps its own, so no copy is made).
    StoreTurns(String),
    /// Store the calls left open and what came of others (their JSON).
    StoreLeft(String),
    /// Store a task (made or changed); its row is written before any reply that names it.
    StoreTask(Task),
    /// Delete a task (its time to live passed).
    DeleteTask(String),
    /// Store the wrong codes (their JSON).
    StoreWrongCodes(String),
    /// Store a grant.
    StoreGrant(Grant),
    /// Delete a grant.
    DeleteGrant(String),
    /// Record that the code making this grant was replayed, until this time.
    RecordReplayed(String, u64),
    /// Set the alarm to ring at this time (the room says it only when the time changes).
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
            | Effect::RecordReplayed(..)
            | Effect::StorePresence(_) => true,
            Effect::Send(..)
            | Effect::Close(..)
            | Effect::Attach(_)
            | Effect::Verify(..)
            | Effect::VerifyPresence(..)
            | Effect::AskCode(..)
            | Effect::Reply(..)
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

    fn get_mut(&mut self, key: &u64) -> Option<&mut V> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
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

/// The pairing's tabs (tens at most), in a vector by the number each carries: its slice is
/// what the tab functions go over, smaller in the Worker than an iterator adapter over pairs.
#[derive(Debug, Clone, Default)]
struct Tabs(Vec<Tab>);

impl Tabs {
    fn get(&self, number: &u64) -> Option<&Tab> {
        self.0.iter().find(|t| t.number == *number)
    }

    fn contains_key(&self, number: &u64) -> bool {
        self.get(number).is_some()
    }

    /// Keeps `tab`, in place of the tab of its number.
    fn insert(&mut self, tab: Tab) {
        match self.0.iter_mut().find(|t| t.number == tab.number) {
            Some(t) => *t = tab,
            None => self.0.push(tab),
        }
    }

    fn remove(&mut self, number: &u64) -> Option<Tab> {
        let i = self.0.iter().position(|t| t.number == *number)?;
        Some(self.0.swap_remove(i))
    }

    fn values(&self) -> core::slice::Iter<'_, Tab> {
        self.0.iter()
    }
}

/// What a tab stated, held in memory.
#[derive(Debug, Clone, Default)]
struct Statement {
    tools: Option<ToolList>,
    /// The same list's JSON text, as stored: a change of the list agents see is told by it,
    /// without a copy of the list and a comparison of every part.
    tools_text: Option<String>,
    dataset: Option<String>,
}

/// One browser's pairing.
pub struct Room {
    keys: Option<Keys>,
    catalogue: &'static Catalogue,
    tabs: Tabs,
    stated: Slots<Statement>,
    /// Every call in flight in a tab, whoever holds it, and the calls left open.
    calls: Calls,
    /// The streams that say a tick when quiet: when each says its next, and what.
    ticks: Slots<(u64, timers::Tick)>,
    /// The alarm the room last had set (None: none, or it rang).
    alarm: Option<u64>,
    /// When the last input happened.
    now: u64,
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
    /// The pairing's presence credential, once the person made one: approvals then need it.
    presence: Option<Held>,
}

impl Room {
    /// A room for a pairing whose codes are checked with `keys` (None: the relay's keys could
    /// not be read, so no code is taken) and whose bundled tools are `catalogue`.
    #[must_use]
    pub fn new(keys: Option<Keys>, catalogue: &'static Catalogue) -> Self {
        Self {
            keys,
            catalogue,
            tabs: Tabs::default(),
            stated: Slots::default(),
            calls: Calls::default(),
            ticks: Slots::default(),
            alarm: None,
            now: 0,
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
            presence: None,
        }
    }

    /// The number of a tab opening at `now_ms` (numbers grow, even within one millisecond).
    pub fn next_tab_number(&mut self, now_ms: u64) -> u64 {
        self.last_tab = (self.last_tab + 1).max(now_ms.saturating_mul(1024));
        self.last_tab
    }

    /// Keeps tab `t`'s state, here and in its socket (one copy of the clone and push).
    fn keep_tab(&mut self, t: Tab, out: &mut Vec<Effect>) {
        out.push(Effect::Attach(t.clone()));
        self.tabs.insert(t);
    }

    /// Takes one input at `now_ms`; what to carry out, in order.
    pub fn handle(&mut self, input: Input, now_ms: u64, entropy: &mut dyn Entropy) -> Vec<Effect> {
        let mut out = Vec::new();
        self.now = now_ms;
        let before = self.list_heard();
        match input {
            Input::Woke(stored) => self.woke(stored, now_ms, &mut out),
            Input::Opened { number, pairing, origin, sender } => {
                let admitted = Tab::admit(&pairing, &origin, &sender, number, now_ms, entropy);
                self.last_tab = self.last_tab.max(number);
                self.keep_tab(admitted.tab, &mut out);
                send(&mut out, number, admitted.first);
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
            Input::PresenceProved { tab, named, valid } => {
                self.presence_proved(tab, named, valid, now_ms, &mut out);
            }
            Input::CodeReplied { tab, said, command, reply } => {
                self.code_replied(tab, said, &command, reply, now_ms, &mut out);
            }
            Input::Closed { tab } => self.tab_gone(tab, now_ms, &mut out),
            Input::Request { asker, request, replayed } => {
                self.request(asker, request, &replayed, now_ms, entropy, &mut out);
            }
            Input::Gone { asker } => {
                self.listener_gone(asker);
                self.ticks.remove(&asker);
                self.waiter_gone(asker, &mut out);
            }
            Input::Timeout => self.timeout(now_ms, entropy, &mut out),
        }
        self.tell_listeners(before, &mut out);
        self.wrote |= out.iter().any(Effect::writes);
        if self.wrote && self.keeps_nothing() && now_ms >= self.replayed_until {
            out.push(Effect::ForgetAll);
            self.wrote = false;
            self.presence = None;
        }
        self.keep_time(now_ms, &mut out);
        out
    }

    /// Whether the pairing holds nothing worth keeping: no grant, no task, no socket (not even
    /// one still proving itself). Then what it stored (what its tabs stated, turns, wrong codes,
    /// used states) goes once any record of a replayed code has run its time: a pairing no agent
    /// was let into (a self-made key's, say) keeps nothing past its last socket.
    /// A presence credential alone keeps nothing: anyone can make a key, prove it and send one
    /// (its attestation is "none"), so it is kept only while the pairing keeps something else.
    fn keeps_nothing(&self) -> bool {
        self.tabs.0.is_empty() && self.grants.is_empty() && self.tasks.is_empty()
    }

    fn woke(&mut self, stored: Stored, now_ms: u64, out: &mut Vec<Effect>) {
        self.wrote = !stored.is_empty();
        self.replayed_until = stored.replayed_until;
        for tab in &stored.tabs {
            self.last_tab = self.last_tab.max(tab.number);
        }
        // A wake is a room's first input (the object's first event wakes it): the tabs its
        // sockets kept are all its tabs, one socket each.
        self.tabs = Tabs(stored.tabs);
        // Gone over by reference (a dataset's name copied): no iterator of the rows by value.
        for &(number, ref tools, ref dataset) in &stored.stated {
            if !self.tabs.contains_key(&number) {
                // A tab that went away while its close was not seen.
                out.push(Effect::ForgetStated(number));
                continue;
            }
            let dataset = dataset.clone();
            let tools = tools
                .as_deref()
                .and_then(|t| serde_json::from_slice(t.as_bytes()).ok())
                .and_then(|v| ToolList::read(&v).ok());
            // Its text as the list is written now (what a tab stating it again would store).
            let tools_text = tools.as_ref().map(|l| tabrelay_bundle::fields::json_text(l));
            self.stated.insert(number, Statement { tools, tools_text, dataset });
        }
        self.grants = stored.grants;
        self.turns = stored.turns;
        // When it was stored is not known: the next call of the turn stores it again.
        self.turns_stored = (self.turns.current(), 0);
        self.wrong_codes = stored.wrong_codes;
        self.presence = stored.presence;
        self.calls.restore(stored.left);
        self.tasks = stored.tasks;
        // A task's round in a tab that is still open runs on: in flight again, its wait anew.
        for task in &self.tasks {
            let Some(id) = task.carried.call else { continue };
            if self.tabs.contains_key(&task.carried.tab) {
                let holder = Holder::Task(task.id.clone());
                let (grant, tool) = (&task.grant, &task.carried.tool_call.tool);
                let flight =
                    Flight::new(String::new(), grant, tool, holder, now_ms, TAB_CALL_WAIT_MS, None);
                self.calls.restore_flight(Flight { id, tab: task.carried.tab, ..flight });
            }
        }
        // A task whose call was in a tab that is gone (the relay restarted, its sockets with
        // it) fails; the others go on as the tabs answer.
        for i in 0..self.tasks.len() {
            let c = &self.tasks[i].carried;
            if c.call.is_some() && !self.tabs.contains_key(&c.tab) {
                let gone = TaskEvent::Lost(INTERNAL_ERROR, sentences::TAB_GONE.into());
                self.task_event(i, gone, now_ms, out);
            }
        }
    }

    /// A request of the Worker, to the job it asks of; its reply, unless it waits.
    fn request(
        &mut self,
        asker: Asker,
        request: Request,
        replayed: &[u64],
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) {
        self.watch_quiet(asker, &request, now_ms);
        // A request about a connection's own things goes no further once it is not live.
        let about = match &request {
            Request::Check { grant, .. }
            | Request::Listen { grant }
            | Request::Task { grant, .. }
            | Request::AwaitAnswers { grant, .. }
            | Request::Answer { grant, .. }
            | Request::Resume { grant, .. } => Some(grant),
            _ => None,
        };
        if about.is_some_and(|grant| !self.live(grant)) {
            reply_to(out, asker, Reply::NoGrant);
            return;
        }
        let reply = match request {
            Request::Call(call) => match self.call(asker, call, now_ms, entropy, out) {
                Some(reply) => reply,
                None => return, // it waits for the tab
            },
            Request::Task { ref grant, ref task, op } => {
                Reply::Task(self.task_request(grant, task, op, now_ms, out))
            }
            Request::Check { want: Want::Nothing, .. } => Reply::Done,
            Request::Check { want: Want::Tools, .. } => {
                Reply::Tools { stated: self.focused_list_seen() }
            }
            Request::Check { want: Want::Status, ref grant } => self.status(grant),
            Request::Listen { grant } => self.listen(asker, grant),
            // Never given: the object answers it from its storage (a uniqueness its SQL keeps);
            // refused here should it come.
            Request::UseState { .. } => Reply::StateUsed,
            Request::Grant(request) => {
                Reply::Grant(self.new_grant(request, replayed, now_ms, entropy, out))
            }
            Request::Refresh(ref request) => {
                Reply::Refresh(self.refresh(request, now_ms, entropy, out))
            }
            Request::Revoke(ref request) => {
                self.revoke(request, out);
                Reply::Done
            }
            Request::Replayed { ref grant } => {
                self.replayed(grant, now_ms, out);
                Reply::Done
            }
            Request::Cancel { ref request } => {
                self.cancel(request, now_ms, out);
                Reply::Done
            }
            Request::AwaitAnswers { ref grant, ids } => match self.questions.ask(asker, grant, ids)
            {
                Ok(()) => return, // it waits for the answers
                Err(_) => Reply::TooManyQuestions,
            },
            Request::Answer { ref grant, ref id, answer } => self.answer(grant, id, answer, out),
            // A call is taken up by the connection that made it (its key starts with the grant).
            Request::Resume { grant, request } if !is_request_of(&request, &grant) => {
                Reply::NotAsked
            }
            Request::Resume { ref request, .. } => self.take_up(asker, request, now_ms),
        };
        reply_to(out, asker, reply);
    }

    /// What a tab's message or proof comes to, to the job it asks of.
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
                self.keep_tab(t, out);
                let presence = self.presence.as_ref().map(Held::told);
                send(
                    out,
                    tab,
                    RelayMessage::Welcome { pairing, protocol: PROTOCOL_VERSION, presence },
                );
            }
            TabAction::Verify(t, proof) => {
                // The challenge is used before the check: a second hello meanwhile proves nothing.
                self.keep_tab(t, out);
                out.push(Effect::Verify(tab, proof));
            }
            TabAction::Close(code, reason) => self.close(tab, code, reason, now_ms, out),
            TabAction::Describe(named) => {
                self.code_command(tab, &named, Command::Describe, now_ms, out)
            }
            TabAction::Approve(named, proof) => self.approve(tab, named, proof, now_ms, out),
            TabAction::Enrol(enrolment) => self.enrol(tab, enrolment, out),
            TabAction::Deny(named) => self.code_command(tab, &named, Command::Deny, now_ms, out),
            TabAction::RefuseCode(code, sentence) => {
                send(out, tab, RelayMessage::Refused { code, sentence: sentence.into() });
            }
            TabAction::Update(t) => {
                self.keep_tab(t, out);
            }
            TabAction::Asking(call, sentence) => {
                self.asking(tab, call, &sentence, now_ms, entropy, out);
            }
            TabAction::Answered(call) => self.answered(tab, call, out),
            TabAction::PersonStep => self.person_stepped(now_ms, out),
            TabAction::ListConnections => self.send_connections(tab, now_ms, out),
            TabAction::Forget(id) => {
                self.delete_grant(&id, out);
                self.send_connections(tab, now_ms, out);
            }
            TabAction::Stopped(id, stopped) => self.set_stopped(id, stopped, out),
            TabAction::Result(call, outcome) => self.result(tab, call, outcome, now_ms, out),
            TabAction::Tools(list) => {
                let json = tabrelay_bundle::fields::json_text(&list.to_value());
                let statement = self.stated.entry_or_default(tab);
                statement.tools = Some(list);
                statement.tools_text = Some(json.clone());
                out.push(Effect::StoreStated(tab, Stated::Tools(json)));
            }
            TabAction::RefuseTools(sentence) => {
                send(out, tab, RelayMessage::ToolsRefused { sentence });
            }
            TabAction::View(dataset) => {
                self.stated.entry_or_default(tab).dataset = Some(dataset.clone());
                out.push(Effect::StoreStated(tab, Stated::Dataset(dataset)));
            }
            TabAction::Ignore => {}
        }
    }
}

/// Sends `message` to tab `tab` (one copy of the push for every message).
fn send(out: &mut Vec<Effect>, tab: u64, message: RelayMessage) {
    out.push(Effect::Send(tab, message));
}

/// Answers `asker` (one copy of the push for every answer).
fn reply_to(out: &mut Vec<Effect>, asker: Asker, reply: Reply) {
    out.push(Effect::Reply(asker, reply));
}

/// Tells tab `tab` to stop call `id`.
fn cancel(out: &mut Vec<Effect>, tab: u64, id: u64) {
    send(out, tab, RelayMessage::Cancel { id });
}

/// The JSON-RPC error codes a failed task carries: the relay could not carry its call, or the
/// tab asked for input the client did not declare it can give.
const INTERNAL_ERROR: i64 = -32603;
const MISSING_CAPABILITY: i64 = -32021;
