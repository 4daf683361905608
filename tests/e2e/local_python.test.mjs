// The official MCP Python SDK's stdio client (tests/clients/local_stdio.py, in the venv
// scripts/setup makes) starts tabrelay-local as an agent app does, reads the connect code from
// the status tool, and once the person typed it in the demo tab lists and calls the tab's tools.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileChromium, openDemo, approveIn } from './demo_harness.mjs';
import { LOCAL_BIN, ROOT, localArgs, localStatus, freshState } from './local_harness.mjs';

const PYTHON = `${ROOT}.venv/bin/python`;
const chromium = fileChromium();

test('the official Python SDK’s stdio client starts tabrelay-local and calls the tab once approved', async (t) => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/setup`);
  const child = spawn(PYTHON, [`${ROOT}tests/clients/local_stdio.py`], {
    env: { ...process.env, PYTHONUNBUFFERED: '1', TABRELAY_LOCAL_BIN: LOCAL_BIN, TABRELAY_LOCAL_ARGS: JSON.stringify(localArgs()), TABRELAY_LOCAL_STATE: freshState() },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill());
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = (await lines.next()).value;
  const code = /^CODE (\S+)$/.exec(first)?.[1];
  assert.ok(code, first);
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await approveIn(page)(code);
  await page.locator('#approve-result', { hasText: 'Connected to Python SDK agent (local)' }).waitFor();
  const result = JSON.parse((await lines.next()).value);
  assert.equal(result.error, undefined, JSON.stringify(result));
  assert.ok(result.tools.includes('dataset_describe'), result.tools.join(' '));
  assert.equal(result.isError, false, result.text);
  assert.match(result.text, /"items"|"columns"|"groups"/);
});
