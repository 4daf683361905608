// A client without a valid token is told where to authorize: 401 with
// WWW-Authenticate: Bearer resource_metadata=…, and the metadata there names this relay.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, mcpPost } from './harness.mjs';

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };

test('no token: 401 pointing at the protected-resource metadata', async () => {
  const r = await mcpPost(null, initialize);
  assert.equal(r.status, 401);
  const header = r.headers.get('www-authenticate');
  assert.equal(header, `Bearer resource_metadata="${RELAY}/.well-known/oauth-protected-resource"`);
  assert.equal(r.body.error, 'invalid_token');

  const prm = await (await fetch(`${RELAY}/.well-known/oauth-protected-resource`)).json();
  assert.equal(prm.resource, RELAY);
  assert.deepEqual(prm.authorization_servers, [RELAY]);
  const as = await (await fetch(`${RELAY}/.well-known/oauth-authorization-server`)).json();
  assert.equal(as.issuer, RELAY);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  assert.equal(as.token_endpoint, `${RELAY}/token`);
  assert.equal(as.registration_endpoint, `${RELAY}/register`);
  assert.equal(as.authorization_response_iss_parameter_supported, true);
});

test('a forged, malformed or other-scheme token gets the same 401', async () => {
  const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
  const claims = Buffer.from(JSON.stringify({ iss: RELAY, aud: RELAY, sub: 'x', exp: 9999999999 })).toString('base64url');
  for (const auth of [`Bearer ${header}.${claims}.`, 'Bearer not-a-token', 'Basic dXNlcjpwYXNz']) {
    const r = await fetch(`${RELAY}/`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(initialize) });
    assert.equal(r.status, 401, auth);
    const header = r.headers.get('www-authenticate');
    assert.ok(header.startsWith('Bearer '));
    assert.match(header, new RegExp(`resource_metadata="${RELAY}/.well-known/oauth-protected-resource"`));
    if (auth.startsWith('Bearer ')) assert.match(header, /error="invalid_token"/, 'a presented token is named invalid');
    else assert.doesNotMatch(header, /error=/, 'no bearer token, no error');
    const text = await r.text();
    assert.ok(!text.includes('not-a-token'), 'the token is never echoed');
  }
});

test('GET and DELETE on the endpoint answer 405', async () => {
  for (const method of ['GET', 'DELETE']) {
    const r = await fetch(`${RELAY}/`, { method });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.get('allow'), 'POST');
  }
});
