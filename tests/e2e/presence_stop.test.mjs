// Stop on an agent's activity line, in the demo page in headless Chromium with the official
// SDK client as the agent: while a card of its turn waits and more calls of the turn queue
// behind it, Stop withdraws the card and refuses every one of them, none runs, the line says
// stopped, and the agent's next call (a new turn) runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, cardGone, activityLines, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('Stop mid-turn withdraws the card and refuses the turn’s queued calls', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'stop-e2e');
  const before = dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [2] } })).items[0].score;

  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  const queued = [
    client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 99 } }),
    client.callTool({ name: 'items_highlight', arguments: { ids: [3] } }),
  ];
  await page.locator('#activity [part~=acting] [part=stop]').waitFor({ timeout: SHOW_MS });
  assert.match((await activityLines(page)).join('\n'), /SDK e2e client.*waiting/);
  await page.locator('#activity [part~=acting] [part=stop]').click();

  await cardGone(page);
  for (const result of await Promise.all([asked, ...queued])) {
    assert.equal(result.isError, true);
    assert.match(textOf(result), /pressed Stop on this turn/);
  }
  await page.locator('#activity [part=text]', { hasText: 'stopped' }).waitFor({ timeout: SHOW_MS });
  const history = await page.textContent('#history');
  assert.doesNotMatch(history, /Deleted item 1|Set score of item 2|Highlighted/, 'nothing of the turn ran');
  const after = dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [2] } })).items[0].score;
  assert.equal(after, before, 'the agent’s next call, a new turn, runs; the value was never set');
  await client.close();
});
