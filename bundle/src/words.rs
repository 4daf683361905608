//! The words both ends say of one thing, written once: who asks for a connection (the relay's
//! waiting page and the tab's consent), which agent apps reach a loopback address (the relay's
//! connector page and the tab's Agents panel), the person's presence (the relay's refusals of an
//! approval and the tab's own checks), and a card's answers (the tab's card and the local server's
//! question in the agent app). The tab's copy of the bundle (`tab/generated/bundle.js`) carries them; what only
//! the tab says is compiled only for the generator (feature `shapes`), never into the Worker.
//!
//! The sentences the relay puts into its pages are macros that expand to string literals (as
//! the relay's own page words, `sentences::page`), so a page's template takes them in with
//! `concat!` and the Worker carries each once.

/// After a verified domain, where who asks is named (`{domain} (…)`).
#[macro_export]
macro_rules! who_verified {
    () => {
        "(verified domain: it publishes this app's client metadata)"
    };
}

/// After a name the app gave itself, where who asks is named (`“{name}” (…)`).
#[macro_export]
macro_rules! who_not_verified {
    () => {
        "(name given by the app, not verified)"
    };
}

/// After a verified domain whose document names the app otherwise (`$name`: that name).
#[macro_export]
macro_rules! who_calls_itself {
    ($name:literal) => {
        concat!(", which calls itself “", $name, "”,")
    };
}

/// Beside a connector address that is this computer's own (loopback): which agent apps reach it.
#[macro_export]
macro_rules! local_reach {
    () => {
        "Only agent apps on this computer reach this address (Claude Code, MCP Inspector); Claude and ChatGPT on the web need the relay deployed at https."
    };
}

/// What the person's presence is confirmed with, as every presence sentence names it.
macro_rules! device {
    () => {
        "fingerprint, face, PIN or screen lock"
    };
}

/// What the person reads of their presence: the relay's refusals (sent to the tab) and the
/// tab's own (its checks of its decisions, `tab/presence-check.js` `PRESENCE_SENTENCES`).
pub mod presence {
    /// An approval came without the person's presence proven on this device (or with an
    /// assertion that does not hold), in a pairing that holds a presence credential: nothing is
    /// connected.
    pub const NOT_PROVEN: &str = concat!(
        "Nothing was connected: your device did not confirm it was you (",
        device!(),
        "), and this browser approves only with that. Press Approve again and confirm on your device."
    );
    /// The presence credential a tab sent could not be read, or does not say the person was
    /// verified: it is not kept.
    pub const NOT_KEPT: &str = "Your device's check could not be set up here (it did not confirm it was you), so nothing changed; try again and confirm on your device.";
    /// A tab sent a presence credential while the pairing holds one: the first stays.
    pub const HELD: &str = "This browser already has its device check set up; nothing changed. To start over, clear this site's data in the browser.";

    /// The tab asks the device, while it waits for the person.
    #[cfg(feature = "shapes")]
    pub const ASKING: &str = concat!("Confirm on your device that it is you (", device!(), ")…");
    /// The device did not confirm the person for one of the tab's decisions.
    #[cfg(feature = "shapes")]
    pub const NOT_CONFIRMED: &str = concat!(
        "Your device did not confirm it was you (",
        device!(),
        "), so nothing changed; press again and confirm on your device."
    );
    /// The browser has no device to confirm with, and the app refuses decisions there.
    #[cfg(feature = "shapes")]
    pub const NO_DEVICE: &str = concat!(
        "This browser cannot confirm it is you (it has no ",
        device!(),
        " it can use), so this choice is not available here; make it in a browser that can."
    );
    /// The browser has no device to confirm with, and the app allows decisions there.
    #[cfg(feature = "shapes")]
    pub const WITHOUT_DEVICE: &str =
        "This browser cannot confirm it is you: an agent driving this browser could press this as well as you.";
}

/// A card's answers: the words of the answers an agent app may give for the person
/// ([`crate::protocol::RelayMessage::Elicited`]'s `choice`), and each answer's name as the
/// card's question and the agent app's prompt say it.
pub mod card {
    /// Allow this call once.
    pub const ONCE: &str = "once";
    /// Deny this call.
    pub const DENY: &str = "deny";
    /// The answers an agent app may give (`elicited`), in the order it is offered them.
    #[cfg(feature = "shapes")]
    pub const ELICITED: [&str; 2] = [ONCE, DENY];
    /// The name of [`ONCE`].
    pub const ONCE_NAME: &str = "Allow once";
    /// The name of [`DENY`].
    pub const DENY_NAME: &str = "Deny";
    /// Every answer of a card and its name, in the order the card shows them (the tab's
    /// `CHOICES`): once, for this connection until the tab closes, always, deny.
    #[cfg(feature = "shapes")]
    pub const CHOICES: [(&str, &str); 4] = [
        (ONCE, ONCE_NAME),
        ("connection", "This connection"),
        ("always", "Always"),
        (DENY, DENY_NAME),
    ];
}
