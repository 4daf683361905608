// With the dataset's switch "Agents see names and summaries only" on, no tool sends a cell's
// value: the demo page in headless Chromium, the official SDK client as the agent, every tool
// the agent is offered called (a tool added to the catalogue must be added to CALLS here, or
// this fails), writes and the history included: an item's value set (its old value, the
// history's summary and the undo that restores it are what used to leak), a group renamed,
// an item deleted (the person allows it), every step undone, and each tool once with an
// argument it refuses. Every result's and error's text is read for a value of the dataset's
// cells (the values the page's seed makes, read from the app's own code); the same check sees
// the value while the switch is off, so it can see one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOfText } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, textOf } from './demo_harness.mjs';
import { CATALOGUE } from '../../tab/generated/bundle.js';
import { createDemoApp } from '../../tab/demo/app.js';

const chromium = fileChromium();

/** The demo page's seed (demo_harness.mjs openDemo) and the dataset it makes. */
const DATASET = createDemoApp({ seed: 11 }).dataset;
/** An item whose score is not a whole number, so its value cannot pass for an id or a count. */
const ITEM = DATASET.items.find((i) => !Number.isInteger(i.score));
/** A value no cell holds. */
const NEW_VALUE = 4321.5;
const [FIRST_GROUP, SECOND_GROUP] = DATASET.groups.map((g) => g.name);

/**
 * How to call each tool the agent is offered (every one, and no other), in the order called:
 * each call's arguments. The history's tools come after the writes they read and undo.
 */
const CALLS = {
  dataset_describe: [{}],
  groups_summary: [{ column: 'score' }, { column: 'x', groups: [FIRST_GROUP] }],
  groups_compare: [{ column: 'score', groups: [FIRST_GROUP, SECOND_GROUP], permutations: 100 }],
  items_values: [{ ids: [ITEM.id] }],
  view_picture: [{}],
  items_highlight: [{ ids: [ITEM.id] }],
  item_set_value: [{ id: ITEM.id, column: 'score', value: NEW_VALUE }],
  group_rename: [{ group: FIRST_GROUP, name: 'Renamed' }],
  items_delete: [{ ids: [ITEM.id] }],
  history_list: [{}],
  // Undoes the deletion, the renaming, the setting (restoring the old value) and the highlight.
  history_undo: [{}, {}, {}, {}, {}],
  status: [{}],
};
/** An argument no tool takes: each tool is called once with it, for its error. */
const REFUSED_ARGUMENT = { no_such_argument: 1 };

/** The cells' values that are not whole numbers (a whole number passes for an id, a count, a step). */
const CELL_VALUES = new Set(DATASET.items.flatMap((i) => DATASET.columns.map((c) => i[c.name])).filter((v) => !Number.isInteger(v)));

/** The cells' values written in `text`. */
function cellValuesIn(text) {
  const numbers = text.match(/-?\d+\.\d+(?:e[+-]?\d+)?/gi) || [];
  return numbers.map(Number).filter((n) => CELL_VALUES.has(n));
}

/** Calls `name` with `args` as the agent, allowing once if the person is asked; the result. */
async function call(page, client, name, args) {
  const result = client.callTool({ name, arguments: args });
  const asked = cardSays(page, /Allow\?$/).then(
    () => 'asked',
    () => 'not asked',
  );
  if ((await Promise.race([result.then(() => 'done'), asked])) === 'asked') await choose(page, 'once');
  return result;
}

test('with the switch on, no tool’s result or error carries a cell’s value', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'data-switch-every-tool-e2e');
  assert.equal(await page.textContent('#dataset-name'), DATASET.name, 'the page shows the dataset made here');
  assert.ok(CELL_VALUES.has(ITEM.score));

  // Off, the check sees a value: the item's own.
  const free = await call(page, client, 'items_values', { ids: [ITEM.id] });
  assert.deepEqual(cellValuesIn(textOf(free)).includes(ITEM.score), true, textOf(free));

  const all = (await client.listTools()).tools.map((t) => t.name);
  await page.locator('#data-switch [part=switch]').check();
  // The tools the switch refuses are stated refused (left out of the list); each is still called by name.
  const cells = CATALOGUE.tools.filter((t) => t.data === 'cells').map((t) => t.name);
  let offered = all;
  for (let i = 0; i < 40 && cells.some((name) => offered.includes(name)); i += 1) {
    await new Promise((r) => setTimeout(r, 100));
    offered = (await client.listTools()).tools.map((t) => t.name);
  }
  for (const t of CATALOGUE.tools) assert.equal(offered.includes(t.name), t.data !== 'cells', `${t.name} is offered unless the switch refuses it`);
  const unknown = all.filter((name) => !Object.hasOwn(CALLS, name));
  assert.deepEqual(unknown, [], 'say in CALLS how to call these tools');
  assert.deepEqual(Object.keys(CALLS).filter((name) => !all.includes(name)), [], 'CALLS names only tools offered');

  const leaks = [];
  const sent = {};
  for (const name of Object.keys(CALLS)) {
    for (const args of [...CALLS[name], REFUSED_ARGUMENT]) {
      const result = await call(page, client, name, args);
      const text = textOf(result);
      (sent[name] ||= []).push({ args, isError: result.isError, text });
      const found = cellValuesIn(text);
      if (found.length) leaks.push(`${name} ${JSON.stringify(args)} sent ${found.join(', ')}: ${text}`);
    }
  }
  assert.deepEqual(leaks, [], 'no cell’s value goes out');

  // Every tool did what it does with the switch on: a cell read and the picture refused before
  // they ran, the rest ran (the history's included) and sent their allow-list's values.
  for (const tool of CATALOGUE.tools) {
    const [first] = sent[tool.name];
    if (tool.data === 'cells') {
      assert.equal(first.isError, true, tool.name);
      assert.match(first.text, new RegExp(`so “${tool.name}” did not run`));
    } else {
      assert.equal(first.isError, false, `${tool.name}: ${first.text}`);
    }
  }
  // An argument refused: a summaries tool's error says the app's words (its errors are as_said).
  const refused = sent.groups_summary.at(-1);
  assert.equal(refused.isError, true);
  assert.match(refused.text, /groups_summary has no argument \\?"no_such_argument\\?"/);
  const set = dataOfText(sent.item_set_value[0].text);
  assert.deepEqual([set.brief, set.value, set.old, set.summary], [`Set score of item ${ITEM.id}`, NEW_VALUE, undefined, undefined]);
  assert.match(set.left_out, /^Left out because the person set this dataset to names and summaries only: 2 values/);
  const steps = dataOfText(sent.history_list[0].text).steps;
  assert.deepEqual(steps.map((s) => s.brief), [`Highlighted 1 item`, `Set score of item ${ITEM.id}`, `Renamed group "${FIRST_GROUP}" to "Renamed"`, `Deleted item ${ITEM.id}`]);
  const undone = sent.history_undo.slice(0, 4).map((u) => dataOfText(u.text).undid.tool);
  assert.deepEqual(undone, ['items_delete', 'group_rename', 'item_set_value', 'items_highlight'], 'every step undone');
  assert.equal(sent.history_undo[4].isError, true);
  const summary = dataOfText(sent.groups_summary[0].text);
  assert.deepEqual(Object.keys(summary.groups[0]).sort(), ['count', 'group', 'mean', 'sd'], 'no minimum, median or maximum');

  // The person's own history still says the values.
  assert.match(await page.textContent('#history'), new RegExp(`from ${ITEM.score} to ${NEW_VALUE}`));
  await client.close();
});
