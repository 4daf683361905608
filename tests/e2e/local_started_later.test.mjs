// An agent app may start tabrelay-local long after the tab opened, when the tab's quiet retries
// have grown to several seconds apart: the code the person then types is not lost to the relay.
// Typing it tries the local server again at once, and the local server approves it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus, LOCAL_URL } from './local_harness.mjs';

const chromium = fileChromium();

test('a code typed after the local server started late reaches it at once, not at the next retry', async (t) => {
  const page = await openDemo(await chromium());
  const tries = [];
  const local = new URL(LOCAL_URL).host;
  page.on('websocket', (ws) => ws.url().includes(local) && tries.push(Date.now()));
  // Four quiet tries: the next one is 4 to 8 s away.
  await waitFor(() => tries.length >= 4, 30_000);
  await localStatus(page).filter({ hasText: /^not running$/ }).waitFor();

  const agent = await stdioClient('Late local agent');
  t.after(() => agent.client.close());
  const code = codeIn(textOf(await agent.client.callTool({ name: 'status', arguments: {} })));
  const typed = Date.now();
  await page.fill('#code', code);
  await page.click('#approve');
  await page.locator('#approve-result', { hasText: 'Connected to Late local agent (local)' }).waitFor({ timeout: 3_500 });
  assert.ok(Date.now() - typed < 3_500);
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor();
  await waitFor(() => agent.changed.includes('notifications/tools/list_changed'));
  assert.notEqual((await agent.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);
});
