// The chat bar in the demo page, in headless Chromium, against a played Anthropic API: the
// person types a request; the played model's answer streams in; it calls items_delete, which
// asks; the card shows naming the model and "this chat"; Allow; the call runs in the app and its
// result goes back to the played model, whose answer streams; the turn's footer says what left
// the browser; the activity line's Undo turn takes the chat's turn back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './harness.mjs';
import { fileChromium, cardSays, choose, activityLines, SHOW_MS } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows, turnEnded } from './chat_harness.mjs';

const chromium = fileChromium();
const played = filePlayed();

test('a typed request: the card asks, Allow runs the call, its result goes back, the answer streams; Undo turn', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  const itemsBefore = await page.textContent('#history');
  p.anthropic.script(
    { answer: [{ text: 'I will delete item 4 for you.' }, { tool: { name: 'items_delete', input: { ids: [4] } } }], delayMs: 5 },
    (request) => ({ answer: [{ text: request.body.messages.at(-1).content[0].is_error ? 'It failed.' : 'Item 4 is deleted; Undo turn brings it back.' }], delayMs: 5 }),
  );
  await say(page, 'Delete item 4');
  await chatShows(page, 'Delete item 4', 'person');
  await chatShows(page, 'I will delete item 4 for you.');
  const what = await cardSays(page, /delete/i);
  assert.match(what, /Claude Played 1/);
  assert.match(await page.locator('#confirm [part=who]').textContent(), /Claude Played 1 \(your chat in this tab\)/);
  assert.match(await page.locator('#confirm [part=connection]').textContent(), /this chat/);
  await page.locator('#chat [part~=tool-line][data-state=asking]').waitFor({ timeout: SHOW_MS });
  await choose(page, 'once');
  await chatShows(page, 'Item 4 is deleted; Undo turn brings it back.');
  await turnEnded(page, 1);
  const sent = p.anthropic.calls().at(-1).body.messages.at(-1).content[0];
  assert.equal(sent.type, 'tool_result');
  assert.equal(sent.is_error, false);
  assert.match(sent.content, /^<tabrelay-data>.*"deleted"/);
  assert.match(await page.locator('#chat [part~=tool-line]').textContent(), /^items_delete \(ids: 4\): done in \d+ ms$/);
  assert.match(await page.locator('#chat [part~=footer]').textContent(), /^Sent to Anthropic \(127\.0\.0\.1:\d+\): the conversation so far, 1 tool result, the tools’ descriptions and the instructions, in 2 calls\.$/);
  assert.notEqual(await page.textContent('#history'), itemsBefore);

  const undo = page.locator('#activity [part~=done] [part=undo]');
  await undo.waitFor({ timeout: SHOW_MS });
  assert.match((await activityLines(page)).join('\n'), /Claude Played 1/);
  await undo.click();
  await waitFor(async () => /Undid an agent's turn/.test(await page.textContent('#history')), SHOW_MS);
  await context.close();
});
