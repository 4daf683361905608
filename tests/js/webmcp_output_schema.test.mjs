// A tool's outputSchema (Chrome 159 takes it at registration) is accepted when a tool is
// registered through the bridge and given to the browser with the tool; one that is not an
// object's schema (MCP's rule) is refused at registration with a sentence. It is stated to
// remote agents, a page's own tool's too (Chrome 160 gives it as JSON text): MCP has a server
// that states one answer with structuredContent, which the relay adds to such a tool's object
// result (tests/e2e/webmcp.test.mjs calls such a tool with the official SDK's client, which
// refuses a result without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence } from '../../tab/presence.js';
import { createToolBridge, readTool } from '../../tab/webmcp.js';
import { MemoryStorage } from './memory_storage.mjs';
import { SHAPES, ToolObjectModelContext } from './fake_model_context.mjs';

const ORIGIN = 'http://127.0.0.1:8788';
const COUNTED = { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] };

function setUp(modelContext) {
  const presence = createPresence({ app: 'test', storage: new MemoryStorage(), tools: [] });
  const relay = { stated: null, setTools(t) { this.stated = t; }, step() {} };
  return { relay, bridge: createToolBridge({ relay, presence, modelContext, origin: ORIGIN }) };
}
const statedOf = (relay, name) => relay.stated.find((t) => t.name === name);

for (const [shape, ModelContext] of Object.entries(SHAPES)) {
  test(`${shape}: an outputSchema given at registration reaches the browser; one not of an object is refused`, async () => {
    const modelContext = new ModelContext(ORIGIN);
    const { relay, bridge } = setUp(modelContext);
    await bridge.registerTool({ name: 'notes_count', description: 'Counts the notes.', outputSchema: COUNTED, annotations: { readOnlyHint: true }, execute: () => ({ count: 3 }) });
    assert.deepEqual(modelContext.registered[0].tool.outputSchema, COUNTED, 'given to the browser');
    assert.ok(statedOf(relay, 'notes_count'), 'the tool is stated');
    assert.deepEqual(statedOf(relay, 'notes_count').outputSchema, COUNTED, 'and stated to remote agents');

    // One that is not an object's schema is refused at once, as MCP would have the relay refuse it.
    await assert.rejects(bridge.registerTool({ name: 'notes_text', description: 'The notes as text.', outputSchema: { type: 'string' }, execute: () => '' }), {
      name: 'TypeError',
      message: 'The outputSchema of the tool “notes_text” must be a JSON Schema of an object ("type": "object").',
    });
    await assert.rejects(bridge.registerTool({ name: 'notes_json', description: 'The notes.', outputSchema: '{not json', execute: () => '' }), TypeError);
    assert.deepEqual(relay.stated.map((t) => t.name), ['notes_count'], 'the list the relay has is still good');
    assert.deepEqual(modelContext.registered.map((e) => e.tool.name), ['notes_count'], 'nor did the browser get them');
  });
}

test('Chrome 160: a page’s own tool’s outputSchema is read from its JSON text; the tool is stated with it', async () => {
  const modelContext = new ToolObjectModelContext(ORIGIN);
  await modelContext.registerTool({ name: 'cart_total', description: 'The cart’s total.', outputSchema: COUNTED, execute: () => ({ count: 1 }) });
  const [tool] = await modelContext.getTools();
  assert.equal(tool.outputSchema, JSON.stringify(COUNTED), 'the browser gives it as text');
  assert.deepEqual(readTool(tool).outputSchema, COUNTED);
  const { relay, bridge } = setUp(modelContext);
  await bridge.start();
  assert.deepEqual(relay.stated.map((t) => [t.name, t.outputSchema]), [['cart_total', COUNTED]]);
});
