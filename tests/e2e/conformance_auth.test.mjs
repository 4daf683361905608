// The official MCP conformance suite's `authorization` mode against the relay's authorization
// server: its metadata, then the authorization code grant, with a tab approving the connect
// code the waiting page shows, as a person would. Every check must pass or be listed, with its
// reason, in tests/conformance/auth-expected-failures.yml.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELAY, register, openTab, openWaitingPage, waitForRedirect, waitFor, freePort } from './harness.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOOL = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const EXPECTED = join(ROOT, 'tests', 'conformance', 'auth-expected-failures.yml');
const SCENARIOS = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];


/**
 * The `authorization:` entries of the baseline file, each with its reason: the comment lines
 * right above it. Same entry syntax as the tool's baselines (`scenario` or `scenario:checkId`).
 */
async function expectedFailures() {
  const lines = (await readFile(EXPECTED, 'utf8')).split('\n');
  const entries = new Map();
  let section = null;
  let comment = [];
  for (const line of lines) {
    if (/^[^\s#][^:]*:\s*$/.test(line)) {
      section = line.replace(/:\s*$/, '');
      comment = [];
      continue;
    }
    const c = /^\s+#\s?(.*)$/.exec(line);
    if (c) {
      comment.push(c[1]);
      continue;
    }
    const e = /^\s+-\s+(\S+)\s*$/.exec(line);
    if (e && section === 'authorization') {
      assert.ok(comment.join(' ').trim(), `${EXPECTED}: '${e[1]}' has no reason (comment lines above it)`);
      entries.set(e[1], comment.join(' ').trim());
    }
    if (!/^\s*$/.test(line) && !/^#/.test(line)) comment = [];
  }
  return entries;
}

/** Every checks.json the tool wrote under `dir`, as { scenario, checks }. */
async function results(dir) {
  const out = [];
  for (const d of await readdir(dir)) {
    const scenario = SCENARIOS.find((s) => d.startsWith(`authorization-server-${s}-`));
    assert.ok(scenario, `unexpected result directory ${d}`);
    out.push({ scenario, checks: JSON.parse(await readFile(join(dir, d, 'checks.json'), 'utf8')) });
  }
  return out;
}

test('the conformance suite\'s authorization mode passes, a tab approving the connect code', { timeout: 120_000 }, async (t) => {
  const port = await freePort();
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const client = await register('MCP conformance suite', [redirectUri]);
  const tab = await openTab();
  t.after(() => tab.close());
  assert.equal(tab.connected.status, 'connected');
  const outDir = await mkdtemp(join(tmpdir(), 'tabrelay-conformance-auth-'));
  t.after(() => rm(outDir, { recursive: true, force: true }));

  const child = spawn(
    process.execPath,
    [TOOL, 'authorization', '--url', RELAY, '--client-id', client.client_id, '--resource', RELAY, '--port', String(port), '--output-dir', outDir],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const output = () => `-- stdout:\n${stdout}\n-- stderr:\n${stderr}`;

  // The tool prints the authorization URL on the line after this one, then waits for its
  // callback on 127.0.0.1:<port>.
  const marker = 'Access the following URL in your browser and complete the authentication process.';
  const authorizationUrl = await Promise.race([
    waitFor(() => {
      const lines = stdout.split('\n');
      const i = lines.findIndex((l) => l.includes(marker));
      return i >= 0 && lines[i + 2] !== undefined ? lines[i + 1].trim() : null;
    }, 30_000),
    exited.then((e) => {
      throw new Error(`the tool exited (${JSON.stringify(e)}) before asking for the authorization\n${output()}`);
    }),
  ]);
  const url = new URL(authorizationUrl);
  assert.equal(`${url.origin}${url.pathname}`, `${RELAY}/authorize`, authorizationUrl);
  assert.equal(url.searchParams.get('redirect_uri'), redirectUri);

  // The waiting page, as the browser would open it; the tab approves the code it shows.
  const page = await openWaitingPage(authorizationUrl);
  assert.equal(page.status, 200, `the waiting page answered ${page.status}: ${page.html.slice(0, 400)}`);
  assert.ok(page.code, `no connect code on the waiting page: ${page.html.slice(0, 400)}`);
  await tab.client.approve(page.code);
  const status = await waitForRedirect(page);
  assert.equal(status.state, 'approved', JSON.stringify(status));
  assert.ok(status.redirect.startsWith(`${redirectUri}?`), status.redirect);

  // The browser follows the redirect to the tool's callback; the tool then redeems the code.
  const back = await fetch(status.redirect);
  assert.equal(back.status, 200, `the tool's callback answered ${back.status}`);
  await back.text();

  let timer;
  const end = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r(null), 60_000)))]);
  clearTimeout(timer);
  assert.ok(end, `the tool did not finish within 60 s after the callback\n${output()}`);
  for (const line of stdout.slice(stdout.indexOf('=== SUMMARY ===')).split('\n')) if (line.trim()) t.diagnostic(line.trim());

  // Every check of every scenario passes, or is an expected failure with its reason.
  const expected = await expectedFailures();
  const runs = await results(outDir);
  assert.deepEqual(runs.map((r) => r.scenario).sort(), [...SCENARIOS].sort(), output());
  const unexpected = [];
  const stale = [];
  for (const { scenario, checks } of runs) {
    assert.ok(checks.length > 0, `${scenario} reported no checks`);
    for (const c of checks) {
      const key = `${scenario}:${c.id}`;
      const listed = expected.has(key) || expected.has(scenario);
      if (c.status === 'SUCCESS' || c.status === 'INFO') {
        if (expected.has(key)) stale.push(key);
      } else if (!listed) {
        unexpected.push(`${key} ${c.status}: ${c.errorMessage ?? ''}`);
      }
    }
  }
  for (const key of expected.keys()) {
    const [scenario, id] = key.split(':');
    const run = runs.find((r) => r.scenario === scenario);
    assert.ok(run, `expected-failures entry ${key}: no such scenario was run`);
    if (id) assert.ok(run.checks.some((c) => c.id === id), `expected-failures entry ${key}: no such check was reported`);
    else if (run.checks.every((c) => c.status === 'SUCCESS' || c.status === 'INFO')) stale.push(key);
  }
  assert.deepEqual(unexpected, [], `checks that failed and are not in ${EXPECTED}\n${output()}`);
  assert.deepEqual(stale, [], `entries of ${EXPECTED} that now pass: remove them`);

  // The grant itself passed: the tool's own verdict agrees (it exits 1 on any FAILURE).
  const grant = runs.find((r) => r.scenario === 'authorization-code-grant').checks;
  assert.deepEqual(grant.map((c) => [c.id, c.status]), [['authorization-code-grant', 'SUCCESS']], output());
  assert.deepEqual(end, { code: 0, signal: null }, output());
});
