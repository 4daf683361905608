// A waiting card is withdrawn when the app shows another dataset, in the demo page in headless
// Chromium with the official SDK client as the agent: the agent reads the tab end's withdrawal
// sentence (the bundle's, with the reason), the card goes, the call never reaches the app (its
// calls are counted in the page: the app's module as served, with a count added to its `run`),
// and the agent's next call sees the new dataset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WITHDRAWN } from '../../tab/generated/bundle.js';
import { dataOf, APP_ORIGIN } from './harness.mjs';
import { fileChromium, connected, connectThroughPage, cardSays, cardGone, textOf } from './demo_harness.mjs';

const chromium = fileChromium();

test('a waiting card is withdrawn when the app shows another dataset', async () => {
  const page = await (await chromium()).newPage();
  const counting = countAppRuns(page);
  await page.goto(`${APP_ORIGIN}/demo/?seed=11`);
  await connected(page);
  assert.equal(await counting, true, 'the app’s run is where this test counts it');
  const { client } = await connectThroughPage(page, 'dataset-switch-e2e');
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
  assert.match(await page.textContent('#calls'), /items_delete · withdrawn/);

  const described = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  assert.equal(described.name, now, 'the agent’s next call sees the dataset shown');
  // Read after a later call reached the app: the withdrawn one never did.
  assert.deepEqual(await page.evaluate(() => globalThis.appRuns), ['dataset_describe'], 'the deletion never reached the app');
  await client.close();
});

/**
 * Serves the demo app's module with each `run` of an agent's call counted in
 * `globalThis.appRuns`; resolves to whether the module had the `run` it counts.
 */
function countAppRuns(page) {
  const RUN = '  run(tool, args, who, signal) {';
  return new Promise((resolve, reject) => {
    page
      .route(/\/demo\/app\.js$/, async (route) => {
        const response = await route.fetch();
        const source = await response.text();
        resolve(source.includes(RUN));
        const counted = source.replace(RUN, `${RUN}\n    if (who !== 'the person') (globalThis.appRuns ||= []).push(tool);`);
        await route.fulfill({ response, body: counted });
      })
      .catch(reject);
  });
}
