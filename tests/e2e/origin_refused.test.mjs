// DNS rebinding: a request to the MCP endpoint from a web page of another origin is refused
// with 403 before anything else (even with a valid token); the relay's own origin, the app's,
// and requests with no Origin (not from a browser) are served.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN, openTab, accessToken, mcpPost } from './harness.mjs';

let tab;
let token;
before(async () => {
  tab = await openTab({ seed: 74 });
  token = await accessToken(tab);
});
after(() => tab.close());

const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'dataset_describe', arguments: {} } };

test('a foreign page is refused with 403 and the tab hears nothing', async () => {
  for (const origin of ['http://evil.example.com', 'null', `${RELAY}.evil.example`]) {
    const r = await mcpPost(token, call, { origin });
    assert.equal(r.status, 403, origin);
    assert.equal(r.body.error.code, -32600);
    assert.match(r.body.error.message, /origin are refused/);
  }
  assert.equal(tab.calls.length, 0);
});

test('the relay’s own origin, the app’s and no Origin are served', async () => {
  for (const headers of [{ origin: new URL(RELAY).origin }, { origin: APP_ORIGIN }, {}]) {
    const r = await mcpPost(token, call, headers);
    assert.equal(r.status, 200, JSON.stringify(headers));
    assert.equal(r.body.result.isError, false);
  }
  assert.equal(tab.calls.length, 3);
});
