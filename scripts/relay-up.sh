# Sourced by scripts/test and scripts/bench: starts the demo app's server and the relay on
# wrangler dev, each on a free port, with a fresh signing key and fresh storage, and stops
# them on exit. Exports TABRELAY_URL, TABRELAY_APP_ORIGIN, TABRELAY_APP_LOCALHOST (the same demo
# server as http://localhost:PORT: WebAuthn's relying party cannot be an IP address, so the
# person's presence is tried there), TABRELAY_LOCAL_URL (where the demo's tab looks for the local
# server, tabrelay-local: none runs there unless a test starts one) and TABRELAY_WRANGLER_LOG.
relay_work="$(mktemp -d)"
relay_key="$(node -e "console.log(require('crypto').randomBytes(48).toString('base64url'))")"
export TABRELAY_CALL_WAIT_MS="${TABRELAY_CALL_WAIT_MS:-6000}"
# wrangler dev's local trace collector (on by default) runs in the Worker's own workerd and
# writes each invocation's spans to SQLite, with an fsync: about half that process's CPU per
# call, the dev tool's and not the Worker's. The tests and the bench (whose hop inherits this)
# run without it; scripts/dev keeps it for wrangler's local explorer.
export X_LOCAL_OBSERVABILITY=false
demo_pid=""
relay_pid=""
relay_down() {
  kill $relay_pid $demo_pid 2>/dev/null || true
  wait $relay_pid $demo_pid 2>/dev/null || true
  rm -rf "$relay_work"
}
trap relay_down EXIT
# A free port may be taken by another process before wrangler binds it (a shared machine):
# then the relay and the app start again on new ports, up to three times.
for attempt in 1 2 3; do
  relay_port="$(node "$ROOT/scripts/free-port.mjs")"
  app_port="$(node "$ROOT/scripts/free-port.mjs")"
  while [ "$app_port" = "$relay_port" ]; do app_port="$(node "$ROOT/scripts/free-port.mjs")"; done
  local_port="$(node "$ROOT/scripts/free-port.mjs")"
  export TABRELAY_LOCAL_URL="http://127.0.0.1:$local_port"
  export TABRELAY_URL="http://127.0.0.1:$relay_port"
  export TABRELAY_APP_ORIGIN="http://127.0.0.1:$app_port"
  export TABRELAY_APP_LOCALHOST="http://localhost:$app_port"
  export TABRELAY_WRANGLER_LOG="$relay_work/wrangler.log"
  # Calls wait 6 s in the tests (225 s by default) so a test can see a wait run out.
  node "$ROOT/scripts/serve-tab.mjs" --port "$app_port" --host 127.0.0.1 --relay "$TABRELAY_URL" --local "$TABRELAY_LOCAL_URL" > "$relay_work/demo.log" 2>&1 &
  demo_pid=$!
  wrangler dev --ip 127.0.0.1 --port "$relay_port" --persist-to "$relay_work/state" --show-interactive-dev-session=false \
    --var "RELAY_SIGNING_KEY:$relay_key" --var "ALLOWED_ORIGINS:$TABRELAY_APP_ORIGIN,$TABRELAY_APP_LOCALHOST" --var "APP_URL:$TABRELAY_APP_ORIGIN/demo/" --var "CALL_WAIT_MS:$TABRELAY_CALL_WAIT_MS" --var "CLIENT_ORIGINS:http://localhost:6274" \
    > "$TABRELAY_WRANGLER_LOG" 2>&1 &
  relay_pid=$!
  for _ in $(seq 1 120); do
    curl -fs "$TABRELAY_URL/health" > /dev/null 2>&1 && break
    kill -0 "$relay_pid" 2>/dev/null || break
    sleep 0.5
  done
  curl -fs "$TABRELAY_URL/health" > /dev/null 2>&1 && break
  grep -q 'Address already in use' "$TABRELAY_WRANGLER_LOG" || break
  echo "a port was taken before wrangler bound it; starting again on new ports" >&2
  kill "$relay_pid" "$demo_pid" 2>/dev/null || true
  wait "$relay_pid" "$demo_pid" 2>/dev/null || true
done
unset relay_key
if ! curl -fs "$TABRELAY_URL/health" > /dev/null 2>&1; then
  echo "the relay did not start:" >&2
  cat "$TABRELAY_WRANGLER_LOG" >&2
  exit 1
fi
