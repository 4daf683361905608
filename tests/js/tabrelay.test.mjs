// The one call that wires the tab end (tab/tabrelay.js), without a browser: the tools given are
// registered once, for the relay and the browser's WebMCP alike; every call, remote or in the
// browser, goes through the record, the dataset's data switch and the person's permissions, and
// the app hears each one the same way (`on`); another dataset withdraws what waits and the relay
// follows; an address that is not http(s) leaves the relay off and the panel says why.
// tests/e2e/demo_*.test.mjs and the others run the demo page, which is wired by this call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTabrelay, agentOf, relayAddress, webmcpToolOf, SOME_AGENT, REFUSED_BY_SETTINGS, WITHDRAWN, NOT_STARTED } from '../../tab/tabrelay.js';
import { IN_BROWSER_AGENT } from '../../tab/webmcp.js';
import { refusalBefore } from '../../tab/data-guard.js';
import { localAddressOf } from '../../tab/local-relay.js';
import { MemoryStorage } from './memory_storage.mjs';
import { FakeModelContext } from './fake_model_context.mjs';

const tick = () => new Promise((r) => setTimeout(r, 0));

const TOOLS = [
  { name: 'orders_count', title: 'Count orders', description: 'Counts the orders.', safety: 'read', input: { type: 'object' }, data: 'summaries', summaries_only: { result: ['count'], errors: 'as_said' } },
  { name: 'orders_read', title: 'Read orders', description: 'Reads the orders’ cells.', safety: 'read', input: { type: 'object' }, data: 'cells' },
  { name: 'orders_delete', title: 'Delete orders', description: 'Deletes orders.', safety: 'destructive', input: { type: 'object' } },
];

/** The app's side: what ran, and what the wiring told it. */
function wired(extra = {}) {
  const ran = [];
  const heard = { call: [], items: [] };
  const panel = { said: [], showStatus(state, detail) { this.said.push([state, detail.reason]); } };
  const tabrelay = createTabrelay({
    relay: 'http://127.0.0.1:9/',
    app: 'orders',
    tools: TOOLS,
    run: (name, input, client) => {
      ran.push({ name, input, agent: client.agent });
      return { data: { count: 3, secret: 'cell value', summary: `ran ${name}` } };
    },
    dataset: 'orders-2026',
    confirmKinds: { orders_delete: ['deletes-saved'] },
    itemsOf: (call) => call.args?.ids ?? [],
    storage: new MemoryStorage(),
    channel: null,
    modelContext: null,
    panel,
    start: false,
    window: null,
    document: null,
    ...extra,
  });
  tabrelay.on('call', (e) => heard.call.push(e));
  tabrelay.on('items', (items) => heard.items.push(items));
  return { tabrelay, ran, heard, panel };
}

const call = (id, tool, args = {}, agent = 'Claude') => ({ id, tool, args, agent, connection: { id: 'c1', client: agent, host: 'claude.ai' }, turn: 1 });

test('the tools given are registered once and stated to the relay; withdrawing one takes it from the relay', async () => {
  const { tabrelay, panel } = wired();
  await tabrelay.registered;
  assert.deepEqual(tabrelay.relay.tools.map((t) => t.name), TOOLS.map((t) => t.name));
  assert.deepEqual(
    tabrelay.relay.tools.map((t) => t.setting),
    ['runs', 'runs', 'asks'],
  );
  // The panel was given every part.
  assert.equal(panel.relay, tabrelay.relay);
  assert.equal(panel.presence, tabrelay.presence);
  assert.equal(panel.dataSwitch, tabrelay.dataSwitch);
  assert.equal(panel.record, tabrelay.record);
  assert.equal(panel.datasetId, 'orders-2026');
  tabrelay.withdraw('orders_read');
  await tick();
  assert.deepEqual(tabrelay.relay.tools.map((t) => t.name), ['orders_count', 'orders_delete']);
});

test('a remote call runs the app’s function, is heard once and kept in the record', async () => {
  const { tabrelay, ran, heard } = wired();
  // Through the relay's door: what RelayClient's handle calls.
  const out = await tabrelay.bridge.handle(call(1, 'orders_count'));
  assert.deepEqual(ran, [{ name: 'orders_count', input: {}, agent: 'Claude' }]);
  assert.equal(out.data.count, 3);
  assert.deepEqual(heard.call.map((e) => [e.agent, e.tool, e.outcome, e.ok]), [['Claude', 'orders_count', 'ok', true]]);
  await tabrelay.record.written();
  assert.deepEqual(tabrelay.record.entries().map((e) => [e.agent, e.tool]), [['Claude', 'orders_count']]);
});

