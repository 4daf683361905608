// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli 1.0.3, the package behind
// `npx @modelcontextprotocol/inspector --cli`, installed as a dev dependency; nothing is fetched
// at run time) against the relay with a bearer header: it lists the tools, calls one answered
// by the tab, and a bad token makes it exit non-zero on the relay's 401. A preload records every
// connection and fetch the CLI's processes make: all of them go to the relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openTab, accessToken, RELAY, dataOfText } from './harness.mjs';
import { ROOT } from './sdk_clients.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));
const CLI_DIR = `${ROOT}node_modules/@modelcontextprotocol/inspector-cli`;
const CLI = `${CLI_DIR}/build/cli.js`;
const RECORDER = pathToFileURL(`${ROOT}tests/e2e/net_record.mjs`).href;
const relay = new URL(RELAY);

let tab;
let token;
let work;

before(async () => {
  assert.ok(existsSync(CLI), `${CLI} is missing: npm ci installs it (package.json pins it)`);
  work = mkdtempSync(join(tmpdir(), 'tabrelay-inspector-'));
  tab = await openTab({ seed: 61 });
  assert.equal(tab.connected.status, 'connected');
  token = await accessToken(tab);
});

after(() => {
  tab?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

let runs = 0;
/**
 * Runs `mcp-inspector-cli --cli <relay> --transport http --header "Authorization: Bearer <bearer>"
 * <args>`; resolves with its exit status, output and the network accesses its processes made.
 */
function inspector(bearer, args, timeoutMs = 30_000) {
  const record = join(work, `net-${++runs}.jsonl`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--cli', `${RELAY}/`, '--transport', 'http', ...args, '--header', `Authorization: Bearer ${bearer}`], {
      // The CLI reads its own package.json through a path it checks against the working
      // directory ("../package.json"), so it runs from its build directory.
      cwd: `${CLI_DIR}/build`,
      env: {
        ...process.env,
        // The launcher starts the CLI proper with `node` from PATH: this same Node.
        PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
        NODE_OPTIONS: `--import=${RECORDER}`,
        TABRELAY_NET_RECORD: record,
        // The CLI checks for no updates; nothing else of npm's may ask either.
        NO_UPDATE_NOTIFIER: '1',
        npm_config_update_notifier: 'false',
        npm_config_offline: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the Inspector CLI took over ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      const net = existsSync(record)
        ? readFileSync(record, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))
        : [];
      resolve({ status, stdout, stderr, net });
    });
  });
}

/** Every connection and fetch went to the relay (and some did). */
function assertOnlyRelay(net) {
  assert.ok(net.some((n) => n.kind === 'fetch'), `the CLI fetched nothing: ${JSON.stringify(net)}`);
  for (const n of net) {
    if (n.kind === 'connect') {
      assert.ok(!n.path, `a local socket: ${JSON.stringify(n)}`);
      assert.deepEqual([n.host, n.port], [relay.hostname, Number(relay.port)], `a connection beyond the relay: ${JSON.stringify(n)}`);
    } else {
      assert.equal(new URL(n.url).origin, relay.origin, `a fetch beyond the relay: ${JSON.stringify(n)}`);
    }
  }
}

/** The CLI's JSON output (it prints the result, pretty-printed, on stdout). */
function resultOf(run) {
  assert.equal(run.status, 0, `the CLI exited ${run.status}; stderr:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

test('the Inspector CLI lists the relay’s tools with a bearer header', async () => {
  const run = await inspector(token, ['--method', 'tools/list']);
  const { tools } = resultOf(run);
  assert.deepEqual(tools.map((t) => t.name), [...catalogue.tools.map((t) => t.name), 'status'].sort(), 'the bundled tools and status, by name');
  assert.equal(tools.find((t) => t.name === 'items_delete').annotations.destructiveHint, true);
  assertOnlyRelay(run.net);
  // initialize, notifications/initialized and tools/list were answered; the GET for a standalone
  // stream is refused with 405 (the relay offers none), which the SDK expects.
  const fetches = run.net.filter((n) => n.kind === 'fetch');
  assert.ok(fetches.filter((n) => n.method === 'POST').every((n) => n.status === 200 || n.status === 202), JSON.stringify(fetches));
  assert.ok(fetches.filter((n) => n.method === 'GET').every((n) => n.status === 405), JSON.stringify(fetches));
});

test('the Inspector CLI calls a tool with arguments and the tab answers', async () => {
  const before = tab.calls.length;
  const run = await inspector(token, ['--method', 'tools/call', '--tool-name', 'items_values', '--tool-arg', 'ids=[2,3]', 'columns=["score"]']);
  const result = resultOf(run);
  assert.equal(result.isError, false);
  const data = dataOfText(result.content[0].text);
  const expected = [2, 3].map((id) => {
    const item = tab.app.dataset.items.find((i) => i.id === id);
    return { id, score: item.score };
  });
  assert.deepEqual(data.items.map(({ id, score }) => ({ id, score })), expected, 'the values are the tab’s own');

  // The call reached the tab with the arguments as typed on the command line.
  assert.equal(tab.calls.length, before + 1);
  const call = tab.calls.at(-1);
  assert.equal(call.tool, 'items_values');
  assert.deepEqual(call.args, { ids: [2, 3], columns: ['score'] });
  assertOnlyRelay(run.net);
});

test('with a bad token the Inspector CLI exits non-zero on the relay’s 401', async () => {
  const before = tab.calls.length;
  const run = await inspector(`${token}x`, ['--method', 'tools/call', '--tool-name', 'dataset_describe']);
  assert.notEqual(run.status, 0, `the CLI succeeded: ${run.stdout}`);
  assert.equal(run.stdout.trim(), '', 'no result printed');
  assert.match(run.stderr, /Failed to connect to MCP server/);
  assert.match(run.stderr, /invalid_token/, run.stderr);
  // The CLI prints the relay's body, not the status: the recorder saw the 401 and its challenge.
  const refused = run.net.find((n) => n.kind === 'fetch' && n.method === 'POST');
  assert.equal(refused?.status, 401, JSON.stringify(run.net));
  assert.match(refused.wwwAuthenticate, /^Bearer .*error="invalid_token"/);
  assert.match(refused.wwwAuthenticate, new RegExp(`resource_metadata="${RELAY}/\\.well-known/oauth-protected-resource"`));
  assertOnlyRelay(run.net);
  assert.equal(tab.calls.length, before, 'nothing reached the tab');
});
