//! The pairing's tabs: how a tab's socket names its pairing, how a tab proves itself with its
//! pairing key, what each message of a proven tab means, the bounds on sockets, and which tab
//! gets a call.

use tabrelay_bundle::protocol::{
    close, proof_text, Outcome, RelayMessage, TabMessage, ToolList, CHALLENGE_BYTES, HELLO_WAIT_MS,
    MAX_DATASET_NAME_CHARS, MAX_TABS_PER_PAIRING, MAX_UNPROVEN_MESSAGE_BYTES, MAX_UNPROVEN_SOCKETS,
    PAIRING_KEY_BYTES, PROTOCOL_VERSION, SIGNATURE_BYTES, TAB_PAIRING_PARAM,
};
use tabrelay_bundle::protocol::{Assertion, CodeSaid};
use tabrelay_bundle::BUNDLE_DIGEST;

use super::presence::Enrolment;
use crate::crypto::{random_token, sha256_hex, Entropy};
use crate::oauth::connect::{refusal, Named};
use crate::sentences;

/// What the `status` tool says: the pairing's tabs, the one calls go to, what it shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TabsStatus {
    /// How many tabs are connected (proven).
    pub tabs: usize,
    /// The position (from 1, in the order they connected) of the tab calls go to.
    pub focused: Option<usize>,
    /// The dataset that tab shows, as it said (page content: quote it as data).
    pub dataset: Option<String>,
    /// Whether that tab stated its own tool list.
    pub stated: bool,
    /// The tools its person's settings refuse, by name.
    pub refused: Vec<String>,
}

tabrelay_bundle::codec!(TabsStatus, "the tabs' status", {
    tabs, focused or None, dataset or None, stated, refused
});

impl TabsStatus {
    /// The status of `tabs`, with what the focused one stated (its list and dataset).
    #[must_use]
    pub fn of<'a>(
        tabs: impl IntoIterator<Item = &'a Tab> + Clone,
        list: Option<&ToolList>,
        dataset: Option<String>,
    ) -> Self {
        let Some(focused) = route(tabs.clone()) else { return Self::default() };
        // How many are proven, and its place in the order they connected (numbers grow with
        // each tab).
        let (mut proven, mut position) = (0, 0);
        for tab in tabs.into_iter().filter(|t| t.proven) {
            proven += 1;
            position += usize::from(tab.number <= focused.number);
        }
        let mut refused = Vec::new();
        for tool in list.map_or(&[][..], |l| l.tools()) {
            if tool.setting == tabrelay_bundle::protocol::Setting::Refused {
                refused.push(tool.name.clone());
            }
        }
        Self { tabs: proven, focused: Some(position), dataset, stated: list.is_some(), refused }
    }
}

/// A browser's pairing key as a tab's hello names it: the raw, uncompressed P-256 public key of
/// the browser's non-extractable key pair. Only its shape is
/// read here (the runtime's WebCrypto refuses a point off the curve when the proof is checked).
/// The pairing id derives from it; the key itself is never in a token or a stored grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingKey(Vec<u8>);

impl PairingKey {
    /// The key named by base64url text (no padding, canonical), when it has a key's shape:
    /// [`PAIRING_KEY_BYTES`] bytes, `0x04` first.
    #[must_use]
    pub fn read(text: &str) -> Option<Self> {
        use base64::Engine as _;
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text).ok()?;
        (raw.len() == PAIRING_KEY_BYTES && raw.first() == Some(&0x04)).then_some(Self(raw))
    }

    /// The pairing id: the lowercase hex SHA-256 of the raw key. Tokens name the pairing by it;
    /// a hash cannot open the pairing's socket, which takes the key and its signature.
    #[must_use]
    pub fn pairing(&self) -> String {
        sha256_hex(&self.0)
    }

    /// The raw key, as WebCrypto imports it (`raw`).
    #[must_use]
    pub fn raw(&self) -> &[u8] {
        &self.0
    }

    /// The key as a hello names it (base64url).
    #[must_use]
    pub fn text(&self) -> String {
        crate::crypto::base64url(&self.0)
    }
}

/// The pairing a tab's socket names in its query ([`TAB_PAIRING_PARAM`]): a pairing id's shape
/// (64 lowercase hex digits), or why the socket is refused. The id opens nothing by itself
/// (tokens carry it): the hello must bring the key it derives from, and the key's signature.
/// A page of protocol 2 named its public key in the address (`?key=`), where request logs
/// keep it: it is told to reload. (A page of protocol 1 named the id too; its hello is told to
/// reload.)
pub fn socket_pairing(query: &[(String, String)]) -> Result<String, Refusal> {
    let named = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let is_id =
        |id: &&str| id.len() == 64 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    match named(TAB_PAIRING_PARAM).filter(is_id) {
        _ if named("key").is_some() => Err((close::OUTDATED, sentences::TAB_OUTDATED)),
        Some(id) => Ok(id.to_owned()),
        None => Err((close::PROTOCOL_ERROR, sentences::tab::NO_PAIRING)),
    }
}

/// Why a request to the tab's socket is refused before it is taken ([`tab_socket`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketRefused {
    /// A plain request, not a WebSocket: answered with this.
    Plain(crate::http::Answer),
    /// A socket: accepted only to close it with this code and reason (a browser shows nothing
    /// else).
    Closed(Refusal),
}

