// The benchmark's measuring half; scripts/bench starts the relay and runs it.
//   node scripts/bench.mjs [--calls 400] [--concurrency 64] [--burst 1000]
// The machines are shared and noisy, so the relay's cost is reported as a difference against
// a plain route (/health) measured in the same run, interleaved with the calls.
import { execFileSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTab, accessToken, RELAY } from '../tests/e2e/harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const CALLS = arg('calls', 400);
const CONCURRENCY = arg('concurrency', 64);
const BURST = arg('burst', 1000);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const ms = (x) => `${x.toFixed(2)} ms`;

const tab = await openTab({ seed: 1 });
const token = await accessToken(tab);
const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: { last: 1 } } });
const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const JSON_ONLY = 'application/json';
const SSE = 'application/json, text/event-stream';
const mcp = (body, accept = JSON_ONLY) => ({ method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept }, body });
const resultOf = (text) => JSON.parse(text.startsWith('event:') ? text.split('\ndata: ')[1].split('\n')[0] : text).result;

async function timed(url, init) {
  const t = performance.now();
  const r = await fetch(url, init);
  const text = await r.text();
  const dt = performance.now() - t;
  if (r.status !== 200) throw new Error(`${r.status}: ${text.slice(0, 200)}`);
  if (init && init.body === call && resultOf(text).isError) throw new Error(`call failed: ${text.slice(0, 200)}`);
  return dt;
}

for (let i = 0; i < 50; i++) {
  await timed(`${RELAY}/health`);
  await timed(`${RELAY}/`, mcp(call));
}
const health = [];
const calls = [];
const streamed = [];
const lists = [];
for (let i = 0; i < CALLS; i++) {
  health.push(await timed(`${RELAY}/health`));
  lists.push(await timed(`${RELAY}/`, mcp(list)));
  calls.push(await timed(`${RELAY}/`, mcp(call)));
  streamed.push(await timed(`${RELAY}/`, mcp(call, SSE)));
}

async function throughput(make) {
  let next = 0;
  const t = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < BURST) await make();
  }));
  return BURST / ((performance.now() - t) / 1000);
}
const healthRate = await throughput(() => timed(`${RELAY}/health`));
const callRate = await throughput(() => timed(`${RELAY}/`, mcp(call)));
const streamRate = await throughput(() => timed(`${RELAY}/`, mcp(call, SSE)));
tab.close();

const wasm = readFileSync('build/index_bg.wasm');
const out = mkdtempSync(join(tmpdir(), 'tabrelay-dry-'));
let upload = 'n/a';
try {
  const text = execFileSync('wrangler', ['deploy', '--dry-run', '--outdir', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  upload = /Total Upload: ([^\n]+)/.exec(text)?.[1] ?? 'n/a';
} catch (e) {
  upload = `dry run failed: ${String(e.stderr || e).split('\n')[0]}`;
} finally {
  rmSync(out, { recursive: true, force: true });
}

const rows = [
  ['GET /health (plain route)', pct(health, 50), pct(health, 99)],
  ['POST / tools/list (token check)', pct(lists, 50), pct(lists, 99)],
  ['POST / tools/call through the tab', pct(calls, 50), pct(calls, 99)],
  ['  the same, answered as SSE', pct(streamed, 50), pct(streamed, 99)],
];
console.log(`\nTabrelay benchmark: ${CALLS} interleaved requests each, on ${RELAY} (wrangler dev)\n`);
for (const [name, p50, p99] of rows) console.log(`${name.padEnd(36)} p50 ${ms(p50).padStart(10)}   p99 ${ms(p99).padStart(10)}`);
console.log(`${'tools/call minus /health'.padEnd(36)} p50 ${ms(pct(calls, 50) - pct(health, 50)).padStart(10)}   p99 ${ms(pct(calls, 99) - pct(health, 99)).padStart(10)}`);
console.log(`${'SSE tools/call minus /health'.padEnd(36)} p50 ${ms(pct(streamed, 50) - pct(health, 50)).padStart(10)}   p99 ${ms(pct(streamed, 99) - pct(health, 99)).padStart(10)}`);
console.log(`\nthroughput at ${CONCURRENCY}-way (${BURST} requests): /health ${healthRate.toFixed(0)}/s, tools/call ${callRate.toFixed(0)}/s (${((100 * callRate) / healthRate).toFixed(0)} % of /health), as SSE ${streamRate.toFixed(0)}/s`);
console.log(`wasm: ${(wasm.length / 1024).toFixed(1)} KiB raw, ${(gzipSync(wasm, { level: 9 }).length / 1024).toFixed(1)} KiB gzip; wrangler upload: ${upload}`);
