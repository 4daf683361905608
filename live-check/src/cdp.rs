//! Chromium over the DevTools protocol: a headless browser with a fresh profile, its pages,
//! and what a person does in them (type, click, read). The handful of commands the check needs
//! over the browser's DevTools pipe; the browser and its profile go when the `Browser` is
//! dropped.
//!
//! The browser holds the run's pairing key and, in its profile, the page's storage, so nothing
//! of it is open to other users of the machine: the DevTools protocol runs over a pipe
//! (`--remote-debugging-pipe`: the browser reads commands on its fd 3 and writes answers and
//! events on its fd 4, each message JSON ended by a NUL byte), not a TCP port any local process
//! could connect to, and the profile is a directory made for this run, readable by its owner
//! only (mode 0700).
//!
//! Eight DevTools commands by hand rather than a CDP crate, measured on the project's 2-core
//! machine: `headless_chrome` 1.0.22 does not build from the registries alone (its build
//! script downloads the protocol's JSON from GitHub), and `chromiumoxide` 0.7 (fetcher off)
//! takes 244 s to build cold against 66 s for this whole crate, for generated types of the
//! whole protocol where the check uses eight.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::interrupted;

/// How long one DevTools command may take.
const COMMAND_WAIT: Duration = Duration::from_secs(20);
/// How long the browser may take to answer its first command.
const START_WAIT: Duration = Duration::from_secs(30);
/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(100);

/// Starts the browser with its DevTools pipe on fds 3 and 4, which `std::process` cannot map
/// without unsafe code: a shell moves the pipe it is given as stdin and stdout there, then
/// becomes the browser (`$0` and the arguments after it).
const WITH_PIPE_FDS: &str = r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#;

/// A headless Chromium started for this run, with its own empty profile.
pub struct Browser {
    child: Child,
    profile: PathBuf,
    /// The browser's fd 3: commands, each ended by a NUL byte.
    commands: std::io::PipeWriter,
    /// What the browser wrote on its fd 4, message by message (a thread reads it).
    messages: Receiver<String>,
    next_id: u64,
    /// Whether a wait gives up when Ctrl-C was pressed (not in the clean-up after it).
    pub interruptible: bool,
}

/// One page (a tab) of the browser, by its DevTools session.
#[derive(Clone)]
pub struct Page {
    target: String,
    session: String,
}

