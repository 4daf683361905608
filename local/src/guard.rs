//! The local server's own decisions about a socket, before the pairing hears of it: the `Host`
//! it was addressed by must be loopback (a page of another site whose name was made to point at
//! 127.0.0.1, DNS rebinding, names its own host), and its `Origin` must be one of the app
//! origins the server was started with (checked by the core's own rule, [`tab_socket`]).
//! Everything past them (the key's proof, the challenge bound to the address, every message's
//! bound) is the pairing's, as on the Worker. A later agent app's own `tabrelay-local` joins on
//! `/agent` ([`admit_agent`]): loopback, no `Origin` (a page's socket always has one), and the
//! secret only the person's own programs can read.

use tabrelay::config::Config;
use tabrelay::pairing::{tab_socket, SocketRefused};

/// Why a socket is refused before the pairing hears of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not addressed to a loopback host (DNS rebinding): 421, with this sentence.
    Host(&'static str),
    /// Refused by the relay's rule for `/tab`: this HTTP status and sentence (an upgrade that
    /// is no WebSocket), or the socket closed with this code and reason (another origin, a
    /// pairing id that does not read).
    Status(u16, String),
    /// The path is not `/tab`.
    NotFound,
}

/// The sentence for a host that is not loopback.
pub const NOT_LOOPBACK: &str =
    "This address answers only as 127.0.0.1, localhost or [::1] (the name it was reached by is another).";

/// The local origin a loopback `Host` names (`http://127.0.0.1:8790`), or None when the host is
/// not loopback or is not on `port`.
#[must_use]
pub fn loopback_origin(host: Option<&str>, port: u16) -> Option<String> {
    let host = host?.trim();
    let (name, said_port) = match host.rsplit_once(':') {
        Some((name, p)) if !name.ends_with(']') || host.starts_with('[') => (name, p),
        _ => return None,
    };
    if said_port.parse::<u16>().ok()? != port {
        return None;
    }
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "127.0.0.1" | "localhost" | "[::1]")
        .then(|| format!("http://{name}:{port}"))
}

/// Whether a request line's `path` (with its query) is the tab's socket, `/tab`.
#[must_use]
pub fn is_tab_path(path: &str) -> bool {
    path.split('?').next() == Some("/tab")
}

/// The pairing a socket opening names, and the local origin it addressed (what the tab's proof
/// is bound to); or why it is refused.
///
/// # Errors
/// [`Refused`]: the path, the host, the upgrade, the origin or the pairing id.
pub fn admit(
    path: &str,
    host: Option<&str>,
    upgrade: Option<&str>,
    origin: Option<&str>,
    port: u16,
    config: &Config,
) -> Result<(String, String), Refused> {
    if !is_tab_path(path) {
        return Err(Refused::NotFound);
    }
    let local = loopback_origin(host, port).ok_or(Refused::Host(NOT_LOOPBACK))?;
    let query = tabrelay::http::query_of(path);
    match tab_socket(upgrade, origin, config, &query) {
        Ok(pairing) => Ok((pairing, local)),
        Err(SocketRefused::Plain(answer)) => {
            let body = answer.body.map(|b| String::from_utf8_lossy(&b).into_owned());
            Err(Refused::Status(answer.status, body.unwrap_or_default()))
        }
        Err(SocketRefused::Closed((code, reason))) => Err(Refused::Status(code, reason.into())),
    }
}

/// The sentence for an `/agent` socket that is not a later `tabrelay-local` of the same user.
pub const NOT_AN_AGENT_APP: &str =
    "Only another tabrelay-local of this computer's user joins here (with the secret the first one wrote).";

