// An agent app of a long name never widens the page, in the demo page in headless Chromium at
// 1280×800 and 390×844 with the official SDK client as the agent: once it has made a call (so
// the record's Agent filter lists its name), nothing scrolls sideways and the filter is within
// the window (it was 665 px wide on the 390 px phone).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const NAME = 'Quarterly Revenue Forecasting and Data Quality Assistant for the Finance Team (staging build)';

for (const size of [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`${size.name} ${size.width}×${size.height}: a long agent name in the record's filter scrolls nothing sideways`, async () => {
    const page = await openDemo(await chromium());
    await page.setViewportSize({ width: size.width, height: size.height });
    const { client } = await connectThroughPage(page, `long-${size.name}`, namedProvider(page, NAME));
    assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false);
    const filter = page.locator('#record [part=agent-filter] option', { hasText: /Quarterly Revenue/ });
    await filter.waitFor({ state: 'attached', timeout: SHOW_MS });
    await page.locator('#record').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const seen = await page.evaluate(() => {
      const select = document.querySelector('#agents').shadowRoot.querySelector('#record').shadowRoot.getElementById('agent-filter');
      const b = select.getBoundingClientRect();
      return { left: b.left, right: b.right, vw: document.documentElement.clientWidth, scrollWidth: document.documentElement.scrollWidth };
    });
    assert.ok(seen.scrollWidth <= seen.vw, `nothing scrolls sideways (${seen.scrollWidth} px wide on ${seen.vw})`);
    assert.ok(seen.left >= 0 && seen.right <= seen.vw, `the Agent filter (${Math.round(seen.left)}–${Math.round(seen.right)}) is within the window's ${seen.vw} px`);
    await client.close();
    await page.close();
  });
}
