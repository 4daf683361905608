// The official SDK client refreshes by itself when its access token stops working, and goes on
// calling through the tab with the new one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, connectSdkClient, dataOf } from './harness.mjs';

test('the SDK client refreshes once and calls on', async () => {
  const tab = await openTab({ seed: 31 });
  const { client, provider } = await connectSdkClient(tab);
  const before = provider.tokens();
  assert.ok(before.refresh_token, 'the SDK saved a refresh token');
  // The access token stops working (as after an hour); the refresh token still works.
  provider.saveTokens({ ...before, access_token: `${before.access_token}x` });
  const result = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(dataOf(result).name, tab.app.dataset.name);
  const after = provider.tokens();
  assert.notEqual(after.refresh_token, before.refresh_token, 'the refresh token rotated');
  assert.equal(provider.pages.length, 1, 'no new authorization was needed');
  await client.close();
  tab.close();
});
