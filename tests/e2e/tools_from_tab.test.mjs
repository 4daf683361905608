// A tab states its own tool list: agents see it in name order with `status`, each tool's
// setting said in its description and _meta, refused tools left out; calls reach the tab's own
// tools, a name not in its list is a -32602 error, and a refused tool called anyway is refused
// by the tab with one sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_REFUSED } from '../../tab/generated/bundle.js';
import { openTab, accessToken, callTool, mcpPost, listTools, toolDef, waitFor, dataOf } from './harness.mjs';

const TOOLS = [
  toolDef('test_simple_text', 'runs', { title: 'Simple text' }),
  toolDef('test_image_content', 'asks', { _meta: { 'app.example/kind': 'image' }, annotations: { readOnlyHint: true } }),
  toolDef('alpha.tool', 'runs', { outputSchema: { type: 'object', properties: { n: { type: 'number' } } } }),
  toolDef('zz-refused', 'refused'),
];

test('a tab’s own tools show in name order with their settings, refused ones left out', async () => {
  const tab = await openTab({ tools: TOOLS, run: (call) => ({ data: { tool: call.tool, args: call.args } }) });
  const token = await accessToken(tab);
  const tools = await waitFor(async () => {
    const t = await listTools(token);
    return t.some((x) => x.name === 'test_simple_text') && t;
  });
  assert.deepEqual(tools.map((t) => t.name), ['alpha.tool', 'status', 'test_image_content', 'test_simple_text']);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.match(byName.test_simple_text.description, /^The test_simple_text tool\. The person's settings: calls run in their tab without asking\.$/);
  assert.equal(byName.test_simple_text._meta['tabrelay/setting'], 'runs');
  assert.equal(byName.test_simple_text.title, 'Simple text');
  assert.match(byName.test_image_content.description, /each call asks them in their tab first/);
  assert.deepEqual(byName.test_image_content._meta, { 'app.example/kind': 'image', 'tabrelay/setting': 'asks' });
  assert.deepEqual(byName.test_image_content.annotations, { readOnlyHint: true });
  assert.equal(byName['alpha.tool'].outputSchema.type, 'object');
  assert.equal(byName.status.annotations.readOnlyHint, true);
  assert.equal(byName['zz-refused'], undefined, 'a refused tool is not offered');
  assert.equal(byName.items_delete, undefined, 'the tab’s list replaces the bundled one');

  const r = await callTool(token, 'test_simple_text', { x: 1 });
  assert.equal(r.isError, false);
  assert.deepEqual(dataOf(r), { tool: 'test_simple_text', args: { x: 1 } });

  const unknown = await mcpPost(token, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'items_delete', arguments: {} } });
  assert.equal(unknown.body.error.code, -32602, 'a tool not in the focused tab’s list');
  assert.match(unknown.body.error.message, /no tool named "items_delete"/);

  const refused = await callTool(token, 'zz-refused');
  assert.equal(refused.isError, true);
  assert.equal(refused.content[0].text, TOOL_REFUSED);
  assert.equal(tab.calls.some((c) => c.tool === 'zz-refused'), false, 'the app’s handler never ran it');
  tab.close();
});

test('a tab restating its list (settings changed) is what the next tools/list shows', async () => {
  const tab = await openTab({ tools: TOOLS, run: () => ({ data: 1 }) });
  const token = await accessToken(tab);
  await waitFor(async () => (await listTools(token)).some((t) => t.name === 'test_simple_text'));
  tab.client.setTools([toolDef('test_simple_text', 'refused'), toolDef('beta', 'asks')]);
  const names = await waitFor(async () => {
    const n = (await listTools(token)).map((t) => t.name);
    return n.includes('beta') && n;
  });
  assert.deepEqual(names, ['beta', 'status']);
  tab.close();
});
