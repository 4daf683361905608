// A turn's calls run one after another in the tab; one queued behind a card past the relay's
// wait is given up (the relay cancels it in the tab), so it never runs later, when the person
// answers the card ahead of it. The card's own call stays asked: it runs on Allow, and the agent
// was told the person is being asked. Demo page in headless Chromium, the official SDK client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CALL_WAIT_MS, waitFor } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, cardGone, textOf } from './demo_harness.mjs';

const chromium = fileChromium();

test('a call queued behind a card past the relay’s wait never runs', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'queued-e2e');
  const options = { timeout: CALL_WAIT_MS * 3 };
  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } }, undefined, options);
  await cardSays(page, /delete item 1\./);
  const queued = client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 77 } }, undefined, options);
  const [first, second] = await Promise.all([asked, queued]);
  assert.match(textOf(first), /^The person is being asked about this step in their tab/, 'the card’s call stays asked');
  assert.equal(second.isError, true, `the queued call was given up: ${textOf(second)}`);

  await choose(page, 'once');
  await cardGone(page);
  await waitFor(async () => /Deleted item 1/.test(await page.textContent('#history')), 4000);
  // The tab runs calls one after another: a call sent now queues behind anything still queued,
  // so once it has run, the given-up call would have run before it (no fixed wait).
  const later = await client.callTool({ name: 'item_set_value', arguments: { id: 3, column: 'score', value: 78 } }, undefined, options);
  assert.equal(later.isError, false, textOf(later));
  const history = await waitFor(async () => {
    const text = await page.textContent('#history');
    return /Set score of item 3/.test(text) && text;
  }, 4000);
  assert.doesNotMatch(history, /Set score of item 2/, 'the given-up call never ran');
  await client.close();
});
