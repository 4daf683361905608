// Past each bound of a pairing (tabs, message size) one sentence or close reason says so, and
// nothing hangs (waiting calls: bounds_per_connection).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, waitFor, RELAY, APP_ORIGIN } from './harness.mjs';
import { CLOSE, RelayClient } from '../../tab/relay-client.js';

const MAX_TABS = 16;

test('a pairing holds 16 tabs; the 17th is refused with a reason', async () => {
  const storage = new MemoryStorage();
  const tabs = [];
  for (let i = 0; i < MAX_TABS; i++) tabs.push(await openTab({ storage }));
  assert.ok(tabs.every((t) => t.connected.status === 'connected'));
  // The 17th is closed with a reason, and keeps trying (with growing waits) in case one closes.
  const statuses = [];
  const extra = new RelayClient({ relay: RELAY, storage, keys: storage.keys, headers: { origin: APP_ORIGIN }, handle: async () => ({ data: null }), onStatus: (status, detail) => statuses.push({ status, detail }) });
  extra.start();
  const refused = await waitFor(() => statuses.find((s) => s.detail && s.detail.code === CLOSE.TOO_MANY_TABS), 10_000);
  assert.match(refused.detail.reason, /Too many tabs/);
  assert.equal(refused.status, 'waiting', 'it tries again later, in case a tab closes');
  extra.stop();
  tabs.forEach((t) => t.close());
});

test('an answer over the message limit closes the tab and fails its call, never a hang', async () => {
  const tab = await openTab();
  const token = await accessToken(tab);
  tab.client.handle = async () => ({ data: 'x'.repeat(16 * 1024 * 1024 + 1) });
  const result = await callTool(token, 'history_list');
  assert.equal(result.isError, true);
  assert.match(result.content[0].text, /went away/);
  tab.close();
});
