// A browser that blocks the relay's confirm window: the panel's Approve on a connect link opens
// that window (it carries the waiting page's cookie, proving this is the browser that opened
// the waiting page); when the browser refuses to open it, the panel says so and offers a link
// to the same window, which the person opens with a press, and the approval completes. Real
// Chromium with its popup blocker on (Playwright turns it off by default): the Approve is
// pressed by a script whose user activation was already spent, so the browser blocks the
// window as it would any unasked one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, register, pkcePair, redeem } from './harness.mjs';
import { launchChromium, connected } from './demo_harness.mjs';
import { CONSENT } from '../../tab/generated/bundle.js';

const LOOPBACK = 'http://127.0.0.1:33419/callback';

let browser;
before(async () => {
  browser = await launchChromium([], { ignoreDefaultArgs: ['--disable-popup-blocking'] });
});
after(async () => {
  await browser?.close();
});

test('a blocked confirm window is offered as a link the person opens, and the link approves', { timeout: 90_000 }, async () => {
  const context = await browser.newContext();
  const client = await register('Blocked window helper', [LOOPBACK]);
  const pkce = pkcePair();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 'blocked' });
  // The agent app opened the waiting page in this browser: its cookie is here.
  const waiting = await context.newPage();
  const redirected = waiting.waitForRequest((r) => r.url().startsWith(LOOPBACK), { timeout: 60_000 });
  await waiting.goto(url.href);
  await waiting.locator('#link:not([hidden])').waitFor({ timeout: 10_000 });
  const link = await waiting.getAttribute('#link', 'href');

  const page = await context.newPage();
  await page.goto(link);
  await connected(page);
  await page.click('#show-link');
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: 10_000 });

  // A window opened first spends the activation the script runs with; the Approve pressed
  // right after has none left, so the browser blocks the panel's window.
  const opened = [];
  context.on('page', (p) => opened.push(p));
  const spent = await page.evaluate(() => {
    const first = window.open('about:blank', 'spends-the-activation');
    first?.close();
    const panel = document.querySelector('tabrelay-agents').shadowRoot;
    const form = panel.getElementById('approve-form');
    form.requestSubmit(panel.getElementById('approve'));
    return first !== null;
  });
  assert.ok(spent, 'the first window opened: the script had an activation to spend');
  const offered = page.locator('#confirm-link');
  await offered.waitFor({ timeout: 15_000 });
  await page.locator('#approve-result', { hasText: CONSENT.LINK_WINDOW_BLOCKED }).waitFor({ timeout: 5_000 });
  assert.equal(opened.filter((p) => p.url().startsWith(RELAY)).length, 0, 'the browser opened no window of the relay');

  // The person presses the link: the same window, opened by their press, approves.
  const confirmWindow = context.waitForEvent('page', { timeout: 10_000 });
  await offered.click();
  await (await confirmWindow).locator('#confirmed[data-ok=true]').waitFor({ timeout: 10_000 });
  await page.locator('#approve-result', { hasText: /^Connected to Blocked window helper/ }).waitFor({ timeout: 15_000 });
  assert.equal(await offered.count(), 0, 'the link goes once the window said');
  const request = await redirected;
  const t = await redeem({ client, code: new URL(request.url()).searchParams.get('code'), verifier: pkce.verifier, redirectUri: LOOPBACK });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  await context.close();
});
