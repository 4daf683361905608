// The activity lines sized for a person, without a page: newest first, the turns acting or
// stopped before the finished ones, the finished ones beyond a few folded behind a count (a
// stopped agent said stopped once, its earlier finished turns folding as they ended); and a
// turn whose steps were another dataset's says at once that it cannot be undone (no question
// first, no Undo turn), and can again once that dataset is shown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence, UNDO_ELSEWHERE } from '../../tab/presence.js';
import { linesShown, FINISHED_SHOWN } from '../../tab/presence-elements.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [{ name: 'edit', title: 'Edit a value', safety: 'change' }];
const call = (turn, agent = 'Claude', connection = 'c1') => ({ id: Math.random(), tool: 'edit', args: {}, agent, connection: { id: connection, client: agent, host: '127.0.0.1' }, turn });

test('after 20 turns the running one is first, then the newest finished ones; the older fold behind their count', async () => {
  const presence = createPresence({ app: 't', storage: new Storage(), tools: TOOLS });
  // The oldest turn still runs (another agent's) while 19 newer ones finish.
  let finish;
  const running = presence.run(call(1, 'Data Analyst', 'c2'), () => new Promise((r) => (finish = r)));
  for (let turn = 2; turn <= 20; turn += 1) await presence.run(call(turn), async () => ({}));
  const lines = presence.lines();
  assert.equal(lines.length, 20);
  const { shown, folded } = linesShown(lines);
  assert.equal(shown[0].agent, 'Data Analyst', 'the running line comes first');
  assert.equal(shown[0].done, false);
  assert.deepEqual(shown.slice(1).map((l) => l.turn), [20, 19, 18], 'then the newest finished turns, newest first');
  assert.equal(shown.length, 1 + FINISHED_SHOWN);
  assert.equal(folded, 19 - FINISHED_SHOWN, 'the older finished turns are counted, not shown');
  const all = linesShown(lines, { unfolded: true });
  assert.equal(all.shown.length, 20);
  assert.deepEqual(all.shown.slice(1).map((l) => l.turn), Array.from({ length: 19 }, (_, i) => 20 - i));
  // A line kept (the focus is on it) stays shown while folded.
  const kept = linesShown(lines, { keep: [lines.find((l) => l.turn === 5).key] });
  assert.ok(kept.shown.some((l) => l.turn === 5));
  finish({});
  await running;
  assert.deepEqual(linesShown(presence.lines()).shown.map((l) => l.turn), [20, 19, 18], 'finished, it folds with the others by age');
});

test('after Stop, the agent is said stopped once, on its newest line; its earlier finished turns stay as they ended and fold', async () => {
  const presence = createPresence({ app: 't', storage: new Storage(), tools: TOOLS });
  for (let turn = 1; turn <= 8; turn += 1) await presence.run(call(turn), async () => ({}));
  let finish;
  const asking = presence.run(call(9), () => new Promise((r) => (finish = r)));
  await new Promise((r) => setTimeout(r, 0));
  const acting = presence.lines().find((l) => !l.done);
  presence.stop(acting.key);
  finish?.({});
  await asking.catch(() => {});
  const { shown, folded } = linesShown(presence.lines());
  assert.deepEqual(shown.filter((l) => l.held).map((l) => l.turn), [9], 'one line says stopped, with Let it go on');
  assert.equal(shown[0].turn, 9);
  assert.deepEqual(shown.slice(1).map((l) => l.turn), [8, 7, 6], 'then the newest finished turns');
  assert.ok(shown.slice(1).every((l) => !l.stopped), 'turns that had finished are not said stopped');
  assert.equal(folded, 8 - FINISHED_SHOWN);
});

test('a turn on a dataset no longer shown says at once that it cannot be undone, and offers no Undo turn', async () => {
  const undone = [];
  const presence = createPresence({ app: 't', storage: new Storage(), tools: TOOLS, dataset: 'Set A', stepOf: () => 1, undoTurn: (steps) => undone.push(steps) });
  await presence.run(call(1), async () => ({}));
  await presence.run(call(2, 'Other', 'c9'), async () => ({}));
  const key = presence.lines()[0].key;
  assert.equal(presence.undoAsks(key), true, 'on its own dataset, under a later turn: it asks first');
  presence.setDataset('Set B');
  const line = presence.lines()[0];
  assert.equal(line.undoable, false);
  assert.equal(line.undoSaid, UNDO_ELSEWHERE.replace('{dataset}', 'Set A'));
  assert.equal(presence.undoAsks(key), false, 'no question first');
  assert.equal(await presence.undoTurn(key, { confirmed: true }), false);
  assert.deepEqual(undone, [], 'the app was not asked to undo another dataset’s steps');
  presence.setDataset('Set A');
  assert.equal(presence.lines()[0].undoable, true, 'shown again, it can be undone again');
  assert.equal(presence.lines()[0].undoSaid, null);
  assert.equal(await presence.undoTurn(key, { confirmed: true }), true);
  assert.equal(undone.length, 1);
});
