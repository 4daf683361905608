// The relay's status tool tells a stopped agent it is stopped, in the demo page in headless
// Chromium with the official SDK client as the agent: after Stop its status says so and what
// the person must do (Let it go on); once the person lets it go on, it no longer does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, demoWithAgent, cardSays, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** src/sentences.rs STATUS_STOPPED (the relay's own words, which the tab end does not carry). */
const STOPPED = 'The person stopped you in their tab: your calls are refused until they press Let it go on there.';

test('status says a stopped agent is stopped, until the person lets it go on', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'status-stopped-e2e');
  assert.ok(!textOf(await client.callTool({ name: 'status', arguments: {} })).includes(STOPPED));
  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /asks to delete item 1/);
  await page.locator('#activity [part=stop]').click();
  assert.match(textOf(await asked), /pressed Stop/);
  await page.locator('#activity [part=go-on]').waitFor({ timeout: SHOW_MS });
  const status = await client.callTool({ name: 'status', arguments: {} });
  assert.equal(status.isError, false);
  assert.ok(textOf(status).includes(STOPPED), textOf(status));

  await page.locator('#activity [part=go-on]').click();
  await page.locator('#activity [part=go-on]').waitFor({ state: 'detached', timeout: SHOW_MS });
  const again = await client.callTool({ name: 'status', arguments: {} });
  assert.ok(!textOf(again).includes(STOPPED), textOf(again));
  await client.close();
});
