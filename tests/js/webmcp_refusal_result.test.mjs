// An agent in the browser learns why its call did not run: the person declined it, their mode
// refuses it, they pressed Stop (and the agent stays stopped), the data switch refuses it. The
// tab end's sentence comes back as the tool's result, the very sentence a remote agent reads,
// never as a thrown error: Chromium hands an agent a thrown message as a bare UnknownError
// ("Tool was executed but the invocation failed"). What the app's own tool throws is still
// thrown. Wired as an app wires it (tab/tabrelay.js), with each shape of the browser's model
// context.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTabrelay } from '../../tab/tabrelay.js';
import { SENTENCES, deniedSentence } from '../../tab/presence.js';
import { refusalBefore } from '../../tab/data-guard.js';
import { MemoryStorage } from './memory_storage.mjs';
import { SHAPES } from './fake_model_context.mjs';

const tick = () => new Promise((r) => setTimeout(r, 0));
const DATASET = 'orders-2026';
const TOOLS = [
  { name: 'orders_read', title: 'Read orders', description: 'Reads the orders’ cells.', safety: 'read', input: { type: 'object' }, data: 'cells' },
  { name: 'orders_delete', title: 'Delete orders', description: 'Deletes orders.', safety: 'destructive', input: { type: 'object' } },
  { name: 'orders_fail', title: 'Fail', description: 'Always fails.', safety: 'read', input: { type: 'object' }, data: 'summaries', summaries_only: { result: [], errors: 'as_said' } },
];

/** The app wired with `ModelContext`; `asked` the cards raised, `ran` what the app ran. */
async function wired(ModelContext) {
  const modelContext = new ModelContext('http://app.example');
  const ran = [];
  const tabrelay = createTabrelay({
    relay: 'http://127.0.0.1:9/',
    app: 'orders',
    tools: TOOLS,
    run: (name) => {
      if (name === 'orders_fail') throw new Error('The orders are locked.');
      ran.push(name);
      return { data: { done: name } };
    },
    dataset: DATASET,
    storage: new MemoryStorage(),
    channel: null,
    modelContext,
    start: false,
    window: null,
    document: null,
  });
  await tabrelay.registered;
  const asked = [];
  const onAsking = tabrelay.presence.onAsking;
  tabrelay.presence.onAsking = (q) => (asked.push(q), onAsking(q));
  return { modelContext, tabrelay, presence: tabrelay.presence, asked, ran };
}

/** A remote agent's call, as the relay hands it to the tab end. */
const remote = (id, tool) => ({ id, tool, args: {}, agent: 'Claude', connection: { id: 'c1', kind: 'cimd', client: 'Claude', host: 'claude.ai' }, turn: 1 });
/** What a remote agent reads of a call that did not run. */
const remoteReads = (promise) => promise.then(() => assert.fail('it ran'), (err) => err.message);

for (const [shape, ModelContext] of Object.entries(SHAPES)) {
  test(`${shape}: declined by the person, the in-browser agent reads so as the result, as a remote agent does`, async () => {
    const { modelContext, tabrelay, presence, asked, ran } = await wired(ModelContext);
    const inBrowser = modelContext.agentCalls('orders_delete', { ids: [1] });
    await tick();
    presence.answer(asked[0].id, 'deny');
    const said = await inBrowser;
    const fromRemote = tabrelay.bridge.handle(remote(1, 'orders_delete'));
    await tick();
    presence.answer(asked[1].id, 'deny');
    assert.equal(said, await remoteReads(fromRemote));
    assert.match(said, /^The person declined “Delete orders”, so nothing was changed\.$/);
    assert.deepEqual(ran, []);
  });

  test(`${shape}: refused by the person’s mode, the in-browser agent reads the settings’ sentence`, async () => {
    const { modelContext, tabrelay, presence, ran } = await wired(ModelContext);
    presence.store.setMode('read-only');
    const said = await modelContext.agentCalls('orders_delete', { ids: [1] });
    assert.equal(said, deniedSentence('Delete orders', ['change', 'consequential']));
    assert.equal(said, await remoteReads(tabrelay.bridge.handle(remote(1, 'orders_delete'))));
    assert.deepEqual(ran, []);
  });

  test(`${shape}: stopped by the person, the in-browser agent reads Stop’s sentence, and why while it stays stopped`, async () => {
    const { modelContext, presence, asked, ran } = await wired(ModelContext);
    const inBrowser = modelContext.agentCalls('orders_delete', { ids: [1] });
    await tick();
    presence.stop(asked[0].lineKey);
    assert.equal(await inBrowser, SENTENCES.STOPPED);
    assert.equal(await modelContext.agentCalls('orders_delete', { ids: [2] }), SENTENCES.AGENT_STOPPED, 'it stays stopped until the person lets it go on');
    assert.equal(asked.length, 1, 'the person is not asked for a stopped agent');
    assert.deepEqual(ran, []);
  });

  test(`${shape}: refused by the data switch, the in-browser agent reads the switch’s sentence; what the app throws is thrown`, async () => {
    const { modelContext, tabrelay, ran } = await wired(ModelContext);
    tabrelay.dataSwitch.set(DATASET, true);
    const said = await modelContext.agentCalls('orders_read', {});
    assert.equal(said, refusalBefore(TOOLS[0], true));
    assert.deepEqual(ran, []);
    // The app's own failure is the app's: thrown as it threw it (Chromium says UnknownError).
    await assert.rejects(modelContext.agentCalls('orders_fail', {}), /The orders are locked\./);
  });
}
