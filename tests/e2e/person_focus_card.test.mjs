// A question the person can always reach, in the demo page in headless Chromium at 1280×800 and
// 390×844 with the official SDK client as the agent: a card appearing while the person is
// scrolled far down with an empty field focused (the code field after Enter approved) takes the
// focus and is in the viewport with all its buttons, nothing scrolling sideways (on the phone a
// sheet that leaves the banner and the chart's top in sight); a card appearing while a field
// holding text is being typed in leaves the focus and the typing alone, and Escape there denies
// nothing; the banner's "Show the question" then brings the focus to the card; after the card is
// answered the focus is on the activity lines (named), never the page's body; Escape denies a
// card while the focus is anywhere else on the page; the delete card's words agree with the
// tool's (history_undo brings the items back: it never says "It cannot be undone.").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, focusedIn, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** The two screens a person meets the page on. */
const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

/** The card's, its shown buttons', the banner's and the chart's boxes, and the page's widths. */
export function cardGeometry(page) {
  return page.evaluate(() => {
    const box = (el) => {
      const b = el.getBoundingClientRect();
      return { top: b.top, bottom: b.bottom, left: b.left, right: b.right };
    };
    const host = document.querySelector('#confirm');
    const root = host.shadowRoot;
    const banner = document.querySelector('tabrelay-driven:not([hidden])');
    return {
      vw: innerWidth,
      vh: innerHeight,
      scrollWidth: document.documentElement.scrollWidth,
      host: box(host),
      card: box(root.querySelector('[part=card]')),
      buttons: [...root.querySelectorAll('[part=choices] button')].filter((b) => !b.hidden).map((b) => ({ part: b.getAttribute('part'), ...box(b) })),
      banner: banner ? box(banner.shadowRoot.querySelector('[part=banner]')) : null,
      plot: box(document.querySelector('#plot')),
    };
  });
}

/** Asserts that the card and each of its buttons are whole within the viewport and nothing scrolls sideways. */
export function assertCardInView(g, size) {
  const inside = (b, what) => {
    assert.ok(b.top >= 0 && b.left >= 0 && b.bottom <= g.vh && b.right <= g.vw, `${size}: ${what} ${JSON.stringify(b)} is within the ${g.vw}×${g.vh} viewport`);
  };
  inside(g.host, 'the card');
  assert.equal(g.buttons.length >= 2, true, `${size}: the card shows its buttons`);
  for (const b of g.buttons) {
    inside(b, `its ${b.part}`);
    // Within the card's own box too (a sheet that scrolls would clip a button below it).
    assert.ok(b.top >= g.host.top && b.bottom <= g.host.bottom, `${size}: its ${b.part} is not clipped by the card`);
  }
  assert.ok(g.scrollWidth <= g.vw, `${size}: nothing scrolls sideways (${g.scrollWidth} px wide on ${g.vw})`);
}

/** Waits until the card's Deny has the focus (the card took it and armed). */
function denyFocused(page) {
  return page.waitForFunction(() => document.querySelector('#confirm').shadowRoot.activeElement?.getAttribute('part') === 'deny', null, { timeout: SHOW_MS });
}

/** Waits until the card's buttons are armed. */
function armed(page) {
  return page.waitForFunction(() => !document.querySelector('#confirm').shadowRoot.querySelector('[part=deny]').disabled, null, { timeout: SHOW_MS });
}

