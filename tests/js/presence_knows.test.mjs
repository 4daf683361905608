// The person knows what an agent will do and did (issue 20 item 6), without any page: a card's
// weight and words, the items it names handed to the app's view while it waits, nothing said to
// the relay after a Deny, what a line read or changed with its running time and estimate, Undo
// turn saying why it cannot, the app's refusal (its data switch) stated as refused, and the
// consent's words for what a connection will be able to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence, kindName, riskOf, NotRun } from '../../tab/presence.js';
import { argsInWords, valueInWords, runningWords, didWords } from '../../tab/presence-elements.js';
import { abilitiesWords, abilitiesList, NOW_SWITCH_WORDS } from '../../tab/agents-panel.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'read', title: 'Read values', description: 'Reads the values of items.', safety: 'read' },
  { name: 'edit', title: 'Edit a value', safety: 'change' },
  { name: 'delete', title: 'Delete items', safety: 'change' },
];
const CONFIRM = { delete: ['deletes-items'] };
const call = (tool, extra = {}) => ({ id: extra.id ?? Math.random(), tool, args: {}, agent: 'Claude', connection: { id: 'c1', client: 'Claude', host: 'claude.ai' }, turn: 1, ...extra });
const tick = () => new Promise((r) => setTimeout(r, 0));

function presenceOf(extra = {}) {
  return createPresence({ app: 'knows', storage: new Storage(), tools: TOOLS, confirmKinds: CONFIRM, ...extra });
}

test('a card weighs the risk: a read and an undoable change are not irreversible; a tool with a confirm kind is', async () => {
  assert.equal(riskOf(TOOLS[0], { confirmKinds: CONFIRM }), 'read');
  assert.equal(riskOf(TOOLS[1], { confirmKinds: CONFIRM }), 'undoable');
  assert.equal(riskOf(TOOLS[2], { confirmKinds: CONFIRM }), 'irreversible');
  const presence = presenceOf();
  // The person asks to be asked before the read: a tool-level ask of a read is a read's card.
  presence.store.setTool('read', 'ask');
  const read = presence.run(call('read'), () => 'ok');
  await tick();
  const [q] = presence.questions();
  assert.equal(q.risk, 'read');
  assert.equal(q.description, 'Reads the values of items.', 'the tool’s own words');
  assert.deepEqual(q.kindNames, ['This tool']);
  presence.answer(q.id, 'once');
  await read;
  const del = presence.run(call('delete'), () => 'ok');
  await tick();
  const [d] = presence.questions();
  assert.equal(d.risk, 'irreversible');
  assert.deepEqual(d.kindNames, ['Deletes items'], 'a kind by name, not by identifier');
  presence.answer(d.id, 'once');
  await del;
});

