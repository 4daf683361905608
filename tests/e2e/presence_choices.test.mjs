// The confirm card's four answers, in the demo page in headless Chromium with the official SDK
// client as the agent: Allow once runs that call only, This connection lets that connection's
// next calls of the tool run (another connection is still asked), Always (from an unverified
// client's card) lets that connection's calls of the tool run until revoked, kept across a
// reload, without changing any rule; Deny and Escape refuse. The first card takes the focus on
// Deny, unless the person is typing elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, choose, textOf, reloadDemo, focusedIn } from './demo_harness.mjs';

const chromium = fileChromium();

const history = (page) => page.textContent('#history');

test('Allow once, This connection, Always and Deny each do what they say', async () => {
  const page = await openDemo(await chromium());
  const { client } = await connectThroughPage(page, 'choices-a', namedProvider(page, 'Agent A'));

  // Allow once: that call runs; the next one asks again. The card took the focus on Deny.
  let call = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /^Agent A asks to delete item 1\. Allow\?$/);
  await page.waitForFunction(() => document.querySelector('#confirm').shadowRoot.activeElement?.getAttribute('part') === 'deny', null, { timeout: 2000 });
  await choose(page, 'once');
  assert.equal((await call).isError, false);
  assert.match(await history(page), /Agent A: Deleted item 1/);
  call = client.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  await cardSays(page, /delete item 2\./);

  // Escape denies.
  await page.waitForFunction(() => !document.querySelector('#confirm').shadowRoot.querySelector('[part=deny]').disabled);
  await page.keyboard.press('Escape');
  const denied = await call;
  assert.equal(denied.isError, true);
  assert.match(textOf(denied), /declined/);
  await cardGone(page);
  assert.doesNotMatch(await history(page), /Deleted item 2/);

  // Deny: the agent reads that the person declined; nothing changes.
  call = client.callTool({ name: 'items_delete', arguments: { ids: [3] } });
  await cardSays(page, /delete item 3\./);
  await choose(page, 'deny');
  assert.match(textOf(await call), /The person declined “Delete items”/);
  assert.doesNotMatch(await history(page), /Deleted item 3/);

  // This connection: this connection's next delete runs without a card; another's is asked.
  call = client.callTool({ name: 'items_delete', arguments: { ids: [4] } });
  await cardSays(page, /delete item 4\./);
  await choose(page, 'connection');
  assert.equal((await call).isError, false);
  const quiet = await client.callTool({ name: 'items_delete', arguments: { ids: [5] } });
  assert.equal(quiet.isError, false, textOf(quiet));
  assert.equal(await page.isHidden('#confirm'), true, 'no card for the connection allowed');
  assert.match(await history(page), /Agent A: Deleted item 5/);
  const { client: other } = await connectThroughPage(page, 'choices-b', namedProvider(page, 'Agent B'));
  // The person is typing elsewhere: the card does not take the focus from them.
  await page.focus('#code');
  await page.keyboard.type('AB');
  call = other.callTool({ name: 'items_delete', arguments: { ids: [6] } });
  await cardSays(page, /^Agent B asks to delete item 6\./);
  await new Promise((r) => setTimeout(r, 600)); // past the card's arming
  assert.equal(await focusedIn(page), 'code', 'the focus stays where the person types');
  await page.keyboard.type('CD');
  assert.equal(await page.inputValue('#code'), 'ABCD');

  // Always, on an unverified client's card: for that connection until revoked; no rule changes.
  await choose(page, 'always');
  assert.equal((await call).isError, false);
  assert.equal(await page.locator('#permissions [part=kind][data-kind="deletes-items"]').inputValue(), 'ask');
  assert.equal(await page.textContent('#now-items_delete'), 'asks you first');
  const free = await other.callTool({ name: 'items_delete', arguments: { ids: [7] } });
  assert.equal(free.isError, false);
  assert.match(await history(page), /Agent B: Deleted item 7/);
  await reloadDemo(page);
  const kept = await other.callTool({ name: 'items_delete', arguments: { ids: [8] } });
  assert.equal(kept.isError, false, 'Always is kept');
  assert.equal(await page.isHidden('#confirm'), true);
  await client.close();
  await other.close();
});
