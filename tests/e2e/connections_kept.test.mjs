// Approving never removes another connection. Every Claude user shares one client id (a
// Client ID Metadata Document), so "the same client id replaces" let a phished approval push the
// person's own connection out: now a second connection of the same client id is listed beside
// the first and both keep working; at the bound a new approval is refused with a sentence and
// nothing is removed. Counted from the pairing's own list of connections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, register, authorizeByHand, redeem, callTool, pkcePair, openWaitingPage, RELAY, CALLBACK } from './harness.mjs';

/** A whole connection of `client` approved by `tab`: its token response. */
async function connect(tab, client) {
  const a = await authorizeByHand(tab, { client });
  const t = await redeem({ client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  return t.body;
}

test('a second connection of the same client id keeps the first: both listed, both tokens work', async () => {
  const tab = await openTab();
  const client = await register('Claude');
  const first = await connect(tab, client);
  assert.equal((await tab.client.connections()).length, 1);

  const second = await connect(tab, client);
  const list = await tab.client.connections();
  assert.equal(list.length, 2, 'the first connection is still listed');
  assert.deepEqual(list.map((c) => c.client), ['Claude', 'Claude']);
  assert.ok(list.every((c) => c.place === undefined), 'where each was made: not known under wrangler dev');
  for (const [name, tokens] of [['first', first], ['second', second]]) {
    const result = await callTool(tokens.access_token, 'dataset_describe');
    assert.equal(result.isError, false, `the ${name} connection's token still works`);
  }
  tab.close();
});

test('at the bound a new approval is refused with a sentence, and no connection is removed', { timeout: 120_000 }, async () => {
  const tab = await openTab({ seed: 77 });
  const client = await register('Filler');
  const MAX = 50; // src/limits.rs MAX_GRANTS
  for (let i = 0; i < MAX; i++) await connect(tab, client);
  const before = (await tab.client.connections()).map((c) => c.id);
  assert.equal(before.length, MAX);

  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'full' });
  const page = await openWaitingPage(url);
  await assert.rejects(tab.client.approve(page.code), /most connections it keeps.*forget one/);
  assert.deepEqual((await tab.client.connections()).map((c) => c.id), before, 'the same connections, none pushed out');

  await tab.client.forget(before[0]);
  await tab.client.approve(page.code);
  assert.equal((await tab.client.connections()).length, MAX - 1, 'room again once one is forgotten (the new one is made at /token)');
  tab.close();
});
