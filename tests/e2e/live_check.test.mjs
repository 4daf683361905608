// The live check (scripts/live-check, the live-check/ crate) against this relay and the demo
// app: every check passes; it prints none of the secrets it handled (its traffic and its
// browser's go through a recording proxy here, so the test knows each token, code and key);
// it leaves nothing behind (every token it was given is dead afterwards, its browser and
// profile are gone), also when Ctrl-C stops it; and against a relay with broken pieces, or a
// tab that refuses a tool, the checks of those pieces FAIL with readable lines while the
// others pass.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELAY, APP_ORIGIN, postForm, mcpPost } from './harness.mjs';
import { TOOL_REFUSED, CATALOGUE } from '../../tab/generated/bundle.js';
import { PERMISSIONS_KEY } from '../../tab/presence.js';

const BINARY = new URL('../../target/debug/tabrelay-live-check', import.meta.url).pathname;
// The runs' temporary directory (TMPDIR), this file's own: what is left there, and which
// browser runs with its profile there, is these runs' alone, not another run's on the machine.
const TMP = mkdtempSync(join(tmpdir(), 'tabrelay-test-live-check-'));
after(() => rmSync(TMP, { recursive: true, force: true }));
const APP = `${APP_ORIGIN}/demo/`;
const CHECKS = ['health', 'discovery', 'registration', 'tab', 'consent-typed', 'token', 'tools-list', 'call-read', 'call-change', 'call-picture', 'status-tool', 'view-card', 'revision-2026', 'consent-link', 'tab-gone', 'idle-pairing', 'rotation', 'forget'];

/**
 * A forward proxy (plain HTTP and CONNECT tunnels) between the live check and its browser on
 * one side and the relay and the app on the other, keeping the text of every exchange.
 * `breaks` (path → answer) answers some of the live check's requests itself.
 */
