// Several tabs of one browser share a pairing: a call goes to the tab focused last (the newest
// on a tie), focus moving mid-call does not misroute an answer, and two agents acting at once
// each get their own answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, dataOf, waitFor } from './harness.mjs';

async function twoTabs() {
  const storage = new MemoryStorage();
  const a = await openTab({ storage, seed: 101 });
  const b = await openTab({ storage, seed: 202 });
  return { a, b, token: await accessToken(a) };
}

const nameVia = async (token) => dataOf(await callTool(token, 'dataset_describe')).name;

/** Tells the pairing `tab` is focused or not, and waits until the pairing has read it: a round
 * trip on the same socket (the connection list) comes back only after the focus message. */
async function focus(tab, focused) {
  tab.client.setFocused(focused);
  await tab.client.connections();
}

test('calls go to the tab focused last, the newest on a tie', async () => {
  const { a, b, token } = await twoTabs();
  assert.equal(await nameVia(token), b.app.dataset.name, 'the newest tab, neither focused since');
  await focus(a, true);
  assert.equal(await nameVia(token), a.app.dataset.name);
  await focus(a, false); // losing focus hands nothing on
  assert.equal(await nameVia(token), a.app.dataset.name);
  await focus(b, true);
  assert.equal(await nameVia(token), b.app.dataset.name);
  a.close();
  b.close();
});

test('focus moving mid-call: the call is answered by its tab, the next goes to the new one', async () => {
  const { a, b, token } = await twoTabs();
  let release;
  let entered = false;
  const held = new Promise((r) => (release = r));
  const run = b.client.handle;
  b.client.handle = async (call) => {
    entered = true;
    await held;
    return run(call);
  };
  const pending = callTool(token, 'dataset_describe');
  await waitFor(() => entered, 5000);
  await focus(a, true);
  assert.equal(await nameVia(token), a.app.dataset.name, 'the next call goes to the newly focused tab');
  release();
  assert.equal(dataOf(await pending).name, b.app.dataset.name, 'the held call is answered by its own tab');
  a.close();
  b.close();
});

test('two agents acting at once each get their own answers', async () => {
  const storage = new MemoryStorage();
  const tab = await openTab({ storage, seed: 303 });
  const [first, second] = [await accessToken(tab), await accessToken(tab)];
  const ids = Array.from({ length: 40 }, (_, i) => i + 1);
  const results = await Promise.all(ids.map((id) => callTool(id % 2 ? first : second, 'items_values', { ids: [id] }, id)));
  results.forEach((r, i) => {
    const item = dataOf(r).items[0];
    assert.equal(item.id, ids[i], 'each caller got the item it asked for');
  });
  const connections = new Set(tab.calls.map((c) => c.connection.id));
  assert.equal(connections.size, 2, 'the tab saw two connections');
  tab.close();
});
