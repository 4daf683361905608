// A connection the person approved outlives a run of tabrelay-local: the agent app that starts it
// again (its state directory kept, as between two sessions of Claude Code) is connected at once,
// no new code, through the relay's own refresh (the token endpoint's saga rotates the refresh
// token, the pairing, read back with its grants, checks it). Forget ends that too: the next run
// gives a code.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileChromium, openDemo, approveIn, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus, freshState } from './local_harness.mjs';

const chromium = fileChromium();
const said = (client) => client.callTool({ name: 'status', arguments: {} }).then(textOf);
/** Where the agent app's connection is kept: a file of its own, by its name (in hex). */
const keptIn = (state) => join(state, `connection-${Buffer.from('Kept local agent').toString('hex')}.json`);

test('an approved local connection outlives a run of the binary, until the person forgets it', async () => {
  const state = freshState();
  const first = await stdioClient('Kept local agent', { state });
  const code = codeIn(await said(first.client));
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await approveIn(page)(code);
  await waitFor(() => first.changed.includes('notifications/tools/list_changed'));
  const refresh = JSON.parse(readFileSync(keptIn(state), 'utf8')).refresh;
  assert.equal(statSync(keptIn(state)).mode & 0o777, 0o600, 'owner-only');
  await first.client.close();

  // The agent app starts it again: connected at once, the tab's tools answer.
  const second = await stdioClient('Kept local agent', { state });
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 70_000 });
  assert.doesNotMatch(await said(second.client), /connect code/);
  const described = await second.client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.notEqual(described.isError, true, textOf(described));
  const rotated = JSON.parse(readFileSync(keptIn(state), 'utf8')).refresh;
  assert.notEqual(rotated, refresh, 'the refresh token rotated');

  // Forgotten in the tab: this run is told a code, and so is the next.
  const items = page.locator('#connections [part=item]');
  await page.click('#connections [part=refresh]');
  await items.filter({ hasText: 'Kept local agent (local)' }).locator('[part=forget]').click();
  // Forget asks first (it cannot be undone); the question's Forget forgets.
  await page.click('#connections [part=forget-yes]');
  await page.locator('#connections [part=result]', { hasText: 'Forgot Kept local agent (local)' }).waitFor();
  codeIn(textOf(await second.client.callTool({ name: 'dataset_describe', arguments: {} })));
  await second.client.close();
  const third = await stdioClient('Kept local agent', { state });
  codeIn(await said(third.client));
  await third.client.close();
});
