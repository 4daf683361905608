// What the demo-page tests share: a headless Chromium, the demo page opened and paired, and
// the official SDK client connected through it, the person typing the connect code and
// pressing Approve in the page.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { RELAY, APP_ORIGIN, HeadlessProvider } from './harness.mjs';

const CHROMIUM = process.env.TABRELAY_CHROMIUM || '/usr/bin/chromium';

/** Chromium, headless, with a fresh empty profile of Playwright's own. */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A new page of the demo app (seed 11; `query` adds to its query), once it says it is
 * connected to the relay (the one scripts/relay-up.sh configured it with).
 */
export async function openDemo(browser, hash = '', query = '') {
  const page = await browser.newPage();
  await page.goto(`${APP_ORIGIN}/demo/?seed=11${query}${hash}`);
  await page.waitForFunction(() => document.getElementById('status').textContent.includes('connected'), null, { timeout: 15_000 });
  return page;
}

/** The person's approval in `page`: types the code, presses Approve, waits for the answer. */
export function approveIn(page) {
  return async (code) => {
    await page.fill('#code', code);
    await page.click('#approve');
    await page.waitForFunction(() => /Connected to/.test(document.getElementById('approve-result').textContent), null, { timeout: 10_000 });
  };
}

/** The SDK client connected through `page` (`provider` approves in it by default). */
export async function connectThroughPage(page, name, provider = new HeadlessProvider(null, approveIn(page))) {
  const make = () => new StreamableHTTPClientTransport(new URL(`${RELAY}/`), { authProvider: provider });
  const client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(make());
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  assert.ok(provider.authorizationCode, 'the waiting page redirected with a code');
  await make().finishAuth(provider.authorizationCode);
  await client.connect(make());
  return { client, provider };
}
