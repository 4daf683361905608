// Each chat provider module (Anthropic's Messages API, OpenAI's Responses API) against its
// played API (tests/played/providers.mjs, the provider's wire format on loopback), with only its
// origin changed: text streamed as it comes, a tool call streamed in pieces put together, the
// stop reason and the usage read, the models listed from the API, and what is sent: the pinned
// version and the browser-access header (Anthropic), store: false (OpenAI), the key in a header
// to the provider's origin only.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { createAnthropic, ANTHROPIC_VERSION } from '../../tab/chat-anthropic.js';
import { createOpenAI } from '../../tab/chat-openai.js';
import { callModel, serverEvents } from '../../tab/chat-provider.js';

const MAKERS = { anthropic: createAnthropic, openai: createOpenAI };
const played = {};
after(() => Promise.all(Object.values(played).map((p) => p.close())));
const messages = [{ role: 'user', parts: [{ type: 'text', text: 'Delete item 7' }] }];
const tools = [{ name: 'items_delete', description: 'Deletes items', inputSchema: { type: 'object', properties: { ids: { type: 'array' } } } }];

for (const kind of ['anthropic', 'openai']) {
  const setUp = async () => {
    played[kind] ||= await playProvider(kind);
    return { api: played[kind], provider: MAKERS[kind]({ origin: played[kind].origin }) };
  };

  test(`${kind}: the text streams in pieces as it comes, the tool call is put together, stop and usage read`, async () => {
    const { api, provider } = await setUp();
    api.script({ answer: [{ text: 'Deleting item seven now.' }, { tool: { name: 'items_delete', input: { ids: [7], why: 'asked “so”' } } }], usage: { input: 321, output: 45 } });
    const seen = [];
    const out = await callModel(provider, { key: PLAYED_KEY, model: 'm-1', instructions: 'Be brief.', messages, tools }, { onEvent: (e) => seen.push(e) });
    assert.ok(seen.filter((e) => e.type === 'text').length >= 5, 'text came in several pieces');
    assert.deepEqual(out, { parts: [{ type: 'text', text: 'Deleting item seven now.' }, { type: 'tool_call', id: out.parts[1].id, name: 'items_delete', input: { ids: [7], why: 'asked “so”' } }], stop: 'tool', usage: { input: 321, output: 45 } });
    api.script({ answer: [{ text: 'Cut short' }], stop: 'length', usage: { input: 1, output: 2 } });
    assert.equal((await callModel(provider, { key: PLAYED_KEY, model: 'm-1', messages, tools })).stop, 'length');
  });

  test(`${kind}: what is sent: the key in a header to the provider’s origin, the conversation, the tools`, async () => {
    const { api, provider } = await setUp();
    api.script({ answer: [{ text: 'ok' }] });
    await callModel(provider, { key: PLAYED_KEY, model: 'm-1', instructions: 'Be brief.', messages, tools });
    const sent = api.calls().at(-1);
    assert.ok(!sent.query.includes(PLAYED_KEY) && !JSON.stringify(sent.body).includes(PLAYED_KEY), 'the key is in no URL and no body');
    if (kind === 'anthropic') {
      assert.equal(sent.headers['x-api-key'], PLAYED_KEY);
      assert.equal(sent.headers['anthropic-version'], ANTHROPIC_VERSION);
      assert.equal(ANTHROPIC_VERSION, '2023-06-01');
      assert.equal(sent.headers['anthropic-dangerous-direct-browser-access'], 'true');
      assert.equal(sent.body.system, 'Be brief.');
      assert.deepEqual(sent.body.tools[0].input_schema, tools[0].inputSchema);
      assert.equal(sent.body.stream, true);
      assert.ok(!('temperature' in sent.body));
    } else {
      assert.equal(sent.headers.authorization, `Bearer ${PLAYED_KEY}`);
      assert.equal(sent.body.store, false);
      assert.equal(sent.body.instructions, 'Be brief.');
      assert.deepEqual(sent.body.tools[0], { type: 'function', name: 'items_delete', description: 'Deletes items', parameters: tools[0].inputSchema, strict: false });
    }
  });

  test(`${kind}: a tool’s result goes back tied to its call`, async () => {
    const { api, provider } = await setUp();
    api.script({ answer: [{ text: 'Done.' }] });
    const history = [...messages, { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'items_delete', input: { ids: [7] } }] }, { role: 'user', parts: [{ type: 'tool_result', id: 'call_1', name: 'items_delete', content: '{"deleted":1}', isError: false }] }];
    await callModel(provider, { key: PLAYED_KEY, model: 'm-1', messages: history, tools });
    const body = api.calls().at(-1).body;
    if (kind === 'anthropic') assert.deepEqual(body.messages.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"deleted":1}', is_error: false }] });
    else assert.deepEqual(body.input.slice(-2), [{ type: 'function_call', call_id: 'call_1', name: 'items_delete', arguments: '{"ids":[7]}' }, { type: 'function_call_output', call_id: 'call_1', output: '{"deleted":1}' }]);
  });

  test(`${kind}: the models are listed from the provider’s API`, async () => {
    const { provider } = await setUp();
    const models = await provider.models({ key: PLAYED_KEY });
    if (kind === 'anthropic') assert.deepEqual(models.map((m) => [m.id, m.name]), [['claude-played-1', 'Claude Played 1'], ['claude-played-2', 'Claude Played 2']]);
    else assert.deepEqual(models.map((m) => m.id), ['gpt-played-1'], 'a model answering no text is not offered');
  });
}

test('server-sent events are read whatever the chunks and line endings (\n, \r\n, \r), comments skipped', async () => {
  const text = 'event: a\r\ndata: {"x":1}\r\n\r\n: a comment\ndata: {"y":\ndata: 2}\n\nevent: b\rdata: {"z":3}\r\r';
  const expected = [{ event: 'a', data: { x: 1 } }, { event: 'message', data: { y: 2 } }, { event: 'b', data: { z: 3 } }];
  const bytes = new TextEncoder().encode(text);
  for (let size = 1; size <= bytes.length; size++) {
    const body = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
        c.close();
      },
    });
    const seen = [];
    for await (const e of serverEvents({ body })) seen.push(e);
    assert.deepEqual(seen, expected, `chunks of ${size} bytes`);
  }
});
