// Each chat provider's retries against its played API: rate-limited (429) and busy (529, 503)
// waited out with the provider's retry-after honoured and the wait said; a stream cut short or
// an event that is not JSON asked for once more (what was shown of it taken back), then given up
// with its sentence; a wait given up once the budget would be passed; Stop during a wait.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { createAnthropic } from '../../tab/chat-anthropic.js';
import { createOpenAI } from '../../tab/chat-openai.js';
import { callModel, FAILURES, RETRY, BudgetRefusal } from '../../tab/chat-provider.js';

const MAKERS = { anthropic: createAnthropic, openai: createOpenAI };
const BUSY = { anthropic: 529, openai: 503 };
const played = {};
after(() => Promise.all(Object.values(played).map((p) => p.close())));
const messages = [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }];

for (const kind of ['anthropic', 'openai']) {
  const setUp = async () => {
    played[kind] ||= await playProvider(kind);
    return { api: played[kind], provider: MAKERS[kind]({ origin: played[kind].origin }) };
  };

  test(`${kind}: rate-limited and busy are waited out, retry-after honoured, the wait said`, async () => {
    const { api, provider } = await setUp();
    api.script({ status: 429, retryAfter: '3' }, { status: BUSY[kind] }, { answer: [{ text: 'at last' }] });
    const slept = [];
    const said = [];
    const out = await callModel(provider, { key: PLAYED_KEY, model: 'm', messages }, { sleepFn: async (ms) => slept.push(ms), onWait: (w) => said.push(w?.sentence ?? null) });
    assert.equal(out.parts[0].text, 'at last');
    assert.deepEqual(slept, [3000, RETRY.firstMs * RETRY.factor]);
    assert.deepEqual(said, ['The provider is limiting how often this key may call: trying again in 3 s.', null, 'The provider is busy: trying again in 2 s.', null]);
  });

  test(`${kind}: a provider still busy after the waits says so`, async () => {
    const { api, provider } = await setUp();
    for (let i = 0; i <= RETRY.maxWaits; i++) api.script({ status: BUSY[kind] });
    await assert.rejects(callModel(provider, { key: PLAYED_KEY, model: 'm', messages }, { sleepFn: async () => {} }), { message: FAILURES.busy });
    assert.equal(api.pending(), 0);
  });

  test(`${kind}: a cut stream and an event that is not JSON are asked for once more, what was shown taken back`, async () => {
    const { api, provider } = await setUp();
    api.script({ answer: [{ text: 'The first try is cut off here' }], cutAfter: 6 }, { answer: [{ text: 'whole' }] });
    const seen = [];
    const out = await callModel(provider, { key: PLAYED_KEY, model: 'm', messages }, { onEvent: (e) => seen.push(e.type) });
    assert.equal(out.parts[0].text, 'whole');
    assert.ok(seen.includes('restart'), 'what was shown of the cut answer is taken back');
    api.script({ answer: [{ text: 'abc' }], malformedAt: 3 }, { answer: [{ text: 'fine' }] });
    assert.equal((await callModel(provider, { key: PLAYED_KEY, model: 'm', messages })).parts[0].text, 'fine');
    api.script({ answer: [{ text: 'abc' }], malformedAt: 3 }, { answer: [{ text: 'abc' }], cutAfter: 3 }, { answer: [{ text: 'never asked' }] });
    await assert.rejects(callModel(provider, { key: PLAYED_KEY, model: 'm', messages }), { message: FAILURES.unreadable });
    assert.equal(api.pending(), 1, 'asked once more, not twice');
    api.clear();
  });

  test(`${kind}: a tool call whose arguments are not a JSON object is unreadable`, async () => {
    const { api, provider } = await setUp();
    api.script({ answer: [{ tool: { name: 't', raw: '{"ids": [1' } }] }, { answer: [{ tool: { name: 't', raw: '[1]' } }] });
    await assert.rejects(callModel(provider, { key: PLAYED_KEY, model: 'm', messages }), { message: FAILURES.unreadable });
  });

  test(`${kind}: no retry once the budget would be passed; Stop during a wait ends it`, async () => {
    const { api, provider } = await setUp();
    api.script({ status: 429, retryAfter: '1' });
    await assert.rejects(callModel(provider, { key: PLAYED_KEY, model: 'm', messages }, { beforeRetry: () => 'over budget', sleepFn: async () => assert.fail('no wait') }), (err) => err instanceof BudgetRefusal && err.message === 'over budget');
    api.script({ status: 429, retryAfter: '30' }, { answer: [{ text: 'never' }] });
    const stop = new AbortController();
    const calling = callModel(provider, { key: PLAYED_KEY, model: 'm', messages, signal: stop.signal }, { onWait: (w) => w && stop.abort(new Error('stopped')) });
    await assert.rejects(calling, { message: 'stopped' });
    assert.equal(api.pending(), 1, 'no call after Stop');
    api.clear();
  });
}
