// Each connection has its own share of what a pairing holds: one connection (a leftover or
// phished one, say) that keeps its share of calls waiting in the tab, or of listen streams open,
// or sends a JSON-RPC id of nearly a mebibyte, is refused past it at once with a sentence naming
// its share, and the person's other agent is still answered and still hears.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, waitFor, listenStream, toolDef } from './harness.mjs';

const SHARE = 64; // src/limits.rs MAX_CALLS_PER_CONNECTION
const TRIED = SHARE + 16;
const LISTENERS = 4; // src/limits.rs MAX_LISTENERS_PER_CONNECTION
const ID_KIB = 16; // src/limits.rs MAX_ID_BYTES_PER_CONNECTION / 1024

/** Resolves with `promise`'s value, or with 'no answer' after `ms`. */
function within(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve('no answer'), ms))]);
}

test("a connection that fills its share of waiting calls leaves the other connection's calls answered", async () => {
  const tab = await openTab({ storage: new MemoryStorage() });
  const [crowding, own] = [await accessToken(tab), await accessToken(tab)];
  // The tab never answers the crowding connection's calls (as if the person never looked); it
  // answers every other.
  const held = [];
  let crowdingId = null;
  tab.client.handle = async (call) => {
    crowdingId ??= call.connection.id;
    if (call.connection.id === crowdingId) {
      held.push(call.id);
      return new Promise(() => {});
    }
    return { data: { answered: true } };
  };
  const first = callTool(crowding, 'history_list', {}, 1);
  await waitFor(() => held.length === 1, 10_000);
  // It tries more calls than its share: its share waits in the tab, each other is refused at
  // once. (The whole pairing used to carry its 64: the person's own agent was then refused.)
  const rest = Array.from({ length: TRIED - 1 }, (_, i) => within(callTool(crowding, 'history_list', {}, i + 2), 5_000));
  await waitFor(() => held.length >= SHARE, 10_000);
  const refused = (await Promise.all(rest)).filter((r) => r !== 'no answer');
  assert.equal(refused.length, TRIED - SHARE, 'every call past its share is answered at once');
  for (const r of refused) {
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, new RegExp(`This connection already has ${SHARE} calls`));
  }
  // The tab received exactly its share (the refused calls never reached it).
  await tab.client.connections(); // a round trip after every call the pairing sent
  assert.equal(held.length, SHARE);
  // The person's own agent is answered, twice over.
  for (const id of [101, 102]) {
    const r = await within(callTool(own, 'history_list', {}, id), 10_000);
    assert.notEqual(r, 'no answer');
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.match(r.content[0].text, /"answered":true/);
  }
  tab.close(); // the held calls fail at once
  const failed = await first;
  assert.ok(failed.isError && /went away/.test(failed.content[0].text));
});

const listen = (token) => listenStream(token);

test("a connection that fills its share of listen streams leaves the other connection's stream hearing changes", async () => {
  const tab = await openTab({ storage: new MemoryStorage(), tools: [toolDef('one')] });
  const [crowding, own] = [await accessToken(tab), await accessToken(tab)];
  const held = [];
  for (let i = 0; i < LISTENERS; i++) held.push(await listen(crowding));
  await waitFor(() => held.every((s) => s.events.length >= 1));
  // One more of the same connection: refused with a sentence naming its share, the stream ends.
  const over = await listen(crowding);
  await within(over.reading, 5_000);
  const error = over.events.find((e) => e.error);
  assert.ok(error, JSON.stringify(over.events));
  assert.match(error.error.message, new RegExp(`This connection already holds ${LISTENERS} listen streams`));
  // The person's own agent listens, and hears the tab's next list.
  const mine = await listen(own);
  await waitFor(() => mine.events.length >= 1);
  assert.equal(mine.events[0].method, 'notifications/subscriptions/acknowledged');
  tab.client.setTools([toolDef('one'), toolDef('two')]);
  await waitFor(() => mine.events.some((e) => e.method === 'notifications/tools/list_changed'));
  assert.ok(!mine.events.some((e) => e.error), JSON.stringify(mine.events));
  await Promise.all([...held, over, mine].map((s) => s.stop()));
  tab.close();
});

test("a call whose JSON-RPC id is nearly a mebibyte is refused before the tab hears of it, and short ids are answered", async () => {
  const tab = await openTab({ storage: new MemoryStorage() });
  const [long, own] = [await accessToken(tab), await accessToken(tab)];
  let reached = 0;
  tab.client.handle = async () => {
    reached += 1;
    return { data: { answered: true } };
  };
  // As long as the MCP endpoint's body cap lets an id be (1 MiB with the rest of the call).
  const id = 'i'.repeat(1024 * 1024 - 512);
  const refused = await callTool(long, 'history_list', {}, id);
  assert.equal(refused.isError, true, JSON.stringify(refused).slice(0, 300));
  assert.match(refused.content[0].text, new RegExp(`would pass ${ID_KIB} KiB.*use a short id`));
  // The same connection with a short id, and the other connection, are answered; the tab heard
  // of those two only.
  for (const token of [long, own]) {
    const r = await within(callTool(token, 'history_list', {}, 7), 10_000);
    assert.notEqual(r, 'no answer');
    assert.equal(r.isError, false, JSON.stringify(r));
  }
  assert.equal(reached, 2);
  tab.close();
});
