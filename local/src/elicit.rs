//! A card answered in the agent app: where the agent app declared elicitation (form mode) at
//! `initialize`, each card a tab shows for one of its calls is asked in the agent app too
//! (`elicitation/create`: Allow once or Deny; only Deny for a card whose Allow needs the
//! person's presence, `app_may_allow` false). The first answer wins, exactly once: the agent
//! app's goes to the tab as `elicited` (the card goes as if clicked, the tab deciding: it
//! refuses an Allow its card may not take from there); the tab's (its `answered`, or the
//! call's result) ends the question in the agent app (`notifications/cancelled`), whose later
//! answer is then dropped here. An agent app that did not declare it is asked nothing.
//!
//! This is the local way in's alone: an agent app on the person's own computer shows its own
//! prompt to the person (the relay asks no remote agent's app, which could be the model's own
//! harness answering).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};
// The card's answers and their names, as the tab's card has them.
use tabrelay_bundle::words::card;

/// The prefix of the ids of the questions asked here (no other request of the server's uses it).
const PREFIX: &str = "tabrelay-card-";
/// What the agent app's prompt adds to the card's sentence.
const ALSO_IN_TAB: &str = "You can answer here or in the app's tab.";
/// What it adds when the card may only be denied here.
const ALLOW_IN_TAB: &str = "Allowing it needs you in the app's tab; here you can only deny it.";
/// The reason the question is withdrawn when the tab answered first.
const ANSWERED_IN_TAB: &str = "The card was answered in the app's tab.";

/// A question asked in an agent app, waiting for its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The request's id (`tabrelay-card-N`).
    pub request: String,
    /// The agent app asked.
    pub agent: u64,
    /// The pairing, tab and call whose card it is.
    pub pairing: String,
    pub tab: u64,
    pub call: u64,
}

/// The cards asked about in agent apps, and what it takes to know whom to ask.
#[derive(Debug, Default)]
pub struct Cards {
    next: u64,
    asked: Vec<Asked>,
    /// The agent apps that declared elicitation in form mode.
    elicits: HashSet<u64>,
    /// Each connection (grant id): the agent app whose calls come through it.
    agents: HashMap<String, u64>,
    /// Each call sent to a tab (pairing, call id): its connection.
    calls: HashMap<(String, u64), String>,
}

impl Cards {
    /// Agent app `agent` said at `initialize` what it can be asked (`params.capabilities`).
    pub fn declared(&mut self, agent: u64, capabilities: Option<&Value>) {
        let form = capabilities
            .and_then(Value::as_object)
            .is_some_and(|c| tabrelay::mcp::session::Declared::of(c).elicitation_form);
        if form {
            self.elicits.insert(agent);
        } else {
            self.elicits.remove(&agent);
        }
    }

    /// Agent app `agent` calls through connection `grant`.
    pub fn calls_through(&mut self, grant: &str, agent: u64) {
        self.agents.insert(grant.to_owned(), agent);
    }

    /// Call `call` of `pairing` went to a tab, through connection `grant`.
    pub fn sent(&mut self, pairing: &str, call: u64, grant: &str) {
        self.calls.insert((pairing.to_owned(), call), grant.to_owned());
    }

    /// The tab shows a card for `call`: the question to write to the agent app that may answer
    /// it (its id and the JSON-RPC request), if any.
    pub fn asking(
        &mut self,
        pairing: &str,
        tab: u64,
        call: u64,
        sentence: &str,
        may_allow: bool,
    ) -> Option<(u64, String)> {
        let grant = self.calls.get(&(pairing.to_owned(), call))?;
        let agent = *self.agents.get(grant)?;
        let asked_already = self.asked.iter().any(|a| a.pairing == pairing && a.call == call);
        if !self.elicits.contains(&agent) || asked_already {
            return None;
        }
        self.next += 1;
        let request = format!("{PREFIX}{}", self.next);
        let (choices, names, more) = if may_allow {
            (json!(["allow_once", "deny"]), json!([card::ONCE_NAME, card::DENY_NAME]), ALSO_IN_TAB)
        } else {
            (json!(["deny"]), json!([card::DENY_NAME]), ALLOW_IN_TAB)
        };
        let message = json!({
            "jsonrpc": "2.0", "id": request, "method": "elicitation/create",
            "params": {
                "message": format!("{sentence} {more}"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {"answer": {
                        "type": "string", "title": "Your answer", "enum": choices, "enumNames": names
                    }},
                    "required": ["answer"]
                }
            }
        });
        let asked = Asked { request, agent, pairing: pairing.to_owned(), tab, call };
        self.asked.push(asked);
        Some((agent, tabrelay_bundle::fields::json_text(&message)))
    }

