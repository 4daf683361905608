// What agents are sent of the data, decided without a page: every catalogue tool says what its
// result carries, and every summaries tool what its answer may carry with the dataset's switch
// on (an allow-list of paths, and whether its errors go as said); with the switch on, cell-level
// and unlisted tools are refused before they run, the switch is read again after, only the
// listed paths' values are sent (the rest counted in `left_out`, never named), an app's error
// goes only when its tool says so; the switch is kept per app and dataset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE, DATA_PATH_MAX_CHARS } from '../../tab/generated/bundle.js';
import { dataClassOf, allowListOf, refusalBefore, leaveOut, errorSent, createDataSwitch, guardCall, DATA_SENTENCES } from '../../tab/data-guard.js';
import { NotRun } from '../../tab/presence.js';
import { createDemoApp } from '../../tab/demo/app.js';

import { MemoryStorage as Storage } from './memory_storage.mjs';

const toolOf = (name) => CATALOGUE.tools.find((t) => t.name === name);
const summaries = (result, errors = 'as_said') => ({ name: 'some_tool', data: 'summaries', summaries_only: { result, errors } });
const leftOut = (what) => DATA_SENTENCES.LEFT_OUT.replace('{what}', what);

test('every tool of the bundle’s catalogue is classified, and every summaries tool lists what it may send', () => {
  const unclassified = CATALOGUE.tools.filter((t) => dataClassOf(t) === null).map((t) => t.name);
  assert.deepEqual(unclassified, [], 'classify these in bundle/data/catalogue.json');
  const unlisted = CATALOGUE.tools.filter((t) => dataClassOf(t) === 'summaries' && !allowListOf(t)).map((t) => t.name);
  assert.deepEqual(unlisted, [], 'give these a summaries_only in bundle/data/catalogue.json');
  assert.equal(dataClassOf(toolOf('items_values')), 'cells');
  assert.equal(allowListOf(toolOf('items_values')), null, 'a cell read never runs with the switch on');
  assert.equal(dataClassOf(toolOf('view_picture')), 'cells');
});

test('with the switch on, cell-level, unclassified and unlisted tools are refused before they run', () => {
  assert.equal(refusalBefore({ name: 'items_values', data: 'cells' }, false), null);
  assert.match(refusalBefore({ name: 'items_values', data: 'cells' }, true), /^The person set this dataset to “Agents see names and summaries only”, so “items_values” did not run/);
  assert.match(refusalBefore({ name: 'new_tool' }, true), /nobody said what “new_tool” may send then/);
  assert.match(refusalBefore({ name: 'unlisted', data: 'summaries' }, true), /nobody said what “unlisted” may send then/);
  for (const bad of [{ result: ['a..b'], errors: 'as_said' }, { result: ['a'], errors: 'all' }, { result: 'a', errors: 'as_said' }, { result: ['$.a'], errors: 'as_said' }, { result: ['a'.repeat(DATA_PATH_MAX_CHARS + 1)], errors: 'as_said' }]) {
    assert.match(refusalBefore({ name: 'bad', data: 'summaries', summaries_only: bad }, true), /nobody said/, JSON.stringify(bad));
  }
  assert.equal(refusalBefore(summaries(['column']), true), null);
  assert.equal(refusalBefore(toolOf('groups_summary'), true), null);
});

test('only the allow-list’s paths are sent; everything else is counted in left_out, never named', () => {
  const tool = summaries(['column', 'groups[].group', 'groups[].mean', 'ids[]', 'range.low']);
  const result = {
    data: {
      column: 'score',
      groups: [{ group: 'A', count: 3, mean: 2, min: 1.25, extra: { deep: 7.5 } }, 'a bare string'],
      ids: [1, 2, { x: 3.5 }],
      range: { low: 1, high: 9.75 },
      old: 47.3,
      'Smith 47.3': 1,
      column_values: [4.5, 5.5],
      ['__proto__']: { polluted: 8.25 },
    },
    image: { data: 'x', mimeType: 'image/png' },
    audio: { data: 'y' },
  };
  assert.deepEqual(leaveOut(result, tool, false), result, 'off: as it is');
  const sent = leaveOut(result, tool, true);
  assert.deepEqual(Object.keys(sent), ['data'], 'nothing but the data');
  const { left_out: said, ...data } = sent.data;
  assert.deepEqual(data, { column: 'score', groups: [{ group: 'A', mean: 2 }], ids: [1, 2], range: { low: 1 } });
  // count, min, extra, the bare string, {x}, high, old, "Smith 47.3", column_values, __proto__.
  assert.equal(said, leftOut('10 values beyond the names, counts and summaries “some_tool” may send, the picture, the sound'));
  const text = JSON.stringify(sent);
  for (const secret of ['47.3', 'Smith', '1.25', '7.5', '9.75', '4.5', '8.25', 'polluted']) assert.ok(!text.includes(secret), secret);
  assert.equal(Object.getPrototypeOf(sent.data), Object.prototype);

  assert.deepEqual(leaveOut({ data: { column: 'x' } }, tool, true), { data: { column: 'x' } }, 'nothing to say when nothing was left out');
  assert.deepEqual(leaveOut({ data: [1, 2] }, tool, true), { data: { left_out: leftOut('1 value beyond the names, counts and summaries “some_tool” may send') } });
  assert.deepEqual(leaveOut({ data: { column: { nested: 1 } } }, tool, true).data.column, undefined, 'a leaf path lets no object through');
  assert.deepEqual(leaveOut({ data: { column: 'x' } }, { name: 'no_list', data: 'summaries' }, true).data, { left_out: leftOut('1 value beyond the names, counts and summaries “no_list” may send') });
  const asked = leaveOut({ data: null, inputRequired: { a: { method: 'elicitation/create', params: { message: 'value 47.3?' } } } }, tool, true);
  assert.deepEqual(asked, { data: { left_out: leftOut('a question for the agent app') } });
});

