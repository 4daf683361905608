// The token endpoint checks the PKCE verifier, the client and the redirect URI, and an
// authorization code works once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, authorizeByHand, redeem, register, mcpPost } from './harness.mjs';

let tab;
before(async () => {
  tab = await openTab();
});
after(() => tab.close());

test('a wrong or missing PKCE verifier gets invalid_grant / invalid_request and no token', async () => {
  const a = await authorizeByHand(tab);
  const wrong = await redeem({ client: a.client, code: a.code, verifier: 'x'.repeat(43) });
  assert.equal(wrong.status, 400);
  assert.equal(wrong.body.error, 'invalid_grant');
  assert.equal(wrong.body.access_token, undefined);
  const missing = await redeem({ client: a.client, code: a.code });
  assert.equal(missing.body.error, 'invalid_request');
  const ok = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.token_type, 'Bearer');
  assert.equal(ok.body.expires_in, 3600);
});

test('an authorization code works once; a replay revokes what it issued', async () => {
  const a = await authorizeByHand(tab);
  const first = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(first.status, 200);
  const replay = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  assert.equal(replay.body.access_token, undefined);
  // The replay revoked what the code issued: its tokens stop.
  const call = await mcpPost(first.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: {} } });
  assert.equal(call.status, 401);
  const r = await fetch(`${process.env.TABRELAY_URL}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'refresh_token', client_id: a.client.client_id, refresh_token: first.body.refresh_token }) });
  assert.equal((await r.json()).error, 'invalid_grant');
});

test('a code redeemed by another client or for another redirect URI is refused', async () => {
  const a = await authorizeByHand(tab);
  const other = await register('Other client');
  const stolen = await redeem({ client: other, code: a.code, verifier: a.pkce.verifier });
  assert.equal(stolen.body.error, 'invalid_grant');
  const moved = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier, redirectUri: 'http://127.0.0.1:9/elsewhere' });
  assert.equal(moved.body.error, 'invalid_grant');
  const ok = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(ok.status, 200, 'the failed attempts did not use the code up');
});

test('unknown grant types and forged clients get their RFC errors', async () => {
  const client = await register();
  const form = (o) => new URLSearchParams(o);
  const post = async (body) => {
    const r = await fetch(`${process.env.TABRELAY_URL}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    return { status: r.status, body: await r.json() };
  };
  assert.equal((await post(form({ grant_type: 'password', client_id: client.client_id }))).body.error, 'unsupported_grant_type');
  const forged = await post(form({ grant_type: 'authorization_code', client_id: 'trc1.forged.sig', code: 'ABCDE12345.x' }));
  assert.equal(forged.status, 401, 'a 401, so that a client registers again');
  assert.equal(forged.body.error, 'invalid_client');
});

test('the issued token reaches the MCP endpoint', async () => {
  const a = await authorizeByHand(tab);
  const t = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  const r = await mcpPost(t.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { jsonrpc: '2.0', id: 1, result: {} });
});
