// The person's tab asks who wants a code before deciding; a denial sends the waiting page back
// to the agent app with access_denied; a pairing gets only a few wrong codes a minute; a code
// tried too often dies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, register, pkcePair, openWaitingPage, waitForRedirect, assertDenied, RELAY, CALLBACK } from './harness.mjs';

async function waitingPage(name = 'Decider', state = 'st-decide') {
  const client = await register(name);
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state });
  return openWaitingPage(url);
}

test('the tab learns who asks, then denies; the page returns access_denied with state and iss', async () => {
  const tab = await openTab();
  const page = await waitingPage('Asker <i>app</i>');
  const who = await tab.client.describe(page.code);
  assert.deepEqual({ ...who, age_ms: typeof who.age_ms }, { client: 'Asker <i>app</i>', host: '127.0.0.1', age_ms: 'number' });
  await tab.client.deny(page.code);
  assertDenied(await waitForRedirect(page), 'st-decide');
  await assert.rejects(tab.client.approve(page.code), /not waiting for approval|already approved or denied/);
  tab.close();
});

test('a pairing gets five wrong codes a minute; then even a right code waits', async () => {
  const tab = await openTab();
  for (let i = 0; i < 5; i++) {
    await assert.rejects(tab.client.approve(`ZZZZZ-ZZZZ${i}`), /not waiting for approval/);
  }
  const page = await waitingPage();
  await assert.rejects(tab.client.approve(page.code), /Too many wrong connect codes/);
  const other = await openTab(); // another browser is not held back
  assert.equal((await other.client.approve(page.code)).client, 'Decider');
  tab.close();
  other.close();
});

test('a code tried five times dies', async () => {
  const page = await waitingPage();
  const tab = await openTab();
  for (let i = 0; i < 5; i++) await tab.client.describe(page.code);
  await assert.rejects(tab.client.approve(page.code), /tried too often/);
  const s = await waitForRedirect(page);
  assert.equal(s.state, 'expired');
  tab.close();
});