async function recordingProxy(breaks = {}, rewrites = {}) {
  const traffic = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url);
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      traffic.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`);
      const broken = breaks[url.pathname]?.(req, body);
      if (broken) {
        res.writeHead(broken.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(broken.body));
        return;
      }
      const out = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: req.method, headers: req.headers }, (up) => {
        const back = [];
        up.on('data', (c) => back.push(c));
        up.on('end', () => {
          let text = Buffer.concat(back);
          traffic.push(`${JSON.stringify(up.headers)}\n${text}`);
          const headers = { ...up.headers };
          if (rewrites[url.pathname]) {
            text = Buffer.from(rewrites[url.pathname](String(text)));
            delete headers['content-length'];
            delete headers.etag;
          }
          res.writeHead(up.statusCode, headers);
          res.end(text);
        });
      });
      out.on('error', () => res.destroy());
      out.end(body);
    });
  });
  // The tab's WebSocket goes through a tunnel (its bytes are recorded too).
  server.on('connect', (req, socket, head) => {
    const [host, port] = req.url.split(':');
    const up = net.connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      socket.pipe(up);
      up.pipe(socket);
    });
    up.on('data', (c) => traffic.push(c.toString('latin1')));
    socket.on('data', (c) => traffic.push(c.toString('latin1')));
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, traffic, close: () => server.close() };
}

/** Every secret in the recorded traffic: tokens, codes, verifiers, connect codes and links. */
function secretsIn(traffic) {
  const text = traffic.join('\n');
  const found = new Set();
  const add = (re) => {
    for (const m of text.matchAll(re)) {
      if (!m[1] || m[1].length < 8) continue;
      found.add(m[1]);
      try {
        found.add(decodeURIComponent(m[1]));
      } catch {
        // not percent-encoded: kept as it is
      }
    }
  };
  add(/"(?:access_token|refresh_token)":"([^"]+)"/g); // token answers
  add(/"code":"([^"]+)"/g); // the waiting page's connect code
  add(/"link":"[^"]*#tabrelay-connect=([^"]+)"/g);
  add(/[?&#](?:code|code_verifier|refresh_token|token)=([^&\s"]+)/g); // forms, redirects
  add(/[Bb]earer ([A-Za-z0-9._~+/=-]+)/g); // authorization headers
  add(/"key":"([A-Za-z0-9_-]{40,})"/g); // the tab's public key, in its hello
  return found;
}

/** The client ids the run used (as its registration was answered) and its refresh tokens. */
function clientsAndRefreshTokensIn(traffic) {
  const text = traffic.join('\n');
  const clients = new Set([...text.matchAll(/"client_id":"([^"]+)"/g)].map((m) => m[1]));
  const refreshTokens = new Set([...text.matchAll(/"refresh_token":"([^"]+)"/g)].map((m) => m[1]));
  return { clients, refreshTokens };
}

/** Runs the live check with its traffic through `proxy`; its exit status and whole output. */
function liveCheck(proxy, args = [], { interruptAfter } = {}) {
  return new Promise((resolve) => {
    const child = spawn(BINARY, ['--relay', RELAY, '--app', APP, ...args], { env: { ...process.env, TMPDIR: TMP, TABRELAY_LIVE_CHECK_PROXY: proxy.url } });
    let output = '';
    let sent = false;
    const take = (c) => {
      output += c;
      if (interruptAfter && !sent && interruptAfter.test(output)) {
        sent = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The checks' results as the --json lines say them. */
function resultsOf(output) {
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  return { checks: Object.fromEntries(lines.filter((l) => l.check).map((l) => [l.check, l])), summary: lines.find((l) => l.summary) };
}

/**
 * Asserts nothing of the run is left: its tokens dead, its browser and profile gone. A refresh
 * token is tried with the run's own client id, so the relay reads the token and refuses it
 * for what it is (invalid_grant), not the request for lacking a client (invalid_request).
 */
async function assertNothingLeft(secrets, traffic) {
  const tokens = [...secrets].filter((s) => s.includes('.'));
  assert.ok(tokens.length >= 2, 'the run was given tokens');
  for (const t of tokens) {
    assert.notEqual((await mcpPost(t, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status, 200, 'no token of the run still works');
  }
  const { clients, refreshTokens } = clientsAndRefreshTokensIn(traffic);
  assert.ok(clients.size >= 1 && refreshTokens.size >= 2, `the run registered a client (${clients.size}) and was given refresh tokens (${refreshTokens.size})`);
  for (const refresh_token of refreshTokens) {
    for (const client_id of clients) {
      const r = await postForm('/token', { grant_type: 'refresh_token', client_id, refresh_token });
      assert.equal(r.status, 400, 'no refresh token of the run still works');
      assert.equal(r.body.error, 'invalid_grant', `refused for its token, not the request: ${r.body.error_description}`);
    }
  }
  assert.deepEqual(readdirSync(TMP).filter((d) => d.startsWith('tabrelay-live-check-')), [], 'its profile was removed');
  const processes = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  assert.ok(!processes.includes(join(TMP, 'tabrelay-live-check-')), 'its browser is gone');
}

/**
 * Watches the live check's browser while it runs (every process whose profile is the run's):
 * its command line, its profile directory's mode, and whether any of its sockets listens on a
 * TCP port (/proc/net/tcp{,6}, state 0A) that another local user could connect to.
 */
function watchBrowser() {
  const seen = { processes: new Set(), args: new Set(), modes: new Set(), listening: new Set() };
  const listeningInodes = () => {
    const inodes = new Map();
    for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
      let table = '';
      try {
        table = readFileSync(file, 'utf8');
      } catch {
        continue; // no IPv6 here, say
      }
      for (const line of table.trim().split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols[3] === '0A') inodes.set(cols[9], cols[1]);
      }
    }
    return inodes;
  };
  const look = () => {
    const listening = listeningInodes();
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const profile = args.find((a) => a.startsWith(`--user-data-dir=${join(TMP, 'tabrelay-live-check-')}`))?.slice('--user-data-dir='.length);
        if (!profile) continue;
        seen.processes.add(pid);
        for (const a of args) if (a.startsWith('--remote-debugging')) seen.args.add(a);
        seen.modes.add((statSync(profile).mode & 0o777).toString(8));
        for (const fd of readdirSync(`/proc/${pid}/fd`)) {
          const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          if (listening.has(inode)) seen.listening.add(listening.get(inode));
        }
      } catch {
        // The process or its profile went meanwhile.
      }
    }
  };
  const timer = setInterval(look, 250);
  return { stop: () => (clearInterval(timer), seen) };
}

function assertNoSecret(output, secrets) {
  assert.ok(secrets.size >= 6, `the proxy saw the run's secrets (${secrets.size})`);
  for (const s of secrets) assert.ok(!output.includes(s), 'the output holds a secret the live check handled');
  assert.doesNotMatch(output, /eyJ[A-Za-z0-9_-]{10,}/, 'no JWT-like text');
}

const proxies = [];
after(() => proxies.forEach((p) => p.close()));

test('every check passes against the relay and the demo app; no secret is printed; nothing is left', { timeout: 180_000 }, async () => {
  assert.ok(existsSync(BINARY), 'scripts/test builds the live check first (cargo build -p tabrelay-live-check)');
  const proxy = await recordingProxy();
  proxies.push(proxy);
  const watcher = watchBrowser();
  const json = await liveCheck(proxy, ['--json']);
  const browser = watcher.stop();
  const { checks, summary } = resultsOf(json.output);
  for (const name of CHECKS) assert.equal(checks[name]?.result, 'PASS', `${name}: ${checks[name]?.seen}`);
  assert.equal(summary.summary, 'PASS');
  assert.equal(json.code, 0);
  const secrets = secretsIn(proxy.traffic);
  assertNoSecret(json.output, secrets);
  await assertNothingLeft(secrets, proxy.traffic);
  // Its browser, holding the pairing key, was open to no other local user: DevTools over a
  // pipe, no TCP port listening, the profile readable by its owner only.
  assert.ok(browser.processes.size > 0, 'the browser was seen running');
  assert.deepEqual([...browser.args], ['--remote-debugging-pipe'], 'DevTools over a pipe, no port');
  assert.deepEqual([...browser.listening], [], 'the browser listens on no TCP port');
  assert.deepEqual([...browser.modes], ['700'], 'its profile is readable by its owner only');

  // The text form: one line a check with its time, the summary last.
  proxy.traffic.length = 0;
  const text = await liveCheck(proxy, ['--idle', '1']);
  assert.equal(text.code, 0, text.output);
  for (const name of CHECKS) assert.match(text.output, new RegExp(`^PASS ${name} +\\d+ ms  \\S`, 'm'));
  assert.match(text.output, /^PASS: 18 of 18 checks passed in [\d.]+ s; clean-up: .*the tab and browser closed/m);
  assertNoSecret(text.output, secretsIn(proxy.traffic));
});

