// The chat's estimate of a call before it is made (the budget's check) learns from the
// provider's own count: a call counted at far more than its quarter-token-a-character estimate
// makes the next estimate larger (at most ESTIMATE_SCALE.most times), so a budget the rough
// estimate would pass refuses the call instead of overspending it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat, CHAT_MODEL_INSTRUCTIONS, ASK_PERSON, ESTIMATE_SCALE } from '../../tab/chat.js';
import { estimateTokens, tokensOf } from '../../tab/chat-conversation.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());
const TOOL = { name: 'count', description: 'Counts rows', inputSchema: { type: 'object' } };

test('a call counted at more than its estimate makes the next estimate larger: the budget holds', { timeout: 15_000 }, async () => {
  played = await playProvider('anthropic');
  const chat = createChat({ app: 'a', handle: async () => ({ data: 1 }), tools: () => [{ name: 'count', definition: TOOL }], origins: { anthropic: played.origin }, session: new MemoryStorage(), local: new MemoryStorage() });
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();
  // The provider counts the first call at 100,000 input tokens: far over its rough estimate.
  played.script({ answer: [{ text: 'Three.' }], usage: { input: 100_000, output: 5 } });
  await chat.send('How many rows?');
  const spent = chat.conversation.spent();
  assert.equal(spent, 100_005);
  // The next call's rough estimate (a quarter token a character), and a budget of twice it.
  const next = [...chat.conversation.messages(), { role: 'user', parts: [{ type: 'text', text: 'And columns?' }] }];
  const rough = estimateTokens(next, CHAT_MODEL_INSTRUCTIONS) + tokensOf(JSON.stringify([TOOL, ASK_PERSON]));
  assert.ok(100_000 / rough > ESTIMATE_SCALE.most, 'the count is past the scale’s bound');
  chat.setBudget(spent + 2 * rough);
  const calls = played.calls().length;
  await chat.send('And columns?');
  assert.equal(played.calls().length, calls, 'no call: its estimate, scaled, passes the budget');
  const note = chat.conversation.entries().at(-1);
  assert.equal(note.note, 'limit');
  const about = Number(/about (\d+) more/.exec(note.text)?.[1]);
  assert.ok(Math.abs(about - ESTIMATE_SCALE.most * rough) <= ESTIMATE_SCALE.most * 8, `about ${about}, scaled from ${rough}`);
});
