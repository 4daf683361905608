// The person's presence for a local agent's approval, as for a remote one's: the demo page on
// localhost (WebAuthn's relying party cannot be an IP address) with the DevTools virtual
// authenticator as the device. The local server's pairing keeps a credential of its own (made
// by the person, its challenge bound to the local origin; kept in its state directory) and
// checks each approval's assertion with the relay's own core, the ES256 signature natively: an
// approval sent by script without an assertion, one whose device did not verify the person, one
// whose signature does not hold, or the person's assertion with one bit changed connects nothing
// (the agent app still reads its code, after the refusal came); with the person verified it
// connects.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, connected, addAuthenticator, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus, freshState } from './local_harness.mjs';

const LOCALHOST = process.env.TABRELAY_APP_LOCALHOST;
/** What the local server's pairing says of an approval without the person's presence (src/sentences.rs). */
const REFUSED = /^Nothing was connected: your device did not confirm it was you/;

const chromium = fileChromium();

/** The code the agent app is told now (it still has one: nothing connected it). */
async function codeNow(client) {
  return codeIn(textOf(await client.callTool({ name: 'status', arguments: {} })));
}

/** Types `code` and presses Approve, as the person (or an agent driving the browser) would; the panel's answer. */
async function pressApprove(page, code, answer) {
  await page.fill('#code', code);
  await page.click('#approve');
  const result = page.locator('#approve-result');
  await result.filter({ hasText: answer }).waitFor({ timeout: 10_000 }).catch(async (e) => {
    throw new Error(`${e.message}; the panel says: ${await result.textContent()}`);
  });
}

test('a local agent is connected only with the person’s assertion, which the local server checks', async (t) => {
  const state = freshState();
  const local = await stdioClient('Proven local agent', { state });
  t.after(() => local.client.close());
  const code = await codeNow(local.client);
  const page = await (await chromium()).newPage();
  t.after(() => page.close());
  const device = await addAuthenticator(page);
  await page.goto(`${LOCALHOST}/demo/?seed=11`);
  await connected(page);
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });

  // The person proves their presence for this code once: the local server's pairing now keeps
  // the credential made for it (nothing was approved yet).
  const proof = await page.evaluate((c) => document.getElementById('agents').presenceCheck.approval(c), code);
  assert.ok(proof?.signature, 'an assertion was made');
  assert.equal((await device.credentials()).length, 1, 'one credential, made for the local server');
  const held = await page.evaluate(() => document.getElementById('agents').relay.local.presenceKey);
  assert.equal(held?.credential, proof.credential, 'the local server keeps the credential the person made');
  assert.equal(await page.evaluate(() => document.getElementById('agents').relay.presenceKey), null, 'the relay was not given it');

  const sent = (proof) =>
    page.evaluate(
      ([c, p]) =>
        document
          .getElementById('agents')
          .relay.local.approve(c, p)
          .then(() => 'approved', (e) => e.message),
      [code, proof],
    );
  assert.match(await sent(null), REFUSED, 'an approval by script without an assertion');
  assert.equal(await codeNow(local.client), code, 'read after the refusal: not connected');
  const bytes = Buffer.from(proof.signature, 'base64url');
  bytes[10] ^= 1;
  assert.match(await sent({ ...proof, signature: bytes.toString('base64url') }), REFUSED, 'one bit of the signature changed');
  assert.equal(await codeNow(local.client), code);

  // Presses on Approve whose device did not verify the person, or whose signature does not hold.
  await device.answers({ verified: false });
  await pressApprove(page, code, REFUSED);
  assert.equal(await codeNow(local.client), code);
  await device.answers({ signs: false });
  await pressApprove(page, code, REFUSED);
  assert.equal(await codeNow(local.client), code);

  // The person, verified: connected, and the agent app reads the tab's tools.
  await device.answers();
  await pressApprove(page, code, /Connected to/);
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));
  assert.notEqual((await local.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);

  // The credential outlives the run: the next run's pairing tells the tab the same one, so no
  // one can set up another in its place.
  await local.client.close();
  await localStatus(page).filter({ hasText: /^not running$/ }).waitFor({ timeout: 20_000 });
  const again = await stdioClient('Proven local agent', { state });
  t.after(() => again.client.close());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 70_000 });
  const kept = await page.evaluate(() => document.getElementById('agents').relay.local.presenceKey);
  assert.equal(kept?.credential, held.credential);
});