test('a relay with broken pieces: those checks FAIL with what was seen, the others pass, exit 1', { timeout: 180_000 }, async () => {
  const proxy = await recordingProxy({
    '/health': () => ({ status: 503, body: { ok: false } }),
    '/.well-known/oauth-protected-resource': () => ({ status: 200, body: { resource: 'https://elsewhere.example/', authorization_servers: ['https://elsewhere.example'] } }),
    '/': (req, body) => (String(body).includes('"resources/read"') ? { status: 200, body: { jsonrpc: '2.0', id: 3, error: { code: -32002, message: 'Resource not found' } } } : null),
  });
  proxies.push(proxy);
  const run = await liveCheck(proxy, ['--json', '--idle', '1']);
  const { checks, summary } = resultsOf(run.output);
  assert.equal(run.code, 1);
  assert.equal(checks.health.result, 'FAIL');
  assert.match(checks.health.seen, /\/health answered 503/);
  assert.equal(checks.discovery.result, 'FAIL');
  assert.match(checks.discovery.seen, /the protected resource is https:\/\/elsewhere\.example\/, not http/);
  assert.equal(checks['view-card'].result, 'FAIL');
  assert.match(checks['view-card'].seen, /resources\/read ui:\/\/tabrelay\/view answered 200/);
  for (const name of CHECKS.filter((n) => !['health', 'discovery', 'view-card'].includes(n))) assert.equal(checks[name].result, 'PASS', `${name}: ${checks[name].seen}`);
  assert.deepEqual(summary.failed, ['health', 'discovery', 'view-card']);
  assert.equal(summary.summary, 'FAIL');
  const secrets = secretsIn(proxy.traffic);
  assertNoSecret(run.output, secrets);
  await assertNothingLeft(secrets, proxy.traffic);
});

test('a tab that refuses calls to the read tool: the checks that need it FAIL saying so, the others pass', { timeout: 180_000 }, async () => {
  // The person's permissions (the tab end's presence store, kept in the browser) deny
  // dataset_describe: set before the page reads them, by the page's configuration as this proxy
  // serves it.
  const proxy = await recordingProxy({}, {
    '/demo/config.js': (text) => `${text}\nlocalStorage.setItem('${PERMISSIONS_KEY}:${CATALOGUE.resource_prefix}', JSON.stringify({ tools: { dataset_describe: 'deny' } }));\n`,
  });
  proxies.push(proxy);
  const run = await liveCheck(proxy, ['--json', '--idle', '1']);
  const { checks, summary } = resultsOf(run.output);
  assert.equal(run.code, 1);
  assert.match(checks['tools-list'].seen, /missing \["dataset_describe"\]/);
  assert.ok(checks['call-read'].seen.startsWith(`dataset_describe failed: ${TOOL_REFUSED.slice(0, 40)}`), checks['call-read'].seen);
  for (const name of ['call-change', 'status-tool', 'tab-gone']) assert.match(checks[name].seen, /^not tried: needs the read, which failed$/, name);
  const failing = ['tools-list', 'call-read', 'call-change', 'status-tool', 'revision-2026', 'tab-gone', 'idle-pairing'];
  assert.deepEqual(summary.failed, failing);
  for (const name of CHECKS.filter((n) => !failing.includes(n))) assert.equal(checks[name].result, 'PASS', `${name}: ${checks[name].seen}`);
  const secrets = secretsIn(proxy.traffic);
  assertNoSecret(run.output, secrets);
  await assertNothingLeft(secrets, proxy.traffic);
});

test('Ctrl-C during the run: it stops, forgets its connections, closes its browser, exits 130', { timeout: 120_000 }, async () => {
  const proxy = await recordingProxy();
  proxies.push(proxy);
  const run = await liveCheck(proxy, ['--idle', '30'], { interruptAfter: /^PASS tab-gone/m });
  assert.equal(run.code, 130, run.output);
  assert.doesNotMatch(run.output, /^(PASS|FAIL) rotation/m, 'no check runs after Ctrl-C');
  assert.match(run.output, /^INTERRUPTED: .*clean-up: [1-9] connection\(s\) forgotten in the tab, every token revoked, the tab and browser closed/m);
  const secrets = secretsIn(proxy.traffic);
  assertNoSecret(run.output, secrets);
  await assertNothingLeft(secrets, proxy.traffic);
});
