// scripts/bench-ab's measuring half: relay A (this tree's build, started by relay-up.sh) against
// relay B (another build of it, started here on its own wrangler dev with the same settings):
// Worker CPU per call, latency over /health and 64-way throughput, each alternated A/B.
//   node scripts/bench-ab.mjs OTHER_BUILD_DIR [--rounds 6] [--calls 300]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTab, accessToken, useRelay, RELAY, APP_ORIGIN } from '../tests/e2e/harness.mjs';
import { workerdsUnder, cpuMs } from './workerd-cpu.mjs';

const other = process.argv[2];
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const ROUNDS = arg('rounds', 6);
const CALLS = arg('calls', 300);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(2)} ms`;

// Relay B: the other build, with this tree's wrangler.toml pointing at it and no build command.
const work = mkdtempSync(join(tmpdir(), 'tabrelay-ab-'));
const toml = readFileSync('wrangler.toml', 'utf8')
  .replace(/^main = .*$/m, `main = "${join(other, 'worker/shim.mjs')}"`)
  .replace(/^\[build\]\ncommand = .*$/m, '');
writeFileSync(join(work, 'wrangler.toml'), toml);
const port = 20000 + Math.floor(Math.random() * 20000);
const B = `http://127.0.0.1:${port}`;
const vars = {
  RELAY_SIGNING_KEY: randomBytes(48).toString('base64url'),
  ALLOWED_ORIGINS: APP_ORIGIN,
  APP_URL: `${APP_ORIGIN}/demo/`,
  CALL_WAIT_MS: process.env.TABRELAY_CALL_WAIT_MS || '6000',
  CLIENT_ORIGINS: 'http://localhost:6274',
};
const wrangler = spawn('wrangler', ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', join(work, 'state'),
  '--show-interactive-dev-session=false', ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}:${v}`])],
{ cwd: work, stdio: 'ignore', detached: false });
const stop = () => {
  wrangler.kill();
  rmSync(work, { recursive: true, force: true });
};
process.on('exit', stop);
for (let i = 0; ; i++) {
  if (await fetch(`${B}/health`).then((r) => r.ok, () => false)) break;
  if (i > 120) throw new Error('relay B did not start');
  await new Promise((r) => setTimeout(r, 500));
}

const A = RELAY;
const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: { last: 1 } } });
async function side(url, pid) {
  useRelay(url);
  const tab = await openTab({ seed: 1 });
  const token = await accessToken(tab);
  const init = { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' }, body: call };
  return { url, tab, init, workerd: workerdsUnder(pid, url), cpu: [], calls: [], health: [], rates: [] };
}
const a = await side(A, Number(process.env.BENCH_RELAY_WRANGLER));
const b = await side(B, wrangler.pid);
useRelay(A);

async function ok(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  if (r.status !== 200 || (init && JSON.parse(text).result?.isError)) throw new Error(`${url}: ${r.status} ${text.slice(0, 200)}`);
}
async function timed(url, init) {
  const t = performance.now();
  await ok(url, init);
  return performance.now() - t;
}
for (const s of [a, b]) for (let i = 0; i < 50; i++) await ok(`${s.url}/`, s.init);
for (let round = 0; round < ROUNDS; round++) {
  for (const s of round % 2 ? [b, a] : [a, b]) {
    const before = cpuMs(s.workerd.worker);
    for (let i = 0; i < CALLS; i++) await ok(`${s.url}/`, s.init);
    s.cpu.push((cpuMs(s.workerd.worker) - before) / CALLS);
  }
  for (const s of round % 2 ? [a, b] : [b, a]) {
    // 64-way: the pairing's Durable Object is one thread, so what each call holds it for shows.
    let next = 0;
    const t = performance.now();
    await Promise.all(Array.from({ length: 64 }, async () => {
      while (next++ < CALLS) await ok(`${s.url}/`, s.init);
    }));
    s.rates.push(CALLS / ((performance.now() - t) / 1000));
  }
  for (let i = 0; i < 50; i++) {
    for (const s of [a, b]) {
      s.health.push(await timed(`${s.url}/health`));
      s.calls.push(await timed(`${s.url}/`, s.init));
    }
  }
}
a.tab.close();
b.tab.close();
const line = (name, s) => `${name.padEnd(24)} CPU per call least ${ms(Math.min(...s.cpu))}, median ${ms(pct(s.cpu, 50))} (${s.cpu.map((x) => x.toFixed(2)).join(' ')}); p50 over /health ${ms(pct(s.calls, 50) - pct(s.health, 50))}; 64-way median ${pct(s.rates, 50).toFixed(0)}/s (${s.rates.map((x) => x.toFixed(0)).join(' ')})`;
console.log(`\n${ROUNDS} rounds of ${CALLS} tools/call, alternated; ${a.calls.length} timed calls each, interleaved`);
console.log(line('A (this tree)', a));
console.log(line(`B (${other})`, b));
// Each round's A and B ran next to each other: the median of their differences drifts least
// with the machine's load (the least and the medians are each taken over the whole run).
// So is the 64-way ratio: the median of each round's A/B (the ratio of the two medians beside it
// moves with the rounds' spread: 0.89 x where the paired median read 0.98).
const paired = pct(a.cpu.map((x, i) => x - b.cpu[i]), 50);
const pairedRate = pct(a.rates.map((x, i) => x / b.rates[i]), 50);
console.log(`A - B: CPU paired median ${ms(paired)}, least ${ms(Math.min(...a.cpu) - Math.min(...b.cpu))}, median ${ms(pct(a.cpu, 50) - pct(b.cpu, 50))}; latency p50 over /health ${ms(pct(a.calls, 50) - pct(a.health, 50) - (pct(b.calls, 50) - pct(b.health, 50)))}; 64-way A/B paired median ${pairedRate.toFixed(2)} x (of the medians ${(pct(a.rates, 50) / pct(b.rates, 50)).toFixed(2)} x)`);
process.exit(0);
