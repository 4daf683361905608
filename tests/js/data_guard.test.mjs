// What agents are sent of the data, decided without a page: every catalogue tool says what its
// result carries; with the dataset's switch on, cell-level and unclassified reads are refused
// before they run, the switch is read again after, single-item statistics and pictures are
// left out with a sentence; the switch is kept per app and dataset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE } from '../../tab/generated/bundle.js';
import { dataClassOf, refusalBefore, leaveOut, createDataSwitch, guardCall, DATA_SENTENCES } from '../../tab/data-guard.js';

import { MemoryStorage as Storage } from './memory_storage.mjs';

test('every tool of the bundle’s catalogue is classified as cells or summaries', () => {
  const unclassified = CATALOGUE.tools.filter((t) => dataClassOf(t) === null).map((t) => t.name);
  assert.deepEqual(unclassified, [], 'classify these in bundle/data/catalogue.json');
  assert.equal(dataClassOf(CATALOGUE.tools.find((t) => t.name === 'items_values')), 'cells');
  assert.equal(dataClassOf(CATALOGUE.tools.find((t) => t.name === 'view_picture')), 'cells');
});

test('with the switch on, cell-level and unclassified reads are refused before they run', () => {
  assert.equal(refusalBefore({ name: 'items_values', data: 'cells' }, false), null);
  assert.match(refusalBefore({ name: 'items_values', data: 'cells' }, true), /^The person set this dataset to “Agents see names and summaries only”, so “items_values” did not run/);
  assert.match(refusalBefore({ name: 'new_tool' }, true), /nobody said what “new_tool” reads/);
  assert.equal(refusalBefore({ name: 'groups_summary', data: 'summaries' }, true), null);
});

test('single-item statistics and pictures are left out, said beside the data; means and counts stay', () => {
  const result = { data: { groups: [{ group: 'A', count: 3, mean: 2, min: 1, max: 3, median: 2 }] }, image: { data: 'x' } };
  assert.deepEqual(leaveOut(result, false), result);
  const sent = leaveOut(result, true);
  assert.deepEqual(sent.data.groups, [{ group: 'A', count: 3, mean: 2 }]);
  assert.equal(sent.image, undefined);
  assert.equal(sent.data.left_out, DATA_SENTENCES.LEFT_OUT.replace('{what}', 'minimums, maximums, medians, the picture'));
  assert.deepEqual(leaveOut({ data: { count: 2 } }, true), { data: { count: 2 } }, 'nothing to say when nothing was left out');
});

test('the switch is read again after the call, and kept per app and dataset', async () => {
  const storage = new Storage();
  const a = createDataSwitch({ app: 'a', storage });
  assert.equal(a.isOn('d1'), false, 'free reading is the default');
  a.set('d1', true);
  assert.equal(createDataSwitch({ app: 'a', storage }).isOn('d1'), true);
  assert.equal(createDataSwitch({ app: 'a', storage }).isOn('d2'), false);
  assert.equal(createDataSwitch({ app: 'b', storage }).isOn('d1'), false);
  a.seeNotice('d1');
  assert.equal(a.noticeSeen('d1') && a.isOn('d1'), true, 'the notice seen keeps the switch');

  let ran = 0;
  await assert.rejects(guardCall({ tool: { name: 'items_values', data: 'cells' }, dataset: 'd1', dataSwitch: a }, () => ran++), /did not run/);
  assert.equal(ran, 0, 'refused before it runs');
  a.set('d1', false);
  const turnedOn = guardCall({ tool: { name: 'items_values', data: 'cells' }, dataset: 'd1', dataSwitch: a }, async () => {
    a.set('d1', true); // the person turns it on while the call runs
    return { data: { items: [{ id: 1, x: 2 }] } };
  });
  await assert.rejects(turnedOn, new RegExp(DATA_SENTENCES.TURNED_ON.slice(0, 30)));
  const summary = await guardCall({ tool: { name: 'groups_summary', data: 'summaries' }, dataset: 'd1', dataSwitch: a }, () => ({ data: { min: 1, mean: 2 } }));
  assert.deepEqual(Object.keys(summary.data), ['mean', 'left_out']);
});
