//! One browser's pairing, by job: [`room`] (the pairing as a state machine: inputs in, effects out,
//! every decision of the pairing's object), [`object`] (the object as a machine around the room:
//! effects in order, writes first), [`store`] (its tables and rows), [`wire`] (the messages between
//! the Worker and the pairing's Durable Object), [`tabs`] (how a tab proves itself, what its
//! messages mean, which tab gets a call), [`admit`] (whether a call may go to a tab, by the list
//! agents see), [`calls`] (the one registry of calls in flight in tabs, whoever holds them),
//! [`turns`] (how calls are grouped into turns), [`codes`] (the allowance of wrong connect codes),
//! [`grants`] (the connections of agent apps the pairing keeps), [`tasks`] (calls a client polls as
//! tasks), [`answers`] (questions a session-era client was asked, waiting for its answers) and
//! [`resume`] (the ends of calls whose stream dropped, kept for the client's return).
//!
//! Words: the *tab's result* is what a tab sends back for a call
//! ([`tabrelay_bundle::protocol::Outcome`]); the *person's answer* is their decision on a card
//! the tab asked about ([`calls::Calls::answered`]); a *reply* is what the pairing's object
//! says back to the Worker ([`wire::CallReply`] and the others).

pub mod admit;
pub mod answers;
pub mod calls;
pub mod codes;
pub mod grants;
pub mod object;
pub mod presence;
pub mod resume;
pub mod room;
pub mod store;
pub mod tabs;
pub mod tasks;
pub mod turns;
pub mod wire;

pub use calls::{Calls, GaveUp};

/// Takes out of `list` the items `pick` picks, in order, the others kept in order. The
/// pairing's lists (tens of items at most) go through this one loop, a copy per item type
/// (`pick` is a `dyn`), rather than a copy of `partition` or `retain` per closure: smaller in
/// the Worker.
pub(crate) fn take_where<T>(list: &mut Vec<T>, pick: &dyn Fn(&T) -> bool) -> Vec<T> {
    let mut taken = Vec::new();
    let mut i = 0;
    while i < list.len() {
        if pick(&list[i]) {
            taken.push(list.remove(i));
        } else {
            i += 1;
        }
    }
    taken
}

/// The memory a JSON value's tree takes in the Worker beyond its text's bytes (which its holder
/// counts as JSON): what a value a client sent costs the pairing to keep, whatever its shape.
/// Measured on wasm32: a value is a 24-byte slot, which an array may hold twice over (it grows
/// by doubling); an object is a B-tree whose leaf takes 408 bytes for up to 11 entries, at
/// least 5 once split (so 100 an entry); a string is one allocation (8 bytes of the
/// allocator's). So `[0,0,…]` takes up to 24 times its JSON's bytes, `[{"":0},…]` about 66
/// times: counted as JSON alone, a connection's share of a few hundred KiB held tens of MiB.
#[must_use]
pub fn tree_bytes(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            let mut held = 0;
            for v in items {
                held += 48 + tree_bytes(v);
            }
            held
        }
        Value::Object(map) => map_tree_bytes(map),
        Value::String(_) => 8,
        _ => 0,
    }
}

/// [`tree_bytes`] of an object's map.
#[must_use]
pub fn map_tree_bytes(map: &serde_json::Map<String, serde_json::Value>) -> usize {
    let mut held = 416;
    // By `iter`, as the pairing's other maps are gone over (one copy of the B-tree's walk).
    for (_, v) in map {
        held += 100 + tree_bytes(v);
    }
    held
}

/// Removes from `list` the items `pick` picks ([`take_where`]).
pub(crate) fn remove_where<T>(list: &mut Vec<T>, pick: &dyn Fn(&T) -> bool) {
    take_where(list, pick);
}
pub use codes::WrongCodes;
pub use tabs::{
    next_check, route, socket_pairing, sockets_to_close, tab_socket, Admitted, PairingKey, Proof,
    Refusal, SocketRefused, Tab, TabAction, TabsStatus,
};
pub use turns::Turns;
