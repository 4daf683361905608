// The link flow for a local agent: tabrelay-local serves its agent app's waiting page on its
// loopback port (the relay's own page, script, status and confirm), and the agent app is told
// its address beside the code. The person opens it in the browser where they use the app,
// presses Open the app with this code, presses Show who asks and Approve in the tab, and the
// confirm window (at the local server's origin, carrying the waiting page's cookie) approves:
// the agent app is connected and its call reaches the tab; the waiting page says so. The
// refusals: a browser that did not open the waiting page (no cookie) is refused and only the
// whole code typed approves (read after the refused confirm: nothing connected); a confirm
// cannot approve twice, nor the link again; every route answers a loopback Host only (DNS rebinding); neither the
// page's address, nor the app's link, nor the confirm's address carries the code.
// (A link or ticket that ran out: local/src/link.rs, natively, with the clock moved.)
import test from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { fileChromium, connected, textOf } from './demo_harness.mjs';
import { APP_ORIGIN, waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus, LOCAL_PORT } from './local_harness.mjs';
import { CONSENT } from '../../tab/generated/bundle.js';

const chromium = fileChromium();

/** A local agent app whose link opens the demo (`--app-url`): it, its code and its waiting page's address. */
async function agent(t, name) {
  const local = await stdioClient(name, { args: ['--app-url', `${APP_ORIGIN}/demo/?seed=11`] });
  t.after(() => local.client.close());
  const said = textOf(await local.client.callTool({ name: 'status', arguments: {} }));
  const code = codeIn(said);
  const address = /open (http:\/\/127\.0\.0\.1:\d+\/connect\/[A-Za-z0-9_-]+) in the browser/.exec(said)?.[1];
  assert.ok(address, `the waiting page's address in: ${said}`);
  return { ...local, code, address };
}

/** The code the agent app is told now (it still has one: nothing connected it). */
async function codeNow(client) {
  return codeIn(textOf(await client.callTool({ name: 'status', arguments: {} })));
}

/** Whether `text` carries `code`, grouped or not. */
const carries = (text, code) => text.includes(code) || text.includes(code.replace('-', ''));

/** The waiting page opened in `context`: the page, and the app's link it offers once it has the code. */
async function openWaiting(context, address, code) {
  const waiting = await context.newPage();
  await waiting.goto(address);
  await waiting.locator('#link:not([hidden])').waitFor({ timeout: 10_000 });
  assert.equal(await waiting.textContent('#code'), code, 'the code the agent app was told');
  const link = await waiting.getAttribute('#link', 'href');
  assert.ok(link.startsWith(`${APP_ORIGIN}/demo/?seed=11#tabrelay-connect=`), link);
  assert.ok(!carries(link, code) && !carries(waiting.url(), code), 'neither address carries the code');
  return { waiting, link };
}

/** The demo's tab opened with the link, connected to both relays, its link shown: who asks. */
async function linkShown(page) {
  await connected(page);
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await page.click('#show-link');
  await page.waitForFunction(() => document.querySelector('tabrelay-agents').shadowRoot.getElementById('code-asker').textContent.trim() !== '', null, { timeout: 10_000 });
  return page.textContent('#code-asker');
}

/** Presses Approve on the link: the confirm window's address (as it was asked for) and the panel's answer. */
async function approveLink(context, page) {
  const popup = context.waitForEvent('page', { timeout: 10_000 });
  const confirming = context.waitForEvent('request', { predicate: (r) => r.url().includes('/authorize/confirm?'), timeout: 10_000 });
  await page.click('#approve');
  const window = await popup;
  const confirm = (await confirming).url();
  await page.locator('#approve-result', { hasText: /^(Connected to|This browser did not)/ }).waitFor({ timeout: 15_000 });
  return { window, confirm, result: await page.textContent('#approve-result') };
}

