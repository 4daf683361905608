// The tool list is the focused tab's: focus moving to a tab with another list changes it, and
// the focused tab going away hands the list to the tab focused before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, MemoryStorage, toolNames, toolDef, waitFor } from './harness.mjs';

test('the list follows the focused tab', async () => {
  const storage = new MemoryStorage();
  const a = await openTab({ storage, tools: [toolDef('from_a'), toolDef('shared')] });
  const b = await openTab({ storage, tools: [toolDef('from_b'), toolDef('shared', 'asks')] });
  const token = await accessToken(a);
  const listed = (name) => waitFor(async () => {
    const names = await toolNames(token);
    return names.includes(name) && names;
  });
  assert.deepEqual(await listed('from_b'), ['from_b', 'shared', 'status'], 'the newest tab, neither focused since');
  a.client.setFocused(true);
  assert.deepEqual(await listed('from_a'), ['from_a', 'shared', 'status']);
  b.client.setFocused(true);
  assert.deepEqual(await listed('from_b'), ['from_b', 'shared', 'status']);
  b.close();
  assert.deepEqual(await listed('from_a'), ['from_a', 'shared', 'status'], 'the other tab’s list once the focused one went away');
  a.close();
});
