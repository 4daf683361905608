// The OAuth surface as clients probe it: every route answers a method it does not take with 405
// and an `Allow` naming the ones it does (`GET /token` was a 404), the API routes' CORS
// preflights name the same methods as `Allow` (their other answers are readable from any origin
// and carry no preflight-only header: a browser reads those from the preflight), and an unknown
// or stale client at the token endpoint is a 401 `invalid_client` with a challenge (clients such
// as Claude register again only on a 401; after a key rotation a 400 left them stuck).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { RELAY, register, postForm } from './harness.mjs';

/** What each route takes (src/routes.rs ROUTES), and whether browser-based clients may call it. */
const ROUTES = [
  ['/', ['POST'], true],
  ['/health', ['GET'], true],
  ['/.well-known/oauth-protected-resource', ['GET'], true],
  ['/.well-known/oauth-authorization-server', ['GET'], true],
  ['/register', ['POST'], true],
  ['/token', ['POST'], true],
  ['/revoke', ['POST'], true],
  ['/authorize', ['GET'], false],
  ['/authorize/status', ['GET'], false],
  ['/authorize/code', ['POST'], false],
  ['/authorize/wait.js', ['GET'], false],
  ['/tab', ['GET'], false],
];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const methodsOf = (header) => (header ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();

for (const [path, allowed, cors] of ROUTES) {
  test(`${path}: another method than ${allowed.join(', ')} → 405 with Allow${cors ? ', readable from any origin' : ''}`, async () => {
    for (const method of METHODS.filter((m) => !allowed.includes(m))) {
      const r = await fetch(`${RELAY}${path}`, { method, ...(['POST', 'PUT', 'PATCH'].includes(method) ? { body: 'x' } : {}) });
      const what = `${method} ${path}`;
      assert.equal(r.status, 405, `${what}: ${r.status}`);
      assert.deepEqual(methodsOf(r.headers.get('allow')), [...allowed].sort(), `${what}: Allow`);
      if (method !== 'HEAD') assert.match(await r.text(), new RegExp(`takes ${allowed.join(', ')} only`), `${what}: a sentence`);
      if (cors) {
        assert.equal(r.headers.get('access-control-allow-origin'), '*', `${what}: readable from any origin`);
        assert.equal(r.headers.get('access-control-allow-methods'), null, `${what}: the methods come with the preflight`);
      } else {
        assert.equal(r.headers.get('access-control-allow-origin'), null, `${what}: a page stays closed to other origins`);
      }
    }
    for (const method of allowed) {
      const r = await fetch(`${RELAY}${path}`, { method, ...(method === 'POST' ? { body: '' } : {}) });
      assert.ok(![404, 405].includes(r.status), `${method} ${path} is served (got ${r.status})`);
      await r.arrayBuffer();
    }
  });

  if (cors) {
    test(`${path}: the CORS preflight names the methods Allow names`, async () => {
      for (const asked of METHODS.filter((m) => m !== 'HEAD')) {
        const r = await fetch(`${RELAY}${path}`, {
          method: 'OPTIONS',
          headers: { origin: 'http://localhost:6274', 'access-control-request-method': asked, 'access-control-request-headers': 'authorization, content-type' },
        });
        assert.equal(r.status, 204, `preflight of ${asked} ${path}`);
        assert.deepEqual(methodsOf(r.headers.get('access-control-allow-methods')), [...allowed].sort(), `preflight of ${asked} ${path}`);
      }
    });
  }
}

test('a path that is no route stays a 404, whatever the method', async () => {
  for (const method of ['GET', 'POST', 'DELETE']) {
    const r = await fetch(`${RELAY}/no-such-route`, { method, ...(method === 'POST' ? { body: 'x' } : {}) });
    assert.equal(r.status, 404, method);
    assert.equal(r.headers.get('allow'), null, method);
  }
});

/** A client id in the relay's form, signed with a key the relay does not hold (a rotated-out one). */
function staleClientId() {
  const payload = Buffer.from(JSON.stringify({ n: 'Stale', r: ['http://127.0.0.1:9/callback'], t: Math.floor(Date.now() / 1000), i: 'abcdefgh' })).toString('base64url');
  return `trc1.${payload}.${createHmac('sha256', randomBytes(32)).update(payload).digest('base64url')}`;
}

test('token: an unknown or stale client id → 401 invalid_client with a challenge, for both grants', async () => {
  const fresh = await register('Fresh');
  for (const [what, fields] of [
    ['a stale client redeeming', { grant_type: 'authorization_code', client_id: staleClientId(), code: 'ABCDE12345.x', code_verifier: 'v'.repeat(43) }],
    ['a stale client refreshing', { grant_type: 'refresh_token', client_id: staleClientId(), refresh_token: 'x.y.z.w' }],
    ['a forged client id', { grant_type: 'authorization_code', client_id: 'trc1.forged.sig', code: 'ABCDE12345.x' }],
    ['a metadata URL the rules refuse', { grant_type: 'authorization_code', client_id: 'https://127.0.0.1/client.json', code: 'ABCDE12345.x' }],
  ]) {
    const r = await fetch(`${RELAY}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
    const body = await r.json();
    assert.equal(r.status, 401, `${what}: ${JSON.stringify(body)}`);
    assert.equal(body.error, 'invalid_client', what);
    assert.equal(typeof body.error_description, 'string', what);
    assert.equal(r.headers.get('www-authenticate'), 'Basic realm="tabrelay"', `${what}: a 401 names its scheme (RFC 9110 §15.5.2)`);
    assert.match(r.headers.get('access-control-expose-headers'), /www-authenticate/, `${what}: a browser client can read it`);
    assert.equal(body.access_token, undefined, what);
  }
  // The same request from the registered client is a grant error, not a client error.
  const r = await postForm('/token', { grant_type: 'authorization_code', client_id: fresh.client_id, code: 'ABCDE12345.x', code_verifier: 'v'.repeat(43) });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, 'invalid_grant');
});