test('under the data switch a cells tool is refused before it runs, and a summaries tool sends its list only', async () => {
  const { tabrelay, ran, heard } = wired();
  tabrelay.dataSwitch.set('orders-2026', true);
  const sentence = refusalBefore(TOOLS[1], true);
  assert.ok(sentence);
  await assert.rejects(tabrelay.bridge.handle(call(2, 'orders_read')), { message: sentence });
  assert.deepEqual(ran, []);
  assert.equal(heard.call.at(-1).ok, false);
  assert.equal(heard.call.at(-1).outcome, `error: ${sentence}`);
  assert.equal(tabrelay.presence.refusalOf('orders_read'), sentence, 'the tools stated say it is refused');
  const out = await tabrelay.bridge.handle(call(3, 'orders_count'));
  assert.equal(out.data.count, 3);
  assert.equal(out.data.secret, undefined, 'what the allow-list leaves out is not sent');
  // Another dataset the person never set starts as the one shown before: on, never silently off.
  tabrelay.setDataset('orders-2027');
  assert.equal(tabrelay.dataSwitch.isOn('orders-2027'), true);
  assert.equal(tabrelay.presence.refusalOf('orders_read'), sentence);
  await assert.rejects(tabrelay.bridge.handle(call(4, 'orders_read')), { message: sentence });
  assert.ok(!ran.some((r) => r.name === 'orders_read'), 'no cell value went out after Another dataset');
  assert.equal(tabrelay.relay.dataset, 'orders-2027');
});

test('the data switch follows a dataset’s identity across another dataset: the person’s own choice, else the app’s word, else the one shown before', () => {
  const { tabrelay } = wired();
  tabrelay.dataSwitch.set('orders-2026', true);
  tabrelay.dataSwitch.set('public', false);
  tabrelay.setDataset('public');
  assert.equal(tabrelay.dataSwitch.isOn('public'), false, 'the person set it off for this dataset');
  tabrelay.setDataset('new-a');
  assert.equal(tabrelay.dataSwitch.isOn('new-a'), false, 'new, after one that is off: off');
  tabrelay.setDataset('new-b', undefined, { dataSwitch: true });
  assert.equal(tabrelay.dataSwitch.isOn('new-b'), true, 'the app says a new dataset starts on');
  tabrelay.setDataset('new-c');
  assert.equal(tabrelay.dataSwitch.isOn('new-c'), true, 'new, after one that is on: on');
  tabrelay.setDataset('orders-2026', undefined, { dataSwitch: false });
  assert.equal(tabrelay.dataSwitch.isOn('orders-2026'), true, 'the app’s word is for a new dataset only, never over the person’s choice');
  tabrelay.setDataset('new-a');
  assert.equal(tabrelay.dataSwitch.isOn('new-a'), true, 'a dataset shown before whose switch was never set follows again');
});

test('a destructive call asks the person; the items it names are heard, a Deny is heard as not run', async () => {
  const { tabrelay, ran, heard } = wired();
  const pending = tabrelay.bridge.handle(call(4, 'orders_delete', { ids: [7, 9] }));
  await tick();
  const [question] = tabrelay.presence.questions();
  assert.ok(question, 'a card waits');
  assert.deepEqual(heard.items.at(-1), [7, 9]);
  tabrelay.presence.answer(question.id, 'deny');
  await assert.rejects(pending);
  assert.deepEqual(ran, []);
  assert.deepEqual(heard.items.at(-1), []);
  const last = heard.call.at(-1);
  assert.equal(last.ok, false);
  assert.doesNotMatch(last.outcome, /^error: /, 'the presence’s own outcome');
});

test('another dataset withdraws the questions waiting, with the reason the app gives', async () => {
  const { tabrelay, ran } = wired();
  const pending = tabrelay.bridge.handle(call(5, 'orders_delete', { ids: [1] }));
  await tick();
  assert.equal(tabrelay.presence.questions().length, 1);
  tabrelay.setDataset('orders-2027');
  await assert.rejects(pending);
  assert.equal(tabrelay.presence.questions().length, 0);
  assert.deepEqual(ran, []);
  assert.equal(tabrelay.panel.datasetId, 'orders-2027');
  assert.equal(tabrelay.dataset, 'orders-2027');
  assert.equal(WITHDRAWN.dataset, 'the app showed another dataset');
});

