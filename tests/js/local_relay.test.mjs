// The tab's second relay, the local server (tab/local-relay.js): a quiet client says 'absent'
// through every failed try (no 'connecting' and 'waiting' in turn) and waits longer each time;
// joined to the relay's client, a code goes to the local server first and to the relay when the
// local server refuses it, the connections are both relays' (the local ones marked), Forget and
// a call's words go to the relay that holds them, and the tools go to both; the person's presence
// for a local code's approval is proven to the local server, for any other to the relay; a
// waiting page's link reference goes to the local server first as a code does, and its confirm
// window opens at the origin of the relay that approved it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient } from '../../tab/relay-client.js';
import { joinLocal, joinPresenceCheck } from '../../tab/local-relay.js';
import { MemoryStorage } from './memory_storage.mjs';

/** Keys kept in memory (Node has no IndexedDB). */
const memoryKeys = () => {
  const kept = new Map();
  return { get: async (o) => kept.get(o), put: async (o, k) => kept.set(o, k) };
};

/** A WebSocket that never connects: it fails at once, as a port nobody listens on does. */
class Refused extends EventTarget {
  static made = 0;
  constructor() {
    super();
    Refused.made += 1;
    this.readyState = 3;
    queueMicrotask(() => this.dispatchEvent(Object.assign(new Event('close'), { code: 1006, reason: '' })));
  }
  close() {}
}

test('a quiet client says absent through every failed try, and waits longer each time', async () => {
  const said = [];
  const client = new RelayClient({ relay: 'http://127.0.0.1:8790', quiet: true, keys: memoryKeys(), storage: new MemoryStorage(), WebSocket: Refused, handle: () => ({}) });
  client.subscribe((c) => said.push(c.status));
  const waits = [];
  const setTimeoutBefore = globalThis.setTimeout;
  globalThis.setTimeout = (fn, ms) => {
    waits.push(ms);
    return setTimeoutBefore(fn, 0);
  };
  try {
    client.start();
    while (Refused.made < 4) await new Promise((r) => setTimeoutBefore(r, 1));
  } finally {
    client.stop();
    globalThis.setTimeout = setTimeoutBefore;
  }
  assert.deepEqual([...new Set(said.slice(0, -1))], ['absent'], `said ${said}`);
  assert.ok(waits.length >= 3 && waits[2] > waits[0], `the waits grow: ${waits}`);
  // The same failures make a client of the relay (not quiet) say each try.
  const loud = [];
  const relay = new RelayClient({ relay: 'http://127.0.0.1:8787', keys: memoryKeys(), storage: new MemoryStorage(), WebSocket: Refused, handle: () => ({}) });
  relay.subscribe((c) => loud.push(c.status));
  relay.start();
  const from = Refused.made;
  while (Refused.made < from + 1 || !loud.includes('waiting')) await new Promise((r) => setTimeoutBefore(r, 1));
  relay.stop();
  assert.ok(loud.includes('connecting') && loud.includes('waiting'), `said ${loud}`);
});

/** A client that is connected, recording what it sends; `answers` answers its code requests. */
function connected(relay, answers = {}) {
  const c = new RelayClient({ relay, storage: new MemoryStorage(), handle: async () => ({}) });
  const sent = [];
  c.socket = { readyState: 1, send: (t) => sent.push(JSON.parse(t)) };
  c.status = 'connected';
  c.codeRequest = async (type, field, code) => {
    sent.push({ type, code });
    if (answers[code]) return answers[code];
    throw new Error('That connect code is not waiting for approval.');
  };
  c.askList = async (message) => {
    sent.push(message);
    return c.connectionsList;
  };
  return { c, sent };
}

test('joined, a code goes to the local server first, and to the relay when it refuses it', async () => {
  const { c: relay, sent: toRelay } = connected('https://relay.example', { 'REMOTE-CODE': { client: 'Claude' } });
  const { c: local, sent: toLocal } = connected('http://127.0.0.1:8790', { 'LOCAL-CODE': { client: 'Claude Code (local)' } });
  joinLocal(relay, local);
  assert.deepEqual(await relay.approve('LOCAL-CODE'), { client: 'Claude Code (local)' });
  assert.equal(toRelay.length, 0, 'a local code never reaches the relay');
  assert.deepEqual(await relay.approve('REMOTE-CODE'), { client: 'Claude' });
  assert.deepEqual(toLocal.map((m) => m.code), ['LOCAL-CODE', 'REMOTE-CODE']);
  // The local server not running: codes go straight to the relay.
  local.status = 'absent';
  await relay.describe('REMOTE-CODE');
  assert.equal(toLocal.length, 2);
});

