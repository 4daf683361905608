// The demo page in headless Chromium lets the person choose per tool, beside the kinds: as its
// kinds say (deleting asks by default), ask first, or refuse. A refused tool leaves the agent's
// tool list and a call to it anyway is refused by the tab; the choice is kept across a reload,
// and a tool set to ask shows the card.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_REFUSED, STATUS_TOOL } from '../../tab/generated/bundle.js';
import { waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, choose, reloadDemo } from './demo_harness.mjs';

const chromium = fileChromium();

const names = async (client) => (await client.listTools()).tools.map((t) => t.name);

test('a tool the person refuses leaves the list, a call to it is refused, and the choice is kept', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'demo-settings-e2e');
  assert.equal(await page.inputValue('#setting-items_delete'), 'kinds');
  assert.equal(await page.textContent('#now-items_delete'), 'asks you first', 'deleting asks by default');
  assert.equal(await page.textContent('#now-dataset_describe'), 'runs without asking');
  const before = await waitFor(async () => {
    const tools = (await client.listTools()).tools;
    return tools.some((t) => t._meta?.['tabrelay/setting']) && tools;
  });
  const del = before.find((t) => t.name === 'items_delete');
  assert.match(del.description, /each call asks them in their tab first/);
  assert.deepEqual(before.map((t) => t.name), [...before.map((t) => t.name)].sort());

  assert.equal(await page.locator('#setting-items_delete').isVisible(), false, 'each tool’s choice is folded away at first');
  await page.click('#tools-title');
  await page.selectOption('#setting-items_delete', 'deny');
  await waitFor(async () => !(await names(client)).includes('items_delete'));
  assert.ok((await names(client)).includes(STATUS_TOOL));

  const result = await client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  assert.equal(result.isError, true);
  assert.equal(result.content[0].text, TOOL_REFUSED);
  assert.equal(await page.isHidden('#confirm'), true, 'no card for a refused tool');
  assert.match(await page.textContent('#calls'), /items_delete · refused by your settings/);
  assert.doesNotMatch(await page.textContent('#history'), /Deleted item 1/);

  const status = await client.callTool({ name: STATUS_TOOL, arguments: {} });
  assert.match(status.content[0].text, /refuse <tabrelay-data>"items_delete"<\/tabrelay-data>/);
  const dataset = await page.textContent('#dataset-name');
  assert.ok(status.content[0].text.includes(JSON.stringify(dataset)), 'the shown dataset is named');

  await reloadDemo(page);
  assert.equal(await page.inputValue('#setting-items_delete'), 'deny', 'the choice is kept');
  assert.equal(await page.locator('#setting-items_delete').isVisible(), true, 'a choice made shows unfolded');

  await page.selectOption('#setting-item_set_value', 'ask');
  await waitFor(async () => {
    const t = (await client.listTools()).tools.find((x) => x.name === 'item_set_value');
    return t?._meta?.['tabrelay/setting'] === 'asks';
  });
  const call = client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 1 } });
  await choose(page, 'deny');
  assert.equal((await call).isError, true);
  await page.selectOption('#setting-items_delete', 'kinds');
  await waitFor(async () => (await names(client)).includes('items_delete'));
  await client.close();
});
