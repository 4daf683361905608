// Two agents at once are two activity lines, in the demo page in headless Chromium with two
// official SDK clients: each line names its agent, Stop on one leaves the other acting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, choose, activityLines, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('two agents acting at once are two lines, each stopped on its own', async () => {
  const page = await openDemo(await chromium());
  const { client: a } = await connectThroughPage(page, 'two-a', namedProvider(page, 'Agent A'));
  const { client: b } = await connectThroughPage(page, 'two-b', namedProvider(page, 'Agent B'));

  const fromA = a.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /^Agent A asks to delete item 1\./);
  const fromB = b.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  await page.locator('#confirm [part=more]', { hasText: '1 more waiting' }).waitFor({ timeout: SHOW_MS });
  const acting = page.locator('#activity [part~=acting]');
  await page.waitForFunction(() => document.querySelector('#activity').shadowRoot.querySelectorAll('[part~=acting]').length === 2, null, { timeout: SHOW_MS });
  const lines = await activityLines(page);
  assert.equal(lines.length, 2);
  assert.match(lines[0], /^Agent B .*waiting/, 'newest first');
  assert.match(lines[1], /^Agent A .*waiting/);

  await acting.filter({ hasText: 'Agent A' }).locator('[part=stop]').click();
  assert.match(textOf(await fromA), /pressed Stop/);
  await cardSays(page, /^Agent B asks to delete item 2\./);
  await choose(page, 'once');
  assert.equal((await fromB).isError, false, 'the other agent’s call still ran');
  const after = await activityLines(page);
  assert.match(after.find((l) => l.startsWith('Agent A')), /stopped/);
  assert.match(after.find((l) => l.startsWith('Agent B')), /done, 1 step/);
  await a.close();
  await b.close();
});
