// Remote phishing of a connect code (RFC 8628 §5.4). An attacker starts /authorize in their
// own browser (here a client named like a real one: "Claude Code", a loopback redirect) and
// sends the person the waiting page's link. The link carries a reference, never the code; the
// relay approves a link's reference only once the browser that approves proves it opened the
// waiting page: the panel's Approve opens the relay's confirm page as a window, which carries
// the waiting page's cookie in that browser only. So:
// (a) the person's own flow (waiting page and app in one browser) connects with one press;
// (b) the attacker's flow (waiting page in another browser, the link opened in the person's)
//     connects nothing;
// (c) an app's script that approves the link's reference itself, then opens the confirm page in
//     the person's browser, gets no connection either.
// "Nothing" is read after the one event that could still connect: the ticket's confirm page
// opened in the waiting page's own browser (the attacker's, with its cookie), as if the ticket
// had reached them. The refused confirm killed the ticket, so that is stale too; then the
// attacker's poll, a /token redeem attempt and the tab's own list of connections say nothing
// connected. (Before the person's browser opens it, the ticket would confirm in the attacker's:
// a script that sends it there instead is what the person's own verification must stop.)
// The link leaves the address bar at load, a fragment set later is ignored, and nothing is
// described before the person presses Show who asks. The consent says how old the request is,
// from where, where it returns, what its name imitates, and this client's connections here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, register, pkcePair, openWaitingPage, redeem } from './harness.mjs';
import { launchChromium, openDemo, connected } from './demo_harness.mjs';
import { CONSENT } from '../../tab/generated/bundle.js';

const LOOPBACK = 'http://127.0.0.1:33418/callback';

let browser;
before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
});

/** An authorization request of a client named `name` (its PKCE pair kept). */
async function request(name = 'Claude Code') {
  const client = await register(name, [LOOPBACK]);
  const pkce = pkcePair();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: LOOPBACK, code_challenge: pkce.challenge, code_challenge_method: 'S256', state: 'phish' });
  return { client, pkce, url };
}

/** The attacker's side, outside any browser of the person: a client named `name`, and the waiting page it opened. */
async function attackerPage(name = 'Claude Code') {
  const { client, pkce, url } = await request(name);
  const page = await openWaitingPage(url);
  assert.equal(page.status, 200);
  assert.ok(page.link && !page.link.includes(page.code) && !page.link.includes(page.code.replace('-', '')), 'the link does not carry the code');
  return { client, pkce, page };
}

