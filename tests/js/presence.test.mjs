// The person's permissions, decided without any page: kinds, the strictest winning, the three
// modes, grants for a connection, choices kept per browser and per app; the questions a call
// asks, withdrawn when moot; the activity lines with Stop and Undo turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decide,
  kindsOf,
  strictest,
  settingFor,
  readSettings,
  createPermissionStore,
  createPresence,
  NotRun,
  HEAVY_MS,
  LINES_KEPT,
  MODES,
  SENTENCES,
} from '../../tab/presence.js';

import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'read', title: 'Read values', safety: 'read' },
  { name: 'edit', title: 'Edit a value', safety: 'change' },
  { name: 'delete', title: 'Delete items', safety: 'destructive' },
];
const CONFIRM = { delete: ['deletes-saved'] };
const settings = (given = {}) => readSettings(given);
const call = (tool, extra = {}) => ({ id: extra.id ?? Math.random(), tool, args: {}, agent: 'Claude', connection: { id: 'c1', client: 'Claude', host: 'claude.ai' }, turn: 1, ...extra });
const tick = () => new Promise((r) => setTimeout(r, 0));

test('a call’s kinds: change unless it reads, heavy from the app’s estimate, the app’s confirm kinds', () => {
  assert.deepEqual(kindsOf(TOOLS[0], { confirmKinds: CONFIRM }), []);
  assert.deepEqual(kindsOf(TOOLS[1], { confirmKinds: CONFIRM }), ['change']);
  assert.deepEqual(kindsOf(TOOLS[2], { confirmKinds: CONFIRM }), ['change', 'deletes-saved']);
  assert.deepEqual(kindsOf(TOOLS[0], { estimateMs: HEAVY_MS - 1 }), []);
  assert.deepEqual(kindsOf(TOOLS[0], { estimateMs: HEAVY_MS }), ['heavy']);
});

test('the strictest kind decides: deny over ask over allow', () => {
  assert.equal(strictest([]), 'allow');
  assert.equal(strictest(['allow', 'ask']), 'ask');
  assert.equal(strictest(['ask', 'deny', 'allow']), 'deny');
  const s = settings({ kinds: { change: 'allow', 'deletes-saved': 'ask' } });
  assert.equal(decide({ kinds: ['change'], settings: s }).decision, 'allow');
  assert.deepEqual(decide({ kinds: ['change', 'deletes-saved'], settings: s }), { decision: 'ask', asked: ['deletes-saved'], denied: [], grant: null });
  const d = settings({ kinds: { change: 'deny', 'deletes-saved': 'allow' } });
  assert.equal(decide({ kinds: ['change', 'deletes-saved'], settings: d }).decision, 'deny');
  assert.equal(decide({ kinds: ['change'], tool: 'edit', settings: settings({ tools: { edit: 'deny' } }) }).decision, 'deny', 'a tool the person refuses');
});

test('the three modes as presets, and a kind the person chose over the mode', () => {
  const careful = settings();
  assert.equal(careful.mode, 'careful', 'the default: ask before heavy or irreversible');
  assert.equal(decide({ kinds: ['change'], settings: careful }).decision, 'allow');
  assert.equal(decide({ kinds: ['heavy'], settings: careful }).decision, 'ask');
  assert.equal(decide({ kinds: ['change', 'publishes'], settings: careful }).decision, 'ask');
  const undoable = settings({ mode: 'undoable' });
  assert.equal(decide({ kinds: ['change', 'heavy'], settings: undoable }).decision, 'allow');
  assert.equal(decide({ kinds: ['change', 'deletes-saved'], settings: undoable }).decision, 'ask');
  const readOnly = settings({ mode: 'read-only' });
  assert.equal(decide({ kinds: [], settings: readOnly }).decision, 'allow', 'reads run');
  assert.equal(decide({ kinds: ['change'], settings: readOnly }).decision, 'deny');
  assert.equal(settingFor(TOOLS[1], readOnly), 'refused');
  assert.equal(settingFor(TOOLS[0], readOnly), 'runs');
  assert.equal(settingFor(TOOLS[2], careful, { confirmKinds: CONFIRM }), 'asks');
  assert.equal(decide({ kinds: ['change'], settings: settings({ mode: 'read-only', kinds: { change: 'allow' } }) }).decision, 'allow');
  assert.deepEqual(Object.keys(MODES), ['careful', 'undoable', 'read-only']);
});

