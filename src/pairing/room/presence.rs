//! The Room's part in the person's proven presence: a tab's presence credential kept (the first
//! one), and an approval of a code let through only with an assertion of that credential made
//! for that code, once the pairing holds one.

use tabrelay_bundle::fields::json_text;
use tabrelay_bundle::protocol::{presence, Assertion, RelayMessage};

use super::{send, Effect, Room};
use crate::oauth::connect::{Command, Named};
use crate::pairing::presence::{Enrolment, Held};
use crate::sentences;

impl Room {
    /// A tab's approval of a code: straight to the code's object while the pairing holds no
    /// presence credential; else its assertion for this very code is checked first (the
    /// signature by the shell, [`Effect::VerifyPresence`]), and without one nothing is asked.
    pub(super) fn approve(
        &mut self,
        tab: u64,
        named: Named,
        proof: Option<(Assertion, String)>,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        let Some(held) = &self.presence else {
            return self.approve_code(tab, named, now_ms, out);
        };
        let origin = self.tabs.get(&tab).map(|t| t.origin.as_str()).unwrap_or_default();
        let checked = proof.and_then(|(a, said)| held.proof(&a, origin, presence::APPROVE, &said));
        match checked {
            Some(proof) => out.push(Effect::VerifyPresence(tab, proof, named)),
            None => self.refuse_unproven(tab, &named, out),
        }
    }

    /// The shell checked the signature of an approval's assertion.
    pub(super) fn presence_proved(
        &mut self,
        tab: u64,
        named: Named,
        valid: bool,
        now_ms: u64,
        out: &mut Vec<Effect>,
    ) {
        if !self.tabs.contains_key(&tab) {
            return;
        }
        if valid {
            self.approve_code(tab, named, now_ms, out);
        } else {
            self.refuse_unproven(tab, &named, out);
        }
    }

    /// Asks the code's object to approve `named` for this pairing.
    fn approve_code(&mut self, tab: u64, named: Named, now_ms: u64, out: &mut Vec<Effect>) {
        let pairing = self.tabs.get(&tab).map(|t| t.pairing.clone()).unwrap_or_default();
        // The relay, not the tab's script, knows a link's reference from a typed code.
        let linked = matches!(named, Named::Linked(_));
        self.code_command(tab, &named, Command::Approve { pairing, linked }, now_ms, out);
    }

    fn refuse_unproven(&self, tab: u64, named: &Named, out: &mut Vec<Effect>) {
        let sentence = sentences::PRESENCE_NOT_PROVEN.into();
        send(out, tab, RelayMessage::Refused { code: named.as_str().into(), sentence });
    }

    /// A tab's presence credential: kept when the pairing holds none and its creation says the
    /// person was verified, and told to every tab; else the tab is told why not.
    pub(super) fn enrol(&mut self, tab: u64, enrolment: Enrolment, out: &mut Vec<Effect>) {
        let Some(t) = self.tabs.get(&tab) else { return };
        let kept = match self.presence {
            Some(_) => Err(sentences::PRESENCE_HELD),
            None => Held::register(&t.origin, &t.pairing, enrolment),
        };
        match kept {
            Ok(held) => {
                out.push(Effect::StorePresence(json_text(&held)));
                for t in self.tabs.values().filter(|t| t.proven) {
                    send(out, t.number, RelayMessage::Presence { held: held.told() });
                }
                self.presence = Some(held);
            }
            Err(sentence) => {
                send(out, tab, RelayMessage::PresenceRefused { sentence: sentence.into() });
            }
        }
    }
}
