// The main screens for people to look at, written as PNGs to target/screens/ (not compared pixel
// by pixel): the demo page in headless Chromium at 1280×800 and 390×844 with the official SDK
// client as the agent: the page as it opens, a delete card waiting (with the banner), the Agents
// panel (connections, grants, what agents may do) and the record, each as a person sees it on
// the first screen there. Each file is named <size>-<n>-<screen>.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, choose, cardGone, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** Where the screenshots go (docs/tests.md says so). */
const SCREENS = fileURLToPath(new URL('../../target/screens/', import.meta.url));
const SIZES = [
  { name: '1280x800', width: 1280, height: 800 },
  { name: '390x844', width: 390, height: 844 },
];

/** Writes the viewport of `page` as `<size>-<n>-<screen>.png`; returns the path. */
async function shot(page, size, n, screen) {
  const path = `${SCREENS}${size.name}-${n}-${screen}.png`;
  await page.screenshot({ path, animations: 'disabled', caret: 'hide' });
  assert.ok((await stat(path)).size > 1000, `${path} was written`);
  return path;
}

for (const size of SIZES) {
  test(`the main screens at ${size.width}×${size.height}, written to target/screens/`, async () => {
    await mkdir(SCREENS, { recursive: true });
    const page = await openDemo(await chromium());
    await page.setViewportSize({ width: size.width, height: size.height });
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, size, 1, 'page');

    const { client } = await connectThroughPage(page, `screens-${size.name}`, namedProvider(page, 'Data Analyst'));
    // A step done, then a delete asked about: the card, the banner and the chart's marks.
    assert.equal((await client.callTool({ name: 'items_highlight', arguments: { ids: [3, 4] } })).isError, false);
    const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1, 2, 3] } });
    await cardSays(page, /delete 3 items/);
    await page.waitForFunction(() => document.querySelector('#confirm').shadowRoot.activeElement?.getAttribute('part') === 'deny', null, { timeout: SHOW_MS });
    await shot(page, size, 2, 'card');
    await choose(page, 'always');
    assert.equal((await asked).isError, false);
    await cardGone(page);

    // The Agents panel from its top: the status, the connections, the grants, the mode.
    await page.locator('#agents').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot(page, size, 3, 'agents');
    await page.locator('#rules-title').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot(page, size, 4, 'rules');
    // The record of what agents did.
    await page.locator('#record').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot(page, size, 5, 'record');
    await client.close();
    await page.close();
  });
}
