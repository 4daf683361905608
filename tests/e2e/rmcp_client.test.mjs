// The official MCP Rust SDK (rmcp 3.11.0, tests/clients/rmcp, built by scripts/test before this
// runs; nothing is built here) authorizes through a tab without a person, lists the tools, calls
// one, refreshes once and calls again. The Rust side prints `CODE <connect code>`; the tab
// approves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { checkClientFlow, ROOT } from './sdk_clients.mjs';

const BINARY = `${ROOT}tests/clients/rmcp/target/release/tabrelay-rmcp-client`;

test('the official Rust SDK (rmcp) authorizes through a tab, calls a tool, refreshes once and calls on', async () => {
  assert.ok(
    existsSync(BINARY),
    `${BINARY} is missing: scripts/test builds it (cargo build --release --manifest-path tests/clients/rmcp/Cargo.toml)`,
  );
  await checkClientFlow({ name: 'the rmcp client', command: BINARY, seed: 58 });
});
