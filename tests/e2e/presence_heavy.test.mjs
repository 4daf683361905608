// A heavy call, in the demo page in headless Chromium with the official SDK client as the agent:
// comparing two groups with many permutations is heavy by the app's own measurement of its
// cost on this device. Under "Ask before heavy or irreversible" (the default) it asks first,
// the card saying the estimate, and Deny refuses it; under "Allow everything undoable" a call
// just over the heavy line by the same measurement runs without a card.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HEAVY_MS } from '../../tab/presence.js';
import { dataOf, waitFor, CALL_WAIT_MS } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, cardGone, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** The most permutations groups_compare takes (the catalogue's maximum). */
const MOST = 100_000_000;

test('a heavy call asks under the default mode and runs under “Allow everything undoable”', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'heavy-e2e');
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const args = { column: 'score', groups: [groups[0].name, groups[1].name] };
  const light = await client.callTool({ name: 'groups_compare', arguments: { ...args, permutations: 1000 } });
  assert.equal(light.isError, false, textOf(light));
  assert.equal(await page.isHidden('#confirm'), true, 'a light comparison does not ask');

  const asked = client.callTool({ name: 'groups_compare', arguments: { ...args, permutations: MOST } });
  await cardSays(page, /asks to compare score between .+ and .+ \(100,000,000 permutations\)\. Allow\?$/);
  const why = await page.textContent('#confirm [part=why]');
  const seconds = Number(/it may take a while on this device \(about (\d+) s by this app’s measurements\)/.exec(why)?.[1]);
  assert.ok(seconds * 1000 >= HEAVY_MS, `the card says the estimate: ${why}`);
  await choose(page, 'deny');
  const denied = await asked;
  assert.equal(denied.isError, true);
  assert.match(textOf(denied), /declined “Compare two groups”/);
  await cardGone(page);

  await page.locator('#permissions [part=mode]').selectOption('undoable');
  // Just over the heavy line by the same measurement: heavy, and this mode allows it.
  const permutations = Math.ceil((MOST * (HEAVY_MS / 1000 + 1)) / seconds);
  const ran = client.callTool({ name: 'groups_compare', arguments: { ...args, permutations } }, undefined, { timeout: 120_000 });
  await page.locator('#activity [part=text]', { hasText: 'running Compare two groups' }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.isHidden('#confirm'), true, 'no card: heavy calls are allowed in this mode');
  await waitFor(async () => /groups_compare · ok\s*$/.test(await page.textContent('#calls')), 90_000, 250);
  const result = await ran;
  if (result.isError) {
    // Only the relay's own wait for a call (CALL_WAIT_MS, 6 s here) answers the agent first.
    assert.ok(CALL_WAIT_MS < 60_000, textOf(result));
    assert.match(textOf(result), /did not answer within/);
  } else {
    assert.equal(dataOf(result).permutations, permutations);
  }
  await client.close();
});
