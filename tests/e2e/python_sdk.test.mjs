// The official MCP Python SDK (mcp 2.3.0, tests/clients/python_sdk.py, in the venv scripts/setup
// makes) authorizes through a tab without a person, lists the tools, calls one, refreshes once
// and calls again. The Python side prints `CODE <connect code>`; the tab approves it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { checkClientFlow, ROOT } from './sdk_clients.mjs';

const PYTHON = `${ROOT}.venv/bin/python`;

test('the official Python SDK authorizes through a tab, calls a tool, refreshes once and calls on', async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} is missing: run scripts/setup`);
  await checkClientFlow({
    name: 'python_sdk.py',
    command: PYTHON,
    args: [`${ROOT}tests/clients/python_sdk.py`],
    env: { PYTHONUNBUFFERED: '1' },
    seed: 57,
  });
});
