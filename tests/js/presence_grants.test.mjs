// Grants the person can see and take back, decided without any page: each card button says
// what it grants, to whom and until when; a grant from an unverified client's card is for that
// connection only (kept until revoked, listed under it), and from a verified client's card for
// that client only (its every connection), never for all agents; every grant is listed and
// revocable;
// choosing a mode (the same one again too) takes every grant back and says so; a changed
// kind's rule makes the mode read Custom.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence, choicesOf, grantScopeOf, ALL_AGENTS, CLIENT_SCOPE, MODE_CHOICE, UNTIL } from '../../tab/presence.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'edit', title: 'Edit a value', safety: 'change' },
  { name: 'delete', title: 'Delete items', safety: 'destructive' },
];
const tick = () => new Promise((r) => setTimeout(r, 0));
const unverified = { id: 'c1', client: 'Claude', host: 'evil.example' };
const verified = { id: 'c2', client: 'ChatGPT', host: 'chatgpt.com', verified: 'openai.com' };
const call = (connection, extra = {}) => ({ id: Math.random(), tool: 'delete', args: {}, agent: connection?.client ?? 'An agent', connection, turn: 1, ...extra });

function presenceOf(storage = new Storage()) {
  const presence = createPresence({ app: 'grants', storage, tools: TOOLS, confirmKinds: { delete: ['deletes-saved'] } });
  const ran = [];
  const runOf = (c) => presence.run(c, () => ran.push(c.connection?.id ?? null));
  return { presence, ran, runOf, storage };
}

/** Runs `c` and answers its card with `choice`; returns the card's question. */
async function answered(presence, runOf, c, choice) {
  const running = runOf(c);
  await tick();
  const [q] = presence.questions();
  assert.ok(q, 'a card asks');
  assert.equal(presence.answer(q.id, choice), true);
  await running;
  return q;
}

test('each button says what it grants, to whom and until when', () => {
  const words = (c) => Object.fromEntries(choicesOf({ call: c, title: 'Delete items' }).map((x) => [x.choice, x.words]));
  assert.deepEqual(words(call(unverified)), {
    deny: 'Deny this call',
    connection: `Allow “Delete items” for Claude (this connection) ${UNTIL.tab}`,
    always: `Allow “Delete items” for Claude (this connection) ${UNTIL.revoked}`,
    once: 'Allow this call only',
  });
  assert.equal(words(call(verified)).always, `Allow “Delete items” for openai.com’s app (each of its connections) ${UNTIL.revoked}`);
  assert.equal(words(call(null)).connection, undefined, 'no connection, no connection grant');
  assert.equal(words(call(null)).always, `Allow “Delete items” for all agents ${UNTIL.revoked}`, 'agents in the page');
  assert.equal(grantScopeOf(call(unverified)), 'c1');
  assert.equal(grantScopeOf(call(verified)), `${CLIENT_SCOPE}openai.com`);
  assert.equal(grantScopeOf(call(null)), ALL_AGENTS);
});

test('Always on an unverified client’s card applies to that connection only, kept until revoked', async () => {
  const storage = new Storage();
  const { presence, runOf, ran } = presenceOf(storage);
  const q = await answered(presence, runOf, call(unverified), 'always');
  assert.match(q.choices.find((c) => c.choice === 'always').words, /for Claude \(this connection\)/);
  await runOf(call(unverified));
  assert.equal(presence.questions().length, 0, 'that connection runs without a card');
  const other = runOf(call({ id: 'c3', client: 'Claude', host: 'claude.ai' }));
  await tick();
  assert.equal(presence.questions().length, 1, 'another connection, even of the same name, is asked');
  assert.equal(presence.settingOf('delete'), 'asks', 'agents still read that the tool asks');
  assert.deepEqual(presence.settings().kinds, {}, 'no rule changed');
  assert.equal(presence.isCustom(), false);
  assert.deepEqual(presence.grants(), [{ scope: 'c1', who: 'Claude (this connection)', tool: 'delete', title: 'Delete items', until: 'revoked' }]);
  // Kept in the browser: a tab opened later lists and honours it.
  const later = presenceOf(storage);
  assert.deepEqual(later.presence.grants().map((g) => g.scope), ['c1']);
  presence.answer(presence.questions()[0].id, 'deny');
  await other.catch(() => {});
  assert.deepEqual(ran, ['c1', 'c1']);
});

