// The chat bar as a person meets it in the demo page, in headless Chromium at 390×844 and
// 1280×800 against a played OpenAI API (the Responses API): nothing scrolls sideways, every
// control is labelled, Enter sends the message and keeps the focus in the field, a question's
// choices are buttons that Enter sends while a half-typed draft stays, and the answer streams.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, SHOW_MS } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows, turnEnded } from './chat_harness.mjs';

const chromium = fileChromium();
const played = filePlayed();

for (const [width, height] of [[390, 844], [1280, 800]]) {
  test(`at ${width}×${height}: no sideways scroll, labelled controls, Enter sends, a choice by keyboard keeps the draft`, async () => {
    const p = await played();
    const { page, context } = await openChatDemo(await chromium(), p, { provider: 'openai' });
    await page.setViewportSize({ width, height });
    await page.locator('#chat').scrollIntoViewIfNeeded();
    const sideways = await page.evaluate(() => document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth);
    assert.equal(sideways, 0, 'nothing scrolls sideways');
    const box = await page.locator('#chat').boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= width, `the chat fits (${box.x}+${box.width} of ${width})`);
    const unlabelled = await page.evaluate(() => {
      const root = document.querySelector('#chat').shadowRoot;
      return [...root.querySelectorAll('textarea, input, select, button')].filter((el) => !(el.getAttribute('aria-label') || el.closest('label') || el.textContent.trim())).map((el) => el.getAttribute('part'));
    });
    assert.deepEqual(unlabelled, []);

    p.openai.script({ answer: [{ text: 'Which dataset part?' }, { tool: { name: 'ask_person', input: { question: 'Which group first?', choices: ['Group A', 'Group B'] } } }] }, { answer: [{ text: 'Starting with Group B.' }] });
    const field = page.locator('#chat [part=message]');
    await field.fill('Compare the groups');
    await field.press('Enter');
    await chatShows(page, 'Compare the groups', 'person');
    assert.equal(await field.inputValue(), '', 'the field is emptied once sent');
    assert.equal(await page.evaluate(() => document.querySelector('#chat').shadowRoot.activeElement?.getAttribute('part')), 'message', 'the focus stays in the field');
    await page.locator('#chat [part=choice]', { hasText: 'Group B' }).waitFor({ timeout: SHOW_MS });
    assert.equal(await page.locator('#chat [part=ask-question]').textContent(), 'Which group first?');
    await field.fill('half a thou');
    await page.locator('#chat [part=choice]', { hasText: 'Group B' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#chat [part=ask]').waitFor({ state: 'hidden', timeout: SHOW_MS });
    assert.equal(await page.evaluate(() => document.querySelector('#chat').shadowRoot.activeElement?.getAttribute('part')), 'message', 'the focus goes back to the field, not the page');
    await chatShows(page, 'Starting with Group B.');
    await turnEnded(page, 2);
    assert.equal(await field.inputValue(), 'half a thou', 'the draft stays');
    assert.equal(await page.locator('#chat [part=ask]').isHidden(), true, 'the choices go once one is sent');
    const sent = p.openai.calls().at(-1).body;
    assert.equal(sent.store, false);
    assert.deepEqual(sent.input.at(-1), { role: 'user', content: 'Group B' });
    assert.equal(sent.input.at(-2).type, 'function_call_output');
    await context.close();
  });
}

test('without a key the chat shows, with the app’s tools and where a key would go', async () => {
  const p = await played();
  const { page, context } = await openChatDemo(await chromium(), p, { key: null });
  await page.locator('#chat [part=tools]', { hasText: /^The model may use .*Delete items.*, each under your permissions\.$/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.locator('#chat [part=key-said]').textContent(), 'No key yet: paste one to chat.');
  assert.match(await page.locator('#chat [part=key-for]').textContent(), new RegExp(`sent only to ${p.anthropic.origin.replace(/[.]/g, '\\.')}`));
  await context.close();
});
