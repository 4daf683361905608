// Load (not timed): 2,000 calls from 64 concurrent clients across 50 pairings with two tabs
// and three connections each (calls spread over the connections), focus moving meanwhile; every
// answer reaches exactly its own caller and none is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, dataOf } from './harness.mjs';
import { createDemoApp } from '../../tab/demo/app.js';

const PAIRINGS = 50;
const CALLS = 2000;
const CLIENTS = 64;
const CONNECTIONS = 3;

test('2,000 calls, 64 clients, 50 pairings × 2 tabs × 3 connections: every answer to its own caller', { timeout: 600_000 }, async () => {
  const started = Date.now();
  const pairings = [];
  for (let p = 0; p < PAIRINGS; p++) {
    const storage = new MemoryStorage();
    const seed = 1000 + p; // each pairing's data differs, so a misrouted answer shows
    const tabs = [await openTab({ storage, seed }), await openTab({ storage, seed })];
    const tokens = [];
    for (let c = 0; c < CONNECTIONS; c++) tokens.push(await accessToken(tabs[c % 2]));
    pairings.push({ seed, tabs, tokens, expected: createDemoApp({ seed }) });
  }
  const setUp = Date.now() - started;
  let next = 0;
  let answered = 0;
  const wrong = [];
  const focusMover = setInterval(() => {
    const p = pairings[Math.floor(Math.random() * PAIRINGS)];
    p.tabs[Math.floor(Math.random() * 2)].client.setFocused(true);
  }, 5);
  const clients = Array.from({ length: CLIENTS }, async () => {
    for (;;) {
      const n = next++;
      if (n >= CALLS) return;
      const p = pairings[n % PAIRINGS];
      const id = 1 + ((n * 7919) % 280);
      // Consecutive calls to a pairing come from its connections in turn, with the same JSON-RPC
      // ids on each connection at once: an answer routed by id alone would reach the wrong one.
      const token = p.tokens[Math.floor(n / PAIRINGS) % CONNECTIONS];
      const result = await callTool(token, 'items_values', { ids: [id], columns: ['x', 'score'] }, Math.floor(n / (PAIRINGS * CONNECTIONS)));
      const item = result.isError ? null : dataOf(result).items[0];
      const want = p.expected.dataset.items.find((i) => i.id === id);
      if (!item || item.id !== id || item.x !== want.x || item.score !== want.score) wrong.push({ n, result });
      answered++;
    }
  });
  await Promise.all(clients);
  clearInterval(focusMover);
  const elapsed = Date.now() - started - setUp;
  const received = pairings.reduce((sum, p) => sum + p.tabs[0].calls.length + p.tabs[1].calls.length, 0);
  pairings.forEach((p) => p.tabs.forEach((t) => t.close()));
  console.log(`# load: ${answered} answered, ${received} received by tabs, ${wrong.length} wrong; set-up ${setUp} ms, calls ${elapsed} ms (${((CALLS * 1000) / elapsed).toFixed(0)} calls/s)`);
  assert.equal(wrong.length, 0, JSON.stringify(wrong.slice(0, 3)));
  assert.equal(answered, CALLS);
  assert.equal(received, CALLS, 'each call reached exactly one tab once');
});
