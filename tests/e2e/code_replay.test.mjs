// A replayed authorization code revokes the connection its first redemption made, whichever
// request reaches the pairing first (RFC 6749 §4.1.2). The replay's revocation used to lose the
// race when it reached the pairing before the first redemption's grant was made: it found
// nothing, and the grant was then made and lived. Now the pairing keeps the revoked grant's id
// for a while and refuses to make it. Proven from the relay's state: the tab's list of
// connections is as it was, and no token that either redemption got works. wrangler dev
// delivers the grant first; the replay-first order is driven natively (pairing::room).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, authorizeByHand, redeem, refresh, mcpPost } from './harness.mjs';

let tab;
before(async () => {
  tab = await openTab({ seed: 81 });
  assert.equal(tab.connected.status, 'connected');
});
after(() => tab?.close());

const connections = async () => (await tab.client.connections()).length;
const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

/** Asserts that no token of `answers` (token responses) works any more. */
async function assertNothingWorks(client, answers, what) {
  for (const a of answers) {
    if (a.status === 200) {
      assert.equal((await mcpPost(a.body.access_token, ping)).status, 401, `${what}: the access token stopped`);
      const r = await refresh(client, a.body.refresh_token);
      assert.equal(r.body.error, 'invalid_grant', `${what}: the refresh token stopped`);
    } else {
      assert.equal(a.status, 400, `${what}: ${JSON.stringify(a.body)}`);
      assert.equal(a.body.error, 'invalid_grant', what);
      assert.equal(a.body.access_token, undefined, what);
    }
  }
}

/** Rounds of two redemptions of one code at once. */
const ROUNDS = 10;

test('two redemptions of one code sent at once, again and again: no connection lives', { timeout: 180_000 }, async (t) => {
  const start = await connections();
  let grantFirst = 0;
  let replayFirst = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const a = await authorizeByHand(tab);
    const proof = { client: a.client, code: a.code, verifier: a.pkce.verifier };
    const answers = await Promise.all([redeem(proof), redeem(proof)]);
    assert.ok(answers.filter((r) => r.status === 200).length <= 1, 'one code, one token response at most');
    if (answers.every((r) => r.status !== 200)) replayFirst += 1;
    else grantFirst += 1;
    await assertNothingWorks(a.client, answers, `round ${round}`);
    assert.equal(await connections(), start, `round ${round}: the tab lists no new connection`);
  }
  t.diagnostic(`the grant made then revoked ${grantFirst} times, refused before it was made ${replayFirst} times`);
  // The grant made, then revoked by the replay: the order wrangler dev gives (every round, in
  // practice). The other order (the replay's revocation first, the grant then refused) is
  // driven natively, both halves on one clock: pairing::room's
  // a_replayed_code_leaves_no_connection_whichever_request_reaches_the_pairing_first.
  assert.ok(grantFirst >= 1, `the grant was never made before the replay in ${ROUNDS} rounds`);
});

test('a code replayed after its redemption, in sequence: the connection it made is revoked', async () => {
  const start = await connections();
  for (let i = 0; i < 3; i++) {
    const a = await authorizeByHand(tab);
    const proof = { client: a.client, code: a.code, verifier: a.pkce.verifier };
    const first = await redeem(proof);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(await connections(), start + 1, 'the first redemption made a connection');
    assert.equal((await mcpPost(first.body.access_token, ping)).status, 200, 'and it works');
    const replay = await redeem(proof);
    await assertNothingWorks(a.client, [first, replay], `sequence ${i}`);
    assert.equal(await connections(), start, 'the replay revoked it');
  }
});
