// Grants the person can see and take back, in the demo page in headless Chromium with the
// official SDK clients as the agents (their names are given by the apps, not verified): each
// card button says what it grants, to whom and until when; "until you revoke it" pressed on an
// unverified client's card lets that connection alone run the tool without a card (another,
// even of the same name, is still asked; agents still read that the tool asks); every grant is
// listed under its connection in the Agents panel with Revoke, which makes the card come back;
// a changed kind's rule makes the mode read Custom, and choosing a mode says it takes the grants
// back, and does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, choose, textOf, reloadDemo, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

const history = (page) => page.textContent('#history');
const grantTexts = (page) => page.locator('#grants [part=grant]').allTextContents();
const grantGroups = (page) => page.locator('#grants [part=who]').allTextContents();
const settingOf = async (client, name) => (await client.listTools()).tools.find((t) => t.name === name)?._meta?.['tabrelay/setting'];

test('grants say what, to whom and until when; listed under their connection; revoked; taken back by a mode', async () => {
  const page = await openDemo(await chromium());
  const { client: a } = await connectThroughPage(page, 'grants-a', namedProvider(page, 'Claude'));
  const { client: b } = await connectThroughPage(page, 'grants-b', namedProvider(page, 'Claude'));
  assert.deepEqual(await grantTexts(page), []);
  assert.match(await page.textContent('#grants [part=empty]'), /Nothing is allowed beyond the mode/);

  // The card's buttons say what each grants, to whom and until when.
  let call = a.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /^Claude asks to delete item 1\./);
  const words = async (choice) => (await page.textContent(`#confirm [part=${choice}]`)).trim();
  assert.equal(await words('once'), 'Allow this call only');
  assert.equal(await words('connection'), 'Allow “Delete items” for Claude (this connection) until this tab closes');
  assert.equal(await words('always'), 'Allow “Delete items” for Claude (this connection) until you revoke it', 'not for all agents: the name is not verified');
  assert.equal(await words('deny'), 'Deny this call');

  // Until revoked, for this connection only: its next delete runs without a card, another
  // connection calling itself Claude is asked, and no rule changed.
  await choose(page, 'always');
  assert.equal((await call).isError, false);
  const quiet = await a.callTool({ name: 'items_delete', arguments: { ids: [2] } });
  assert.equal(quiet.isError, false, textOf(quiet));
  assert.equal(await page.isHidden('#confirm'), true, 'no card for the connection granted');
  call = b.callTool({ name: 'items_delete', arguments: { ids: [3] } });
  await cardSays(page, /delete item 3\./);
  assert.equal(await page.locator('#permissions [part=kind][data-kind="deletes-items"]').inputValue(), 'ask', 'the kind still asks');
  assert.equal(await page.locator('#permissions [part=mode]').inputValue(), 'careful');
  assert.equal(await settingOf(b, 'items_delete'), 'asks', 'agents read that the tool asks');

  // Listed under its connection, with what and until when.
  await choose(page, 'connection');
  assert.equal((await call).isError, false);
  await waitFor(async () => (await grantTexts(page)).length === 2, SHOW_MS);
  assert.deepEqual(await grantTexts(page), ['“Delete items” runs without a card until you revoke itRevoke', '“Delete items” runs without a card until this tab closesRevoke']);
  const groups = await grantGroups(page);
  assert.equal(groups.length, 2, 'one group per connection');
  for (const g of groups) assert.match(g, /^Claude \(this connection(, returns to .+)?\)$/);
  const revokeA = page.locator('#grants [part=revoke]').first();
  assert.match(await revokeA.getAttribute('aria-label'), /^Revoke: “Delete items” for Claude \(this connection\) until you revoke it$/);

  // Revoke: the card comes back for that connection.
  await revokeA.click();
  await waitFor(async () => (await grantTexts(page)).length === 1, SHOW_MS);
  assert.match(await page.textContent('#grants [part=result]'), /^Revoked: “Delete items” for Claude \(this connection\) asks again\.$/);
  call = a.callTool({ name: 'items_delete', arguments: { ids: [4] } });
  await cardSays(page, /delete item 4\./);
  await choose(page, 'deny');
  assert.match(textOf(await call), /declined/);
  assert.doesNotMatch(await history(page), /Deleted item 4/);

  // A changed kind's rule reads Custom; choosing the mode again (the same one) says it takes
  // the grants back, and does: the connection granted for the tab is asked again.
  const mode = page.locator('#permissions [part=mode]');
  assert.match(await page.textContent('#permissions [part=mode-hint]'), /takes back every grant/);
  await page.locator('#permissions [part=kind][data-kind=heavy]').selectOption('allow');
  await waitFor(async () => (await mode.inputValue()) === 'custom', SHOW_MS);
  assert.match(await mode.locator('option:checked').textContent(), /^Custom/);
  await mode.selectOption('careful');
  await page.locator('#permissions [part=mode-result]', { hasText: /1 grant taken back/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await mode.inputValue(), 'careful');
  assert.equal(await page.locator('#permissions [part=kind][data-kind=heavy]').inputValue(), 'ask');
  assert.deepEqual(await grantTexts(page), []);
  call = b.callTool({ name: 'items_delete', arguments: { ids: [5] } });
  await cardSays(page, /delete item 5\./);
  await page.keyboard.press('Escape');
  assert.match(textOf(await call), /declined/);
  await cardGone(page);

  // A grant until revoked is kept across a reload, and listed again.
  call = a.callTool({ name: 'items_delete', arguments: { ids: [6] } });
  await cardSays(page, /delete item 6\./);
  await choose(page, 'always');
  assert.equal((await call).isError, false);
  await reloadDemo(page);
  await waitFor(async () => (await grantTexts(page)).length === 1, SHOW_MS);
  assert.equal((await a.callTool({ name: 'items_delete', arguments: { ids: [7] } })).isError, false, 'still granted after a reload');
  await a.close();
  await b.close();
});
