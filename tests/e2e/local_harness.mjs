// What the local way in's tests share: the tabrelay-local binary (built by scripts/test and
// scripts/local), started by an official SDK's stdio client as an agent app starts it, on the
// port the demo page's tab looks for it (scripts/relay-up.sh's TABRELAY_LOCAL_URL).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { APP_ORIGIN } from './harness.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The binary, as `cargo build -p tabrelay-local --release` makes it. */
export const LOCAL_BIN = process.env.TABRELAY_LOCAL_BIN || `${ROOT}target/release/tabrelay-local`;
/** Where the demo page's tab looks for the local server. */
export const LOCAL_URL = process.env.TABRELAY_LOCAL_URL;
export const LOCAL_PORT = LOCAL_URL ? new URL(LOCAL_URL).port : '';
/** The app origins the local server takes tabs from (the demo's, by IP and by name). */
export const APP_ORIGINS = [APP_ORIGIN, process.env.TABRELAY_APP_LOCALHOST].filter(Boolean).join(',');

assert.ok(existsSync(LOCAL_BIN), `${LOCAL_BIN} is built (cargo build -p tabrelay-local --release)`);
assert.ok(LOCAL_PORT, 'TABRELAY_LOCAL_URL is set (source scripts/relay-up.sh)');

/** The arguments the agent app starts the binary with. */
export function localArgs(port = LOCAL_PORT) {
  return ['--app-origin', APP_ORIGINS, '--port', String(port)];
}

/** The state directories made, removed when the file's tests are done. */
const made = [];
process.on('exit', () => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A state directory of its own (what the binary keeps between runs), empty. */
export function freshState() {
  const dir = mkdtempSync(join(tmpdir(), 'tabrelay-local-'));
  made.push(dir);
  return dir;
}

/** The environment the agent app starts the binary with: the SDK's default, and `state`. */
export function localEnv(state = freshState()) {
  return { ...getDefaultEnvironment(), TABRELAY_LOCAL_STATE: state };
}

/**
 * The official TypeScript SDK's client calling itself `name`, having started the binary over
 * stdio (with `state` as its state directory: a fresh one unless given, and `args` after the
 * usual ones); with `elicit`, it declares elicitation and answers each `elicitation/create` with
 * `elicit(request)`.
 */
export async function stdioClient(name, { port, state, elicit, args = [] } = {}) {
  const transport = new StdioClientTransport({ command: LOCAL_BIN, args: [...localArgs(port), ...args], env: localEnv(state), stderr: 'pipe' });
  const client = new Client({ name, version: '1.0.0' }, elicit ? { capabilities: { elicitation: {} } } : undefined);
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicit(request, extra));
  const changed = [];
  client.fallbackNotificationHandler = async (n) => changed.push(n.method);
  await client.connect(transport);
  return { client, transport, changed };
}

/** The binary started bare (no SDK): its stdin and stdout, for the refusals' tests. */
export function startBare(port = LOCAL_PORT) {
  const child = spawn(LOCAL_BIN, localArgs(port), { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TABRELAY_LOCAL_STATE: freshState() } });
  const listening = new Promise((resolve, reject) => {
    let said = '';
    child.stderr.on('data', (d) => {
      said += d;
      if (said.includes('/tab')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`tabrelay-local exited (${code}): ${said}`)));
  });
  return { child, listening };
}

/** The connect code a sentence of the local server gives. */
export function codeIn(text) {
  const code = /connect code ([0-9A-Z]{5}-[0-9A-Z]{5})/.exec(text)?.[1];
  assert.ok(code, `a connect code in: ${text}`);
  return code;
}

/** The Agents panel's line for the local server: its status words. */
export function localStatus(page) {
  return page.locator('tabrelay-agents [part=local-status]');
}
