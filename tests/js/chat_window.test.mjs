// The chat's window, without a page, against a played provider whose model has a small window:
// a conversation that would not fit is summarised once, at the start of the next turn, by the
// same model (no tools, the conversation as data); the turn's call then carries the summary in
// place of what it covers, the summariser's tokens count, and the next turn needs none.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat } from '../../tab/chat.js';
import { createPresence } from '../../tab/presence.js';
import { SUMMARY_ASK, SUMMARY_INTRO } from '../../tab/chat-conversation.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());

test('a conversation past the window is summarised once at the start of a turn', async () => {
  played = await playProvider('anthropic', { models: [{ id: 'claude-small', display_name: 'Claude Small', max_input_tokens: 4000 }] });
  const presence = createPresence({ app: 'a', storage: new MemoryStorage() });
  const chat = createChat({ app: 'a', presence, handle: () => Promise.reject(new Error('no tools here')), origins: { anthropic: played.origin }, session: new MemoryStorage(), local: new MemoryStorage() });
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();
  assert.equal(chat.models()[0].window, 4000);
  played.script({ answer: [{ text: 'long '.repeat(2400) }], usage: { input: 600, output: 3000 } });
  await chat.send('Tell me a long story');
  played.script({ answer: [{ text: 'The person asked for a long story; it was told.' }], usage: { input: 3100, output: 12 } }, { answer: [{ text: 'A short one now.' }], usage: { input: 700, output: 5 } });
  await chat.send('Now a short one');
  const [, summariser, turn] = played.calls();
  assert.ok(summariser.body.messages[0].content[0].text.startsWith(SUMMARY_ASK));
  assert.equal(summariser.body.tools, undefined, 'the summariser gets no tools');
  assert.ok(turn.body.messages[0].content[0].text.startsWith(SUMMARY_INTRO));
  assert.equal(turn.body.messages[0].content[1].text, 'Now a short one');
  assert.ok(!JSON.stringify(turn.body).includes('long long long'), 'what the summary covers is not sent');
  assert.equal(chat.conversation.spent(), 3600 + 3112 + 705, 'the summariser’s tokens count');
  assert.match(chat.footer(2), /in 2 calls \(one made a summary\)/);
  played.script({ answer: [{ text: 'ok' }] });
  await chat.send('Thanks');
  assert.equal(played.calls().length, 4, 'no second summary');
  assert.equal(chat.conversation.entries().filter((e) => e.note === 'summary').length, 1);
});