/// The checks on a request to the tab's socket before it is upgraded, in order: a WebSocket
/// (its `Upgrade`), from a page whose `Origin` may pair, naming a pairing ([`socket_pairing`]).
/// The pairing it names, or how it is refused. (The sender's limit comes next, past these:
/// [`TOO_MANY_OPENED`].)
pub fn tab_socket(
    upgrade: Option<&str>,
    origin: Option<&str>,
    config: &crate::config::Config,
    query: &[(String, String)],
) -> Result<String, SocketRefused> {
    if !upgrade.is_some_and(|u| u.eq_ignore_ascii_case("websocket")) {
        let answer = crate::http::Answer::text(426, sentences::shell::WEBSOCKET_ONLY);
        return Err(SocketRefused::Plain(answer));
    }
    if !config.allows_origin(origin.unwrap_or_default()) {
        return Err(SocketRefused::Closed(ORIGIN_REFUSED));
    }
    socket_pairing(query).map_err(SocketRefused::Closed)
}

/// A signature to check: whether `signature` is the pairing key's ECDSA P-256 signature over
/// SHA-256 of `text` (P1363 form). The shell checks it with the runtime's WebCrypto and gives
/// the answer to [`Tab::proved`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    /// The raw public key ([`PairingKey::raw`]).
    pub key: Vec<u8>,
    /// What was signed: [`proof_text`] of the relay's origin and the socket's challenge (for a
    /// tab's hello), or the authenticator data and the client data's hash (for the person's
    /// presence, [`super::presence`]).
    pub data: Vec<u8>,
    /// The signature, [`SIGNATURE_BYTES`] bytes.
    pub signature: Vec<u8>,
}

/// What the pairing keeps about one tab, in its socket's attachment (survives hibernation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The pairing id the socket named ([`PairingKey::pairing`] of the key its hello proves).
    pub pairing: String,
    /// The pairing key its hello named (base64url); empty until then.
    pub key: String,
    /// Who opened the socket, as the per-sender limits count senders
    /// ([`crate::senders::sender_key`]): a flood of sockets makes room among its own.
    pub sender: String,
    /// The relay's origin as the tab addressed it (the socket request's), which the proof names.
    pub origin: String,
    /// The challenge sent to the socket (base64url), until a hello uses it: one hello per socket.
    pub challenge: Option<String>,
    /// The tab's number within the pairing (later tabs have higher numbers).
    pub number: u64,
    /// Whether it proved the pairing key (a signature over its challenge).
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
    /// Store the tab's new state (its challenge used), check the proof, and give the answer
    /// to [`Tab::proved`].
    Verify(Tab, Proof),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
    /// Ask the code's Durable Object who asks for it.
    Describe(Named),
    /// Ask the code's Durable Object to approve it for this pairing (a link's reference: once
    /// the browser confirms), with the person's presence proven when the tab sent it: the
    /// assertion, and the code or reference as the tab sent it (what the assertion is for).
    Approve(Named, Option<(Assertion, String)>),
    /// Keep this presence credential as the pairing's, if it holds none.
    Enrol(Enrolment),
    /// Ask the code's Durable Object to deny it.
    Deny(Named),
    /// Tell the tab its code was refused, with this sentence.
    RefuseCode(String, &'static str),
    /// Store the tab's new state (focus changed).
    Update(Tab),
    /// The person is being asked about this call.
    Asking(u64, String),
    /// The person answered about this call.
    Answered(u64),
    /// The person took a step: the agents' turn ends.
    PersonStep,
    /// Send the tab the pairing's connections.
    ListConnections,
    /// Forget this connection, then send the list.
    Forget(String),
    /// The person stopped this connection's agent (true) or let it go on (false).
    Stopped(String, bool),
    /// The tab's result for a call: deliver it to the waiting request.
    Result(u64, Outcome),
    /// Keep this list as the tab's (replacing the one before).
    Tools(ToolList),
    /// Tell the tab its list was refused, with this sentence (its previous list stays).
    RefuseTools(String),
    /// Keep this as the name of the dataset the tab shows (cut to [`MAX_DATASET_NAME_CHARS`]).
    View(String),
    /// Nothing to do.
    Ignore,
}

/// Why a socket is closed: the close code and reason (at most 123 bytes, as WebSocket allows).
pub type Refusal = (u16, &'static str);

/// The socket closed to make room for a newer one when more than [`MAX_UNPROVEN_SOCKETS`]
/// wait to send their hello.
pub const MADE_ROOM: Refusal = (close::TOO_MANY_TABS, sentences::tab::MADE_ROOM);
/// A tab socket from a page whose origin is not one of the app's.
pub const ORIGIN_REFUSED: Refusal = (close::ORIGIN_REFUSED, sentences::shell::ORIGIN_MAY_NOT_PAIR);
/// The sender opened more tab sockets than a browser needs ([`crate::senders`]): any id makes an
/// object, so each sender may open only so many a minute.
pub const TOO_MANY_OPENED: Refusal = (close::TOO_MANY_TABS, sentences::TOO_MANY_SOCKETS);
/// A proof that does not hold (a wrong signature, key or challenge).
pub const NOT_PROVEN: Refusal = (close::PROOF_FAILED, sentences::tab::NOT_PROVEN);
/// A socket that did not prove itself within [`HELLO_WAIT_MS`].
pub const NOT_PROVEN_IN_TIME: Refusal = (close::PROOF_FAILED, sentences::tab::NOT_PROVEN_IN_TIME);

/// A socket just opened: its tab and what to send it first.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Admitted {
    /// The new socket's tab, not yet proven.
    pub tab: Tab,
    /// Its first message: the challenge to sign.
    pub first: RelayMessage,
}

