//! The Durable Object of one pairing: holds its tabs' hibernatable WebSockets, sends each call
//! to the tab the core routes it to, and carries the answer back to the waiting request.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::{select, Either};
use serde_json::json;
use tabrelay_bundle::protocol::{
    close, RelayMessage, HELLO_WAIT_MS, MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};
use worker::{
    durable_object, Delay, DurableObject, Env, Request, Response, Result, State, WebSocket,
    WebSocketIncomingMessage, WebSocketPair,
};

use super::routes::CONNECT_BINDING;
use super::{ask_object, json_response, now_ms};
use crate::http;
use crate::pairing::{route, CallAnswer, CallRequest, Tab, TabAction, Turns, TAB_CALL_WAIT_MS};
use crate::sentences;

struct Waiting {
    tab: u64,
    reply: oneshot::Sender<CallAnswer>,
}

/// One browser's pairing.
#[durable_object]
pub struct Pairing {
    state: State,
    env: Env,
    waiting: RefCell<HashMap<u64, Waiting>>,
    next_call: Cell<u64>,
    next_tab: Cell<u64>,
    turns: RefCell<Turns>,
}

fn tab_of(ws: &WebSocket) -> Option<Tab> {
    ws.deserialize_attachment().ok().flatten()
}

impl Pairing {
    fn tabs(&self) -> Vec<(WebSocket, Tab)> {
        self.state
            .get_websockets()
            .into_iter()
            .filter_map(|ws| tab_of(&ws).map(|t| (ws, t)))
            .collect()
    }

    fn send(ws: &WebSocket, message: &RelayMessage) {
        // A socket that just closed fails its calls through websocket_close.
        let _ = ws.send_with_str(message.to_text());
    }

    fn accept_tab(&self, url: &str) -> Result<Response> {
        let query = http::query_of(url);
        let pairing =
            query.into_iter().find(|(k, _)| k == "pairing").map(|(_, v)| v).unwrap_or_default();
        let pair = WebSocketPair::new()?;
        self.state.accept_web_socket(&pair.server);
        let now = now_ms();
        // Tab numbers grow with time, so they stay ordered across an eviction.
        let number = (now * 1024).max(self.next_tab.get());
        self.next_tab.set(number + 1);
        pair.server.serialize_attachment(Tab::opened(pairing, number, now))?;
        Response::from_websocket(pair.client)
    }

    async fn call(&self, call: CallRequest) -> Result<Response> {
        let tabs = self.tabs();
        let Some((ws, tab)) =
            route(tabs.iter().map(|(_, t)| t)).and_then(|t| tabs.iter().find(|(_, x)| x == t))
        else {
            return json_response(
                200,
                &CallAnswer::NotCarried { sentence: sentences::NO_TAB.into() },
            );
        };
        let now = now_ms();
        let id = self.next_call.get().max(now * 1024);
        self.next_call.set(id + 1);
        let turn = self.turns.borrow_mut().of_call(&call.connection.id, now);
        let (reply, answer) = oneshot::channel();
        self.waiting.borrow_mut().insert(id, Waiting { tab: tab.number, reply });
        Self::send(
            ws,
            &RelayMessage::Call {
                id,
                tool: call.tool,
                args: call.args,
                agent: call.agent,
                connection: call.connection,
                turn,
            },
        );
        let timeout = Box::pin(Delay::from(Duration::from_millis(TAB_CALL_WAIT_MS)));
        let answer = match select(answer, timeout).await {
            Either::Left((Ok(answer), _)) => answer,
            Either::Left((Err(_), _)) => {
                CallAnswer::NotCarried { sentence: sentences::TAB_GONE.into() }
            }
            Either::Right(_) => {
                CallAnswer::NotCarried { sentence: sentences::wait_over(TAB_CALL_WAIT_MS / 1000) }
            }
        };
        self.waiting.borrow_mut().remove(&id);
        json_response(200, &answer)
    }

