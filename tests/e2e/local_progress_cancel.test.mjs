// Through tabrelay-local as through the relay: while the person decides on a call's card the
// agent app hears progress with the card's sentence, and when it cancels the call
// (notifications/cancelled on stdin) the card goes from the tab and the item stays.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, approveIn, cardSays, cardGone, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

test('a local agent hears progress while the person decides, and its cancel takes the card away', async (t) => {
  const local = await stdioClient('Local cancelling agent');
  t.after(() => local.client.close());
  const code = codeIn(textOf(await local.client.callTool({ name: 'status', arguments: {} })));
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await approveIn(page)(code);
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));

  const heard = [];
  const abort = new AbortController();
  const call = local.client.callTool({ name: 'items_delete', arguments: { ids: [3] } }, undefined, {
    onprogress: (p) => heard.push(p.message ?? ''),
    signal: abort.signal,
  });
  await cardSays(page, /^Local cancelling agent \(local\) asks to delete item 3\./);
  await waitFor(() => heard.some((m) => /delete item 3/.test(m)));
  abort.abort();
  await assert.rejects(call);
  await cardGone(page);
  // Nothing was deleted: the agent reads item 3 still.
  const values = await local.client.callTool({ name: 'items_values', arguments: { ids: [3], columns: ['score'] } });
  assert.notEqual(values.isError, true, textOf(values));
});
