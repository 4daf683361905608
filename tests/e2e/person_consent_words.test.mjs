// The words a newcomer reads at the consent, in the demo page in headless Chromium with the
// official SDK client as the agent: "connected" says to what (this tab, to the relay) and that
// it waits for an agent app until one is connected; the connector address, a loopback one under
// wrangler dev, is said to reach only agent apps on this computer (Claude Code, MCP Inspector),
// not Claude and ChatGPT on the web; Approve and Deny are off until the panel says who asks (on
// load, with part of a code, with a whole code the relay is not waiting for); a request just
// started says neither its age nor that its origin is not known; the waiting page names the app
// and its address, and shows no link to open it before it has its code; the connector page, at a loopback address, says which agent apps reach it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN, register, pkcePair, openWaitingPage } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage } from './demo_harness.mjs';
import { ADDRESS_WORDS } from '../../tab/agents-panel.js';

const chromium = fileChromium();

/** A waiting page of a client registered as `name`. */
async function waitingFor(name) {
  const client = await register(name);
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'words' });
  const waiting = await openWaitingPage(url);
  assert.equal(waiting.status, 200);
  return waiting;
}

const decideOff = (page) => page.evaluate(() => ['approve', 'deny'].map((id) => document.querySelector('tabrelay-agents').shadowRoot.getElementById(id).disabled));

test('Approve and Deny stay off until the panel says who asks', { timeout: 60_000 }, async () => {
  const page = await openDemo(await chromium());
  assert.deepEqual(await decideOff(page), [true, true], 'nothing to approve on load');
  const waiting = await waitingFor('Words helper');
  await page.fill('#code', waiting.code.slice(0, 5));
  // Past the panel's pause before describing: a part of a code asks nothing.
  await page.waitForTimeout(600);
  assert.deepEqual(await decideOff(page), [true, true], 'part of a code');
  // A whole code the relay is not waiting for: the relay says so, and there is nothing to approve.
  await page.fill('#code', 'ZZZZZ-ZZZZ1');
  await page.locator('#approve-result', { hasText: /not waiting for approval/ }).waitFor({ timeout: 10_000 });
  assert.deepEqual(await decideOff(page), [true, true], 'a code the relay refused');
  await page.fill('#code', waiting.code);
  await page.locator('#code-asker', { hasText: /“Words helper”/ }).waitFor({ timeout: 10_000 });
  assert.deepEqual(await decideOff(page), [false, false], 'on once who asks is said');
  // Just started, from a place wrangler dev does not know: neither is said.
  const asker = await page.textContent('#code-asker');
  assert.equal(asker, '“Words helper” (name given by the app, not verified) asks to act in this tab; you will be sent back to 127.0.0.1.');
  assert.ok(!/came from|not known/.test(asker) && !/It started/.test(asker));
  await page.click('#deny');
  await page.locator('#approve-result', { hasText: /^Denied/ }).waitFor({ timeout: 10_000 });
  assert.deepEqual(await decideOff(page), [true, true], 'off again once decided');
  await page.close();
});

test('“connected” says it is this tab, to the relay, waiting for an agent app until one connects; the loopback address says who reaches it', { timeout: 60_000 }, async () => {
  const page = await openDemo(await chromium());
  await page.locator('#status', { hasText: 'this tab is connected to it, waiting for an agent app' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.textContent('[part=status-line]'), `Relay ${RELAY}: this tab is connected to it, waiting for an agent app`);
  const row = await page.textContent('[part=address-row]');
  assert.ok(row.startsWith(`${ADDRESS_WORDS.LOCAL} ${RELAY}/`), row);
  assert.ok(row.includes(ADDRESS_WORDS.LOCAL_REACH), row);
  assert.match(ADDRESS_WORDS.LOCAL_REACH, /^Only agent apps on this computer reach this address \(Claude Code, MCP Inspector\); Claude and ChatGPT on the web need the relay deployed at https\.$/);
  assert.ok(!row.includes(ADDRESS_WORDS.REMOTE), 'not told to add a loopback address to Claude or ChatGPT');

  const { client } = await connectThroughPage(page, 'words-e2e');
  await page.locator('#status', { hasText: /^this tab is connected to it$/ }).waitFor({ timeout: 10_000 });
  await client.close();
  await page.close();
});

test('the waiting page names the app and its address; the connector page says who reaches a loopback address', async () => {
  const waiting = await waitingFor('Words helper');
  assert.ok(waiting.html.includes(`asks to act in your open tab of <strong id="app">Tabrelay demo</strong> (<span id="app-url">${APP_ORIGIN}/demo/</span>).`), waiting.html);
  assert.ok(!waiting.html.includes('tab of the app'), 'not “the app”');
  const page = await (await chromium()).newPage();
  // Until the page has its code, its link to open the app is not shown (it has no address yet).
  await page.route('**/authorize/code', (route) => route.abort());
  const client = await register('Words helper');
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'words' });
  await page.goto(url.toString());
  await page.locator('#status', { hasText: 'Cannot reach the relay' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.isVisible('#link'), false, 'no link before the code');
  assert.equal(await page.textContent('#app'), 'Tabrelay demo');
  await page.goto(`${RELAY}/`);
  assert.match(await page.textContent('#local'), /^Only agent apps on this computer reach this address \(Claude Code, MCP Inspector\); Claude and ChatGPT on the web need/);
  await page.close();
});
