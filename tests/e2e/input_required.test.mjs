// A tab that needs the agent app's input (2026-07-28 multi-round-trip requests): the relay
// passes on what the client can answer with a sealed requestState, the retried call reaches the
// tab with the client's responses and the tab's own state, once; a forged or replayed state
// never reaches the tab;
// a client that declared nothing is told which capability is missing; a session-era client
// gets a sentence instead.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost, toolDef, waitFor } from './harness.mjs';

let tab;
let token;
const seen = [];
before(async () => {
  tab = await openTab({
    tools: [toolDef('ask_name')],
    run: (call) => {
      seen.push(call);
      const name = call.input?.responses?.who?.content?.name;
      if (name && call.input?.state?.round === 1) return { data: { greeting: `Hello, ${name}` } };
      return { inputRequired: { who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } } } }, state: { round: 1 } };
    },
  });
  token = await accessToken(tab);
  await waitFor(async () => (await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools.some((t) => t.name === 'ask_name'));
});
after(() => tab.close());

const modern = (id, params, capabilities = { elicitation: {} }) =>
  mcpPost(
    token,
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ask_name', arguments: { n: 1 }, ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities } } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask_name' },
  );

test('the request goes to the client and the retry back to the tab with its state', async () => {
  const first = await modern(1, {});
  assert.equal(first.status, 200);
  const r = first.body.result;
  assert.equal(r.resultType, 'input_required');
  assert.equal(r.inputRequests.who.method, 'elicitation/create');
  assert.ok(typeof r.requestState === 'string' && !r.requestState.includes('round'), 'the state is sealed, not the tab’s JSON');
  const second = await modern(2, { inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } }, requestState: r.requestState });
  assert.equal(second.body.result.resultType, 'complete');
  assert.match(second.body.result.content[0].text, /Hello, Ada/);
  assert.deepEqual(seen.at(-1).input, { responses: { who: { action: 'accept', content: { name: 'Ada' } } }, state: { round: 1 } });
  // A state comes back once: the same retry again is refused and never reaches the tab.
  const asked = seen.length;
  const again = await modern(8, { inputResponses: { who: { action: 'accept', content: { name: 'Ada' } } }, requestState: r.requestState });
  assert.equal(again.body.error.code, -32602);
  assert.match(again.body.error.message, /already used/);
  assert.equal(seen.length, asked);
});

test('a forged, altered or foreign state never reaches the tab', async () => {
  const { requestState } = (await modern(3, {})).body.result;
  const before = seen.length;
  const altered = requestState.slice(0, 10) + (requestState[10] === 'A' ? 'B' : 'A') + requestState.slice(11);
  for (const state of [altered, 'forged.state', requestState + 'x']) {
    const r = await modern(4, { inputResponses: { who: {} }, requestState: state });
    assert.equal(r.body.error.code, -32602, state);
  }
  // The same state for other arguments is another call.
  const other = await mcpPost(
    token,
    { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'ask_name', arguments: { n: 2 }, inputResponses: { who: {} }, requestState, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } },
    { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'ask_name' },
  );
  assert.equal(other.body.error.code, -32602);
  assert.equal(seen.length, before, 'the tab was not asked');
});

test('a client without the capability is told which one; a session-era client gets a sentence', async () => {
  const r = await modern(6, {}, {});
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, -32021);
  assert.deepEqual(r.body.error.data.requiredCapabilities, { elicitation: {} });
  const old = await mcpPost(token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask_name', arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(old.body.result.isError, true);
  assert.match(old.body.result.content[0].text, /cannot give/);
});
