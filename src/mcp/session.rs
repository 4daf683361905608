//! The session-era `Mcp-Session-Id`, kept by nobody: the relay keeps no sessions, so the id
//! itself carries what the client declared at `initialize` (which of the agent app's
//! questions it can take) and the revision it negotiated, bound to its connection (the grant)
//! and MACed with the relay's keys. Any instance reads it back; the previous key still
//! verifies during a rotation. A request with such an id is read in its session's revision,
//! whatever its version header says (Claude Code sends `2026-07-28` in a session it opened
//! with `initialize`).

use base64::Engine as _;
use serde_json::{Map, Value};
use tabrelay_bundle::protocol::capability_of;

use super::era::{Headers, SESSION_VERSIONS, STATELESS_VERSION};
use crate::jsonrpc::{self, ErrorCode};
use crate::keys::{Keys, Purpose};
use crate::sentences;

/// The JSON-RPC code of a session id the relay does not know (as the official SDKs answer).
pub const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);

/// The longest session id read; a longer one is not the relay's.
const MAX_ID_BYTES: usize = 128;

/// The version letter every id starts with.
const VERSION: char = '1';

/// A session the relay opened, as its id says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// What its client declared at `initialize`.
    pub declared: Declared,
    /// The revision `initialize` negotiated (None: an id made before ids said it).
    pub revision: Option<&'static str>,
}

impl Opened {
    /// The revision a request of this session is read in, whatever its version header
    /// (`header`) says: the one `initialize` negotiated. An id that does not say keeps its
    /// header's, but for the stateless revision's, which has no sessions: the newest session
    /// revision instead.
    #[must_use]
    pub fn version<'h>(&self, header: Option<&'h str>) -> Option<&'h str> {
        match (self.revision, header.map(str::trim)) {
            (Some(negotiated), _) => Some(negotiated),
            (None, Some(STATELESS_VERSION)) => Some(SESSION_VERSIONS[0]),
            (None, header) => header,
        }
    }
}

/// Which of the relay's questions a session-era client said at `initialize` it can take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Declared {
    /// `elicitation` in form mode (`elicitation: {}` is form mode, as 2025-11-25 says).
    pub elicitation_form: bool,
    /// `elicitation.url`.
    pub elicitation_url: bool,
    /// `sampling`.
    pub sampling: bool,
    /// `roots`.
    pub roots: bool,
}

impl Declared {
    /// What `initialize`'s `params.capabilities` declared.
    #[must_use]
    pub fn of(capabilities: &Map<String, Value>) -> Self {
        let elicitation = capabilities.get("elicitation").and_then(Value::as_object);
        let (form, url) = match elicitation {
            None => (false, false),
            Some(e) if !e.contains_key("form") && !e.contains_key("url") => (true, false),
            Some(e) => (e.contains_key("form"), e.contains_key("url")),
        };
        Self {
            elicitation_form: form,
            elicitation_url: url,
            sampling: capabilities.get("sampling").is_some_and(Value::is_object),
            roots: capabilities.get("roots").is_some_and(Value::is_object),
        }
    }

    /// Whether the client can take this request of a tab (`{"method": …, "params": …}`).
    #[must_use]
    pub fn can_take(&self, request: &Value) -> bool {
        match capability_of(request) {
            "elicitation" => {
                let mode = request.get("params").and_then(|p| p.get("mode"));
                match mode.and_then(Value::as_str) {
                    Some("url") => self.elicitation_url,
                    _ => self.elicitation_form,
                }
            }
            "sampling" => self.sampling,
            "roots" => self.roots,
            _ => false,
        }
    }

    /// Whether the client can take any question at all.
    #[must_use]
    pub fn any(&self) -> bool {
        self.elicitation_form || self.elicitation_url || self.sampling || self.roots
    }

    fn letters(self) -> String {
        let mut out = String::from(VERSION);
        for (on, letter) in [
            (self.elicitation_form, 'f'),
            (self.elicitation_url, 'u'),
            (self.sampling, 's'),
            (self.roots, 'r'),
        ] {
            if on {
                out.push(letter);
            }
        }
        out
    }

    fn of_letters(letters: &str) -> Option<Self> {
        let rest = letters.strip_prefix(VERSION)?;
        let mut d = Self::default();
        for c in rest.chars() {
            let flag = match c {
                'f' => &mut d.elicitation_form,
                'u' => &mut d.elicitation_url,
                's' => &mut d.sampling,
                'r' => &mut d.roots,
                _ => return None,
            };
            if *flag {
                return None;
            }
            *flag = true;
        }
        Some(d)
    }
}

fn signed(grant: &str, letters: &str) -> Vec<u8> {
    [grant.as_bytes(), &[0], letters.as_bytes()].concat()
}

