// The chat bar's failures, in the demo page in headless Chromium against played APIs: a 429 is
// waited out (the provider's retry-after, the wait said with Stop offered) and the answer comes;
// a refused key is said in one sentence where the key is typed and when a message is sent; a
// provider that cannot be reached is said in one sentence and the chat stays usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, SHOW_MS } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows } from './chat_harness.mjs';
import { FAILURES } from '../../tab/chat-provider.js';

const chromium = fileChromium();
const played = filePlayed();

test('a 429 is waited out: the wait is said with Stop, then the answer streams', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  p.anthropic.script({ status: 429, retryAfter: '2' }, { answer: [{ text: 'After the wait.' }] });
  await say(page, 'Hello');
  await page.locator('#chat [part=waiting]', { hasText: 'The provider is limiting how often this key may call: trying again in 2 s.' }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.locator('#chat [part=stop]').isVisible(), true, 'Stop is offered during the wait');
  await chatShows(page, 'After the wait.');
  assert.equal(await page.locator('#chat [part=waiting]').textContent(), '');
  await context.close();
});

test('a refused key is said in one sentence, where it is typed and when a message is sent', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p, { key: 'sk-refused-by-the-provider' });
  await page.locator('#chat [part=models-said]', { hasText: FAILURES.key }).waitFor({ timeout: SHOW_MS });
  await page.evaluate(() => {
    // The model chosen before (another key's): the call is made and refused.
    localStorage.setItem('tabrelay:chat:tabrelay-demo', JSON.stringify({ provider: 'anthropic', model: 'claude-played-1', budget: 0 }));
  });
  await page.reload();
  await say(page, 'Hello');
  await chatShows(page, FAILURES.key, 'note');
  await context.close();
});

test('a provider that cannot be reached is said in one sentence; the chat stays usable', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  // The played provider goes away after the models were listed.
  const gone = p.anthropic;
  await page.route(`${gone.origin}/v1/messages`, (route) => route.abort('connectionrefused'));
  await say(page, 'Hello');
  await chatShows(page, FAILURES.network, 'note');
  await page.unroute(`${gone.origin}/v1/messages`);
  gone.script({ answer: [{ text: 'Back again.' }] });
  await say(page, 'Hello again');
  await chatShows(page, 'Back again.');
  await context.close();
});
