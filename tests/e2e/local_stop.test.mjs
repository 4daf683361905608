// Stop works on a local agent as on any: in the demo tab, with a remote agent connected too, the
// person's Stop on the local agent's line withdraws its card and its call hears so; its next call
// is refused by the local server's pairing itself (AGENT_STOPPED), while the remote agent's calls
// still run.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, approveIn, cardSays, textOf, SHOW_MS } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { AGENT_STOPPED } from '../../tab/relay-client.js';
import { stdioClient, codeIn, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

test('Stop on a local agent’s line stops it, and only it', async (t) => {
  const local = await stdioClient('Stopped local agent');
  t.after(() => local.client.close());
  const code = codeIn(textOf(await local.client.callTool({ name: 'status', arguments: {} })));
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  const remote = await connectThroughPage(page, 'remote', namedProvider(page, 'Remote agent going on'));
  t.after(() => remote.client.close());
  await approveIn(page)(code);
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));

  const call = local.client.callTool({ name: 'items_delete', arguments: { ids: [4] } });
  await cardSays(page, /^Stopped local agent \(local\) asks to delete item 4\./);
  await page.locator('#activity [part~=acting]', { hasText: 'Stopped local agent (local)' }).locator('[part=stop]').click({ timeout: SHOW_MS });
  assert.match(textOf(await call), /pressed Stop/);
  const refused = await local.client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(refused.isError, true);
  assert.ok(textOf(refused).includes(AGENT_STOPPED), textOf(refused));
  assert.notEqual((await remote.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true, 'the remote agent goes on');
});
