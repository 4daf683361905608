//! The bench's floor for the local way in (bench/local.mjs): each stdin line goes on one
//! WebSocket on loopback to a tab, whose echo comes back as a stdout line. No machine, no JSON
//! read, no bound: what any stdio-to-tab server costs at least, built as tabrelay-local is.

use std::io::{BufRead as _, Write as _};

use tungstenite::Message;

fn main() {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) else { return };
    let port = listener.local_addr().map_or(port, |a| a.port());
    eprintln!("bare-echo: ws://127.0.0.1:{port}/");
    let Ok((stream, _)) = listener.accept() else { return };
    let _ = stream.set_nodelay(true);
    let Ok(mut ws) = tungstenite::accept(stream) else { return };
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        if ws.send(Message::text(line)).is_err() {
            return;
        }
        loop {
            match ws.read() {
                Ok(Message::Text(echo)) => {
                    let _ = writeln!(out, "{}", echo.as_str());
                    let _ = out.flush();
                    break;
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    }
}
