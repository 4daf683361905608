// Each chat provider's failures against its played API, each read as its kind with the one
// sentence that says what to do: the key refused, not permitted, out of quota, no such model,
// the conversation too long, a bad request, the provider not reached; and Anthropic's refusal
// of a browser call without the direct-access header (the played API refuses as Anthropic does).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { createAnthropic } from '../../tab/chat-anthropic.js';
import { createOpenAI } from '../../tab/chat-openai.js';
import { callModel, FAILURES, ProviderError } from '../../tab/chat-provider.js';

const MAKERS = { anthropic: createAnthropic, openai: createOpenAI };
const played = {};
after(() => Promise.all(Object.values(played).map((p) => p.close())));
const messages = [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }];
const QUOTA = { anthropic: { status: 402 }, openai: { status: 429, code: 'insufficient_quota', type: 'insufficient_quota' } };
const LONG = { anthropic: { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' }, openai: { status: 400, code: 'context_length_exceeded', message: 'This model’s maximum context length is 128000 tokens.' } };

async function failure(promise) {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProviderError, `a ProviderError, not ${err}`);
    return err;
  }
  assert.fail('no failure');
}

for (const kind of ['anthropic', 'openai']) {
  const setUp = async () => {
    played[kind] ||= await playProvider(kind);
    return { api: played[kind], provider: MAKERS[kind]({ origin: played[kind].origin }) };
  };
  const call = (provider, key = PLAYED_KEY) => callModel(provider, { key, model: 'm', messages }, { sleepFn: async () => {} });

  test(`${kind}: a refused key, a key not permitted, an account out of quota`, async () => {
    const { api, provider } = await setUp();
    const refused = await failure(call(provider, 'sk-wrong'));
    assert.deepEqual([refused.kind, refused.message], ['key', FAILURES.key]);
    assert.equal((await failure(provider.models({ key: 'sk-wrong' }))).kind, 'key');
    api.script({ status: 403 });
    assert.deepEqual((await failure(call(provider))).message, FAILURES.permission);
    api.script(QUOTA[kind]);
    assert.deepEqual((await failure(call(provider))).message, FAILURES.quota);
    assert.equal(api.pending(), 0, 'a quota refusal is not retried');
  });

  test(`${kind}: no such model, a conversation too long, a bad request`, async () => {
    const { api, provider } = await setUp();
    api.script({ status: 404, message: 'model: m' });
    assert.equal((await failure(call(provider))).message, FAILURES.model);
    api.script(LONG[kind]);
    assert.equal((await failure(call(provider))).message, FAILURES.long);
    api.script({ status: 400, message: 'messages: field required' });
    assert.equal((await failure(call(provider))).message, FAILURES.bad);
  });

  test(`${kind}: a provider that cannot be reached`, async () => {
    const gone = await playProvider(kind);
    await gone.close();
    const err = await failure(call(MAKERS[kind]({ origin: gone.origin })));
    assert.deepEqual([err.kind, err.message], ['network', FAILURES.network]);
  });
}

test('anthropic: a call from a page without the direct-browser-access header is refused (the header is what lets it through)', async () => {
  played.anthropic ||= await playProvider('anthropic');
  const provider = createAnthropic({ origin: played.anthropic.origin, fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, origin: 'http://app.example' } }) });
  played.anthropic.script({ answer: [{ text: 'ok' }] });
  assert.equal((await callModel(provider, { key: PLAYED_KEY, model: 'm', messages })).parts[0].text, 'ok');
  const without = createAnthropic({ origin: played.anthropic.origin, fetch: (url, init) => { const headers = { ...init.headers, origin: 'http://app.example' }; delete headers['anthropic-dangerous-direct-browser-access']; return fetch(url, { ...init, headers }); } });
  assert.equal((await failure(callModel(without, { key: PLAYED_KEY, model: 'm', messages }))).kind, 'key');
});
