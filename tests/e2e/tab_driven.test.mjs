// The tab shows it is being driven, in the demo page in headless Chromium with the official SDK
// client as the agent: while its call waits for the person, and while it runs, the page's title
// and favicon say so and a quiet banner names the agent with Stop; the banner's Stop stops the
// call under way (the agent is told); after each, the app's own title and favicon are back and
// the banner is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SENTENCES } from '../../tab/presence.js';
import { DRIVEN_ICONS } from '../../tab/driven.js';
import { dataOf } from './harness.mjs';
import { fileChromium, demoWithAgent, namedProvider, cardSays, choose, cardGone, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const AGENT = 'driven-e2e';
/** The most permutations groups_compare takes (the catalogue's maximum). */
const MOST = 100_000_000;

/** The page's title, favicon address and banner words now. */
function shows(page) {
  return page.evaluate(() => ({
    title: document.title,
    icons: [...document.querySelectorAll('link[rel~="icon"]')].map((l) => l.getAttribute('href')),
    banner: [...document.querySelectorAll('tabrelay-driven')].filter((b) => !b.hidden).map((b) => [...b.shadowRoot.querySelectorAll('[part=words]')].map((w) => w.textContent).join(' | ')),
  }));
}

/** Waits until the page's title is `title` again. */
function titleIs(page, title) {
  return page.waitForFunction((t) => document.title === t, title, { timeout: SHOW_MS });
}

test('while a call waits for the person and while it runs, the title, favicon and banner say so; Stop works; all restored after', async () => {
  const { page, client } = await demoWithAgent(await chromium(), AGENT, (p) => namedProvider(p, AGENT));
  const own = await shows(page);
  assert.match(own.title, /· Tabrelay demo$/);
  assert.deepEqual(own.icons, ['data:,']);
  assert.deepEqual(own.banner, []);
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const args = { column: 'score', groups: [groups[0].name, groups[1].name] };
  await titleIs(page, own.title);

  // Waiting for the person: a heavy comparison asks first.
  const asked = client.callTool({ name: 'groups_compare', arguments: { ...args, permutations: MOST } });
  await cardSays(page, /asks to compare score/);
  const waiting = await shows(page);
  assert.equal(waiting.title, `⏸ ${AGENT} waits for you · ${own.title}`);
  assert.deepEqual(waiting.icons, [DRIVEN_ICONS.asking]);
  assert.deepEqual(waiting.banner, [`Waiting for your answer: ${AGENT}.`]);
  const seconds = Number(/about (\d+) s by this app’s measurements/.exec(await page.textContent('#confirm [part=why]'))?.[1]);
  await choose(page, 'deny');
  assert.equal((await asked).isError, true);
  await cardGone(page);
  await titleIs(page, own.title);
  assert.deepEqual(await shows(page), own, 'the app’s own title and favicon are back, the banner gone');

  // Running: under "Allow everything undoable" a comparison a little over the heavy line runs
  // without a card; the banner's Stop stops it while it runs.
  await page.locator('#permissions [part=mode]').selectOption('undoable');
  const permutations = Math.ceil((MOST * 12) / seconds);
  const ran = client.callTool({ name: 'groups_compare', arguments: { ...args, permutations } }, undefined, { timeout: 120_000 });
  await page.waitForFunction((t) => document.title.startsWith('▶ '), null, { timeout: SHOW_MS });
  const running = await shows(page);
  assert.equal(running.title, `▶ ${AGENT} is using this tab · ${own.title}`);
  assert.deepEqual(running.icons, [DRIVEN_ICONS.running]);
  assert.deepEqual(running.banner, [`Using this tab now: ${AGENT}.`]);
  await page.locator('tabrelay-driven [part=stop]').click();
  const stopped = await ran;
  assert.equal(stopped.isError, true);
  assert.ok(textOf(stopped).includes(SENTENCES.STOPPED_RUNNING), textOf(stopped));
  await titleIs(page, own.title);
  assert.deepEqual(await shows(page), own, 'restored after the stopped call');
  assert.match(await page.textContent('#calls'), /groups_compare · stopped by the person while it ran/);
  await client.close();
});
