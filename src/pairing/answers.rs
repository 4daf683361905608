//! Questions a session-era client was asked on a call's stream (a tab's `inputRequired`
//! passed on as `elicitation/create`, `sampling/createMessage`, `roots/list`), waiting for
//! the client's answers: each answer comes as its own POST, perhaps to another Worker, so the
//! pairing joins them to the request that waits. Only the connection asked may answer, only
//! the ids asked, each once, each of bounded size; each connection holds a bounded number (its
//! share of the pairing's).

use serde_json::{Map, Value};
use tabrelay_bundle::fields::json_text;
use tabrelay_bundle::protocol::MAX_INPUT_REQUESTS;

use super::room::Asker;
use super::{remove_where, take_where};
use crate::limits::{MAX_ANSWER_BYTES, MAX_PENDING_QUESTIONS, MAX_QUESTIONS_PER_CONNECTION};

/// The questions waiting for answers, by the request that waits for them.
#[derive(Debug, Clone, Default)]
pub struct Questions {
    waiting: Vec<Waiting>,
}

#[derive(Debug, Clone)]
struct Waiting {
    asker: Asker,
    grant: String,
    ids: Vec<String>,
    got: Map<String, Value>,
}

/// Why questions cannot wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// None, too many at once, more than the connection's share or the pairing holds, or an
    /// id already waits.
    TooMany,
}

/// What an answer came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Taken {
    /// Kept; other questions of its request are still unanswered.
    Kept,
    /// The last one: this request gets every answer (id → answer).
    All(Asker, Value),
    /// Not a question of this connection that waits (another's, unknown, answered already),
    /// or too large.
    NotAsked,
}

impl Questions {
    /// Request `asker` of connection `grant` waits for answers to `ids`.
    pub fn ask(&mut self, asker: Asker, grant: &str, ids: Vec<String>) -> Result<(), Refused> {
        let (mut held, mut held_here) = (0, 0);
        for w in &self.waiting {
            held += w.ids.len();
            if w.grant == grant {
                held_here += w.ids.len();
            }
        }
        let known = |id: &String| self.waiting.iter().any(|w| w.ids.contains(id));
        // A few ids at most (checked first): each against those before it, no sort.
        let repeated = || ids.iter().enumerate().any(|(i, id)| ids[..i].contains(id));
        if ids.is_empty()
            || ids.len() > MAX_INPUT_REQUESTS
            || repeated()
            || held_here + ids.len() > MAX_QUESTIONS_PER_CONNECTION
            || held + ids.len() > MAX_PENDING_QUESTIONS
            || ids.iter().any(known)
        {
            return Err(Refused::TooMany);
        }
        self.waiting.push(Waiting { asker, grant: grant.to_owned(), ids, got: Map::new() });
        Ok(())
    }

    /// Connection `grant` answers question `id`.
    pub fn answer(&mut self, grant: &str, id: &str, answer: Value) -> Taken {
        // Kept as a tree until the last answer comes: counted as the tree takes memory.
        let size = json_text(&answer).len() + super::tree_bytes(&answer);
        let Some(i) = self.waiting.iter().position(|w| {
            w.grant == grant && w.ids.iter().any(|q| q == id) && !w.got.contains_key(id)
        }) else {
            return Taken::NotAsked;
        };
        if size > MAX_ANSWER_BYTES {
            return Taken::NotAsked;
        }
        let w = &mut self.waiting[i];
        w.got.insert(id.to_owned(), answer);
        if w.got.len() < w.ids.len() {
            return Taken::Kept;
        }
        let w = self.waiting.swap_remove(i);
        Taken::All(w.asker, Value::Object(w.got))
    }

    /// How many questions of connection `grant` wait for answers.
    #[must_use]
    pub fn held_by(&self, grant: &str) -> usize {
        self.waiting.iter().filter(|w| w.grant == grant).map(|w| w.ids.len()).sum()
    }

    /// The request stopped waiting: its questions go (a late answer is not asked).
    pub fn gone(&mut self, asker: Asker) {
        remove_where(&mut self.waiting, &|w| w.asker == asker);
    }

