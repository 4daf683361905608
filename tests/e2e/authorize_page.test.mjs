// /authorize checks everything before showing the waiting page; an unverified redirect is
// never followed; other errors go back to the client with state and iss; the page itself is
// locked down and bound to the browser that opened it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, CALLBACK, register, pkcePair, openWaitingPage } from './harness.mjs';

async function authorizeUrl(over = {}) {
  const client = over.client || (await register('Page test <b>app</b>'));
  const { challenge } = pkcePair();
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: challenge, code_challenge_method: 'S256', state: 'abc', resource: RELAY, ...over };
  delete params.client;
  for (const [k, v] of Object.entries(params)) if (v === null) delete params[k];
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams(params);
  return url;
}

test('the waiting page shows who asks (escaped), is locked down, and its script gets the code', async () => {
  const page = await openWaitingPage(await authorizeUrl());
  assert.equal(page.status, 200);
  assert.match(page.code, /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
  assert.ok(page.html.includes('Page test &lt;b&gt;app&lt;/b&gt;'), 'the client name is escaped');
  assert.ok(!page.html.includes('<b>app</b>'));
  assert.ok(page.html.includes('not verified'));
  assert.equal(page.headers.get('set-cookie'), null, 'the page alone makes no code and sets no cookie');
  assert.ok(!page.html.includes(page.code), 'the page alone shows no code');
  const link = /#tabrelay-connect=([0-9A-Z]+)$/.exec(page.link)?.[1];
  assert.ok(link && !link.includes(page.code.replace('-', '')), 'the link carries a reference in the fragment, not the code');
  assert.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  assert.match(page.made.headers.get('set-cookie'), /HttpOnly/);
  // Lax, not Strict: the relay's confirm window is opened from the app's page, another site
  // once deployed (consent_phishing.test.mjs cannot tell the two apart on one host).
  assert.match(page.made.headers.get('set-cookie'), /; SameSite=Lax(;|$)/);
  // Another browser (no cookie) cannot collect this page's approval.
  const r = await fetch(`${RELAY}/authorize/status?code=${page.code}`);
  assert.equal((await r.json()).state, 'not_this_browser');
});

test('an unverified redirect URI or client is refused on the page, never redirected', async () => {
  for (const over of [{ redirect_uri: 'https://evil.example/cb' }, { redirect_uri: `${CALLBACK}/` }, { client_id: 'trc1.forged.sig' }]) {
    const r = await fetch(await authorizeUrl(over), { redirect: 'manual' });
    assert.equal(r.status, 400, JSON.stringify(over));
    assert.equal(r.headers.get('location'), null);
    assert.match(await r.text(), /cannot go on/);
  }
});

test('other errors go back to the client with error, state and iss', async () => {
  const cases = [
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: null, code_challenge_method: null }, 'invalid_request'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
    [{ resource: 'https://other.example' }, 'invalid_target'],
  ];
  for (const [over, error] of cases) {
    const r = await fetch(await authorizeUrl(over), { redirect: 'manual' });
    assert.equal(r.status, 302, JSON.stringify(over));
    const to = new URL(r.headers.get('location'));
    assert.equal(`${to.origin}${to.pathname}`, CALLBACK);
    assert.equal(to.searchParams.get('error'), error);
    assert.equal(to.searchParams.get('state'), 'abc');
    assert.equal(to.searchParams.get('iss'), RELAY);
  }
});

test('a loopback redirect may change its port (RFC 8252), nothing else about it', async () => {
  const client = await register('Native app', ['http://127.0.0.1:9/callback']);
  const ok = await fetch(await authorizeUrl({ client, redirect_uri: 'http://127.0.0.1:51234/callback' }), { redirect: 'manual' });
  assert.equal(ok.status, 200, 'another port: the waiting page');
  for (const redirect_uri of ['http://127.0.0.1:51234/other', 'http://localhost:9/callback']) {
    const r = await fetch(await authorizeUrl({ client, redirect_uri }), { redirect: 'manual' });
    assert.equal(r.status, 400, redirect_uri);
    assert.equal(r.headers.get('location'), null);
  }
});
