//! The pairing's call routing: which tab gets a call, how a tab proves itself, how calls are
//! grouped into turns, and the messages between the Worker and the pairing's Durable Object.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tabrelay_bundle::protocol::{close, Connection, Outcome, TabMessage, PROTOCOL_VERSION};

use crate::oauth::connect::{refusal, ConnectCode};
use crate::oauth::sha256_hex;

/// How long a call waits for the tab, in milliseconds (under Claude's 240 s).
pub const TAB_CALL_WAIT_MS: u64 = 225_000;
/// A connection's calls share a turn until someone else calls or this long passes.
pub const AGENT_TURN_IDLE_MS: u64 = 120_000;

/// What the Worker asks the pairing to do with a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRequest {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub args: Value,
    /// The agent's name.
    pub agent: String,
    /// The connection it came through.
    pub connection: Connection,
}

/// What the pairing answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallAnswer {
    /// The tab answered.
    Answered {
        /// Its outcome.
        outcome: Outcome,
    },
    /// The relay could not carry the call; the sentence says why.
    NotCarried {
        /// For the agent.
        sentence: String,
    },
}

/// What the pairing keeps about one tab, in its socket's attachment (survives hibernation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tab {
    /// The pairing the tab named when it connected.
    pub pairing: String,
    /// The tab's number within the pairing (later tabs have higher numbers).
    pub number: u64,
    /// Whether it proved the pairing's secret.
    pub proven: bool,
    /// When its socket opened.
    pub opened_ms: u64,
    /// When it last gained focus (its hello counts as gaining focus).
    pub focus_ms: u64,
}

/// What to do with a message a tab sent.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub enum TabAction {
    /// The tab proved the pairing: store the new state and welcome it.
    Welcome(Tab),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
    /// Ask the code's Durable Object to approve it for this pairing.
    Approve(ConnectCode),
    /// Tell the tab its code was refused, with this sentence.
    RefuseCode(String, &'static str),
    /// Store the tab's new state (focus changed).
    Update(Tab),
    /// Deliver the answer to the waiting call.
    Answer(u64, Outcome),
    /// Nothing to do.
    Ignore,
}

impl Tab {
    /// A tab whose socket just opened for `pairing`.
    #[must_use]
    pub fn opened(pairing: String, number: u64, now_ms: u64) -> Self {
        Self { pairing, number, proven: false, opened_ms: now_ms, focus_ms: now_ms }
    }

    /// Decides what a message from this tab means.
    pub fn on_message(&self, text: &str, now_ms: u64) -> TabAction {
        let Ok(message) = TabMessage::parse(text) else {
            return if self.proven {
                TabAction::Ignore
            } else {
                TabAction::Close(
                    close::PROTOCOL_ERROR,
                    "The first message must be the tab's hello.",
                )
            };
        };
        match (self.proven, message) {
            (false, TabMessage::Hello { protocol, secret }) => {
                if protocol != PROTOCOL_VERSION {
                    TabAction::Close(
                        close::PROTOCOL_ERROR,
                        "This page speaks another version of the relay protocol; reload it.",
                    )
                } else if sha256_hex(secret.as_bytes()) != self.pairing {
                    TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing.")
                } else {
                    TabAction::Welcome(Self { proven: true, focus_ms: now_ms, ..self.clone() })
                }
            }
            (false, _) => {
                TabAction::Close(close::PROOF_FAILED, "The tab must prove its pairing first.")
            }
            (true, TabMessage::Hello { .. }) => TabAction::Ignore,
            (true, TabMessage::Approve { code }) => match ConnectCode::parse(&code) {
                Some(c) => TabAction::Approve(c),
                None => TabAction::RefuseCode(code.chars().take(40).collect(), refusal::MALFORMED),
            },
            (true, TabMessage::Focus { focused }) => {
                if focused {
                    TabAction::Update(Self { focus_ms: now_ms, ..self.clone() })
                } else {
                    TabAction::Ignore
                }
            }
            (true, TabMessage::Result { id, outcome }) => TabAction::Answer(id, outcome),
        }
    }
}

/// The proven tab focused last; among equals, the one opened last (the highest number).
#[must_use]
pub fn route<'a>(tabs: impl IntoIterator<Item = &'a Tab>) -> Option<&'a Tab> {
    tabs.into_iter().filter(|t| t.proven).max_by_key(|t| (t.focus_ms, t.number))
}

