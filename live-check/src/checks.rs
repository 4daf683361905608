//! The checks, in the order a person and an agent meet them, each reported as one PASS or FAIL
//! line with its time and what was seen; then the clean-up, whatever happened.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tabrelay_bundle::agent::{says_withdrawn, TAB_GONE, VIEW_MIME, VIEW_URI};
use tabrelay_bundle::catalogue::Catalogue;
use tabrelay_bundle::content::{quoted, DATA_CLOSE, DATA_OPEN};
use tabrelay_bundle::protocol::STATUS_TOOL;

use crate::cdp::{Browser, Page};
use crate::net::{self, param, rpc, Answer, Callback, Http};
use crate::{interrupted, Options};

/// The name the check registers under; its connections are listed in the tab with it.
const CLIENT_NAME: &str = "Tabrelay live check";
/// The MCP revision of the session era the check speaks.
const SESSION_REVISION: &str = "2025-11-25";
/// The stateless revision.
const STATELESS_REVISION: &str = "2026-07-28";
/// The demo app's tools the calls use: a read, an undoable change and its undo, a picture, and
/// a tool that asks the person first (so a call to it waits while the tab goes away).
const READ_TOOL: &str = "dataset_describe";
const CHANGE_TOOL: &str = "item_set_value";
const UNDO_TOOL: &str = "history_undo";
const PICTURE_TOOL: &str = "view_picture";
const ASKING_TOOL: &str = "items_delete";
/// How long the page may take to pair, a code to be approved, an answer to come.
const UI_WAIT: Duration = Duration::from_secs(20);
/// How many times Forget is pressed for one connection before the check says it was not
/// forgotten (a press may land while the list is drawn anew).
const FORGET_PRESSES: u32 = 4;
/// How long before pressing again a button that was not there.
const POLL_AGAIN: Duration = Duration::from_millis(200);
/// The most connections a pairing keeps (the relay's bound): the most Forget presses needed.
const MAX_FORGOTTEN: usize = 50;
/// A call to a tab that went away must fail within this.
const GONE_WITHIN: Duration = Duration::from_secs(3);
/// The idle wait against a loopback relay (workerd evicts an idle object after ~40 s; the
/// local wait only shows a call reaches a tab left alone) and against a deployed one.
const IDLE_LOCAL_SECS: u64 = 10;
const IDLE_DEPLOYED_SECS: u64 = 75;

/// One line of the report.
struct Outcome {
    name: &'static str,
    passed: bool,
}

/// A connection the check made: its tokens (never printed).
struct Connection {
    access: String,
    refresh: String,
}

/// The endpoints discovery found (or the relay's usual ones when it failed).
struct Endpoints {
    register: String,
    authorize: String,
    token: String,
}

/// Everything a run holds.
struct Run<'a> {
    options: &'a Options,
    http: Http,
    /// The MCP endpoint (the connector address).
    endpoint: String,
    app: String,
    secrets: Vec<String>,
    outcomes: Vec<Outcome>,
    started: Instant,
    browser: Option<Browser>,
    page: Option<Page>,
    callback: Option<Callback>,
    endpoints: Endpoints,
    connections: Vec<Connection>,
    /// The client the check registered.
    client_id: Option<String>,
    /// The resource its tokens are for (the protected-resource metadata's).
    resource: String,
    /// What the read answered: the dataset's name, its first item id and first column.
    dataset: Option<(String, u64, String)>,
}

/// Runs every check and cleans up; true when one failed.
pub fn run(options: &Options) -> bool {
    let relay = options.relay.clone();
    let mut run = Run {
        options,
        http: Http::new(),
        endpoint: format!("{relay}/"),
        app: String::new(),
        secrets: Vec::new(),
        outcomes: Vec::new(),
        started: Instant::now(),
        browser: None,
        page: None,
        callback: None,
        endpoints: Endpoints {
            register: format!("{relay}/register"),
            authorize: format!("{relay}/authorize"),
            token: format!("{relay}/token"),
        },
        connections: Vec::new(),
        client_id: None,
        resource: relay.clone(),
        dataset: None,
    };
    run.say_start();
    run.all();
    let cleaned = run.clean_up();
    run.summary(cleaned)
}

