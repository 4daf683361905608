// Safe under the keyboard, in the demo page in headless Chromium with two official SDK clients
// as the agents: Enter on a line's Stop leaves the focus on that line, so a second Enter never
// lands on another turn's Undo turn; Undo turn of a turn that is not the newest asks first, with
// the focus on Keep it; Forget asks first (the focus on Keep it), and after Forget the focus is
// on Refresh, not on another connection's Forget; Escape denies a card queued behind one the person just answered, as soon as it appears;
// once a card is answered, the focus does not go back to a button (Forget) it was on before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, textOf, activityLines, focusedIn, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

const history = (page) => page.textContent('#history');
/** The focused control of the activity lines: {line, act}, or null when the focus is elsewhere. */
const focusedLine = (page) =>
  page.evaluate(() => {
    const at = document.querySelector('#activity').shadowRoot.activeElement;
    return document.activeElement?.id === 'activity' && at ? { line: at.dataset.line ?? null, act: at.dataset.act ?? at.getAttribute('part') } : null;
  });
/** The key of the newest line whose text names `agent`. */
const lineOf = (page, agent) =>
  page.evaluate((who) => [...document.querySelector('#activity').shadowRoot.querySelectorAll('li')].find((li) => li.querySelector('[part=text]').textContent.startsWith(who))?.dataset.line, agent);

test('Enter on Stop then Enter again stays on the line; an older turn’s Undo asks first', async () => {
  const page = await openDemo(await chromium());
  const { client: a } = await connectThroughPage(page, 'keys-a', namedProvider(page, 'Agent A'));
  const { client: b } = await connectThroughPage(page, 'keys-b', namedProvider(page, 'Agent B'));

  // Agent A's turn: one step, done (its line under B's, newest first, with Undo turn). Agent B's: one step.
  assert.equal((await a.callTool({ name: 'items_highlight', arguments: { ids: [1] } })).isError, false);
  assert.equal((await b.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 777 } })).isError, false);
  const undoA = page.locator('#activity [part~=done]', { hasText: /^Agent A/ }).locator('[part=undo]');
  await undoA.waitFor({ timeout: SHOW_MS });
  const keyA = await lineOf(page, 'Agent A');
  let keyB = await lineOf(page, 'Agent B');
  assert.ok(keyA && keyB && keyA !== keyB);

  // Undo turn of A's turn, under B's later step: it asks first, on its line, with the focus on Keep it.
  await undoA.focus();
  await page.keyboard.press('Enter');
  await page.locator('#activity [part~=ask-undo]', { hasText: /Undo this older turn/ }).waitFor({ timeout: SHOW_MS });
  assert.deepEqual(await focusedLine(page), { line: keyA, act: 'keep' });
  await page.keyboard.press('Enter');
  await page.locator('#activity [part~=ask-undo]').waitFor({ state: 'detached', timeout: SHOW_MS });
  assert.deepEqual(await focusedLine(page), { line: keyA, act: 'undo' }, 'back on the same Undo turn');
  assert.doesNotMatch(await history(page), /Undid/, 'Keep it undid nothing');

  // B's turn goes on and asks before a delete: its line has Stop.
  const asking = b.callTool({ name: 'items_delete', arguments: { ids: [3] } });
  await cardSays(page, /^Agent B asks to delete item 3\./);
  const stopB = page.locator('#activity [part~=acting]', { hasText: /^Agent B/ }).locator('[part=stop]');
  await stopB.waitFor({ timeout: SHOW_MS });
  keyB = await lineOf(page, 'Agent B');
  await stopB.focus();
  await page.keyboard.press('Enter');
  assert.match(textOf(await asking), /pressed Stop/);
  await cardGone(page);
  // The focus stays on B's line, never on A's Undo turn.
  const at = await focusedLine(page);
  assert.equal(at?.line, keyB, `the focus is on B's line: ${JSON.stringify(at)}`);
  assert.notEqual(at.act, 'undo');
  await page.keyboard.press('Enter');
  // The second Enter acted on B's line (it goes on, or leaves), and A's turn was not touched.
  await waitFor(async () => !(await activityLines(page)).some((l) => l.startsWith('Agent B') && /stopped: its calls are refused/.test(l)), SHOW_MS);
  assert.equal(await page.locator('#activity [part~=ask-undo]').count(), 0, 'no question about A’s turn either');
  assert.doesNotMatch(await history(page), /Undid/);
  assert.match((await activityLines(page)).find((l) => l.startsWith('Agent A')), /done, 1 step — Highlighted 1 item$/);

  // Enter on a connection's Forget, then Enter again: the other connection stays.
  const items = page.locator('#connections [part=item]');
  await page.click('#connections [part=refresh]');
  await waitFor(async () => (await items.count()) === 2, SHOW_MS);
  await items.first().locator('[part=forget]').focus();
  await page.keyboard.press('Enter');
  assert.equal(await focusedIn(page), 'forget-no', 'Forget asks first, the focus on Keep it');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focusedIn(page), 'forget-yes');
  await page.keyboard.press('Enter');
  await page.locator('#connections [part=result]', { hasText: /^Forgot / }).waitFor({ timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'refresh', 'the focus goes to Refresh, not to the other Forget');
  await page.keyboard.press('Enter');
  await waitFor(async () => (await page.textContent('#connections [part=result]')) === '', SHOW_MS);
  assert.equal(await items.count(), 1, 'the other connection is kept');
  await a.close();
  await b.close();
});

