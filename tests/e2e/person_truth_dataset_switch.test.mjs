// The data switch follows a dataset's identity across Another dataset, in the demo page in
// headless Chromium with the official SDK client as the agent: turned on, it stays on for the
// next dataset shown (before, it was silently off and items_values returned cell values at
// once), and the page says what the switch is for the dataset now shown, written again when
// the person turns it off; a dataset shown after one that is off starts off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, demoWithAgent, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('after Another dataset the switch is as it was, and the page says so', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'dataset-switch-e2e');
  const toggle = page.locator('#data-switch [part=switch]');
  const said = page.locator('#data-switch [part=dataset-changed]');
  await toggle.check();
  assert.equal(await said.textContent(), '', 'nothing to say before another dataset is shown');

  await page.click('#another-dataset');
  const name = await page.textContent('#dataset-name');
  assert.equal(await toggle.isChecked(), true, 'still on for the new dataset');
  await said.filter({ hasText: `Now “${name}”: the switch is on` }).waitFor({ timeout: SHOW_MS });
  assert.match(await page.textContent('#dataset-said'), new RegExp(`^Now “${name}”: the switch is on, agents see its names and summaries only\\.$`));
  const cells = await client.callTool({ name: 'items_values', arguments: { ids: [1] } });
  assert.equal(cells.isError, true, 'no cell value goes out at once');
  assert.match(textOf(cells), /“Agents see names and summaries only”, so “items_values” did not run/);
  assert.doesNotMatch(textOf(cells), /"score":/);

  // Turned off for this dataset: what is said follows (never stale).
  await toggle.uncheck();
  await said.filter({ hasText: `Now “${name}”: the switch is off` }).waitFor({ timeout: SHOW_MS });
  await page.locator('#dataset-said', { hasText: /the switch is off/ }).waitFor({ timeout: SHOW_MS });
  assert.equal((await client.callTool({ name: 'items_values', arguments: { ids: [1] } })).isError, false);

  // The next dataset, after one that is off: off, and said so.
  await page.click('#another-dataset');
  const next = await page.textContent('#dataset-name');
  assert.notEqual(next, name);
  assert.equal(await toggle.isChecked(), false);
  await said.filter({ hasText: `Now “${next}”: the switch is off` }).waitFor({ timeout: SHOW_MS });
  await client.close();
});