test('kinds and arguments in words: no identifier, no JSON', () => {
  assert.equal(kindName('deletes-items'), 'Deletes items');
  assert.equal(kindName('deletes-items', { 'deletes-items': 'Deleting items' }), 'Deleting items');
  assert.equal(kindName('change'), 'Changes');
  const lines = argsInWords({ ids: [4, 7, 9], column: 'score', permutations: 20000, options: { fast: true, groups: ['A'] } });
  assert.deepEqual(lines, [
    ['Ids', '4, 7 and 9'],
    ['Column', '“score”'],
    ['Permutations', '20,000'],
    ['Options', '(fast yes; groups “A”)'],
  ]);
  for (const [, words] of lines) assert.doesNotMatch(words, /[{}[\]]|":/, 'no JSON');
  assert.equal(valueInWords(Array.from({ length: 14 }, (_, i) => i + 1)), '1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 4 more');
});

test('while a card waits the app is told the items it names, and [] once it is answered', async () => {
  const presence = presenceOf({ itemsOf: (c) => c.args.ids ?? [] });
  const shown = [];
  presence.onShowItems = (items) => shown.push(items);
  const first = presence.run(call('delete', { args: { ids: [4, 7, 4] } }), () => 'ok');
  await tick();
  assert.deepEqual(shown, [[4, 7]], 'marked once, each item once');
  assert.deepEqual(presence.questions()[0].items, [4, 7]);
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(first, NotRun);
  assert.deepEqual(shown, [[4, 7], []], 'unmarked once the card goes');
});

test('after a Deny the relay is told nothing before the result; after an Allow it is told the step runs', async () => {
  const presence = presenceOf();
  const answered = [];
  presence.onAnswered = (q, choice) => answered.push([q.call.tool, choice]);
  const denied = presence.run(call('delete'), () => 'ran');
  await tick();
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(denied, (e) => e instanceof NotRun && /declined/.test(e.message));
  assert.deepEqual(answered, [], 'nothing said to say the step runs');
  const allowed = presence.run(call('delete'), () => 'ran');
  await tick();
  presence.answer(presence.questions()[0].id, 'once');
  assert.equal(await allowed, 'ran');
  assert.deepEqual(answered, [['delete', 'once']]);
});

test('a line says what its turn read and changed, and a running call its time and the app’s estimate', async () => {
  let clock = 1_000_000;
  const presence = presenceOf({ now: () => clock, estimate: (c) => (c.tool === 'read' ? 40_000 : null) });
  presence.store.setKind('heavy', 'allow');
  let finish;
  const running = presence.run(call('read'), () => new Promise((r) => (finish = r)));
  await tick();
  const [line] = presence.lines();
  assert.equal(line.running, 'Read values');
  assert.equal(line.startedMs, 1_000_000);
  assert.equal(line.estimateMs, 40_000);
  assert.equal(runningWords(line, clock + 3_200), ' for 3 s (about 40 s by this app’s measurements)');
  finish({ data: { values: [1] } });
  await running;
  await presence.run(call('edit'), () => ({ data: { summary: 'Set score of item 4 from 3 to 5' } }));
  clock += 1;
  const denied = presence.run(call('delete'), () => 'ran');
  await tick();
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(denied, NotRun);
  const [done] = presence.lines();
  assert.equal(done.done, true);
  assert.equal(done.startedMs, null, 'no running time once done');
  assert.deepEqual(
    done.did.map((d) => d.what),
    ['read', 'changed', 'not-run'],
  );
  assert.equal(didWords(done.did), 'read “Read values”; Set score of item 4 from 3 to 5; “Delete items” not run: declined by the person');
});

test('Undo turn that cannot undo says why on its line', async () => {
  const presence = presenceOf({
    stepOf: (r) => r?.step ?? null,
    undoTurn: () => {
      throw new Error('This turn changed “Survey 1234”, which is no longer shown, so it cannot be undone here.');
    },
  });
  await presence.run(call('edit'), () => ({ step: 1 }));
  const [line] = presence.lines();
  assert.equal(await presence.undoTurn(line.key), false);
  const [after] = presence.lines();
  assert.equal(after.undone, false);
  assert.match(after.undoSaid, /no longer shown, so it cannot be undone/);
});

test('a tool the app refuses before the permissions (its data switch) is stated refused, and the consent says so', () => {
  let on = false;
  const presence = presenceOf({ refuses: (tool) => (on && tool.name === 'read' ? 'The switch refuses it.' : null) });
  assert.equal(presence.settingOf('read'), 'runs');
  assert.equal(presence.refusalOf('read'), null);
  assert.equal(abilitiesWords(presence), 'Under your mode “Ask before heavy or irreversible”, it can use 2 tools (1 that reads, 1 whose changes can be undone) without asking you; 1 tool whose changes cannot be undone only once you allow each call.');
  assert.match(abilitiesList(presence), /^It will be able to use without asking you: “Read values” and “Edit a value”; use only once you allow each call: “Delete items”\. A call the app estimates at 10 s or more asks you first\. You can change/);
  on = true;
  assert.equal(presence.settingOf('read'), 'refused', 'not “runs without asking”');
  assert.equal(presence.refusalOf('read'), 'The switch refuses it.');
  assert.match(abilitiesWords(presence), /it can use 1 tool whose changes can be undone without asking you; .*; 1 refused\.$/);
  assert.match(abilitiesList(presence), /It will not be able to use “Read values” \(refused while “Agents see names and summaries only” is on\)\./);
  assert.match(NOW_SWITCH_WORDS, /^refused while/);
  presence.store.setMode('read-only');
  assert.equal(abilitiesWords(presence), 'Under your mode “Read only”, it cannot use any tool; 3 refused.');
  assert.match(abilitiesList(presence), /^It will not be able to use any tool\. It will not be able to use “Edit a value” and “Delete items” \(you refuse them\); “Read values” \(refused while/);
});