for (const size of SIZES) {
  test(`${size.name} ${size.width}×${size.height}: a card takes the focus from an empty field and is in view; typing is left alone; Show the question; Escape`, async () => {
    const page = await openDemo(await chromium());
    await page.setViewportSize({ width: size.width, height: size.height });
    const agent = `Focus ${size.name}`;
    const { client } = await connectThroughPage(page, `focus-${size.name}`, namedProvider(page, agent));

    // Far down the page, in the code field, empty after Enter approved: the card takes the focus.
    await page.locator('#code').focus();
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    assert.equal(await focusedIn(page), 'code');
    const first = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
    await cardSays(page, /delete item 1\./);
    await denyFocused(page);
    const g = await cardGeometry(page);
    assertCardInView(g, size.name);
    assert.ok(g.banner, 'the banner shows while the agent waits');
    if (size.name === 'phone') {
      const overlaps = g.banner.bottom > g.host.top && g.banner.top < g.host.bottom;
      assert.ok(!overlaps, `the banner ${JSON.stringify(g.banner)} is not under the card ${JSON.stringify(g.host)}`);
      assert.ok(g.host.top >= g.vh * 0.35, `the sheet leaves the top of the screen in sight (it starts at ${g.host.top})`);
    }
    // Its words agree with the tool's: history_undo brings the items back.
    const said = await page.evaluate(() => document.querySelector('#confirm').shadowRoot.querySelector('[part=card]').innerText);
    assert.doesNotMatch(said, /cannot be undone/);
    assert.match(said, /Take care: this app counts it as a change that may not be taken back\./);
    assert.match(said, /It names item 1; the app marks it on its view/, 'the chart mark summarised on the card');
    // The tool's own description is under Details, closed.
    assert.doesNotMatch(said, /history_undo brings them back/);
    await page.locator('#confirm [part=about-title]').click();
    assert.match(await page.evaluate(() => document.querySelector('#confirm').shadowRoot.querySelector('[part=card]').innerText), /history_undo brings them back/);
    // Escape while the focus is elsewhere on the page (not typing): the card is denied.
    await page.locator('#permissions [part=mode]').focus();
    await page.keyboard.press('Escape');
    assert.match(textOf(await first), /declined/);
    await cardGone(page);

    // Typing in a field that holds text: the card neither takes the focus nor the keys.
    await page.locator('#code').focus();
    await page.keyboard.type('ABC');
    const second = client.callTool({ name: 'items_delete', arguments: { ids: [2] } });
    await cardSays(page, /delete item 2\./);
    await armed(page);
    assert.equal(await focusedIn(page), 'code', 'the focus stays in the field being typed in');
    await page.keyboard.type('D');
    assert.equal(await page.inputValue('#code'), 'ABCD', 'the typing went on in the field');
    await page.keyboard.press('Escape');
    // Read after the Escape: the card still asks (Escape in a field being typed in is the field's).
    assert.equal(await page.isVisible('#confirm [part=what]'), true, 'Escape while typing denied nothing');
    assert.match(await page.textContent('#confirm [part=what]'), /delete item 2\./);

    // The banner offers the way to the question: its button brings the focus to the card.
    const show = page.locator('tabrelay-driven [part=show]');
    assert.equal((await show.textContent()).trim(), 'Show the question');
    await show.click();
    await denyFocused(page);
    assertCardInView(await cardGeometry(page), size.name);
    // Answered from there: the focus goes to the activity lines, never the body nor a button.
    await page.keyboard.press('Enter');
    assert.match(textOf(await second), /declined/);
    await cardGone(page);
    assert.equal(await focusedIn(page), 'lines', 'the focus is on the activity lines');
    assert.doesNotMatch(await page.textContent('#history'), /Deleted item/);

    // A heavy call's card (the app's estimate, the kind's words, three arguments): the page
    // scrolled to its foot, nothing focused; the card and its buttons come into view whole.
    const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
    await page.evaluate(() => {
      document.activeElement?.blur();
      window.scrollTo(0, document.documentElement.scrollHeight);
    });
    const heavy = client.callTool({ name: 'groups_compare', arguments: { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 } });
    await cardSays(page, /asks to compare score/);
    await denyFocused(page);
    assertCardInView(await cardGeometry(page), `${size.name}, a heavy card`);
    await page.keyboard.press('Escape');
    assert.match(textOf(await heavy), /declined/);
    await cardGone(page);
    await client.close();
    await page.close();
  });
}
