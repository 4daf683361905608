// The demo page in a real headless Chromium asks the person before a destructive tool runs:
// a card with one sentence (who, what, why), Allow once runs the tool, Deny gives the agent a
// tool error, waiting cards queue oldest first, and a call the agent cancels loses its card,
// never runs, and is not reported done.
// Each test can run alone (--test-name-pattern): they share one page and one SDK client,
// made by the first test that needs them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, sseEvents } from './harness.mjs';
import { fileChromium, fileSession, openDemo, connectThroughPage, cardSays, cardGone, choose, textOf, SHOW_MS } from './demo_harness.mjs';

/** A cancelled call's request must end this soon, long before the relay's wait would end it. */
const SETTLE_MS = 3_000;

const chromium = fileChromium();
/** The demo page, paired and connected, and the SDK client the person approved in it. */
const session = fileSession(async () => {
  const page = await openDemo(await chromium());
  const { client, provider } = await connectThroughPage(page, 'demo-confirm-e2e');
  return { page, client, provider };
});

test('a destructive call waits for the person’s Allow, then runs', async () => {
  const { page, client } = await session();
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [1, 2, 3] } });
  const sentence = await cardSays(page, /asks to delete 3 items \(ids 1, 2, 3\)\. Allow\?$/);
  assert.match(sentence, /^SDK e2e client asks/, 'the agent is named');
  assert.equal(await page.getAttribute('#confirm [part=card]', 'role'), 'alertdialog');
  assert.match(await page.textContent('#confirm [part=who]'), /returns to 127\.0\.0\.1.*name not verified/, 'its connection, not verified');
  assert.match(await page.textContent('#confirm [part=why]'), /it deletes items/, 'why it asks');
  assert.match(await page.textContent('#confirm [part=args]'), /Ids: 1, 2 and 3/, 'the arguments, in words');
  assert.doesNotMatch(await page.textContent('#history'), /Deleted 3 items/, 'nothing runs before the answer');
  await choose(page, 'once');
  const result = await call;
  assert.equal(result.isError, false, textOf(result));
  await cardGone(page);
  assert.match(await page.textContent('#history'), /SDK e2e client: Deleted 3 items \(1, 2 and 3\)/);
  assert.match(await page.textContent('#calls'), /items_delete · ok/);
});

test('Deny gives the agent a tool error saying the person declined, and nothing changes', async () => {
  const { page, client } = await session();
  const call = client.callTool({ name: 'items_delete', arguments: { ids: [4] } });
  await cardSays(page, /asks to delete item 4\. Allow\?$/);
  await choose(page, 'deny');
  const result = await call;
  assert.equal(result.isError, true);
  assert.match(textOf(result), /declined/);
  await cardGone(page);
  assert.doesNotMatch(await page.textContent('#history'), /Deleted item 4/);
  assert.match(await page.textContent('#calls'), /items_delete · declined/);
  const still = await client.callTool({ name: 'items_values', arguments: { ids: [4] } });
  assert.equal(still.isError, false, textOf(still));
});

test('cards come one at a time, oldest first', async () => {
  const { page, client } = await session();
  const first = client.callTool({ name: 'items_delete', arguments: { ids: [7] } });
  await cardSays(page, /delete item 7\./);
  const second = client.callTool({ name: 'items_delete', arguments: { ids: [8] } });
  // One turn's calls run one after another: the second is asked once the first is answered.
  // The page shows nothing when a call arrives behind a card, so the card is read once the
  // second call stands queued in its turn's line (the presence the card shows).
  await page.waitForFunction(() => document.getElementById('confirm').presence.lines().some((l) => l.waiting === 2), null, { timeout: SHOW_MS });
  assert.match(await page.textContent('#confirm [part=what]'), /delete item 7\./, 'the oldest stays shown');
  assert.equal(await page.textContent('#confirm [part=more]'), '', 'the second is not asked while the first waits');
  await choose(page, 'deny');
  assert.equal((await first).isError, true);
  await cardSays(page, /delete item 8\./);
  assert.equal(await page.textContent('#confirm [part=more]'), '');
  await choose(page, 'deny');
  assert.equal((await second).isError, true);
  await cardGone(page);
});

test('a call the agent cancels loses its card, never runs, and its request ends', async () => {
  const { page, client, provider } = await session();
  const token = provider.tokens().access_token;
  const post = (message) =>
    fetch(`${RELAY}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify(message),
    });
  const call = post({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'items_delete', arguments: { ids: [5, 6] } } }).then(
    async (r) => ({ status: r.status, text: await r.text() }),
  );
  await cardSays(page, /asks to delete 2 items \(ids 5, 6\)\. Allow\?$/);
  const cancelledAt = Date.now();
  const cancel = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'test' } });
  assert.ok(cancel.status >= 200 && cancel.status < 300, `the notification was accepted (${cancel.status} ${await cancel.text()})`);
  await cardGone(page);
  await page.waitForFunction(() => /cancelled/.test(document.getElementById('calls').textContent), null, { timeout: SHOW_MS });

  const settled = await Promise.race([call, new Promise((r) => setTimeout(() => r(null), SETTLE_MS))]);
  assert.ok(settled, `the cancelled call’s request ended within ${SETTLE_MS} ms`);
  assert.ok(Date.now() - cancelledAt < SETTLE_MS + 500);
  if (settled.status === 200 && settled.text.trim()) {
    // A response may still come (or none: 202); it must not say the step was done. The body is
    // JSON or a stream of events; every message in it is read.
    const messages = settled.text.trimStart().startsWith('{') ? [JSON.parse(settled.text)] : sseEvents(settled.text);
    const answer = messages.find((m) => m.id === 77);
    assert.ok(answer, `a body answers the call: ${settled.text.slice(0, 300)}`);
    assert.ok(answer.error || answer.result?.isError === true, `no success for a cancelled call: ${settled.text.slice(0, 300)}`);
  }

  assert.doesNotMatch(await page.textContent('#history'), /Deleted 2 items \(5 and 6\)/);
  const still = await client.callTool({ name: 'items_values', arguments: { ids: [5, 6] } });
  assert.equal(still.isError, false, `items 5 and 6 are still there: ${textOf(still)}`);
});
