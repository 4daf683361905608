//! The tabs' sockets on loopback: one thread accepts, one thread per socket reads; what they
//! hear goes to the loop as [`Event`]s, and the loop writes through each socket's [`Writer`].
//! A socket is taken only as [`guard::admit`] says (loopback `Host`, an app `Origin`, `/tab`);
//! a message is bounded as the Worker bounds it ([`MAX_MESSAGE_BYTES`]: the pairing refuses
//! one over it; one far over it is not even read whole). A request that asks for no socket is
//! a page of the link flow ([`crate::link`]): its head bounded ([`MAX_HEAD_BYTES`]), its
//! `Host` loopback, its body its route's cap; the loop answers it, and the connection closes.

use std::io::{Read, Write};
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

/// The most bytes of a request's head (its line and headers) read: one longer is refused (431).
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// How long a request's head, a page's body, or the loop's answer to it may take.
const HTTP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A connection whose first bytes (read to tell a socket from a page) are read again first.
pub struct Replay {
    head: std::io::Cursor<Vec<u8>>,
    stream: TcpStream,
}

impl Read for Replay {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if (self.head.position() as usize) < self.head.get_ref().len() {
            return self.head.read(buf);
        }
        self.stream.read(buf)
    }
}

impl Write for Replay {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

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
    /// A page of the link flow asks this: the loop sends its answer on `reply`.
    Http {
        route: crate::link::Route,
        request: crate::link::Request,
        reply: Sender<tabrelay::http::Answer>,
    },
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
    // The request's head: a socket's opening goes on to the handshake (which reads it again),
    // anything else is a page of the link flow.
    let mut stream = stream;
    let Some((head, upgrade)) = read_head(&mut stream) else {
        return refuse_head(&mut stream);
    };
    if !upgrade {
        return serve_page(stream, head, port, events);
    }
    let _ = stream.set_read_timeout(None);
    let stream = Replay { head: std::io::Cursor::new(head), stream };
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
fn serve_agent(reader: &mut WebSocket<Replay>, conn: u64, writer: Writer, events: &Sender<Event>) {
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

/// Reads a request's head (and what came with it): the bytes, and whether it asks for a socket
/// (an `Upgrade`). None when it does not come whole within [`MAX_HEAD_BYTES`] and
/// [`HTTP_WAIT`], or does not read as HTTP.
fn read_head(stream: &mut TcpStream) -> Option<(Vec<u8>, bool)> {
    let _ = stream.set_read_timeout(Some(HTTP_WAIT));
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 2048];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        match request.parse(&bytes) {
            Ok(httparse::Status::Complete(_)) => {
                let upgrade =
                    request.headers.iter().any(|h| h.name.eq_ignore_ascii_case("upgrade"));
                return Some((bytes, upgrade));
            }
            Ok(httparse::Status::Partial) if bytes.len() <= MAX_HEAD_BYTES => {}
            _ => return None,
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A head that did not come whole (within its bound and wait), or did not read: 400.
fn refuse_head(stream: &mut TcpStream) {
    let answer =
        tabrelay::http::Answer::text(400, "This is not an HTTP request this server reads.");
    write_answer(stream, &answer);
}

/// A page of the link flow: routed ([`crate::link::route`]: a loopback `Host`), its body read
/// with its route's cap, answered by the loop.
fn serve_page(mut stream: TcpStream, bytes: Vec<u8>, port: u16, events: &Sender<Event>) {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(head_len)) = request.parse(&bytes) else { return };
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
    };
    let (method, target) = (request.method.unwrap_or_default(), request.path.unwrap_or("/"));
    let route = match crate::link::route(method, target, header("host"), port) {
        Ok(route) => route,
        Err(answer) => return write_answer(&mut stream, &answer),
    };
    let cap = tabrelay::routes::body_cap(target.split('?').next().unwrap_or_default());
    let length = header("content-length").and_then(|l| l.trim().parse::<usize>().ok());
    let body = match length {
        _ if header("transfer-encoding").is_some() => Err(tabrelay::http::TooLarge { cap }),
        Some(length) if length > cap => Err(tabrelay::http::TooLarge { cap }),
        Some(length) => {
            let mut body = bytes[head_len..].to_vec();
            body.truncate(length);
            let mut rest = vec![0u8; length - body.len()];
            if stream.read_exact(&mut rest).is_err() {
                return;
            }
            body.extend_from_slice(&rest);
            Ok(body)
        }
        None => Ok(Vec::new()),
    };
    let request = crate::link::Request {
        target: target.to_owned(),
        cookies: header("cookie").map(str::to_owned),
        body,
    };
    let (reply, answer) = std::sync::mpsc::channel();
    if events.send(Event::Http { route, request, reply }).is_err() {
        return;
    }
    if let Ok(answer) = answer.recv_timeout(HTTP_WAIT) {
        write_answer(&mut stream, &answer);
    }
}

/// Writes `answer` as an HTTP/1.1 response, then closes the connection.
fn write_answer(stream: &mut TcpStream, answer: &tabrelay::http::Answer) {
    let body = answer.body.as_deref().unwrap_or_default();
    let mut head = format!("HTTP/1.1 {} {}\r\n", answer.status, reason(answer.status));
    for (name, value) in &answer.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", body.len()));
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// A status's reason phrase (read by nothing but people).
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        302 => "Found",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Content Too Large",
        421 => "Misdirected Request",
        _ => "",
    }
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

    /// A head that never ends is refused once it passes its bound, not read on until the
    /// sender stops or the wait runs out: what the sender sent beyond the bound is still
    /// unread, and the answer is a 400 a person can read.
    #[test]
    fn a_head_over_its_bound_is_refused_without_reading_on() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut head = b"GET /connect/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Fill: ".to_vec();
        head.resize(4 * MAX_HEAD_BYTES, b'a');
        client.write_all(&head).unwrap();

        assert!(read_head(&mut server).is_none());
        server.set_nonblocking(true).unwrap();
        let mut unread = 0;
        let mut chunk = [0u8; 4096];
        while let Ok(n @ 1..) = server.read(&mut chunk) {
            unread += n;
        }
        let read = head.len() - unread;
        assert!(
            read <= MAX_HEAD_BYTES + 2048,
            "read {read} bytes of a head bounded at {MAX_HEAD_BYTES}"
        );

        server.set_nonblocking(false).unwrap();
        refuse_head(&mut server);
        drop(server);
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
        assert!(answer.ends_with("This is not an HTTP request this server reads."), "{answer}");
    }

    /// A head within its bound is read whole, and a socket's opening is told from a page's.
    #[test]
    fn a_head_within_its_bound_is_read_whole() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let head = b"GET /tab HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n\r\n";
        client.write_all(head).unwrap();
        assert_eq!(read_head(&mut server), Some((head.to_vec(), true)));
    }
}
