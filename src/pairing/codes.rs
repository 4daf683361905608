//! Connect codes as a pairing's tabs decide them: the allowance of wrong codes, and what a tab
//! is told of a code's reply.

use tabrelay_bundle::protocol::RelayMessage;

use super::grants::Grant;
use super::remove_where;
use crate::limits::{WRONG_CODES_ALLOWED, WRONG_CODE_WINDOW_MS};
use crate::oauth::connect::{refusal, CodeReply, Command};

/// A pairing's recent wrong connect codes: a few a minute, then every code is refused until
/// the minute passes (so no tab can search the code space). Kept in storage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WrongCodes {
    at: Vec<u64>,
}

impl WrongCodes {
    /// Whether the pairing may try a code at `now_ms`.
    pub fn allows(&mut self, now_ms: u64) -> bool {
        remove_where(&mut self.at, &|t| now_ms >= t + WRONG_CODE_WINDOW_MS);
        self.at.len() < WRONG_CODES_ALLOWED
    }

    /// Whether no wrong code is recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// A code the pairing tried was wrong.
    pub fn record(&mut self, now_ms: u64) {
        self.at.push(now_ms);
    }
}

/// What a tab is told of the reply of a code's object to its `command` (a describe, an approve
/// or a deny of the code or link reference the tab sent, echoed as `said`), with the pairing's
/// connections of the same client in a description (`grants`), and whether the code counts as
/// a wrong one.
#[must_use]
pub fn told(
    said: &str,
    command: &Command,
    reply: CodeReply,
    grants: &[Grant],
) -> (RelayMessage, bool) {
    let code = said.to_owned();
    match (command, reply) {
        (Command::Approve { .. }, CodeReply::Described(d)) => {
            // The name copied, so the description is dropped whole.
            (RelayMessage::Approved { code, client: d.requester.client_name.clone() }, false)
        }
        (Command::Approve { linked: true, .. }, CodeReply::ToConfirm { client, secret }) => {
            // The ticket names the link (the confirm page reads the code from it) and the
            // approval's secret: nothing in it is the code.
            let ticket = crate::oauth::connect::ticket(&code, &secret);
            (RelayMessage::Confirm { code, client, ticket }, false)
        }
        (Command::Deny, CodeReply::Described(_)) => (RelayMessage::Denied { code }, false),
        (_, CodeReply::Described(d)) => {
            let mut connections = Vec::new();
            for g in grants {
                if g.is_of(&d.client_id, d.requester.verified.as_deref()) {
                    connections.push(g.info());
                }
            }
            let message = RelayMessage::Described {
                code,
                client: d.requester.client_name,
                host: d.requester.host,
                verified: d.requester.verified,
                age_ms: d.age_ms,
                place: d.requester.place,
                lookalike: d.lookalike,
                name_warning: d.name_warning,
                connections,
            };
            (message, false)
        }
        (_, CodeReply::Refused { sentence }) => (RelayMessage::Refused { code, sentence }, true),
        _ => (RelayMessage::Refused { code, sentence: refusal::UNKNOWN.into() }, true),
    }
}

tabrelay_bundle::codec!(WrongCodes, "wrong codes", { at });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::testing::round_trip;

    #[test]
    fn a_tab_is_told_what_its_code_came_to_and_a_refusal_counts_as_wrong() {
        let described = CodeReply::Described(crate::oauth::connect::Description {
            requester: crate::oauth::connect::Requester {
                client_name: "Claude".into(),
                host: "claude.ai".into(),
                place: None,
                verified: None,
            },
            client_id: "cid".into(),
            age_ms: 5,
            lookalike: Some("Claude".into()),
            name_warning: Some("looks_like".into()),
        });
        let c = || "ABCDE12345".to_owned();
        let told = |command: &Command, reply: CodeReply| told("ABCDE12345", command, reply, &[]);
        let approve = Command::Approve { pairing: "p".into(), linked: false };
        assert_eq!(
            told(&approve, described.clone()),
            (RelayMessage::Approved { code: c(), client: "Claude".into() }, false)
        );
        assert_eq!(
            told(&Command::Deny, described.clone()),
            (RelayMessage::Denied { code: c() }, false)
        );
        assert!(matches!(
            told(&Command::Describe, described),
            (RelayMessage::Described { lookalike: Some(_), age_ms: 5, .. }, false)
        ));
        let refused = CodeReply::Refused { sentence: refusal::USED.into() };
        assert_eq!(
            told(&approve, refused),
            (RelayMessage::Refused { code: c(), sentence: refusal::USED.into() }, true)
        );
        assert_eq!(
            told(&approve, CodeReply::Created),
            (RelayMessage::Refused { code: c(), sentence: refusal::UNKNOWN.into() }, true)
        );
        // A ticket to confirm answers only a linked approval.
        let to_confirm = CodeReply::ToConfirm { client: "Claude".into(), secret: "s".into() };
        assert!(told(&approve, to_confirm).1, "a typed approval is never told to confirm");
    }

    #[test]
    fn wrong_codes_read_back_as_written() {
        let mut wrong = WrongCodes::default();
        round_trip(&wrong);
        wrong.allows(5);
        wrong.record(5);
        round_trip(&wrong);
    }

    #[test]
    fn a_pairing_gets_a_few_wrong_codes_a_minute() {
        let mut wrong = WrongCodes::default();
        for i in 0..WRONG_CODES_ALLOWED as u64 {
            assert!(wrong.allows(i));
            wrong.record(i);
        }
        assert!(!wrong.allows(10));
        assert!(wrong.allows(WRONG_CODE_WINDOW_MS + 1), "a minute later it may try again");
    }
}
