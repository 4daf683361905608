//! The relay's configuration from its secrets and vars, checked once.

use crate::keys::Keys;
use crate::limits::{AUTH_CODE_TTL_MS, CONNECT_CODE_TTL_MS, TAB_CALL_WAIT_MS};

/// What the relay runs with.
#[derive(Debug, Clone)]
pub struct Config {
    /// The signing keys.
    pub keys: Keys,
    /// The app origins whose tabs may pair.
    pub allowed_origins: Vec<String>,
    /// Where the approval link opens the app.
    pub app_url: String,
    /// How long a call waits for the tab (`CALL_WAIT_MS`, at most [`TAB_CALL_WAIT_MS`]).
    pub call_wait_ms: u64,
    /// The origins of browser-based agent apps whose pages may call the MCP endpoint
    /// (`CLIENT_ORIGINS`; none by default).
    pub client_origins: Vec<String>,
    /// Single-label names the relay may fetch client metadata documents from
    /// (`LOCAL_METADATA_HOSTS`; none by default: for local development and tests only, see
    /// [`crate::oauth::cimd::check_fetchable`]).
    pub local_metadata_hosts: Vec<String>,
    /// How long a connect code's object keeps anything, in milliseconds: at that alarm it
    /// deletes all it stored. [`CODE_KEPT_MS`] (neither the code nor an authorization code it
    /// gave can be used later), or shorter (`CODE_KEPT_MS`: for tests, which watch it go).
    pub code_kept_ms: u64,
}

/// How long a connect code's object keeps its session by default: until neither the code nor
/// an authorization code it gave can be used.
pub const CODE_KEPT_MS: u64 = CONNECT_CODE_TTL_MS + AUTH_CODE_TTL_MS;

/// A comma- or space-separated list of origins, without trailing slashes.
fn origins(list: Option<&str>) -> Vec<String> {
    let mut origins = Vec::new();
    for o in list.unwrap_or_default().split([',', ' ']).filter(|o| !o.is_empty()) {
        origins.push(o.trim_end_matches('/').to_owned());
    }
    origins
}

/// `CODE_KEPT_MS` read: from 1000 to [`CODE_KEPT_MS`]; anything else is the default.
fn code_kept_ms(ms: Option<&str>) -> u64 {
    match ms.and_then(|m| m.trim().parse::<u64>().ok()) {
        Some(ms @ 1000..=CODE_KEPT_MS) => ms,
        _ => CODE_KEPT_MS,
    }
}

/// Whether `item` is one of a configured `list`.
#[must_use]
pub fn listed(list: &[String], item: &str) -> bool {
    for listed in list {
        if listed == item {
            return true;
        }
    }
    false
}

impl Config {
    /// The tests' configuration: a 32-byte key, the app at `https://app.example`.
    #[cfg(test)]
    #[must_use]
    pub fn for_tests() -> Self {
        let key = "k".repeat(32);
        let (origins, app) = (Some("https://app.example"), Some("https://app.example/"));
        Self::from_vars(Some(&key), None, origins, app, None).expect("the tests' configuration")
    }

    /// Reads the configuration; the error is one line for the log, naming no secret.
    pub fn from_vars(
        signing_key: Option<&str>,
        previous_key: Option<&str>,
        allowed_origins: Option<&str>,
        app_url: Option<&str>,
        call_wait_ms: Option<&str>,
    ) -> Result<Self, String> {
        let key = signing_key.ok_or("RELAY_SIGNING_KEY is not set")?;
        let keys = Keys::new(key, previous_key).map_err(|e| format!("{e}"))?;
        let allowed_origins = origins(allowed_origins);
        if allowed_origins.is_empty() {
            return Err("ALLOWED_ORIGINS is empty: name the app origins whose tabs may pair".into());
        }
        let app_url = app_url.filter(|u| !u.is_empty()).ok_or("APP_URL is not set")?.to_owned();
        let call_wait_ms = match call_wait_ms.filter(|w| !w.is_empty()) {
            None => TAB_CALL_WAIT_MS,
            Some(w) => match w.parse::<u64>() {
                Ok(ms @ 1000..=TAB_CALL_WAIT_MS) => ms,
                _ => {
                    return Err(format!(
                        "CALL_WAIT_MS must be milliseconds from 1000 to {TAB_CALL_WAIT_MS}"
                    ))
                }
            },
        };
        Ok(Self {
            keys,
            allowed_origins,
            app_url,
            call_wait_ms,
            client_origins: Vec::new(),
            local_metadata_hosts: Vec::new(),
            code_kept_ms: CODE_KEPT_MS,
        })
    }

