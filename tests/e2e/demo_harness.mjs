// What the demo-page tests share: a headless Chromium, the demo page opened and paired, and
// the official SDK client connected through it, the person typing the connect code and
// pressing Approve in the page.
import assert from 'node:assert/strict';
import { after } from 'node:test';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { RELAY, APP_ORIGIN, HeadlessProvider, dataOf } from './harness.mjs';

const CHROMIUM = process.env.TABRELAY_CHROMIUM || '/usr/bin/chromium';

/**
 * Chromium, headless, with a fresh empty profile of Playwright's own; `extraArgs` adds switches
 * (`['--enable-features=WebMCP']`); `launch` adds to Playwright's launch options.
 */
export function launchChromium(extraArgs = [], launch = {}) {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
    ...launch,
  });
}

/**
 * The file's Chromium (with `extraArgs`), launched when first asked for and closed once the
 * file's tests are done: `const chromium = fileChromium();` at the top of a test file, then
 * `await chromium()`.
 */
export function fileChromium(extraArgs = []) {
  let launched = null;
  after(async () => {
    const browser = await launched?.catch(() => null);
    await browser?.close();
  });
  return () => (launched ||= launchChromium(extraArgs));
}

/**
 * One page and one SDK client shared by a file's tests, made by `open` (resolving to
 * `{ page, client, … }`) when the first test asks for them and closed once the file's tests
 * are done: `const session = fileSession(async () => …);` at the top of a test file, then
 * `const { page, client } = await session();` in each test (each can still run alone).
 */
export function fileSession(open) {
  let shared = null;
  after(async () => {
    const opened = await shared?.catch(() => null);
    await opened?.client.close().catch(() => {});
    await opened?.page.close().catch(() => {});
  });
  return () => (shared ||= open());
}

/** Waits until the demo page says it is connected to the relay. */
export function connected(page) {
  return page.locator('tabrelay-agents [part=status]', { hasText: /^this tab is connected/ }).waitFor({ timeout: 15_000 });
}

/**
 * A new page of the demo app (seed 11; `query` adds to its query), once it says it is
 * connected to the relay (the one scripts/relay-up.sh configured it with).
 */
export async function openDemo(browser, hash = '', query = '') {
  const page = await browser.newPage();
  await page.goto(`${APP_ORIGIN}/demo/?seed=11${query}${hash}`);
  await connected(page);
  return page;
}

/** Reloads the demo page and waits until it is connected again. */
export async function reloadDemo(page) {
  await page.reload();
  await connected(page);
}

/** The person's approval in `page`: types the code, presses Approve, waits for the answer. */
export function approveIn(page) {
  return async (code) => {
    await page.fill('#code', code);
    await page.click('#approve');
    await page.locator('#approve-result', { hasText: /Connected to/ }).waitFor({ timeout: 10_000 });
  };
}

/**
 * A demo page of `browser` and the SDK client calling itself `name` that the person approved
 * in it (`provider(page)`: its OAuth provider, approving in the page by default).
 */
export async function demoWithAgent(browser, name, provider) {
  const page = await openDemo(browser);
  const { client } = await connectThroughPage(page, name, provider?.(page));
  return { page, client };
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

/** How long a card or a line may take to show or go: well under the relay's wait for a call. */
export const SHOW_MS = 4_000;

/** Waits until the page's confirm card shows a question matching `pattern`; returns its text. */
export async function cardSays(page, pattern) {
  const what = page.locator('#confirm [part=what]');
  await what.filter({ hasText: pattern }).waitFor({ state: 'visible', timeout: SHOW_MS });
  return what.textContent();
}

/** Presses a choice of the card ('once', 'connection', 'always' or 'deny') once it is armed. */
export async function choose(page, choice) {
  const button = page.locator(`#confirm [part=${choice}]`);
  await button.waitFor({ state: 'visible', timeout: SHOW_MS });
  await page.waitForFunction((c) => !document.querySelector('#confirm').shadowRoot.querySelector(`[part=${c}]`).disabled, choice, { timeout: SHOW_MS });
  await button.click();
}

/** The element with the focus, inside shadow roots too (the Agents panel's): its id, else its part. */
export function focusedIn(page) {
  return page.evaluate(() => {
    let at = document.activeElement;
    while (at?.shadowRoot?.activeElement) at = at.shadowRoot.activeElement;
    return at?.id || at?.getAttribute('part') || at?.tagName.toLowerCase() || null;
  });
}

/** Waits until no card shows. */
export async function cardGone(page) {
  await page.waitForFunction(() => document.querySelector('#confirm').hidden, null, { timeout: SHOW_MS });
}

/** The activity lines' texts, as the person reads them. */
export function activityLines(page) {
  return page.locator('#activity [part~=line] [part=text]').allTextContents();
}

/** A tool result's text. */
export function textOf(result) {
  return result.content.map((c) => c.text || '').join('\n');
}

/** An OAuth provider approving in `page` whose client calls itself `name`. */
export function namedProvider(page, name) {
  const provider = new HeadlessProvider(null, approveIn(page));
  Object.defineProperty(provider, 'clientMetadata', { get: () => ({ ...HeadlessProvider.prototype.clientMetadata, client_name: name }) });
  return provider;
}

/**
 * A heavy comparison `client` called (100 million permutations: tens of seconds), which the
 * person allowed in `page` and the page shows running; resolves to the call (its promise).
 */
export async function heavyComparisonRunning(page, client) {
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  const args = { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 };
  const running = client.callTool({ name: 'groups_compare', arguments: args });
  await cardSays(page, /asks to compare score/);
  await choose(page, 'once');
  await page.locator('#activity [part=text]', { hasText: 'running Compare two groups' }).waitFor({ timeout: SHOW_MS });
  return { running };
}

/**
 * The page's virtual authenticator, a platform one. `answers({verified, signs})`: whether its
 * answers say the user was verified (else the UV flag is zero, as from an authenticator that
 * only took a tap) and carry a signature that holds. (An authenticator that cannot verify its
 * user leaves the browser's prompt waiting until the person cancels it: nothing to read soon.)
 */
export async function addAuthenticator(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const options = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true };
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options });
  return {
    answers: ({ verified = true, signs = true } = {}) => cdp.send('WebAuthn.setResponseOverrideBits', { authenticatorId, isBadUV: !verified, isBogusSignature: !signs }),
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials,
  };
}