test('a call the relay client refuses by the person’s settings is heard and kept', async () => {
  const { tabrelay, heard } = wired();
  tabrelay.presence.store.setTool('orders_count', 'deny');
  // What the relay client does with a call to a refused tool: onRefused, never handle.
  tabrelay.relay.onRefused?.(call(6, 'orders_count'));
  const refused = heard.call.at(-1);
  assert.deepEqual([refused.tool, refused.outcome, refused.ok], ['orders_count', REFUSED_BY_SETTINGS, false]);
  await tabrelay.record.written();
  assert.equal(tabrelay.record.entries().at(-1).tool, 'orders_count');
});

test('an in-browser agent’s call of a tool registered once goes through the same door', async () => {
  const modelContext = new FakeModelContext('http://app.example');
  const { tabrelay, ran, heard } = wired({ modelContext });
  await tabrelay.registered;
  assert.deepEqual(modelContext.registered.map((e) => e.tool.name), TOOLS.map((t) => t.name));
  const tool = (await modelContext.getTools()).find((t) => t.name === 'orders_count');
  await modelContext.executeTool(tool, {});
  assert.equal(ran.at(-1).agent, IN_BROWSER_AGENT);
  assert.equal(heard.call.at(-1).agent, IN_BROWSER_AGENT);
  tabrelay.withdraw('orders_count');
  await tick();
  assert.deepEqual(modelContext.registered.map((e) => e.tool.name), ['orders_read', 'orders_delete']);
  tabrelay.stop();
});

test('an address that is not http(s) leaves the relay off and the panel says why', () => {
  const { tabrelay, panel } = wired({ relay: 'javascript:alert(1)' });
  assert.equal(tabrelay.relay, null);
  tabrelay.start();
  assert.deepEqual(panel.said, [['stopped', NOT_STARTED.address]]);
  const insecure = wired({ window: { isSecureContext: false, addEventListener() {}, removeEventListener() {} } });
  insecure.tabrelay.start();
  assert.deepEqual(insecure.panel.said, [['stopped', NOT_STARTED.insecure]]);
});

test('the pieces: names, addresses, shapes, events', () => {
  assert.equal(agentOf({ agent: '  ' }), SOME_AGENT);
  assert.equal(agentOf({ agent: 'Claude' }), 'Claude');
  assert.equal(relayAddress('https://relay.example'), 'https://relay.example/');
  assert.equal(relayAddress('ftp://relay.example'), null);
  assert.equal(relayAddress('not a url'), null);
  const shaped = webmcpToolOf(TOOLS[2], () => 'ran');
  assert.deepEqual(shaped.annotations, { readOnlyHint: false, consequentialHint: true });
  assert.equal(shaped.inputSchema, TOOLS[2].input);
  assert.equal(shaped.execute({}, {}), 'ran');
  assert.throws(() => webmcpToolOf(TOOLS[0]), /run\(name, input, client\)/);
  const own = { name: 'x', description: 'x', execute: () => 1 };
  assert.equal(webmcpToolOf(own), own);
  const { tabrelay } = wired();
  assert.throws(() => tabrelay.on('nothing', () => {}), /the events are call, items, status/);
  assert.throws(() => createTabrelay({ relay: null, tools: [] }), /app’s name/);
});

test('a local server named localhost is reached at 127.0.0.1, where its waiting page’s cookie is, so a link’s confirm carries it', () => {
  for (const named of ['http://localhost:8790', 'http://[::1]:8790/', 'http://127.0.0.1:8790']) {
    const { tabrelay } = wired({ local: named });
    assert.equal(tabrelay.relay.local.relay, 'http://127.0.0.1:8790', named);
    assert.ok(tabrelay.relay.local.confirmAddress('t').startsWith('http://127.0.0.1:8790/authorize/confirm?'), named);
  }
  assert.equal(localAddressOf('ws://localhost:8790'), null);
  assert.equal(localAddressOf('http://tabrelay.example:8790'), 'http://tabrelay.example:8790/');
});
