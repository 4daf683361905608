// While no local server runs, the tab that names one stays quiet: it tries the address again
// with growing waits, its panel line says "not running" throughout (no "connecting…" and
// "out of reach" in turn), the tab end writes nothing to the console (the browser's own line for
// each refused connection is all), and the relay's connection is as it was.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { LOCAL_URL, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

test('a tab whose local server is not running retries it quietly with growing waits', async () => {
  const tries = [];
  const local = new URL(LOCAL_URL).host;
  const console = [];
  const demo = await openDemo(await chromium());
  demo.on('websocket', (ws) => ws.url().includes(local) && tries.push(Date.now()));
  demo.on('console', (m) => console.push(m.text()));
  await localStatus(demo).filter({ hasText: /^not running$/ }).waitFor();
  // Every change of the line from now on is recorded.
  await demo.evaluate(() => {
    const line = document.querySelector('tabrelay-agents').shadowRoot.querySelector('[part=local-status]');
    window.localLineSaid = [];
    new MutationObserver(() => window.localLineSaid.push(line.textContent)).observe(line, { childList: true, characterData: true, subtree: true });
  });
  const from = tries.length;
  // Three tries more (the waits grow: 1, 2, 4 s and so on, jittered by up to half).
  await waitFor(() => tries.length >= from + 3, 30_000);
  const said = await demo.evaluate(() => window.localLineSaid.filter((t) => t !== 'not running'));
  assert.deepEqual(said, [], 'the line never said anything but "not running"');
  assert.equal(await localStatus(demo).textContent(), 'not running');
  const gaps = tries.slice(from).map((at, i, all) => (i ? at - all[i - 1] : 0)).slice(1);
  assert.ok(gaps[1] > gaps[0] * 0.6, `the waits grow: ${gaps}`);
  const ours = console.filter((text) => !text.includes(local));
  assert.deepEqual(ours, [], 'the tab end wrote nothing to the console');
  await demo.locator('tabrelay-agents [part=status]', { hasText: /^this tab is connected/ }).waitFor();
});
