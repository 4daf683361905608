// The connector address opened in a browser shows a page saying what it is and how to add it
// in the agent apps, instead of a bare 405; an MCP client's GET (a stream, JSON, anything but
// a page) still gets the endpoint's 405 naming POST.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN } from './harness.mjs';
import { fileChromium } from './demo_harness.mjs';

const chromium = fileChromium();

test('a browser opening the connector address sees what it is and how to add it', async () => {
  const page = await (await chromium()).newPage();
  const r = await page.goto(`${RELAY}/`);
  assert.equal(r.status(), 200);
  assert.match(r.headers()['content-type'], /^text\/html/);
  assert.equal(await page.textContent('#address'), `${RELAY}/`);
  assert.equal(await page.getAttribute('#app', 'href'), `${APP_ORIGIN}/demo/`);
  const clients = await page.textContent('#clients');
  for (const name of ['Claude', 'ChatGPT', 'Claude Code', 'MCP Inspector']) assert.ok(clients.includes(name), name);
  assert.ok(clients.includes(`--server-url ${RELAY}/`));
  await page.close();
});

test('an MCP client asking GET / for a stream or JSON still gets 405 naming POST', async () => {
  for (const accept of ['text/event-stream', 'application/json, text/event-stream', '*/*', 'text/html, text/event-stream']) {
    const r = await fetch(`${RELAY}/`, { headers: { accept } });
    assert.equal(r.status, 405, accept);
    assert.equal(r.headers.get('allow'), 'POST');
  }
});