test('joined, the connections are both relays’, and Forget, Stop and a call’s words go to the one that holds them', async () => {
  const { c: relay, sent: toRelay } = connected('https://relay.example');
  const { c: local, sent: toLocal } = connected('http://127.0.0.1:8790');
  relay.connectionsList = [{ id: 'r1', client: 'Claude' }];
  local.connectionsList = [{ id: 'l1', client: 'Claude Code (local)' }];
  joinLocal(relay, local);
  const both = await relay.connections();
  assert.deepEqual(both.map((c) => [c.id, Boolean(c.local)]), [['r1', false], ['l1', true]]);
  // The list the panel follows is both too, the same array until either relay's changes.
  assert.deepEqual(relay.connectionsList.map((c) => c.id), ['r1', 'l1']);
  assert.equal(relay.connectionsList, relay.connectionsList);
  local.connectionsList = [...local.connectionsList, { id: 'l2', client: 'Cursor (local)' }];
  assert.deepEqual(relay.connectionsList.map((c) => c.id), ['r1', 'l1', 'l2']);
  local.connectionsList = local.connectionsList.slice(0, 1);
  await relay.forget('l1');
  assert.ok(toLocal.some((m) => m.type === 'forget' && m.id === 'l1'));
  assert.ok(!toRelay.some((m) => m.type === 'forget'));
  relay.stopAgent('l1');
  assert.ok(toLocal.some((m) => m.type === 'stop' && m.connection === 'l1'));
  assert.ok(!toRelay.some((m) => m.type === 'stop'));
  assert.ok(relay.isStopped('l1'));
  local.running.set(7, 'l1');
  relay.asking('local-7', 'Delete item 1?');
  assert.ok(toLocal.some((m) => m.type === 'asking' && m.id === 7));
  assert.ok(!toRelay.some((m) => m.type === 'asking'));
  relay.setTools([{ name: 't', setting: 'runs' }]);
  assert.ok(toLocal.some((m) => m.type === 'tools') && toRelay.some((m) => m.type === 'tools'));
});

test('joined, a local code’s approval is proven to the local server, any other to the relay; a local refusal stands', async () => {
  const { c: relay } = connected('https://relay.example', { 'REMOT-00002': { client: 'Claude' } });
  const { c: local, sent: toLocal } = connected('http://127.0.0.1:8790', { 'LOCAL-00001': { client: 'Claude Code (local)' } });
  joinLocal(relay, local);
  const proven = [];
  const checkOf = (name) => ({ withoutDevice: 'refuse', approval: async (said) => (proven.push([name, said]), { by: name }), confirm: async () => ({ verified: true, by: name }) });
  const check = joinPresenceCheck(checkOf('relay'), checkOf('local'), relay);
  assert.deepEqual(await check.approval('LOCAL-00001'), { by: 'local' });
  assert.deepEqual(await check.approval('REMOT-00002'), { by: 'relay' });
  assert.deepEqual(await check.confirm('answer', 'x'), { verified: true, by: 'relay' }, 'the tab’s own decisions stay the relay’s check');
  // A waiting page's link reference: the local server is asked of it too (it serves its agent
  // app's waiting page); one it did not make is the relay's.
  const link = 'ABCDEFGHJKMNPQRSTV';
  const asked = toLocal.length;
  assert.deepEqual(await check.approval(link), { by: 'relay' });
  assert.deepEqual(toLocal.slice(asked), [{ type: 'describe', code: link }], 'the local server was asked of the link');
  assert.deepEqual(proven, [['local', 'LOCAL-00001'], ['relay', 'REMOT-00002'], ['relay', link]]);
  // The local server refusing the approval of its own code (no presence proven): its sentence,
  // never the relay's unknown code.
  local.codeRequest = async (type, field, code) => {
    toLocal.push({ type, code });
    throw new Error('Nothing was connected: your device did not confirm it was you.');
  };
  await assert.rejects(relay.approve('LOCAL-00001'), /your device did not confirm/);
});

test('joined, a waiting page’s link goes to the local server first; its approval’s confirm window is the local server’s', async () => {
  const LOCAL_LINK = 'MMMMMMMMMMMMMMMMMM';
  const REMOTE_LINK = 'RRRRRRRRRRRRRRRRRR';
  const { c: relay, sent: toRelay } = connected('https://relay.example', { [REMOTE_LINK]: { client: 'Claude', confirm: 'https://relay.example/authorize/confirm?ticket=r' } });
  const { c: local, sent: toLocal } = connected('http://127.0.0.1:8790', { [LOCAL_LINK]: { client: 'Claude Code (local)', confirm: 'http://127.0.0.1:8790/authorize/confirm?ticket=l' } });
  joinLocal(relay, local);
  const proven = [];
  const checkOf = (name) => ({ withoutDevice: 'refuse', approval: async (said) => (proven.push([name, said]), { by: name }) });
  const check = joinPresenceCheck(checkOf('relay'), checkOf('local'), relay);
  assert.equal((await relay.describeLink(LOCAL_LINK)).client, 'Claude Code (local)');
  assert.deepEqual(await check.approval(LOCAL_LINK), { by: 'local' }, 'the local server’s link is proven to it');
  const said = await relay.approveLink(LOCAL_LINK);
  assert.equal(new URL(said.confirm).origin, 'http://127.0.0.1:8790');
  assert.equal(toRelay.length, 0, 'a local link never reaches the relay');
  assert.equal((await relay.approveLink(REMOTE_LINK)).client, 'Claude');
  assert.deepEqual(toRelay, [{ type: 'approve', code: REMOTE_LINK }]);
  assert.deepEqual(toLocal.map((m) => [m.type, m.code]), [['describe', LOCAL_LINK], ['approve', LOCAL_LINK], ['approve', REMOTE_LINK]]);
  // A link the local server described is its own: its refusal stands.
  local.codeRequest = async () => {
    throw new Error('This confirmation is no longer valid.');
  };
  await assert.rejects(relay.approveLink(LOCAL_LINK), /no longer valid/);
  assert.equal(toRelay.length, 1);
});
