// The demo app in a real headless Chromium is the person's tab: it pairs with the relay, the
// person types the connect code shown on the waiting page and approves it, and the official
// SDK client's calls are answered by the page (its dataset, its picture, its history).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { RELAY, APP_ORIGIN, HeadlessProvider } from './harness.mjs';

const CHROMIUM = process.env.TABRELAY_CHROMIUM || '/usr/bin/chromium';
let browser;

before(async () => {
  // Playwright gives the browser a fresh, empty profile of its own.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => {
  await browser?.close();
});

async function openDemo(hash = '') {
  const page = await browser.newPage();
  await page.goto(`${APP_ORIGIN}/demo/?relay=${encodeURIComponent(RELAY)}&seed=11${hash}`);
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('connected'), null, { timeout: 15_000 });
  return page;
}

test('the person approves the code in the demo page and the agent’s calls are answered by it', async () => {
  const page = await openDemo();
  const datasetName = await page.textContent('#dataset-name');
  // The person types the code the waiting page shows and presses Approve.
  const provider = new HeadlessProvider(null, async (code) => {
    await page.fill('#code', code);
    await page.click('#approve');
    await page.waitForFunction(() => /Connected to/.test(document.getElementById('approve-result').textContent), null, { timeout: 10_000 });
  });
  const make = () => new StreamableHTTPClientTransport(new URL(`${RELAY}/`), { authProvider: provider });
  const client = new Client({ name: 'demo-e2e', version: '1.0.0' });
  try {
    await client.connect(make());
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  assert.ok(provider.authorizationCode, 'the waiting page redirected with a code');
  const transport = make();
  await transport.finishAuth(provider.authorizationCode);
  await client.connect(make());
  assert.match(await page.textContent('#approve-result'), /Connected to SDK e2e client/);

  const described = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(described.isError, false);
  assert.ok(described.content[0].text.includes(JSON.stringify(datasetName).slice(1, -1)), 'the page’s own dataset');

  const picture = await client.callTool({ name: 'view_picture', arguments: { width: 320 } });
  assert.equal(picture.isError, false);
  const image = picture.content.find((c) => c.type === 'image');
  assert.equal(image.mimeType, 'image/png');
  assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG drawn by the page');

  const highlight = await client.callTool({ name: 'items_highlight', arguments: { ids: [1, 2] } });
  assert.equal(highlight.isError, false);
  await page.waitForFunction(() => document.getElementById('history').children.length > 0);
  assert.match(await page.textContent('#history'), /SDK e2e client/);
  assert.match(await page.textContent('#calls'), /items_highlight/);
  await client.close();
  await page.close();
});

test('the waiting page’s link opens the app with the code filled in, never approved by itself', async () => {
  const page = await openDemo('#tabrelay-connect=ABCDE-12345');
  assert.equal(await page.inputValue('#code'), 'ABCDE-12345');
  assert.doesNotMatch(await page.textContent('#approve-result'), /Connected/);
  await page.click('#approve');
  await page.waitForFunction(() => /not waiting for approval/.test(document.getElementById('approve-result').textContent), null, { timeout: 10_000 });
  await page.close();
});