/// The session id for a client of connection `grant` that declared `declared` and negotiated
/// `revision` (`{letters}.{revision}.{tag}`): visible ASCII only (letters, digits, `-`, `_`,
/// `.`), as the transport requires.
#[must_use]
pub fn issue(keys: &Keys, grant: &str, declared: Declared, revision: &str) -> String {
    let mut id = declared.letters();
    id.push('.');
    id.push_str(revision);
    let tag = keys.current.mac(Purpose::Session, &signed(grant, &id));
    id.push('.');
    id.push_str(&crate::crypto::base64url(&tag));
    id
}

/// What a session id says, when it is the relay's for this connection (None: another
/// connection's, altered, made with a key no longer held, or not the relay's at all). An id
/// made before ids said their revision (`{letters}.{tag}`) still reads, its revision unsaid.
#[must_use]
pub fn verify(keys: &Keys, grant: &str, id: &str) -> Option<Opened> {
    if id.len() > MAX_ID_BYTES {
        return None;
    }
    let (said, tag) = id.rsplit_once('.')?;
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(tag).ok()?;
    let (letters, revision) = match said.split_once('.') {
        Some((letters, r)) => (letters, Some(*SESSION_VERSIONS.iter().find(|v| **v == r)?)),
        None => (said, None),
    };
    let declared = Declared::of_letters(letters)?;
    let opened = Opened { declared, revision };
    keys.verify(Purpose::Session, &signed(grant, said), &tag).then_some(opened)
}

/// The session a request's id names, when the relay opened it for connection `grant`.
#[must_use]
pub fn opened(keys: &Keys, grant: &str, headers: &Headers<'_>) -> Option<Opened> {
    verify(keys, grant, headers.session?.trim())
}

