// The card's buttons stay in sight when the person opens Details, in the demo page in headless
// Chromium at 1280×800 and 390×844 with the official SDK client as the agent: the heaviest
// card (an agent app of a long name asking for a comparison of 100,000,000 permutations: the
// app's estimate, the kind's words, three arguments) with the tool's own description opened
// under Details, taller than the window, read from the card's top as
// a person does; Deny, Allow once and each grant are whole within the window (on the phone,
// within the sheet), and nothing scrolls sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, textOf, SHOW_MS } from './demo_harness.mjs';
import { cardGeometry } from './person_focus_card.test.mjs';

const chromium = fileChromium();

for (const size of [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`${size.name} ${size.width}×${size.height}: with Details open on the heaviest card, its buttons are within the window`, async () => {
    const page = await openDemo(await chromium());
    await page.setViewportSize({ width: size.width, height: size.height });
    const { client } = await connectThroughPage(page, `details-${size.name}`, namedProvider(page, `Quarterly Revenue Forecasting and Data Quality Assistant for the Finance Team (${size.name} staging build)`));
    const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
    const heavy = client.callTool({ name: 'groups_compare', arguments: { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 } });
    await cardSays(page, /asks to compare score/);
    await page.waitForFunction(() => document.querySelector('#confirm').shadowRoot.activeElement?.getAttribute('part') === 'deny', null, { timeout: SHOW_MS });
    await page.locator('#confirm [part=about-title]').click();
    await page.locator('#confirm [part=description]').waitFor({ state: 'visible', timeout: SHOW_MS });
    // Read from the card's top, as a person reads it (on the phone, the sheet from its top).
    await page.evaluate(() => {
      const host = document.querySelector('#confirm');
      if (getComputedStyle(host).position === 'fixed') host.scrollTop = 0;
      else host.scrollIntoView({ block: 'start' });
    });
    const g = await cardGeometry(page);
    assert.ok(g.buttons.length >= 4, `${size.name}: Deny, Allow once and the grants show (${g.buttons.length})`);
    for (const b of g.buttons) {
      assert.ok(b.top >= 0 && b.bottom <= g.vh && b.left >= 0 && b.right <= g.vw, `${size.name}: its ${b.part} ${JSON.stringify(b)} is within the ${g.vw}×${g.vh} window`);
      assert.ok(b.top >= g.host.top && b.bottom <= g.host.bottom, `${size.name}: its ${b.part} is not clipped by the card`);
    }
    assert.ok(g.scrollWidth <= g.vw, `${size.name}: nothing scrolls sideways`);
    await page.keyboard.press('Escape');
    assert.match(textOf(await heavy), /declined/);
    await cardGone(page);
    await client.close();
    await page.close();
  });
}
