// A browser-based MCP client (MCP Inspector's web UI, say) can discover, register, redeem and
// call from its own origin once the owner names it in CLIENT_ORIGINS (scripts/relay-up.sh names
// the Inspector's, http://localhost:6274): the API routes answer CORS preflights and expose the
// auth header. Other pages' origins are refused (tests/e2e/origin_refused.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY } from './harness.mjs';

const origin = 'http://localhost:6274';

test('the MCP endpoint and OAuth routes answer a CORS preflight', async () => {
  for (const path of ['/', '/token', '/register', '/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server']) {
    const r = await fetch(`${RELAY}${path}`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
    });
    assert.equal(r.status, 204, path);
    assert.equal(r.headers.get('access-control-allow-origin'), '*', path);
    assert.match(r.headers.get('access-control-allow-headers'), /authorization/);
    assert.match(r.headers.get('access-control-allow-headers'), /mcp-protocol-version/);
  }
});

test('a 401 from the endpoint lets the browser read WWW-Authenticate', async () => {
  const r = await fetch(`${RELAY}/`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('access-control-allow-origin'), '*');
  assert.match(r.headers.get('access-control-expose-headers'), /www-authenticate/);
  assert.equal(r.headers.get('access-control-allow-headers'), null, 'a browser reads it from the preflight only');
});

test('the pages and the tab channel are not opened to other origins', async () => {
  const r = await fetch(`${RELAY}/authorize`, { headers: { origin } });
  assert.equal(r.headers.get('access-control-allow-origin'), null);
});
