// Undo turn, in the demo page in headless Chromium with the official SDK client as the agent:
// once the agent's turn is done with steps, its activity line offers Undo turn; pressing it
// restores the dataset as it was before the turn (the agent reads the old values back) and
// the history says the turn was undone. Dismiss then takes the line away.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, activityLines, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('Undo turn restores what the agent’s turn changed', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'undo-e2e');
  const read = async () => dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [1, 2, 3] } })).items;
  const describe = async () => dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const before = await read();
  const groupsBefore = (await describe()).groups.map((g) => g.name);

  await client.callTool({ name: 'item_set_value', arguments: { id: 1, column: 'score', value: 12345 } });
  await client.callTool({ name: 'group_rename', arguments: { group: groupsBefore[0], name: 'Renamed by the agent' } });
  await client.callTool({ name: 'items_highlight', arguments: { ids: [2, 3] } });
  assert.equal((await read())[0].score, 12345);

  const undo = page.locator('#activity [part~=done] [part=undo]');
  await undo.waitFor({ timeout: SHOW_MS });
  assert.match((await activityLines(page)).join('\n'), /SDK e2e client.*done, 3 steps/);
  assert.match(await undo.getAttribute('aria-label'), /^Undo turn: SDK e2e client, turn \d+$/);
  await undo.click();

  await waitFor(async () => /Undid an agent's turn: steps \d+, \d+ and \d+/.test(await page.textContent('#history')), SHOW_MS);
  assert.deepEqual(await read(), before, 'the values are as before the turn');
  assert.deepEqual((await describe()).groups.map((g) => g.name), groupsBefore, 'the group has its old name');
  assert.equal((await describe()).highlighted, 0, 'the highlight is gone');
  assert.match((await activityLines(page)).join('\n'), /3 steps, undone/);
  assert.equal(await page.locator('#activity [part=undo]').count(), 0, 'Undo turn is offered once');

  await page.locator('#activity [part~=done]', { hasText: /3 steps, undone/ }).locator('[part=dismiss]').click();
  await waitFor(async () => (await activityLines(page)).every((l) => !/undone/.test(l)), SHOW_MS);
  await client.close();
});
