// On the phone (390×844) the driven banner and the notice that the calls went to another tab
// both sit at the top of the screen: in the demo page in headless Chromium, with the official
// SDK client as the agent, a card waits in the first tab (so its banner says "Waiting for your
// answer") when a second tab of the app opens and takes the calls; the first tab then shows the
// banner and the notice one beneath the other, both whole within the screen, not overlapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('390×844: the driven banner and the calls-moved notice are stacked, both readable', { timeout: 60_000 }, async () => {
  const context = await (await chromium()).newContext({ viewport: { width: 390, height: 844 } });
  // Each a new tab of the demo in the same profile (one pairing); a context opens pages too.
  const open = () => openDemo(context);
  const first = await open();
  const { client } = await connectThroughPage(first, 'stacked-e2e', namedProvider(first, 'Stacked Agent'));
  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(first, /delete item 1\./);
  await first.locator('tabrelay-driven [part=banner]').waitFor({ timeout: SHOW_MS });

  // A second tab takes the calls: the first says so, with its banner still there.
  const second = await open();
  await first.locator('#calls-elsewhere').waitFor({ state: 'visible', timeout: SHOW_MS });
  const box = (b) => ({ top: Math.round(b.top), bottom: Math.round(b.bottom), left: Math.round(b.left), right: Math.round(b.right) });
  // Read once the notice stands still (it moves beneath the banner as the page measures it).
  await first.waitForFunction(
    () => {
      const notice = document.querySelector('tabrelay-agents').shadowRoot.getElementById('calls-elsewhere').getBoundingClientRect();
      const banner = document.querySelector('tabrelay-driven').shadowRoot.querySelector('[part=banner]').getBoundingClientRect();
      return notice.top >= banner.bottom;
    },
    null,
    { timeout: SHOW_MS },
  ).catch(() => {});
  const seen = await first.evaluate(() => {
    const json = (el) => el.getBoundingClientRect().toJSON();
    const agents = document.querySelector('tabrelay-agents').shadowRoot;
    return {
      notice: json(agents.getElementById('calls-elsewhere')),
      take: json(agents.getElementById('take-calls')),
      banner: json(document.querySelector('tabrelay-driven').shadowRoot.querySelector('[part=banner]')),
      width: document.documentElement.clientWidth,
      height: innerHeight,
    };
  });
  for (const [name, b] of [['the banner', seen.banner], ['the notice', seen.notice], ['Take the calls back here', seen.take]]) {
    assert.ok(b.top >= 0 && b.bottom <= seen.height && b.left >= 0 && b.right <= seen.width, `${name} ${JSON.stringify(box(b))} is within the ${seen.width}×${seen.height} screen`);
  }
  const overlaps = seen.banner.bottom > seen.notice.top && seen.banner.top < seen.notice.bottom;
  assert.ok(!overlaps, `the banner ${JSON.stringify(box(seen.banner))} and the notice ${JSON.stringify(box(seen.notice))} do not overlap`);

  await first.click('#confirm [part=deny]');
  await asked;
  await client.close().catch(() => {});
  await second.close();
  await context.close();
});
