// The dataset's switch "Agents see names and summaries only", in the demo page in headless
// Chromium with the official SDK client as the agent: off, the agent reads items' values and a
// summary's minimum; on (the person's checkbox), a cell read and a picture are refused with one
// sentence before they run, and a summary comes without its minimum, maximum and median, with a
// sentence saying so. The notice says what agents are sent, and that small groups can reveal
// values, until Got it; the switch is kept across a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, dataOfText } from './harness.mjs';
import { fileChromium, demoWithAgent, textOf, reloadDemo } from './demo_harness.mjs';

const chromium = fileChromium();

test('the switch refuses a cell read and leaves out a minimum', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'data-switch-e2e');
  const toggle = page.locator('#data-switch [part=switch]');
  assert.equal(await toggle.isChecked(), false, 'free reading is the default');
  assert.match(await page.textContent('#data-switch [part=notice]'), /single items’ values and pictures of the view/);
  assert.match(await page.textContent('#data-switch [part=caveat]'), /very small group .* can still reveal/);

  const free = await client.callTool({ name: 'items_values', arguments: { ids: [1] } });
  assert.equal(free.isError, false);
  assert.equal(typeof dataOf(free).items[0].score, 'number');
  const fullSummary = dataOf(await client.callTool({ name: 'groups_summary', arguments: { column: 'score' } }));
  assert.equal(typeof fullSummary.groups[0].min, 'number', 'off: the minimum is sent');

  await toggle.check();
  const cells = await client.callTool({ name: 'items_values', arguments: { ids: [1] } });
  assert.equal(cells.isError, true);
  assert.match(textOf(cells), /“Agents see names and summaries only”, so “items_values” did not run/);
  assert.doesNotMatch(textOf(cells), /"score":/, 'no value goes out');
  const picture = await client.callTool({ name: 'view_picture', arguments: {} });
  assert.equal(picture.isError, true);
  assert.equal(picture.content.some((c) => c.type === 'image'), false);
  assert.match(await page.textContent('#calls'), /items_values · error: The person set this dataset/);

  const summary = await client.callTool({ name: 'groups_summary', arguments: { column: 'score' } });
  assert.equal(summary.isError, false);
  const data = dataOfText(summary.content[0].text);
  for (const g of data.groups) {
    assert.deepEqual(Object.keys(g).sort(), ['count', 'group', 'mean', 'sd'], 'no minimum, maximum or median');
  }
  assert.match(data.left_out, /^Left out because the person set this dataset to names and summaries only: \d+ values beyond the names, counts and summaries “groups_summary” may send\.$/);

  await page.locator('#data-switch [part=got-it]').click();
  assert.equal(await page.locator('#data-switch [part=notice]').isHidden(), true);
  await reloadDemo(page);
  assert.equal(await page.locator('#data-switch [part=switch]').isChecked(), true, 'kept for this dataset');
  assert.equal(await page.locator('#data-switch [part=notice]').isHidden(), true, 'the notice once per dataset');
  assert.equal((await client.callTool({ name: 'items_values', arguments: { ids: [1] } })).isError, true);
  await page.locator('#data-switch [part=switch]').uncheck();
  assert.equal((await client.callTool({ name: 'items_values', arguments: { ids: [1] } })).isError, false, 'only the person turns it off');
  await client.close();
});
