// The demo page in a real headless Chromium says who asks for a connect code before the person
// decides: once the whole code is typed, or as soon as the waiting page's link opens it, it
// names the app (as text, not verified) and the host the person goes back to; Deny sends the
// waiting page back to the app with access_denied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register, pkcePair, openWaitingPage, waitForRedirect, assertDenied, RELAY, CALLBACK } from './harness.mjs';
import { fileChromium, openDemo } from './demo_harness.mjs';

/** How long the page may take to describe a code: the debounce and one round trip. */
const DESCRIBE_MS = 10_000;

const chromium = fileChromium();

async function waitingPage(name, state = 'st-demo-decide') {
  const client = await register(name);
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state });
  return openWaitingPage(url);
}

/** Waits until `#code-asker` says something, and returns it. */
async function askerSays(page) {
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: DESCRIBE_MS });
  return page.textContent('#code-asker');
}

test('the person types the code, sees who asks, and denies it; the agent app is sent back refused', async () => {
  const page = await openDemo(await chromium());
  const waiting = await waitingPage('Decider <b>app</b>');
  assert.match(waiting.code, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  await page.locator('#code').pressSequentially(waiting.code.toLowerCase(), { delay: 20 });

  const asker = await askerSays(page);
  assert.match(asker, /“Decider <b>app<\/b>”/, 'the name as the app gave it, shown as text');
  assert.match(asker, /not verified/);
  assert.match(asker, /127\.0\.0\.1/);
  assert.equal(await page.locator('#code-asker b').count(), 0, 'no markup from the app’s name');
  assert.doesNotMatch(await page.textContent('#approve-result'), /Connected|Denied/, 'nothing decided by typing');

  await page.click('#deny');
  await page.locator('#approve-result', { hasText: /Denied/ }).waitFor({ timeout: 10_000 });
  assert.equal(await page.textContent('#approve-result'), 'Denied: Decider <b>app</b> was refused.');
  assert.equal(await page.inputValue('#code'), '', 'a denied code leaves the field');

  assertDenied(await waitForRedirect(waiting), 'st-demo-decide');
  await page.close();
});

test('the waiting page’s link shows who asks once the person presses, and approves nothing', async () => {
  const waiting = await waitingPage('Linked app');
  const page = await openDemo(await chromium(), `#tabrelay-connect=${waiting.link.split('tabrelay-connect=')[1]}`);
  assert.equal(await page.inputValue('#code'), '', 'the link carries no code');
  assert.equal(await page.textContent('#code-asker'), '', 'nothing asked of the relay before the press');
  await page.click('#show-link');
  const asker = await askerSays(page);
  assert.match(asker, /“Linked app” \(name given by the app, not verified\) asks to act in this tab; you will be sent back to 127\.0\.0\.1\.$/);
  assert.doesNotMatch(await page.textContent('#approve-result'), /Connected|Denied/);
  const r = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(waiting.code)}`, { headers: { cookie: waiting.cookie } });
  assert.equal((await r.json()).state, 'waiting', 'still the person’s to decide');
  await page.close();
});
