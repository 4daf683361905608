// The chat's Stop, its waits and its budget, without a page, against a played provider: Stop
// mid-stream aborts the provider's stream (the played API sees the request end) and keeps what
// was shown as a note, its tokens counted; Stop while a tool call runs stops it the way the
// activity line's Stop does and no model call follows; a 429 is waited out with the wait said;
// no call is made past the budget.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat } from '../../tab/chat.js';
import { createPresence, SENTENCES } from '../../tab/presence.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());
const until = async (test) => {
  for (let i = 0; i < 1000 && !test(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(test(), 'waited for it');
};

async function setUp(run = async () => ({ data: { ok: true } })) {
  played ||= await playProvider('anthropic');
  played.clear();
  const presence = createPresence({ app: 'a', storage: new MemoryStorage(), tools: [{ name: 'slow', title: 'Slow read', safety: 'read' }] });
  const chat = createChat({ app: 'a', presence, handle: (call) => presence.run(call, (signal) => run(signal)), tools: () => [{ name: 'slow', definition: { name: 'slow', description: 'Slow', inputSchema: { type: 'object' } } }], origins: { anthropic: played.origin }, session: new MemoryStorage(), local: new MemoryStorage() });
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();
  return { chat, presence };
}

test('Stop mid-stream aborts the provider’s stream; what was shown stays as a note and its tokens count', { timeout: 15_000 }, async () => {
  const { chat } = await setUp();
  let release;
  played.script({ answer: [{ text: 'The first words, and then much more' }], chunk: 5, hold: new Promise((r) => (release = r)), holdAfter: 6, usage: { input: 50, output: 9 } });
  const before = played.calls().length;
  const turn = chat.send('Tell me');
  await until(() => chat.live()?.text === 'The first words');
  chat.stop();
  await turn;
  release();
  await played.until(() => played.calls()[before]?.ended);
  assert.equal(played.calls()[before].aborted, true, 'the played API saw the stream aborted');
  const note = chat.conversation.entries().at(-1);
  assert.equal(note.note, 'stopped');
  assert.match(note.text, /The answer so far: The first words/);
  assert.equal(chat.conversation.spent(), 51, 'the stopped call’s tokens count');
  assert.equal(chat.busy, false);
});

test('Stop while a tool call runs stops it, and no model call follows', { timeout: 15_000 }, async () => {
  let running;
  const ran = new Promise((r) => (running = r));
  const { chat } = await setUp((signal) => {
    running();
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  });
  played.script({ answer: [{ tool: { name: 'slow', input: {} } }] }, { answer: [{ text: 'never' }] });
  const before = played.calls().length;
  const turn = chat.send('Read slowly');
  await ran;
  assert.equal([...chat.conversation.entries()].length, 2);
  chat.stop();
  await turn;
  assert.equal(played.calls().length, before + 1, 'no model call after Stop');
  const result = chat.conversation.entries().find((e) => e.kind === 'tool');
  assert.equal(result.content, SENTENCES.STOPPED_RUNNING);
  assert.equal(chat.conversation.entries().at(-1).note, 'stopped');
});

test('a 429 is waited out, the wait said while it lasts', { timeout: 15_000 }, async () => {
  const { chat } = await setUp();
  played.script({ status: 429, retryAfter: '1' }, { answer: [{ text: 'after the wait' }] });
  const waits = [];
  chat.subscribe((e) => e.type === 'waiting' && waits.push(e.waiting));
  await chat.send('Hello');
  assert.deepEqual(waits, ['The provider is limiting how often this key may call: trying again in 1 s.', null]);
  assert.equal(chat.conversation.entries().at(-1).parts[0].text, 'after the wait');
});

test('no model call past the budget: the turn says why', { timeout: 15_000 }, async () => {
  const { chat } = await setUp();
  chat.setBudget(10);
  const before = played.calls().length;
  await chat.send('Hello there, a message long enough to pass ten tokens with the instructions');
  assert.equal(played.calls().length, before);
  assert.equal(chat.conversation.entries().at(-1).note, 'limit');
  assert.match(chat.conversation.entries().at(-1).text, /would pass this chat’s token budget/);
});