impl Browser {
    /// Starts `chromium` headless with a fresh private profile, talking DevTools over a pipe.
    pub fn launch(chromium: &str) -> Result<Self, String> {
        let profile = private_profile()?;
        let (to_browser, commands) = std::io::pipe().map_err(|e| format!("no pipe: {e}"))?;
        let (answers, from_browser) = std::io::pipe().map_err(|e| format!("no pipe: {e}"))?;
        let mut command = Command::new("/bin/sh");
        command
            .args(["-c", WITH_PIPE_FDS, chromium])
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(proxy_args())
            .arg("about:blank")
            // Its own process group: Ctrl-C in the terminal reaches the check, which then
            // forgets its connections in the tab before it closes the browser.
            .process_group(0)
            .stdin(Stdio::from(to_browser))
            .stdout(Stdio::from(from_browser))
            .stderr(Stdio::null());
        let spawned = command.spawn();
        // The browser's ends of the pipes are closed here, so its exit ends the reading.
        drop(command);
        let child = spawned.map_err(|e| {
            remove_profile(&profile);
            format!("cannot start {chromium}: {e}")
        })?;
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(answers);
            let mut message = Vec::new();
            while matches!(reader.read_until(0, &mut message), Ok(n) if n > 0) {
                if message.pop() != Some(0) {
                    break; // the pipe ended inside a message
                }
                let text = String::from_utf8_lossy(&message).into_owned();
                message.clear();
                if tx.send(text).is_err() {
                    break;
                }
            }
        });
        let mut browser =
            Self { child, profile, commands, messages, next_id: 0, interruptible: true };
        // Its first answer says it is up (a failed start answers nothing: Drop cleans up).
        if let Err(e) = browser.command_within(None, "Browser.getVersion", json!({}), START_WAIT) {
            return Err(match browser.child.try_wait() {
                // 127: the shell found no such program.
                Ok(Some(status)) => format!("cannot start {chromium}: it exited ({status})"),
                _ => format!("Chromium did not answer on its DevTools pipe: {e}"),
            });
        }
        Ok(browser)
    }

    /// Sends one command (to `page`'s session, or the browser) and waits for its answer.
    fn command(
        &mut self,
        page: Option<&Page>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.command_within(page, method, params, COMMAND_WAIT)
    }

    /// [`Self::command`], waiting at most `within`.
    fn command_within(
        &mut self,
        page: Option<&Page>,
        method: &str,
        params: Value,
        within: Duration,
    ) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(page) = page {
            message["sessionId"] = json!(page.session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .and_then(|()| self.commands.flush())
            .map_err(|e| format!("DevTools pipe: {e}"))?;
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left.min(POLL)) {
                Ok(text) => {
                    let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
                    if v["id"].as_u64() != Some(id) {
                        continue; // an event, or an answer to a command given up on
                    }
                    if let Some(e) = v.get("error") {
                        return Err(format!(
                            "{method}: {}",
                            e["message"].as_str().unwrap_or("refused")
                        ));
                    }
                    return Ok(v["result"].clone());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{method}: Chromium closed its DevTools pipe"))
                }
            }
            if Instant::now() >= deadline {
                return Err(format!("{method}: no answer from Chromium in {} s", within.as_secs()));
            }
        }
    }

    /// Opens `url` in a new tab.
    pub fn open(&mut self, url: &str) -> Result<Page, String> {
        let made = self.command(None, "Target.createTarget", json!({"url": url}))?;
        let target = made["targetId"].as_str().ok_or("no target id")?.to_owned();
        self.attach(target)
    }

    /// A session on tab `target`, to send it commands.
    fn attach(&mut self, target: String) -> Result<Page, String> {
        let attached = self.command(
            None,
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        )?;
        let session = attached["sessionId"].as_str().ok_or("no session id")?.to_owned();
        Ok(Page { target, session })
    }

    /// The tab another page opened (a link with `target=_blank`) whose address contains
    /// `part` and that is none of `known`, once it shows up (within `within`). (A page may take
    /// its fragment off its address as it loads, so `part` is what stays.)
    pub fn opened(
        &mut self,
        part: &str,
        known: &[&Page],
        within: Duration,
    ) -> Result<Page, String> {
        let deadline = Instant::now() + within;
        loop {
            let targets = self.command(None, "Target.getTargets", json!({}))?;
            let found = targets["targetInfos"].as_array().and_then(|all| {
                all.iter().find(|t| {
                    t["type"] == json!("page")
                        && t["url"].as_str().is_some_and(|u| u.contains(part))
                        && !known.iter().any(|k| t["targetId"].as_str() == Some(k.target.as_str()))
                })
            });
            if let Some(target) = found.and_then(|t| t["targetId"].as_str()).map(str::to_owned) {
                return self.attach(target);
            }
            if Instant::now() > deadline {
                return Err(format!("no tab opened in {} s", within.as_secs()));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Closes `page`'s tab, as a person closing it.
    pub fn close(&mut self, page: &Page) -> Result<(), String> {
        self.command(None, "Target.closeTarget", json!({"targetId": page.target})).map(|_| ())
    }

    /// The value of `expression` in `page` (awaited when it is a promise).
    pub fn eval(&mut self, page: &Page, expression: &str) -> Result<Value, String> {
        let r = self.command(
            Some(page),
            "Runtime.evaluate",
            json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            let text = e["exception"]["description"]
                .as_str()
                .or(e["text"].as_str())
                .unwrap_or("an exception");
            return Err(format!("the page threw: {}", text.lines().next().unwrap_or_default()));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Waits until `expression` is true in `page`; `what` names it in the failure.
    pub fn wait_for(
        &mut self,
        page: &Page,
        expression: &str,
        within: Duration,
        what: &str,
    ) -> Result<(), String> {
        let deadline = Instant::now() + within;
        loop {
            if self.eval(page, expression).ok().and_then(|v| v.as_bool()) == Some(true) {
                return Ok(());
            }
            if self.interruptible && interrupted() {
                return Err("interrupted".into());
            }
            if Instant::now() > deadline {
                return Err(format!("{what}: not seen in {} s", within.as_secs()));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Types `text` into the element the JavaScript expression `element` finds (one inside a
    /// custom element's shadow root, say) as a keyboard would (focus, then text input).
    pub fn type_into(&mut self, page: &Page, element: &str, text: &str) -> Result<(), String> {
        let found = self.eval(page, &format!("(() => {{ const e = {element}; if (!e) return false; e.focus(); e.select?.(); return true; }})()"))?;
        if found != Value::Bool(true) {
            return Err(format!("nothing to type into at {element}"));
        }
        self.command(Some(page), "Input.insertText", json!({"text": text})).map(|_| ())
    }

    /// Clicks the middle of the element `selector` with the mouse.
    pub fn click(&mut self, page: &Page, selector: &str) -> Result<(), String> {
        let element = format!("document.querySelector({})", json!(selector));
        self.click_element(page, &element, selector)
    }

    /// Clicks the middle of the element the JavaScript expression `element` finds (one inside
    /// a custom element's shadow root, say) with the mouse; `what` names it in an error.
    pub fn click_element(&mut self, page: &Page, element: &str, what: &str) -> Result<(), String> {
        let at = self.eval(
            page,
            &format!(
                "(() => {{ const e = {element}; if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
            ),
        )?;
        let (Some(x), Some(y)) = (at[0].as_f64(), at[1].as_f64()) else {
            return Err(format!("nothing to click at {what}"));
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.command(
                Some(page),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )?;
        }
        Ok(())
    }

    /// The text of the element the JavaScript expression `element` finds (empty when none).
    pub fn text_of(&mut self, page: &Page, element: &str) -> Result<String, String> {
        let v = self.eval(page, &format!("({element})?.textContent ?? ''"))?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// The text of the element `#id` (empty when there is none).
    pub fn text(&mut self, page: &Page, id: &str) -> Result<String, String> {
        let v =
            self.eval(page, &format!("document.getElementById({})?.textContent ?? ''", json!(id)))?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.command(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        remove_profile(&self.profile);
    }
}

/// Removes the run's profile. The browser's helper processes can outlive it by a moment and
/// still write there (a removal then fails on a directory no longer empty), so it is tried
/// again until the directory is gone, for at most five seconds.
fn remove_profile(profile: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::remove_dir_all(profile).is_err() && profile.exists() && Instant::now() < deadline
    {
        std::thread::sleep(POLL);
    }
}

/// A new, empty profile directory for this run under the temporary directory, readable by its
/// owner only (made so, not changed to it later; an existing one is never reused).
fn private_profile() -> Result<PathBuf, String> {
    let mut bytes = [0u8; 8];
    getrandom::getrandom(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    let profile = std::env::temp_dir().join(format!("tabrelay-live-check-{}", hex(&bytes)));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&profile)
        .map_err(|e| format!("cannot make a profile: {e}"))?;
    Ok(profile)
}

/// The tests record the browser's traffic too (loopback included), through the same proxy as
/// the check's own requests; an owner's run has none.
fn proxy_args() -> Vec<String> {
    match std::env::var("TABRELAY_LIVE_CHECK_PROXY") {
        Ok(proxy) => {
            vec![format!("--proxy-server={proxy}"), "--proxy-bypass-list=<-loopback>".into()]
        }
        Err(_) => Vec::new(),
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_profile_is_new_and_readable_by_its_owner_only() {
        let a = private_profile().unwrap();
        let b = private_profile().unwrap();
        assert_ne!(a, b);
        for dir in [&a, &b] {
            let mode = std::fs::metadata(dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
            assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0);
            std::fs::remove_dir(dir).unwrap();
        }
    }
}
