// The decisions that give an agent power count only once the person's presence was proven
// (the presence's `confirmPresence`, ./presence-check.js in the page): Allow on an irreversible
// call and "Always" wait for it, and a refusal leaves the card where it was, with its sentence;
// an undoable call's Allow once and every Deny never ask. A looser mode, rule or tool choice is
// told apart from a stricter one (`loosens`), so only the looser asks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence, loosens, answerNeedsPresence } from '../../tab/presence.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'edit', title: 'Edit a value', safety: 'change' },
  { name: 'delete', title: 'Delete items', safety: 'destructive' },
];
const tick = () => new Promise((r) => setTimeout(r, 0));
const connection = { id: 'c1', client: 'Claude', host: 'claude.ai' };
let ids = 0;
const call = (tool) => ({ id: ++ids, tool, args: {}, agent: 'Claude', connection, turn: 1 });

function presenceWith(device) {
  const asked = [];
  const presence = createPresence({
    app: 'proven',
    storage: new Storage(),
    tools: TOOLS,
    confirmKinds: { delete: ['deletes-saved'] },
    confirmPresence: async (decision, subject) => {
      asked.push([decision, subject]);
      if (!device.verifies) throw new Error('Your device did not confirm it was you.');
      return { verified: true };
    },
  });
  // Every change asks in this test, so an undoable call has a card too.
  presence.store.setKind('change', 'ask');
  return { presence, asked };
}

test('Allow on an irreversible call waits for the person’s device; refused, the card stays and nothing runs', async () => {
  const device = { verifies: false };
  const { presence, asked } = presenceWith(device);
  const ran = [];
  const c = call('delete');
  const running = presence.run(c, () => ran.push(c.id));
  await tick();
  const [q] = presence.questions();
  assert.equal(q.risk, 'irreversible');
  assert.equal(await presence.answer(q.id, 'once'), false);
  assert.deepEqual(asked, [['answer', `${c.id}\nonce`]], 'asked for this call and this answer');
  assert.equal(presence.questions()[0]?.id, q.id, 'the card stays');
  assert.equal(presence.questions()[0].presenceRefused, 'Your device did not confirm it was you.');
  assert.deepEqual(ran, [], 'nothing ran');
  device.verifies = true;
  assert.equal(await presence.answer(q.id, 'once'), true);
  await running;
  assert.deepEqual(ran, [c.id]);
});

test('Always waits for the device even on an undoable call; Allow once of an undoable call and Deny never ask', async () => {
  const { presence, asked } = presenceWith({ verifies: true });
  const once = presence.run(call('edit'), () => 'ok');
  await tick();
  assert.equal(presence.answer(presence.questions()[0].id, 'once'), true, 'answered at once, not a promise');
  await once;
  const denied = presence.run(call('delete'), () => 'ran').catch((e) => e.outcome);
  await tick();
  assert.equal(presence.answer(presence.questions()[0].id, 'deny'), true);
  assert.equal(await denied, 'declined by the person');
  assert.deepEqual(asked, []);
  const always = presence.run(call('edit'), () => 'ok');
  await tick();
  assert.equal(await presence.answer(presence.questions()[0].id, 'always'), true);
  await always;
  assert.equal(asked.length, 1);
  assert.equal(answerNeedsPresence('undoable', 'connection'), false);
  assert.equal(answerNeedsPresence('irreversible', 'connection'), true);
});

test('a second press while the device is asked does nothing', async () => {
  const { presence, asked } = presenceWith({ verifies: true });
  const running = presence.run(call('delete'), () => 'ok');
  await tick();
  const [q] = presence.questions();
  const first = presence.answer(q.id, 'once');
  assert.equal(presence.answer(q.id, 'always'), false);
  assert.equal(await first, true);
  await running;
  assert.equal(asked.length, 1);
});

test('looser settings are told from stricter ones', () => {
  const careful = { mode: 'careful', kinds: {}, tools: {}, grants: {} };
  const kinds = ['change', 'heavy', 'deletes-saved'];
  assert.equal(loosens(careful, { mode: 'undoable' }, kinds), true, 'heavy ask → allow');
  assert.equal(loosens(careful, { mode: 'read-only' }, kinds), false);
  assert.equal(loosens({ ...careful, mode: 'read-only' }, { mode: 'careful' }, kinds), true);
  assert.equal(loosens(careful, { kind: 'deletes-saved', decision: 'allow' }, kinds), true);
  assert.equal(loosens(careful, { kind: 'change', decision: 'deny' }, kinds), false);
  assert.equal(loosens(careful, { tool: 'delete', decision: 'allow' }, kinds), true);
  assert.equal(loosens({ ...careful, tools: { delete: 'deny' } }, { tool: 'delete', decision: null }, kinds), true);
  assert.equal(loosens(careful, { tool: 'delete', decision: 'ask' }, kinds), false);
});
