// A tool's outputSchema (Chrome 159 takes it at registration) is accepted when a tool is
// registered through the bridge, given to the browser with the tool, and stated to remote agents;
// so is a page's own tool's (Chrome 160 gives it as JSON text). One that is not an object's
// schema (MCP's rule, which the relay enforces by refusing the whole list) is refused at
// registration with a sentence, and left out of a page's own tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence } from '../../tab/presence.js';
import { createToolBridge } from '../../tab/webmcp.js';
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
  test(`${shape}: an outputSchema given at registration reaches the browser and the relay`, async () => {
    const modelContext = new ModelContext(ORIGIN);
    const { relay, bridge } = setUp(modelContext);
    await bridge.registerTool({ name: 'notes_count', description: 'Counts the notes.', outputSchema: COUNTED, annotations: { readOnlyHint: true }, execute: () => ({ count: 3 }) });
    assert.deepEqual(modelContext.registered[0].tool.outputSchema, COUNTED, 'given to the browser');
    assert.deepEqual(statedOf(relay, 'notes_count').outputSchema, COUNTED, 'stated to remote agents');
    // Without one, none is stated.
    await bridge.registerTool({ name: 'notes_read', description: 'Reads the notes.', execute: () => [] });
    assert.equal(Object.hasOwn(statedOf(relay, 'notes_read'), 'outputSchema'), false);

    // One that is not an object's schema is refused at once, as MCP would have the relay refuse it.
    await assert.rejects(bridge.registerTool({ name: 'notes_text', description: 'The notes as text.', outputSchema: { type: 'string' }, execute: () => '' }), {
      name: 'TypeError',
      message: 'The outputSchema of the tool “notes_text” must be a JSON Schema of an object ("type": "object").',
    });
    await assert.rejects(bridge.registerTool({ name: 'notes_json', description: 'The notes.', outputSchema: '{not json', execute: () => '' }), TypeError);
    assert.deepEqual(relay.stated.map((t) => t.name), ['notes_count', 'notes_read'], 'the list the relay has is still good');
  });
}

test('Chrome 160: a page’s own tool’s outputSchema (JSON text) is stated; one not of an object is left out, the tool kept', async () => {
  const modelContext = new ToolObjectModelContext(ORIGIN);
  await modelContext.registerTool({ name: 'cart_total', description: 'The cart’s total.', outputSchema: COUNTED, execute: () => ({ count: 1 }) });
  await modelContext.registerTool({ name: 'cart_text', description: 'The cart as text.', outputSchema: { type: 'string' }, execute: () => 'tea' });
  assert.equal((await modelContext.getTools())[0].outputSchema, JSON.stringify(COUNTED), 'the browser gives it as text');
  const { relay, bridge } = setUp(modelContext);
  await bridge.start();
  assert.deepEqual(statedOf(relay, 'cart_total').outputSchema, COUNTED);
  assert.ok(statedOf(relay, 'cart_text'), 'the tool is stated');
  assert.equal(Object.hasOwn(statedOf(relay, 'cart_text'), 'outputSchema'), false, 'without the schema MCP would refuse');
});