    /// Fails every call waiting on this tab: it went away, so nothing will answer them.
    fn tab_gone(&self, ws: &WebSocket) {
        let Some(tab) = tab_of(ws) else { return };
        let gone: Vec<u64> = self
            .waiting
            .borrow()
            .iter()
            .filter(|(_, w)| w.tab == tab.number)
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            if let Some(w) = self.waiting.borrow_mut().remove(&id) {
                let _ =
                    w.reply.send(CallAnswer::NotCarried { sentence: sentences::TAB_GONE.into() });
            }
        }
    }

    async fn approve(
        &self,
        ws: &WebSocket,
        tab: &Tab,
        code: crate::oauth::connect::ConnectCode,
    ) -> Result<()> {
        let stub =
            self.env.durable_object(CONNECT_BINDING)?.id_from_name(code.as_str())?.get_stub()?;
        let command = crate::oauth::connect::Command::Approve { pairing: tab.pairing.clone() };
        let answer: serde_json::Value =
            ask_object(&stub, "/command", &json!({"code": code.as_str(), "command": command}))
                .await?;
        let message = if answer["ok"] == true {
            RelayMessage::Approved {
                code: code.as_str().into(),
                client: answer["client"].as_str().unwrap_or_default().into(),
            }
        } else {
            RelayMessage::Refused {
                code: code.as_str().into(),
                sentence: answer["sentence"]
                    .as_str()
                    .unwrap_or(crate::oauth::connect::refusal::UNKNOWN)
                    .into(),
            }
        };
        Self::send(ws, &message);
        Ok(())
    }
}

impl DurableObject for Pairing {
    fn new(state: State, env: Env) -> Self {
        Self {
            state,
            env,
            waiting: RefCell::new(HashMap::new()),
            next_call: Cell::new(0),
            next_tab: Cell::new(0),
            turns: RefCell::new(Turns::default()),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let url = req.inner().url();
        match http::path_of(&url) {
            "/tab" => {
                let res = self.accept_tab(&url)?;
                // Close a tab that never proves itself.
                if self.state.storage().get_alarm().await?.is_none() {
                    self.state.storage().set_alarm(now_ms() as i64 + HELLO_WAIT_MS as i64).await?;
                }
                Ok(res)
            }
            "/call" => match req.json::<CallRequest>().await {
                Ok(call) => self.call(call).await,
                Err(_) => Response::error("bad call", 400),
            },
            _ => Response::error("Not found.", 404),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let text = match message {
            WebSocketIncomingMessage::String(t) if t.len() <= MAX_MESSAGE_BYTES => t,
            _ => {
                let _ = ws.close(
                    Some(close::PROTOCOL_ERROR),
                    Some("Messages must be JSON text within the size limit."),
                );
                self.tab_gone(&ws);
                return Ok(());
            }
        };
        let Some(tab) = tab_of(&ws) else { return Ok(()) };
        match tab.on_message(&text, now_ms()) {
            TabAction::Welcome(tab) => {
                ws.serialize_attachment(&tab)?;
                Self::send(
                    &ws,
                    &RelayMessage::Welcome { pairing: tab.pairing, protocol: PROTOCOL_VERSION },
                );
            }
            TabAction::Close(code, reason) => {
                let _ = ws.close(Some(code), Some(reason));
            }
            TabAction::Approve(code) => {
                if self.approve(&ws, &tab, code.clone()).await.is_err() {
                    Self::send(
                        &ws,
                        &RelayMessage::Refused {
                            code: code.as_str().into(),
                            sentence: sentences::PAIRING_UNAVAILABLE.into(),
                        },
                    );
                }
            }
            TabAction::RefuseCode(code, sentence) => {
                Self::send(&ws, &RelayMessage::Refused { code, sentence: sentence.into() })
            }
            TabAction::Update(tab) => ws.serialize_attachment(&tab)?,
            TabAction::Answer(id, outcome) => {
                let waiting = self.waiting.borrow_mut().remove(&id);
                match waiting {
                    Some(w) if w.tab == tab.number => {
                        let _ = w.reply.send(CallAnswer::Answered { outcome });
                    }
                    // An answer from another tab than the one asked is not this call's answer.
                    Some(w) => {
                        self.waiting.borrow_mut().insert(id, w);
                    }
                    None => {}
                }
            }
            TabAction::Ignore => {}
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        _code: usize,
        _reason: String,
        _was_clean: bool,
    ) -> Result<()> {
        self.tab_gone(&ws);
        let _ = ws.close(Some(1000), Some("Closed."));
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: worker::Error) -> Result<()> {
        self.tab_gone(&ws);
        Ok(())
    }

    async fn alarm(&self) -> Result<Response> {
        let now = now_ms();
        let mut unproven_left = false;
        for (ws, tab) in self.tabs() {
            if !tab.proven {
                if now >= tab.opened_ms + HELLO_WAIT_MS {
                    let _ = ws.close(
                        Some(close::PROOF_FAILED),
                        Some("The tab did not prove its pairing in time."),
                    );
                } else {
                    unproven_left = true;
                }
            }
        }
        if unproven_left {
            self.state.storage().set_alarm(now as i64 + HELLO_WAIT_MS as i64).await?;
        }
        Response::ok("checked")
    }
}
