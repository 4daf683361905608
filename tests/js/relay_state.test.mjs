// The relay client's protocol state (tab/relay-state.js), driven without a socket or a timer:
// messages as the generated reader reads them (tab/generated/wire.js), the person's presses,
// and what each says the shell is to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayState, RETRY_FIRST_MS, RETRY_MAX_MS, QUIET_RETRY_MAX_MS } from '../../tab/relay-state.js';
import { readRelay, writeRelay } from '../../tab/generated/wire.js';

/** A relay's message as the tab reads it off the socket. */
const heard = (type, fields) => readRelay(writeRelay(type, fields));
const call = (id, connection) => heard('call', { id, tool: 't', args: {}, agent: 'A', connection: { id: connection, kind: 'connector', client: 'A', host: 'a.example' }, turn: 1 });

test('a stop pressed while not connected is owed to the relay once, and its calls are refused here', () => {
  const state = new RelayState();
  state.stop('g1');
  assert.equal(state.gate(call(1, 'g1')), 'stopped');
  assert.equal(state.gate(call(2, 'g2')), null);
  assert.deepEqual(state.owed(), [['stop', { connection: 'g1' }]]);
  assert.deepEqual(state.owed(), [], 'sent once');
  assert.equal(state.goOn('g1'), true);
  assert.equal(state.goOn('g1'), false, 'no longer stopped');
  assert.deepEqual(state.owed(), [['go_on', { connection: 'g1' }]], 'the last press only');
  assert.equal(state.gate(call(3, 'g1')), null);
});

test('the relay telling a stop and a go-on: another tab’s press holds here too, and the list follows', () => {
  const state = new RelayState();
  const stop = state.hear(heard('stopped', { connection: 'g1', stopped: true }));
  assert.equal(stop.goOn, undefined);
  assert.deepEqual([{ id: 'g1' }, { id: 'g2' }].map(stop.relist), [{ id: 'g1', stopped: true }, { id: 'g2' }]);
  assert.equal(state.gate(call(1, 'g1')), 'stopped');
  const goOn = state.hear(heard('stopped', { connection: 'g1', stopped: false }));
  assert.equal(goOn.goOn, 'g1', 'the app hears the agent goes on');
  assert.equal(state.gate(call(1, 'g1')), null);
  assert.equal(state.hear(heard('stopped', { connection: 'g1', stopped: false })).goOn, undefined, 'once');
});

test('a connection forgotten: its calls under way are cancelled, none of its calls runs again, it leaves the list', () => {
  const state = new RelayState();
  state.running.set(7, 'g1');
  state.running.set(8, 'g2');
  state.stop('g1');
  const said = state.hear(heard('forgotten', { connection: 'g1' }));
  assert.equal(said.forgotten, 'g1');
  assert.deepEqual(said.cancel, [7]);
  assert.deepEqual([{ id: 'g1' }, { id: 'g2' }].map(said.relist).filter(Boolean), [{ id: 'g2' }]);
  assert.equal(state.gate(call(9, 'g1')), 'forgotten', 'not refused aloud: nothing is said');
  assert.equal(state.stoppedAgents.has('g1'), false);
});

test('the welcome, a presence credential and a refused list are kept until they change', () => {
  const state = new RelayState();
  state.retries = 3;
  state.hear(heard('welcome', { pairing: 'p', protocol: 3 }));
  assert.equal(state.retries, 0);
  assert.equal(state.presenceKey, null);
  state.hear(heard('presence', { credential: 'c', key: 'k' }));
  assert.deepEqual(state.presenceKey, { credential: 'c', key: 'k' });
  state.hear(heard('welcome', { pairing: 'p', protocol: 3, presence: { credential: 'c2', key: 'k2' } }));
  assert.deepEqual(state.presenceKey, { credential: 'c2', key: 'k2' });
  state.hear(heard('tools_refused', { sentence: 'Bad.' }));
  assert.equal(state.toolsRefused, 'Bad.');
  assert.equal(state.restated(), true);
  assert.equal(state.toolsRefused, null);
  assert.equal(state.restated(), false);
  assert.deepEqual(state.hear(heard('cancel', { id: 1 })), {}, 'no state of a cancel');
});

test('the waits between tries grow to their longest, a quiet client’s longer', () => {
  const waits = (state) => Array.from({ length: 10 }, () => state.nextWait(1));
  const loud = waits(new RelayState());
  assert.equal(loud[0], RETRY_FIRST_MS);
  assert.ok(loud.every((w, i) => i === 0 || w >= loud[i - 1]));
  assert.equal(loud.at(-1), RETRY_MAX_MS);
  assert.equal(waits(new RelayState({ quiet: true })).at(-1), QUIET_RETRY_MAX_MS);
  assert.equal(new RelayState().nextWait(0), RETRY_FIRST_MS / 2, 'half, at the least');
});
