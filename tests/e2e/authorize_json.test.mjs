// Clients check a cached registration by requesting /authorize themselves, asking for JSON,
// before they open a browser. An error about the client or the redirect then comes as a JSON
// OAuth error (invalid_client is a 401, so the client registers again); a browser still gets
// the page. A probe of a good request gets the page, which makes no connect code by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, CALLBACK, register, pkcePair } from './harness.mjs';

async function authorizeUrl(over = {}) {
  const client = over.client || (await register('JSON prober'));
  const params = { response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's', resource: RELAY, ...over };
  delete params.client;
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams(params);
  return url;
}

const JSON_ACCEPT = { accept: 'application/json' };
const BROWSER_ACCEPT = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

test('a stale or made-up client id asked for JSON is a 401 invalid_client with a description', async () => {
  for (const client_id of ['trc1.forged.sig', 'made-up', 'https://localhost/client.json']) {
    const r = await fetch(await authorizeUrl({ client_id }), { headers: JSON_ACCEPT, redirect: 'manual' });
    assert.equal(r.status, 401, client_id);
    assert.match(r.headers.get('content-type'), /^application\/json/);
    const body = await r.json();
    assert.equal(body.error, 'invalid_client', client_id);
    assert.equal(typeof body.error_description, 'string');
    assert.ok(body.error_description.length > 10);
  }
});

test('a redirect the client did not register, asked for JSON, is a 400 JSON error, never followed', async () => {
  const r = await fetch(await authorizeUrl({ redirect_uri: 'https://evil.example/cb' }), { headers: JSON_ACCEPT, redirect: 'manual' });
  assert.equal(r.status, 400);
  assert.equal(r.headers.get('location'), null);
  const body = await r.json();
  assert.equal(body.error, 'invalid_request');
  assert.match(body.error_description, /not one the app registered/);
});

test('a browser asking for HTML gets the page for the same errors', async () => {
  for (const over of [{ client_id: 'trc1.forged.sig' }, { redirect_uri: 'https://evil.example/cb' }]) {
    for (const headers of [BROWSER_ACCEPT, {}]) {
      const r = await fetch(await authorizeUrl(over), { headers, redirect: 'manual' });
      assert.equal(r.status, 400, JSON.stringify(over));
      assert.match(r.headers.get('content-type'), /^text\/html/);
      assert.match(await r.text(), /This connection cannot go on/);
    }
  }
});

test('a good request probed for JSON gets the page, with no code and no cookie', async () => {
  const r = await fetch(await authorizeUrl(), { headers: JSON_ACCEPT, redirect: 'manual' });
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('set-cookie'), null);
  const html = await r.text();
  assert.match(html, /data-request="[^"]+"/);
  assert.doesNotMatch(html, /[0-9A-Z]{5}-[0-9A-Z]{5}/, 'no connect code on the page');
});
