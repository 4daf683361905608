// Agents' calls moving to another tab, in two tabs of the demo app in one headless Chromium
// profile (one pairing) with the official SDK client as the agent: the relay sends calls to the
// tab opened or focused last, so a second tab (the waiting page's link opens one) takes them;
// the first tab says so, with Take the calls back here, and pressing it brings them back (the
// other tab then says so).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, SHOW_MS } from './demo_harness.mjs';
import { CALLS_ELSEWHERE } from '../../tab/agents-panel.js';

const chromium = fileChromium();

const history = (page) => page.textContent('#history');
const says = (page) => page.locator('#calls-elsewhere');

test('a tab that loses agents’ calls says so, and takes them back on the person’s press', async () => {
  const context = await (await chromium()).newContext();
  // Each a new tab of the demo in the same profile (one pairing); a context opens pages too.
  const open = () => openDemo(context);
  const first = await open();
  const { client } = await connectThroughPage(first, 'moved-e2e');
  const setScore = (id) => client.callTool({ name: 'item_set_value', arguments: { id, column: 'score', value: 100 + id } });
  assert.equal((await setScore(1)).isError, false);
  assert.match(await history(first), /Set score of item 1/);
  assert.equal(await says(first).isHidden(), true);

  // A second tab of the pairing takes the calls: the first says so; the second does not.
  const second = await open();
  await says(first).waitFor({ state: 'visible', timeout: SHOW_MS });
  assert.equal((await first.textContent('#calls-elsewhere-text')).trim(), CALLS_ELSEWHERE);
  assert.equal(await says(second).isHidden(), true);
  assert.equal((await setScore(2)).isError, false);
  assert.match(await history(second), /Set score of item 2/, 'the call went to the second tab');
  assert.doesNotMatch(await history(first), /Set score of item 2/);

  // Take the calls back here: they come to the first tab, and the second says so.
  await first.locator('#take-calls').click();
  await says(second).waitFor({ state: 'visible', timeout: SHOW_MS });
  assert.equal(await says(first).isHidden(), true);
  assert.match(await first.textContent('#calls-back'), /come to this tab again/);
  await waitFor(async () => {
    const r = await setScore(3);
    return !r.isError && /Set score of item 3/.test(await history(first));
  }, SHOW_MS);
  assert.doesNotMatch(await history(second), /Set score of item 3/);
  await client.close();
  await context.close();
});
