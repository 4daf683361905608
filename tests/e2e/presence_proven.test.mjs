// The person's proven presence, tried as an agent that drives the person's browser: the demo
// page on localhost (WebAuthn's relying party cannot be an IP address) in headless Chromium with
// the DevTools virtual authenticator as the device's fingerprint, face, PIN or screen lock. With
// the person verified, approving a connection, Allow on an irreversible card, Always and a
// looser mode work as before; a press with a device that does not verify the person, with no
// device, an approval sent by script without the person's assertion, or with an assertion made
// for another code connects nothing and runs nothing: the relay refuses the approval (the
// waiting page still waits, read after the refusal came), the card stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, HeadlessProvider, register, pkcePair, openWaitingPage, CALLBACK } from './harness.mjs';
import { fileChromium, fileSession, connected, connectThroughPage, cardSays, choose, cardGone, textOf, SHOW_MS, openDemo, addAuthenticator } from './demo_harness.mjs';

const LOCAL = process.env.TABRELAY_APP_LOCALHOST;
/** What the panel and the card say (tab/presence-check.js, src/sentences.rs). */
const NOT_CONFIRMED = /Your device did not confirm it was you/;
const RELAY_REFUSED = /^Nothing was connected: your device did not confirm it was you/;

const chromium = fileChromium();

/** The demo page on localhost with a device, and the SDK client the person approved in it. */
const session = fileSession(async () => {
  const page = await (await chromium()).newPage();
  const device = await addAuthenticator(page);
  await page.goto(`${LOCAL}/demo/?seed=11`);
  await connected(page);
  const approve = async (code) => {
    await page.fill('#code', code);
    await page.click('#approve');
    await page.locator('#approve-result', { hasText: /Connected to/ }).waitFor({ timeout: 10_000 });
  };
  const { client } = await connectThroughPage(page, 'presence-e2e', new HeadlessProvider(null, approve));
  return { page, client, device };
});

/** An agent app's authorization waiting for its connect code (nobody approved it yet). */
async function waiting() {
  const client = await register('Presence attacker');
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's', resource: RELAY });
  return openWaitingPage(url);
}

