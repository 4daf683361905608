// Two relays, one person's side: the relay and the local server each number their own calls, so
// both may send a call with the same id at once. The person's side must keep them apart: each
// call reaches it with an id of its own, a cancel from one relay cancels only that relay's call,
// and the card's words (asking, answered) go back to the relay that sent the call, with its id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient } from '../../tab/relay-client.js';
import { joinLocal } from '../../tab/local-relay.js';
import { MemoryStorage } from './memory_storage.mjs';

/** A client that is connected, recording what it sends; its calls reach `handle`. */
function connected(relay, hooks) {
  const c = new RelayClient({ relay, storage: new MemoryStorage(), ...hooks });
  const sent = [];
  c.socket = { readyState: 1, send: (t) => sent.push(JSON.parse(t)) };
  c.status = 'connected';
  return { c, sent };
}

test('a relay call and a local call with the same id stay two calls for the person', async () => {
  const seen = [];
  const cancelled = [];
  const finish = new Map();
  // The person's side, as tabrelay.js gives both clients the same one.
  const hooks = {
    handle: (call) => {
      seen.push(call.id);
      return new Promise((resolve) => finish.set(call.id, resolve));
    },
    onCancel: (id) => cancelled.push(id),
  };
  const { c: relay, sent: toRelay } = connected('https://relay.example', hooks);
  const { c: local, sent: toLocal } = connected('http://127.0.0.1:8790', hooks);
  joinLocal(relay, local);
  const call = (connection) => JSON.stringify({ type: 'call', id: 4096, tool: 'list_items', args: {}, agent: 'x', connection: { id: connection, kind: 'connector', client: 'x', host: '' }, turn: 1 });
  const fromRelay = relay.receive(relay.socket, call('r1'));
  const fromLocal = local.receive(local.socket, call('l1'));
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(seen.length, 2);
  assert.notEqual(seen[0], seen[1], `the person's side saw ids ${seen}`);
  const [relayId, localId] = seen;

  // The relay cancels its call: only its call is cancelled on the person's side.
  await relay.receive(relay.socket, JSON.stringify({ type: 'cancel', id: 4096 }));
  assert.deepEqual(cancelled, [relayId]);

  // The person is asked about the local call: the local server hears it, by its own id.
  relay.asking(localId, 'Delete item 1?');
  relay.answered(localId);
  assert.deepEqual(
    toLocal.filter((m) => m.type === 'asking' || m.type === 'answered').map((m) => [m.type, m.id]),
    [['asking', 4096], ['answered', 4096]],
  );
  assert.ok(!toRelay.some((m) => m.type === 'asking' || m.type === 'answered'), 'the relay hears nothing of a local call');
  relay.asking(relayId, 'Delete item 2?');
  assert.deepEqual(toRelay.filter((m) => m.type === 'asking').map((m) => m.id), [4096]);

  // Each result goes to the relay that sent the call, under that relay's id.
  finish.get(localId)({ data: { n: 'local' } });
  finish.get(relayId)({ data: { n: 'relay' } });
  await Promise.all([fromRelay, fromLocal]);
  const result = (sent) => sent.find((m) => m.type === 'result');
  assert.deepEqual([result(toLocal).id, result(toLocal).data], [4096, { n: 'local' }]);
  assert.deepEqual([result(toRelay).id, result(toRelay).data], [4096, { n: 'relay' }]);
});
