// Calls moved to another tab, said where the person looks, in headless Chromium at 1280×800 and
// 390×844: the person's tab of the demo app is scrolled to its foot (the record, far below the
// panel's top); the waiting page's link opens the app in a second tab of the same browser, which
// takes agents' calls; the first tab says so within its window wherever it is scrolled, with
// Take the calls back here, inside the window's width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, APP_ORIGIN, register, pkcePair, openWaitingPage } from './harness.mjs';
import { fileChromium, connected, SHOW_MS } from './demo_harness.mjs';
import { CALLS_ELSEWHERE } from '../../tab/agents-panel.js';

const chromium = fileChromium();

for (const size of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test(`at ${size.width}×${size.height}, a tab scrolled to its foot sees that the calls went to the tab the link opened`, { timeout: 60_000 }, async () => {
    const context = await (await chromium()).newContext({ viewport: size });
    const first = await context.newPage();
    await first.goto(`${APP_ORIGIN}/demo/?seed=11`);
    await connected(first);
    await first.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));

    const client = await register('Moved helper');
    const url = new URL(`${RELAY}/authorize`);
    url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'moved' });
    const waiting = await openWaitingPage(url);
    const second = await context.newPage();
    await second.goto(waiting.link);
    await connected(second);

    const notice = first.locator('#calls-elsewhere');
    await notice.waitFor({ state: 'visible', timeout: SHOW_MS });
    assert.equal((await first.textContent('#calls-elsewhere-text')).trim(), CALLS_ELSEWHERE);
    const seen = await first.evaluate(() => {
      const root = document.querySelector('tabrelay-agents').shadowRoot;
      const box = (id) => root.getElementById(id).getBoundingClientRect().toJSON();
      return { notice: box('calls-elsewhere'), take: box('take-calls'), width: document.documentElement.clientWidth, height: innerHeight, scrolled: scrollY };
    });
    assert.ok(seen.scrolled > 0, 'the tab is scrolled down');
    for (const [name, b] of [['the notice', seen.notice], ['Take the calls back here', seen.take]]) {
      assert.ok(b.top >= 0 && b.bottom <= seen.height, `${name} is within the window (${Math.round(b.top)}–${Math.round(b.bottom)} of ${seen.height})`);
      assert.ok(b.left >= 0 && b.right <= seen.width, `${name} is within the window's width (${Math.round(b.left)}–${Math.round(b.right)} of ${seen.width})`);
    }
    // Taken back: the notice goes.
    await first.click('#take-calls');
    await notice.waitFor({ state: 'hidden', timeout: SHOW_MS });
    await context.close();
  });
}
