// The person sees their connections in the tab and forgets one: its access and refresh tokens
// stop at once, and the others go on. /revoke (RFC 7009) does the same for a client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, connectByHand, refresh, callTool, mcpPost, postForm, register } from './harness.mjs';

const call = (token) => mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: {} } });

test('the tab lists its connections and forgets one; its tokens stop at once', async () => {
  const tab = await openTab();
  const a = await connectByHand(tab);
  const b = await connectByHand(tab);
  const list = await tab.client.connections();
  assert.equal(list.length, 2);
  for (const c of list) {
    assert.equal(c.client, 'E2E client');
    assert.equal(c.host, '127.0.0.1');
    assert.ok(c.created_ms > Date.now() - 60_000 && c.used_ms >= c.created_ms);
  }
  const [first] = list;
  const remaining = await tab.client.forget(first.id);
  assert.deepEqual(remaining.map((c) => c.id), [list[1].id]);
  const results = await Promise.all([call(a.tokens.access_token), call(b.tokens.access_token)]);
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 401], 'the forgotten one stops, the other goes on');
  const forgotten = results[0].status === 401 ? a : b;
  assert.equal((await refresh(forgotten.client, forgotten.tokens.refresh_token)).body.error, 'invalid_grant');
  tab.close();
});

test('/revoke of a refresh token or an access token ends the grant; anything else is 200 too', async () => {
  const tab = await openTab();
  const a = await connectByHand(tab);
  assert.equal((await postForm('/revoke', { token: a.tokens.refresh_token, client_id: a.client.client_id })).status, 200);
  assert.equal((await call(a.tokens.access_token)).status, 401);
  const b = await connectByHand(tab);
  assert.equal((await postForm('/revoke', { token: b.tokens.access_token, token_type_hint: 'access_token' })).status, 200);
  assert.equal((await refresh(b.client, b.tokens.refresh_token)).body.error, 'invalid_grant');
  assert.equal((await postForm('/revoke', { token: 'not-a-token' })).status, 200);
  assert.equal((await postForm('/revoke', {})).body.error, 'invalid_request');
  tab.close();
});

test('authorizing the same client again keeps its old grant beside the new one', async () => {
  const tab = await openTab();
  const client = await register('Twice');
  const { authorizeByHand, redeem } = await import('./harness.mjs');
  const first = await authorizeByHand(tab, { client });
  const t1 = (await redeem({ client, code: first.code, verifier: first.pkce.verifier })).body;
  const second = await authorizeByHand(tab, { client });
  const t2 = (await redeem({ client, code: second.code, verifier: second.pkce.verifier })).body;
  // Every Claude user shares one client id: approving never pushes out another connection.
  assert.equal((await call(t1.access_token)).status, 200, 'the old grant still works');
  assert.equal((await call(t2.access_token)).status, 200);
  assert.equal((await tab.client.connections()).length, 2);
  tab.close();
});
