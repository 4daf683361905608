// "Always" on a card the chat's call raised is kept for the chat bar of this app, every
// conversation of it: a conversation's id is new on each page load, so a grant kept under it
// would never apply again. The card's button says so; after a reload (a new presence and a new
// chat over the same storage) the chat's call of that tool runs without a card; a remote agent's
// call of the same tool still asks, and the grant is listed, and revocable, as the chat's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat } from '../../tab/chat.js';
import { createPresence, CHAT_SCOPE, UNTIL } from '../../tab/presence.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());
const TOOLS = [{ name: 'delete', title: 'Delete items', safety: 'destructive' }];
const until = async (test) => {
  for (let i = 0; i < 1000 && !test(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(test(), 'waited for it');
};

/** A page load: a presence and a chat over the browser's storage. */
async function load(storage) {
  const presence = createPresence({ app: 'a', storage, tools: TOOLS, confirmKinds: { delete: ['deletes-saved'] } });
  const ran = [];
  const handle = (call) => presence.run(call, () => (ran.push(call.connection?.id), { data: { deleted: 2 } }));
  const chat = createChat({ app: 'a', presence, handle, tools: () => [{ name: 'delete', definition: { name: 'delete', description: 'Delete', inputSchema: { type: 'object' } } }], origins: { anthropic: played.origin }, session: new MemoryStorage(), local: storage });
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();
  return { presence, chat, ran, handle };
}

test('Always on the chat’s card is kept for the chat’s every conversation, and says so', { timeout: 15_000 }, async () => {
  played = await playProvider('anthropic');
  const storage = new MemoryStorage();
  const first = await load(storage);
  played.script({ answer: [{ tool: { name: 'delete', input: { ids: [1, 2] } } }] }, { answer: [{ text: 'Deleted.' }] });
  const turn = first.chat.send('Delete 1 and 2');
  await until(() => first.presence.questions().length);
  const [q] = first.presence.questions();
  const always = q.choices.find((c) => c.choice === 'always');
  assert.equal(always.words, `Allow “Delete items” for your chat in this app (every conversation) ${UNTIL.revoked}`);
  assert.equal(await first.presence.answer(q.id, 'always'), true);
  await turn;
  assert.deepEqual(first.ran, [first.chat.id]);
  assert.deepEqual(first.presence.grants().map((g) => [g.scope, g.who, g.until]), [[CHAT_SCOPE, 'your chat in this app (every conversation)', 'revoked']]);

  // The page is loaded again: a new conversation, its id new.
  const second = await load(storage);
  assert.notEqual(second.chat.id, first.chat.id);
  played.script({ answer: [{ tool: { name: 'delete', input: { ids: [3] } } }] }, { answer: [{ text: 'Deleted.' }] });
  const asked = [];
  second.presence.watch((e) => e.type === 'asking' && asked.push(e));
  await second.chat.send('Delete 3');
  assert.deepEqual(second.ran, [second.chat.id], 'ran without a card');
  assert.equal(asked.length, 0);

  // A remote agent's call of the same tool still asks.
  const remote = second.handle({ id: 'r1', tool: 'delete', args: {}, agent: 'Claude', connection: { id: 'c1', client: 'Claude', host: 'claude.ai' }, turn: 1 });
  await until(() => second.presence.questions().length);
  assert.equal(second.presence.questions()[0].call.connection.id, 'c1');
  second.presence.answer(second.presence.questions()[0].id, 'deny');
  await remote.catch(() => {});

  // Revoked: the chat asks again.
  assert.equal(second.presence.revoke(second.presence.grants()[0]), true);
  played.script({ answer: [{ tool: { name: 'delete', input: { ids: [4] } } }] }, { answer: [{ text: 'No.' }] });
  const again = second.chat.send('Delete 4');
  await until(() => second.presence.questions().length);
  second.presence.answer(second.presence.questions()[0].id, 'deny');
  await again;
});