/** What the waiting page's status says now ('waiting' until someone approved or denied). */
async function stateOf(w) {
  const r = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(w.code)}`, { headers: { cookie: w.cookie } });
  return (await r.json()).state;
}

/** Types `code` and presses Approve in the page, as an agent driving the browser would; the panel's answer. */
async function pressApprove(page, code, answer) {
  await page.fill('#code', code);
  await page.click('#approve');
  const result = page.locator('#approve-result');
  await result.filter({ hasText: answer }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    throw new Error(`${e.message}; the panel says: ${await result.textContent()}`);
  });
  return result.textContent();
}

test('approving made the pairing’s credential with the person verified, and the relay keeps it', async () => {
  const { page, device } = await session();
  assert.equal((await device.credentials()).length, 1, 'one credential, made on the first approval');
  const held = await page.evaluate(() => document.getElementById('agents').relay.presenceKey);
  assert.ok(held?.credential && held?.key, 'the relay told the tab the credential it keeps');
});

test('a press on Approve whose assertion does not verify the person, or whose signature does not hold, connects nothing', async () => {
  const { page, device } = await session();
  const w = await waiting();
  await device.answers({ verified: false });
  await pressApprove(page, w.code, RELAY_REFUSED);
  assert.equal(await stateOf(w), 'waiting', 'read after the relay’s refusal: nothing approved');
  await device.answers({ signs: false });
  await pressApprove(page, w.code, RELAY_REFUSED);
  assert.equal(await stateOf(w), 'waiting');
  // The person's device, verifying them: the same code connects.
  await device.answers();
  await pressApprove(page, w.code, /Connected to/);
  assert.notEqual(await stateOf(w), 'waiting');
});

test('an approval sent by script, without the person’s assertion or with one made for another code, is refused by the relay', async () => {
  const { page, device } = await session();
  await device.answers();
  const w = await waiting();
  const sent = (code, proof) =>
    page.evaluate(
      ([c, p]) =>
        document
          .getElementById('agents')
          .relay.approve(c, p)
          .then(() => 'approved', (e) => e.message),
      [code, proof],
    );
  assert.match(await sent(w.code, null), RELAY_REFUSED);
  assert.equal(await stateOf(w), 'waiting', 'read after the relay’s refusal');
  // The person's real assertion, made for another code, replayed for this one.
  const other = await waiting();
  const proof = await page.evaluate((c) => document.getElementById('agents').presenceCheck.approval(c), other.code);
  assert.ok(proof?.signature, 'an assertion was made');
  assert.match(await sent(w.code, proof), RELAY_REFUSED);
  assert.equal(await stateOf(w), 'waiting');
  // The person's assertion for this very code with one bit of its signature changed (still DER):
  // only the signature check can tell.
  const mine = await page.evaluate((c) => document.getElementById('agents').presenceCheck.approval(c), w.code);
  const bytes = Buffer.from(mine.signature, 'base64url');
  bytes[10] ^= 1;
  assert.match(await sent(w.code, { ...mine, signature: bytes.toString('base64url') }), RELAY_REFUSED);
  assert.equal(await stateOf(w), 'waiting');
  // The same assertion for its own code: approved.
  assert.equal(await sent(other.code, proof), 'approved');
  assert.notEqual(await stateOf(other), 'waiting');
});

test('Allow on an irreversible card and Always count only once the person’s device verified them', async () => {
  const { page, client, device } = await session();
  await device.answers({ verified: false });
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [5] } });
  await cardSays(page, /asks to delete item 5\. Allow\?$/);
  await choose(page, 'once');
  const said = page.locator('#confirm [part=presence]');
  await said.filter({ hasText: NOT_CONFIRMED }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.isVisible('#confirm [part=once]'), true, 'the card stays');
  assert.doesNotMatch(await page.textContent('#history'), /Deleted item 5/, 'read after the refusal: nothing ran');
  await device.answers();
  await choose(page, 'once');
  assert.equal((await call).isError, false);
  await cardGone(page);
  assert.match(await page.textContent('#history'), /Deleted item 5/);

  await device.answers({ verified: false });
  const again = client.callTool({ name: 'items_delete', arguments: { ids: [6] } });
  await cardSays(page, /asks to delete item 6\. Allow\?$/);
  await choose(page, 'always');
  await said.filter({ hasText: NOT_CONFIRMED }).waitFor({ timeout: SHOW_MS });
  const grants = () => page.evaluate(() => document.getElementById('confirm').presence.grants().length);
  assert.equal(await grants(), 0, 'no grant kept');
  await device.answers();
  await choose(page, 'always');
  const result = await again;
  assert.equal(result.isError, false, textOf(result));
  assert.equal(await grants(), 1);
});

test('a looser mode needs the person’s device; a stricter one does not', async () => {
  const { page, device } = await session();
  const mode = () => page.evaluate(() => document.getElementById('confirm').presence.settings().mode);
  const select = page.locator('tabrelay-agents select[data-mode]');
  await device.answers({ verified: false });
  await select.selectOption('read-only');
  await page.waitForFunction(() => document.getElementById('confirm').presence.settings().mode === 'read-only', null, { timeout: SHOW_MS });
  await select.selectOption('undoable');
  await page.locator('tabrelay-agents [part=mode-result]').filter({ hasText: NOT_CONFIRMED }).waitFor({ timeout: SHOW_MS });
  assert.equal(await mode(), 'read-only', 'read after the refusal: the stricter mode stays');
  await device.answers();
  await select.selectOption('careful');
  await page.waitForFunction(() => document.getElementById('confirm').presence.settings().mode === 'careful', null, { timeout: SHOW_MS });
});

test('with no device, an app that refuses those decisions connects nothing; one that allows them says an agent could have pressed', async () => {
  const browser = await chromium();
  // A browser of its own (another pairing, with no credential) and no authenticator at all.
  const context = await browser.newContext();
  const strict = await context.newPage();
  await strict.goto(`${LOCAL}/demo/?seed=11&device=required`);
  await connected(strict);
  const w = await waiting();
  await pressApprove(strict, w.code, /cannot confirm it is you/);
  assert.equal(await stateOf(w), 'waiting', 'read after the refusal');
  await context.close();
  // The demo as it ships (it allows), on 127.0.0.1 where no credential can exist.
  const page = await openDemo(browser);
  const { client } = await connectThroughPage(page, 'presence-without-e2e');
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [9] } });
  await cardSays(page, /asks to delete item 9\. Allow\?$/);
  assert.match(await page.textContent('#confirm [part=presence]'), /an agent driving this browser could press this/);
  await choose(page, 'deny');
  assert.equal((await call).isError, true);
  await client.close();
  await page.close();
});

test('Let it go on gives a stopped agent its power back only once the person’s device verified it', async () => {
  const { page, client, device } = await session();
  await device.answers();
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [7] } });
  await cardSays(page, /asks to delete item 7\. Allow\?$/);
  await page.click('#activity button[data-act=stop]');
  assert.equal((await call).isError, true, 'stopped');
  const stopped = () => page.evaluate(() => {
    const presence = document.getElementById('confirm').presence;
    return presence.lines().some((l) => l.connection?.id != null && presence.isStopped(l.connection.id));
  });
  assert.equal(await stopped(), true);
  await device.answers({ verified: false });
  await page.click('#activity button[data-act=go-on]');
  await page.locator('#activity [part=presence]').filter({ hasText: NOT_CONFIRMED }).waitFor({ timeout: SHOW_MS });
  assert.equal(await stopped(), true, 'read after the refusal: still stopped');
  await device.answers();
  await page.click('#activity button[data-act=go-on]');
  await page.waitForFunction(() => {
    const presence = document.getElementById('confirm').presence;
    return !presence.lines().some((l) => l.connection?.id != null && presence.isStopped(l.connection.id));
  }, null, { timeout: SHOW_MS });
  const after = await client.callTool({ name: 'items_values', arguments: { ids: [1] } });
  assert.equal(after.isError, false, textOf(after));
});
