// A tab that closes or reloads mid-call fails its calls at once with the page-gone sentence,
// never a wait; the next call goes to a tab still open; a dropped tab reconnects by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, waitFor, dataOf, connectedTabs, CALL_WAIT_MS } from './harness.mjs';

test('a tab closed mid-call fails the call at once; the other tab takes the next', async () => {
  const storage = new MemoryStorage();
  const stays = await openTab({ storage });
  const leaves = await openTab({ storage }); // opened last: it gets the calls
  const token = await accessToken(leaves);
  let reached = false;
  leaves.client.handle = () => {
    reached = true;
    return new Promise(() => {}); // the person never answers
  };
  const asked = Date.now();
  const pending = callTool(token, 'history_list');
  await waitFor(() => reached, 5000);
  leaves.close();
  const result = await pending;
  // Ordering, not a stopwatch: it failed before the relay's wait for the call could have run out.
  assert.ok(Date.now() - asked < CALL_WAIT_MS, `failed ${Date.now() - asked} ms after it was asked`);
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /went away/);
  assert.match(result.content[0].text, /whether the step was done is not known/);
  assert.match(result.content[0].text, /read the history/);
  const next = await callTool(token, 'dataset_describe');
  assert.equal(next.isError, false);
  assert.equal(dataOf(next).name, stays.app.dataset.name);
  stays.close();
});

test('a pairing with no tab open answers with a sentence saying to open the app', async () => {
  const tab = await openTab();
  const token = await accessToken(tab);
  tab.close();
  await waitFor(async () => (await connectedTabs(token)) === 0, 5000);
  const started = Date.now();
  const result = await callTool(token, 'history_list');
  assert.ok(Date.now() - started < CALL_WAIT_MS, 'answered at once, not at the end of the wait');
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /No tab of the app is open.*open the app/);
});

test('a dropped tab reconnects with growing waits and receives new calls; its URL names its pairing, never its key', async () => {
  const storage = new MemoryStorage();
  const tab = await openTab({ storage });
  const token = await accessToken(tab);
  const url = new URL(tab.client.socket.url);
  assert.equal(url.searchParams.get('pairing'), tab.client.pairing, 'the socket names the pairing id, as tokens do');
  assert.ok(tab.client.key && !tab.client.socket.url.includes(tab.client.key), 'the public key stays out of the address');
  tab.client.socket.close(4000, 'test drop');
  await waitFor(() => tab.statuses.filter((s) => s.status === 'connected').length >= 2, 10_000);
  const waiting = tab.statuses.find((s) => s.status === 'waiting');
  assert.ok(waiting.detail.wait >= 250 && waiting.detail.wait <= 500, `first wait ${waiting.detail.wait} ms`);
  const result = await callTool(token, 'history_list');
  assert.equal(result.isError, false);
  tab.close();
});
