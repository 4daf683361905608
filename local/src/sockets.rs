//! The tabs' sockets on loopback: one thread accepts, one thread per socket reads; what they
//! hear goes to the loop as [`Event`]s, and the loop writes through each socket's [`Writer`].
//! A socket is taken only as [`guard::admit`] says (loopback `Host`, an app `Origin`, `/tab`);
//! a message is bounded as the Worker bounds it ([`MAX_MESSAGE_BYTES`]: the pairing refuses
//! one over it; one far over it is not even read whole).

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use tabrelay::config::Config;
use tabrelay_bundle::protocol::{MAX_MESSAGE_BYTES, PING, PONG};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use crate::guard::{self, Refused};

/// A socket's writing end, shared by the loop (messages) and its reader (pongs).
pub type Writer = Arc<Mutex<WebSocket<TcpStream>>>;

/// What the loop hears.
pub enum Event {
    /// A line of stdin (or that it passed its cap).
    Line(Result<Vec<u8>, tabrelay::http::TooLarge>),
    /// Stdin ended: the agent app went away.
    StdinClosed,
    /// A tab's socket opened (admitted), naming its pairing and the local origin it addressed.
    Opened { conn: u64, pairing: String, origin: String, writer: Writer },
    /// A tab's message (None: not text).
    Message { conn: u64, text: Option<String> },
    /// A tab's socket closed or failed.
    Closed { conn: u64 },
    /// A later agent app's `tabrelay-local` joined (`/agent`): its stdio is this socket.
    AgentOpened { conn: u64, writer: Writer },
    /// A line of its stdin (or that it passed the cap).
    AgentLine { conn: u64, line: Result<Vec<u8>, tabrelay::http::TooLarge> },
    /// It went away (its agent app closed it).
    AgentClosed { conn: u64 },
}

/// The bound on a message: one byte over what the pairing takes, so the pairing itself refuses
/// a message just over its bound (as on the Worker) and no larger one is ever held whole.
fn ws_config() -> WebSocketConfig {
    let bound = Some(MAX_MESSAGE_BYTES + 1);
    WebSocketConfig::default().max_message_size(bound).max_frame_size(bound)
}

/// Accepts sockets on `listener` (loopback) for the loop behind `events`.
/// A later agent app's `tabrelay-local` joins with `secret` ([`guard::admit_agent`]) and is
/// given the signing `key` (the tokens kept for it are this one's, should it take its place).
pub fn listen(
    listener: TcpListener,
    port: u16,
    config: &'static Config,
    (secret, key): (&'static str, &'static str),
    events: Sender<Event>,
) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let events = events.clone();
            let conn = NEXT.fetch_add(1, Ordering::Relaxed);
            std::thread::spawn(move || serve(stream, conn, port, config, (secret, key), &events));
        }
    });
}

