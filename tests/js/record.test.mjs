// The record of what agents did, without a page: every call kept with when, which agent and
// connection, which tool, the person's decision, a one-line outcome and whether it was undone;
// bounded by count and age; cleared; exported as JSON and CSV (escaped); and never what the
// data switch hid (nor any argument or result).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence, NotRun } from '../../tab/presence.js';
import { createDataSwitch, guardCall } from '../../tab/data-guard.js';
import { createRecord, memoryBackend, toCsv, toJson, csvCell, bounded, filtered, RECORD_LIMITS, RECORD_COLUMNS, DECISION_WORDS, SWITCH_OUTCOMES, NOT_RUN } from '../../tab/record.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'read', title: 'Read values', safety: 'read', data: 'cells' },
  { name: 'mean', title: 'Mean of a group', safety: 'read', data: 'summaries', summaries_only: { result: ['mean'], errors: 'as_said' } },
  { name: 'delete', title: 'Delete items', safety: 'destructive' },
  { name: 'highlight', title: 'Highlight items', safety: 'change' },
];
const CONFIRM = { delete: ['deletes-saved'] };
const SECRET = 'SECRET-VALUE-4711';
const call = (tool, extra = {}) => ({ id: Math.random(), tool, args: { ids: [SECRET] }, agent: 'Claude', connection: { id: 'c1', client: 'Claude', host: 'claude.ai' }, turn: 1, ...extra });
const tick = () => new Promise((r) => setTimeout(r, 0));

/** A presence, a data switch, and the record kept through both (as the demo wires them). */
function setUp({ now = () => 1_000_000, limits, backend = memoryBackend() } = {}) {
  const presence = createPresence({ app: 't', storage: new Storage(), tools: TOOLS, confirmKinds: CONFIRM, stepOf: (r) => r?.step ?? null, undoTurn: async () => {} });
  const dataSwitch = createDataSwitch({ app: 't', storage: new Storage() });
  const record = createRecord({ app: 't', backend, now, limits, channel: null });
  record.follow(presence);
  const door = record.door((c, fn) => guardCall({ tool: TOOLS.find((t) => t.name === c.tool), dataset: 'd', dataSwitch }, () => presence.run(c, fn)));
  return { presence, dataSwitch, record, door, backend };
}

test('every call is kept: agent, connection, tool, the person’s decision, the outcome, undone', async () => {
  const { presence, record, door } = setUp();
  await record.ready;
  assert.deepEqual(await door(call('read'), async () => ({ data: { value: SECRET } })), { data: { value: SECRET } });
  const asked = door(call('delete', { agent: 'Other agent', connection: { id: 'c2', host: 'other.example' } }), async () => ({ data: { deleted: 1 }, step: 7 }));
  await tick();
  presence.answer(presence.questions()[0].id, 'once');
  await asked;
  const denied = door(call('delete'), async () => ({ data: {} }));
  await tick();
  presence.answer(presence.questions()[0].id, 'deny');
  await assert.rejects(denied, NotRun);
  const failed = door(call('read'), async () => {
    throw new Error(`no item ${SECRET}`);
  });
  await assert.rejects(failed);
  const rows = record.entries().map(({ agent, connection, from, tool, decision, outcome, undone }) => ({ agent, connection, from, tool, decision, outcome, undone }));
  assert.deepEqual(rows, [
    { agent: 'Claude', connection: 'c1', from: 'claude.ai', tool: 'read', decision: DECISION_WORDS.settings, outcome: 'done', undone: false },
    { agent: 'Other agent', connection: 'c2', from: 'other.example', tool: 'delete', decision: DECISION_WORDS.once, outcome: 'done', undone: false },
    { agent: 'Claude', connection: 'c1', from: 'claude.ai', tool: 'delete', decision: DECISION_WORDS.deny, outcome: 'declined by the person', undone: false },
    { agent: 'Claude', connection: 'c1', from: 'claude.ai', tool: 'read', decision: DECISION_WORDS.settings, outcome: 'failed', undone: false },
  ]);
  // Undo turn of the line marks the call whose step it took back.
  const line = presence.lines().find((l) => l.agent === 'Other agent');
  assert.equal(await presence.undoTurn(line.key), true);
  assert.equal(record.entries()[1].undone, true);
  assert.equal(record.entries().filter((e) => e.undone).length, 1);
  assert.ok(!JSON.stringify(record.entries()).includes(SECRET), 'no argument, result or error message is kept');
});