    /// Whether `message` (a JSON-RPC message of an agent app) answers a question of these: the
    /// question it answered, if it still waited, and the card's choice (`once`, `deny`, or
    /// none: dismissed, the card waits in the tab).
    pub fn answer(
        &mut self,
        agent: u64,
        message: &Value,
    ) -> Option<Option<(Asked, Option<&'static str>)>> {
        let id = message.get("id").and_then(Value::as_str)?;
        if !id.starts_with(PREFIX) || message.get("method").is_some() {
            return None;
        }
        let Some(i) = self.asked.iter().position(|a| a.request == id && a.agent == agent) else {
            return Some(None);
        };
        let asked = self.asked.remove(i);
        let result = message.get("result");
        let action = result.and_then(|r| r.get("action")).and_then(Value::as_str);
        let answer = result.and_then(|r| r.pointer("/content/answer")).and_then(Value::as_str);
        let choice = match (action, answer) {
            (Some("accept"), Some("allow_once")) => Some(card::ONCE),
            (Some("accept"), Some("deny")) | (Some("decline"), _) => Some(card::DENY),
            _ => None,
        };
        Some(Some((asked, choice)))
    }

    /// The tab answered `call`'s card (or the call ended, or went): the question withdrawn from
    /// the agent app asked, if one waits (its agent and the notification to write).
    pub fn settled(&mut self, pairing: &str, call: u64, ended: bool) -> Option<(u64, String)> {
        if ended {
            self.calls.remove(&(pairing.to_owned(), call));
        }
        let i = self.asked.iter().position(|a| a.pairing == pairing && a.call == call)?;
        let asked = self.asked.remove(i);
        Some((asked.agent, withdrawn(&asked.request)))
    }

    /// Tab `tab` of `pairing` went: its questions withdrawn.
    pub fn tab_gone(&mut self, pairing: &str, tab: u64) -> Vec<(u64, String)> {
        let (gone, kept) = std::mem::take(&mut self.asked)
            .into_iter()
            .partition(|a| a.pairing == pairing && a.tab == tab);
        self.asked = kept;
        gone.iter().map(|a: &Asked| (a.agent, withdrawn(&a.request))).collect()
    }

    /// Agent app `agent` went: its questions, connections and their calls forgotten (a call
    /// that ended with no result or cancel seen is kept no longer than its agent app).
    pub fn agent_gone(&mut self, agent: u64) {
        self.asked.retain(|a| a.agent != agent);
        self.elicits.remove(&agent);
        self.agents.retain(|_, a| *a != agent);
        let agents = &self.agents;
        self.calls.retain(|_, grant| agents.contains_key(grant));
    }
}

/// The notification that withdraws question `request`.
fn withdrawn(request: &str) -> String {
    let message = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": request, "reason": ANSWERED_IN_TAB}
    });
    tabrelay_bundle::fields::json_text(&message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked_card(cards: &mut Cards, may_allow: bool) -> (u64, Value) {
        cards.declared(1, Some(&json!({"elicitation": {}})));
        cards.calls_through("g1", 1);
        cards.sent("p", 7, "g1");
        let (agent, text) =
            cards.asking("p", 3, 7, "Claude asks to add. Allow?", may_allow).unwrap();
        (agent, serde_json::from_str(&text).unwrap())
    }

    #[test]
    fn an_agent_app_gone_leaves_none_of_its_calls_kept() {
        let mut cards = Cards::default();
        asked_card(&mut cards, true);
        cards.calls_through("g2", 2);
        cards.sent("p", 8, "g2");
        cards.agent_gone(1);
        assert_eq!(cards.calls.len(), 1);
        assert!(cards.calls.contains_key(&("p".to_owned(), 8)));
        assert!(cards.asked.is_empty());
    }

    #[test]
    fn an_agent_app_that_did_not_declare_elicitation_is_asked_nothing() {
        let mut cards = Cards::default();
        cards.declared(1, Some(&json!({"roots": {}})));
        cards.calls_through("g1", 1);
        cards.sent("p", 7, "g1");
        assert_eq!(cards.asking("p", 3, 7, "Allow?", true), None);
    }

    #[test]
    fn the_first_answer_wins_and_the_later_one_is_dropped() {
        let mut cards = Cards::default();
        let (agent, question) = asked_card(&mut cards, true);
        assert_eq!(agent, 1);
        assert_eq!(
            question["params"]["requestedSchema"]["properties"]["answer"]["enum"],
            json!(["allow_once", "deny"])
        );
        // The tab answered first: withdrawn, and the agent app's answer then does nothing.
        let (to, note) = cards.settled("p", 7, false).unwrap();
        assert!(to == 1 && note.contains("notifications/cancelled"));
        let late = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"answer": "allow_once"}}});
        assert_eq!(cards.answer(1, &late), Some(None));
    }

    #[test]
    fn an_answer_in_the_agent_app_is_the_cards_choice() {
        let mut cards = Cards::default();
        let (_, question) = asked_card(&mut cards, false);
        assert_eq!(
            question["params"]["requestedSchema"]["properties"]["answer"]["enum"],
            json!(["deny"])
        );
        let denied =
            json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}});
        let (asked, choice) = cards.answer(1, &denied).unwrap().unwrap();
        assert_eq!((asked.call, asked.tab, choice), (7, 3, Some("deny")));
        assert_eq!(cards.settled("p", 7, true), None, "answered already: nothing to withdraw");
    }
}
