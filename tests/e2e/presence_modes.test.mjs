// The three modes, in the demo page in headless Chromium with the official SDK client as the
// agent: "Ask before heavy or irreversible" (the default) lets changes run and asks before a
// delete; "Read only" takes every change out of the agents' list and refuses a call to one
// anyway while reads run; "Allow everything undoable" lets changes run and still asks before a
// delete. The mode is kept across a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOL_REFUSED } from '../../tab/generated/bundle.js';
import { waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, reloadDemo } from './demo_harness.mjs';

const chromium = fileChromium();

const CHANGES = ['items_highlight', 'item_set_value', 'group_rename', 'items_delete', 'history_undo'];
const settingsOf = async (client) => Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t._meta?.['tabrelay/setting']]));

test('each mode decides what runs, what asks and what is refused', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'modes-e2e');
  const mode = page.locator('#permissions [part=mode]');
  assert.equal(await mode.inputValue(), 'careful');
  assert.equal(await mode.locator('option:checked').textContent(), 'Ask before heavy or irreversible');
  let settings = await waitFor(async () => {
    const s = await settingsOf(client);
    return s.items_delete && s;
  });
  assert.equal(settings.item_set_value, 'runs');
  assert.equal(settings.items_delete, 'asks');
  assert.equal((await client.callTool({ name: 'items_highlight', arguments: { ids: [1] } })).isError, false, 'a change runs');

  await mode.selectOption('read-only');
  settings = await waitFor(async () => {
    const s = await settingsOf(client);
    return !s.item_set_value && s;
  });
  for (const name of CHANGES) assert.equal(settings[name], undefined, `${name} leaves the list`);
  assert.equal(settings.items_values, 'runs', 'reads stay');
  const refused = await client.callTool({ name: 'item_set_value', arguments: { id: 1, column: 'score', value: 5 } });
  assert.equal(refused.isError, true);
  assert.equal(refused.content[0].text, TOOL_REFUSED);
  assert.equal(await page.isHidden('#confirm'), true, 'no card in read only');
  assert.doesNotMatch(await page.textContent('#history'), /Set score of item 1/);
  assert.equal(await page.locator('#permissions [part=kind][data-kind=change]').inputValue(), 'deny', 'the kinds show the mode');

  await reloadDemo(page);
  assert.equal(await page.locator('#permissions [part=mode]').inputValue(), 'read-only', 'the mode is kept');

  await page.locator('#permissions [part=mode]').selectOption('undoable');
  settings = await waitFor(async () => {
    const s = await settingsOf(client);
    return s.item_set_value === 'runs' && s;
  });
  assert.equal(settings.items_delete, 'asks', 'a delete still asks');
  assert.equal((await client.callTool({ name: 'item_set_value', arguments: { id: 1, column: 'score', value: 5 } })).isError, false);
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [9] } });
  await cardSays(page, /delete item 9\./);
  await choose(page, 'deny');
  assert.equal((await call).isError, true);
  await client.close();
});
