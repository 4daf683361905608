// Each connection has its own share of the calls a pairing carries: one connection that keeps
// its share of calls waiting in the tab (a leftover or phished one, say) is refused past it at
// once, with a sentence naming its share, and the person's other agent is still answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, waitFor } from './harness.mjs';

const SHARE = 64; // src/limits.rs MAX_CALLS_PER_CONNECTION
const TRIED = SHARE + 16;

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
