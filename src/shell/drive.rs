//! The Worker's driver of an [`Exchange`], by the core's one loop ([`machine::turn`]): it
//! carries out what the exchange says (read the body, ask the pairing, answer, stream), sleeps
//! until the exchange next needs waking or the pairing says something, reads the clock once
//! per event and gives back what happened.

use futures::future::{select, Either, LocalBoxFuture};
use worker::web_sys::{Request, Response};
use worker::Env;

use super::{
    ask_pairing, bytes_response, now_ms, read_body, respond, stream_response, Chunks, Replies,
    Result,
};
use crate::http;
use crate::machine;
use crate::mcp::exchange::{Exchange, Input, Output};
use crate::pairing::wire::Request as PairingRequest;

/// The exchange and its ask of the pairing in flight (kept across waits: a deadline passing
/// does not drop an ask or a reply half read).
struct Driver {
    exchange: Exchange<'static>,
    env: Env,
    asking: Option<LocalBoxFuture<'static, Replies>>,
    replies: Option<Replies>,
    now_ms: u64,
    /// What the last turns said that is not carried out yet, in order.
    outputs: Vec<Output>,
    /// When the exchange next needs waking.
    wake: Option<u64>,
}

/// Answers `req` as `exchange` says: a whole answer, or an event stream.
pub(crate) async fn drive(exchange: Exchange<'static>, req: Request, env: Env) -> Result<Response> {
    let (asking, replies, outputs) = (None, None, Vec::new());
    let mut driver =
        Driver { exchange, env, asking, replies, now_ms: now_ms(), outputs, wake: None };
    driver.turn(None);
    match driver.step(Some(&req)).await? {
        Output::Respond(answer) => respond(answer.http()),
        Output::Open => stream_response(Box::new(driver), &http::EVENT_STREAM_HEADERS),
        // Nothing could move the exchange any more (a fault of the core, never a client's).
        _ => Ok(bytes_response(500, crate::sentences::shell::CALL_NOT_ANSWERED.as_bytes())),
    }
}

impl Driver {
    /// One turn of the exchange at the last `now` read: `input` given (None: its timeout if
    /// due), what it says kept to carry out.
    fn turn(&mut self, input: Option<Input>) {
        let outputs = &mut self.outputs;
        let now = self.now_ms;
        self.wake = machine::turn(&mut self.exchange, input, now, &mut (), |o| outputs.push(o));
    }

    /// Runs the exchange to its next answer, stream opening, event or end (the output that
    /// says it).
    async fn step(&mut self, req: Option<&Request>) -> Result<Output> {
        loop {
            while !self.outputs.is_empty() {
                match self.outputs.remove(0) {
                    Output::ReadBody(cap) => {
                        let body = match req {
                            Some(req) => read_body(req, cap).await?,
                            None => Ok(Vec::new()),
                        };
                        self.now_ms = now_ms();
                        self.turn(Some(Input::Body(body)));
                    }
                    Output::Ask(request) => self.ask(request),
                    output => return Ok(output),
                }
            }
            if self.wake.is_none() && self.asking.is_none() && self.replies.is_none() {
                return Ok(Output::End);
            }
            // Nothing due: as long as a timer waits (the pairing's reply moves it first).
            let sleep = super::sleep_until(self.wake, self.now_ms);
            let (asking, replies) = (&mut self.asking, &mut self.replies);
            let reply = async move {
                if let Some(ask) = asking.as_mut() {
                    *replies = Some(ask.await);
                    *asking = None;
                }
                match replies.as_mut() {
                    Some(replies) => replies.next().await,
                    None => std::future::pending().await,
                }
            };
            let heard = match select(std::pin::pin!(reply), std::pin::pin!(sleep)).await {
                Either::Left((reply, _)) => Some(reply),
                Either::Right(_) => None,
            };
            self.now_ms = now_ms();
            if heard.as_ref().is_some_and(Option::is_none) {
                self.replies = None;
            }
            self.turn(heard.map(Input::Reply));
        }
    }

    /// Asks the pairing, dropping what an earlier ask would still say.
    fn ask(&mut self, request: PairingRequest) {
        self.replies = None;
        let pairing = self.exchange.pairing().unwrap_or_default().to_owned();
        let env = self.env.clone();
        self.asking = Some(Box::pin(async move {
            ask_pairing(&env, &pairing, &request)
                .await
                .unwrap_or_else(|_| Replies::of(wasm_bindgen::JsValue::NULL))
        }));
    }
}

/// The event stream: the exchange's events, until it has no more.
impl Chunks for Driver {
    fn next_chunk(&mut self) -> LocalBoxFuture<'_, Option<Vec<u8>>> {
        Box::pin(async move {
            match self.step(None).await {
                Ok(Output::Send(text)) => Some(text.into_bytes()),
                _ => None,
            }
        })
    }
}
