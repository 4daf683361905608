// A card weighs the risk and speaks in words, in the demo page in headless Chromium with the
// official SDK client as the agent: a read asked about because the person chose "Ask me first"
// for its tool is a neutral card (no red frame, no red Allow once), a delete is red, in words
// that never contradict the tool's (it says history_undo brings the items back: not "It cannot
// be undone."); the tool's own description is under Details; no card shows JSON; kinds are named in words, never by identifier; and while a card waits, the items
// it names are marked on the demo's chart, unmarked once it is answered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, demoWithAgent, cardSays, choose, cardGone, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** The card's red (the irreversible's), as the browser computes it. */
const RED = 'rgb(179, 38, 30)';

/** The shown card's frame and Allow once colours, its weight, and everything it says. */
function cardLooks(page) {
  return page.evaluate(() => {
    const root = document.querySelector('#confirm').shadowRoot;
    const card = root.querySelector('[part=card]');
    const once = root.querySelector('[part=once]');
    return {
      risk: card.dataset.risk,
      frame: getComputedStyle(card).borderTopColor,
      once: getComputedStyle(once).backgroundColor,
      text: card.innerText,
    };
  });
}

/** The items the chart marks for the waiting card (the canvas says which). */
function marked(page) {
  return page.evaluate(() => document.querySelector('#plot').dataset.named ?? '');
}

test('a read’s card is neutral, an irreversible one red; both in words, and the chart marks the items a card names while it waits', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'card-weight-e2e');
  assert.equal(await marked(page), '', 'nothing marked before any card');

  // The person wants to be asked before items are read: a tool-level ask of a read.
  await page.locator('#agents [part=tools-details]').evaluate((d) => (d.open = true));
  await page.locator('#agents select[data-tool=items_values]').selectOption('ask');
  const read = client.callTool({ name: 'items_values', arguments: { ids: [5, 9], columns: ['score'] } });
  await cardSays(page, /Allow\?$/);
  const readCard = await cardLooks(page);
  assert.equal(readCard.risk, 'read');
  assert.notEqual(readCard.frame, RED, 'a read’s frame is not red');
  assert.notEqual(readCard.once, RED, 'a read’s Allow once is not red');
  assert.match(readCard.text, /It only reads: nothing is changed\./);
  assert.match(readCard.text, /Ids: 5 and 9/, 'the arguments in words');
  assert.match(readCard.text, /Columns: “score”/);
  assert.doesNotMatch(readCard.text, /[{}]|"ids"|\[/, 'no JSON on the card');
  assert.doesNotMatch(readCard.text, /The values of single items: for each item id given/, 'the tool’s own words are under Details');
  await page.locator('#confirm [part=about-title]').click();
  assert.match((await cardLooks(page)).text, /The values of single items: for each item id given/, 'the tool’s own words, under Details');
  // The items the card names are marked on the chart while it waits.
  await page.waitForFunction(() => document.querySelector('#plot').dataset.named === '5 9', null, { timeout: SHOW_MS });
  assert.match(await page.getAttribute('#plot', 'aria-label'), /the items the agent's question names: 5, 9/);
  await choose(page, 'once');
  assert.equal((await read).isError, false);
  await cardGone(page);
  await page.waitForFunction(() => document.querySelector('#plot').dataset.named === '', null, { timeout: SHOW_MS });

  const del = client.callTool({ name: 'items_delete', arguments: { ids: [12] } });
  await cardSays(page, /delete item 12\. Allow\?$/);
  const delCard = await cardLooks(page);
  assert.equal(delCard.risk, 'irreversible');
  assert.equal(delCard.frame, RED, 'an irreversible card’s frame is red');
  assert.equal(delCard.once, RED, 'and its Allow once');
  assert.doesNotMatch(delCard.text, /cannot be undone/, 'the tool says history_undo brings the items back');
  assert.match(delCard.text, /Take care: this app counts it as a change that may not be taken back\./);
  assert.match(delCard.text, /Deleting items: it deletes items/, 'the kind by name');
  assert.doesNotMatch(delCard.text, /deletes-items/, 'never by identifier');
  assert.doesNotMatch(delCard.text, /[{}]|"ids"/, 'no JSON on the card');
  await page.waitForFunction(() => document.querySelector('#plot').dataset.named === '12', null, { timeout: SHOW_MS });
  await choose(page, 'deny');
  assert.equal((await del).isError, true);
  await cardGone(page);
  await page.waitForFunction(() => document.querySelector('#plot').dataset.named === '', null, { timeout: SHOW_MS });
  // The permissions name the kinds in words too.
  const kinds = await page.locator('#agents tabrelay-permissions [part=kind-row]').allTextContents();
  assert.ok(kinds.some((k) => k.startsWith('Deleting items:')), kinds.join(' | '));
  assert.ok(!kinds.some((k) => /deletes-items|^change:|^heavy:/.test(k)), kinds.join(' | '));
  await client.close();
});