impl Run<'_> {
    fn relay(&self) -> &str {
        &self.options.relay
    }

    /// Keeps `s` from ever being printed.
    fn secret(&mut self, s: &str) {
        if s.len() >= 4 && !self.secrets.iter().any(|x| x == s) {
            self.secrets.push(s.to_owned());
        }
    }

    /// `line` with every secret the run holds replaced (a second guard: no check prints one).
    fn redact(&self, line: &str) -> String {
        let mut out = line.to_owned();
        for s in &self.secrets {
            out = out.replace(s.as_str(), "[secret]");
        }
        out
    }

    fn emit(&self, text: String, json: Value) {
        if self.options.json {
            println!("{}", self.redact(&json.to_string()));
        } else {
            println!("{}", self.redact(&text));
        }
    }

    fn say_start(&self) {
        self.emit(
            format!("live check of {}", self.relay()),
            json!({"relay": self.relay(), "checker": env!("CARGO_PKG_VERSION")}),
        );
    }

    /// Runs one check unless the run was interrupted; prints its line. True when it passed.
    fn check(
        &mut self,
        name: &'static str,
        f: impl FnOnce(&mut Self) -> Result<String, String>,
    ) -> bool {
        if interrupted() {
            return false;
        }
        let t = Instant::now();
        let result = f(self);
        let ms = t.elapsed().as_millis();
        let (passed, seen) = match result {
            Ok(s) => (true, s),
            Err(s) => (false, s),
        };
        let word = if passed { "PASS" } else { "FAIL" };
        self.emit(
            format!("{word} {name:<14} {ms:>6} ms  {seen}"),
            json!({"check": name, "result": word, "ms": ms as u64, "seen": seen}),
        );
        self.outcomes.push(Outcome { name, passed });
        passed
    }

    fn summary(&self, cleaned: Result<String, String>) -> bool {
        let failed: Vec<&str> =
            self.outcomes.iter().filter(|o| !o.passed).map(|o| o.name).collect();
        let passed = self.outcomes.len() - failed.len();
        let secs = self.started.elapsed().as_secs_f64();
        let cleaned_line = match &cleaned {
            Ok(s) | Err(s) => s.clone(),
        };
        let verdict = if interrupted() {
            "INTERRUPTED"
        } else if failed.is_empty() && cleaned.is_ok() {
            "PASS"
        } else {
            "FAIL"
        };
        self.emit(
            format!(
                "{verdict}: {passed} of {} checks passed in {secs:.1} s{}; clean-up: {cleaned_line}",
                self.outcomes.len(),
                if failed.is_empty() { String::new() } else { format!(" (failed: {})", failed.join(", ")) }
            ),
            json!({"summary": verdict, "passed": passed, "checks": self.outcomes.len(), "failed": failed, "seconds": secs, "clean_up": cleaned_line}),
        );
        verdict != "PASS"
    }

    /// The checks in order; a check that needs one that failed says so and fails.
    fn all(&mut self) {
        self.check("health", Self::health);
        self.check("discovery", Self::discovery);
        let registered = self.check("registration", Self::registration);
        let paired = self.check("tab", Self::tab);
        let mut first = None;
        let consented = self.check("consent-typed", |r| {
            need(registered && paired, "registration and a paired tab")?;
            let (code, verifier) = r.consent(false)?;
            first = Some((code, verifier));
            Ok("the code typed in the tab and approved there; the waiting page came back with code, state and iss".into())
        });
        let tokened = self.check("token", |r| {
            need(consented, "an approved code")?;
            let (code, verifier) = first.take().ok_or("no code")?;
            r.redeem(&code, &verifier)
        });
        let token = self.connections.first().map(|c| c.access.clone()).filter(|_| tokened);
        let t = token.clone();
        self.check("tools-list", |r| r.tools_list(t.as_deref()));
        let t = token.clone();
        let read = self.check("call-read", |r| r.read(t.as_deref()));
        let t = token.clone();
        self.check("call-change", |r| {
            need(read, "the read")?;
            r.change(t.as_deref())
        });
        let t = token.clone();
        self.check("call-picture", |r| r.picture(t.as_deref()));
        let t = token.clone();
        self.check("status-tool", |r| {
            need(read, "the read")?;
            r.status(t.as_deref())
        });
        let t = token.clone();
        self.check("view-card", |r| r.view_card(t.as_deref()));
        let t = token.clone();
        self.check("revision-2026", |r| r.stateless(t.as_deref()));
        let linked = self.check("consent-link", |r| {
            need(registered && r.page.is_some(), "registration and a paired tab")?;
            let (code, verifier) = r.consent(true)?;
            r.redeem(&code, &verifier)?;
            Ok("the waiting page's link opened the app in a new tab; Show who asks, then one press of Approve, confirmed by the relay's window in this browser; its code redeemed".into())
        });
        let t = token.clone();
        self.check("tab-gone", |r| r.tab_gone(t.as_deref()));
        let t = token.clone();
        self.check("idle-pairing", |r| r.idle(t.as_deref()));
        self.check("rotation", |r| {
            need(linked, "the second connection")?;
            r.rotation()
        });
        let t = token;
        self.check("forget", |r| r.forget(t.as_deref()));
    }

    fn health(&mut self) -> Result<String, String> {
        let a = self.http.get(&format!("{}/health", self.relay()))?;
        if a.status != 200 || a.body["ok"] != json!(true) {
            return Err(format!("/health answered {} {}", a.status, short(&a.body)));
        }
        let version = a.body["version"].as_str().ok_or("/health names no version")?.to_owned();
        self.app = match (&self.options.app, a.body["app"].as_str()) {
            (Some(app), _) => app.clone(),
            (None, Some(app)) => app.to_owned(),
            (None, None) => "http://127.0.0.1:8788/demo/".into(),
        };
        Ok(format!(
            "{} {version} answers; its app is {}",
            a.body["service"].as_str().unwrap_or("the relay"),
            self.app
        ))
    }

    fn discovery(&mut self) -> Result<String, String> {
        let relay = self.relay().to_owned();
        let first = self.http.mcp(&self.endpoint, None, &rpc(1, "tools/list", json!({})), &[])?;
        if first.status != 401 {
            return Err(format!("POST / without a token answered {}, not 401", first.status));
        }
        let header = first.www_authenticate.unwrap_or_default();
        let prm_url = header
            .split("resource_metadata=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .ok_or("the 401 names no resource_metadata")?
            .to_owned();
        let prm = self.http.get(&prm_url)?;
        if prm.status != 200 {
            return Err(format!("{prm_url} answered {}", prm.status));
        }
        let resource = prm.body["resource"].as_str().unwrap_or_default();
        if resource.trim_end_matches('/') != relay {
            return Err(format!(
                "the protected resource is {}, not {relay}",
                short(&prm.body["resource"])
            ));
        }
        let issuer = prm.body["authorization_servers"][0]
            .as_str()
            .ok_or("no authorization server named")?
            .to_owned();
        let asm = self.http.get(&format!(
            "{}/.well-known/oauth-authorization-server",
            issuer.trim_end_matches('/')
        ))?;
        if asm.status != 200
            || asm.body["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(relay.as_str())
        {
            return Err(format!(
                "authorization server metadata: {} with issuer {}",
                asm.status,
                short(&asm.body["issuer"])
            ));
        }
        if !asm.body["code_challenge_methods_supported"]
            .as_array()
            .is_some_and(|m| m.contains(&json!("S256")))
        {
            return Err("the authorization server does not offer PKCE S256".into());
        }
        let field = |k: &str| {
            asm.body[k].as_str().map(str::to_owned).ok_or(format!("the metadata names no {k}"))
        };
        self.resource = resource.to_owned();
        self.endpoints = Endpoints {
            register: field("registration_endpoint")?,
            authorize: field("authorization_endpoint")?,
            token: field("token_endpoint")?,
        };
        Ok(format!("401 → {prm_url} → issuer {issuer}; resource and issuer are {relay}"))
    }

    fn registration(&mut self) -> Result<String, String> {
        let callback = Callback::listen()?;
        let a = self.http.post_json(
            &self.endpoints.register,
            &json!({"client_name": CLIENT_NAME, "redirect_uris": [callback.uri], "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "token_endpoint_auth_method": "none"}),
        )?;
        self.callback = Some(callback);
        if a.status != 201 && a.status != 200 {
            return Err(format!("registration answered {} {}", a.status, short(&a.body["error"])));
        }
        let id = a.body["client_id"].as_str().ok_or("no client_id")?.to_owned();
        self.client_id = Some(id);
        Ok(format!("registered “{CLIENT_NAME}” with a loopback redirect ({})", a.status))
    }
}

/// Fails with a line saying what an earlier check had to give.
fn need(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("not tried: needs {what}, which failed"))
    }
}

/// A value cut short for a line.
fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 100 {
        format!("{}…", s.chars().take(100).collect::<String>())
    } else {
        s
    }
}