test('a grant for a connection allows what asks, for that connection only, never what is denied', () => {
  const grants = new Map([['c1', new Set(['delete'])]]);
  const s = settings();
  assert.equal(decide({ kinds: ['change', 'deletes-saved'], tool: 'delete', settings: s, connection: 'c1', grants }).decision, 'allow');
  assert.equal(decide({ kinds: ['change', 'deletes-saved'], tool: 'delete', settings: s, connection: 'c2', grants }).decision, 'ask');
  assert.equal(decide({ kinds: ['change', 'deletes-saved'], tool: 'purge', settings: s, connection: 'c1', grants }).decision, 'ask', 'another tool of the kind');
  assert.equal(decide({ kinds: ['deletes-saved'], tool: 'delete', settings: settings({ kinds: { 'deletes-saved': 'deny' } }), connection: 'c1', grants }).decision, 'deny');
  const kept = settings({ grants: { c3: { who: 'X', tools: ['delete'] }, '*': { who: 'all agents', tools: ['edit'] } } });
  assert.equal(decide({ kinds: ['deletes-saved'], tool: 'delete', settings: kept, connection: 'c3' }).decision, 'allow', 'kept for c3');
  assert.equal(decide({ kinds: ['deletes-saved'], tool: 'delete', settings: kept, connection: 'c4' }).decision, 'ask');
  assert.equal(decide({ kinds: ['heavy'], tool: 'edit', settings: kept, connection: 'c4' }).decision, 'ask', 'kept for all agents: no connection’s');
  assert.equal(decide({ kinds: ['heavy'], tool: 'edit', settings: kept }).decision, 'allow', 'kept for all agents: a call through none');
  const client = settings({ grants: { 'client:openai.com': { who: 'X', tools: ['delete'] } } });
  const of = (scope) => decide({ kinds: ['deletes-saved'], tool: 'delete', settings: client, connection: 'c5', scope }).decision;
  assert.equal(of('client:openai.com'), 'allow', 'kept for that client');
  assert.equal(of('client:claude.ai'), 'ask', 'another client');
  assert.equal(of('c5'), 'ask', 'an unverified connection');
});

test('kept settings are read strictly: unknown modes and decisions are left out', () => {
  assert.deepEqual(readSettings('{"mode":"yolo","kinds":{"change":"maybe","heavy":"deny"},"tools":{"x":"allow"}}'), { mode: 'careful', kinds: { heavy: 'deny' }, tools: { x: 'allow' }, grants: {} });
  assert.deepEqual(readSettings('{"tools":{"__proto__":"allow"}}').tools, {});
  assert.deepEqual(readSettings('not json'), { mode: 'careful', kinds: {}, tools: {}, grants: {} });
  assert.deepEqual(readSettings('[1]'), { mode: 'careful', kinds: {}, tools: {}, grants: {} });
  assert.deepEqual(readSettings('{"grants":{"c1":{"who":"A","tools":["x",3,"x"]},"c2":{"tools":"x"},"c3":{"tools":[]}}}').grants, { c1: { who: 'A', tools: ['x'] } });
});

test('the store keeps settings per browser and per app, and a mode clears the kinds chosen one by one', () => {
  const storage = new Storage();
  const a = createPermissionStore({ app: 'a', storage });
  const heard = [];
  a.subscribe((s) => heard.push(s.mode));
  a.setKind('heavy', 'allow');
  assert.equal(createPermissionStore({ app: 'a', storage }).settings().kinds.heavy, 'allow', 'kept in the browser');
  assert.deepEqual(createPermissionStore({ app: 'b', storage }).settings().kinds, {}, 'another app keeps its own');
  a.setMode('read-only');
  assert.deepEqual(a.settings().kinds, {});
  assert.deepEqual(heard, ['careful', 'read-only']);
  assert.throws(() => a.setMode('everything'), /no mode/);
  assert.throws(() => createPermissionStore({ storage }), /app/);
  const off = createPermissionStore({ app: 'a', storage: { getItem() { throw new Error('off'); }, setItem() { throw new Error('off'); } } });
  off.setKind('change', 'deny');
  assert.equal(off.settings().kinds.change, 'deny', 'storage off: kept for the page');
});

