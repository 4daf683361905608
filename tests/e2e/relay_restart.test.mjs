// The relay restarting mid-call (its process killed, as a deploy or crash would): the waiting
// client is not left hanging, the tab reconnects by itself, and the same token's next call
// reaches the tab. This test runs a relay of its own on wrangler dev so it can kill it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openTab, accessToken, callTool, useRelay, waitFor, APP_ORIGIN, dataOf } from './harness.mjs';

const root = new URL('../../', import.meta.url).pathname;
const port = Number(execFileSync('node', [join(root, 'scripts/free-port.mjs')], { encoding: 'utf8' }).trim());
const url = `http://127.0.0.1:${port}`;
const state = mkdtempSync(join(tmpdir(), 'tabrelay-restart-'));
const key = randomBytes(48).toString('base64url');
let relay = null;

async function start() {
  relay = spawn('wrangler', ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', state, '--show-interactive-dev-session=false',
    '--var', `RELAY_SIGNING_KEY:${key}`, '--var', `ALLOWED_ORIGINS:${APP_ORIGIN}`, '--var', `APP_URL:${APP_ORIGIN}/demo/`, '--var', 'CALL_WAIT_MS:20000'],
  { cwd: root, detached: true, stdio: 'ignore' });
  await waitFor(async () => (await fetch(`${url}/health`).catch(() => null))?.ok, 60_000, 200);
}

function kill() {
  try {
    process.kill(-relay.pid, 'SIGKILL'); // wrangler and its workerd
  } catch {
    // Already gone.
  }
}

after(() => {
  kill();
  rmSync(state, { recursive: true, force: true });
});

test('a relay killed mid-call leaves no call hanging; the tab reconnects and the next call works', { timeout: 180_000 }, async () => {
  await start();
  useRelay(url);
  const tab = await openTab({ relay: url, seed: 5 });
  const token = await accessToken(tab);
  const answer = tab.client.handle;
  let entered = false;
  tab.client.handle = () => {
    entered = true;
    return new Promise(() => {});
  };
  const pending = callTool(token, 'history_list').then((r) => ({ r }), (e) => ({ e }));
  await waitFor(() => entered, 5000);
  const killedAt = Date.now();
  kill();
  const settled = await pending;
  assert.ok(Date.now() - killedAt < 5000, `the client waited ${Date.now() - killedAt} ms`);
  assert.ok(settled.e || settled.r.isError, 'the call failed rather than answering');

  tab.client.handle = answer;
  await start();
  await waitFor(() => tab.statuses.filter((s) => s.status === 'connected').length >= 2, 90_000, 100);
  const result = await callTool(token, 'dataset_describe');
  assert.equal(result.isError, false, JSON.stringify(result));
  assert.equal(dataOf(result).name, tab.app.dataset.name, 'the same token reaches the reconnected tab');
  tab.close();
});