/// The app's Agents panel (`<tabrelay-agents>`): its shadow root, where the status, the code
/// entry and the connections are.
const PANEL: &str = "document.querySelector('tabrelay-agents')?.shadowRoot";

/// The JavaScript expression finding the element `#id` in the Agents panel.
fn panel(id: &str) -> String {
    format!("{PANEL}?.getElementById({})", json!(id))
}

/// The person at the tab and the agent's calls.
impl Run<'_> {
    fn browser(&mut self) -> Result<&mut Browser, String> {
        self.browser.as_mut().ok_or_else(|| "no browser".to_owned())
    }

    fn page(&self) -> Result<Page, String> {
        self.page.clone().ok_or_else(|| "no tab of the app is open".to_owned())
    }

    /// Opens the app in a new tab and waits until it says it is connected to the relay.
    fn open_app(&mut self) -> Result<Page, String> {
        let app = self.app.clone();
        let b = self.browser()?;
        let page = b.open(&app)?;
        if let Err(e) = b.wait_for(
            &page,
            &format!(
                "({PANEL}?.getElementById('status')?.textContent || '').includes('connected')"
            ),
            UI_WAIT,
            "the app's page saying it is connected to the relay",
        ) {
            let says = b.text_of(&page, &panel("status")).unwrap_or_default();
            return Err(format!("{e}; it says “{}”", says.trim()));
        }
        self.page = Some(page.clone());
        Ok(page)
    }

    fn tab(&mut self) -> Result<String, String> {
        if self.app.is_empty() {
            self.app =
                self.options.app.clone().unwrap_or_else(|| "http://127.0.0.1:8788/demo/".into());
        }
        self.browser = Some(Browser::launch(&self.options.chromium)?);
        let page = self.open_app()?;
        let status = self.browser()?.text_of(&page, &panel("status"))?;
        Ok(format!("{} opened in Chromium; it says “{}”", self.app, status.trim()))
    }

    /// One authorization with consent in the tab: the code typed (or, `linked`, the waiting
    /// page's link opened in the same browser and approved with one press, which the relay's
    /// confirm window finishes). The code and the verifier.
    fn consent(&mut self, linked: bool) -> Result<(String, String), String> {
        let client_id = self.client_id.clone().ok_or("no client")?;
        let redirect = self.callback.as_ref().ok_or("no loopback listener")?.uri.clone();
        let (verifier, challenge) = net::pkce()?;
        let state = net::random(16)?;
        self.secret(&verifier);
        let url = format!(
            "{}?response_type=code&client_id={}&redirect_uri={}&code_challenge={}&code_challenge_method=S256&state={}&resource={}",
            self.endpoints.authorize,
            net::encode(&client_id),
            net::encode(&redirect),
            challenge,
            state,
            net::encode(&self.resource)
        );
        let page = self.page()?;
        let b = self.browser()?;
        let waiting = b.open(&url)?;
        let shown = b.wait_for(
            &waiting,
            "(() => { const l = document.getElementById('link'); return !!l && !l.hidden && !!l.href; })()",
            UI_WAIT,
            "the waiting page showing its code and link",
        );
        let code = b.text(&waiting, "code")?.trim().to_owned();
        let link = b
            .eval(&waiting, "document.getElementById('link')?.href ?? ''")?
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.secret(&code);
        self.secret(&link);
        if let Err(e) = shown {
            let reason = self.browser()?.text(&waiting, "reason").unwrap_or_default();
            let _ = self.browser()?.close(&waiting);
            return Err(if reason.is_empty() {
                e
            } else {
                format!("the waiting page says: {reason}")
            });
        }
        let b = self.browser()?;
        let (page, approved) = if linked {
            // The person presses the waiting page's link: the app opens in a new tab with the
            // link's reference, and that tab is the one they keep (the previous one closes).
            b.click(&waiting, "#link")?;
            let app = link.split_once('#').map_or(link.as_str(), |(a, _)| a).to_owned();
            let opened = b.opened(&app, &[&page, &waiting], UI_WAIT)?;
            b.close(&page)?;
            self.page = Some(opened.clone());
            let b = self.browser()?;
            let page = opened;
            b.wait_for(
                &page,
                &format!(
                    "({PANEL}?.getElementById('status')?.textContent || '').includes('connected')"
                ),
                UI_WAIT,
                "the app opened from the link saying it is connected",
            )?;
            b.wait_for(
                &page,
                &format!("!{PANEL}?.getElementById('link-box')?.hidden"),
                UI_WAIT,
                "the tab offering the link's request",
            )?;
            b.click_element(&page, &panel("show-link"), "Show who asks")?;
            b.wait_for(
                &page,
                &format!(
                    "({PANEL}?.getElementById('code-asker')?.textContent || '').trim() !== ''"
                ),
                UI_WAIT,
                "the tab saying who asks",
            )?;
            // One press: the tab opens the relay's confirm window, which finds this browser's
            // waiting page cookie and closes itself.
            (page.clone(), b.click_element(&page, &panel("approve"), "Approve"))
        } else {
            b.type_into(&page, &panel("code"), &code)?;
            // Approve is off until the tab says who asks.
            b.wait_for(
                &page,
                &format!("{PANEL}?.getElementById('approve')?.disabled === false"),
                UI_WAIT,
                "the tab saying who asks",
            )?;
            (page.clone(), b.click_element(&page, &panel("approve"), "Approve"))
        };
        let b = self.browser()?;
        let approved = approved.and_then(|()| {
            b.wait_for(
                &page,
                &format!(
                    "/Connected to/.test({PANEL}?.getElementById('approve-result')?.textContent)"
                ),
                UI_WAIT,
                "the tab saying the code is approved",
            )
        });
        if let Err(e) = approved {
            let said = b.text_of(&page, &panel("approve-result")).unwrap_or_default();
            let _ = b.close(&waiting);
            return Err(format!("{e}; the tab says “{}”", said.trim()));
        }
        let back = self.callback.as_ref().ok_or("no loopback listener")?.next(UI_WAIT);
        let _ = self.browser()?.close(&waiting);
        let back = back?;
        let code = param(&back, "code")
            .ok_or_else(|| {
                format!(
                    "came back without a code: {}",
                    param(&back, "error").unwrap_or("no error either")
                )
            })?
            .to_owned();
        self.secret(&code);
        if param(&back, "state") != Some(state.as_str()) {
            return Err("came back with another state".into());
        }
        if param(&back, "iss").map(|i| i.trim_end_matches('/')) != Some(self.relay()) {
            return Err("came back without the relay as iss".into());
        }
        Ok((code, verifier))
    }

    /// Redeems an authorization code; the connection is kept for the later checks.
    fn redeem(&mut self, code: &str, verifier: &str) -> Result<String, String> {
        let client_id = self.client_id.clone().ok_or("no client")?;
        let redirect = self.callback.as_ref().ok_or("no loopback listener")?.uri.clone();
        let resource = self.resource.clone();
        let a = self.http.post_form(
            &self.endpoints.token,
            &[
                ("grant_type", "authorization_code"),
                ("client_id", &client_id),
                ("code", code),
                ("redirect_uri", &redirect),
                ("code_verifier", verifier),
                ("resource", &resource),
            ],
        )?;
        let tokens = self.tokens(&a)?;
        let expires = a.body["expires_in"].as_u64().unwrap_or_default();
        self.connections.push(tokens);
        Ok(format!(
            "a {} access token for {expires} s and a refresh token",
            a.body["token_type"].as_str().unwrap_or("?")
        ))
    }

    /// The tokens of a token answer (kept secret), or why there are none.
    fn tokens(&mut self, a: &Answer) -> Result<Connection, String> {
        if a.status != 200 {
            return Err(format!("/token answered {} {}", a.status, short(&a.body["error"])));
        }
        let access = a.body["access_token"].as_str().ok_or("no access token")?.to_owned();
        let refresh = a.body["refresh_token"].as_str().ok_or("no refresh token")?.to_owned();
        self.secret(&access);
        self.secret(&refresh);
        Ok(Connection { access, refresh })
    }

    /// A `tools/call` in the session era; the result, or why there is none.
    fn call(&self, token: &str, tool: &str, args: Value) -> Result<Value, String> {
        let a = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(2, "tools/call", json!({"name": tool, "arguments": args})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        if a.status != 200 {
            return Err(format!("{tool}: HTTP {}", a.status));
        }
        if let Some(e) = a.body.get("error") {
            return Err(format!("{tool}: error {} {}", e["code"], short(&e["message"])));
        }
        Ok(a.body["result"].clone())
    }

    /// A call that the tab must answer without an error.
    fn call_ok(&self, token: &str, tool: &str, args: Value) -> Result<Value, String> {
        let r = self.call(token, tool, args)?;
        if r["isError"] != json!(false) {
            return Err(format!("{tool} failed: {}", short(&r["content"][0]["text"])));
        }
        Ok(r)
    }

    fn tools_list(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let init = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(1, "initialize", json!({"protocolVersion": SESSION_REVISION, "capabilities": {}, "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}})),
            &[],
        )?;
        if init.body["result"]["protocolVersion"] != json!(SESSION_REVISION) {
            return Err(format!("initialize answered {} {}", init.status, short(&init.body)));
        }
        let a = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(2, "tools/list", json!({})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        let mut listed: Vec<String> = a.body["result"]["tools"]
            .as_array()
            .ok_or_else(|| format!("tools/list answered {} {}", a.status, short(&a.body)))?
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        // The demo tab states the bundled catalogue with its default settings (none refused).
        let mut stated: Vec<String> =
            Catalogue::bundled().tools.into_iter().map(|t| t.name).collect();
        stated.push(STATUS_TOOL.into());
        listed.sort();
        stated.sort();
        if listed != stated {
            let missing: Vec<&String> = stated.iter().filter(|n| !listed.contains(n)).collect();
            let extra: Vec<&String> = listed.iter().filter(|n| !stated.contains(n)).collect();
            return Err(format!("the list differs from what the tab stated: missing {missing:?}, not stated {extra:?}"));
        }
        Ok(format!("{} tools, as the tab stated them (status included)", listed.len()))
    }

    fn read(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let r = self.call_ok(token, READ_TOOL, json!({}))?;
        let data = data_of(&r).ok_or("the answer has no data between the data tags")?;
        let name = data["name"].as_str().ok_or("the dataset has no name")?.to_owned();
        let first = data["ids"]["min"].as_u64().ok_or("the dataset has no items")?;
        let column =
            data["columns"][0]["name"].as_str().ok_or("the dataset has no columns")?.to_owned();
        let items = data["items"].as_u64().unwrap_or_default();
        self.dataset = Some((name.clone(), first, column));
        Ok(format!(
            "{READ_TOOL}: the tab answered: dataset {}, {items} items",
            short(&Value::String(name))
        ))
    }

    fn change(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let (_, id, column) =
            self.dataset.clone().ok_or("not tried: needs the read, which failed")?;
        self.call_ok(token, CHANGE_TOOL, json!({"id": id, "column": column, "value": 0.5}))?;
        self.call_ok(token, UNDO_TOOL, json!({}))?;
        Ok(format!("{CHANGE_TOOL} set item {id}'s {column}, then {UNDO_TOOL} undid it"))
    }

    fn picture(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let r = self.call_ok(token, PICTURE_TOOL, json!({}))?;
        let image = r["content"]
            .as_array()
            .and_then(|c| c.iter().find(|p| p["type"] == json!("image")))
            .ok_or("no picture in the answer")?;
        let kib = image["data"].as_str().unwrap_or_default().len() * 3 / 4 / 1024;
        Ok(format!(
            "{PICTURE_TOOL}: a picture ({}) of {kib} KiB",
            image["mimeType"].as_str().unwrap_or("picture")
        ))
    }

    fn status(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let (name, ..) = self.dataset.clone().ok_or("not tried: needs the read, which failed")?;
        let r = self.call_ok(token, STATUS_TOOL, json!({}))?;
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        if !text.contains(&quoted(&name)) {
            return Err(format!(
                "status does not name the tab's dataset: {}",
                short(&r["content"][0]["text"])
            ));
        }
        let first = text.split(';').next().unwrap_or_default();
        Ok(format!("{}, naming the tab's dataset", short(&Value::String(first.to_owned()))))
    }

    fn view_card(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let a = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(3, "resources/read", json!({"uri": VIEW_URI})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        let c = &a.body["result"]["contents"][0];
        if c["mimeType"] != json!(VIEW_MIME)
            || !c["text"].as_str().is_some_and(|t| t.contains("<html") || t.contains("<!doctype"))
        {
            return Err(format!(
                "resources/read {VIEW_URI} answered {} {}",
                a.status,
                short(&a.body)
            ));
        }
        Ok(format!(
            "{VIEW_URI}: {VIEW_MIME}, {} characters",
            c["text"].as_str().unwrap_or_default().len()
        ))
    }

    fn stateless(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let meta = json!({"io.modelcontextprotocol/protocolVersion": STATELESS_REVISION, "io.modelcontextprotocol/clientCapabilities": {}});
        let d = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(4, "server/discover", json!({"_meta": meta})),
            &[("mcp-protocol-version", STATELESS_REVISION), ("mcp-method", "server/discover")],
        )?;
        if d.status != 200 || d.body.get("result").is_none() {
            return Err(format!("server/discover answered {} {}", d.status, short(&d.body)));
        }
        let c = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(5, "tools/call", json!({"name": READ_TOOL, "arguments": {}, "_meta": meta})),
            &[
                ("mcp-protocol-version", STATELESS_REVISION),
                ("mcp-method", "tools/call"),
                ("mcp-name", READ_TOOL),
            ],
        )?;
        let r = &c.body["result"];
        if r["resultType"] != json!("complete") || r["isError"] != json!(false) {
            return Err(format!(
                "a {STATELESS_REVISION} call answered {} {}",
                c.status,
                short(&c.body)
            ));
        }
        Ok(format!("server/discover answered; a {READ_TOOL} call with the per-request envelope came back complete"))
    }

    fn tab_gone(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?.to_owned();
        let page = self.page()?;
        let (_, id, _) = self.dataset.clone().ok_or("not tried: needs the read, which failed")?;
        let http = self.http.clone();
        let endpoint = self.endpoint.clone();
        let pending = std::thread::spawn(move || {
            let r = http.mcp(
                &endpoint,
                Some(&token),
                &rpc(6, "tools/call", json!({"name": ASKING_TOOL, "arguments": {"ids": [id]}})),
                &[("mcp-protocol-version", SESSION_REVISION)],
            );
            (r, Instant::now())
        });
        let b = self.browser()?;
        b.wait_for(
            &page,
            "!document.getElementById('confirm').hidden",
            UI_WAIT,
            "the tab asking the person about the call",
        )?;
        let closed = Instant::now();
        b.close(&page)?;
        self.page = None;
        let (answer, at) = pending.join().map_err(|_| "the call's thread failed".to_owned())?;
        let answer = answer?;
        let after = at.saturating_duration_since(closed);
        let reopened = self.open_app().map(|_| ());
        let text = answer.body["result"]["content"][0]["text"].as_str().unwrap_or_default();
        // The tab end withdraws a question its closing makes moot and says so itself (quoted as
        // the tab's words) as it goes; a tab that vanishes without a word gets the relay's
        // sentence. Either way the call fails at once and nothing was done.
        let withdrawn = text.starts_with(DATA_OPEN) && says_withdrawn(text);
        if answer.body["result"]["isError"] != json!(true)
            || !(text.contains(TAB_GONE) || withdrawn)
        {
            return Err(format!("the call answered {}", short(&answer.body)));
        }
        if after > GONE_WITHIN {
            return Err(format!(
                "the call failed only {} ms after the tab closed",
                after.as_millis()
            ));
        }
        reopened
            .map_err(|e| format!("the call failed at once, but the app did not open again: {e}"))?;
        let said =
            if withdrawn { "the tab withdrawing its question" } else { "the tab-gone sentence" };
        Ok(format!("the call waiting on the person failed {} ms after the tab closed, with {said}; the app opened again", after.as_millis()))
    }

    fn idle(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        self.page()?;
        let host = self.relay().split("//").nth(1).unwrap_or_default();
        let local = ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .any(|h| host == *h || host.starts_with(&format!("{h}:")));
        let secs = self.options.idle_secs.unwrap_or(if local {
            IDLE_LOCAL_SECS
        } else {
            IDLE_DEPLOYED_SECS
        });
        let until = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < until {
            if interrupted() {
                return Err("interrupted while idle".into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        self.call_ok(token, READ_TOOL, json!({}))?;
        Ok(format!(
            "after {secs} s idle{}, a call still reached the tab",
            if local { " (a shorter, stated wait on a loopback relay)" } else { "" }
        ))
    }

    fn rotation(&mut self) -> Result<String, String> {
        let client_id = self.client_id.clone().ok_or("no client")?;
        let r0 =
            self.connections.get(1).map(|c| c.refresh.clone()).ok_or("no second connection")?;
        let refresh = |run: &mut Self, token: &str| {
            run.http.post_form(
                &run.endpoints.token,
                &[
                    ("grant_type", "refresh_token"),
                    ("client_id", &client_id),
                    ("refresh_token", token),
                ],
            )
        };
        let a = refresh(self, &r0)?;
        let first = self.tokens(&a).map_err(|e| format!("the first refresh: {e}"))?;
        let works = self.http.mcp(
            &self.endpoint,
            Some(&first.access),
            &rpc(7, "tools/list", json!({})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        if works.status != 200 {
            return Err(format!("the new access token answered {}", works.status));
        }
        let a = refresh(self, &r0)?;
        let retry =
            self.tokens(&a).map_err(|e| format!("the previous refresh token as a retry: {e}"))?;
        let a = refresh(self, &retry.refresh)?;
        let next = self.tokens(&a).map_err(|e| format!("the retry's refresh token: {e}"))?;
        self.connections[1] =
            Connection { access: next.access.clone(), refresh: next.refresh.clone() };
        let reuse = refresh(self, &r0)?;
        if reuse.status != 400 || reuse.body["error"] != json!("invalid_grant") {
            return Err(format!(
                "an older refresh token answered {} {}",
                reuse.status,
                short(&reuse.body["error"])
            ));
        }
        let after = self.http.mcp(
            &self.endpoint,
            Some(&next.access),
            &rpc(7, "tools/list", json!({})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        if after.status != 401 {
            return Err(format!(
                "after an older refresh token, the connection's access token still answers {}",
                after.status
            ));
        }
        Ok("the new tokens work; the previous refresh token worked once as a retry; an older one was refused and revoked the connection (401)".into())
    }

    fn forget(&mut self, token: Option<&str>) -> Result<String, String> {
        let token = token.ok_or("not tried: needs a token, which failed")?;
        let forgot = self.forget_in_tab(true)?;
        let a = self.http.mcp(
            &self.endpoint,
            Some(token),
            &rpc(8, "tools/list", json!({})),
            &[("mcp-protocol-version", SESSION_REVISION)],
        )?;
        if a.status != 401 {
            return Err(format!(
                "after Forget in the tab, the connection's token still answers {}",
                a.status
            ));
        }
        Ok(format!("Forget pressed in the tab for {forgot} connection(s) of “{CLIENT_NAME}”; its token then answered 401"))
    }

    /// Presses Forget in the tab for each of the check's connections; how many there were.
    /// `interruptible`: false in the clean-up, which goes on after Ctrl-C.
    fn forget_in_tab(&mut self, interruptible: bool) -> Result<usize, String> {
        let page = self.page()?;
        let b = self.browser()?;
        b.interruptible = interruptible;
        let name = json!(CLIENT_NAME);
        // The demo's connections list is the tab end's `<tabrelay-connections>` element.
        // Without `?.`: one of these is assigned to below.
        let root = "document.querySelector('tabrelay-agents').shadowRoot.getElementById('connections').shadowRoot";
        let index = format!("[...{root}.querySelectorAll('[part=item]')].findIndex((li) => li.querySelector('strong')?.textContent === {name})");
        b.click_element(&page, &format!("{root}.querySelector('[part=refresh]')"), "Refresh")?;
        b.wait_for(
            &page,
            &format!("!/show here once/.test({root}.querySelector('[part=empty]').textContent)"),
            UI_WAIT,
            "the tab listing its connections",
        )?;
        // The check's connection by name, read afresh at each press (the list is drawn anew
        // whenever the relay sends it).
        // Forget asks first, on its row: Forget (or the question's Forget, when it already asks),
        // then the question's Forget.
        let row = format!("[...{root}.querySelectorAll('[part=item]')].find((li) => li.querySelector('strong')?.textContent === {name})");
        let button = format!(
            "{row}?.querySelector('button[part=forget-yes], button[part=forget]:not([hidden])')"
        );
        let yes = format!("{row}?.querySelector('button[part=forget-yes]:not(:disabled)')");
        let items = format!("{root}.querySelectorAll('[part=item]').length");
        let mut forgot = 0;
        while b.eval(&page, &index)?.as_i64().unwrap_or(-1) >= 0 && forgot < MAX_FORGOTTEN {
            let shown = b.eval(&page, &items)?.as_i64().unwrap_or(0);
            let gone = format!("({items}) < {shown} || /^Forgot/.test({root}.querySelector('[part=result]').textContent)");
            // A press that lands while the list is drawn anew finds no button, or one that is
            // gone a moment later: press again, as a person would, a few times.
            let mut pressed = Err("the tab's Forget button could not be pressed".to_owned());
            for _ in 0..FORGET_PRESSES {
                let within = UI_WAIT / FORGET_PRESSES;
                let forget = b.click_element(&page, &button, "Forget").and_then(|()| {
                    if b.eval(&page, &format!("Boolean({yes})"))?.as_bool() == Some(true) {
                        b.click_element(&page, &yes, "Forget, asked again")
                    } else {
                        Ok(())
                    }
                });
                pressed = match forget {
                    Ok(()) => {
                        b.wait_for(&page, &gone, within, "the tab saying it forgot the connection")
                    }
                    Err(e) => {
                        std::thread::sleep(POLL_AGAIN);
                        Err(e)
                    }
                };
                if pressed.is_ok() || b.eval(&page, &index)?.as_i64().unwrap_or(-1) < 0 {
                    pressed = Ok(());
                    break;
                }
            }
            pressed?;
            b.eval(&page, &format!("{root}.querySelector('[part=result]').textContent = ''"))?;
            forgot += 1;
        }
        Ok(forgot)
    }

    /// Forgets what is left in the tab, revokes every token the run holds, closes the tab and
    /// the browser and removes its profile; what was done, or what could not be.
    fn clean_up(&mut self) -> Result<String, String> {
        let mut problems = Vec::new();
        let mut forgot = 0;
        if self.page.is_some() {
            match self.forget_in_tab(false) {
                Ok(n) => forgot = n,
                Err(e) => problems.push(format!("Forget in the tab: {e}")),
            }
        }
        let revoke = format!("{}/revoke", self.relay());
        for c in std::mem::take(&mut self.connections) {
            for (token, hint) in [(&c.refresh, "refresh_token"), (&c.access, "access_token")] {
                if let Err(e) =
                    self.http.post_form(&revoke, &[("token", token), ("token_type_hint", hint)])
                {
                    problems.push(format!("/revoke: {e}"));
                }
            }
        }
        if let (Some(page), Some(b)) = (self.page.take(), self.browser.as_mut()) {
            let _ = b.close(&page);
        }
        let closed = self.browser.take().is_some();
        drop(self.callback.take());
        let done = format!(
            "{forgot} connection(s) forgotten in the tab, every token revoked{}",
            if closed { ", the tab and browser closed, the profile removed" } else { "" }
        );
        if problems.is_empty() {
            Ok(done)
        } else {
            Err(format!("{done}; but {}", problems.join("; ")))
        }
    }
}

/// The JSON between the data tags of a result's first text.
fn data_of(result: &Value) -> Option<Value> {
    let text = result["content"][0]["text"].as_str()?;
    let start = text.find(DATA_OPEN)? + DATA_OPEN.len();
    let end = text[start..].find(DATA_CLOSE)? + start;
    serde_json::from_str(&text[start..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabrelay_bundle::content::data_text;

    #[test]
    fn data_is_read_from_between_the_tags_with_the_relays_sentence_after() {
        let text = format!("{} The relay's sentence.", data_text(&json!({"name": "a <b>"})));
        let result = json!({"content": [{"type": "text", "text": text}]});
        assert_eq!(data_of(&result), Some(json!({"name": "a <b>"})));
        assert_eq!(data_of(&json!({"content": [{"type": "text", "text": "no tags"}]})), None);
    }

    #[test]
    fn short_cuts_long_values() {
        assert_eq!(short(&json!("x".repeat(150))), format!("{}…", "x".repeat(100)));
        assert_eq!(short(&json!(401)), "401");
    }
}
