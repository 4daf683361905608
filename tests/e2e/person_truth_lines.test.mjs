// The activity lines after a long session, in the demo page in headless Chromium with the
// official SDK client as the agent, at 1280×800 and 390×844: after 20 turns the running line is
// the first, in the first screen of the lines; the lines are newest first; the finished turns
// beyond a few fold behind a button that counts them (and shows them); the agent's place
// ("returns to …, name not verified") is said once, not on every line; nothing scrolls sideways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, demoWithAgent, heavyComparisonRunning, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const TURNS = 20;

/** The lines as the person sees them: each line's text and its box, and the fold button's. */
function seen(page) {
  return page.evaluate(() => {
    const root = document.querySelector('#activity').shadowRoot;
    const list = root.querySelector('[part=lines]').getBoundingClientRect();
    const lines = [...root.querySelectorAll('[part~=line]')].map((li) => {
      const box = li.getBoundingClientRect();
      const turn = Number(li.dataset.line.split('\u0000')[2]);
      return { text: li.querySelector('[part=text]').textContent, turn, top: box.top - list.top, bottom: box.bottom - list.top, buttons: li.querySelectorAll('button').length };
    });
    const fold = root.querySelector('[part=fold]');
    return { lines, fold: fold.hidden ? null : fold.textContent, wide: document.documentElement.scrollWidth - window.innerWidth };
  });
}

for (const [width, height] of [
  [1280, 800],
  [390, 844],
]) {
  test(`after ${TURNS} turns the running line is first, newest first, older finished turns folded, the place said once (${width}×${height})`, async () => {
    const { page, client } = await demoWithAgent(await chromium(), `lines-e2e-${width}`);
    await page.setViewportSize({ width, height });
    for (let i = 1; i <= TURNS; i += 1) {
      assert.equal((await client.callTool({ name: 'items_highlight', arguments: { ids: [i] } })).isError, false);
      // The person's own step ends the agent's turn: each call is a turn of its own. The relay
      // has taken the step once it answers what the tab asks after it on the same socket (the
      // agent's next call comes another way, and could reach the relay first).
      await page.evaluate(async () => {
        window.tabrelayDemo.bridge.step();
        await document.querySelector('#agents').relay.connections();
      });
    }
    await page.locator('#activity [part=fold]', { hasText: /older finished turns/ }).waitFor({ timeout: SHOW_MS });
    const { running } = await heavyComparisonRunning(page, client);

    const { lines, fold, wide } = await seen(page);
    assert.match(lines[0].text, /running Compare two groups/, 'the running line comes first');
    assert.ok(lines[0].bottom <= height, `the running line is in the first screen of the lines: ${lines[0].bottom} > ${height}`);
    assert.match(lines[1].text, /done, 1 step — Highlighted 1 item$/, lines[1].text);
    assert.ok(lines[1].turn > lines[2].turn && lines[2].turn > lines[3].turn, 'the finished turns newest first');
    assert.ok(lines.length <= 5, `a few lines, not ${lines.length}: ${lines.map((l) => l.text).join(' | ')}`);
    const buttons = lines.reduce((n, l) => n + l.buttons, 0);
    assert.ok(buttons <= 8, `a few buttons, not ${buttons}`);
    const folded = Number(/^Show (\d+) older finished turns$/.exec(fold)?.[1]);
    assert.ok(folded >= TURNS - 5, `the older finished turns are counted: ${fold}`);
    const places = lines.filter((l) => /returns to 127\.0\.0\.1, name not verified/.test(l.text));
    assert.equal(places.length, 1, `the agent's place is said once: ${lines.map((l) => l.text).join(' | ')}`);
    assert.equal(places[0], lines[0], 'on its first line');
    assert.ok(wide <= 0, `nothing scrolls sideways: ${wide} px`);

    // Showing the older turns lists them all, newest first; hiding them folds them again.
    await page.click('#activity [part=fold]');
    const all = (await seen(page)).lines;
    assert.equal(all.length, lines.length + folded);
    const turns = all.slice(1).map((l) => l.turn);
    assert.deepEqual(turns, [...turns].sort((a, b) => b - a), 'all of them newest first');
    assert.match(await page.textContent('#activity [part=fold]'), /^Hide \d+ older finished turns$/);
    await page.click('#activity [part=fold]');
    assert.equal((await seen(page)).lines.length, lines.length);

    await page.locator('#activity [part=stop]').first().click();
    await running;
    await client.close();
  });
}