    /// Connection `grant` is gone: its questions go; the requests that waited for them.
    pub fn forget_grant(&mut self, grant: &str) -> Vec<Asker> {
        let mut askers = Vec::new();
        for gone in &take_where(&mut self.waiting, &|w| w.grant == grant) {
            askers.push(gone.asker);
        }
        askers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn the_answers_go_to_the_request_when_all_are_in() {
        let mut q = Questions::default();
        q.ask(1, "g1", ids(&["a", "b"])).unwrap();
        assert_eq!(q.answer("g1", "a", json!({"action": "accept"})), Taken::Kept);
        assert_eq!(q.answer("g1", "a", json!({})), Taken::NotAsked, "once each");
        let all = q.answer("g1", "b", json!({"error": {"code": -1}}));
        assert_eq!(
            all,
            Taken::All(1, json!({"a": {"action": "accept"}, "b": {"error": {"code": -1}}}))
        );
        assert_eq!(q.answer("g1", "b", json!({})), Taken::NotAsked, "nothing waits any more");
    }

    #[test]
    fn only_the_connection_asked_answers_and_only_what_was_asked() {
        let mut q = Questions::default();
        q.ask(1, "g1", ids(&["a"])).unwrap();
        assert_eq!(q.answer("g2", "a", json!({})), Taken::NotAsked);
        assert_eq!(q.answer("g1", "z", json!({})), Taken::NotAsked);
        let big = json!({"text": "x".repeat(MAX_ANSWER_BYTES)});
        assert_eq!(q.answer("g1", "a", big), Taken::NotAsked);
        assert_eq!(q.answer("g1", "a", json!({})), Taken::All(1, json!({"a": {}})));
    }

    #[test]
    fn an_answer_counts_as_the_memory_its_tree_takes() {
        let mut q = Questions::default();
        q.ask(1, "g1", ids(&["a", "b"])).unwrap();
        // 40 KB of JSON, 20,000 values of 24 bytes in memory: refused.
        let zeros = json!({"n": vec![0; 20_000]});
        assert!(json_text(&zeros).len() < MAX_ANSWER_BYTES);
        assert_eq!(q.answer("g1", "a", zeros), Taken::NotAsked);
        // As much JSON in one string is kept.
        assert_eq!(q.answer("g1", "a", json!({"text": "x".repeat(40_000)})), Taken::Kept);
    }

    #[test]
    fn a_request_that_goes_takes_its_questions_with_it() {
        let mut q = Questions::default();
        q.ask(1, "g1", ids(&["a"])).unwrap();
        q.gone(1);
        assert_eq!(q.answer("g1", "a", json!({})), Taken::NotAsked);
    }

    #[test]
    fn a_forgotten_connections_questions_go_with_it() {
        let mut q = Questions::default();
        q.ask(1, "g1", ids(&["a"])).unwrap();
        q.ask(2, "g2", ids(&["b"])).unwrap();
        assert_eq!(q.forget_grant("g1"), vec![1]);
        assert_eq!(q.answer("g1", "a", json!({})), Taken::NotAsked);
        assert_eq!(q.answer("g2", "b", json!({})), Taken::All(2, json!({"b": {}})));
    }

    #[test]
    fn a_connection_holds_a_bounded_number_of_questions_and_leaves_the_others_theirs() {
        let mut q = Questions::default();
        assert_eq!(q.ask(1, "g1", Vec::new()), Err(Refused::TooMany));
        assert_eq!(q.ask(1, "g1", ids(&["a", "a"])), Err(Refused::TooMany));
        let many: Vec<String> = (0..=MAX_INPUT_REQUESTS).map(|i| i.to_string()).collect();
        assert_eq!(q.ask(1, "g1", many), Err(Refused::TooMany));
        let mut asker = 0;
        while q.held_by("g1") + MAX_INPUT_REQUESTS <= MAX_QUESTIONS_PER_CONNECTION {
            asker += 1;
            let batch = (0..MAX_INPUT_REQUESTS).map(|i| format!("{asker}-{i}")).collect();
            q.ask(asker, "g1", batch).unwrap();
        }
        assert_eq!(q.held_by("g1"), MAX_QUESTIONS_PER_CONNECTION);
        assert_eq!(q.ask(99, "g1", ids(&["x"])), Err(Refused::TooMany), "its share is full");
        assert!(q.ask(98, "g2", ids(&["y"])).is_ok(), "another connection still asks");
        assert_eq!(q.ask(97, "g2", ids(&["1-0"])), Err(Refused::TooMany), "an id already waits");
        q.gone(1);
        assert!(q.ask(99, "g1", ids(&["x"])).is_ok(), "room again once a request went");
    }

    #[test]
    fn the_pairing_holds_every_connections_share_at_once_and_no_more() {
        let mut q = Questions::default();
        let mut asker = 0;
        for g in 0..MAX_PENDING_QUESTIONS / MAX_QUESTIONS_PER_CONNECTION {
            for _ in 0..MAX_QUESTIONS_PER_CONNECTION / MAX_INPUT_REQUESTS {
                asker += 1;
                let batch = (0..MAX_INPUT_REQUESTS).map(|i| format!("{asker}-{i}")).collect();
                q.ask(asker, &format!("g{g}"), batch).unwrap();
            }
        }
        assert_eq!(q.ask(0, "leftover", ids(&["z"])), Err(Refused::TooMany));
    }
}
