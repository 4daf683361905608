// A waiting card is withdrawn when the app shows another dataset, in the demo page in headless
// Chromium with the official SDK client as the agent: the agent reads the tab end's withdrawal
// sentence (the bundle's, with the reason), the card goes, nothing ran, and the agent's next
// call sees the new dataset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WITHDRAWN } from '../../tab/generated/bundle.js';
import { dataOf } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, cardGone, textOf } from './demo_harness.mjs';

const chromium = fileChromium();

test('a waiting card is withdrawn when the app shows another dataset', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'dataset-switch-e2e');
  const shown = await page.textContent('#dataset-name');
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);

  await page.click('#another-dataset');
  const result = await call;
  assert.equal(result.isError, true);
  const said = WITHDRAWN.replace('{reason}', 'the app showed another dataset');
  assert.ok(textOf(result).includes(said), `the agent reads the withdrawal: ${textOf(result)}`);
  await cardGone(page);
  const now = await page.textContent('#dataset-name');
  assert.notEqual(now, shown, 'another dataset is shown');
  assert.doesNotMatch(await page.textContent('#history'), /Deleted item 1/, 'nothing ran');
  assert.match(await page.textContent('#calls'), /items_delete · withdrawn/);

  const described = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  assert.equal(described.name, now, 'the agent’s next call sees the dataset shown');
  await client.close();
});