function presenceOf(extra = {}) {
  const steps = [];
  const undone = [];
  const presence = createPresence({
    app: 'test',
    storage: new Storage(),
    tools: TOOLS,
    confirmKinds: CONFIRM,
    kindWords: { 'deletes-saved': 'it deletes items' },
    stepOf: (r) => r?.step ?? null,
    undoTurn: (list) => undone.push(...list),
    ...extra,
  });
  const asked = [];
  const answered = [];
  presence.onAsking = (q) => asked.push(q);
  presence.onAnswered = (q) => answered.push(q);
  let n = 0;
  const runOf = (c) => presence.run(c, async () => {
    steps.push(++n);
    return { step: n };
  });
  return { presence, asked, answered, steps, undone, runOf };
}

test('a question: who, what and why; Allow once runs, Deny refuses with a sentence, the relay is told both', async () => {
  const { presence, asked, answered, runOf, steps } = presenceOf();
  assert.deepEqual(await runOf(call('edit')), { step: 1 }, 'a change runs without asking by default');
  const running = runOf(call('delete', { id: 5 }));
  await tick();
  assert.equal(asked.length, 1);
  const [q] = presence.questions();
  assert.equal(q.title, 'Delete items');
  assert.deepEqual(q.why, ['it deletes items']);
  assert.equal(q.sentence, 'Claude asks to delete items. Allow?');
  presence.answer(q.id, 'once');
  assert.deepEqual(await running, { step: 2 });
  assert.equal(answered.length, 1);
  const again = runOf(call('delete', { id: 6 }));
  await tick();
  assert.equal(presence.questions().length, 1, 'Allow once is for that call only');
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(again, (e) => e instanceof NotRun && /declined “Delete items”/.test(e.message));
  assert.deepEqual(steps, [1, 2]);
});

test('This connection allows the tool for that connection for the page’s life; Always of a verified client, for that client until revoked', async () => {
  const { presence, runOf } = presenceOf();
  const first = runOf(call('delete'));
  await tick();
  presence.answer(presence.questions()[0].id, 'connection');
  await first;
  await runOf(call('delete'));
  assert.deepEqual(presence.grantsOf('c1'), ['delete']);
  assert.deepEqual(presence.grants(), [{ scope: 'c1', who: 'Claude (this connection)', tool: 'delete', title: 'Delete items', until: 'tab' }]);
  const other = runOf(call('delete', { agent: 'ChatGPT', connection: { id: 'c2', verified: 'openai.com' } }));
  await tick();
  assert.equal(presence.questions().length, 1, 'another connection is asked');
  presence.answer(presence.questions()[0].id, 'always');
  await other;
  assert.deepEqual(presence.settings().kinds, {}, 'no rule changed: the mode is not Custom');
  assert.equal(presence.isCustom(), false);
  const who = 'openai.com’s app (each of its connections)';
  assert.deepEqual(presence.settings().grants, { 'client:openai.com': { who, tools: ['delete'] } });
  assert.equal(presence.settingOf('delete'), 'asks', 'the tool list, every agent’s, still says it asks');
  assert.deepEqual(presence.grants().map((g) => [g.scope, g.who, g.until]), [['client:openai.com', who, 'revoked'], ['c1', 'Claude (this connection)', 'tab']]);
});

test('a question is withdrawn when the agent cancels, when the person presses Stop, and when moot', async () => {
  const { presence, runOf, steps } = presenceOf();
  const cancelled = runOf(call('delete', { id: 'x' }));
  await tick();
  presence.cancel('x');
  await assert.rejects(cancelled, new RegExp(SENTENCES.CANCELLED.slice(0, 20)));
  assert.equal(presence.questions().length, 0);

  const asking = runOf(call('delete', { turn: 2 }));
  const queued = runOf(call('edit', { turn: 2 }));
  await tick();
  const [line] = presence.lines().filter((l) => l.turn === 2);
  assert.equal(line.waiting, 2);
  presence.stop(line.key);
  await assert.rejects(asking, /pressed Stop/);
  await assert.rejects(queued, /pressed Stop/, 'Stop refuses the turn’s queued calls too');
  await assert.rejects(runOf(call('edit', { turn: 2 })), /pressed Stop/, 'and what the turn sends after');
  assert.equal(presence.questions().length, 0);
  assert.equal(presence.goOn('c1'), true, 'Stop stopped the agent until the person lets it go on');

  const moot = runOf(call('delete', { turn: 3 }));
  await tick();
  presence.withdrawAll('another dataset is shown');
  await assert.rejects(moot, /withdrawn .*another dataset is shown/);
  assert.deepEqual(steps, []);
});

