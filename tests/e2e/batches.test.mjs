// Batches: 2025-03-26 (the header absent or naming it) takes several JSON-RPC messages in one
// POST and answers them together, a tool call among them answered by the tab; every later
// revision takes one message a request and says so.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost, dataOf } from './harness.mjs';

let tab;
let token;
before(async () => {
  tab = await openTab({ seed: 71 });
  token = await accessToken(tab);
});
after(() => tab.close());

test('a 2025-03-26 batch is answered together, its call by the tab, its notification not at all', async () => {
  const r = await mcpPost(
    token,
    [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'dataset_describe', arguments: {} } },
      { jsonrpc: '2.0', id: 'c', method: 'no/such' },
    ],
    { 'mcp-protocol-version': '2025-03-26' },
  );
  assert.equal(r.status, 200);
  assert.ok(Array.isArray(r.body), JSON.stringify(r.body));
  assert.deepEqual(r.body.map((m) => m.id), ['a', 'b', 'c']);
  assert.deepEqual(r.body[0].result, {});
  assert.equal(dataOf(r.body[1].result).name, tab.app.dataset.name, 'the tab’s own dataset');
  assert.equal(r.body[2].error.code, -32601);
  assert.equal(tab.calls.length, 1);
});

test('a batch of notifications gets 202; an empty or oversized batch is refused', async () => {
  const n = await mcpPost(token, [{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
  assert.equal(n.status, 202);
  const empty = await mcpPost(token, []);
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.code, -32600);
  const many = await mcpPost(token, Array.from({ length: 17 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
  assert.equal(many.status, 400);
  assert.match(many.body.error.message, /1 to 16/);
});

test('later revisions take one message a request and say so', async () => {
  for (const v of ['2025-06-18', '2025-11-25', '2026-07-28']) {
    const r = await mcpPost(token, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': v });
    assert.equal(r.status, 400, v);
    assert.equal(r.body.error.code, -32600);
    assert.match(r.body.error.message, /one JSON-RPC message per request/);
  }
});
