// Remote phishing of a connect code (RFC 8628 §5.4): an attacker starts /authorize in their own
// browser with a client named like a real one ("Claude Code", a loopback redirect) and sends
// the person the approval link. The tab's consent now says how long ago the request started,
// where it came from (not known under wrangler dev, and said so), where it returns, warns that
// the unverified name looks like Claude's, and asks to approve only a request the person just
// started; and a linked code of an unverified client cannot be approved with one click: the
// demo page hides its last characters and Approve needs them typed from the waiting page,
// which the attacker holds. A wrong tail approves nothing (the code still waits, no connection
// is made); the right one approves. A whole code the person typed needs no extra step.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, register, pkcePair, openWaitingPage, waitForRedirect, redeem } from './harness.mjs';
import { launchChromium, openDemo } from './demo_harness.mjs';
import { CONSENT } from '../../tab/generated/bundle.js';

const LOOPBACK = 'http://127.0.0.1:33418/callback';

let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

/** The attacker's side: a client named `name`, and the waiting page it opened. */
async function attackerPage(name = 'Claude Code') {
  const client = await register(name, [LOOPBACK]);
  const pkce = pkcePair();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 'phish' });
  const page = await openWaitingPage(url);
  assert.equal(page.status, 200);
  return { client, pkce, page };
}

async function stateOf(page) {
  const r = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(page.code)}`, { headers: { cookie: page.cookie } });
  return (await r.json()).state;
}

/**
 * The connections the demo page lists after asking the pairing again, once the list shows
 * `expected` (or 5 s passed: then whatever it shows, for the assertion to name).
 */
async function listed(page, expected) {
  await page.click('#connections [part=refresh]');
  const shows = (n) => {
    const root = document.querySelector('tabrelay-agents').shadowRoot.getElementById('connections').shadowRoot;
    return root.querySelectorAll('[part=item]').length === n && !/show here once/.test(root.querySelector('[part=empty]').textContent);
  };
  await page.waitForFunction(shows, expected, { timeout: 5_000 }).catch(() => {});
  return page.locator('#connections [part=item]').count();
}

test('the consent says how old the request is, from where, where it returns, and what its name imitates', async () => {
  const { page } = await attackerPage('Claude Code');
  await new Promise((r) => setTimeout(r, 1200));
  const tab = await openTab();
  const said = await tab.client.describe(page.code);
  assert.equal(said.client, 'Claude Code');
  assert.equal(said.verified, undefined, 'a registered name is not verified');
  assert.equal(said.host, '127.0.0.1');
  assert.ok(said.age_ms >= 1000 && said.age_ms < 60_000, `started ${said.age_ms} ms ago`);
  assert.equal(said.place, undefined, 'wrangler dev does not say where: the tab says it is not known');
  assert.equal(said.lookalike, 'Claude');

  const plain = await attackerPage('Orders dashboard');
  assert.equal((await tab.client.describe(plain.page.code)).lookalike, undefined, 'an ordinary name is not flagged');
  tab.close();
});

test('a linked code of an unverified client needs its last characters typed; a wrong tail approves nothing', { timeout: 60_000 }, async () => {
  const { client, pkce, page: waiting } = await attackerPage('Claude Code');
  const page = await openDemo(browser, `#tabrelay-connect=${waiting.code}`);
  assert.equal(await listed(page, 0), 0, 'a fresh browser: no connection');

  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: 10_000 });
  assert.equal(await page.inputValue('#code'), `${waiting.code.slice(0, 7)}••••`, 'the last characters are hidden');
  assert.ok(await page.isVisible('#code-tail'), 'the field for them shows');
  assert.equal(await page.textContent('#code-tail-label'), CONSENT.TAIL_ASK);
  assert.equal(await page.textContent('#code-lookalike'), CONSENT.LOOKALIKE.replaceAll('{app}', 'Claude'));
  assert.ok((await page.textContent('#code-hint')).includes(CONSENT.APPROVE_ONLY_YOURS), 'the relay’s sentence, as the bundle carries it');
  const asker = await page.textContent('#code-asker');
  assert.match(asker, /“Claude Code” \(name given by the app, not verified\)/);
  assert.match(asker, /sent back to 127\.0\.0\.1/);
  assert.match(asker, /It started /);
  assert.ok(asker.includes(CONSENT.PLACE_UNKNOWN));

  // One click: nothing is approved.
  await page.click('#approve');
  assert.equal(await page.textContent('#approve-result'), CONSENT.TAIL_ASK);
  // A wrong tail: refused, nothing approved.
  const right = waiting.code.slice(-4);
  const wrong = right.split('').reverse().join('') === right ? '0000' : right.split('').reverse().join('');
  await page.fill('#code-tail', wrong === right ? 'ZZZZ' : wrong);
  await page.click('#approve');
  assert.equal(await page.textContent('#approve-result'), CONSENT.TAIL_WRONG);
  assert.equal(await stateOf(waiting), 'waiting', 'the relay recorded no approval');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(await listed(page, 0), 0, 'no connection was made');

  // The person holding the waiting page types the right tail: approved.
  await page.fill('#code-tail', right.toLowerCase());
  await page.click('#approve');
  await page.locator('#approve-result', { hasText: /Connected to/ }).waitFor({ timeout: 10_000 });
  const s = await waitForRedirect(waiting);
  assert.equal(s.state, 'approved');
  const t = await redeem({ client, code: new URL(s.redirect).searchParams.get('code'), verifier: pkce.verifier, redirectUri: LOOPBACK });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  assert.equal(await listed(page, 1), 1, 'the connection the person approved');
  await page.close();
});

test('a whole code the person typed needs no extra step', async () => {
  const { page: waiting } = await attackerPage('Claude Code');
  const page = await openDemo(browser);
  await page.fill('#code', waiting.code);
  assert.ok(await page.isHidden('#tail-box'));
  await page.click('#approve');
  await page.locator('#approve-result', { hasText: /Connected to/ }).waitFor({ timeout: 10_000 });
  assert.equal(await stateOf(waiting), 'approved');
  await page.close();
});