test('what the data switch hid is not recorded: a refusal and a withheld result say so in the tab end’s words', async () => {
  const { dataSwitch, record, door } = setUp();
  dataSwitch.set('d', true);
  await assert.rejects(door(call('read'), async () => ({ data: { value: SECRET } })));
  const summary = await door(call('mean'), async () => ({ data: { mean: 3, values: [SECRET] } }));
  assert.equal(summary.data.mean, 3);
  assert.ok(!JSON.stringify(summary).includes(SECRET), 'the switch hid the values from the agent');
  dataSwitch.set('d', false);
  await assert.rejects(
    door(call('read'), async () => {
      dataSwitch.set('d', true);
      return { data: { value: SECRET } };
    }),
  );
  const [refused, summed, withheld] = record.entries();
  assert.deepEqual([refused.decision, refused.outcome], [DECISION_WORDS.dataSwitch, SWITCH_OUTCOMES.refused]);
  assert.equal(summed.outcome, 'done');
  assert.equal(withheld.outcome, SWITCH_OUTCOMES.withheld);
  const exported = toJson(record.entries()) + toCsv(record.entries());
  assert.ok(!exported.includes(SECRET) && !JSON.stringify(record.entries()).includes(SECRET));
});

test('a call refused before the tab ran anything is kept too', async () => {
  const { record } = setUp();
  record.refused(call('delete'));
  assert.deepEqual([record.entries()[0].decision, record.entries()[0].outcome], [DECISION_WORDS.refused, NOT_RUN]);
});

test('each call names what allowed it: the settings, a card’s answer, or the grant it made (per kind), in the export too', async () => {
  const { presence, record, door } = setUp({ now: () => Date.UTC(2026, 11, 5, 12) });
  await record.ready;
  presence.store.setKind('change', 'ask');
  const answered = async (c, choice) => {
    const done = door(c, async () => ({ data: 1 }));
    await tick();
    presence.answer(presence.questions()[0].id, choice);
    return done;
  };
  await door(call('read'), async () => ({ data: 1 }));
  await answered(call('delete'), 'connection');
  await door(call('delete'), async () => ({ data: 1 }));
  await answered(call('highlight'), 'always');
  await door(call('highlight'), async () => ({ data: 1 }));
  await answered(call('highlight', { connection: { id: 'c2', host: 'other.example' } }), 'once');
  presence.store.setTool('read', 'deny');
  await assert.rejects(door(call('read'), async () => ({ data: 1 })), NotRun);
  const decisions = record.entries().map((e) => [e.tool, e.decision]);
  assert.deepEqual(decisions, [
    ['read', 'allowed by your settings'],
    ['delete', 'allowed for this connection until the tab closes'],
    ['delete', 'allowed by your grant for this connection until the tab closes'],
    ['highlight', 'allowed until you revoke it'],
    ['highlight', 'allowed by your grant until you revoke it'],
    ['highlight', 'allowed once'],
    ['read', 'refused by your settings'],
  ]);
  assert.ok(!decisions.some(([, d]) => /always/.test(d)), 'never “allowed always”');
  const refused = record.entries().at(-1);
  assert.equal(refused.outcome, NOT_RUN, 'the outcome does not say the decision again');
  // The tool by its title where it is shown; the export keeps its name.
  assert.deepEqual([...new Set(record.entries().map((e) => e.title))], ['Read values', 'Delete items', 'Highlight items']);
  const csv = toCsv(record.entries()).split('\r\n');
  assert.equal(csv[3], '2026-12-05T12:00:00.000Z,Claude,c1,claude.ai,delete,allowed by your grant for this connection until the tab closes,done,false');
  assert.equal(csv[5], '2026-12-05T12:00:00.000Z,Claude,c1,claude.ai,highlight,allowed by your grant until you revoke it,done,false');
  assert.deepEqual(JSON.parse(toJson(record.entries())).map((r) => r.decision), decisions.map(([, d]) => d));
});

test('a chat’s calls name what allowed them as its card did: for this chat, or for your chat in this app (every conversation)', async () => {
  const { presence, record, door } = setUp();
  await record.ready;
  presence.store.setKind('change', 'ask');
  const chat = (tool, id = 'conversation-1') => call(tool, { agent: 'Claude Sonnet', connection: { id, kind: 'chat', client: 'your chat in this tab', host: '' } });
  const answered = async (c, choice) => {
    const done = door(c, async () => ({ data: 1 }));
    await tick();
    presence.answer(presence.questions()[0].id, choice);
    return done;
  };
  await answered(chat('delete'), 'connection');
  await door(chat('delete'), async () => ({ data: 1 }));
  await answered(chat('highlight'), 'always');
  // Kept for the chat in this app: another conversation's call runs by it.
  await door(chat('highlight', 'conversation-2'), async () => ({ data: 1 }));
  const decisions = record.entries().map((e) => [e.tool, e.decision]);
  assert.deepEqual(decisions, [
    ['delete', 'allowed for this chat until the tab closes'],
    ['delete', 'allowed by your grant for this chat until the tab closes'],
    ['highlight', 'allowed for your chat in this app until you revoke it'],
    ['highlight', 'allowed by your grant for your chat in this app until you revoke it'],
  ]);
  assert.ok(!decisions.some(([, d]) => /connection/.test(d)), 'a chat is not called a connection');
  assert.deepEqual(filtered(record.entries(), { show: 'asked' }).map((e) => e.decision), [decisions[0][1], decisions[2][1]], 'the card’s answers are among Asked you');
  assert.deepEqual(JSON.parse(toJson(record.entries())).map((r) => r.decision), decisions.map(([, d]) => d));
});

