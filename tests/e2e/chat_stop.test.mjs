// The chat bar's Deny and Stop, in the demo page in headless Chromium against a played
// Anthropic API: Deny on the card sends the card's sentence back to the model and nothing is
// deleted; Stop mid-stream aborts the provider's stream (the played API sees the request end),
// keeps what was shown as a note and lets the next message go on; Stop while a call runs stops
// it the way the activity line's Stop does, and no model call follows; then, with no device to
// confirm it is the person (the demo's device=required), a message typed to the stopped chat
// sends nothing, stays in the field, and the chat says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, cardSays, choose, cardGone, SHOW_MS } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows, turnEnded } from './chat_harness.mjs';

const chromium = fileChromium();
const played = filePlayed();
/** A tool result's data, as the played model reads it. */
const dataIn = (content) => JSON.parse(content.replace(/^<tabrelay-data>/, '').replace(/<\/tabrelay-data>[\s\S]*$/, ''));

test('Deny: the call does not run and the card’s sentence goes back to the model', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  const history = await page.textContent('#history');
  p.anthropic.script({ answer: [{ tool: { name: 'items_delete', input: { ids: [5] } } }] }, { answer: [{ text: 'Understood, nothing deleted.' }] });
  await say(page, 'Delete item 5');
  await cardSays(page, /delete/i);
  await choose(page, 'deny');
  await chatShows(page, 'Understood, nothing deleted.');
  const back = p.anthropic.calls().at(-1).body.messages.at(-1).content[0];
  assert.equal(back.is_error, true);
  assert.match(back.content, /declined/i);
  assert.match(await page.locator('#chat [part~=tool-line]').textContent(), /^items_delete \(ids: 5\): not run: /);
  assert.equal(await page.textContent('#history'), history, 'nothing was deleted');
  await context.close();
});

test('Stop mid-stream aborts the provider’s stream; the next message goes on', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  let release;
  p.anthropic.script({ answer: [{ text: 'The first words, and then a long rest' }], chunk: 5, holdAfter: 6, hold: new Promise((r) => (release = r)) });
  const before = p.anthropic.calls().length;
  await say(page, 'Tell me everything');
  await page.locator('#chat [part=live]', { hasText: 'The first words' }).waitFor({ timeout: SHOW_MS });
  await page.locator('#chat [part=stop]').focus();
  await page.keyboard.press('Enter');
  await chatShows(page, /You pressed Stop\. The answer so far: The first words/, 'note');
  await page.locator('#chat [part=stop]').waitFor({ state: 'hidden', timeout: SHOW_MS });
  assert.equal(await page.evaluate(() => document.querySelector('#chat').shadowRoot.activeElement?.getAttribute('part')), 'message', 'Stop gone, the focus is in the field, not the page');
  await p.anthropic.until(() => p.anthropic.calls()[before]?.ended);
  release();
  assert.equal(p.anthropic.calls()[before].aborted, true, 'the provider’s stream was aborted');
  assert.equal(await page.locator('#chat [part=live]').count(), 0, 'what streamed in gave way to the note');
  p.anthropic.script({ answer: [{ text: 'Here again.' }] });
  await say(page, 'Go on');
  await chatShows(page, 'Here again.');
  await context.close();
});

test('Stop while a call runs stops it, and no model call follows', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p);
  p.anthropic.script({ answer: [{ tool: { name: 'dataset_describe', input: {} } }] }, (request) => {
    const { groups } = dataIn(request.body.messages.at(-1).content[0].content);
    return { answer: [{ tool: { name: 'groups_compare', input: { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 } } }] };
  }, { answer: [{ text: 'never asked' }] });
  await say(page, 'Compare the first two groups thoroughly');
  await cardSays(page, /compare score/);
  await choose(page, 'once');
  await cardGone(page);
  await page.locator('#chat [part~=tool-line][data-state=running]').waitFor({ timeout: SHOW_MS });
  const calls = p.anthropic.calls().length;
  await page.locator('#chat [part=stop]').click();
  await chatShows(page, /^You pressed Stop\.$/, 'note');
  await turnEnded(page, 1);
  assert.match(await page.locator('#chat [part~=tool-line]').last().textContent(), /^groups_compare .*: not run: stopped by the person while it ran in/);
  assert.equal(p.anthropic.calls().length, calls, 'no model call after Stop');
  assert.equal(p.anthropic.pending(), 1);
  p.anthropic.clear();
  // The demo lets a device without a check go on: the next message goes, and leaves the field
  // as its turn starts (not once it ended).
  let release;
  p.anthropic.script({ answer: [{ text: 'Going on.' }], hold: new Promise((r) => (release = r)), holdAfter: 3 });
  await say(page, 'Go on');
  await chatShows(page, /^Go on$/, 'person');
  await p.anthropic.until(() => p.anthropic.calls().length === calls + 1);
  assert.equal(await page.locator('#chat [part=message]').inputValue(), '', 'the message left the field as its turn started');
  release();
  await chatShows(page, 'Going on.');
  await context.close();
});

test('a stopped chat goes on only once the device confirms it: a typed message without one stays unsent', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p, { query: '&device=required' });
  p.anthropic.script({ answer: [{ tool: { name: 'dataset_describe', input: {} } }] }, (request) => {
    const { groups } = dataIn(request.body.messages.at(-1).content[0].content);
    return { answer: [{ tool: { name: 'groups_compare', input: { column: 'score', groups: [groups[0].name, groups[1].name], permutations: 100_000_000 } } }] };
  }, { answer: [{ text: 'never asked' }] });
  await say(page, 'Compare the first two groups thoroughly');
  await cardSays(page, /compare score/);
  await choose(page, 'once');
  await cardGone(page);
  await page.locator('#chat [part~=tool-line][data-state=running]').waitFor({ timeout: SHOW_MS });
  await page.locator('#chat [part=stop]').click();
  await turnEnded(page, 1);
  const calls = p.anthropic.calls().length;
  await say(page, 'Go on and compare them all');
  await chatShows(page, /^Your chat was stopped, and goes on only once your device confirms it is you/, 'note');
  assert.equal(await page.locator('#chat [part=message]').inputValue(), 'Go on and compare them all', 'the message stays in the field');
  assert.equal(p.anthropic.calls().length, calls, 'no model call');
  assert.equal(await page.locator('#chat [part=log] [part~=person]').count(), 1, 'the message is not in the conversation');
  p.anthropic.clear();
  await context.close();
});
