//! The codec between the Worker and its Durable Objects on any bytes: `pairing::wire`'s
//! `Request::decode` (what a pairing's object reads from a fetch) and `Reply::decode` (what the
//! Worker reads from each line the object sends back). Never panics, and whatever reads, reads
//! the same when written out again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabrelay::pairing::wire::{Reply, Request};

fuzz_target!(|data: &[u8]| {
    if let Some(request) = Request::decode(data) {
        assert_eq!(Request::decode(&request.encode()).as_ref(), Some(&request));
    }
    for line in data.split(|b| *b == b'\n') {
        if let Some(reply) = Reply::decode(line) {
            let written = reply.line();
            assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 1, "one line");
            assert_eq!(Reply::decode(&written).as_ref(), Some(&reply));
        }
    }
});