test('a call under way is told to stop by Stop and by the agent’s cancel; one that stops says so, one that cannot finishes', async () => {
  const { presence } = presenceOf();
  /** A run that waits until told to stop (like the demo's long comparison between slices). */
  const stoppable = (started) => (signal) => new Promise((resolve, reject) => {
    started();
    signal.addEventListener('abort', () => reject(signal.reason));
  });
  let started = false;
  const stopped = presence.run(call('read', { turn: 7 }), stoppable(() => (started = true)));
  await tick();
  assert.ok(started, 'the read runs without asking');
  const [line] = presence.lines().filter((l) => l.turn === 7);
  presence.stop(line.key);
  await assert.rejects(stopped, (e) => e instanceof NotRun && e.message === SENTENCES.STOPPED_RUNNING);
  presence.goOn('c1');

  const cancelled = presence.run(call('read', { id: 'r', turn: 8 }), stoppable(() => {}));
  await tick();
  presence.cancel('r');
  await assert.rejects(cancelled, (e) => e instanceof NotRun && e.message === SENTENCES.CANCELLED_RUNNING);

  // A run that does not listen finishes, and its result stands: nothing claims it stopped.
  let finish;
  const deaf = presence.run(call('read', { turn: 9 }), () => new Promise((r) => (finish = r)));
  await tick();
  presence.stop(presence.lines().find((l) => l.turn === 9).key);
  finish({ data: 'done' });
  assert.deepEqual(await deaf, { data: 'done' });
});

test('one activity line per connection, agent and turn; Undo turn gives the app the turn’s steps, newest first', async () => {
  const { presence, runOf, undone } = presenceOf();
  await runOf(call('edit'));
  await runOf(call('edit'));
  await runOf(call('edit', { agent: 'ChatGPT', connection: { id: 'c2' } }));
  const lines = presence.lines();
  assert.equal(lines.length, 2, 'two agents, two lines');
  assert.deepEqual(lines[0].steps, [1, 2]);
  assert.equal(lines[0].done, true);
  // Claude's turn is not the newest: its Undo asks first, and runs only on the second yes.
  assert.equal(presence.undoAsks(lines[0].key), true);
  assert.equal(presence.undoAsks(lines[1].key), false, 'the newest turn is undone at once');
  assert.equal(await presence.undoTurn(lines[0].key), false, 'not without the second yes');
  assert.deepEqual(undone, []);
  assert.equal(await presence.undoTurn(lines[0].key, { confirmed: true }), true);
  assert.deepEqual(undone, [2, 1]);
  assert.equal(await presence.undoTurn(lines[0].key, { confirmed: true }), false, 'once');

  assert.equal(presence.dismiss(lines[0].key), true);
  assert.equal(presence.lines().length, 1);
  await runOf(call('edit', { turn: 2 }));
  const older = presence.lines().find((l) => l.turn === 2);
  await runOf(call('edit', { turn: 3 }));
  presence.dismiss(presence.lines().find((l) => l.turn === 3).key);
  assert.equal(presence.undoAsks(older.key), true, 'a later turn’s steps count once its line is dismissed too');
});

