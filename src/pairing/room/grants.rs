//! The Room's grants and codes: a tab's command on a connect code, the connections made,
//! refreshed, stopped, revoked or forgotten, and what a forgotten one set going.

use tabrelay_bundle::fields::json_text;
use tabrelay_bundle::protocol::RelayMessage;

use super::{cancel, reply_to, send, Effect, Room};
use crate::crypto::Entropy;
use crate::limits::REPLAYED_KEPT_MS;
use crate::oauth::connect::{refusal, CodeReply, Command, Named};
use crate::pairing::codes::{self};
use crate::pairing::grants::{self, Grant, Refreshed};
use crate::pairing::take_where;
use crate::pairing::wire::{
    CallEvent, CallReply, GrantReply, GrantRequest, RefreshReply, RefreshRequest, Reply,
    RevokeRequest,
};
use crate::sentences;

impl Room {
    /// A tab's describe, approve or deny of a code: within the pairing's allowance of wrong
    /// codes, a code this relay made, and (to approve) room for another connection, it goes to
    /// the code's object.
    pub(super) fn code_command(
        &mut self,
        tab: u64,
        named: &Named,
        command: Command,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let said = named.as_str();
        let sentence = if !self.wrong_codes.allows(now_ms) {
            sentences::TOO_MANY_WRONG_CODES
        } else if let Some(code) = self.keys.as_ref().and_then(|k| named.code(k)) {
            // Approving never pushes out a connection: the person forgets one first.
            if !matches!(command, Command::Approve { .. }) || self.has_room(now_ms, out) {
                out.push(Effect::AskCode(tab, code, command, said.to_owned()));
                return;
            }
            sentences::TOO_MANY_CONNECTIONS
        } else {
            // A code (or link) this relay did not make is wrong without asking any code's object.
            self.wrong_codes.record(now_ms);
            out.push(Effect::StoreWrongCodes(json_text(&self.wrong_codes)));
            refusal::UNKNOWN
        };
        send(out, tab, RelayMessage::Refused { code: said.into(), sentence: sentence.into() });
    }

    /// A code's object replied to tab `tab`'s command: the tab is told, a wrong code counted.
    pub(super) fn code_replied(
        &mut self,
        tab: u64,
        said: String,
        command: &Command,
        reply: Option<CodeReply>,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let (message, wrong) = match reply {
            Some(reply) => codes::told(&said, command, reply, &self.grants),
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
            out.push(Effect::StoreWrongCodes(json_text(&self.wrong_codes)));
        }
        if self.tabs.contains_key(&tab) {
            send(out, tab, message);
        }
    }

    /// A new grant for a redeemed code; it removes no other.
    pub(super) fn new_grant(
        &mut self,
        request: GrantRequest,
        replayed: &[u64],
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) -> GrantReply {
        if !grants::may_make(replayed, now_ms) {
            return GrantReply::Replayed;
        }
        if !self.has_room(now_ms, out) {
            return GrantReply::Full;
        }
        let (grant, secret) =
            Grant::new(request.id, request.client_id, request.requester, now_ms, entropy);
        let id = grant.id.clone();
        self.store_grant(grant, out);
        // Every tab lists the new connection at once, not at its first call.
        // By index: sending the list needs the room itself (it drops expired grants first).
        for i in 0..self.tabs.0.len() {
            let tab = &self.tabs.0[i];
            if tab.proven {
                let number = tab.number;
                self.send_connections(number, now_ms, out);
            }
        }
        GrantReply::Made { grant: id, secret }
    }

    /// A client refreshes its grant: a new secret, or (a secret used twice) the grant goes.
    pub(super) fn refresh(
        &mut self,
        request: &RefreshRequest,
        now_ms: u64,
        entropy: &mut dyn Entropy,
        out: &mut Vec<Effect>,
    ) -> RefreshReply {
        let refused = |d: &str| RefreshReply::Refused { description: d.to_owned() };
        let grant =
            self.grants.iter().find(|g| g.id == request.grant && g.client_id == request.client_id);
        match grant.cloned() {
            None => refused(sentences::REFRESH_REFUSED),
            Some(grant) => match grant.refresh(&request.secret, now_ms, entropy) {
                Refreshed::Rotated { grant, secret } => {
                    let (client_name, host) =
                        (grant.requester.client_name.clone(), grant.requester.host.clone());
                    self.store_grant(*grant, out);
                    RefreshReply::Rotated { secret, client_name, host }
                }
                Refreshed::Reused => {
                    self.delete_grant(&request.grant, out);
                    refused(sentences::REFRESH_REUSED)
                }
                Refreshed::Unknown => refused(sentences::REFRESH_REFUSED),
            },
        }
    }

