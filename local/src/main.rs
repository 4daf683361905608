//! `tabrelay-local`: the local way in. An agent app on the person's computer (Claude Code,
//! Claude Desktop, Cursor) starts it and speaks MCP over stdio (one JSON-RPC message a line);
//! the app's tab connects to it on loopback with the same protocol as to the relay's `/tab`.
//! Every decision is the relay's core, driven by one loop ([`pump`]): each stdin line is an
//! endpoint `Exchange` (as a POST to the Worker's `/`), each browser a pairing `Object` (as its
//! Durable Object), and the connection's consent runs through the OAuth sagas and the connect
//! code's session, with the person typing the code in their tab as for any agent.

mod consent;
mod elicit;
mod guard;
mod guest;
mod link;
mod pump;
mod sockets;
mod state;

use std::sync::mpsc;

use tabrelay::config::Config;
use tabrelay::crypto::{random_token, Entropy};

/// The port the tab looks for by default (`createTabrelay({ local: 'http://127.0.0.1:8790' })`).
const DEFAULT_PORT: u16 = 8790;

const USAGE: &str =
    "tabrelay-local --app-origin ORIGIN[,ORIGIN…] [--port PORT] [--app-url URL] [--state DIR]
  An MCP server over stdio that an agent app starts. The app's tab (its origin one of ORIGIN)
  connects to ws://127.0.0.1:PORT/tab (default port 8790; 0 picks a free one, printed on
  stderr). The person approves the agent in the tab with the connect code it gives.
  ORIGIN also from TABRELAY_APP_ORIGINS; PORT from TABRELAY_LOCAL_PORT. What outlives a run (its
  key, the approved connection, its grants) is kept in DIR (TABRELAY_LOCAL_STATE; by default
  ~/.local/state/tabrelay-local; none: nothing is kept).";

/// Random bytes from the operating system.
struct OsRandom;

impl Entropy for OsRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        // The OS's random source failing is a broken machine: nothing safe can go on.
        assert!(getrandom::getrandom(buf).is_ok(), "the system's random source failed");
    }
}

/// What the command line says.
struct Args {
    origins: String,
    port: u16,
    app_url: Option<String>,
    state: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut origins = std::env::var("TABRELAY_APP_ORIGINS").unwrap_or_default();
    let port_var = std::env::var("TABRELAY_LOCAL_PORT").ok();
    let mut port = port_var.as_deref().map_or(Ok(DEFAULT_PORT), str::parse).map_err(|_| USAGE)?;
    let mut app_url = None;
    let mut state = None;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--app-origin" | "--app-origins" => {
                let v = value()?;
                origins = if origins.is_empty() { v } else { format!("{origins},{v}") };
            }
            "--port" => {
                port = value()?.parse().map_err(|_| format!("--port: a number\n{USAGE}"))?
            }
            "--app-url" => app_url = Some(value()?),
            "--state" => state = Some(value()?),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            _ => return Err(format!("unknown argument {arg}\n{USAGE}")),
        }
    }
    Ok(Args { origins, port, app_url, state })
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("{why}");
            std::process::exit(2);
        }
    };
    // The key kept in the state directory (a new one each run without one: tokens and codes
    // it signed die with the run).
    let state = state::dir(args.state.as_deref());
    let key = state::key(state.as_deref(), || random_token(&mut OsRandom, 48));
    let first = args.origins.split([',', ' ']).find(|o| !o.is_empty()).unwrap_or_default();
    let app_url = args.app_url.unwrap_or_else(|| format!("{}/", first.trim_end_matches('/')));
    // The relay's configuration for this key (the key may change on taking another's place):
    // checked once before anything listens, so a bad --app-origin stops at once.
    let configure = |key: &str| match Config::from_vars(
        Some(key),
        None,
        Some(&args.origins),
        Some(&app_url),
        None,
    ) {
        Ok(config) => config,
        Err(why) => {
            eprintln!("tabrelay-local: {why} (--app-origin)\n{USAGE}");
            std::process::exit(2);
        }
    };
    configure(&key);
    let (events, inbox) = mpsc::channel();
    pump::read_stdin(events.clone());
    // The port taken by another agent app's tabrelay-local: this one joins it, and takes its
    // place should it go away (or joins the one that did).
    let (mut key, mut initialize, mut tries) = (key, None, 0);
    let listener = loop {
        match std::net::TcpListener::bind(("127.0.0.1", args.port)) {
            Ok(listener) => break listener,
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {}
            Err(e) => {
                eprintln!("tabrelay-local: cannot listen on 127.0.0.1:{}: {e}", args.port);
                std::process::exit(1);
            }
        }
        let secret = state::own_secret(&state::agents_secret_file(args.port));
        let joined = secret
            .ok_or_else(|| {
                format!("port {} is taken, and not by a tabrelay-local of this user", args.port)
            })
            .and_then(|secret| {
                guest::run(
                    args.port,
                    &secret,
                    state.as_deref(),
                    &inbox,
                    &events,
                    initialize.clone(),
                )
            });
        match joined {
            Ok(handover) => {
                eprintln!("tabrelay-local: the one serving the tab went away: taking its place");
                initialize = handover.initialize;
                key = handover.key.unwrap_or(key);
                tries = 0;
            }
            // The one that went away leaves its secret behind a moment: tried again shortly.
            Err(why) if tries < 30 => {
                tries += 1;
                let _ = why;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(why) => {
                eprintln!("tabrelay-local: {why}");
                std::process::exit(1);
            }
        }
    };
    let config = configure(&key);
    let config: &'static Config = Box::leak(Box::new(config));
    let port = listener.local_addr().map_or(args.port, |a| a.port());
    // Later agent apps' tabrelay-local join this one with this secret (owner-only file).
    let secret: &'static str = Box::leak(random_token(&mut OsRandom, 32).into_boxed_str());
    state::keep_secret(&state::agents_secret_file(port), secret);
    // Said once everything is in place: whoever reads it may join at once.
    eprintln!("tabrelay-local: the tab connects to ws://127.0.0.1:{port}/tab");
    let key: &'static str = Box::leak(key.into_boxed_str());
    sockets::listen(listener, port, config, (secret, key), events);
    let mut local = pump::Local::new(config, port, state);
    if let Some(initialize) = initialize {
        local.consent.adopt(&initialize);
        local.resume(pump::now_ms());
    }
    local.run(&inbox);
}
