// Connections live in every tab of a pairing, in two tabs of the demo page in one headless
// Chromium profile with the official SDK client as the agent: Stop pressed in one tab shows
// "stopped" with Let it go on in the other's Connections and on the other's activity line of
// that agent, Let it go on pressed there clears it in both, a grant kept in one is listed in the other, and a connection forgotten in one leaves
// the other's list, each as it happens, with no Refresh pressed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, choose, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const AGENT = 'Live Agent';

/** The connections `page` lists: each row's text. */
function rows(page) {
  return page.locator('#connections [part=item]').allTextContents();
}

/** Waits until `page`'s Connections list `count` rows, each saying "stopped" or not as `stopped` says. */
async function listed(page, { count, stopped = false }, what) {
  await page
    .waitForFunction(
      (want) => {
        const list = document.querySelector('#agents').shadowRoot.querySelector('#connections').shadowRoot;
        const texts = [...list.querySelectorAll('[part=item]')].map((li) => li.textContent);
        return texts.length === want.count && texts.every((t) => / · stopped/.test(t) === want.stopped);
      },
      { count, stopped },
      { timeout: SHOW_MS },
    )
    .catch(async () => assert.fail(`${what}: ${JSON.stringify(await rows(page))}`));
}

test('Stop, Let it go on, a grant and Forget in one tab show in the other at once', async () => {
  const context = await (await chromium()).newContext();
  // Each a new tab of the demo in the same profile (one pairing); a context opens pages too.
  const open = () => openDemo(context);
  const a = await open();
  const { client } = await connectThroughPage(a, 'live-e2e', namedProvider(a, AGENT));
  // A turn of the agent in A, which takes its calls until B opens: A shows its line.
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false);
  await a.locator('#activity [part~=line]', { hasText: AGENT }).waitFor({ timeout: SHOW_MS });
  // The tab opened last takes the calls.
  const b = await open();
  await listed(a, { count: 1 }, 'A lists the connection');
  await listed(b, { count: 1 }, 'B lists the connection');

  // A grant kept in B ("Always") is listed in A.
  const deleted = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(b, /asks to delete item 1/);
  await choose(b, 'always');
  assert.equal((await deleted).isError, false, textOf(await deleted));
  await cardGone(b);
  await a.locator('#grants [part=grant]', { hasText: /Delete items/ }).waitFor({ timeout: SHOW_MS });

  // Stop in B, on a heavy comparison's line while its card waits: A's list says it is stopped.
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const heavy = client.callTool({ name: 'groups_compare', arguments: { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 } });
  await cardSays(b, /asks to compare score/);
  await b.locator('#activity [part=stop]').click();
  assert.match(textOf(await heavy), /pressed Stop/);
  await listed(a, { count: 1, stopped: true }, 'A says stopped without Refresh');
  await a.locator('#connections [part=go-on]').waitFor({ timeout: SHOW_MS });
  // A's own line of that agent says so too, with Let it go on, as B's does.
  await a.locator('#activity [part=go-on]').waitFor({ timeout: SHOW_MS });
  assert.match(await a.locator('#activity [part~=line]', { hasText: AGENT }).first().textContent(), /stopped: its calls are refused until you let it go on/);
  await listed(b, { count: 1, stopped: true }, 'B says stopped too');
  const refused = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(refused.isError, true, 'its calls are refused');

  // Let it go on, pressed in A: neither list says stopped any more, and its calls run again.
  await a.click('#connections [part=go-on]');
  await listed(a, { count: 1 }, 'A no longer says stopped');
  await listed(b, { count: 1 }, 'B no longer says stopped');
  await b.locator('#activity [part=go-on]').waitFor({ state: 'detached', timeout: SHOW_MS });
  await a.locator('#activity [part=go-on]').waitFor({ state: 'detached', timeout: SHOW_MS });
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false);

  // Forgotten in A (through its relay client, as Forget does once confirmed): B's list empties.
  await a.evaluate(() => {
    const relay = document.querySelector('#agents').relay;
    return relay.forget(relay.connectionsList[0].id);
  });
  await listed(b, { count: 0 }, 'B no longer lists the forgotten connection');
  await listed(a, { count: 0 }, 'nor does A');
  await client.close().catch(() => {});
  await context.close();
});