    /// A client revokes its grant (RFC 7009), with a secret it was issued or an access token
    /// the Worker verified.
    pub(super) fn revoke(&mut self, request: &RevokeRequest, out: &mut Vec<Effect>) {
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
    }

    /// The code making `grant` was replayed: the grant goes, and its making is refused for a
    /// while should it come later.
    pub(super) fn replayed(&mut self, grant: &str, now_ms: u64, out: &mut Vec<Effect>) {
        self.replayed_until = self.replayed_until.max(now_ms + REPLAYED_KEPT_MS);
        out.push(Effect::RecordReplayed(grant.to_owned(), now_ms + REPLAYED_KEPT_MS));
        self.delete_grant(grant, out);
    }

    /// The person stopped connection `id` in a tab (or let it go on): stored, every tab told.
    pub(super) fn set_stopped(&mut self, id: String, stopped: bool, out: &mut Vec<Effect>) {
        // Changed in place: one copy, the stored one.
        let grant = self.grants.iter_mut().find(|g| g.id == id && g.stopped != stopped);
        if let Some(grant) = grant {
            grant.stopped = stopped;
            out.push(Effect::StoreGrant(grant.clone()));
            for t in self.tabs.values().filter(|t| t.proven) {
                let connection = id.clone();
                send(out, t.number, RelayMessage::Stopped { connection, stopped });
            }
        }
    }

    pub(super) fn send_connections(&mut self, tab: u64, now_ms: u64, out: &mut Vec<Effect>) {
        let mut list = Vec::new();
        for grant in self.live_grants(now_ms, out) {
            list.push(grant.info());
        }
        send(out, tab, RelayMessage::Connections { list });
    }

    pub(super) fn live(&self, grant: &str) -> bool {
        self.grants.iter().any(|g| g.id == grant)
    }

    /// The grants, those unused for too long dropped first.
    fn live_grants(&mut self, now_ms: u64, out: &mut Vec<Effect>) -> &[Grant] {
        while let Some(expired) = self.grants.iter().find(|g| g.expired(now_ms)) {
            let id = expired.id.clone();
            self.delete_grant(&id, out);
        }
        &self.grants
    }

    fn has_room(&mut self, now_ms: u64, out: &mut Vec<Effect>) -> bool {
        grants::has_room(self.live_grants(now_ms, out), now_ms)
    }

    fn store_grant(&mut self, grant: Grant, out: &mut Vec<Effect>) {
        out.push(Effect::StoreGrant(grant.clone()));
        match self.grants.iter_mut().find(|g| g.id == grant.id) {
            Some(g) => *g = grant,
            None => self.grants.push(grant),
        }
    }

    pub(super) fn delete_grant(&mut self, id: &str, out: &mut Vec<Effect>) {
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
            send(out, tab.number, RelayMessage::Forgotten { connection });
        }
        let before = json_text(self.calls.left_calls());
        let (flights, left) = self.calls.forget_grant(grant);
        for flight in &flights {
            cancel(out, flight.tab, flight.id);
            if let Some(waiter) = flight.waiter() {
                reply_to(out, waiter.asker, forgotten());
            }
        }
        for &(call, tab) in &left {
            cancel(out, tab, call);
        }
        self.store_left_if_changed(&before, out);
        self.resume.forget_grant(grant);
        // Its listen streams end (any reply but a listen event ends one).
        for (asker, _) in &take_where(&mut self.listeners, &|(_, g)| g == grant) {
            reply_to(out, *asker, forgotten());
        }
        for &asker in &self.questions.forget_grant(grant) {
            reply_to(out, asker, forgotten());
        }
        // Their calls in flight were dropped with the connection's others.
        for task in &take_where(&mut self.tasks, &|t| t.grant == grant) {
            out.push(Effect::DeleteTask(task.id.clone()));
        }
    }
}
