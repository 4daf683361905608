// A local agent's connection is one of the tab's connections like any other: the panel lists it
// beside a remote agent's, and Forget ends it at once (its next call is told a new code to
// type) while the remote agent goes on.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, approveIn, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

test('Forget ends a local agent’s connection at once, and leaves the remote agent’s', async (t) => {
  const local = await stdioClient('Forgotten local agent');
  t.after(() => local.client.close());
  const code = codeIn(textOf(await local.client.callTool({ name: 'status', arguments: {} })));
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  const remote = await connectThroughPage(page, 'remote', namedProvider(page, 'Remote agent kept'));
  t.after(() => remote.client.close());
  await approveIn(page)(code);
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));
  assert.notEqual((await local.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);

  await page.click('#connections [part=refresh]');
  const items = page.locator('#connections [part=item]');
  const mine = items.filter({ hasText: 'Forgotten local agent (local)' });
  await mine.waitFor();
  await items.filter({ hasText: 'Remote agent kept' }).waitFor();
  await mine.locator('[part=forget]').click();
  // Forget asks first (it cannot be undone); the question's Forget forgets.
  await page.click('#connections [part=forget-yes]');
  await page.locator('#connections [part=result]', { hasText: 'Forgot Forgotten local agent (local)' }).waitFor();
  await items.filter({ hasText: 'Remote agent kept' }).waitFor();
  assert.equal(await mine.count(), 0);

  // Its next call reaches nothing: it is told a new code to type, and so is its status tool.
  const refused = await local.client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(refused.isError, true);
  const again = codeIn(textOf(refused));
  assert.notEqual(again, code, 'a new code');
  assert.equal(codeIn(textOf(await local.client.callTool({ name: 'status', arguments: {} }))), again);
  // The remote agent goes on.
  assert.notEqual((await remote.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);
});
