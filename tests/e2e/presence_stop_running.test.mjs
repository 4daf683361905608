// Stop while a call runs, in the demo page in headless Chromium with the official SDK client as
// the agent: a long comparison the person allowed is under way; Stop tells the app to stop it,
// the app stops between two slices of its work, and the agent hears at once that the person
// stopped it while it ran (not a result, not the relay's wait running out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SENTENCES } from '../../tab/presence.js';
import { dataOf, waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('Stop while a call runs stops it in the app and tells the agent so', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'stop-running-e2e');
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const args = { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 };
  const running = client.callTool({ name: 'groups_compare', arguments: args });
  await cardSays(page, /asks to compare score/);
  await choose(page, 'once');
  const stop = page.locator('#activity [part~=acting] [part=stop]');
  await page.locator('#activity [part=text]', { hasText: 'running Compare two groups' }).waitFor({ timeout: SHOW_MS });
  const pressed = Date.now();
  await stop.click();
  const result = await running;
  const heard = Date.now() - pressed;
  assert.equal(result.isError, true);
  assert.ok(textOf(result).includes(SENTENCES.STOPPED_RUNNING), textOf(result));
  assert.ok(heard < 3000, `the agent heard ${heard} ms after Stop (the comparison alone takes tens of seconds)`);
  await waitFor(async () => /groups_compare · stopped by the person while it ran\s*$/.test(await page.textContent('#calls')), SHOW_MS, 100);
  await client.close();
});
