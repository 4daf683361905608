// The `frames` option is gone, and giving it says why: Chromium never lists a cross-origin
// frame's WebMCP tools in the top page's getTools() (tests/e2e/webmcp.test.mjs shows it in this
// machine's Chromium), so an app that named a frame's origin would wait for tools that never
// come. Only the page's own origin is relayed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence } from '../../tab/presence.js';
import { createToolBridge, NO_FRAMES } from '../../tab/webmcp.js';
import { createTabrelay } from '../../tab/tabrelay.js';
import { MemoryStorage } from './memory_storage.mjs';
import { FakeModelContext } from './fake_model_context.mjs';

test('naming frames is refused with the sentence that says why; without it, the bridge starts', () => {
  const presence = createPresence({ app: 'test', storage: new MemoryStorage(), tools: [] });
  const modelContext = new FakeModelContext();
  assert.throws(() => createToolBridge({ presence, modelContext, frames: ['https://maps.example'] }), { name: 'TypeError', message: NO_FRAMES });
  assert.match(NO_FRAMES, /cross-origin frame/);
  assert.throws(() => createTabrelay({ relay: null, app: 'orders', tools: [], frames: ['https://maps.example'], storage: new MemoryStorage(), channel: null, modelContext, window: null, document: null }), { name: 'TypeError', message: NO_FRAMES });
  assert.equal(createToolBridge({ presence, modelContext }).webmcp, true);
  assert.equal(createToolBridge({ presence, modelContext, frames: [] }).webmcp, true, 'an empty list names nothing');
});