/// What a request's session id comes to, `opened` being what it names ([`opened`]): none (no
/// header, an `initialize`, which starts a new session whatever it carries, or an id not the
/// relay's on a 2026-07-28 request, which has no sessions), what its session declared, or the
/// 404 body that tells the client to initialize again.
pub fn check(
    opened: Option<Opened>,
    headers: &Headers<'_>,
    initialize: bool,
) -> Result<Option<Declared>, Value> {
    if initialize || headers.session.is_none() {
        return Ok(None);
    }
    match opened {
        Some(opened) => Ok(Some(opened.declared)),
        None if headers.version.map(str::trim) == Some(STATELESS_VERSION) => Ok(None),
        None => Err(jsonrpc::refusal(None, SESSION_NOT_FOUND, sentences::SESSION_NOT_FOUND)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys() -> Keys {
        Keys::new(&"k".repeat(32), None).unwrap()
    }

    fn declared(caps: Value) -> Declared {
        Declared::of(caps.as_object().unwrap())
    }

    #[test]
    fn what_a_client_declared_decides_what_it_can_take() {
        let form = json!({"method": "elicitation/create", "params": {"message": "Name?"}});
        let url = json!({"method": "elicitation/create", "params": {"mode": "url"}});
        let sample = json!({"method": "sampling/createMessage", "params": {}});
        let roots = json!({"method": "roots/list"});
        let all = [&form, &url, &sample, &roots];
        let takes = |d: Declared| all.iter().map(|r| d.can_take(r)).collect::<Vec<_>>();
        assert_eq!(takes(declared(json!({}))), [false; 4]);
        assert!(!declared(json!({})).any());
        assert_eq!(takes(declared(json!({"elicitation": {}}))), [true, false, false, false]);
        assert_eq!(
            takes(declared(json!({"elicitation": {"url": {}}}))),
            [false, true, false, false]
        );
        assert_eq!(
            takes(declared(
                json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {"listChanged": true}})
            )),
            [true; 4]
        );
        assert!(!declared(json!({"sampling": true})).sampling, "a capability is an object");
        assert!(!Declared::default().can_take(&json!({"method": "tools/call"})));
    }

    /// What an id of a session opened in `revision` says.
    fn said(declared: Declared, revision: &'static str) -> Option<Opened> {
        Some(Opened { declared, revision: Some(revision) })
    }

    #[test]
    fn an_id_reads_back_for_its_connection_only() {
        let d = declared(json!({"elicitation": {}, "sampling": {}}));
        let id = issue(&keys(), "g1", d, "2025-11-25");
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)), "{id}");
        assert_eq!(verify(&keys(), "g1", &id), said(d, "2025-11-25"));
        let none = issue(&keys(), "g1", Declared::default(), "2025-03-26");
        assert_eq!(verify(&keys(), "g1", &none), said(Declared::default(), "2025-03-26"));
        // Another connection, an altered declaration, revision or tag, another key: not the
        // relay's.
        assert_eq!(verify(&keys(), "g2", &id), None);
        let (said, tag) = id.rsplit_once('.').unwrap();
        let (letters, revision) = said.split_once('.').unwrap();
        let again = |letters: &str, revision: &str| format!("{letters}.{revision}.{tag}");
        assert_eq!(verify(&keys(), "g1", &again(&format!("{letters}r"), revision)), None);
        assert_eq!(verify(&keys(), "g1", &again("1sf", revision)), None, "same letters, reordered");
        assert_eq!(verify(&keys(), "g1", &again(letters, "2025-06-18")), None, "another revision");
        assert_eq!(verify(&keys(), "g1", &again(letters, "2026-07-28")), None, "no session's");
        assert_eq!(verify(&keys(), "g1", &format!("{letters}.{tag}")), None, "revision left out");
        let mut bent = tag.to_owned().into_bytes();
        bent[3] = if bent[3] == b'A' { b'B' } else { b'A' };
        let bent = format!("{letters}.{revision}.{}", String::from_utf8(bent).unwrap());
        assert_eq!(verify(&keys(), "g1", &bent), None);
        let other = Keys::new(&"z".repeat(32), None).unwrap();
        assert_eq!(verify(&other, "g1", &id), None);
        for junk in ["", ".", "1f", "1ff.", "1.2025-11-25.", "1..x", "x.y", &"1".repeat(500)] {
            assert_eq!(verify(&keys(), "g1", junk), None, "{junk}");
        }
    }

    #[test]
    fn each_session_revision_is_said_and_an_id_that_does_not_say_still_reads() {
        for v in SESSION_VERSIONS {
            let id = issue(&keys(), "g1", Declared::default(), v);
            assert_eq!(verify(&keys(), "g1", &id).and_then(|o| o.revision), Some(v), "{id}");
        }
        // An id made before ids said their revision: its letters, MACed as they were.
        let tag = keys().current.mac(Purpose::Session, &signed("g1", "1s"));
        let old = format!("1s.{}", crate::crypto::base64url(&tag));
        let sampling = Declared { sampling: true, ..Declared::default() };
        assert_eq!(
            verify(&keys(), "g1", &old),
            Some(Opened { declared: sampling, revision: None })
        );
    }

    #[test]
    fn a_session_reads_its_requests_in_its_own_revision_whatever_their_header() {
        let d = Declared::default();
        let in_2025_06 = Opened { declared: d, revision: Some("2025-06-18") };
        for header in [None, Some("2025-11-25"), Some(STATELESS_VERSION), Some("v9")] {
            assert_eq!(in_2025_06.version(header), Some("2025-06-18"), "{header:?}");
        }
        // An id that does not say keeps its header's, never the stateless revision.
        let unsaid = Opened { declared: d, revision: None };
        assert_eq!(unsaid.version(None), None);
        assert_eq!(unsaid.version(Some("2025-03-26")), Some("2025-03-26"));
        assert_eq!(unsaid.version(Some(STATELESS_VERSION)), Some("2025-11-25"));
    }

    #[test]
    fn an_id_made_before_a_rotation_still_reads() {
        let old = Keys::new(&"o".repeat(32), None).unwrap();
        let id = issue(&old, "g1", Declared { roots: true, ..Declared::default() }, "2025-11-25");
        let rotated = Keys::new(&"n".repeat(32), Some(&"o".repeat(32))).unwrap();
        assert_eq!(verify(&rotated, "g1", &id).map(|o| o.declared.roots), Some(true));
        let after = Keys::new(&"n".repeat(32), None).unwrap();
        assert_eq!(verify(&after, "g1", &id), None, "once the previous key is dropped");
    }

    #[test]
    fn a_request_without_a_good_id_is_told_to_initialize_again() {
        let sampling = Declared { sampling: true, ..Declared::default() };
        let id = issue(&keys(), "g1", sampling, "2025-11-25");
        let with = |session, version| Headers { session, version, ..Headers::default() };
        let check_as = |grant, headers: &Headers<'_>, initialize| {
            check(opened(&keys(), grant, headers), headers, initialize)
        };
        assert_eq!(check_as("g1", &with(None, None), false), Ok(None));
        for header in [Some("2025-11-25"), None, Some(STATELESS_VERSION)] {
            let ok = check_as("g1", &with(Some(&id), header), false);
            assert_eq!(ok, Ok(Some(sampling)), "the session's own, whatever its header");
        }
        let refused = check_as("g2", &with(Some(&id), None), false).unwrap_err();
        assert_eq!(refused["error"]["code"], -32001);
        assert_eq!(refused["id"], Value::Null);
        // An initialize starts afresh; the stateless revision has no sessions, so an id not the
        // relay's on one is no concern of it.
        assert_eq!(check_as("g2", &with(Some(&id), None), true), Ok(None));
        assert_eq!(check_as("g1", &with(Some(&id), None), true), Ok(None));
        assert_eq!(check_as("g2", &with(Some("x"), Some(STATELESS_VERSION)), false), Ok(None));
    }
}
