// A connect code the relay is not waiting for is refused with one sentence the person can act
// on, and a code works once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, register, pkcePair, openWaitingPage, waitForRedirect, RELAY, CALLBACK } from './harness.mjs';

let tab;
before(async () => {
  tab = await openTab();
});
after(() => tab.close());

test('an unknown code is refused with a sentence', async () => {
  await assert.rejects(tab.client.approve('ZZZZZ-ZZZZZ'), (e) => {
    assert.match(e.message, /not waiting for approval/);
    return true;
  });
});

test('a malformed code is refused with a sentence saying what a code looks like', async () => {
  await assert.rejects(tab.client.approve('hello'), /ten letters and digits/);
});

test('a code is approved once; the second approval is refused', async () => {
  const client = await register('Once');
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's' });
  const page = await openWaitingPage(url);
  const first = await tab.client.approve(page.code.toLowerCase().replace('-', ' '));
  assert.equal(first.client, 'Once', 'the code is read forgivingly and names who asks');
  await assert.rejects(tab.client.approve(page.code), /already approved/);
  const s = await waitForRedirect(page);
  assert.equal(s.state, 'approved');
  assert.ok(s.redirect.startsWith(`${CALLBACK}?code=`));
});
