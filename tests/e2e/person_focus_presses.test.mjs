// No harm one key away, in the demo page in headless Chromium with the official SDK client as
// the agent: after a press that removes its own button the focus goes to a named control nearby,
// never the page's body: the banner's Stop (to the activity lines), Let it go on in Connections
// (to Refresh, not that row's Forget: Enter twice forgets nothing) and on the activity line (to
// the activity lines, not that line's Dismiss or Undo turn), Show who asks (to Deny or who asks, not
// Approve); and what cannot be taken back asks first with the focus on its safe answer: Forget
// (Keep it; Escape keeps), Revoke all (Keep them), Clear the record (Keep it; after Clear, the
// focus on the record's filter).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, RELAY, register, pkcePair, openWaitingPage } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, choose, cardGone, focusedIn, textOf, connected, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const LOOPBACK = 'http://127.0.0.1:33419/callback';

/** The connections listed. */
const listed = (page) => page.locator('#connections [part=item]').count();

test('the banner’s Stop, then Let it go on in Connections, then Enter twice: the focus is named each time and nothing is forgotten', async () => {
  const page = await openDemo(await chromium());
  await page.setViewportSize({ width: 1280, height: 800 });
  const { client } = await connectThroughPage(page, 'presses-stop', namedProvider(page, 'Agent S'));

  // The banner's Stop, from the keyboard, while the agent waits on a card: its row goes with it.
  const asking = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  const stop = page.locator('tabrelay-driven [part=stop]');
  await stop.focus();
  await page.keyboard.press('Enter');
  assert.match(textOf(await asking), /pressed Stop/);
  await cardGone(page);
  assert.equal(await focusedIn(page), 'lines', 'after the banner’s Stop the focus is on the activity lines');

  // Let it go on in Connections, from the keyboard: the focus goes to Refresh, not Forget.
  await page.click('#connections [part=refresh]');
  const goOn = page.locator('#connections [part=go-on]');
  await goOn.waitFor({ timeout: SHOW_MS });
  await goOn.focus();
  await page.keyboard.press('Enter');
  await goOn.waitFor({ state: 'detached', timeout: SHOW_MS });
  await page.locator('#activity [part=go-on]').waitFor({ state: 'detached', timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'refresh', 'after Let it go on the focus is on Refresh');
  await page.keyboard.press('Enter');
  // Read after the second Enter: the agent still acts, and is still listed.
  const after = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(after.isError, false, textOf(after));
  assert.equal(await listed(page), 1, 'the connection is kept');
  assert.doesNotMatch(await page.textContent('#connections [part=result]'), /Forgot/);

  // Stop and Let it go on on the activity line, from the keyboard: the focus stays on the line.
  const again = client.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  await cardSays(page, /delete item 2\./);
  await page.locator('#activity [part~=acting] [part=stop]').focus();
  await page.keyboard.press('Enter');
  assert.match(textOf(await again), /pressed Stop/);
  // Every line of the agent says stopped: the newest one's Let it go on.
  const lineGoOn = page.locator('#activity [part=go-on]');
  await lineGoOn.last().waitFor({ timeout: SHOW_MS });
  await lineGoOn.last().focus();
  await page.keyboard.press('Enter');
  await waitFor(async () => (await lineGoOn.count()) === 0, SHOW_MS);
  // On the list itself ("What agents are doing"), never that line's Dismiss nor Undo turn.
  assert.equal(await focusedIn(page), 'lines', 'after the line’s Let it go on the focus is on the activity lines');
  await waitFor(async () => (await client.callTool({ name: 'dataset_describe', arguments: {} })).isError === false, SHOW_MS);

  // Forget asks first, with the focus on Keep it: Enter twice keeps the connection.
  const forget = page.locator('#connections [part=forget]');
  await forget.focus();
  await page.keyboard.press('Enter');
  await page.locator('#connections [part=forget-ask]').waitFor({ timeout: SHOW_MS });
  assert.match(await page.textContent('#connections [part=forget-ask]'), /^Forget Agent S\? It can no longer act in this tab; this cannot be undone\./);
  assert.equal(await focusedIn(page), 'forget-no');
  await page.keyboard.press('Enter');
  await page.locator('#connections [part=forget-ask]').waitFor({ state: 'detached', timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'refresh', 'after Keep it the focus is on Refresh, not Forget');
  await page.keyboard.press('Enter');
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false, 'Keep it forgot nothing');
  // Escape keeps too.
  await forget.focus();
  await page.keyboard.press('Enter');
  await page.locator('#connections [part=forget-ask]').waitFor({ timeout: SHOW_MS });
  await page.keyboard.press('Escape');
  await page.locator('#connections [part=forget-ask]').waitFor({ state: 'detached', timeout: SHOW_MS });
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} })).isError, false, 'Escape forgot nothing');
  // Its own Forget, pressed on purpose: the connection goes.
  await forget.click();
  await page.click('#connections [part=forget-yes]');
  await page.locator('#connections [part=result]', { hasText: /^Forgot Agent S/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'refresh');
  assert.equal((await client.callTool({ name: 'dataset_describe', arguments: {} }).catch((e) => ({ isError: true, content: [{ text: e.message }] }))).isError, true, 'forgotten: its calls stop');
  await client.close().catch(() => {});
  await page.close();
});

