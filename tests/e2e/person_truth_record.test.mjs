// The record says what allowed each call, in the demo page in headless Chromium with the
// official SDK client as the agent: the answer on a card in its grant's words ("for this
// connection until the tab closes", "until you revoke it"), the grant it made for each later
// call ("allowed by your grant …", never "allowed by your settings" nor "allowed always"), the
// settings; a refused call says "refused by your settings" once; each tool by its title, the
// CSV export by its name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { dataOf } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, cardGone, choose, textOf, SHOW_MS } from './demo_harness.mjs';
import { CATALOGUE } from '../../tab/generated/bundle.js';

const chromium = fileChromium();
const titleOf = (name) => CATALOGUE.tools.find((t) => t.name === name).title;

/** Waits until the record shows `n` calls, each with its outcome; returns their lines, newest first. */
async function recorded(page, n) {
  await page.waitForFunction(
    (count) => {
      const record = document.querySelector('#agents').shadowRoot.querySelector('#record').shadowRoot;
      const entries = [...record.querySelectorAll('[part~=entry]')];
      return entries.length === count && entries.every((e) => e.querySelector('[part=outcome]').textContent !== 'under way');
    },
    n,
    { timeout: SHOW_MS },
  );
  return page.locator('#record [part~=entry]').allTextContents();
}

/** A call the person answers with `choice` on its card. */
async function answered(page, client, name, args, choice) {
  const call = client.callTool({ name, arguments: args });
  await cardSays(page, /Allow\?$/);
  await choose(page, choice);
  const result = await call;
  assert.equal(result.isError, false, textOf(result));
  await cardGone(page);
}

test('each call names the decision that allowed it, per grant kind, in the record and its export', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'record-truth-e2e');
  // Every change asks: a card for each, until a grant answers it.
  await page.locator('#permissions select[data-kind=change]').selectOption('ask');
  const ran = async (name, args) => assert.equal((await client.callTool({ name, arguments: args })).isError, false);

  const group = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} })).groups[0].name;
  await answered(page, client, 'items_highlight', { ids: [1] }, 'connection');
  await ran('items_highlight', { ids: [2] }); // no card: the grant for this connection
  await answered(page, client, 'item_set_value', { id: 3, column: 'score', value: 5 }, 'always');
  await ran('item_set_value', { id: 4, column: 'score', value: 6 }); // no card: the grant kept
  await answered(page, client, 'group_rename', { group, name: 'Renamed' }, 'once');
  // Changes refused now: a highlight (granted, but a deny is never answered by a grant).
  await page.locator('#permissions select[data-kind=change]').selectOption('deny');
  const refused = await client.callTool({ name: 'items_highlight', arguments: { ids: [5] } });
  assert.equal(refused.isError, true);

  const decisions = [
    ['dataset_describe', 'allowed by your settings'],
    ['items_highlight', 'allowed for this connection until the tab closes'],
    ['items_highlight', 'allowed by your grant for this connection until the tab closes'],
    ['item_set_value', 'allowed until you revoke it'],
    ['item_set_value', 'allowed by your grant until you revoke it'],
    ['group_rename', 'allowed once'],
    ['items_highlight', 'refused by your settings'],
  ];
  const lines = await recorded(page, decisions.length);
  [...decisions].reverse().forEach(([tool, decision], i) => {
    assert.ok(lines[i].includes(` · “${titleOf(tool)}” · ${decision} · `), `line ${i} names “${titleOf(tool)}” and “${decision}”: ${lines[i]}`);
  });
  const all = lines.join('\n');
  assert.doesNotMatch(all, /allowed always/);
  assert.doesNotMatch(all, /refused by your settings · refused by your settings/);
  assert.doesNotMatch(all, / · items_highlight · /, 'a tool by its title, not its name');

  const [download] = await Promise.all([page.waitForEvent('download', { timeout: SHOW_MS }), page.click('#record [part=export-csv]')]);
  const rows = (await readFile(await download.path(), 'utf8')).trim().split('\r\n').slice(1).map((r) => r.split(','));
  assert.deepEqual(
    rows.map((r) => [r[4], r[5]]),
    decisions,
    'the export: each tool by its name, each decision in the same words',
  );
  await client.close();
});
