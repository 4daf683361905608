// OpenAI's reasoning models under `store: false`: OpenAI keeps no item, so the chat asks for the
// reasoning encrypted (`include: ['reasoning.encrypted_content']`, as the Responses API documents)
// and sends each reasoning item back, as it came, before the function call it led to. A model
// that does not reason refuses that `include` (400 naming it): the call is made once more
// without it, and that model is not asked for it again. Against a played Responses API.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat } from '../../tab/chat.js';
import { OPENAI_INCLUDE } from '../../tab/chat-openai.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

const opened = [];
after(() => Promise.all(opened.map((p) => p.close())));

async function chatWith(options) {
  const played = await playProvider('openai', options);
  opened.push(played);
  const chat = createChat({ app: 'a', handle: async () => ({ data: { rows: 3 } }), tools: () => [{ name: 'count', definition: { name: 'count', description: 'Counts rows', inputSchema: { type: 'object' } } }], origins: { openai: played.origin }, session: new MemoryStorage(), local: new MemoryStorage() });
  chat.chooseProvider('openai');
  chat.setKey('openai', PLAYED_KEY);
  await chat.listModels();
  return { played, chat };
}

test('a reasoning model’s encrypted reasoning goes back before the call it led to', { timeout: 15_000 }, async () => {
  const { played, chat } = await chatWith();
  played.script({ answer: [{ reasoning: 'enc-reasoning-1' }, { tool: { name: 'count', input: {}, id: 'call_1' } }] }, { answer: [{ text: 'Three rows.' }] });
  await chat.send('How many rows?');
  const [first, second] = played.calls();
  assert.deepEqual(first.body.include, [...OPENAI_INCLUDE]);
  const input = second.body.input;
  const at = input.findIndex((x) => x.type === 'reasoning');
  assert.ok(at >= 0, 'the reasoning item goes back');
  assert.deepEqual(input[at], { type: 'reasoning', id: 'rs_played_0', summary: [], encrypted_content: 'enc-reasoning-1' });
  assert.equal(input[at + 1].type, 'function_call', 'just before the call it led to');
  assert.equal(input[at + 1].call_id, 'call_1');
  assert.equal(chat.conversation.entries().at(-1).parts[0].text, 'Three rows.');
  assert.doesNotMatch(chat.toMarkdown(), /enc-reasoning/, 'the export shows no reasoning item');
});

test('a model that does not reason refuses include once; it is not asked again', { timeout: 15_000 }, async () => {
  const { played, chat } = await chatWith({ plainModels: ['gpt-played-1'] });
  played.script({ answer: [{ text: 'Hello.' }] }, { answer: [{ text: 'Again.' }] });
  await chat.send('Hi');
  await chat.send('Hi again');
  assert.deepEqual(played.calls().map((c) => Boolean(c.body.include)), [true, false, false]);
  assert.deepEqual(chat.conversation.entries().filter((e) => e.kind === 'model').map((e) => e.parts[0].text), ['Hello.', 'Again.']);
});
