// Forget and Stop in the tab end's protocol (the relay client), not only in an element: a
// connection the relay says was forgotten has its calls under way cancelled, no result of it
// answered and no later call of it run; an agent the person stopped has its calls refused here
// with AGENT_STOPPED (the relay is told, again on every reconnect) until they let it go on; the
// connections as listed follow a stop, a go-on and a forgetting as the relay tells them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient, FORGOTTEN, AGENT_STOPPED } from '../../tab/relay-client.js';

function fakeSocket() {
  return { readyState: 1, sent: [], send(text) { this.sent.push(JSON.parse(text)); } };
}

const call = (id, connection) => ({ id, tool: 'dataset_describe', args: {}, agent: 'Claude', connection: { id: connection, kind: 'connector', client: 'Claude', host: 'claude.ai' }, turn: 1 });

function client(options = {}) {
  const ran = [];
  const finish = new Map();
  const c = new RelayClient({
    relay: 'http://relay.test',
    storage: { getItem: () => null, setItem() {}, removeItem() {} },
    handle: (x) => new Promise((resolve) => { ran.push(x.id); finish.set(x.id, resolve); }),
    ...options,
  });
  c.socket = fakeSocket();
  return { c, ran, finish };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test('a forgotten connection’s calls under way are cancelled, their results never sent, and its later calls never run', async () => {
  const heard = { forgotten: [], cancelled: [] };
  const { c, ran, finish } = client({ onForgotten: (id) => heard.forgotten.push(id), onCancel: (id) => heard.cancelled.push(id) });
  const mine = c.answer(c.socket, call(1, 'g1'));
  const theirs = c.answer(c.socket, call(2, 'g2'));
  await tick();
  assert.deepEqual(ran, [1, 2]);
  await c.receive(c.socket, JSON.stringify({ type: 'forgotten', connection: 'g1' }));
  assert.deepEqual(heard, { forgotten: ['g1'], cancelled: [1] }, 'the app drops its card and calls');
  finish.get(1)({ data: { deleted: 1 } });
  finish.get(2)({ data: 'ok' });
  await Promise.all([mine, theirs]);
  assert.deepEqual(c.socket.sent, [{ type: 'result', id: 2, data: 'ok' }], 'nothing of the forgotten call is answered');
  await c.answer(c.socket, call(3, 'g1'));
  assert.deepEqual(ran, [1, 2], 'a call of it still on its way never runs');
  assert.equal(c.socket.sent.length, 1);
});

test('Stop stops the agent in the protocol: the relay is told, its calls are refused here until the person lets it go on', async () => {
  const goOn = [];
  const { c, ran, finish } = client({ onGoOn: (id) => goOn.push(id) });
  c.status = 'connected';
  c.stopAgent('g1');
  assert.deepEqual(c.socket.sent, [{ type: 'stop', connection: 'g1' }, { type: 'step' }]);
  assert.equal(c.isStopped('g1'), true);
  c.socket.sent = [];
  await c.answer(c.socket, call(4, 'g1'));
  assert.deepEqual(ran, [], 'never reaches the app');
  assert.deepEqual(c.socket.sent, [{ type: 'result', id: 4, error: AGENT_STOPPED }]);
  c.socket.sent = [];
  c.letGoOn('g1');
  assert.deepEqual(c.socket.sent, [{ type: 'go_on', connection: 'g1' }]);
  assert.deepEqual(goOn, ['g1']);
  const running = c.answer(c.socket, call(5, 'g1'));
  await tick();
  assert.deepEqual(ran, [5], 'it goes on');
  finish.get(5)({ data: 1 });
  await running;
  // Forgotten while stopped: neither stopped nor answered any more.
  c.stopAgent('g1');
  await c.receive(c.socket, JSON.stringify({ type: 'forgotten', connection: 'g1' }));
  assert.equal(c.isStopped('g1'), false);
  c.socket.sent = [];
  await c.answer(c.socket, call(6, 'g1'));
  assert.deepEqual(c.socket.sent, []);
  assert.ok(FORGOTTEN.includes('forgot this connection'));
});

test('a stop pressed while the tab is not connected reaches the relay once it is, and only then', async () => {
  const { c } = client();
  c.stopAgent('g2');
  assert.deepEqual(c.socket.sent.filter((m) => m.type !== 'step'), [], 'not sent before the tab is welcomed');
  await c.receive(c.socket, JSON.stringify({ type: 'welcome', pairing: 'p', protocol: 2 }));
  assert.deepEqual(c.socket.sent.filter((m) => m.type === 'stop'), [{ type: 'stop', connection: 'g2' }]);
  c.socket.sent = [];
  await c.receive(c.socket, JSON.stringify({ type: 'welcome', pairing: 'p', protocol: 2 }));
  assert.deepEqual(c.socket.sent.filter((m) => m.type === 'stop'), [], 'once: another tab may have let it go on since');
});

test('another tab’s Stop and Let it go on reach this one through the relay', async () => {
  const goOn = [];
  const { c, ran } = client({ onGoOn: (id) => goOn.push(id) });
  await c.receive(c.socket, JSON.stringify({ type: 'stopped', connection: 'g3', stopped: true }));
  await c.answer(c.socket, call(7, 'g3'));
  assert.deepEqual(ran, []);
  assert.deepEqual(c.socket.sent, [{ type: 'result', id: 7, error: AGENT_STOPPED }]);
  await c.receive(c.socket, JSON.stringify({ type: 'stopped', connection: 'g3', stopped: false }));
  assert.deepEqual(goOn, ['g3'], 'the presence hears it goes on');
  assert.equal(c.isStopped('g3'), false);
});

test('the connections as listed follow a stop, a go-on and a forgetting the relay tells, in any tab, each as a new list heard by subscribe', async () => {
  const { c } = client();
  const heard = [];
  c.subscribe((r) => heard.push(r.connectionsList));
  const row = (id, stopped = false) => ({ id, client: 'Claude', host: 'claude.ai', created_ms: 1, used_ms: 1, stopped });
  await c.receive(c.socket, JSON.stringify({ type: 'connections', list: [row('g1'), row('g2')] }));
  await c.receive(c.socket, JSON.stringify({ type: 'stopped', connection: 'g1', stopped: true }));
  assert.deepEqual(c.connectionsList.map((x) => [x.id, x.stopped]), [['g1', true], ['g2', false]], 'stopped, as another tab’s Stop made it');
  await c.receive(c.socket, JSON.stringify({ type: 'stopped', connection: 'g1', stopped: false }));
  assert.deepEqual(c.connectionsList.map((x) => [x.id, x.stopped]), [['g1', false], ['g2', false]], 'let go on');
  await c.receive(c.socket, JSON.stringify({ type: 'forgotten', connection: 'g2' }));
  assert.deepEqual(c.connectionsList.map((x) => x.id), ['g1'], 'forgotten: gone from the list');
  assert.equal(new Set(heard).size, heard.length, 'each change a new list, so what shows it redraws');
  await c.receive(c.socket, JSON.stringify({ type: 'stopped', connection: 'nope', stopped: true }));
  assert.equal(heard.at(-1), heard.at(-2), 'a connection not listed changes nothing');
});
