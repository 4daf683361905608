// A mode's result line is never stale, in the demo page in headless Chromium: choosing a mode
// says what it did; once a kind's rule is changed after it (the mode reads Custom), the line
// that spoke of the mode goes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('the mode’s result goes once a kind is changed after it', async () => {
  const page = await openDemo(await chromium());
  const result = page.locator('#permissions [part=mode-result]');
  await page.locator('#permissions [part=mode]').selectOption('undoable');
  await result.filter({ hasText: /^Mode “Allow everything undoable”: every kind as it says; there was no grant to take back\.$/ }).waitFor({ timeout: SHOW_MS });
  await page.locator('#permissions select[data-kind=heavy]').selectOption('ask');
  await page.locator('#permissions [part=mode] option[value=custom]:checked').waitFor({ state: 'attached', timeout: SHOW_MS });
  await page.waitForFunction(() => document.querySelector('#agents').shadowRoot.querySelector('#permissions').shadowRoot.querySelector('[part=mode-result]').textContent === '', null, { timeout: SHOW_MS });
  // Chosen again, the mode says so again.
  await page.locator('#permissions [part=mode]').selectOption('careful');
  await result.filter({ hasText: /^Mode “Ask before heavy or irreversible”/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.locator('#permissions [part=mode]').inputValue(), 'careful');
});
