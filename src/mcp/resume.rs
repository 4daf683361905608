//! Resumable streams (2025-11-25): a call's stream to a client with a session numbers its
//! events, opens with a priming event (an id, empty data, and how long to wait before coming
//! back), and a client whose stream dropped comes back with `GET` and `Last-Event-ID` for
//! the rest of the call's events. The event id names the call by its JSON-RPC id (the
//! connection is the token's, so one connection never takes up another's call) and carries
//! its progress token, so progress goes on after a return.

use core::fmt::Write as _; // writing to a String cannot fail

use base64::Engine as _;
use serde_json::Value;

use super::era::Headers;
use super::session::Declared;
use crate::jsonrpc::Id;
use crate::limits::RESUME_RETRY_MS;
use tabrelay_bundle::fields::Encode as _;

/// The revision whose clients come back for a dropped stream (SEP-1699).
pub const RESUMABLE_VERSION: &str = "2025-11-25";

/// Whether a call's client comes back for it when its stream drops: a 2025-11-25 client
/// with a session of the relay's, listening to a stream.
#[must_use]
pub fn resumable(headers: &Headers<'_>, session: Option<&Declared>, stream: bool) -> bool {
    stream && session.is_some() && headers.version.map(str::trim) == Some(RESUMABLE_VERSION)
}

/// The event ids of one call's stream, from `next` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventIds {
    token: String,
    next: u64,
    primed: bool,
}

impl EventIds {
    /// The ids of the stream of the call with JSON-RPC id `id` (and progress token
    /// `progress`), its events numbered from `next` (a stream taken up goes on after the last
    /// event its client saw).
    #[must_use]
    pub fn new(id: &Id, progress: Option<&Value>, next: u64) -> Self {
        // The id alone, or `[id, token]`.
        let mut json = Vec::new();
        match progress {
            Some(token) => {
                json.push(b'[');
                id.write_json(&mut json);
                json.push(b',');
                token.write_json(&mut json);
                json.push(b']');
            }
            None => id.write_json(&mut json),
        }
        let token = crate::crypto::base64url(&json);
        Self { token, next, primed: false }
    }

    /// `text` (events and comments) with an id on each event, after the priming event when
    /// none went out yet.
    pub fn frame(&mut self, text: &str) -> String {
        let mut out = String::new();
        if !self.primed {
            self.primed = true;
            self.id(&mut out);
            let _ = write!(out, "\nretry: {RESUME_RETRY_MS}\ndata: \n\n");
        }
        let mut rest = text;
        while !rest.is_empty() {
            let end = crate::text::find(rest, "\n\n").map_or(rest.len(), |i| i + 2);
            let (block, after) = rest.split_at(end);
            if block.starts_with("event: ") {
                self.id(&mut out);
                out.push('\n');
            }
            out.push_str(block);
            rest = after;
        }
        out
    }

    /// `id: {token}.{n}` (the next number) written onto `out`.
    fn id(&mut self, out: &mut String) {
        let _ = write!(out, "id: {}.{}", self.token, self.next);
        self.next += 1;
    }
}

/// A `Last-Event-ID` read back.
#[derive(Debug, Clone, PartialEq)]
pub struct LastEvent {
    /// The call's JSON-RPC id.
    pub id: Id,
    /// Its progress token, when it gave one.
    pub progress: Option<Value>,
    /// The number of the last event its client saw.
    pub number: u64,
}

/// A `Last-Event-ID` read back (None: not an id of the relay's).
#[must_use]
pub fn read_event_id(last: &str) -> Option<LastEvent> {
    let (token, number) = last.trim().rsplit_once('.')?;
    let number = number.parse().ok()?;
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).ok()?;
    let value: Value = serde_json::from_slice(&json).ok()?;
    let (id, progress) = match value {
        Value::Array(pair) => match &pair[..] {
            [id, token] if super::is_progress_token(token) => (Id::of(id)?, Some(token.clone())),
            _ => return None,
        },
        id => (Id::of(&id)?, None),
    };
    Some(LastEvent { id, progress, number })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_2025_11_25_client_with_a_session_on_a_stream_resumes() {
        let v = |version| Headers { version, ..Headers::default() };
        let d = Declared::default();
        assert!(resumable(&v(Some("2025-11-25")), Some(&d), true));
        assert!(!resumable(&v(Some("2025-11-25")), None, true), "no session");
        assert!(!resumable(&v(Some("2025-11-25")), Some(&d), false), "no stream");
        assert!(!resumable(&v(Some("2025-06-18")), Some(&d), true), "an older revision");
        assert!(!resumable(&v(None), Some(&d), true));
    }

    #[test]
    fn events_are_numbered_after_a_priming_event_and_read_back() {
        let mut ids = EventIds::new(&Id::Text("call 1".into()), None, 0);
        let text = ids.frame(": keep-alive\n\nevent: message\ndata: {}\n\n");
        let blocks: Vec<&str> = text.split_inclusive("\n\n").collect();
        assert_eq!(blocks.len(), 3);
        assert!(blocks[0].starts_with("id: ") && blocks[0].contains("\nretry: 1000\ndata: \n"));
        assert_eq!(blocks[1], ": keep-alive\n\n", "comments carry no id");
        assert!(
            blocks[2].starts_with("id: ") && blocks[2].ends_with("event: message\ndata: {}\n\n")
        );
        let last = blocks[2].lines().next().unwrap().strip_prefix("id: ").unwrap();
        let read = read_event_id(last).unwrap();
        assert_eq!((read.id, read.progress, read.number), (Id::Text("call 1".into()), None, 1));
        assert!(!ids.frame("event: message\ndata: 1\n\n").contains("retry"), "primed once");
        // A stream taken up goes on after the last number seen.
        let token = serde_json::json!("p-1");
        let mut again = EventIds::new(&Id::Number(7), Some(&token), 5);
        let first = again.frame("");
        let id = first.lines().next().unwrap().strip_prefix("id: ").unwrap();
        let read = read_event_id(id).unwrap();
        assert_eq!((read.id, read.progress, read.number), (Id::Number(7), Some(token), 5));
        // [7, {}] (a token that is no token), null, not JSON, no number: not the relay's.
        for junk in ["", "x", "abc.1", "eyJ9.1", "Nw.x", "bnVsbA.1", "Wzcse31d.1"] {
            assert_eq!(read_event_id(junk), None, "{junk}");
        }
    }
}