fn header<'r>(req: &'r Request, name: &str) -> Option<&'r str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// One socket: the handshake as [`guard::admit`] says, then its messages until it closes.
#[allow(clippy::result_large_err)] // the handshake's callback type is tungstenite's
fn serve(
    stream: TcpStream,
    conn: u64,
    port: u16,
    config: &Config,
    (secret, key): (&str, &str),
    events: &Sender<Event>,
) {
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else { return };
    let mut admitted = None;
    let mut agent = false;
    let mut closing = None;
    let callback = |req: &Request, mut res: Response| -> Result<Response, ErrorResponse> {
        let path = req.uri().path_and_query().map_or("/", |p| p.as_str());
        let said = header(req, crate::guest::SECRET_HEADER);
        let (host, origin) = (header(req, "host"), header(req, "origin"));
        let decided = if guard::is_agent_path(path) {
            guard::admit_agent(host, origin, said, port, secret).map(|()| agent = true)
        } else {
            guard::admit(path, host, header(req, "upgrade"), origin, port, config)
                .map(|ok| admitted = Some(ok))
        };
        let refused = match decided {
            Ok(()) => {
                if agent {
                    if let Ok(value) = key.parse() {
                        res.headers_mut().insert(crate::guest::KEY_HEADER, value);
                    }
                }
                return Ok(res);
            }
            Err(refused) => refused,
        };
        let (status, body) = match refused {
            Refused::NotFound => (404, "Not found.".to_owned()),
            Refused::Host(sentence) => (421, sentence.to_owned()),
            Refused::Status(status, body) if status < 1000 => (status, body),
            // Closed at once with the relay's code and reason, as the Worker does (all a
            // browser shows of a refused socket).
            Refused::Status(code, reason) => {
                closing = Some((code, reason));
                return Ok(res);
            }
        };
        let mut answer = ErrorResponse::new(Some(body));
        *answer.status_mut() = tungstenite::http::StatusCode::from_u16(status)
            .unwrap_or(tungstenite::http::StatusCode::BAD_REQUEST);
        Err(answer)
    };
    let Ok(mut reader) = tungstenite::accept_hdr_with_config(stream, callback, Some(ws_config()))
    else {
        return;
    };
    if let Some((code, reason)) = closing {
        let frame = CloseFrame { code: CloseCode::from(code), reason: reason.into() };
        let _ = reader.close(Some(frame));
        let _ = reader.flush();
        return;
    }
    let writer: Writer = Arc::new(Mutex::new(WebSocket::from_raw_socket(
        write_half,
        Role::Server,
        Some(ws_config()),
    )));
    if agent {
        return serve_agent(&mut reader, conn, writer, events);
    }
    let Some((pairing, origin)) = admitted else { return };
    if events.send(Event::Opened { conn, pairing, origin, writer: Arc::clone(&writer) }).is_err() {
        return;
    }
    loop {
        match reader.read() {
            Ok(Message::Text(text)) => {
                // Answered here, never waking the pairing (as workerd's auto-response).
                if text.as_str() == PING {
                    let _ = send(&writer, PONG);
                    continue;
                }
                let text = Some(text.as_str().to_owned());
                if events.send(Event::Message { conn, text }).is_err() {
                    return;
                }
            }
            Ok(Message::Binary(_)) => {
                if events.send(Event::Message { conn, text: None }).is_err() {
                    return;
                }
            }
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => {}
        }
    }
    let _ = events.send(Event::Closed { conn });
}

/// A later agent app's socket: each text message a line of its stdin (bounded by the
/// endpoint's cap on a body, as stdin is; an empty binary message says a line passed it).
fn serve_agent(
    reader: &mut WebSocket<TcpStream>,
    conn: u64,
    writer: Writer,
    events: &Sender<Event>,
) {
    let cap = tabrelay::routes::body_cap("/");
    if events.send(Event::AgentOpened { conn, writer }).is_err() {
        return;
    }
    loop {
        let line = match reader.read() {
            Ok(Message::Text(text)) if text.len() <= cap => Ok(text.as_bytes().to_vec()),
            Ok(Message::Text(_) | Message::Binary(_)) => Err(tabrelay::http::TooLarge { cap }),
            Ok(Message::Close(_)) | Err(_) => break,
            Ok(_) => continue,
        };
        if events.send(Event::AgentLine { conn, line }).is_err() {
            return;
        }
    }
    let _ = events.send(Event::AgentClosed { conn });
}

/// Sends `text` on a socket; false when the socket failed (its reader tells the loop it
/// closed).
pub fn send(writer: &Writer, text: &str) -> bool {
    let mut ws = writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    ws.send(Message::text(text)).is_ok()
}

/// Closes a socket with `code` and `reason`.
pub fn close(writer: &Writer, code: u16, reason: &str) {
    let mut ws = writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let frame = CloseFrame { code: CloseCode::from(code), reason: reason.to_owned().into() };
    let _ = ws.close(Some(frame));
    let _ = ws.flush();
    let _ = ws.get_ref().shutdown(std::net::Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One byte over the pairing's bound: the pairing itself refuses a message just over it (as
    /// on the Worker), and no larger one is read whole.
    #[test]
    fn a_tabs_message_is_bounded_just_over_the_pairings_bound() {
        let config = ws_config();
        assert_eq!(config.max_message_size, Some(MAX_MESSAGE_BYTES + 1));
        assert_eq!(config.max_frame_size, Some(MAX_MESSAGE_BYTES + 1));
    }
}