impl Tab {
    /// A socket just opened for `pairing` on the relay's `origin` by `sender`, with a fresh
    /// challenge of [`CHALLENGE_BYTES`] random bytes. It is always taken: sockets still to send
    /// their hello have their own bound, apart from proven tabs, kept by [`sockets_to_close`]
    /// (the oldest of the busiest sender make room, so silent sockets cannot keep a tab of the
    /// browser out, nor push out one proving itself); whether a proven tab fits is decided once
    /// it proves ([`Tab::proved`]).
    pub fn admit(
        pairing: &str,
        origin: &str,
        sender: &str,
        number: u64,
        now_ms: u64,
        entropy: &mut dyn Entropy,
    ) -> Admitted {
        let challenge = random_token(entropy, CHALLENGE_BYTES);
        let tab = Self {
            pairing: pairing.to_owned(),
            key: String::new(),
            sender: sender.to_owned(),
            origin: origin.to_owned(),
            challenge: Some(challenge.clone()),
            number,
            proven: false,
            opened_ms: now_ms,
            focus_ms: now_ms,
        };
        Admitted { tab, first: RelayMessage::Challenge { challenge } }
    }

    /// Decides what a message from this tab means. Before the tab has proven its pairing, a
    /// message over [`MAX_UNPROVEN_MESSAGE_BYTES`] is refused unread, and only a hello that
    /// answers the challenge is taken: it becomes a proof to check ([`TabAction::Verify`]).
    pub fn on_message(&self, text: &str, now_ms: u64) -> TabAction {
        if !self.proven && text.len() > MAX_UNPROVEN_MESSAGE_BYTES {
            return TabAction::Close(close::PROTOCOL_ERROR, sentences::tab::UNPROVEN_TOO_LONG);
        }
        let Ok(message) = TabMessage::parse(text) else {
            return if self.proven {
                TabAction::Ignore
            } else {
                TabAction::Close(close::PROTOCOL_ERROR, sentences::tab::HELLO_FIRST)
            };
        };
        if !self.proven {
            return match message {
                TabMessage::Hello { protocol, key, signature, bundle } => {
                    self.hello(protocol, &key, &signature, &bundle)
                }
                _ => TabAction::Close(close::PROOF_FAILED, sentences::tab::PROVE_FIRST),
            };
        }
        match message {
            TabMessage::Hello { .. } => TabAction::Ignore,
            TabMessage::Describe { said } => Self::with_code(&said, TabAction::Describe),
            TabMessage::Approve { said, proof } => {
                let proof = proof.map(|p| (p, said.text().to_owned()));
                Self::with_code(&said, |named| TabAction::Approve(named, proof))
            }
            TabMessage::Presence { credential, key, client_data, authenticator } => {
                TabAction::Enrol(Enrolment { credential, key, client_data, authenticator })
            }
            TabMessage::Deny { said } => Self::with_code(&said, TabAction::Deny),
            TabMessage::Focus { focused: true } => {
                TabAction::Update(Self { focus_ms: now_ms, ..self.clone() })
            }
            // Losing focus hands nothing on: the tab stays the one focused last.
            TabMessage::Focus { focused: false } => TabAction::Ignore,
            TabMessage::Asking { id, sentence, .. } => TabAction::Asking(id, sentence),
            TabMessage::Answered { id } => TabAction::Answered(id),
            TabMessage::Step => TabAction::PersonStep,
            TabMessage::Connections => TabAction::ListConnections,
            TabMessage::Forget { id } => TabAction::Forget(id),
            TabMessage::Stop { connection } => TabAction::Stopped(connection, true),
            TabMessage::GoOn { connection } => TabAction::Stopped(connection, false),
            TabMessage::Result { id, outcome } => TabAction::Result(id, outcome),
            TabMessage::Tools { tools } => TabAction::Tools(tools),
            TabMessage::BadTools { why } => TabAction::RefuseTools(why.sentence()),
            TabMessage::View { dataset } => {
                TabAction::View(dataset.chars().take(MAX_DATASET_NAME_CHARS).collect())
            }
        }
    }

