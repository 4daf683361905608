// Refresh tokens rotate on every use; the previous one still works until the new one is first
// used (a retry after a lost answer), within 2 minutes of the rotation (after that it counts as
// reuse: tested natively with the clock passed in, src/pairing/grants.rs); an older one revokes the
// whole grant, and then its access tokens stop at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, connectByHand, refresh, callTool, mcpPost } from './harness.mjs';

let tab;
before(async () => {
  tab = await openTab();
});
after(() => tab.close());

test('a refresh gives new tokens that work, with a new refresh token', async () => {
  const { client, tokens } = await connectByHand(tab);
  assert.ok(tokens.refresh_token, 'the code exchange gives a refresh token');
  const r = await refresh(client, tokens.refresh_token);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.notEqual(r.body.refresh_token, tokens.refresh_token);
  assert.equal((await callTool(r.body.access_token, 'history_list')).isError, false);
});

test('a retry with the previous refresh token works until the new one is used', async () => {
  const { client, tokens } = await connectByHand(tab);
  const first = await refresh(client, tokens.refresh_token);
  const retry = await refresh(client, tokens.refresh_token); // the first answer was "lost"
  assert.equal(retry.status, 200, JSON.stringify(retry.body));
  const next = await refresh(client, retry.body.refresh_token);
  assert.equal(next.status, 200);
  // Now the original and the lost one are old: using one revokes the grant.
  const reuse = await refresh(client, first.body.refresh_token);
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, 'invalid_grant');
  assert.match(reuse.body.error_description, /revoked/);
  assert.equal((await refresh(client, next.body.refresh_token)).body.error, 'invalid_grant', 'the whole grant is gone');
  const call = await mcpPost(next.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: {} } });
  assert.equal(call.status, 401, 'its access tokens stop at once');
  assert.match(call.headers.get('www-authenticate'), /resource_metadata/);
});

test('a refresh token of another client or a made-up one is refused and changes nothing', async () => {
  const { client, tokens } = await connectByHand(tab);
  const other = await connectByHand(tab);
  assert.equal((await refresh(other.client, tokens.refresh_token)).body.error, 'invalid_grant');
  const [p, g] = tokens.refresh_token.split('.');
  assert.equal((await refresh(client, `${p}.${g}.made-up`)).body.error, 'invalid_grant');
  assert.equal((await refresh(client, 'garbage')).body.error, 'invalid_grant');
  assert.equal((await refresh(client, tokens.refresh_token)).status, 200, 'the real token still works');
});
