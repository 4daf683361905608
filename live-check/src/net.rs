//! The agent's side on the wire: HTTP to the relay (JSON, forms, MCP posts read as JSON or
//! SSE), PKCE, and the loopback listener the waiting page sends the browser back to.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// An answer: its status, the headers the check reads, and the body as JSON when it is JSON.
pub struct Answer {
    pub status: u16,
    pub www_authenticate: Option<String>,
    pub body: Value,
}

/// The HTTP client of the run.
#[derive(Clone)]
pub struct Http {
    agent: ureq::Agent,
}

impl Http {
    pub fn new() -> Self {
        let mut builder = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(60))
            .redirects(0)
            .user_agent("tabrelay-live-check");
        // The tests record the check's traffic through a proxy (to scan its output for each
        // secret the relay gave it); an owner's run has none.
        if let Ok(proxy) = std::env::var("TABRELAY_LIVE_CHECK_PROXY") {
            if let Ok(p) = ureq::Proxy::new(proxy) {
                builder = builder.proxy(p);
            }
        }
        Self { agent: builder.build() }
    }

    /// Sends `req` with `body` (none: no body) and reads the answer, whatever its status.
    fn send(&self, req: ureq::Request, body: Option<(&str, &str)>) -> Result<Answer, String> {
        let result = match body {
            Some((ty, text)) => req.set("content-type", ty).send_string(text),
            None => req.call(),
        };
        let response = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(ureq::Error::Transport(t)) => return Err(format!("no answer: {}", t.kind())),
        };
        let status = response.status();
        let www_authenticate = response.header("www-authenticate").map(str::to_owned);
        let content_type = response.header("content-type").unwrap_or_default().to_owned();
        let text = response.into_string().map_err(|e| format!("unreadable answer: {e}"))?;
        let body = if content_type.starts_with("text/event-stream") {
            // The streamed answer's response: the event whose message has an id and a result.
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| {
                    m.get("id").is_some() && (m.get("result").is_some() || m.get("error").is_some())
                })
                .unwrap_or(Value::Null)
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Ok(Answer { status, www_authenticate, body })
    }

    pub fn get(&self, url: &str) -> Result<Answer, String> {
        self.send(self.agent.get(url).set("accept", "application/json"), None)
    }

    pub fn post_json(&self, url: &str, body: &Value) -> Result<Answer, String> {
        self.send(
            self.agent.post(url).set("accept", "application/json"),
            Some(("application/json", &body.to_string())),
        )
    }

    pub fn post_form(&self, url: &str, fields: &[(&str, &str)]) -> Result<Answer, String> {
        let body: String = fields
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.send(
            self.agent.post(url).set("accept", "application/json"),
            Some(("application/x-www-form-urlencoded", &body)),
        )
    }

    /// One JSON-RPC message to the MCP endpoint with `token` and extra `headers`.
    pub fn mcp(
        &self,
        endpoint: &str,
        token: Option<&str>,
        message: &Value,
        headers: &[(&str, &str)],
    ) -> Result<Answer, String> {
        let mut req =
            self.agent.post(endpoint).set("accept", "application/json, text/event-stream");
        if let Some(t) = token {
            req = req.set("authorization", &format!("Bearer {t}"));
        }
        for (k, v) in headers {
            req = req.set(k, v);
        }
        self.send(req, Some(("application/json", &message.to_string())))
    }
}

/// Percent-encodes `s` for a query or form.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Decodes one percent-encoded query value.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match core::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `n` random bytes as base64url.
pub fn random(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::getrandom(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A PKCE verifier and its S256 challenge (RFC 7636).
pub fn pkce() -> Result<(String, String), String> {
    let verifier = random(32)?;
    let challenge = s256(&verifier);
    Ok((verifier, challenge))
}

/// The S256 challenge of `verifier`.
fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The loopback address the browser comes back to, and what it brought (the query's pairs).
pub struct Callback {
    pub uri: String,
    arrivals: Receiver<Vec<(String, String)>>,
}

impl Callback {
    /// Listens on a free loopback port.
    pub fn listen() -> Result<Self, String> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot listen on loopback: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let mut line = String::new();
                let mut reader = BufReader::new(&stream);
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let target = line.split_whitespace().nth(1).unwrap_or_default().to_owned();
                let mut w = &stream;
                let _ = w.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nThe live check has this answer; this tab can close.\n");
                let Some((path, query)) = target.split_once('?') else { continue };
                if path != "/callback" {
                    continue;
                }
                let pairs = query
                    .split('&')
                    .filter_map(|p| p.split_once('='))
                    .map(|(k, v)| (decode(k), decode(v)))
                    .collect();
                if tx.send(pairs).is_err() {
                    break;
                }
            }
        });
        Ok(Self { uri: format!("http://127.0.0.1:{port}/callback"), arrivals: rx })
    }

    /// The next redirect's query, within `within`.
    pub fn next(&self, within: Duration) -> Result<Vec<(String, String)>, String> {
        match self.arrivals.recv_timeout(within) {
            Ok(pairs) => Ok(pairs),
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("the waiting page sent the browser nowhere in {} s", within.as_secs()))
            }
            Err(RecvTimeoutError::Disconnected) => Err("the loopback listener stopped".into()),
        }
    }
}

/// The value of `key` among `pairs`.
pub fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// A JSON-RPC request.
pub fn rpc(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_rfc7636_appendix_b() {
        let v: Value =
            serde_json::from_str(include_str!("../../tests/data/rfc7636_appendix_b.json")).unwrap();
        assert_eq!(s256(v["code_verifier"].as_str().unwrap()), v["code_challenge"]);
    }

    #[test]
    fn query_values_round_trip() {
        for s in ["plain", "a b&c=d/é", "http://127.0.0.1:9/callback?x=1", "%", "%zz"] {
            assert_eq!(decode(&encode(s)), s);
        }
        assert_eq!(decode("a+b%2Fc%"), "a b/c%");
    }
}
