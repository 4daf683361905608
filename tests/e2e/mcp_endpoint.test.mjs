// The MCP endpoint answers bad input with the JSON-RPC error a client understands, and a call
// it cannot carry with a sentence, never a hang; a session is read in its own revision.
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

test('a session opened with initialize is read in its own revision whatever its later version header says', async () => {
  // Claude Code's shape: `initialize`, then `Mcp-Protocol-Version: 2026-07-28` and no `_meta` on
  // every request of the session. Served as the session's 2025-11-25 (no resultType).
  const init = await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2' } } });
  const session = init.headers.get('mcp-session-id');
  assert.ok(session, 'a session id');
  const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2026-07-28' };
  const list = await mcpPost(token, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...headers, 'mcp-method': 'tools/list' });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  assert.ok(list.body.result.tools.some((t) => t.name === 'status'));
  assert.equal(list.body.result.resultType, undefined);
  const call = await mcpPost(token, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'status', arguments: {} } }, headers);
  assert.equal(call.status, 200, JSON.stringify(call.body));
  assert.ok(call.body.result.content[0].text, JSON.stringify(call.body));
  assert.equal(call.body.result.resultType, undefined);
  // Without the session, the same request is a stateless one that left out its `_meta`.
  const bare = await mcpPost(token, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
  assert.equal(bare.status, 400);
  assert.equal(bare.body.error.code, -32602);
});
