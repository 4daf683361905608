// The local way in's cost: a tools/call through tabrelay-local (stdin line → Exchange → the
// pairing's Object → the tab's loopback socket → the tab's answer → stdout line) against the
// bare floor of the same machine (local/examples/bare_echo.rs: stdin line → one WebSocket → the
// tab's echo → stdout line), each with the same tab end in Node (the real RelayClient; its
// handler answers at once). Sequential calls, p50 and p90 of the round trip as the agent app's
// side sees it.
//   cargo build --release -p tabrelay-local --example bare_echo && node bench/local.mjs [N]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';
import { openTab, waitFor } from '../tests/e2e/harness.mjs';

const N = Number(process.argv[2] || 300);
const ROOT = new URL('../', import.meta.url).pathname;
const ORIGIN = 'http://bench.local';
const stats = (ms) => {
  const s = [...ms].sort((a, b) => a - b);
  return { p50: s[Math.floor(s.length / 2)].toFixed(3), p90: s[Math.floor(s.length * 0.9)].toFixed(3) };
};

/** A child speaking lines: `ask(line)` resolves with the next line that `pick` takes. */
function lines(child) {
  const waiting = [];
  const heard = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    heard.push(line);
    for (const w of [...waiting]) if (w.pick(line)) waiting.splice(waiting.indexOf(w), 1) && w.resolve(line);
  });
  return {
    heard,
    ask: (line, pick = () => true) =>
      new Promise((resolve) => {
        waiting.push({ pick, resolve });
        child.stdin.write(line + '\n');
      }),
  };
}

const listening = (child) => new Promise((resolve) => child.stderr.on('data', (d) => String(d).includes('ws://') && resolve(/ws:\/\/127\.0\.0\.1:(\d+)/.exec(String(d))[1])));

async function bare() {
  const child = spawn(`${ROOT}target/release/examples/bare_echo`, ['0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const port = await listening(child);
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  ws.on('message', (m) => ws.send(String(m)));
  await new Promise((r) => ws.on('open', r));
  const io = lines(child);
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dataset_describe', arguments: {} } });
  const ms = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await io.ask(call);
    ms.push(performance.now() - t0);
  }
  ws.close();
  child.kill();
  return ms;
}

async function local() {
  const child = spawn(`${ROOT}target/release/tabrelay-local`, ['--app-origin', ORIGIN, '--port', '0', '--state', 'none'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const port = await listening(child);
  const io = lines(child);
  const byId = (id) => (line) => JSON.parse(line).id === id;
  await io.ask(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }), byId(1));
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const said = await io.ask(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'status', arguments: {} } }), byId(2));
  const code = /connect code ([0-9A-Z]{5}-[0-9A-Z]{5})/.exec(said)[1];
  const tab = await openTab({ relay: `http://127.0.0.1:${port}`, origin: ORIGIN, run: () => ({ data: { ok: true } }) });
  await tab.client.approve(code);
  await waitFor(() => io.heard.some((l) => l.includes('list_changed')));
  const ms = [];
  for (let i = 0; i < N; i++) {
    const id = 100 + i;
    const call = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'dataset_describe', arguments: {} } });
    const t0 = performance.now();
    const answer = await io.ask(call, byId(id));
    ms.push(performance.now() - t0);
    if (i === 0 && (JSON.parse(answer).result?.isError || !answer.includes("ok"))) throw new Error(answer);
    if (i === 0) console.error(`first answer: ${answer.slice(0, 200)}`);
  }
  tab.close();
  child.kill();
  return ms;
}

const floor = await bare();
const through = await local();
console.log(`tools/call, ${N} sequential, ms: tabrelay-local ${JSON.stringify(stats(through))}; bare stdio→WebSocket→tab echo ${JSON.stringify(stats(floor))}`);
process.exit(0);
