// The chat bar and a remote agent in the same tab at the same time, in the demo page in headless
// Chromium: the chat's played model (a played Anthropic API) and the official SDK client through
// the relay each change a value while the other's turn is under way; each has its own activity
// line; Undo turn of the chat's turn undoes only its step; with an agent in the browser (WebMCP)
// too, the three ask at once, each on its own card and line. The chat's provider down leaves the
// remote agent working; the relay down (the page's relay address closed) leaves the chat working,
// and the relay's status says so: agent apps cannot reach the tab until it is back, a chat or an
// agent in this browser still works, and it tries again by itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf, waitFor } from './harness.mjs';
import { fileChromium, connectThroughPage, namedProvider, activityLines, cardSays, choose, textOf, SHOW_MS } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows, turnEnded, PLAYED_KEY } from './chat_harness.mjs';
import { FAILURES } from '../../tab/chat-provider.js';
import { playProvider } from '../played/providers.mjs';

const chromium = fileChromium();
const withWebMcp = fileChromium(['--enable-features=WebMCP']);
const played = filePlayed();

test('the chat and a remote agent at once: their own lines; Undo turn of the chat’s turn undoes only its step', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  const { client } = await connectThroughPage(page, 'remote-e2e');
  const score = async (id) => dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [id] } })).items[0].score;
  const before2 = await score(2);
  let release;
  const held = new Promise((r) => (release = r));
  p.anthropic.script({ answer: [{ tool: { name: 'item_set_value', input: { id: 2, column: 'score', value: 777 } } }] }, { answer: [{ text: 'Item 2 now scores 777.' }], hold: held, holdAfter: 3 });
  await say(page, 'Set item 2’s score to 777');
  await p.anthropic.until((r) => r.filter((x) => x.method === 'POST').length >= 2 && p.anthropic.pending() === 0);
  // While the chat's turn is under way, the remote agent acts.
  await client.callTool({ name: 'item_set_value', arguments: { id: 3, column: 'score', value: 888 } });
  release();
  await chatShows(page, 'Item 2 now scores 777.');
  await turnEnded(page, 1);
  assert.equal(await score(2), 777);
  assert.equal(await score(3), 888);
  const lines = (await activityLines(page)).join('\n');
  assert.match(lines, /Claude Played 1/);
  assert.match(lines, /remote-e2e|SDK/);

  const chatLine = page.locator('#activity [part~=line]', { hasText: 'Claude Played 1' });
  await chatLine.locator('[part=undo]').click();
  await waitFor(async () => (await score(2)) === before2, SHOW_MS);
  assert.equal(await score(3), 888, 'the remote agent’s step stays');

  // The chat's provider down: the chat says so in one sentence; the remote agent still works.
  await page.route(`${p.anthropic.origin}/**`, (route) => route.abort('connectionrefused'));
  await say(page, 'Hello');
  await chatShows(page, FAILURES.network, 'note');
  assert.equal(await score(3), 888);
  await client.close();
  await context.close();
});

test('the relay down: the chat still works in the tab', async () => {
  const p = await played();
  const browser = await chromium();
  const context = await browser.newContext();
  const closed = await playProvider('openai');
  const deadRelay = closed.origin;
  await closed.close();
  await context.route('**/demo/config.js', (route) => route.fulfill({ contentType: 'text/javascript', body: `export const RELAY = ${JSON.stringify(deadRelay)};\nexport const CHAT_ORIGINS = ${JSON.stringify({ anthropic: p.anthropic.origin, openai: p.openai.origin })};\n` }));
  const page = await context.newPage();
  await page.goto(`${process.env.TABRELAY_APP_ORIGIN}/demo/?seed=11`);
  await page.locator('#chat [part=settings] summary').click();
  await page.locator('#chat [part=key]').fill(PLAYED_KEY);
  await page.locator('#chat [part=save-key]').click();
  await page.waitForFunction(() => document.querySelector('#chat').shadowRoot.querySelector('[part=model]').options.length > 0, null, { timeout: SHOW_MS });
  assert.doesNotMatch(await page.locator('tabrelay-agents [part=status]').textContent(), /^this tab is connected/);
  // The relay's status says in one line what it means for the person: who cannot reach the tab,
  // what still works, and that it tries again by itself.
  const down = await page.waitForFunction(() => {
    const status = document.querySelector('tabrelay-agents').shadowRoot.querySelector('[part=status]');
    return status.dataset.state === 'waiting' && status.textContent;
  }, null, { timeout: SHOW_MS });
  assert.match(await down.jsonValue(), /^out of reach: agent apps such as Claude or ChatGPT cannot reach this tab until it is back \(trying again by itself in \d+ s\); a chat in this app or an agent in this browser still works$/);
  p.anthropic.script({ answer: [{ tool: { name: 'items_highlight', input: { ids: [1, 2] } } }] }, { answer: [{ text: 'Highlighted two items.' }] });
  await say(page, 'Highlight items 1 and 2');
  await chatShows(page, 'Highlighted two items.');
  assert.match(await page.locator('#chat [part~=tool-line]').textContent(), /^items_highlight \(ids: 1, 2\): done in/);
  assert.match(await page.textContent('#history'), /highlight/i);
  await context.close();
});

test('the chat, a remote agent and an agent in this browser at once: each its own card and line', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await withWebMcp(), p);
  const { client } = await connectThroughPage(page, 'remote-e2e', namedProvider(page, 'remote-e2e'));
  p.anthropic.script({ answer: [{ tool: { name: 'items_delete', input: { ids: [11] } } }] }, { answer: [{ text: 'Deleted item 11.' }] });
  await say(page, 'Delete item 11');
  await cardSays(page, /asks to delete item 11/);
  const remote = client.callTool({ name: 'items_delete', arguments: { ids: [12] } });
  await page.evaluate(() => {
    window.inBrowserCall = (async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'items_delete');
      return document.modelContext.executeTool(tool, { ids: [13] });
    })().then((text) => ({ text }), (e) => ({ error: e.name }));
  });
  await waitFor(async () => {
    const lines = (await activityLines(page)).join('\n');
    return /Claude Played 1/.test(lines) && /remote-e2e/.test(lines) && /an agent in this browser/.test(lines);
  }, SHOW_MS);
  // The cards come one at a time, oldest first: each names its own agent.
  const asked = [];
  for (let i = 0; i < 3; i++) {
    const what = await cardSays(page, /asks to delete item 1[123]/);
    asked.push(what);
    await choose(page, 'once');
    // The next card is another question (or none once all three are answered).
    await page.waitForFunction((before) => {
      const card = document.querySelector('#confirm');
      return card.hidden || card.shadowRoot.querySelector('[part=what]').textContent !== before;
    }, what, { timeout: SHOW_MS });
  }
  assert.deepEqual(asked.map((w) => w.replace(/ asks to delete item (\d+).*/, ' $1')).sort(), ['Claude Played 1 11', 'an agent in this browser 13', 'remote-e2e 12']);
  await chatShows(page, 'Deleted item 11.');
  const done = await remote;
  assert.equal(done.isError, false, textOf(done));
  assert.ok((await page.evaluate(() => window.inBrowserCall)).text);
  await client.close();
  await context.close();
});