test('Revoke all and Clear the record ask first, with the focus on the safe answer; after Clear the focus is on the record’s filter', async () => {
  const page = await openDemo(await chromium());
  const { client } = await connectThroughPage(page, 'presses-grants', namedProvider(page, 'Agent G'));
  // Two grants: a delete until revoked, a read asked about (the person chose Ask) for this connection.
  const del = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  await choose(page, 'always');
  assert.equal((await del).isError, false);
  await page.locator('#agents [part=tools-details]').evaluate((d) => (d.open = true));
  await page.locator('#agents select[data-tool=items_values]').selectOption('ask');
  const read = client.callTool({ name: 'items_values', arguments: { ids: [5], columns: ['score'] } });
  await cardSays(page, /Allow\?$/);
  await choose(page, 'connection');
  assert.equal((await read).isError, false);
  await cardGone(page);
  const grants = page.locator('#grants [part=grant]');
  await waitFor(async () => (await grants.count()) === 2, SHOW_MS);

  // Revoke all: Enter asks, the focus on Keep them; Enter again keeps both.
  const all = page.locator('#grants [part=revoke-all]');
  await all.focus();
  await page.keyboard.press('Enter');
  await page.locator('#grants [part=revoke-all-ask]').waitFor({ timeout: SHOW_MS });
  assert.match(await page.textContent('#grants [part=revoke-all-ask]'), /^Revoke all 2 grants\? Each card asks again; this cannot be undone\./);
  assert.equal(await focusedIn(page), 'revoke-all-no');
  await page.keyboard.press('Enter');
  await page.locator('#grants [part=revoke-all-ask]').waitFor({ state: 'hidden', timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'grants-title', 'after Keep them the focus is on the heading, not Revoke all');
  assert.equal(await grants.count(), 2, 'Keep them revoked nothing');
  // Escape keeps; then Revoke all on purpose revokes both.
  await all.focus();
  await page.keyboard.press('Enter');
  await page.locator('#grants [part=revoke-all-ask]').waitFor({ timeout: SHOW_MS });
  await page.keyboard.press('Escape');
  await page.locator('#grants [part=revoke-all-ask]').waitFor({ state: 'hidden', timeout: SHOW_MS });
  assert.equal(await grants.count(), 2, 'Escape revoked nothing');
  await all.click();
  await page.click('#grants [part=revoke-all-yes]');
  await waitFor(async () => (await grants.count()) === 0, SHOW_MS);
  assert.equal(await focusedIn(page), 'grants-title');

  // Clear the record: asks, the focus on Keep it; Clear on purpose clears; the focus on the filter.
  const clear = page.locator('#record [part=clear]');
  await clear.focus();
  await page.keyboard.press('Enter');
  assert.equal(await focusedIn(page), 'clear-no');
  await page.keyboard.press('Enter');
  assert.equal(await focusedIn(page), 'clear', 'Keep it: back on Clear…, which asks again');
  assert.ok((await page.locator('#record [part~=entry]').count()) > 0, 'Keep it cleared nothing');
  await clear.click();
  await page.click('#record [part=clear-yes]');
  await page.locator('#record [part=result]', { hasText: /cleared/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await focusedIn(page), 'agent-filter', 'after Clear the focus is on the record’s filter, not the page');
  await client.close();
  await page.close();
});

test('Show who asks: the focus goes to a named control, not the page’s body nor Approve', { timeout: 60_000 }, async () => {
  const client = await register('Focus helper', [LOOPBACK]);
  const pkce = pkcePair();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 'focus' });
  const waiting = await openWaitingPage(url);
  assert.equal(waiting.status, 200);
  const context = await (await chromium()).newContext();
  const page = await context.newPage();
  await page.goto(waiting.link);
  await connected(page);
  assert.equal(await focusedIn(page), 'show-link');
  await page.keyboard.press('Enter');
  await page.locator('#code-asker', { hasText: /Focus helper/ }).waitFor({ timeout: 10_000 });
  // Named and nearby (Deny, or who asks), never the page's body nor Approve (a second Enter there
  // would connect the agent).
  const at = await focusedIn(page);
  assert.ok(!['body', 'approve', 'show-link'].includes(at), `after Show who asks the focus is on ${at}`);
  await context.close();
});
