//! The bench's floor: a Worker that forwards a POST to one Durable Object, which sends the body
//! over a hibernatable WebSocket to the one connected client (the bench, in Node) and answers
//! the request with the client's reply. Nothing else: no auth, no JSON-RPC, no storage. The
//! relay's cost on `scripts/bench` is read as its difference from this hop's.
//!
//! Routes: `GET /health` (the plain route), `GET /ws` (the client's WebSocket), and any POST
//! (the hop). Frames are `<id>\n<body>` both ways: the client answers with the id it was sent.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use futures::channel::oneshot;
use worker::{
    durable_object, event, Context, DurableObject, Env, Method, Request, Response, Result, State,
    WebSocketIncomingMessage, WebSocketPair,
};

/// The path of a request URL (the `url` crate that `Request::path` pulls is not needed).
fn path_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(url, |i| &url[i + 3..]);
    let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
    path.split(['?', '#']).next().unwrap_or("/")
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    if req.method() == Method::Get && path_of(&req.inner().url()) == "/health" {
        return Response::ok("ok");
    }
    let stub = env.durable_object("HOP")?.id_from_name("hop")?.get_stub()?;
    stub.fetch_with_request(req).await
}

/// The one Durable Object: its client's socket, and the requests waiting for a reply.
#[durable_object]
pub struct Hop {
    state: State,
    next: Cell<u64>,
    waiting: RefCell<HashMap<u64, oneshot::Sender<String>>>,
}

impl DurableObject for Hop {
    fn new(state: State, _env: Env) -> Self {
        Self { state, next: Cell::new(0), waiting: RefCell::new(HashMap::new()) }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        if req.method() == Method::Get {
            let pair = WebSocketPair::new()?;
            self.state.accept_web_socket(&pair.server);
            return Response::from_websocket(pair.client);
        }
        let Some(ws) = self.state.get_websockets().into_iter().next() else {
            return Response::error("no client", 503);
        };
        let body = req.text().await?;
        let id = self.next.get() + 1;
        self.next.set(id);
        let (reply, answer) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, reply);
        ws.send_with_str(format!("{id}\n{body}"))?;
        match answer.await {
            Ok(text) => Response::ok(text),
            Err(_) => Response::error("no reply", 502),
        }
    }

    async fn websocket_message(
        &self,
        _ws: worker::WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        if let WebSocketIncomingMessage::String(text) = message {
            if let Some((id, body)) = text.split_once('\n') {
                let waiter = id.parse().ok().and_then(|id| self.waiting.borrow_mut().remove(&id));
                if let Some(waiter) = waiter {
                    let _ = waiter.send(body.to_owned());
                }
            }
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        _ws: worker::WebSocket,
        _code: usize,
        _reason: String,
        _was_clean: bool,
    ) -> Result<()> {
        // Dropping the senders answers every waiting request with 502.
        self.waiting.borrow_mut().clear();
        Ok(())
    }
}