    /// An unproven tab's hello: a proof to check, once per socket, of a key whose pairing is the
    /// one the socket named.
    fn hello(&self, protocol: u32, key: &str, signature: &str, bundle: &str) -> TabAction {
        use base64::Engine as _;
        let Some(challenge) = &self.challenge else {
            return TabAction::Close(close::PROOF_FAILED, sentences::tab::PROVES_ONCE);
        };
        if protocol != PROTOCOL_VERSION || bundle != BUNDLE_DIGEST {
            return TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED);
        }
        let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(signature)
            .ok()
            .filter(|s| s.len() == SIGNATURE_BYTES);
        let key = PairingKey::read(key).filter(|k| k.pairing() == self.pairing);
        match (key, signature) {
            (Some(key), Some(signature)) => TabAction::Verify(
                Self { challenge: None, key: key.text(), ..self.clone() },
                Proof {
                    key: key.0,
                    data: proof_text(&self.origin, challenge).into_bytes(),
                    signature,
                },
            ),
            _ => TabAction::Close(NOT_PROVEN.0, NOT_PROVEN.1),
        }
    }

    /// The answer to this tab's [`Proof`] (`valid`: the signature holds), with `proven_tabs`
    /// other tabs of the pairing proven: welcome it, or close it.
    pub fn proved(&self, valid: bool, now_ms: u64, proven_tabs: usize) -> TabAction {
        if self.proven || self.challenge.is_some() || !valid {
            return TabAction::Close(NOT_PROVEN.0, NOT_PROVEN.1);
        }
        if proven_tabs >= MAX_TABS_PER_PAIRING {
            return TabAction::Close(close::TOO_MANY_TABS, sentences::tab::TOO_MANY_TABS);
        }
        TabAction::Welcome(Self { proven: true, focus_ms: now_ms, ..self.clone() })
    }

    /// Whether this socket has had its [`HELLO_WAIT_MS`] to prove itself, in vain.
    #[must_use]
    pub fn overdue(&self, now_ms: u64) -> bool {
        !self.proven && now_ms >= self.opened_ms.saturating_add(HELLO_WAIT_MS)
    }
}

/// The sockets to close among a pairing's `open` ones at `now_ms`, by number, each with why:
/// every one still to prove itself after its [`HELLO_WAIT_MS`], and, beyond
/// [`MAX_UNPROVEN_SOCKETS`] still to send their hello, the oldest of the sender holding the
/// most of those (newer ones made room). A socket that sent its hello (its proof being checked)
/// is never pushed out, nor one of a sender holding fewer than another: a flood of sockets makes
/// room among its own, not by closing a tab of the browser on its way to proving itself.
#[must_use]
pub fn sockets_to_close<'a>(
    open: impl IntoIterator<Item = &'a Tab>,
    now_ms: u64,
) -> Vec<(u64, Refusal)> {
    let mut close: Vec<(u64, Refusal)> = Vec::new();
    let mut silent: Vec<&Tab> = Vec::new();
    for t in open.into_iter().filter(|t| !t.proven) {
        if t.overdue(now_ms) {
            close.push((t.number, NOT_PROVEN_IN_TIME));
        } else if t.challenge.is_some() {
            silent.push(t);
        }
    }
    // A handful at most beyond the bound, so no sort.
    while silent.len() > MAX_UNPROVEN_SOCKETS {
        let held = |sender: &str| silent.iter().filter(|t| t.sender == sender).count();
        // The oldest socket of the sender holding the most: (its place, its number, how many).
        let mut oldest: Option<(usize, u64, usize)> = None;
        for (i, t) in silent.iter().enumerate() {
            let n = held(&t.sender);
            if oldest.is_none_or(|(_, number, most)| n > most || (n == most && t.number < number)) {
                oldest = Some((i, t.number, n));
            }
        }
        let Some((i, number, _)) = oldest else { break };
        silent.swap_remove(i);
        close.push((number, MADE_ROOM));
    }
    close
}

/// When the pairing's alarm should next ring for its `open` sockets still to prove themselves:
/// at once when some are to close ([`sockets_to_close`]), else when the next runs out of time
/// (None: none waits).
#[must_use]
pub fn next_check<'a>(open: impl IntoIterator<Item = &'a Tab> + Clone, now_ms: u64) -> Option<u64> {
    if !sockets_to_close(open.clone(), now_ms).is_empty() {
        return Some(now_ms);
    }
    let mut next: Option<u64> = None;
    for t in open.into_iter().filter(|t| !t.proven) {
        let at = t.opened_ms.saturating_add(HELLO_WAIT_MS);
        if next.is_none_or(|n| at < n) {
            next = Some(at);
        }
    }
    next
}

impl Tab {
    fn with_code(said: &CodeSaid, action: impl FnOnce(Named) -> TabAction) -> TabAction {
        match Named::read(said) {
            Some(named) => action(named),
            None => {
                TabAction::RefuseCode(said.text().chars().take(40).collect(), refusal::MALFORMED)
            }
        }
    }
}

/// The proven tab focused last; among equals, the one opened last (the highest number).
#[must_use]
pub fn route<'a>(tabs: impl IntoIterator<Item = &'a Tab>) -> Option<&'a Tab> {
    let mut focused: Option<&Tab> = None;
    for t in tabs.into_iter().filter(|t| t.proven) {
        if focused.is_none_or(|f| (t.focus_ms, t.number) >= (f.focus_ms, f.number)) {
            focused = Some(t);
        }
    }
    focused
}