test('Escape denies a queued card as soon as it appears', async () => {
  const page = await openDemo(await chromium());
  const { client } = await connectThroughPage(page, 'keys-escape', namedProvider(page, 'Agent E'));
  const first = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  // The second is sent once the first is asked (sent together, they reach the tab in either
  // order), and read as queued behind the card in its turn's line.
  const second = client.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  await page.waitForFunction(() => document.getElementById('confirm').presence.lines().some((l) => l.waiting === 2), null, { timeout: SHOW_MS });
  // Allow once from the keyboard: the focus was on the card's button the queued card replaces.
  const once = page.locator('#confirm [part=once]');
  await page.waitForFunction(() => !document.querySelector('#confirm').shadowRoot.querySelector('[part=once]').disabled, null, { timeout: SHOW_MS });
  await once.focus();
  await page.keyboard.press('Enter');
  assert.equal((await first).isError, false);
  await cardSays(page, /delete item 2\./);
  await page.keyboard.press('Escape');
  const denied = await Promise.race([second, new Promise((r) => setTimeout(() => r(null), SHOW_MS))]);
  assert.ok(denied, 'Escape answered the queued card');
  assert.match(textOf(denied), /declined/);
  await cardGone(page);
  assert.doesNotMatch(await history(page), /Deleted item 2\b/);
  await client.close();
});

test('after a card is denied the focus does not go back to a button that destroys', async () => {
  const page = await openDemo(await chromium());
  const { client } = await connectThroughPage(page, 'keys-back', namedProvider(page, 'Agent F'));
  const items = page.locator('#connections [part=item]');
  await page.click('#connections [part=refresh]');
  await waitFor(async () => (await items.count()) === 1, SHOW_MS);
  // The person had tabbed to Forget when the card came.
  await items.first().locator('[part=forget]').focus();
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  await page.waitForFunction(() => document.querySelector('#confirm').shadowRoot.activeElement?.getAttribute('part') === 'deny', null, { timeout: SHOW_MS });
  await page.keyboard.press('Enter');
  assert.match(textOf(await call), /declined/);
  await cardGone(page);
  assert.notEqual(await focusedIn(page), 'forget');
  await page.keyboard.press('Enter');
  // Read after the Enter: a call of the connection still runs, and it is still listed.
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false, 'not forgotten');
  assert.equal(await page.textContent('#connections [part=result]'), '');
  assert.equal(await items.count(), 1);
  await client.close();
});
