// The link flow under the keyboard, in headless Chromium: the person opens the waiting page's
// link in a browser other than the waiting page's (its waiting page is on another device), so
// the relay asks for the whole code typed. The focus goes to the code field; typing it never
// wipes who asks (shown for the link) nor the instruction, until the whole code typed is
// described; the code then approves with one press.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, register, pkcePair, openWaitingPage } from './harness.mjs';
import { fileChromium, connected, focusedIn } from './demo_harness.mjs';
import { CONSENT } from '../../tab/generated/bundle.js';

const chromium = fileChromium();
const LOOPBACK = 'http://127.0.0.1:33419/callback';

test('asked for the whole code, the person types it in the field that has the focus, and what is shown stays', { timeout: 90_000 }, async () => {
  const client = await register('Keyboard helper', [LOOPBACK]);
  const pkce = pkcePair();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 'keys' });
  const waiting = await openWaitingPage(url);
  assert.equal(waiting.status, 200);

  const context = await (await chromium()).newContext();
  const page = await context.newPage();
  await page.goto(waiting.link);
  await connected(page);
  await page.keyboard.press('Enter'); // the focus is on Show who asks
  await page.locator('#code-asker', { hasText: /Keyboard helper/ }).waitFor({ timeout: 10_000 });
  const popup = context.waitForEvent('page', { timeout: 10_000 });
  await page.click('#approve');
  await popup;
  await page.locator('#approve-result', { hasText: CONSENT.NOT_THIS_BROWSER }).waitFor({ timeout: 15_000 });
  assert.equal(await focusedIn(page), 'code', 'the focus is on the field for the whole code');
  const asker = await page.textContent('#code-asker');
  assert.match(asker, /“Keyboard helper” \(name given by the app, not verified\)/);

  // The first characters typed: who asks and the instruction stay.
  const whole = waiting.code.replace('-', '');
  await page.keyboard.type(whole.slice(0, 4));
  await new Promise((r) => setTimeout(r, 600)); // past the panel's pause before describing
  assert.equal(await page.inputValue('#code'), whole.slice(0, 4));
  assert.equal(await page.textContent('#code-asker'), asker, 'who asks is not wiped by typing');
  assert.equal(await page.textContent('#approve-result'), CONSENT.NOT_THIS_BROWSER, 'the instruction stays while it is typed');

  // The whole code: described, the instruction done; Approve connects.
  await page.keyboard.type(whole.slice(4));
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('approve-result').textContent === '', null, { timeout: 10_000 });
  assert.match(await page.textContent('#code-asker'), /“Keyboard helper”/);
  await page.keyboard.press('Enter');
  await page.locator('#approve-result', { hasText: /^Connected to Keyboard helper\.$/ }).waitFor({ timeout: 10_000 });
  await context.close();
});