tabrelay_bundle::codec!(Tab, "a tab", {
    pairing, key, sender, origin, challenge, number, proven, opened_ms, focus_ms
});

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::crypto::testing::{round_trip, Counter};
    use base64::Engine as _;

    pub(crate) const ORIGIN: &str = "https://relay.example";

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A key of the right shape (the core never checks the curve: WebCrypto does).
    pub(crate) fn key() -> PairingKey {
        let mut raw = vec![7u8; PAIRING_KEY_BYTES];
        raw[0] = 0x04;
        PairingKey::read(&b64(&raw)).unwrap()
    }

    /// The sender every test socket comes from, unless it says another.
    pub(crate) const SENDER: &str = "ip4:203.0.113.1";

    pub(crate) fn tab(number: u64) -> Tab {
        Tab::admit(&key().pairing(), ORIGIN, SENDER, number, 1000, &mut Counter(number as u8)).tab
    }

    /// A hello naming [`key`].
    pub(crate) fn hello(signature: &str, protocol: u32, bundle: &str) -> String {
        hello_with(&key().text(), signature, protocol, bundle)
    }

    fn hello_with(key: &str, signature: &str, protocol: u32, bundle: &str) -> String {
        format!(
            r#"{{"type":"hello","protocol":{protocol},"key":"{key}","signature":"{signature}","bundle":"{bundle}"}}"#
        )
    }

    impl TabAction {
        fn unwrap_close(self) -> Refusal {
            match self {
                TabAction::Close(code, reason) => (code, reason),
                other => panic!("not closed: {other:?}"),
            }
        }
    }

    pub(crate) fn signature() -> String {
        b64(&[9u8; SIGNATURE_BYTES])
    }

    /// A tab whose hello's proof held at `at`.
    pub(crate) fn proven(number: u64, at: u64) -> Tab {
        let TabAction::Verify(t, _) =
            tab(number).on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), at)
        else {
            panic!("the hello should be checked")
        };
        let TabAction::Welcome(t) = t.proved(true, at, 0) else { panic!("the proof held") };
        t
    }

    #[test]
    fn a_tab_reads_back_as_written() {
        round_trip(&tab(1));
        round_trip(&proven(3, 2000));
    }

    #[test]
    fn a_socket_names_its_pairing_by_the_shape_of_a_public_key() {
        let k = key();
        assert_eq!(k.pairing(), sha256_hex(k.raw()), "the pairing id is the key's hash");
        assert_eq!(PairingKey::read(&k.text()), Some(k.clone()));
        let mut compressed = k.raw().to_vec();
        compressed[0] = 0x02;
        let padded = format!("{}=", k.text());
        for bad in [
            b64(&compressed),
            b64(&k.raw()[..64]),
            b64(&[k.raw(), &[1]].concat()),
            padded,
            k.text().replace('B', "+"),
            k.pairing(),
            String::new(),
        ] {
            assert_eq!(PairingKey::read(&bad), None, "{bad}");
        }
    }

    #[test]
    fn a_tab_socket_is_a_websocket_from_an_app_page_naming_its_pairing() {
        let config = crate::config::Config::for_tests();
        let k = key();
        let named = vec![("pairing".to_owned(), k.pairing())];
        let app = Some("https://app.example");
        let check = |upgrade, origin, query: &[(String, String)]| {
            tab_socket(upgrade, origin, &config, query)
        };
        assert_eq!(check(Some("websocket"), app, &named), Ok(k.pairing()));
        assert_eq!(check(Some("WebSocket"), app, &named), Ok(k.pairing()));
        for plain in [None, Some("h2c"), Some("")] {
            let Err(SocketRefused::Plain(answer)) = check(plain, app, &named) else {
                panic!("{plain:?}: not refused as a plain request")
            };
            assert_eq!(answer.status, 426);
            let sentence = sentences::shell::WEBSOCKET_ONLY.as_bytes();
            assert_eq!(answer.body.as_deref(), Some(sentence));
        }
        for elsewhere in [None, Some("https://evil.example"), Some("https://app.example.evil")] {
            assert_eq!(
                check(Some("websocket"), elsewhere, &named),
                Err(SocketRefused::Closed(ORIGIN_REFUSED)),
                "{elsewhere:?}"
            );
        }
        assert_eq!(ORIGIN_REFUSED.0, close::ORIGIN_REFUSED);
        // The origin is checked before the pairing: a page elsewhere learns nothing of the ids.
        assert_eq!(
            check(Some("websocket"), Some("https://evil.example"), &[]),
            Err(SocketRefused::Closed(ORIGIN_REFUSED))
        );
        let refused = check(Some("websocket"), app, &[]);
        assert_eq!(
            refused,
            Err(SocketRefused::Closed((close::PROTOCOL_ERROR, sentences::tab::NO_PAIRING)))
        );
    }

    #[test]
    fn a_socket_names_its_pairing_and_a_page_that_names_its_key_is_told_to_reload() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
        };
        let k = key();
        assert_eq!(socket_pairing(&q(&[("pairing", &k.pairing())])), Ok(k.pairing()));
        for old in [q(&[("key", &k.text())]), q(&[("key", &k.text()), ("pairing", &k.pairing())])] {
            assert_eq!(
                socket_pairing(&old),
                Err((close::OUTDATED, sentences::TAB_OUTDATED)),
                "a protocol-2 page puts its key in the address: told to reload"
            );
        }
        let upper = k.pairing().to_uppercase();
        let short = &k.pairing()[..63];
        for bad in [
            q(&[("pairing", &k.text())]),
            q(&[("pairing", &upper)]),
            q(&[("pairing", short)]),
            q(&[]),
        ] {
            assert_eq!(socket_pairing(&bad).unwrap_err().0, close::PROTOCOL_ERROR, "{bad:?}");
        }
    }

    #[test]
    fn a_hello_proves_only_the_key_of_the_pairing_the_socket_named() {
        let other = {
            let mut raw = vec![8u8; PAIRING_KEY_BYTES];
            raw[0] = 0x04;
            b64(&raw)
        };
        let t = tab(1);
        assert_eq!(t.key, "", "the address names no key");
        for named in [other.as_str(), "", "not-a-key"] {
            assert_eq!(
                t.on_message(
                    &hello_with(named, &signature(), PROTOCOL_VERSION, BUNDLE_DIGEST),
                    2000
                ),
                TabAction::Close(NOT_PROVEN.0, NOT_PROVEN.1),
                "{named:?}: a token's pairing id with another key (or none) proves nothing"
            );
        }
        let TabAction::Verify(checking, proof) =
            t.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 2000)
        else {
            panic!("the pairing's own key is checked")
        };
        assert_eq!(
            (checking.key.as_str(), proof.key.as_slice()),
            (key().text().as_str(), key().raw())
        );
    }

    #[test]
    fn each_socket_gets_a_fresh_challenge_first() {
        let a = Tab::admit(&key().pairing(), ORIGIN, SENDER, 1, 1000, &mut Counter(1));
        let b = Tab::admit(&key().pairing(), ORIGIN, SENDER, 2, 1000, &mut Counter(2));
        let RelayMessage::Challenge { challenge } = &a.first else { panic!("{:?}", a.first) };
        assert_eq!(a.tab.challenge.as_ref(), Some(challenge));
        assert_eq!(
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(challenge).unwrap().len(),
            CHALLENGE_BYTES
        );
        assert_ne!(a.tab.challenge, b.tab.challenge);
        assert_eq!(
            (a.tab.pairing.as_str(), a.tab.origin.as_str()),
            (key().pairing().as_str(), ORIGIN)
        );
        assert!(!a.tab.proven);
        round_trip(&a.tab);
    }

    #[test]
    fn a_hello_is_a_proof_over_the_relays_origin_and_this_sockets_challenge() {
        let t = tab(1);
        let challenge = t.challenge.clone().unwrap();
        let TabAction::Verify(checking, proof) =
            t.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 2000)
        else {
            panic!("a hello is checked")
        };
        assert_eq!(
            proof,
            Proof {
                key: key().raw().to_vec(),
                data: proof_text(ORIGIN, &challenge).into_bytes(),
                signature: vec![9u8; SIGNATURE_BYTES],
            }
        );
        assert_eq!(checking.challenge, None, "the challenge is used once");
        assert_eq!(
            checking.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 2001),
            TabAction::Close(close::PROOF_FAILED, sentences::tab::PROVES_ONCE)
        );
        assert_eq!(
            checking.proved(false, 2002, 0),
            TabAction::Close(close::PROOF_FAILED, sentences::tab::NOT_PROVEN)
        );
        assert_eq!(
            checking.proved(true, 2002, 0),
            TabAction::Welcome(Tab { proven: true, focus_ms: 2002, ..checking.clone() })
        );
        assert!(
            matches!(t.proved(true, 2002, 0), TabAction::Close(close::PROOF_FAILED, _)),
            "no answer proves a tab whose hello was not checked"
        );
        for bad in [b64(&[9u8; SIGNATURE_BYTES - 1]), "!!".into(), String::new()] {
            assert_eq!(
                t.on_message(&hello(&bad, PROTOCOL_VERSION, BUNDLE_DIGEST), 2000),
                TabAction::Close(close::PROOF_FAILED, sentences::tab::NOT_PROVEN),
                "{bad}"
            );
        }
        assert!(matches!(
            t.on_message(r#"{"type":"focus","focused":true}"#, 2000),
            TabAction::Close(close::PROOF_FAILED, _)
        ));
        assert!(matches!(
            t.on_message("garbage", 2000),
            TabAction::Close(close::PROTOCOL_ERROR, _)
        ));
        assert_eq!(
            t.on_message(r#"{"type":"hello","protocol":1,"secret":"s","bundle":"b"}"#, 2000),
            TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED),
            "a first-version hello proves nothing: its page is told to reload"
        );
    }

    #[test]
    fn a_message_before_the_proof_is_bounded_before_it_is_read() {
        let t = tab(1);
        let padded = format!(
            r#"{{"type":"hello","protocol":{PROTOCOL_VERSION},"key":"{}","signature":"{}","bundle":"{BUNDLE_DIGEST}","pad":"{}"}}"#,
            key().text(),
            signature(),
            "p".repeat(MAX_UNPROVEN_MESSAGE_BYTES)
        );
        assert!(
            matches!(t.on_message(&padded, 2000), TabAction::Close(close::PROTOCOL_ERROR, r) if r.contains("too long"))
        );
        let trimmed = padded.replacen(&"p".repeat(MAX_UNPROVEN_MESSAGE_BYTES), "", 1);
        assert!(matches!(t.on_message(&trimmed, 2000), TabAction::Verify(..)));
        let long = format!(r#"{{"type":"view","dataset":"{}"}}"#, "d".repeat(8000));
        assert!(
            matches!(proven(1, 10).on_message(&long, 11), TabAction::View(_)),
            "a proven tab's messages have the larger bound"
        );
    }

    #[test]
    fn a_page_of_another_version_or_bundle_is_told_to_reload() {
        let t = tab(1);
        for h in [
            hello(&signature(), 99, BUNDLE_DIGEST),
            hello(&signature(), PROTOCOL_VERSION, "0000000000000000"),
        ] {
            assert_eq!(
                t.on_message(&h, 2000),
                TabAction::Close(close::OUTDATED, sentences::TAB_OUTDATED)
            );
        }
        assert!(sentences::TAB_OUTDATED.contains("reload"));
    }

    #[test]
    fn proven_tabs_and_sockets_still_to_prove_have_their_own_bounds() {
        let full: Vec<Tab> = (1..=MAX_TABS_PER_PAIRING as u64).map(|n| proven(n, 10)).collect();
        let newcomer = Tab::admit(&key().pairing(), ORIGIN, SENDER, 100, 20, &mut Counter(3)).tab;
        let mut open = full.clone();
        open.push(newcomer.clone());
        assert_eq!(sockets_to_close(&open, 21), [], "proven tabs leave the unproven sockets' room");
        let TabAction::Verify(checking, _) =
            newcomer.on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 21)
        else {
            panic!()
        };
        assert_eq!(
            checking.proved(true, 22, MAX_TABS_PER_PAIRING).unwrap_close().0,
            close::TOO_MANY_TABS
        );
        assert!(matches!(
            checking.proved(true, 22, MAX_TABS_PER_PAIRING - 1),
            TabAction::Welcome(_)
        ));
        // Silent sockets beyond the bound: the oldest make room, at once.
        let mut open = full.clone();
        open.extend((200..202 + MAX_UNPROVEN_SOCKETS as u64).rev().map(tab));
        assert_eq!(sockets_to_close(&open, 1001), [(200, MADE_ROOM), (201, MADE_ROOM)]);
        assert_eq!(next_check(&open, 1001), Some(1001));
        assert_eq!(MADE_ROOM.0, close::TOO_MANY_TABS, "a tab that made room tries again");
        let kept: Vec<Tab> = open.into_iter().filter(|t| t.number >= 202).collect();
        assert_eq!(sockets_to_close(&kept, 1001), []);
        assert_eq!(next_check(&kept, 1001), Some(1000 + HELLO_WAIT_MS));
    }

    #[test]
    fn a_flood_of_sockets_makes_room_among_its_own_and_never_closes_one_that_sent_its_hello() {
        let flood = |n: u64| Tab { sender: "ip4:198.51.100.9".into(), ..tab(n) };
        // The browser's tab opened first, then a flood from another sender.
        let browser = tab(10);
        let mut open = vec![browser.clone()];
        open.extend((11..11 + MAX_UNPROVEN_SOCKETS as u64 + 3).map(flood));
        let closed = sockets_to_close(&open, 1001);
        assert_eq!(closed.len(), 4);
        assert!(
            closed.iter().all(|(n, why)| *n != browser.number && *why == MADE_ROOM),
            "the flood makes room among its own, oldest first: {closed:?}"
        );
        assert_eq!(closed.iter().map(|(n, _)| *n).min(), Some(11));
        // A tab that sent its hello (its proof being checked) is never pushed out, even by
        // its own sender's newer sockets.
        let TabAction::Verify(proving, _) =
            tab(20).on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 1000)
        else {
            panic!()
        };
        let mut open = vec![proving.clone()];
        open.extend((21..21 + MAX_UNPROVEN_SOCKETS as u64 + 2).map(tab));
        let closed = sockets_to_close(&open, 1001);
        assert_eq!(closed, [(21, MADE_ROOM), (22, MADE_ROOM)]);
        // Its time still runs out like any other's.
        assert_eq!(sockets_to_close(&[proving], 1000 + HELLO_WAIT_MS), [(20, NOT_PROVEN_IN_TIME)]);
        // Among senders holding as many, the oldest goes.
        let even = [tab(30), flood(31), tab(32), flood(33), tab(34), flood(35)];
        assert_eq!(sockets_to_close(&even, 1001), [(30, MADE_ROOM), (31, MADE_ROOM)]);
    }

    #[test]
    fn a_socket_that_does_not_prove_itself_in_time_is_closed() {
        let t = tab(1); // opened at 1000
        assert!(!t.overdue(1000 + HELLO_WAIT_MS - 1));
        assert!(t.overdue(1000 + HELLO_WAIT_MS));
        assert!(!proven(2, 5).overdue(u64::MAX));
        let later = Tab { opened_ms: 4000, ..tab(3) };
        let open = [later.clone(), proven(2, 5), t.clone()];
        assert_eq!(next_check(&open, 1500), Some(1000 + HELLO_WAIT_MS));
        assert_eq!(sockets_to_close(&open, 1000 + HELLO_WAIT_MS), [(1, NOT_PROVEN_IN_TIME)]);
        assert_eq!(
            next_check(&[later, proven(2, 5)], 1000 + HELLO_WAIT_MS),
            Some(4000 + HELLO_WAIT_MS)
        );
        assert_eq!(next_check(&[proven(2, 5)], 0), None);
        for refusal in [MADE_ROOM, NOT_PROVEN, NOT_PROVEN_IN_TIME] {
            assert!(refusal.1.len() <= 123, "a close reason fits a close frame: {}", refusal.1);
        }
    }

    #[test]
    fn calls_go_to_the_tab_focused_last_ties_to_the_newest() {
        let a = proven(1, 10);
        let b = proven(2, 20);
        assert_eq!(route([&a, &b]).unwrap().number, 2);
        let TabAction::Update(a) = a.on_message(r#"{"type":"focus","focused":true}"#, 30) else {
            panic!()
        };
        assert_eq!(route([&a, &b]).unwrap().number, 1);
        assert_eq!(a.on_message(r#"{"type":"focus","focused":false}"#, 40), TabAction::Ignore);
        let same = Tab { focus_ms: 30, ..b.clone() };
        assert_eq!(route([&a, &same]).unwrap().number, 2, "a tie goes to the newest tab");
        assert_eq!(
            route([&same, &a]).unwrap().number,
            2,
            "whatever the order the tabs are listed in"
        );
        assert!(route([&tab(3)]).is_none(), "an unproven tab gets no calls");
        let TabAction::Verify(checking, _) =
            tab(4).on_message(&hello(&signature(), PROTOCOL_VERSION, BUNDLE_DIGEST), 50)
        else {
            panic!()
        };
        assert!(route([&checking]).is_none(), "nor one whose proof is being checked");
    }

    #[test]
    fn a_proven_tab_approves_codes_asks_and_answers() {
        let t = proven(1, 10);
        assert!(
            matches!(t.on_message(r#"{"type":"approve","code":"abcde-12345"}"#, 11), TabAction::Approve(Named::Typed(c), None) if c.as_str() == "ABCDE12345")
        );
        let link = r#"{"type":"approve","link":"abcdefgh0123456789"}"#;
        assert!(
            matches!(t.on_message(link, 11), TabAction::Approve(Named::Linked(l), None) if l.as_str() == "ABCDEFGH0123456789"),
            "a link's reference is not a code"
        );
        assert!(matches!(
            t.on_message(r#"{"type":"approve","code":"abcdefgh0123456789"}"#, 11),
            TabAction::RefuseCode(_, refusal::MALFORMED)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"approve","link":"abcde-12345"}"#, 11),
            TabAction::RefuseCode(_, refusal::MALFORMED)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"approve","code":"nope"}"#, 11),
            TabAction::RefuseCode(_, refusal::MALFORMED)
        ));
        assert!(matches!(
            t.on_message(r#"{"type":"result","id":5,"data":[1]}"#, 12),
            TabAction::Result(5, _)
        ));
        assert_eq!(
            t.on_message(r#"{"type":"asking","id":5,"sentence":"Delete?"}"#, 12),
            TabAction::Asking(5, "Delete?".into())
        );
        assert_eq!(t.on_message(r#"{"type":"answered","id":5}"#, 12), TabAction::Answered(5));
        assert_eq!(t.on_message(r#"{"type":"step"}"#, 12), TabAction::PersonStep);
        assert_eq!(t.on_message(r#"{"type":"connections"}"#, 12), TabAction::ListConnections);
        assert_eq!(
            t.on_message(r#"{"type":"forget","id":"g"}"#, 12),
            TabAction::Forget("g".into())
        );
        assert_eq!(
            t.on_message(r#"{"type":"stop","connection":"g"}"#, 12),
            TabAction::Stopped("g".into(), true)
        );
        assert_eq!(
            t.on_message(r#"{"type":"go_on","connection":"g"}"#, 12),
            TabAction::Stopped("g".into(), false)
        );
        assert!(matches!(
            tab(2).on_message(r#"{"type":"go_on","connection":"g"}"#, 12),
            TabAction::Close(close::PROOF_FAILED, _)
        ));
        assert_eq!(
            tab(2).on_message(r#"{"type":"connections"}"#, 12),
            TabAction::Close(close::PROOF_FAILED, sentences::tab::PROVE_FIRST)
        );
        assert_eq!(t.on_message("garbage", 12), TabAction::Ignore);
    }

    #[test]
    fn a_proven_tab_states_its_tools_and_view_and_hears_why_a_list_is_refused() {
        let t = proven(1, 10);
        let list = r#"{"type":"tools","tools":[{"name":"a","inputSchema":{"type":"object"},"setting":"asks"}]}"#;
        assert!(matches!(t.on_message(list, 11), TabAction::Tools(l) if l.tool("a").is_some()));
        let TabAction::RefuseTools(sentence) =
            t.on_message(r#"{"type":"tools","tools":[{"name":"status","inputSchema":{"type":"object"},"setting":"runs"}]}"#, 11)
        else {
            panic!("a list naming status is refused")
        };
        assert!(sentence.contains("relay's own tool"), "{sentence}");
        let long =
            format!(r#"{{"type":"view","dataset":"{}"}}"#, "é".repeat(MAX_DATASET_NAME_CHARS + 5));
        assert!(
            matches!(t.on_message(&long, 11), TabAction::View(d) if d.chars().count() == MAX_DATASET_NAME_CHARS)
        );
        assert!(matches!(tab(2).on_message(list, 11), TabAction::Close(close::PROOF_FAILED, _)));
    }
}
