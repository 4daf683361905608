//! A tab's questions asked of a session-era client in the agent app: the requests of a tab's
//! `inputRequired` that the client declared it can take go to it as JSON-RPC requests on the
//! call's stream, each with an id the relay makes (unguessable: a MAC over the call and its
//! round); when the client has answered them all, the call goes to the tab again with
//! `input: {responses, state}`, exactly what a 2026-07-28 client's retry hands it.

use serde_json::{Map, Value};

use tabrelay_bundle::protocol::call_input;

use super::session::Declared;
use super::sse_event;
use crate::jsonrpc::{object, Raw};
use crate::keys::{Keys, Purpose};

/// One round of questions on a call's stream, waiting for the client's answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// Each question's id, with the tab's key it answers.
    asked: Vec<(String, String)>,
    /// The tab's state for its next round.
    state: Option<Value>,
}

/// What a call's round asks the client.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundQuestions {
    /// The round, to be given the answers.
    pub round: Round,
    /// The questions as server-sent events, in the tab's order of keys.
    pub text: String,
}

/// The questions of a tab's `inputRequired` that a client that declared `declared` can take,
/// for the call named `call` (its request key and start) in its round `round`; the others
/// are dropped. None: it can take none.
#[must_use]
pub fn ask(
    keys: &Keys,
    call: &str,
    round: u64,
    declared: &Declared,
    requests: &Map<String, Value>,
    state: Option<&Value>,
) -> Option<RoundQuestions> {
    let mut asked = Vec::new();
    let mut text = String::new();
    for (key, request) in requests.iter().filter(|(_, r)| declared.can_take(r)) {
        let signed = format!("{call}\0{round}\0{key}");
        let tag = keys.current.mac(Purpose::Question, signed.as_bytes());
        let id = format!("tabrelay-{}", crate::crypto::base64url(&tag[..18]));
        text.push_str(&sse_event(&object(&mut |o| {
            o.text("jsonrpc", "2.0");
            o.text("id", &id);
            o.field("method", request.get("method").unwrap_or(&Value::Null));
            match request.get("params") {
                Some(params @ Value::Object(_)) => o.field("params", params),
                _ => o.field("params", &Raw("{}")),
            }
        })));
        asked.push((id, key.clone()));
    }
    if asked.is_empty() {
        return None;
    }
    Some(RoundQuestions { round: Round { asked, state: state.cloned() }, text })
}

impl Round {
    /// The questions' ids.
    #[must_use]
    pub fn ids(&self) -> Vec<String> {
        let mut ids = Vec::with_capacity(self.asked.len());
        for (id, _) in &self.asked {
            ids.push(id.clone());
        }
        ids
    }

    /// The call's input for the tab from the client's answers (id → answer): each answer
    /// under the tab's key, and the tab's state. An answer missing reads as null.
    #[must_use]
    pub fn input(self, answers: &Value) -> Value {
        let mut responses = Map::new();
        for (id, key) in self.asked {
            responses.insert(key, answers.get(&id).cloned().unwrap_or(Value::Null));
        }
        call_input(Value::Object(responses), self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn requests() -> Map<String, Value> {
        json!({
            "name": {"method": "elicitation/create", "params": {"message": "Name?"}},
            "draft": {"method": "sampling/createMessage", "params": {"maxTokens": 5}},
            "where": {"method": "roots/list"},
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn events(text: &str) -> Vec<Value> {
        text.split("\n\n")
            .filter_map(|e| e.strip_prefix("event: message\ndata: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn only_what_the_client_can_take_is_asked_each_with_an_id_of_the_relays() {
        let declared = Declared { elicitation_form: true, roots: true, ..Declared::default() };
        let state = json!({"round": 1});
        let asked = ask(&keys(), "g1 7@5", 1, &declared, &requests(), Some(&state)).unwrap();
        let sent = events(&asked.text);
        let methods: Vec<&str> = sent.iter().map(|m| m["method"].as_str().unwrap()).collect();
        assert_eq!(methods, ["elicitation/create", "roots/list"], "sampling was not declared");
        assert_eq!(sent[0]["params"]["message"], "Name?");
        assert_eq!(sent[1]["params"], json!({}), "params are always an object");
        let ids = asked.round.ids();
        assert_eq!(sent.iter().map(|m| m["id"].as_str().unwrap()).collect::<Vec<_>>(), ids);
        assert!(ids.iter().all(|id| id.starts_with("tabrelay-") && id.len() > 30));
        // Another round, another call, another key: other ids.
        let again = ask(&keys(), "g1 7@5", 2, &declared, &requests(), None).unwrap();
        let other = ask(&keys(), "g2 7@5", 1, &declared, &requests(), None).unwrap();
        let rekeyed = Keys::new(&"z".repeat(32), None).unwrap();
        let rekeyed = ask(&rekeyed, "g1 7@5", 1, &declared, &requests(), None).unwrap();
        for different in [again, other, rekeyed] {
            assert!(different.round.ids().iter().all(|id| !ids.contains(id)));
        }
        assert_eq!(ask(&keys(), "c", 1, &Declared::default(), &requests(), None), None);
    }

    #[test]
    fn the_answers_go_to_the_tab_under_its_keys_with_its_state() {
        let declared = Declared { elicitation_form: true, sampling: true, ..Declared::default() };
        let state = json!({"round": 1});
        let asked = ask(&keys(), "c", 1, &declared, &requests(), Some(&state)).unwrap();
        let ids = asked.round.ids();
        let answers = json!({
            ids[0].clone(): {"model": "m", "content": {"type": "text", "text": "hi"}},
            ids[1].clone(): {"action": "accept", "content": {"name": "Ada"}},
        });
        let input = asked.round.input(&answers);
        assert_eq!(
            input,
            json!({
                "responses": {
                    "draft": {"model": "m", "content": {"type": "text", "text": "hi"}},
                    "name": {"action": "accept", "content": {"name": "Ada"}},
                },
                "state": {"round": 1},
            })
        );
        let stateless = ask(&keys(), "c", 1, &declared, &requests(), None).unwrap();
        assert!(stateless.round.input(&json!({})).get("state").is_none());
    }
}
