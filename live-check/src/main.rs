//! The live check: run after each deploy (and in CI against `wrangler dev`), it is an MCP
//! client of the relay and a person at a real Chromium tab of the app, and says PASS or FAIL,
//! with its time and what was seen, for everything they do: discovery, registration, consent in
//! the tab, calls, the view card, an idle pairing, token rotation and Forget.
//!
//! It never prints a token, code or key (every line also passes a filter of the secrets it
//! holds), and it leaves nothing behind: its connections are forgotten, its tab and browser
//! closed and its profile removed, also when a check fails or Ctrl-C stops it.

mod cdp;
mod checks;
mod net;

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C (or SIGTERM) asked the run to stop.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

const USAGE: &str = "usage: scripts/live-check [--relay URL] [--app URL] [--json] [--idle SECONDS] [--chromium PATH]

  --relay URL      the relay's address (default http://127.0.0.1:8787, what scripts/dev serves)
  --app URL        the app page to pair in (default: the app the relay names, else its demo app)
  --json           one JSON object a line instead of text
  --idle SECONDS   how long the tab stays idle before a call must still reach it
                   (default 75 against a deployed relay, long enough for the platform to evict
                   the pairing's object; 10 against a loopback relay)
  --chromium PATH  the browser (default /usr/bin/chromium, or $TABRELAY_CHROMIUM)

Exit status: 0 when every check passed, 1 when one failed, 2 on bad usage, 130 when interrupted.";

/// What the owner asked for.
pub struct Options {
    pub relay: String,
    pub app: Option<String>,
    pub json: bool,
    pub idle_secs: Option<u64>,
    pub chromium: String,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        relay: "http://127.0.0.1:8787".into(),
        app: None,
        json: false,
        idle_secs: None,
        chromium: std::env::var("TABRELAY_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--relay" => o.relay = value("--relay")?,
            "--app" => o.app = Some(value("--app")?),
            "--json" => o.json = true,
            "--idle" => {
                o.idle_secs = Some(
                    value("--idle")?
                        .parse()
                        .map_err(|_| "--idle takes whole seconds".to_owned())?,
                );
            }
            "--chromium" => o.chromium = value("--chromium")?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let relay = o.relay.trim_end_matches('/').to_owned();
    let host = relay.strip_prefix("https://").or_else(|| relay.strip_prefix("http://"));
    if host.is_none_or(|h| h.is_empty() || h.contains(['/', '?', '#'])) {
        return Err(format!("--relay must be the relay's origin (https://host), not {relay}"));
    }
    o.relay = relay;
    Ok(o)
}

fn main() {
    let options = match options() {
        Ok(o) => o,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("{why}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let failed = checks::run(&options);
    std::process::exit(if interrupted() {
        130
    } else if failed {
        1
    } else {
        0
    });
}