/** A plain GET of `path` on the local server naming `host`: its status and body. */
function get(path, host = `127.0.0.1:${LOCAL_PORT}`, cookie = '') {
  return new Promise((resolve, reject) => {
    const headers = { host, ...(cookie ? { cookie } : {}) };
    const r = httpRequest({ host: '127.0.0.1', port: Number(LOCAL_PORT), path, headers }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    r.on('error', reject);
    r.end();
  });
}

test('the person opens the local agent’s waiting page, opens the app from it, approves with one press, and the agent’s call works', { timeout: 120_000 }, async (t) => {
  const local = await agent(t, 'Linked local agent');
  const context = await (await chromium()).newContext();
  t.after(() => context.close());
  const { waiting } = await openWaiting(context, local.address, local.code);
  assert.match(await waiting.textContent('h1'), /^Connect Linked local agent \(local\) to your tab$/);
  // Approving sends the person nowhere: neither the page nor the tab says they return somewhere.
  assert.match(await waiting.textContent('body'), /asks to act in your open tab of .*\)\.\s*In that tab/s);
  assert.doesNotMatch(await waiting.textContent('body'), /sent back/);

  // Open the app with this code: the app's tab, in the same browser.
  const opened = context.waitForEvent('page', { timeout: 10_000 });
  await waiting.click('#link');
  const page = await opened;
  const asker = await linkShown(page);
  assert.match(asker, /“Linked local agent \(local\)” \(name given by the app, not verified\)/);
  assert.doesNotMatch(asker, /sent back/);
  assert.equal(new URL(page.url()).hash, '', 'the link left the address bar');

  const { confirm, result } = await approveLink(context, page);
  assert.equal(result, 'Connected to Linked local agent (local).');
  assert.equal(new URL(confirm).origin, `http://127.0.0.1:${LOCAL_PORT}`, 'the confirm window is the local server’s');
  assert.ok(!carries(confirm, local.code), 'the confirm’s address carries no code');

  await waitFor(() => local.changed.includes('notifications/tools/list_changed'), 15_000);
  const call = await local.client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.notEqual(call.isError, true, textOf(call));
  await waiting.locator('#status', { hasText: 'Approved: the agent app is connected' }).waitFor({ timeout: 10_000 });

  // Never twice: the confirm's address again (with the waiting page's cookie) approves nothing,
  // nor does the link's reference approved again, and the page is no longer served.
  const cookies = await context.cookies(`http://127.0.0.1:${LOCAL_PORT}`);
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  assert.ok(cookies.some((c) => c.name.startsWith('tabrelay_connect_') && c.httpOnly && c.sameSite === 'Lax'), JSON.stringify(cookies));
  const again = await get(new URL(confirm).pathname + new URL(confirm).search, undefined, cookie);
  assert.equal(again.status, 403, again.body);
  assert.match(again.body, /data-ok="false"/);
  const reference = (await waiting.getAttribute('#link', 'href')).split('tabrelay-connect=')[1];
  const refused = await page.evaluate((l) => document.querySelector('tabrelay-agents').relay.approveLink(l).then(() => 'approved', (e) => e.message), reference);
  assert.notEqual(refused, 'approved');
  assert.equal((await get(new URL(local.address).pathname)).status, 404);
});

test('a confirm from a browser that did not open the waiting page is refused; only the whole code typed approves', { timeout: 120_000 }, async (t) => {
  const local = await agent(t, 'Elsewhere local agent');
  // The waiting page opened in one browser (its cookie there) …
  const first = await (await chromium()).newContext();
  t.after(() => first.close());
  const { link } = await openWaiting(first, local.address, local.code);
  // … its link opened in another, whose confirm window has no cookie of it.
  const context = await (await chromium()).newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(link);
  await linkShown(page);
  const { window, confirm, result } = await approveLink(context, page);
  assert.equal(result, CONSENT.NOT_THIS_BROWSER);
  assert.equal(await window.getAttribute('#confirmed', 'data-ok'), 'false');
  assert.ok(!carries(confirm, local.code), 'the confirm’s address carries no code');
  // Nothing connected, read after the refusal. (The ticket is then dead even with the cookie:
  // natively, local/src/link.rs; here each try counts against the code's five.)
  assert.equal(await codeNow(local.client), local.code);
  assert.ok(!local.changed.includes('notifications/tools/list_changed'));

  // The whole code typed approves.
  await page.fill('#code', local.code);
  await page.click('#approve');
  await page.locator('#approve-result', { hasText: 'Connected to Elsewhere local agent (local).' }).waitFor({ timeout: 10_000 });
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'), 15_000);
});

test('the link flow’s pages answer a loopback Host only (DNS rebinding)', async (t) => {
  const local = await agent(t, 'Rebound local agent');
  const path = new URL(local.address).pathname;
  for (const p of [path, '/authorize/wait.js', `/authorize/status?code=${local.code}`, '/authorize/confirm?ticket=x.y']) {
    const rebound = await get(p, `rebound.example:${LOCAL_PORT}`);
    assert.equal(rebound.status, 421, `${p}: ${rebound.body}`);
    assert.ok(!carries(rebound.body, local.code));
  }
  const page = await get(path);
  assert.equal(page.status, 200);
  assert.match(page.body, /Connect Rebound local agent \(local\) to your tab/);
  assert.ok(!carries(page.body, local.code), 'the page shows the code only once its script asked for it');
});