test('calls the settings deny never run and say why', async () => {
  const { presence, runOf, steps } = presenceOf();
  presence.store.setMode('read-only');
  await assert.rejects(runOf(call('edit')), /settings refuse “Edit a value” \(it changes what the tab shows/);
  assert.deepEqual(await runOf(call('read')), { step: 1 });
  assert.deepEqual(steps, [1]);
});

test('the presence’s listeners hear a change of the permissions, so what shows them follows', () => {
  const { presence } = presenceOf();
  let heard = 0;
  presence.subscribe(() => (heard += 1));
  presence.store.setMode('undoable');
  assert.equal(heard, 1);
  assert.equal(presence.settingOf('edit'), 'runs');
});

test('the oldest lines done acting leave by themselves beyond LINES_KEPT', async () => {
  const { presence, runOf } = presenceOf();
  for (let turn = 1; turn <= LINES_KEPT + 5; turn += 1) await runOf(call('edit', { turn }));
  const lines = presence.lines();
  assert.equal(lines.length, LINES_KEPT);
  assert.equal(lines[0].turn, 6, 'the oldest went first');
});

test('Stop stops the agent, not only the turn: its next calls are refused until the person lets it go on', async () => {
  const { presence, runOf, steps } = presenceOf();
  const heard = { stopped: [], goOn: [] };
  presence.onStopped = (line) => heard.stopped.push(line.connection.id);
  presence.onGoOn = (id) => heard.goOn.push(id);
  const asked = runOf(call('delete', { turn: 1 }));
  const other = runOf(call('delete', { turn: 1, agent: 'ChatGPT', connection: { id: 'c2' } }));
  await tick();
  presence.stop(presence.lines().find((l) => l.connection.id === 'c1').key);
  await assert.rejects(asked, /pressed Stop/);
  assert.deepEqual(heard.stopped, ['c1'], 'the relay client hears it (to tell the relay)');
  // A looping agent: its next turn's call is refused before it asks or runs.
  await assert.rejects(runOf(call('edit', { turn: 2 })), (e) => e instanceof NotRun && e.message === SENTENCES.AGENT_STOPPED);
  await assert.rejects(runOf(call('edit', { turn: 3 })), (e) => e.message === SENTENCES.AGENT_STOPPED);
  assert.deepEqual(steps, [], 'nothing of it ran');
  assert.equal(presence.isStopped('c1'), true);
  const held = presence.lines().filter((l) => l.connection.id === 'c1');
  assert.ok(held.length && held.every((l) => l.held), 'its activity lines say it is stopped');
  assert.equal(presence.questions().length, 1, 'another agent is not stopped');
  presence.answer(presence.questions()[0].id, 'once');
  await other;
  assert.equal(presence.goOn('c1'), true);
  assert.deepEqual(heard.goOn, ['c1']);
  assert.equal(presence.goOn('c1'), false, 'once');
  assert.deepEqual(await runOf(call('edit', { turn: 4 })), { step: 2 }, 'it goes on');
  assert.ok(presence.lines().every((l) => !l.held));
});

test('Forget drops the connection’s card, queued and running calls, and what was allowed for it; no call of it runs again', async () => {
  const { presence, runOf, steps } = presenceOf();
  const first = runOf(call('delete', { turn: 1 }));
  await tick();
  presence.answer(presence.questions()[0].id, 'connection');
  await first;
  assert.deepEqual(presence.grantsOf('c1'), ['delete']);
  presence.store.setTool('edit', 'ask');
  const asked = runOf(call('edit', { turn: 2 }));
  const queued = runOf(call('edit', { turn: 2 }));
  let aborted = null;
  const running = presence.run(call('read', { turn: 3 }), (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject((aborted = signal.reason)))));
  const theirs = runOf(call('delete', { turn: 1, agent: 'ChatGPT', connection: { id: 'c2' } }));
  await tick();
  assert.equal(presence.questions().length, 2);
  presence.forget('c1');
  await assert.rejects(asked, (e) => e instanceof NotRun && e.message === SENTENCES.FORGOTTEN);
  await assert.rejects(queued, (e) => e.message === SENTENCES.FORGOTTEN);
  await assert.rejects(running, (e) => e.message === SENTENCES.FORGOTTEN);
  assert.ok(aborted, 'the running call’s signal aborted');
  assert.deepEqual(presence.questions().map((q) => q.call.connection.id), ['c2'], 'its card is gone; another’s stays');
  assert.deepEqual(presence.grantsOf('c1'), [], 'what was allowed for it is dropped');
  assert.deepEqual(presence.grants(), [], 'nothing is listed for it');
  await assert.rejects(runOf(call('edit', { turn: 4 })), (e) => e.message === SENTENCES.FORGOTTEN);
  assert.deepEqual(steps, [1], 'only the call before Forget ran');
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(theirs, /declined/);
});

