//! The official MCP Rust SDK (rmcp 3.11.0) against the relay, without a person.
//!
//! It connects to `${TABRELAY_URL}/` with rmcp's `OAuthState` (discovery, dynamic
//! registration, PKCE, an in-memory credential store that counts its saves): it opens the
//! authorization URL as a browser would (one GET, no redirects followed, then the page script's
//! POST of the sealed request to `/authorize/code`), reads the connect code and the cookie from
//! that answer, prints `CODE <code>` on stdout for the approver
//! (tests/e2e/rmcp_client.test.mjs, whose tab approves it), and polls `/authorize/status` with
//! that cookie until the page says where to go; that redirect URL goes to
//! `OAuthState::handle_callback_url`.
//!
//! Then it lists the tools, calls `dataset_describe`, makes the stored access token look
//! expired (so rmcp's auth manager refreshes with its refresh token before the next request),
//! calls `dataset_describe` again, and prints one JSON line with the results. Tokens never reach
//! the output, only short hashes of them. Diagnostics go to stderr.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use oauth2::TokenResponse;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::transport::auth::OAuthState;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore,
    InMemoryCredentialStore, StoredCredentials, StreamableHttpClientTransport,
};
use rmcp::ServiceExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const CALLBACK: &str = "http://127.0.0.1:9/callback";

type Error = Box<dyn std::error::Error + Send + Sync>;

macro_rules! log {
    ($($arg:tt)*) => { eprintln!("[rmcp_client] {}", format!($($arg)*)) };
}

/// A short hash, so tokens never reach the output.
fn fingerprint(secret: Option<&str>) -> Value {
    match secret {
        Some(s) => {
            let digest = Sha256::digest(s.as_bytes());
            Value::String(digest.iter().take(8).map(|b| format!("{b:02x}")).collect())
        }
        None => Value::Null,
    }
}

/// rmcp's in-memory store, counting saves, able to make the access token look expired.
#[derive(Clone, Default)]
struct CountingStore {
    inner: InMemoryCredentialStore,
    saves: Arc<AtomicUsize>,
}

impl CountingStore {
    fn saves(&self) -> usize {
        self.saves.load(Ordering::SeqCst)
    }

    /// (access token, refresh token) as stored now.
    async fn tokens(&self) -> Result<(Option<String>, Option<String>), AuthError> {
        let stored = self.inner.load().await?;
        let Some(response) = stored.and_then(|s| s.token_response) else {
            return Ok((None, None));
        };
        Ok((
            Some(response.access_token().secret().to_string()),
            response.refresh_token().map(|t| t.secret().to_string()),
        ))
    }

    /// Dates the stored token back to 1970, so the auth manager sees it expired (as it would
    /// after an hour) and refreshes before the next request. Not counted as a save.
    async fn make_expired(&self) -> Result<(), Error> {
        let mut stored: StoredCredentials =
            self.inner.load().await?.ok_or("no stored credentials to expire")?;
        let expires_in = stored
            .token_response
            .as_ref()
            .and_then(|t| t.expires_in())
            .ok_or("the token response has no expires_in, so rmcp would never refresh it")?;
        log!("token expires in {} s; marking it received at 0", expires_in.as_secs());
        stored.token_received_at = Some(0);
        self.inner.save(stored).await?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl CredentialStore for CountingStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.inner.load().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.saves.fetch_add(1, Ordering::SeqCst);
        self.inner.save(credentials).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.inner.clear().await
    }
}

