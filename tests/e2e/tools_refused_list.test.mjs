// A tab's bad tool list is refused with a sentence saying what is wrong, and the list before it
// stays: bad names, the relay's own name, duplicates, a bad schema or setting, too many tools,
// too many bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TOOLS, MAX_TOOL_LIST_BYTES } from '../../tab/generated/bundle.js';
import { openTab, accessToken, toolNames, toolDef, waitFor } from './harness.mjs';

test('bad lists are refused and the previous list stays', async () => {
  const tab = await openTab({ tools: [toolDef('good_tool')] });
  const token = await accessToken(tab);
  await waitFor(async () => (await toolNames(token)).includes('good_tool'));
  const bad = [
    [[toolDef('has space')], /tool 1 has no valid name/],
    [[toolDef('ok'), toolDef('x'.repeat(65))], /tool 2 has no valid name/],
    [[toolDef('status')], /the name status is the relay's own tool/],
    [[toolDef('twin'), toolDef('twin')], /two tools are named twin/],
    [[toolDef('s', 'runs', { inputSchema: { type: 'string' } })], /inputSchema of tool s must be a JSON Schema object/],
    [[toolDef('s', 'maybe')], /tool s needs a setting of asks, runs or refused/],
    [Array.from({ length: MAX_TOOLS + 1 }, (_, i) => toolDef(`t${i}`)), new RegExp(`${MAX_TOOLS + 1} tools, over the ${MAX_TOOLS} allowed`)],
    [Array.from({ length: 20 }, (_, i) => toolDef(`t${i}`, 'runs', { _meta: { pad: 'p'.repeat(MAX_TOOL_LIST_BYTES / 20) } })), /bytes as JSON, over the/],
  ];
  for (const [tools, said] of bad) {
    const before = tab.refusedLists.length;
    tab.client.setTools(tools);
    await waitFor(() => tab.refusedLists.length > before, 5000);
    assert.match(tab.refusedLists.at(-1), said);
    assert.match(tab.refusedLists.at(-1), /^The tool list was refused/);
    assert.equal(tab.client.toolsRefused, tab.refusedLists.at(-1));
  }
  assert.deepEqual(await toolNames(token), ['good_tool', 'status'], 'the list before the bad ones stays');
  assert.equal(tab.client.status, 'connected', 'the tab stays connected');
  tab.client.setTools([toolDef('better_tool')]);
  await waitFor(async () => (await toolNames(token)).includes('better_tool'));
  tab.close();
});