test('the record is bounded by count and by age, in memory and in the store', async () => {
  let now = 0;
  const backend = memoryBackend();
  const { record, door } = setUp({ now: () => now, limits: { entries: 3, ageMs: 1_000 }, backend });
  for (let i = 0; i < 5; i += 1) {
    now += 10;
    await door(call('read', { agent: `agent ${i}` }), async () => ({ data: 1 }));
  }
  assert.deepEqual(record.entries().map((e) => e.agent), ['agent 2', 'agent 3', 'agent 4'], 'the oldest past the count go');
  await record.written();
  assert.equal((await backend.all()).length, 3);
  now += 995; // agent 2 (at 30) is now older than 1000 ms; agent 3 and 4 not yet
  await door(call('read', { agent: 'late' }), async () => ({ data: 1 }));
  assert.deepEqual(record.entries().map((e) => e.agent), ['agent 4', 'late'], 'the calls older than the age go');
  await record.written();
  assert.deepEqual((await backend.all()).map((e) => e.agent).sort(), ['agent 4', 'late']);
  assert.deepEqual(bounded([{ id: 'a', at: 0 }], 10, { entries: 1, ageMs: 5 }).drop.map((e) => e.id), ['a']);
  assert.ok(RECORD_LIMITS.entries > 0 && RECORD_LIMITS.ageMs >= 24 * 3600 * 1000);
});

test('a record opened later reads what was kept; clear empties it for good', async () => {
  const backend = memoryBackend();
  const first = setUp({ backend });
  await first.door(call('read'), async () => ({ data: 1 }));
  await first.record.written();
  const later = createRecord({ app: 't', backend, channel: null, now: () => 1_000_000 });
  await later.ready;
  assert.deepEqual(later.entries().map((e) => e.tool), ['read']);
  await later.clear();
  assert.deepEqual(later.entries(), []);
  assert.deepEqual(await backend.all(), []);
  const again = createRecord({ app: 't', backend, channel: null });
  await again.ready;
  assert.deepEqual(again.entries(), []);
});

test('exports: JSON rows and CSV rows are the calls, the CSV escaped', async () => {
  const { record, door } = setUp({ now: () => Date.UTC(2026, 11, 1, 12) });
  await door(call('read', { agent: 'Agent "Quoted", with comma\nand line' }), async () => ({ data: 1 }));
  await door(call('read', { agent: '=HYPERLINK("http://x")' }), async () => ({ data: 1 }));
  const json = JSON.parse(toJson(record.entries()));
  assert.deepEqual(Object.keys(json[0]), [...RECORD_COLUMNS]);
  assert.equal(json[0].when, '2026-12-01T12:00:00.000Z');
  assert.equal(json[0].agent, 'Agent "Quoted", with comma and line', 'a line break in a name is kept as a space');
  assert.equal(json[1].undone, false);
  const csv = toCsv(record.entries());
  const lines = csv.split('\r\n');
  assert.equal(lines[0], RECORD_COLUMNS.join(','));
  assert.equal(lines[1], '2026-12-01T12:00:00.000Z,"Agent ""Quoted"", with comma and line",c1,claude.ai,read,allowed by your settings,done,false');
  assert.equal(lines[2], `2026-12-01T12:00:00.000Z,"'=HYPERLINK(""http://x"")",c1,claude.ai,read,allowed by your settings,done,false`);
  assert.equal(lines.length, 4, 'a header, a row per call, and the last line break');
  assert.equal(csvCell('a\nb'), '"a\nb"');
  assert.equal(csvCell('-1'), "'-1");
  assert.equal(csvCell('plain'), 'plain');
});

test('filters: by agent, asked the person, refused or denied, undone', () => {
  const entries = [
    { id: '1', at: 1, agent: 'A', decision: DECISION_WORDS.once, outcome: 'done', undone: true },
    { id: '2', at: 2, agent: 'B', decision: DECISION_WORDS.dataSwitch, outcome: SWITCH_OUTCOMES.refused, undone: false },
    { id: '3', at: 3, agent: 'A', decision: DECISION_WORDS.settings, outcome: 'done', undone: false },
  ];
  const ids = (f) => filtered(entries, f).map((e) => e.id);
  assert.deepEqual(ids({ agent: 'A' }), ['1', '3']);
  assert.deepEqual(ids({ show: 'asked' }), ['1']);
  assert.deepEqual(ids({ show: 'refused' }), ['2']);
  assert.deepEqual(ids({ show: 'undone' }), ['1']);
});
