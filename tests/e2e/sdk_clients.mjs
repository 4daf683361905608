// What the tests of other SDKs' clients share: running the client as a child process with a
// tab approving the connect codes it prints, and the checks every such client must pass (it
// authorizes through the tab, lists the tools, calls one, refreshes once and calls again).
// The client prints `CODE <connect code>` lines and, last, one JSON line of its results.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openTab, RELAY, dataOfText } from './harness.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Runs an SDK client (`command` with `args`) against the relay; approves each `CODE <code>` line
 * it prints with `tab`; resolves with its last JSON line and the codes it printed.
 */
function runClient(name, command, args, env, tab, timeoutMs = 90_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, TABRELAY_URL: RELAY, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const codes = [];
    const approvals = [];
    const lines = [];
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`${name} took over ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
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
        return reject(new Error(`${name} exited ${status}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`));
      }
      resolve({ result, codes, stderr });
    });
  });
}

/** Runs the client `name` through a fresh tab (data seed `seed`) and checks the whole flow. */
export async function checkClientFlow({ name, command, args = [], env = {}, seed }) {
  const tab = await openTab({ seed });
  try {
    assert.equal(tab.connected.status, 'connected');
    const { result, codes } = await runClient(name, command, args, env, tab);

    assert.equal(codes.length, 1, 'one connect code, approved once');
    assert.equal(result.authorizations, 1, 'no new authorization was needed for the refresh');
    // The tab's tools (the catalogue's) and the relay's status, in name order.
    assert.deepEqual(result.tools, [...catalogue.tools.map((t) => t.name), 'status'].sort());

    assert.equal(result.describe.is_error, false);
    assert.equal(dataOfText(result.describe.text).name, tab.app.dataset.name);

    assert.ok(result.refresh.refresh_token_changed, `the refresh token rotated: ${JSON.stringify(result.refresh)}`);
    // (The access token may come back identical: a JWT with the same claims issued in the same second.)
    assert.ok(result.refresh.tokens_saved >= 1, `${name} saved the refreshed tokens`);
    assert.ok(result.refresh.second_call_ok, `the call after the refresh succeeded: ${result.refresh.second_text}`);
    assert.equal(dataOfText(result.refresh.second_text).name, tab.app.dataset.name);

    const tools = tab.calls.map((c) => c.tool);
    assert.deepEqual(tools, ['dataset_describe', 'dataset_describe'], 'both calls reached the tab');
  } finally {
    tab.close();
  }
}
