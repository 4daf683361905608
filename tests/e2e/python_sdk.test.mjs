// The official MCP Python SDK (mcp 2.3.0, tests/clients/python_sdk.py, in the venv scripts/setup
// makes) authorizes through a tab without a person, lists the tools, calls one, refreshes once
// and calls again. The Python side prints `CODE <connect code>`; this tab approves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openTab, RELAY } from './harness.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PYTHON = `${ROOT}.venv/bin/python`;
const SCRIPT = `${ROOT}tests/clients/python_sdk.py`;

/** The JSON between the data tags of a tool result's text. */
function dataOfText(text) {
  const open = '<tabrelay-data>';
  const close = '</tabrelay-data>';
  assert.ok(text.startsWith(open) && text.includes(close), `not data: ${text.slice(0, 200)}`);
  return JSON.parse(text.slice(open.length, text.indexOf(close)));
}

/** Runs the Python client; approves each code it prints with `tab`; resolves with its last JSON line. */
function runPython(tab, { timeoutMs = 90_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [SCRIPT], {
      cwd: ROOT,
      env: { ...process.env, TABRELAY_URL: RELAY, PYTHONUNBUFFERED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const codes = [];
    const approvals = [];
    const lines = [];
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`python_sdk.py took over ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
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
        return reject(new Error(`python_sdk.py exited ${status}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
      }
      resolve({ result, codes, stderr });
    });
  });
}

test('the official Python SDK authorizes through a tab, calls a tool, refreshes once and calls on', async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/setup`);
  const tab = await openTab({ seed: 57 });
  try {
    assert.equal(tab.connected.status, 'connected');
    const { result, codes } = await runPython(tab);

    assert.equal(codes.length, 1, 'one connect code, approved once');
    assert.equal(result.authorizations, 1, 'no new authorization was needed for the refresh');
    assert.deepEqual(result.tools, catalogue.tools.map((t) => t.name));

    assert.equal(result.describe.is_error, false);
    assert.equal(dataOfText(result.describe.text).name, tab.app.dataset.name);

    assert.ok(result.refresh.refresh_token_changed, `the refresh token rotated: ${JSON.stringify(result.refresh)}`);
    // (The access token may come back identical: a JWT with the same claims issued in the same second.)
    assert.ok(result.refresh.tokens_saved >= 1, 'the SDK saved the refreshed tokens');
    assert.ok(result.refresh.second_call_ok, `the call after the refresh succeeded: ${result.refresh.second_text}`);
    assert.equal(dataOfText(result.refresh.second_text).name, tab.app.dataset.name);

    const tools = tab.calls.map((c) => c.tool);
    assert.deepEqual(tools, ['dataset_describe', 'dataset_describe'], 'both calls reached the tab');
  } finally {
    tab.close();
  }
});