test('the demo’s writes and history send no cell value with the switch on', () => {
  const app = createDemoApp({ seed: 7 });
  const item = app.dataset.items[4];
  const old = item.score;
  const send = (tool, args) => leaveOut(app.run(tool, args, 'Claude'), toolOf(tool), true);
  const set = send('item_set_value', { id: item.id, column: 'score', value: 1234.5 });
  assert.equal(set.data.step, 1);
  assert.equal(set.data.brief, `Set score of item ${item.id}`);
  assert.equal(set.data.value, 1234.5, 'the agent’s own value');
  assert.equal(set.data.old, undefined);
  assert.match(set.data.left_out, /^Left out because .*: 2 values beyond/, 'the old value and the summary');
  const list = send('history_list', {});
  const undo = send('history_undo', {});
  assert.equal(item.score, old, 'undone');
  assert.deepEqual(undo.data.undid, { step: 1, who: 'Claude', tool: 'item_set_value', brief: `Set score of item ${item.id}`, undone: true });
  const summary = send('groups_summary', { column: 'score' });
  assert.deepEqual(Object.keys(summary.data.groups[0]), ['group', 'count', 'mean', 'sd'], 'no minimum, median or maximum');
  for (const sent of [set, list, undo, send('history_list', {})]) {
    assert.ok(!JSON.stringify(sent).includes(String(old)), `${JSON.stringify(sent)} carries ${old}`);
  }
  // Off, the person's own history says the values.
  assert.match(app.history[0].summary, new RegExp(`from ${old} to 1234.5`));
});

test('an app’s error goes with the switch on only when its tool says its errors carry no value', () => {
  const said = new Error('Item 4 holds 47.3, not a name');
  assert.equal(errorSent(said, summaries(['a'], 'withheld'), false), said, 'off: as said');
  assert.equal(errorSent(said, summaries(['a'], 'as_said'), true), said);
  const withheld = errorSent(said, summaries(['a'], 'withheld'), true);
  assert.equal(withheld.message, DATA_SENTENCES.ERROR_WITHHELD.replace('{tool}', '“some_tool”'));
  assert.ok(!withheld.message.includes('47.3'));
  assert.match(errorSent(said, { name: 'items_values', data: 'cells' }, true).message, /its own words are left out/, 'a cell read’s error too');
  const declined = new NotRun('The person declined “Delete items”, so nothing was changed.', 'declined by the person');
  assert.equal(errorSent(declined, summaries(['a'], 'withheld'), true), declined, 'the tab end’s own sentences go');
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

  const cells = { name: 'items_values', data: 'cells' };
  let ran = 0;
  await assert.rejects(guardCall({ tool: cells, dataset: 'd1', dataSwitch: a }, () => ran++), /did not run/);
  assert.equal(ran, 0, 'refused before it runs');
  a.set('d1', false);
  const turnedOn = guardCall({ tool: cells, dataset: 'd1', dataSwitch: a }, async () => {
    a.set('d1', true); // the person turns it on while the call runs
    return { data: { items: [{ id: 1, x: 2 }] } };
  });
  await assert.rejects(turnedOn, new RegExp(DATA_SENTENCES.TURNED_ON.slice(0, 30)));
  a.set('d1', false);
  const failedOn = guardCall({ tool: cells, dataset: 'd1', dataSwitch: a }, async () => {
    a.set('d1', true);
    throw new Error('Item 1 has x 2.75');
  });
  await assert.rejects(failedOn, (err) => !err.message.includes('2.75') && /its own words are left out/.test(err.message));
  const summary = await guardCall({ tool: summaries(['mean']), dataset: 'd1', dataSwitch: a }, () => ({ data: { min: 1, mean: 2 } }));
  assert.deepEqual(Object.keys(summary.data), ['mean', 'left_out']);
  await assert.rejects(
    guardCall({ tool: summaries(['mean'], 'withheld'), dataset: 'd1', dataSwitch: a }, () => {
      throw new Error('the value 9.5 is wrong');
    }),
    (err) => !err.message.includes('9.5'),
  );
});
