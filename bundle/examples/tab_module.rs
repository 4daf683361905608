//! Prints `tab/generated/bundle.js` (scripts/bundle writes or checks it).

fn main() {
    print!("{}", tabrelay_bundle::tab_module::text());
}