/// The turns of a pairing: a connection's calls share one until another connection calls or
/// [`AGENT_TURN_IDLE_MS`] passes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turns {
    last: Option<(String, u64)>,
    turn: u64,
}

impl Turns {
    /// The turn of a call from `connection` at `now_ms`.
    pub fn of_call(&mut self, connection: &str, now_ms: u64) -> u64 {
        let same = matches!(&self.last, Some((c, at)) if c == connection && now_ms < at + AGENT_TURN_IDLE_MS);
        if !same {
            self.turn += 1;
        }
        self.last = Some((connection.to_owned(), now_ms));
        self.turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "k5Hn0Nd3e1oDqJ7b6v1wQm0Kc9eYtq2ZpW8xR4sLfA0";

    fn tab(number: u64) -> Tab {
        Tab::opened(sha256_hex(SECRET.as_bytes()), number, 1000)
    }

    fn hello(secret: &str, protocol: u32) -> String {
        format!(r#"{{"type":"hello","protocol":{protocol},"secret":"{secret}"}}"#)
    }

    #[test]
    fn a_tab_proves_its_pairing_with_the_secret_in_its_first_message() {
        let t = tab(1);
        let TabAction::Welcome(proven) = t.on_message(&hello(SECRET, 1), 2000) else { panic!() };
        assert!(proven.proven);
        assert_eq!(
            t.on_message(&hello("wrong", 1), 2000),
            TabAction::Close(close::PROOF_FAILED, "The tab did not prove its pairing.")
        );
        assert!(matches!(
            t.on_message(&hello(SECRET, 99), 2000),
            TabAction::Close(close::PROTOCOL_ERROR, _)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"focus","focused":true}"#, 2000),
            TabAction::Close(close::PROOF_FAILED, _)
        ));
        assert!(matches!(
            t.on_message("garbage", 2000),
            TabAction::Close(close::PROTOCOL_ERROR, _)
        ));
    }

    #[test]
    fn calls_go_to_the_tab_focused_last_ties_to_the_newest() {
        let TabAction::Welcome(a) = tab(1).on_message(&hello(SECRET, 1), 10) else { panic!() };
        let TabAction::Welcome(b) = tab(2).on_message(&hello(SECRET, 1), 20) else { panic!() };
        assert_eq!(route([&a, &b]).unwrap().number, 2);
        let TabAction::Update(a) = a.on_message(r#"{"type":"focus","focused":true}"#, 30) else {
            panic!()
        };
        assert_eq!(route([&a, &b]).unwrap().number, 1);
        // Losing focus does not hand the calls on: the tab stays the one focused last.
        assert_eq!(a.on_message(r#"{"type":"focus","focused":false}"#, 40), TabAction::Ignore);
        let same = Tab { focus_ms: 30, ..b.clone() };
        assert_eq!(route([&a, &same]).unwrap().number, 2);
        assert!(route([&tab(3)]).is_none(), "an unproven tab gets no calls");
    }

    #[test]
    fn a_proven_tab_approves_codes_and_answers_calls() {
        let TabAction::Welcome(t) = tab(1).on_message(&hello(SECRET, 1), 10) else { panic!() };
        assert!(
            matches!(t.on_message(r#"{"type":"approve","code":"abcde-12345"}"#, 11), TabAction::Approve(c) if c.as_str() == "ABCDE12345")
        );
        assert!(matches!(
            t.on_message(r#"{"type":"approve","code":"nope"}"#, 11),
            TabAction::RefuseCode(_, refusal::MALFORMED)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"result","id":5,"data":[1]}"#, 12),
            TabAction::Answer(5, _)
        ));
        assert_eq!(t.on_message("garbage", 12), TabAction::Ignore);
    }

    #[test]
    fn a_connections_calls_share_a_turn_until_another_calls_or_time_passes() {
        let mut turns = Turns::default();
        let a1 = turns.of_call("a", 0);
        assert_eq!(turns.of_call("a", 1000), a1);
        let b = turns.of_call("b", 2000);
        assert_ne!(b, a1);
        let a2 = turns.of_call("a", 3000);
        assert_ne!(a2, b);
        assert_ne!(turns.of_call("a", 3000 + AGENT_TURN_IDLE_MS), a2);
    }
}