/// Whether a socket to `/agent` is a later `tabrelay-local` of the same user: a loopback
/// `Host` on `port`, no `Origin` (every page's socket has one: no page joins), and `said`
/// equal to `secret` (compared in time that does not depend on where they differ).
///
/// # Errors
/// [`Refused`]: the host (421), or anything else (403).
pub fn admit_agent(
    host: Option<&str>,
    origin: Option<&str>,
    said: Option<&str>,
    port: u16,
    secret: &str,
) -> Result<(), Refused> {
    loopback_origin(host, port).ok_or(Refused::Host(NOT_LOOPBACK))?;
    let said = said.unwrap_or_default().as_bytes();
    let same = said.len() == secret.len()
        && said.iter().zip(secret.as_bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
    if origin.is_some() || secret.is_empty() || !same {
        return Err(Refused::Status(403, NOT_AN_AGENT_APP.to_owned()));
    }
    Ok(())
}

/// Whether a request line's `path` is a later agent app's socket, `/agent`.
#[must_use]
pub fn is_agent_path(path: &str) -> bool {
    path == "/agent"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        let key = "k".repeat(48);
        Config::from_vars(
            Some(&key),
            None,
            Some("http://localhost:8788"),
            Some("http://localhost:8788/"),
            None,
        )
        .unwrap()
    }

    /// A pairing id that reads (the core's rule: 64 lowercase hex digits).
    const PAIRING: &str =
        "/tab?pairing=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn admitted(host: &str, origin: &str) -> Result<(String, String), Refused> {
        admit(PAIRING, Some(host), Some("websocket"), Some(origin), 8790, &config())
    }

    #[test]
    fn a_loopback_host_on_the_port_names_the_local_origin() {
        assert_eq!(
            loopback_origin(Some("127.0.0.1:8790"), 8790).as_deref(),
            Some("http://127.0.0.1:8790")
        );
        assert_eq!(
            loopback_origin(Some("LocalHost:8790"), 8790).as_deref(),
            Some("http://localhost:8790")
        );
        assert_eq!(loopback_origin(Some("[::1]:8790"), 8790).as_deref(), Some("http://[::1]:8790"));
    }

    #[test]
    fn a_rebinding_host_is_refused_whatever_the_origin() {
        for host in [
            "evil.example:8790",
            "127.0.0.1.evil.example:8790",
            "localhost",
            "127.0.0.1:8791",
            "",
            "[::1]",
        ] {
            assert_eq!(
                admitted(host, "http://localhost:8788"),
                Err(Refused::Host(NOT_LOOPBACK)),
                "{host}"
            );
        }
    }

    #[test]
    fn a_socket_from_another_origin_is_refused() {
        let refused = admitted("127.0.0.1:8790", "http://evil.example");
        let origin_refused = tabrelay_bundle::protocol::close::ORIGIN_REFUSED;
        assert!(
            matches!(refused, Err(Refused::Status(c, _)) if c == origin_refused),
            "{refused:?}"
        );
        assert!(matches!(admitted("127.0.0.1:8790", ""), Err(Refused::Status(..))));
    }

    #[test]
    fn the_apps_own_tab_on_loopback_is_admitted() {
        let (pairing, local) = admitted("127.0.0.1:8790", "http://localhost:8788").unwrap();
        assert_eq!((pairing.len(), local.as_str()), (64, "http://127.0.0.1:8790"));
    }

    #[test]
    fn only_the_tab_path_is_served() {
        let config = config();
        let other = admit("/other", Some("127.0.0.1:8790"), Some("websocket"), None, 8790, &config);
        assert_eq!(other, Err(Refused::NotFound));
        let plain = admit(
            PAIRING,
            Some("127.0.0.1:8790"),
            None,
            Some("http://localhost:8788"),
            8790,
            &config,
        );
        assert!(matches!(plain, Err(Refused::Status(426, _))), "{plain:?}");
    }

    #[test]
    fn only_a_later_tabrelay_local_with_the_secret_joins() {
        let host = Some("127.0.0.1:8790");
        assert_eq!(admit_agent(host, None, Some("s3cret"), 8790, "s3cret"), Ok(()));
        let refused = Err(Refused::Status(403, NOT_AN_AGENT_APP.to_owned()));
        assert_eq!(admit_agent(host, None, Some("s3creT"), 8790, "s3cret"), refused);
        assert_eq!(admit_agent(host, None, None, 8790, "s3cret"), refused);
        assert_eq!(admit_agent(host, None, Some(""), 8790, ""), refused, "no secret, no joining");
        let page = Some("http://localhost:8788");
        assert_eq!(admit_agent(host, page, Some("s3cret"), 8790, "s3cret"), refused, "a page");
        let rebound = admit_agent(Some("evil.example:8790"), None, Some("s3cret"), 8790, "s3cret");
        assert_eq!(rebound, Err(Refused::Host(NOT_LOOPBACK)));
    }
}
