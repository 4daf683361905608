// The demo app in a real headless Chromium is the person's tab: it pairs with the relay, the
// person types the connect code shown on the waiting page and approves it, and the official
// SDK client's calls are answered by the page (its dataset, its picture, its history).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage } from './demo_harness.mjs';

const chromium = fileChromium();

test('the person approves the code in the demo page and the agent’s calls are answered by it', async () => {
  const page = await openDemo(await chromium());
  const datasetName = await page.textContent('#dataset-name');
  // The person types the code the waiting page shows and presses Approve.
  const { client } = await connectThroughPage(page, 'demo-e2e');
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

test('the waiting page’s link opens the app offering it, never described or approved by itself', async () => {
  const page = await openDemo(await chromium(), '#tabrelay-connect=ABCDEFGH0123456789');
  assert.equal(await page.inputValue('#code'), '', 'the link carries no code to fill in');
  assert.ok(await page.isVisible('#show-link'));
  assert.doesNotMatch(await page.textContent('#approve-result'), /Connected/);
  // The relay knows no such link: the page says so once the person asks.
  await page.click('#show-link');
  await page.locator('#approve-result', { hasText: /not waiting for approval/ }).waitFor({ timeout: 10_000 });
  assert.ok((await page.isDisabled('#approve')) && (await page.isDisabled('#deny')), 'nothing to approve or deny');
  await page.close();
});

test('the page shows the connector address to paste, and Copy puts it on the clipboard', async () => {
  const page = await openDemo(await chromium());
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: APP_ORIGIN });
  assert.equal(await page.textContent('#connector-address'), `${RELAY}/`);
  await page.getByRole('button', { name: 'Copy the connector address' }).click();
  await page.locator('#copy-result', { hasText: /^Copied\.$/ }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${RELAY}/`);
  await page.close();
});