    /// Reads the configuration from the deployment's secrets and vars, each looked up by its
    /// name with `var`; the error is one line for the log, naming no secret.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let mut config = Self::from_vars(
            var("RELAY_SIGNING_KEY").as_deref(),
            var("RELAY_SIGNING_KEY_PREVIOUS").as_deref(),
            var("ALLOWED_ORIGINS").as_deref(),
            var("APP_URL").as_deref(),
            var("CALL_WAIT_MS").as_deref(),
        )?;
        config.client_origins = origins(var("CLIENT_ORIGINS").as_deref());
        config.local_metadata_hosts = origins(var("LOCAL_METADATA_HOSTS").as_deref());
        config.code_kept_ms = code_kept_ms(var("CODE_KEPT_MS").as_deref());
        Ok(config)
    }

    /// The configuration with the browser-based agent apps' origins (`CLIENT_ORIGINS`).
    #[must_use]
    pub fn with_client_origins(mut self, list: Option<&str>) -> Self {
        self.client_origins = origins(list);
        self
    }

    /// The configuration with the single-label names client metadata may be fetched from
    /// (`LOCAL_METADATA_HOSTS`, comma- or space-separated).
    #[must_use]
    pub fn with_local_metadata_hosts(mut self, list: Option<&str>) -> Self {
        self.local_metadata_hosts = origins(list);
        self
    }

    /// The configuration with a connect code's object kept shorter (`CODE_KEPT_MS`, from 1000
    /// to [`CODE_KEPT_MS`]; anything else keeps the default).
    #[must_use]
    pub fn with_code_kept_ms(mut self, ms: Option<&str>) -> Self {
        self.code_kept_ms = code_kept_ms(ms);
        self
    }

    /// Whether a page of this origin may pair.
    #[must_use]
    pub fn allows_origin(&self, origin: &str) -> bool {
        listed(&self.allowed_origins, origin)
    }

    /// Whether a request to the MCP endpoint with this browser `Origin` may be served: none
    /// (not a browser), the relay's own, an app's, or a browser-based agent app's the owner
    /// named. Any other is a page elsewhere reaching the endpoint through the browser (DNS
    /// rebinding), refused.
    #[must_use]
    pub fn allows_caller(&self, origin: Option<&str>, own: &str) -> bool {
        origin.is_none_or(|o| o == own || self.allows_origin(o) || listed(&self.client_origins, o))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_weak_or_missing_key_is_one_line_that_names_no_secret() {
        let e = Config::from_vars(
            Some("hunter2"),
            None,
            Some("https://a.example"),
            Some("https://a.example/"),
            None,
        )
        .unwrap_err();
        assert!(e.starts_with("RELAY_SIGNING_KEY:") && !e.contains("hunter2"), "{e}");
        assert!(Config::from_vars(None, None, Some("x"), Some("y"), None).is_err());
    }

    #[test]
    fn the_environment_is_read_by_name() {
        let vars = [
            ("RELAY_SIGNING_KEY", "k".repeat(32)),
            ("ALLOWED_ORIGINS", "https://a.example/".into()),
            ("APP_URL", "https://a.example/app".into()),
            ("CALL_WAIT_MS", "2000".into()),
            ("CLIENT_ORIGINS", "https://agent.example".into()),
            ("LOCAL_METADATA_HOSTS", "clients".into()),
            ("CODE_KEPT_MS", "5000".into()),
        ];
        let var = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone());
        let c = Config::from_env(var).unwrap();
        assert_eq!(c.allowed_origins, ["https://a.example"]);
        assert_eq!(c.app_url, "https://a.example/app");
        assert_eq!(c.call_wait_ms, 2000);
        assert_eq!(c.client_origins, ["https://agent.example"]);
        assert_eq!(c.local_metadata_hosts, ["clients"]);
        assert_eq!(c.code_kept_ms, 5000);
        let without = |missing: &str| {
            Config::from_env(|name: &str| if name == missing { None } else { var(name) })
        };
        assert_eq!(without("CODE_KEPT_MS").unwrap().code_kept_ms, CODE_KEPT_MS);
        assert_eq!(without("RELAY_SIGNING_KEY").unwrap_err(), "RELAY_SIGNING_KEY is not set");
        assert_eq!(without("APP_URL").unwrap_err(), "APP_URL is not set");
        assert!(without("ALLOWED_ORIGINS").unwrap_err().starts_with("ALLOWED_ORIGINS is empty"));
    }

    #[test]
    fn origins_are_a_list() {
        let c = Config::from_vars(
            Some(&"k".repeat(32)),
            None,
            Some("https://a.example/, http://127.0.0.1:8788"),
            Some("https://a.example/"),
            None,
        )
        .unwrap();
        assert_eq!(c.call_wait_ms, TAB_CALL_WAIT_MS);
        assert!(c.allows_origin("https://a.example"));
        assert!(c.allows_origin("http://127.0.0.1:8788"));
        assert!(!c.allows_origin("https://evil.example"));
        assert!(c.allows_caller(None, "https://relay.example"));
        assert!(c.allows_caller(Some("https://relay.example"), "https://relay.example"));
        assert!(c.allows_caller(Some("https://a.example"), "https://relay.example"));
        assert!(!c.allows_caller(Some("http://evil.example.com"), "https://relay.example"));
        assert!(!c.allows_caller(Some("null"), "https://relay.example"));
        let c = c.with_local_metadata_hosts(Some("vm, devbox"));
        assert_eq!(c.local_metadata_hosts, ["vm", "devbox"]);
        let c = c.with_client_origins(Some("http://localhost:6274/"));
        assert!(c.allows_caller(Some("http://localhost:6274"), "https://relay.example"));
        assert!(!c.allows_caller(Some("http://localhost:6275"), "https://relay.example"));
    }

    #[test]
    fn the_call_wait_may_be_shortened_never_lengthened() {
        let with = |w| {
            Config::from_vars(
                Some(&"k".repeat(32)),
                None,
                Some("https://a.example"),
                Some("https://a.example/"),
                Some(w),
            )
        };
        assert_eq!(with("5000").unwrap().call_wait_ms, 5000);
        let kept = |ms| with("5000").unwrap().with_code_kept_ms(ms).code_kept_ms;
        assert_eq!(kept(None), CODE_KEPT_MS);
        assert_eq!(kept(Some("3000")), 3000, "a code's object may be kept shorter");
        for never in ["999", "soon", "99999999999"] {
            assert_eq!(kept(Some(never)), CODE_KEPT_MS, "{never}");
        }
        assert!(with("300000").is_err());
        assert!(with("soon").is_err());
    }
}
