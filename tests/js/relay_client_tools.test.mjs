// The relay client's part in tool lists: it states its tools (and the shown dataset) once
// welcomed and again when they change, refuses calls to refused tools without running them,
// and passes on the relay's refusal of a list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient, catalogueTools, TOOL_REFUSED } from '../../tab/relay-client.js';

function fakeSocket() {
  return { readyState: 1, sent: [], send(text) { this.sent.push(JSON.parse(text)); } };
}

function client(options = {}) {
  const ran = [];
  const c = new RelayClient({ relay: 'http://relay.test', storage: { getItem: () => null, setItem() {} }, handle: async (call) => (ran.push(call), { data: 1 }), ...options });
  c.socket = fakeSocket();
  return { c, ran };
}

test('once welcomed the tab states its focus, tools and dataset; setTools and setView state them again', async () => {
  const { c } = client({ tools: [{ name: 'a', inputSchema: { type: 'object' }, setting: 'runs' }], dataset: 'Set 1', focused: false });
  await c.receive(c.socket, JSON.stringify({ type: 'welcome', pairing: 'p', protocol: 1 }));
  assert.deepEqual(c.socket.sent.map((m) => m.type), ['focus', 'tools', 'view']);
  assert.equal(c.socket.sent[1].tools[0].name, 'a');
  assert.equal(c.socket.sent[2].dataset, 'Set 1');
  assert.equal(c.status, 'connected');
  c.setTools([{ name: 'b', inputSchema: { type: 'object' }, setting: 'asks' }]);
  c.setView({ dataset: 'Set 2' });
  assert.deepEqual(c.socket.sent.slice(3), [{ type: 'tools', tools: [{ name: 'b', inputSchema: { type: 'object' }, setting: 'asks' }] }, { type: 'view', dataset: 'Set 2' }]);
  assert.equal(c.settingOf('b'), 'asks');
});

test('by default the tab states the catalogue’s tools, destructive ones asking', () => {
  const { c } = client();
  assert.deepEqual(c.tools, catalogueTools());
  assert.equal(c.settingOf('items_delete'), 'asks');
  assert.equal(c.settingOf('dataset_describe'), 'runs');
});

test('a call to a refused tool is refused with one sentence and never runs', async () => {
  const refused = [];
  const { c, ran } = client({ tools: catalogueTools({ items_delete: 'refused' }), onRefused: (call) => refused.push(call.id) });
  await c.answer(c.socket, { id: 9, tool: 'items_delete', args: { ids: [1] } });
  assert.deepEqual(c.socket.sent, [{ type: 'result', id: 9, error: TOOL_REFUSED }]);
  assert.deepEqual(ran, []);
  assert.deepEqual(refused, [9]);
  await c.answer(c.socket, { id: 10, tool: 'dataset_describe', args: {} });
  assert.equal(ran.length, 1);
});

test('the relay’s refusal of a list reaches the app', async () => {
  const heard = [];
  const { c } = client({ onToolsRefused: (s) => heard.push(s) });
  await c.receive(c.socket, JSON.stringify({ type: 'tools_refused', sentence: 'The tool list was refused: two tools are named a.' }));
  assert.deepEqual(heard, ['The tool list was refused: two tools are named a.']);
  assert.equal(c.toolsRefused, heard[0]);
});

test('a list stated before the relay’s welcome waits for it: the hello goes first', async () => {
  const { c } = client({ tools: [] });
  c.status = 'connecting';
  c.setTools([{ name: 'early', inputSchema: { type: 'object' }, setting: 'runs' }]);
  assert.deepEqual(c.socket.sent, [], 'nothing before the hello (the relay closes a socket whose first message is not one)');
  await c.receive(c.socket, JSON.stringify({ type: 'welcome', pairing: 'p', protocol: 1 }));
  assert.deepEqual(c.socket.sent.find((m) => m.type === 'tools').tools.map((t) => t.name), ['early'], 'the welcome states it');
});
