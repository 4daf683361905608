// Stop while a call runs, in the demo page in headless Chromium with the official SDK client as
// the agent: a long comparison the person allowed is under way; Stop tells the app to stop it,
// the app stops between two slices of its work, and the agent hears at once that the person
// stopped it while it ran (not a result, not the relay's wait running out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SENTENCES } from '../../tab/presence.js';
import { waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, heavyComparisonRunning, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('Stop while a call runs stops it in the app and tells the agent so', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'stop-running-e2e');
  const { running } = await heavyComparisonRunning(page, client);
  const pressed = Date.now();
  await page.locator('#activity [part~=acting] [part=stop]').click();
  const result = await running;
  const heard = Date.now() - pressed;
  assert.equal(result.isError, true);
  assert.ok(textOf(result).includes(SENTENCES.STOPPED_RUNNING), textOf(result));
  assert.ok(heard < 5000, `the agent heard ${heard} ms after Stop (the comparison alone takes tens of seconds)`);
  await waitFor(async () => /groups_compare · stopped by the person while it ran\s*$/.test(await page.textContent('#calls')), SHOW_MS, 100);
  await client.close();
});
