//! Prints `tab/generated/wire.js` (scripts/bundle writes or checks it).

fn main() {
    print!("{}", tabrelay_bundle::tab_wire::text());
}
