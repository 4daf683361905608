// The demo page in a real headless Chromium lists the agent apps connected to the tab, and the
// person's press of Forget ends one at once: the official SDK client's next call is refused,
// and it is not let back in without the person approving a new code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { HeadlessProvider } from './harness.mjs';
import { fileChromium, openDemo, approveIn, connectThroughPage, focusedIn } from './demo_harness.mjs';

const chromium = fileChromium();

/**
 * Approves through the page while `approving`; after that only records that it was asked. Drops
 * its tokens when the SDK says they are refused, as a real client does, so the SDK goes on to
 * ask for a new authorization rather than retrying the dead refresh token.
 */
class OnceProvider extends HeadlessProvider {
  constructor(approve) {
    super(null, approve);
    this.approving = true;
    this.askedAgain = [];
  }
  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all') this.info = undefined;
  }
  async redirectToAuthorization(url) {
    if (!this.approving) {
      this.askedAgain.push(url);
      return;
    }
    await super.redirectToAuthorization(url);
  }
}

test('the person sees the SDK client among the connections and forgets it; its next call is refused', async () => {
  const page = await openDemo(await chromium());
  // A fresh browser profile: a fresh pairing with no connections yet.
  await page.locator('#connections [part=empty]', { hasText: 'No agent app' }).waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('#connections [part=item]').count(), 0);

  const { client, provider } = await connectThroughPage(page, 'demo-connections-e2e', new OnceProvider(approveIn(page)));
  provider.approving = false;

  await page.click('#connections [part=refresh]');
  const items = page.locator('#connections [part=item]');
  await items.filter({ hasText: 'SDK e2e client' }).waitFor({ timeout: 10_000 });
  assert.equal(await items.count(), 1);
  const shown = await items.first().textContent();
  assert.match(shown, /SDK e2e client/);
  assert.match(shown, /not verified/);
  assert.match(shown, /127\.0\.0\.1/);
  // Where it was made is said only when the relay knows it (wrangler dev does not say).
  assert.doesNotMatch(shown, /from a place|not known/);
  assert.match(shown, /connected [^·]+ · last used/);
  assert.ok(await page.isHidden('#connections [part=empty]'));
  assert.ok(await items.first().locator('[part=forget]').getAttribute('data-id'));

  const described = await client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(described.isError, false);

  // Forget asks first (it cannot be undone); the question's Forget forgets.
  await page.click('#connections [part=forget]');
  assert.match(await page.textContent('#connections [part=forget-ask]'), /^Forget SDK e2e client\? It can no longer act in this tab; this cannot be undone\./);
  await page.click('#connections [part=forget-yes]');
  await page.locator('#connections [part=result]', { hasText: 'Forgot SDK e2e client: it can no longer act in this tab.' }).waitFor({ timeout: 10_000 });
  assert.equal(await items.count(), 0);
  assert.ok(await page.isVisible('#connections [part=empty]'));
  assert.equal(await focusedIn(page), 'refresh', 'the focus is not lost with the button');

  const approvals = provider.pages.length;
  // The relay answers 401, the refresh token is refused too, and the SDK asks for a new
  // authorization, which nobody gives: the call fails.
  await assert.rejects(client.callTool({ name: 'dataset_describe', arguments: {} }), UnauthorizedError);
  assert.equal(provider.askedAgain.length, 1, 'the SDK needed a new authorization');
  assert.equal(provider.pages.length, approvals, 'no new code was approved');

  await client.close();
  await page.close();
});