test('Revoke takes a grant back: the connection is asked again', async () => {
  const { presence, runOf } = presenceOf();
  await answered(presence, runOf, call(unverified), 'connection');
  await answered(presence, runOf, call(verified), 'always');
  assert.deepEqual(presence.grants().map((g) => `${g.who} ${g.until}`), ['openai.com’s app (each of its connections) revoked', 'Claude (this connection) tab']);
  for (const g of presence.grants()) assert.equal(presence.revoke(g), true);
  assert.deepEqual(presence.grants(), []);
  assert.equal(presence.revoke({ scope: 'c1', tool: 'delete', until: 'tab' }), false, 'once');
  const again = runOf(call(unverified));
  await tick();
  assert.equal(presence.questions().length, 1, 'asked again');
  presence.answer(presence.questions()[0].id, 'deny');
  await again.catch(() => {});
  assert.equal(presence.settingOf('delete'), 'asks');
});

test('choosing a mode, the same one again too, takes every grant back; a changed rule reads Custom', async () => {
  const { presence, runOf } = presenceOf();
  assert.match(MODE_CHOICE, /takes back every grant/);
  await answered(presence, runOf, call(unverified), 'connection');
  await answered(presence, runOf, call(verified), 'always');
  presence.store.setTool('edit', 'ask');
  presence.store.setKind('change', 'ask');
  assert.equal(presence.isCustom(), true, 'a kind’s rule changed');
  presence.store.setKind('change', 'allow');
  assert.equal(presence.isCustom(), false, 'back to what the mode says');
  presence.store.setKind('heavy', 'allow');
  assert.equal(presence.chooseMode(presence.settings().mode), 2, 'two grants taken back');
  assert.deepEqual(presence.grants(), []);
  assert.equal(presence.isCustom(), false);
  assert.equal(presence.settings().tools.edit, 'ask', 'each tool’s own choice stays');
  const asked = runOf(call(unverified));
  await tick();
  assert.equal(presence.questions().length, 1, 'the connection granted for the tab is asked again under a mode that asks');
  presence.answer(presence.questions()[0].id, 'deny');
  await asked.catch(() => {});
  assert.equal(presence.chooseMode('careful'), 0);
});

test('forgetting a connection takes back its kept grants', async () => {
  const { presence, runOf } = presenceOf();
  await answered(presence, runOf, call(unverified), 'always');
  await answered(presence, runOf, call(verified), 'always');
  presence.forget('c1');
  assert.deepEqual(presence.grants().map((g) => g.scope), [`${CLIENT_SCOPE}openai.com`]);
});

test('Revoke all takes every grant back and keeps the rules', async () => {
  const { presence, runOf } = presenceOf();
  await answered(presence, runOf, call(unverified), 'connection');
  await answered(presence, runOf, call(verified), 'always');
  presence.store.setKind('heavy', 'allow');
  assert.equal(presence.revokeAll(), 2);
  assert.deepEqual(presence.grants(), []);
  assert.equal(presence.settings().kinds.heavy, 'allow', 'the rules stay');
  assert.equal(presence.settingOf('delete'), 'asks');
});

test('Always on a verified client’s card is kept for that client only: a later agent of another client is asked', async () => {
  const storage = new Storage();
  const { presence, runOf, ran } = presenceOf(storage);
  await answered(presence, runOf, call(verified), 'always');
  // That client's later connection runs without a card, in a tab opened later too.
  const later = presenceOf(storage);
  await later.runOf(call({ ...verified, id: 'c9' }));
  assert.equal(later.presence.questions().length, 0, 'the same verified client');
  assert.deepEqual(later.ran, ['c9']);
  // Any other agent, later ones included, is asked: another verified client, an unverified one
  // calling itself by the same name, a connection with no domain.
  for (const other of [
    { id: 'c4', client: 'Claude', host: 'claude.ai', verified: 'claude.ai' },
    { id: 'c5', client: 'ChatGPT', host: 'chatgpt.com' },
    { id: 'c6', client: 'ChatGPT', host: 'chatgpt.com', verified: 'openai.com.example' },
  ]) {
    const asked = runOf(call(other));
    await tick();
    assert.equal(presence.questions().length, 1, `${other.id} is asked`);
    presence.answer(presence.questions()[0].id, 'deny');
    await asked.catch(() => {});
  }
  assert.deepEqual(ran, ['c2']);
  // A grant kept for all agents (stored before this rule) lets no connection's call through,
  // only a call through none (an agent in the page).
  presence.store.grant(ALL_AGENTS, 'all agents', 'delete');
  const asked = runOf(call({ id: 'c7', client: 'Cursor', host: 'cursor.com' }));
  await tick();
  assert.equal(presence.questions().length, 1, 'a connection is asked despite the all-agents grant');
  presence.answer(presence.questions()[0].id, 'deny');
  await asked.catch(() => {});
  await runOf(call(null));
  assert.equal(presence.questions().length, 0, 'a call through no connection runs');
});