/** The waiting page's status, as its browser (its cookie) reads it. */
async function statusOf(waiting) {
  const r = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(waiting.code)}`, { headers: { cookie: waiting.cookie } });
  return r.json();
}

/**
 * What the attacker gets after the approval: their waiting page's poll, then a /token redeem of
 * the authorization code it would carry (or, with none, the code's own form with a made-up
 * secret). Returns both.
 */
async function attackerRedeems({ client, pkce, page: waiting }) {
  const status = await statusOf(waiting);
  const code = status.redirect ? new URL(status.redirect).searchParams.get('code') : `${waiting.code.replace('-', '')}.made-up`;
  const token = await redeem({ client, code, verifier: pkce.verifier, redirectUri: LOOPBACK });
  return { status, token };
}

/**
 * The confirm page at `confirm` opened in the attacker's browser, with the cookie of the waiting
 * page `waiting` (what a leaked ticket would let them do): stale once the person's browser was
 * refused, so it approves nothing.
 */
async function attackerConfirms(confirm, waiting) {
  const r = await fetch(confirm, { headers: { cookie: waiting.cookie } });
  const html = await r.text();
  assert.equal(r.status, 403, html);
  assert.match(html, /data-ok="false"[^>]*>This confirmation is no longer valid/, html);
}

/** The tab's own list of connections, asked of the relay by the page's relay client (it rejects on a timeout). */
function listed(page) {
  return page.evaluate(() => document.querySelector('tabrelay-agents').relay.connections().then((list) => list.map((c) => c.client)));
}

/** Waits until the panel's result line matches `pattern`; returns it. */
async function resultSays(page, pattern) {
  await page.locator('#approve-result', { hasText: pattern }).waitFor({ timeout: 15_000 });
  return page.textContent('#approve-result');
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
  assert.equal(said.place, undefined, 'wrangler dev does not say where: the tab says nothing of it');
  assert.equal(said.lookalike, 'Claude');

  const plain = await attackerPage('Orders dashboard');
  assert.equal((await tab.client.describe(plain.page.code)).lookalike, undefined, 'an ordinary name is not flagged');
  tab.close();
});


test('(a) the person’s own link, in the browser that opened the waiting page, connects with one press', { timeout: 90_000 }, async () => {
  const context = await browser.newContext();
  const other = await attackerPage('Claude Code');
  // The person's agent app opened the waiting page in this browser: it set its cookie here.
  const { client, pkce, url } = await request('Orders helper');
  const waiting = await context.newPage();
  const redirected = waiting.waitForRequest((r) => r.url().startsWith(LOOPBACK), { timeout: 60_000 });
  await waiting.goto(url.href);
  await waiting.locator('#link:not([hidden])').waitFor({ timeout: 10_000 });
  const link = await waiting.getAttribute('#link', 'href');
  const code = await waiting.textContent('#code');
  assert.ok(!link.includes(code) && !link.includes(code.replace('-', '')), 'the link does not carry the code');

  const page = await context.newPage();
  await page.goto(link);
  await connected(page);
  assert.equal(new URL(page.url()).hash, '', 'the link left the address bar');
  assert.ok(await page.isVisible('#link-box'));
  assert.equal(await page.textContent('#link-opened'), CONSENT.LINK_OPENED);
  assert.deepEqual(await listed(page), [], 'a round trip through the relay after the tab connected');
  assert.equal(await page.textContent('#code-asker'), '', 'nothing is described before the person asks');
  // A fragment set later (a page that opened this one can) is never read.
  await page.evaluate((l) => (location.hash = `tabrelay-connect=${l}`), other.page.link.split('tabrelay-connect=')[1]);

  await page.click('#show-link');
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: 10_000 });
  assert.match(await page.textContent('#code-asker'), /“Orders helper”/, 'the link the page was loaded with, not the later one');
  assert.ok(await page.isHidden('#code-already'), 'no connection of this client yet');

  // Cannot fail under wrangler dev, so not what this shows: that the cookie rides a CROSS-site
  // window. Here the app and the relay are one site (127.0.0.1, ports apart), so the window's
  // request is same-site and a SameSite=Strict cookie would be sent too; deployed, the app's
  // page opening the relay's is cross-site, where only Lax (sent on a top-level GET) works.
  // The attribute itself is asserted in authorize_page.test.mjs (the cookie is written in the
  // shell, src/shell/routes.rs authorize_code, so no native test covers it yet).
  const popup = context.waitForEvent('page', { timeout: 10_000 });
  await page.click('#approve');
  await popup;
  assert.match(await resultSays(page, /^(Connected to|This browser did not)/), /Connected to Orders helper/);
  const request_ = await redirected;
  const t = await redeem({ client, code: new URL(request_.url()).searchParams.get('code'), verifier: pkce.verifier, redirectUri: LOOPBACK });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  assert.deepEqual(await listed(page), ['Orders helper']);

  // The same client asks again: the card says it already has a connection here, and since when.
  const again = await openWaitingPage(url);
  await page.fill('#code', again.code);
  await page.locator('#code-already:not([hidden])').waitFor({ timeout: 10_000 });
  assert.match(await page.textContent('#code-already'), /already has a connection to this browser: started (now|.+ ago)\. If you did not mean/);
  await context.close();
});

test('(b) a link opened in another browser than the waiting page’s connects nothing, and asks for the whole code', { timeout: 90_000 }, async () => {
  const attacker = await attackerPage('Claude Code');
  // The person opens the link the attacker sent, in their own browser.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(attacker.page.link);
  await connected(page);
  await page.click('#show-link');
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: 10_000 });
  assert.equal(await page.textContent('#code-lookalike'), CONSENT.LOOKALIKE.replaceAll('{app}', 'Claude'));
  assert.ok((await page.textContent('#code-hint')).includes(CONSENT.APPROVE_ONLY_YOURS));
  const asker = await page.textContent('#code-asker');
  assert.match(asker, /“Claude Code” \(name given by the app, not verified\)/);
  assert.match(asker, /sent back to 127\.0\.0\.1/);
  assert.ok(!asker.includes(CONSENT.PLACE_UNKNOWN), 'a place not known is not said');

  const popup = context.waitForEvent('page', { timeout: 10_000 });
  // The confirm page drops its ticket from the address bar: its address as it was asked for.
  const confirming = context.waitForEvent('request', { predicate: (r) => r.url().includes('/authorize/confirm?'), timeout: 10_000 });
  await page.click('#approve');
  const confirmPage = await popup;
  const confirmUrl = (await confirming).url();
  // The relay's window said no (the person's browser has no cookie of the attacker's waiting page).
  assert.equal(await resultSays(page, /^(Connected to|This browser did not)/), CONSENT.NOT_THIS_BROWSER);
  await confirmPage.locator('#confirmed[data-ok=false]').waitFor({ timeout: 5_000 });
  assert.ok(await page.isHidden('#link-box'), 'the link is no longer offered: only the whole code typed approves');

  // The ticket is dead even where the waiting page's cookie is; then the attacker's poll
  // carries no code, /token grants nothing, and the tab's list holds no connection.
  await attackerConfirms(confirmUrl, attacker.page);
  const { status, token } = await attackerRedeems(attacker);
  assert.equal(status.state, 'waiting', JSON.stringify(status));
  assert.notEqual(token.status, 200, JSON.stringify(token.body));
  assert.deepEqual(await listed(page), []);
  await context.close();
});

test('(c) an app’s script approving the link’s reference itself gets no connection', { timeout: 60_000 }, async () => {
  const attacker = await attackerPage('Claude Code');
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(attacker.page.link);
  await connected(page);
  const link = attacker.page.link.split('tabrelay-connect=')[1];
  const said = await page.evaluate(async (l) => {
    const relay = document.querySelector('tabrelay-agents').relay;
    const out = {};
    // As if typed: a link's reference is no code.
    out.typed = await relay.approve(l).then((r) => ({ ok: r }), (e) => ({ refused: e.message }));
    // As a link: the relay only hands out a confirm address; the script opens it itself.
    out.linked = await relay.approveLink(l).then((r) => ({ ok: r }), (e) => ({ refused: e.message }));
    return out;
  }, link);
  assert.match(said.typed.refused || '', /ten letters/, JSON.stringify(said));
  assert.ok(said.linked.ok?.confirm, JSON.stringify(said));
  // The script (or anyone) opens the confirm page in this browser: no waiting page's cookie here.
  const confirmPage = await context.newPage();
  const r = await confirmPage.goto(said.linked.ok.confirm);
  assert.equal(r.status(), 403);
  assert.equal(await confirmPage.textContent('#confirmed'), CONSENT.NOT_THIS_BROWSER);
  await attackerConfirms(said.linked.ok.confirm, attacker.page);
  const { status, token } = await attackerRedeems(attacker);
  assert.equal(status.state, 'waiting', JSON.stringify(status));
  assert.notEqual(token.status, 200, JSON.stringify(token.body));
  assert.deepEqual(await listed(page), []);
  await context.close();
});

test('a whole code the person typed approves with one press', async () => {
  const { page: waiting } = await attackerPage('Claude Code');
  const page = await openDemo(browser);
  await page.fill('#code', waiting.code);
  await page.click('#approve');
  await resultSays(page, /Connected to/);
  assert.equal((await statusOf(waiting)).state, 'approved');
  await page.close();
});
