// OpenAI's 429 read without its retry-after header (a browser reads a header only when the
// provider's CORS exposes it, and OpenAI's documentation does not say it does): the wait its
// message asks for ("Please try again in 2.5s") is the wait, not the chat's own 1, 2, 4, 8 s.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { createOpenAI, openaiWaitMs } from '../../tab/chat-openai.js';
import { callModel } from '../../tab/chat-provider.js';

let played;
after(() => played?.close());
const messages = [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }];

test('a 429 without retry-after waits what its message asks for', async () => {
  played = await playProvider('openai');
  const provider = createOpenAI({ origin: played.origin });
  played.script({ status: 429, message: 'Rate limit reached for gpt-played-1 on tokens per min (TPM): Limit 30000, Used 18271, Requested 16921. Please try again in 2.5s. Visit the rate limits page to learn more.' }, { status: 429, message: 'Rate limit reached. Please try again in 120ms.' }, { answer: [{ text: 'after the waits' }] });
  const slept = [];
  const said = [];
  const out = await callModel(provider, { key: PLAYED_KEY, model: 'gpt-played-1', messages }, { sleepFn: async (ms) => slept.push(ms), onWait: (w) => w && said.push(w.sentence) });
  assert.equal(out.parts[0].text, 'after the waits');
  assert.deepEqual(slept, [2500, 120]);
  assert.equal(said[0], 'The provider is limiting how often this key may call: trying again in 3 s.');
  assert.equal(openaiWaitMs({ error: { message: 'Rate limit reached.' } }), null, 'no wait said: the chat’s own');
});
