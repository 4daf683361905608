//! A later agent app's `tabrelay-local`: the port is taken by the first one (another agent app
//! started it), which serves the tab's socket. This one hands its stdio to it over a loopback
//! WebSocket (`/agent`) that only the person's own programs can open: it proves itself with the
//! secret the first one wrote, owner-only ([`crate::state::own_secret`]), and takes its
//! signing key (the tokens kept for it are that one's). Each line of stdin is one message; each
//! message back is one line of stdout. The first one keeps this agent app's own connection,
//! code, line and grants, as for its own (`crate::pump`): nothing is decided here. When the
//! first one goes away (its agent app closed), this one hands back what it read of stdin, to
//! serve the tab itself or join another that did.

use std::io::Write as _;
use std::net::TcpStream;
use std::sync::mpsc::{Receiver, Sender};

use tungstenite::client::IntoClientRequest as _;
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::sockets::Event;

/// The header that carries the secret.
pub const SECRET_HEADER: &str = "x-tabrelay-agent";
/// The header that gives the joining one the serving one's signing key.
pub const KEY_HEADER: &str = "x-tabrelay-key";

/// What a guest hands back when the server it joined went away: stdin's events, and the agent
/// app's `initialize` (already answered).
pub struct Handover {
    pub initialize: Option<Vec<u8>>,
    /// The signing key of the server that went away (the tokens it kept for this one are its).
    pub key: Option<String>,
}

/// Hands stdin's events (from `inbox`; `events` is their sender) to the server on `port`
/// (whose secret is `secret`) until stdin ends (the process exits) or the server goes away
/// (`Ok`, with what to go on with).
///
/// # Errors
/// The sentence said on stderr: the first server did not take this one.
pub fn run(
    port: u16,
    secret: &str,
    state: Option<&std::path::Path>,
    inbox: &Receiver<Event>,
    events: &Sender<Event>,
    mut initialize: Option<Vec<u8>>,
) -> Result<Handover, String> {
    let cannot =
        |e: &dyn std::fmt::Display| format!("cannot join the local server on port {port}: {e}");
    let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| cannot(&e))?;
    let _ = stream.set_nodelay(true);
    let write_half = stream.try_clone().map_err(|e| cannot(&e))?;
    let mut request =
        format!("ws://127.0.0.1:{port}/agent").into_client_request().map_err(|e| cannot(&e))?;
    let value = secret.parse().map_err(|_| cannot(&"its secret does not read"))?;
    request.headers_mut().insert(SECRET_HEADER, value);
    let config = WebSocketConfig::default().max_message_size(None).max_frame_size(None);
    let (mut reader, response) =
        tungstenite::client::client_with_config(request, stream, Some(config))
            .map_err(|e| cannot(&e))?;
    let key = response.headers().get(KEY_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(key) = &key {
        crate::state::keep_key(state, key);
    }
    eprintln!("tabrelay-local: joined the one already serving the tab on 127.0.0.1:{port}");
    let mut writer = WebSocket::from_raw_socket(write_half, Role::Client, Some(config));
    // An initialize answered by a server before: replayed to this one, its answer not written.
    let mut swallow = initialize.is_some();
    if let Some(line) = &initialize {
        let _ = writer.send(Message::text(String::from_utf8_lossy(line).into_owned()));
    }
    let gone = events.clone();
    std::thread::spawn(move || {
        loop {
            match reader.read() {
                Ok(Message::Text(text)) => {
                    if std::mem::take(&mut swallow) && text.contains("\"protocolVersion\"") {
                        continue;
                    }
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(text.as_bytes());
                    let _ = out.write_all(b"\n");
                    let _ = out.flush();
                }
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
        // The server went away: conn 0 names it.
        let _ = gone.send(Event::AgentClosed { conn: 0 });
    });
    loop {
        let message = match inbox.recv() {
            Ok(Event::Line(Ok(line))) => {
                let text = String::from_utf8_lossy(&line).into_owned();
                if initialize.is_none() && text.contains("\"initialize\"") {
                    initialize = Some(line);
                }
                Message::text(text)
            }
            // A line over the cap goes as an empty binary message: the server says it is too
            // large, as for its own stdin.
            Ok(Event::Line(Err(_))) => Message::binary(Vec::new()),
            Ok(Event::AgentClosed { .. }) => return Ok(Handover { initialize, key }),
            Ok(Event::StdinClosed) | Err(_) => {
                let _ = writer.close(None);
                let _ = writer.flush();
                std::process::exit(0);
            }
            Ok(_) => continue,
        };
        if writer.send(message).is_err() {
            // Its reader tells of the server gone.
            continue;
        }
    }
}
