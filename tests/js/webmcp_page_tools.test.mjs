// A page's own WebMCP tools reach remote agents with their name, title, description and schemas,
// whichever shape the browser's `getTools()` gives: Chromium 156's dictionaries (`inputSchema`
// an object) or Chrome 160's `Tool` objects (attributes on the prototype, so spread, JSON and
// structuredClone copy nothing; schemas as JSON text, `null` when empty), and a remote call runs
// the very object `getTools()` gave. A schema the relay could not state (MCP wants an object's)
// never costs the other tools their place: a schema naming no type is an object's, a tool whose
// input is not an object is left out (the relay refuses a whole list for one bad schema), and
// so is one whose name is longer than the relay takes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence } from '../../tab/presence.js';
import { createToolBridge } from '../../tab/webmcp.js';
import { MemoryStorage } from './memory_storage.mjs';
import { SHAPES, ToolObjectModelContext } from './fake_model_context.mjs';

const ORIGIN = 'http://127.0.0.1:8788';
const tick = () => new Promise((r) => setTimeout(r, 0));

/** What the page registers with `document.modelContext` itself. */
function pageTools(runs) {
  return [
    {
      name: 'cart_clear',
      title: 'Empty the cart',
      description: 'Empties the cart.',
      inputSchema: { type: 'object', properties: { keep: { type: 'array', items: { type: 'string' } } } },
      annotations: { consequentialHint: true },
      execute: (input) => (runs.push(['cart_clear', input]), { emptied: true }),
    },
    { name: 'cart_total', description: 'The cart’s total.', execute: (input) => (runs.push(['cart_total', input]), { total: 12 }) },
    { name: 'cart_find', title: 'Find in the cart', description: 'Finds an item.', inputSchema: { properties: { text: { type: 'string' } }, required: ['text'] }, annotations: { readOnlyHint: true }, execute: () => [] },
    { name: 'cart_word', description: 'Takes a bare string.', inputSchema: { type: 'string' }, execute: () => 1 },
  ];
}

for (const [shape, ModelContext] of Object.entries(SHAPES)) {
  test(`${shape}: a page’s own tools are stated with their name, description and schemas, and run by the very object`, async () => {
    const modelContext = new ModelContext(ORIGIN);
    const runs = [];
    for (const t of pageTools(runs)) await modelContext.registerTool(t);
    if (ModelContext === ToolObjectModelContext) await trueToChrome160(modelContext);
    const presence = createPresence({ app: 'test', storage: new MemoryStorage(), tools: [] });
    const relay = { stated: null, setTools(t) { this.stated = t; }, step() {} };
    const bridge = createToolBridge({ relay, presence, modelContext, origin: ORIGIN });
    await bridge.start();

    assert.deepEqual(relay.stated, [
      {
        name: 'cart_clear',
        title: 'Empty the cart',
        description: 'Empties the cart.',
        inputSchema: { type: 'object', properties: { keep: { type: 'array', items: { type: 'string' } } } },
        annotations: { title: 'Empty the cart', readOnlyHint: false, destructiveHint: true, openWorldHint: false },
        setting: 'asks',
      },
      { name: 'cart_total', description: 'The cart’s total.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false }, setting: 'runs' },
      {
        name: 'cart_find',
        title: 'Find in the cart',
        description: 'Finds an item.',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        annotations: { title: 'Find in the cart', readOnlyHint: true, destructiveHint: false, openWorldHint: false },
        setting: 'runs',
      },
    ], 'cart_word (its input not an object) is left out; the rest as the page wrote them');

    // A remote agent's call: the person is asked (consequentialHint), then the page's tool runs.
    const asked = [];
    presence.onAsking = (q) => asked.push(q);
    const call = { id: 1, tool: 'cart_clear', args: { keep: ['tea'] }, agent: 'Claude', connection: { id: 'c1', kind: 'cimd', client: 'Claude', host: 'claude.ai' }, turn: 1 };
    const pending = bridge.handle(call);
    await tick();
    assert.equal(asked.length, 1, 'the person is asked first');
    assert.equal(asked[0].title, 'Empty the cart');
    presence.answer(asked[0].id, 'once');
    assert.deepEqual(await pending, { data: { emptied: true } });
    assert.deepEqual(await bridge.handle({ ...call, id: 2, tool: 'cart_total', args: {} }), { data: { total: 12 } });
    assert.deepEqual(runs, [['cart_clear', { keep: ['tea'] }], ['cart_total', {}]]);
  });
}

/** The stand-in is true to Chrome 160: a Tool copies nothing, and executeTool wants the very object. */
async function trueToChrome160(modelContext) {
  const tool = (await modelContext.getTools()).find((t) => t.name === 'cart_total');
  assert.equal(tool.name, 'cart_total');
  assert.equal(tool.inputSchema, null, 'an empty schema is null');
  assert.equal(tool.annotations, null);
  assert.deepEqual({ ...tool }, {});
  assert.equal(JSON.stringify(tool), '{}');
  assert.equal(structuredClone(tool).name, undefined);
  await assert.rejects(modelContext.executeTool({ name: 'cart_total' }, {}), TypeError);
  await assert.rejects(modelContext.executeTool({ ...tool }, {}), TypeError);
}

test('a page tool whose name the relay would refuse (WebMCP allows 128 characters, the relay 64) is left out, the others kept', async () => {
  const { readTool } = await import('../../tab/webmcp.js');
  const { MAX_TOOL_NAME_CHARS } = await import('../../tab/generated/bundle.js');
  const long = (n) => ({ name: 'a'.repeat(n), description: 'd', inputSchema: { type: 'object' } });
  assert.equal(readTool(long(MAX_TOOL_NAME_CHARS))?.name, 'a'.repeat(MAX_TOOL_NAME_CHARS));
  assert.equal(readTool(long(MAX_TOOL_NAME_CHARS + 1)), null);
  assert.equal(readTool(long(128)), null);
});
