// The chat's keys, without a page: kept for this tab (sessionStorage) unless the person asks to
// remember one (localStorage, and then only there), removed by Forget key; sent in a header to
// the provider's origin only, never in a URL, a body, the conversation, its export, the record's
// calls or an event; no key and a refused key each said in one sentence.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat, KEY_PREFIX, CHAT_SAID } from '../../tab/chat.js';
import { createPresence } from '../../tab/presence.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { FAILURES } from '../../tab/chat-provider.js';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());

async function setUp() {
  played ||= await playProvider('openai');
  const session = new MemoryStorage();
  const local = new MemoryStorage();
  const presence = createPresence({ app: 'a', storage: new MemoryStorage() });
  const calls = [];
  const events = [];
  const chat = createChat({ app: 'a', presence, handle: (call) => (calls.push(call), presence.run(call, async () => ({ data: { ok: true } }))), tools: () => [{ name: 't', definition: { name: 't', description: 'T', inputSchema: { type: 'object' } } }], origins: { openai: played.origin }, session, local });
  chat.subscribe((e) => events.push(e));
  chat.chooseProvider('openai');
  return { chat, session, local, calls, events };
}

test('a key is kept for this tab, or remembered in this browser only when asked; Forget key removes it', async () => {
  const { chat, session, local } = await setUp();
  const name = `${KEY_PREFIX}:a:openai`;
  chat.setKey('openai', PLAYED_KEY);
  assert.deepEqual([session.getItem(name), local.getItem(name), chat.keyKept()], [PLAYED_KEY, null, 'tab']);
  chat.setKey('openai', PLAYED_KEY, { remember: true });
  assert.deepEqual([session.getItem(name), local.getItem(name), chat.keyKept()], [null, PLAYED_KEY, 'browser']);
  chat.forgetKey('openai');
  assert.deepEqual([session.getItem(name), local.getItem(name), chat.keyKept()], [null, null, null]);
  assert.ok(![...local.map.values()].some((v) => v.includes(PLAYED_KEY)), 'the chat’s settings hold no key');
});

test('the key goes in a header to the provider only: never in a URL, a body, the conversation, the export, a call or an event', async () => {
  const { chat, calls, events } = await setUp();
  chat.setKey('openai', PLAYED_KEY);
  await chat.listModels();
  played.script({ answer: [{ tool: { name: 't', input: { say: 'hi' } } }] }, { answer: [{ text: 'done' }] });
  await chat.send('go');
  const mine = played.requests.slice(-3);
  assert.equal(mine.length, 3);
  for (const r of mine) {
    assert.equal(r.headers.authorization, `Bearer ${PLAYED_KEY}`);
    assert.ok(!r.query.includes(PLAYED_KEY) && !JSON.stringify(r.body ?? '').includes(PLAYED_KEY));
  }
  const everything = JSON.stringify([chat.conversation.entries(), chat.toMarkdown(), calls, events, chat.footer(1)]);
  assert.equal(calls.length, 1);
  assert.ok(!everything.includes(PLAYED_KEY));
});

test('no key, and a refused key, are each said in one sentence; no call is made without a key', async () => {
  const { chat } = await setUp();
  const before = played.requests.length;
  await chat.listModels();
  assert.equal(chat.modelsSaid(), CHAT_SAID.noKey.replace('{provider}', 'OpenAI'));
  chat.chooseModel('gpt-played-1');
  await chat.send('hello');
  assert.equal(chat.conversation.entries().at(-1).text, CHAT_SAID.noKey.replace('{provider}', 'OpenAI'));
  assert.equal(played.requests.length, before);
  chat.setKey('openai', 'sk-refused');
  await chat.listModels();
  assert.equal(chat.modelsSaid(), FAILURES.key);
  chat.chooseModel('gpt-played-1');
  await chat.send('hello');
  assert.equal(chat.conversation.entries().at(-1).text, FAILURES.key);
});
