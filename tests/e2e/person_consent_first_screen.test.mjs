// What decides comes first, as a person meets the consent at 1280×800 and 390×844, in the demo
// page in headless Chromium, for a look-alike client (registered as "Ｃｌａｕｄｅ", full-width
// letters): typed (the person clicks the code field and types the code) and through the waiting
// page's link (the person presses Enter on Show who asks, where the focus is). Who asks, then the
// look-alike warning, then what the connection can do, then Approve, in that order; the warning
// and Approve both within the window as the page is left then, and with the Agents panel's top
// at the window's top (the panel's first screen); the "can do" text short (its tools under
// Which tools, folded); nothing wider than the window or than its element. Each screen is written
// to target/screens/ for people to look at (not compared).
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN, register, pkcePair, openWaitingPage } from './harness.mjs';
import { fileChromium, connected } from './demo_harness.mjs';
import { CONSENT, CATALOGUE } from '../../tab/generated/bundle.js';

const chromium = fileChromium();
const SCREENS = new URL('../../target/screens/', import.meta.url).pathname;

/** Writes what the window shows to target/screens/`name`.png. */
async function screen(page, name) {
  mkdirSync(SCREENS, { recursive: true });
  await page.screenshot({ path: `${SCREENS}${name}.png` });
}
const SIZES = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];

/** A waiting page of a client registered with a look-alike of Claude's name. */
async function lookalikeWaiting() {
  const client = await register('Ｃｌａｕｄｅ');
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'first-screen' });
  const waiting = await openWaitingPage(url);
  assert.equal(waiting.status, 200);
  return waiting;
}

/** The consent's pieces where the person sees them now (window coordinates), and what overflows. */
function measure(page) {
  return page.evaluate(() => {
    const root = document.querySelector('tabrelay-agents').shadowRoot;
    const box = (id) => {
      const el = root.getElementById(id);
      const r = el.getBoundingClientRect();
      return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, shown: !el.hidden && r.height > 0 };
    };
    const section = root.querySelector('[part~=agents]').getBoundingClientRect();
    // Text outside its element: any piece of the consent whose content is wider than it, or
    // that reaches past the panel's sides.
    const outside = [];
    for (const el of root.querySelectorAll('[part~=agents] *')) {
      const r = el.getBoundingClientRect();
      if (!r.width) continue;
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible' && el.clientWidth > 0) outside.push(`${el.id || el.getAttribute('part') || el.tagName} is wider than itself`);
      if (r.left < section.left - 1 || r.right > section.right + 1) outside.push(`${el.id || el.getAttribute('part') || el.tagName} reaches past the panel`);
    }
    return {
      height: innerHeight,
      pageWider: document.documentElement.scrollWidth > document.documentElement.clientWidth,
      asker: box('code-asker'),
      lookalike: box('code-lookalike'),
      canDo: box('code-can-do'),
      approve: box('approve'),
      deny: box('deny'),
      toolsOpen: root.getElementById('can-do-details').open,
      canDoText: root.getElementById('can-do-text').textContent,
      outside,
    };
  });
}

/** Asserts the order and the first screen: the warning and Approve within the window. */
function assertFirstScreen(m, where) {
  assert.ok(m.asker.shown && m.lookalike.shown && m.canDo.shown && m.approve.shown, `${where}: who asks, the warning, what it can do and Approve are shown`);
  assert.ok(m.asker.top < m.lookalike.top, `${where}: who asks comes before the warning`);
  assert.ok(m.lookalike.bottom <= m.canDo.top, `${where}: the warning comes before what the connection can do`);
  assert.ok(m.canDo.bottom <= m.approve.top, `${where}: Approve comes after both`);
  for (const [name, b] of [['the warning', m.lookalike], ['Approve', m.approve], ['Deny', m.deny]]) {
    assert.ok(b.top >= 0 && b.bottom <= m.height + 0.5, `${where}: ${name} is within the window (${Math.round(b.top)}–${Math.round(b.bottom)} of ${m.height})`);
  }
  assert.equal(m.pageWider, false, `${where}: the page scrolls sideways`);
  assert.deepEqual(m.outside, [], `${where}: text outside its element`);
  assert.equal(m.toolsOpen, false, `${where}: the tools' titles are folded`);
  for (const t of CATALOGUE.tools) assert.ok(!m.canDoText.includes(t.title), `${where}: the short text names no tool (${t.title})`);
  assert.ok(m.canDoText.length <= 240, `${where}: the short text is short (${m.canDoText.length} characters)`);
}

/** Puts the Agents panel's top at the window's top: the panel's first screen. */
async function panelAtTop(page) {
  await page.evaluate(() => {
    const section = document.querySelector('tabrelay-agents').shadowRoot.querySelector('[part~=agents]');
    scrollBy(0, section.getBoundingClientRect().top);
  });
}

async function lookalikeShown(page) {
  await page.locator('#code-lookalike', { hasText: CONSENT.LOOKALIKE.replaceAll('{app}', 'Claude') }).waitFor({ timeout: 10_000 });
  await page.locator('#approve:enabled').waitFor({ timeout: 5_000 });
}

for (const size of SIZES) {
  test(`typed at ${size.width}×${size.height}: the name and the warning, then what it can do, then Approve, all on the first screen`, { timeout: 60_000 }, async () => {
    const waiting = await lookalikeWaiting();
    const context = await (await chromium()).newContext({ viewport: size });
    const page = await context.newPage();
    await page.goto(`${APP_ORIGIN}/demo/?seed=11`);
    await connected(page);
    await page.click('#code');
    await page.keyboard.type(waiting.code);
    await lookalikeShown(page);
    await screen(page, `consent-typed-${size.width}x${size.height}`);
    assertFirstScreen(await measure(page), 'where the person typed');
    await panelAtTop(page);
    assertFirstScreen(await measure(page), 'with the panel at the top');
    await context.close();
  });

  test(`linked at ${size.width}×${size.height}: the name and the warning, then what it can do, then Approve, all on the first screen`, { timeout: 60_000 }, async () => {
    const waiting = await lookalikeWaiting();
    const context = await (await chromium()).newContext({ viewport: size });
    const page = await context.newPage();
    await page.goto(waiting.link);
    await connected(page);
    await page.keyboard.press('Enter'); // the focus is on Show who asks
    await lookalikeShown(page);
    await screen(page, `consent-linked-${size.width}x${size.height}`);
    assertFirstScreen(await measure(page), 'after Show who asks');
    await panelAtTop(page);
    assertFirstScreen(await measure(page), 'with the panel at the top');
    await context.close();
  });
}