/// Plays the person's browser: opens the authorization URL, prints the connect code, waits
/// for the tab's approval, and returns the redirect URL (code, state, iss) to the callback.
async fn headless_browser(relay: &str, authorization_url: &str) -> Result<String, Error> {
    let wait = Duration::from_secs_f64(
        std::env::var("TABRELAY_APPROVAL_WAIT_S").ok().and_then(|s| s.parse().ok()).unwrap_or(30.0),
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(15))
        .build()?;
    let page = http.get(authorization_url).send().await?;
    let status = page.status();
    let text = page.text().await?;
    // What the page's script does: post the sealed request back for the connect code.
    let sealed = text
        .split_once("data-request=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(sealed, _)| sealed.to_string());
    let Some(sealed) = sealed.filter(|_| status.is_success()) else {
        let head: String = text.chars().take(300).collect();
        return Err(format!("no waiting page ({status}): {head}").into());
    };
    let made = http.post(format!("{relay}/authorize/code")).body(sealed).send().await?;
    let cookie = made
        .headers()
        .get(reqwest::header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").to_string())
        .unwrap_or_default();
    let made: Value = serde_json::from_str(&made.text().await?)?;
    let code = made
        .get("code")
        .and_then(Value::as_str)
        .filter(|c| {
            !c.is_empty()
                && c.chars().all(|ch| ch.is_ascii_digit() || ch.is_ascii_uppercase() || ch == '-')
        })
        .map(str::to_owned);
    let Some(code) = code else {
        return Err(format!("no connect code: {made}").into());
    };
    // The approver (the tab) reads this line and approves the code.
    println!("CODE {code}");
    let deadline = Instant::now() + wait;
    let state = loop {
        let r = http
            // The code is [0-9A-Z-] only: nothing to escape.
            .get(format!("{relay}/authorize/status?code={code}"))
            .header(reqwest::header::COOKIE, &cookie)
            .send()
            .await?;
        let body: Value = serde_json::from_str(&r.text().await?)?;
        if body.get("state").and_then(Value::as_str) != Some("waiting") {
            break body;
        }
        if Instant::now() > deadline {
            return Err(format!(
                "connect code {code} not approved within {} s",
                wait.as_secs_f64()
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let redirect = match (
        state.get("state").and_then(Value::as_str),
        state.get("redirect").and_then(Value::as_str),
    ) {
        (Some("approved"), Some(redirect)) => redirect.to_string(),
        _ => return Err(format!("authorization not approved: {state}").into()),
    };
    log!(
        "approved; redirect to {}",
        reqwest::Url::parse(&redirect).map(|u| u.path().to_string()).unwrap_or_default()
    );
    Ok(redirect)
}

fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect()
}

async fn run() -> Result<Value, Error> {
    let relay = std::env::var("TABRELAY_URL")?.trim_end_matches('/').to_string();
    let server_url = format!("{relay}/");
    let store = CountingStore::default();
    let mut authorizations = 0;

    // Register and authorize: OAuthState start_authorization -> get_authorization_url ->
    // the browser (GET, no redirect; the tab approves) -> handle_callback_url.
    let mut manager = AuthorizationManager::new(server_url.as_str()).await?;
    manager.set_credential_store(store.clone());
    let mut oauth = OAuthState::Unauthorized(manager);
    oauth
        .start_authorization(
            AuthorizationRequest::new(CALLBACK).with_client_name("rmcp e2e client"),
        )
        .await?;
    let authorization_url = oauth.get_authorization_url().await?;
    authorizations += 1;
    let redirect = headless_browser(&relay, &authorization_url).await?;
    oauth.handle_callback_url(&redirect).await?;
    let manager = oauth.into_authorization_manager().ok_or("not authorized after the callback")?;
    let client_id = manager.get_credentials().await?.0;
    log!("authorized; client id {}", fingerprint(Some(&client_id)));

    let transport = StreamableHttpClientTransport::with_client(
        AuthClient::new(reqwest::Client::default(), manager),
        StreamableHttpClientTransportConfig::with_uri(server_url.as_str()),
    );
    let client = ClientConfig::default().serve(transport).await?;
    let mut out = json!({ "sdk": "rmcp 3.11.0" });
    let info = client.peer_info().ok_or("no server info after initialize")?;
    out["server"] = json!(info.server_info.as_ref().map(|s| s.name.clone()));
    out["protocol_version"] = json!(info.protocol_version.to_string());
    let tools = client.list_all_tools().await?;
    out["tools"] = json!(tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>());
    let first = client.call_tool(CallToolRequestParams::new("dataset_describe")).await?;
    out["describe"] =
        json!({ "is_error": first.is_error.unwrap_or(false), "text": text_of(&first) });
    out["authorizations_before_refresh"] = json!(authorizations);

    // Force one refresh: the access token now looks expired, so rmcp's auth manager uses its
    // refresh token before the next request (as it would after an hour).
    let (access_before, refresh_before) = store.tokens().await?;
    if refresh_before.is_none() {
        return Err("rmcp stored no refresh token".into());
    }
    let saves_before = store.saves();
    store.make_expired().await?;
    let second = client.call_tool(CallToolRequestParams::new("dataset_describe")).await?;
    let (access_after, refresh_after) = store.tokens().await?;
    let second_text = text_of(&second);
    out["refresh"] = json!({
        "refresh_token_before": fingerprint(refresh_before.as_deref()),
        "refresh_token_after": fingerprint(refresh_after.as_deref()),
        "refresh_token_changed": refresh_after.is_some() && refresh_after != refresh_before,
        "access_token_changed": access_after.is_some() && access_after != access_before,
        "tokens_saved": store.saves() - saves_before,
        "second_call_ok": !second.is_error.unwrap_or(false) && second_text.starts_with("<tabrelay-data>"),
        "second_text": second_text,
    });
    out["authorizations"] = json!(authorizations);
    client.cancel().await?;
    Ok(out)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    match run().await {
        Ok(out) => println!("{out}"),
        Err(e) => {
            // One JSON line either way, so the test can say what failed.
            log!("failed: {e}");
            println!("{}", json!({ "error": e.to_string() }));
            std::process::exit(1);
        }
    }
}
