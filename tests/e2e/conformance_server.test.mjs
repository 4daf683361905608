// The official MCP conformance suite's `server` mode against the relay, for the 2025-11-25 and
// the 2026-07-28 requirement sets: the suite talks to a small proxy that adds a valid bearer
// token (the suite has no way to send one), and a scripted tab states the suite's fixture
// tools as its own list and answers them. Every scenario passes, or stands in
// tests/conformance/server-expected-failures.yml with the reason it does not apply.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELAY, accessToken, mcpPost, waitFor } from './harness.mjs';
import { openFixtureTab } from './conformance_tab.mjs';
import { startProxy } from './conformance_proxy.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TOOL = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE = join(ROOT, 'tests', 'conformance', 'server-expected-failures.yml');

/** The baseline's entries, each with its reason (the comment lines right above it). */
async function baseline() {
  const entries = new Map();
  let comment = [];
  for (const line of (await readFile(BASELINE, 'utf8')).split('\n')) {
    const c = /^\s+#\s?(.*)$/.exec(line);
    const e = /^\s+-\s+(\S+)\s*$/.exec(line);
    if (c) comment.push(c[1]);
    else if (e) entries.set(e[1], comment.join(' ').trim());
    else comment = [];
  }
  return entries;
}

/** Every check the tool wrote under `dir`, as `scenario:check` → status. */
async function checks(dir) {
  const out = new Map();
  for (const d of await readdir(dir)) {
    const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    for (const c of JSON.parse(await readFile(join(dir, d, 'checks.json'), 'utf8'))) out.set(`${scenario}:${c.id}`, c.status);
  }
  return out;
}

async function run(t, requirements) {
  const tab = await openFixtureTab();
  t.after(() => tab.close());
  const token = await accessToken(tab);
  // The relay lists the tab's tools once the tab has stated them.
  await waitFor(async () => {
    const r = await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    return r.body?.result?.tools?.some((tool) => tool.name === 'test_simple_text');
  });
  const proxy = await startProxy(RELAY, token);
  t.after(() => proxy.close());
  const outDir = await mkdtemp(join(tmpdir(), `tabrelay-conformance-${requirements}-`));
  t.after(() => rm(outDir, { recursive: true, force: true }));
  const child = spawn(
    process.execPath,
    [TOOL, 'server', '--url', proxy.url, '--requirements', requirements, '--expected-failures', BASELINE, '-o', outDir],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  for (const line of output.split('\n')) if (/^[✓✗]|^Total|^\s+[~✓✗] /.test(line)) t.diagnostic(line);
  // The tool's verdict: no failure outside the baseline, no baseline entry that now passes.
  assert.equal(code, 0, output.slice(-4000));
  return checks(outDir);
}

test('every entry of the server baseline says why it does not apply', async () => {
  for (const [entry, reason] of await baseline()) assert.ok(reason.length > 20, `${entry} has no reason`);
});

test('the conformance suite passes for the 2026-07-28 requirement set', { timeout: 300_000 }, async (t) => {
  const c = await run(t, '2026-07-28');
  // The stateless revision's own checks and the relay's own features, named so a baseline
  // entry can never hide them.
  for (const key of [
    'server-stateless:sep-2575-server-implements-discover',
    'server-stateless:sep-2575-server-rejects-undeclared-capability',
    'server-stateless:sep-2575-server-sends-subscription-ack',
    'server-stateless:sep-2575-server-sends-tools-list-changed-on-subscription',
    'input-required-result-tampered-state:sep-2322-reject-tampered-state',
    'dns-rebinding-protection:localhost-host-rebinding-rejected',
    'tools-call-with-progress:tools-call-with-progress',
    // No log message without the request's logLevel (the fixture's tab says three steps).
    'server-stateless:sep-2575-server-no-log-without-loglevel',
    // A tool's x-mcp-header: the Mcp-Param-* header held against its argument.
    'http-custom-header-server-validation:sep-2243-server-decode-base64',
    'http-custom-header-server-validation:sep-2243-server-validate-param-match',
    'http-custom-header-server-validation:sep-2243-server-reject-invalid-param-chars',
    'http-custom-header-server-validation:sep-2243-server-reject-param-mismatch',
    // The tasks extension: a call that waits becomes a task, polled, answered, cancelled.
    'tasks-capability-negotiation:tasks-extension-advertised',
    'tasks-lifecycle:sep-2663-tasks-get-status-completed',
    'tasks-lifecycle:sep-2663-cancel-ack-empty-result',
    'tasks-mrtr-input:tasks-mrtr-tasks-update-resumes',
    'tasks-mrtr-composition:sep-2663-mrtr-synchronous-before-task-creation',
    'tasks-dispatch-and-envelope:sep-2663-durable-create-strong-consistency',
    'tasks-required-task-error:sep-2663-server-returns-missing-capability-when-required',
  ]) {
    assert.equal(c.get(key), 'SUCCESS', key);
  }
});

test('the conformance suite passes for the 2025-11-25 requirement set', { timeout: 300_000 }, async (t) => {
  const c = await run(t, '2025-11-25');
  for (const key of [
    'server-initialize:server-initialize',
    'tools-call-simple-text:tools-call-simple-text',
    'dns-rebinding-protection:localhost-host-rebinding-rejected',
    'tools-call-elicitation:tools-call-elicitation',
    'tools-call-sampling:tools-call-sampling',
    // What a tab says while it works, as log messages; a level the relay holds taken.
    'logging-set-level:logging-set-level',
    'tools-call-with-logging:tools-call-with-logging',
    'server-sse-polling:server-sse-priming-event',
    'server-sse-polling:server-sse-retry-field',
  ]) {
    assert.equal(c.get(key), 'SUCCESS', key);
  }
});
