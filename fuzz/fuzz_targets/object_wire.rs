//! The codecs between the Worker and its Durable Objects on any bytes: `pairing::wire`'s
//! `Request::decode` (what a pairing's object reads from a fetch) and `Reply::decode` (what the
//! Worker reads from each line the object sends back), and `oauth::connect`'s `CodeRequest` and
//! `CodeReply` (a connect code's object), and a task's stored row (`pairing::tasks::read`).
//! Never panics, and whatever reads, reads the same when written out again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::oauth::connect::{CodeReply, CodeRequest};
use tabrelay::pairing::tasks;
use tabrelay::pairing::wire::{Reply, Request};
use tabrelay_bundle::fields::Message as _;

fuzz_target!(|data: &[u8]| {
    if let Some(task) = serde_json::from_slice(data).ok().and_then(tasks::read) {
        let row: serde_json::Value =
            serde_json::from_slice(&tabrelay_bundle::fields::Encode::to_json(&task)).unwrap();
        assert_eq!(tasks::read(row).as_ref(), Some(&task));
    }
    if let Ok(request) = Request::decode(data) {
        assert_eq!(Request::decode(&request.encode()).as_ref(), Ok(&request));
    }
    if let Ok((code, command)) = CodeRequest::decode(data) {
        let again = CodeRequest { code: code.as_str().into(), command: command.clone() };
        assert_eq!(CodeRequest::decode(&again.encode()), Ok((code, command)));
    }
    if let Ok(reply) = CodeReply::decode(data) {
        assert_eq!(CodeReply::decode(&reply.encode()).as_ref(), Ok(&reply));
    }
    for line in data.split(|b| *b == b'\n') {
        if let Ok(reply) = Reply::decode(line) {
            let written = reply.line();
            assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 1, "one line");
            assert_eq!(Reply::decode(&written).as_ref(), Ok(&reply));
        }
    }
});
