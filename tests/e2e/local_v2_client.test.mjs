// The MCP TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0) over stdio, in the
// 2026-07-28 stateless revision: it starts tabrelay-local, discovers it (server/discover, no
// initialize), reads the connect code from the status tool, and once a tab (the relay client in
// Node, on the local server's loopback socket) approved it lists the tab's tools and calls one,
// every answer in that revision (resultType).
import test from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { openTab, dataOf, APP_ORIGIN } from './harness.mjs';
import { LOCAL_BIN, LOCAL_URL, localArgs, codeIn, freshState } from './local_harness.mjs';

const textOf = (result) => result.content.map((c) => c.text || '').join('\n');

test('the SDK v2 client over stdio speaks 2026-07-28 with tabrelay-local and calls the tab once approved', async (t) => {
  const client = new Client({ name: 'SDK v2 local', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  const env = { ...getDefaultEnvironment(), TABRELAY_LOCAL_STATE: freshState() };
  await client.connect(new StdioClientTransport({ command: LOCAL_BIN, args: localArgs(), env, stderr: 'pipe' }));
  t.after(() => client.close());
  assert.deepEqual({ era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() }, { era: 'modern', version: '2026-07-28' });
  const said = await client.callTool({ name: 'status', arguments: {} });
  const code = codeIn(textOf(said));

  const tab = await openTab({ relay: LOCAL_URL, origin: APP_ORIGIN, seed: 64 });
  t.after(() => tab.close());
  assert.equal(tab.connected.status, 'connected');
  await tab.client.approve(code);

  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'dataset_describe'));
  const result = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(result.isError, false, textOf(result));
  assert.equal(dataOf(result).name, tab.app.dataset.name, 'the answer is the tab’s own dataset');
  assert.equal(tab.calls.at(-1).agent, 'SDK v2 local (local)');
});
