// A replayed authorization code revokes the connection its first redemption made, whichever
// request reaches the pairing first (RFC 6749 §4.1.2). The replay's revocation used to lose the
// race when it reached the pairing before the first redemption's grant was made: it found
// nothing, and the grant was then made and lived. Now the pairing keeps the revoked grant's id
// for a while and refuses to make it. Proven from the relay's state: the tab's list of
// connections is as it was, and no token that either redemption got works.
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

/** At most this many rounds of two redemptions at once, until both orders were seen. */
const MAX_ROUNDS = 40;

test('two redemptions of one code sent at once, until both orders happened: no connection lives', { timeout: 400_000 }, async (t) => {
  const start = await connections();
  let grantFirst = 0;
  let replayFirst = 0;
  let rounds = 0;
  while (rounds < MAX_ROUNDS && !(grantFirst && replayFirst)) {
    rounds += 1;
    const a = await authorizeByHand(tab);
    const proof = { client: a.client, code: a.code, verifier: a.pkce.verifier };
    const answers = await Promise.all([redeem(proof), redeem(proof)]);
    assert.ok(answers.filter((r) => r.status === 200).length <= 1, 'one code, one token response at most');
    if (answers.every((r) => r.status !== 200)) replayFirst += 1;
    else grantFirst += 1;
    await assertNothingWorks(a.client, answers, `round ${rounds}`);
    assert.equal(await connections(), start, `round ${rounds}: the tab lists no new connection`);
  }
  t.diagnostic(`in ${rounds} rounds: the grant made then revoked ${grantFirst} times, refused before it was made ${replayFirst} times`);
  // The race this test exists for: the replay's revocation reached the pairing before the
  // first redemption's grant was made (both answers 400), and the grant was still refused.
  assert.ok(replayFirst >= 1, `the replay never reached the pairing first in ${rounds} rounds: the race was not tried`);
  assert.ok(grantFirst >= 1, `the grant was never made first in ${rounds} rounds`);
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
