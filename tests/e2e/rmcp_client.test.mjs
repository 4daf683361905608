// The official MCP Rust SDK (rmcp 3.11.0, tests/clients/rmcp, built by scripts/test before this
// runs; nothing is built here) authorizes through a tab without a person, lists the tools, calls
// one, refreshes once and calls again. The Rust side prints `CODE <connect code>`; this tab
// approves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openTab, RELAY } from './harness.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BINARY = `${ROOT}tests/clients/rmcp/target/release/tabrelay-rmcp-client`;

/** The JSON between the data tags of a tool result's text. */
function dataOfText(text) {
  const open = '<tabrelay-data>';
  const close = '</tabrelay-data>';
  assert.ok(text.startsWith(open) && text.includes(close), `not data: ${text.slice(0, 200)}`);
  return JSON.parse(text.slice(open.length, text.indexOf(close)));
}

/** Runs the rmcp client; approves each code it prints with `tab`; resolves with its last JSON line. */
function runRmcp(tab, { timeoutMs = 90_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(BINARY, [], {
      cwd: ROOT,
      env: { ...process.env, TABRELAY_URL: RELAY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const codes = [];
    const approvals = [];
    const lines = [];
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the rmcp client took over ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
    }, timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const m = /^CODE ([0-9A-Z-]+)$/.exec(line.trim());
      if (m) {
        codes.push(m[1]);
        approvals.push(tab.client.approve(m[1]));
      }
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', async (status) => {
      clearTimeout(timer);
      try {
        await Promise.all(approvals);
      } catch (e) {
        return reject(new Error(`the tab could not approve ${codes}: ${e.message}`));
      }
      const last = [...lines].reverse().find((l) => l.trim().startsWith('{'));
      let result;
      try {
        result = last && JSON.parse(last);
      } catch {}
      if (status !== 0 || !result || result.error) {
        return reject(new Error(`the rmcp client exited ${status}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
      }
      resolve({ result, codes, stderr });
    });
  });
}

test('the official Rust SDK (rmcp) authorizes through a tab, calls a tool, refreshes once and calls on', async () => {
  assert.ok(
    existsSync(BINARY),
    `${BINARY} is missing: scripts/test builds it (cargo build --release --manifest-path tests/clients/rmcp/Cargo.toml)`,
  );
  const tab = await openTab({ seed: 58 });
  try {
    assert.equal(tab.connected.status, 'connected');
    const { result, codes } = await runRmcp(tab);

    assert.equal(codes.length, 1, 'one connect code, approved once');
    assert.equal(result.authorizations, 1, 'no new authorization was needed for the refresh');
    assert.deepEqual(result.tools, catalogue.tools.map((t) => t.name));

    assert.equal(result.describe.is_error, false);
    assert.equal(dataOfText(result.describe.text).name, tab.app.dataset.name);

    assert.ok(result.refresh.refresh_token_changed, `the refresh token rotated: ${JSON.stringify(result.refresh)}`);
    // (The access token may come back identical: a JWT with the same claims issued in the same second.)
    assert.ok(result.refresh.tokens_saved >= 1, 'rmcp saved the refreshed tokens in its credential store');
    assert.ok(result.refresh.second_call_ok, `the call after the refresh succeeded: ${result.refresh.second_text}`);
    assert.equal(dataOfText(result.refresh.second_text).name, tab.app.dataset.name);

    const tools = tab.calls.map((c) => c.tool);
    assert.deepEqual(tools, ['dataset_describe', 'dataset_describe'], 'both calls reached the tab');
  } finally {
    tab.close();
  }
});
