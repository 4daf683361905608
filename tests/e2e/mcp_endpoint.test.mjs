// The MCP endpoint answers bad input with the JSON-RPC error a client understands, and a call
// it cannot carry with a sentence, never a hang.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost } from './harness.mjs';

let tab;
let token;
before(async () => {
  tab = await openTab();
  token = await accessToken(tab);
});
after(() => tab.close());

test('initialize negotiates the revision and notifications get 202', async () => {
  for (const [asked, got] of [['2025-06-18', '2025-06-18'], ['2025-11-25', '2025-11-25'], ['2024-01-01', '2025-11-25']]) {
    const r = await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
    assert.equal(r.body.result.protocolVersion, got);
  }
  const n = await mcpPost(token, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(n.status, 202);
  assert.equal(n.body, '');
});

test('malformed JSON, batches, unknown methods and bad params get their codes', async () => {
  const parse = await mcpPost(token, '{"jsonrpc":');
  assert.equal(parse.status, 400);
  assert.equal(parse.body.error.code, -32700);
  const batch = await mcpPost(token, [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(batch.status, 400);
  assert.equal(batch.body.error.code, -32600);
  const unknown = await mcpPost(token, { jsonrpc: '2.0', id: 9, method: 'tools/destroy' });
  assert.equal(unknown.body.error.code, -32601);
  assert.equal(unknown.body.id, 9);
  const noName = await mcpPost(token, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: {} });
  assert.equal(noName.body.error.code, -32602);
  const noTool = await mcpPost(token, { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'format_disk' } });
  assert.equal(noTool.body.error.code, -32602);
  const version = await mcpPost(token, { jsonrpc: '2.0', id: 12, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' });
  assert.equal(version.status, 400);
  assert.ok(version.body.error.data.supported.includes('2025-11-25'));
});
