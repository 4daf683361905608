// The consent and the connections, in the demo page in headless Chromium with the official SDK
// client as the agent: before Approve the panel says what the connection will be able to do
// under the current mode (and the data switch), in counts, with the tools' titles under Which
// tools; right after Approve, before any call, the
// connection is listed; after Forget, "Connected to …" goes. With the switch on, a tool it
// refuses is not described as running without asking, to the person or to the agent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE } from '../../tab/generated/bundle.js';
import { HeadlessProvider } from './harness.mjs';
import { fileChromium, openDemo, connectThroughPage, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
const CELLS = CATALOGUE.tools.filter((t) => t.data === 'cells');

/** Approves in `page` once the consent says what the connection will be able to do; keeps what it said (short, and the list). */
function approveReading(page, said) {
  return async (code) => {
    await page.fill('#code', code);
    const canDo = page.locator('#agents #code-can-do');
    await canDo.waitFor({ state: 'visible', timeout: SHOW_MS });
    said.push({ short: await page.textContent('#can-do-text'), list: await page.textContent('#can-do-list') });
    await page.click('#approve');
    await page.locator('#approve-result', { hasText: /Connected to/ }).waitFor({ timeout: 10_000 });
  };
}

test('the consent says what the connection will be able to do; it is listed at once; Forget takes “Connected to” away', async () => {
  const page = await openDemo(await chromium());
  const said = [];
  const { client } = await connectThroughPage(page, 'can-do-e2e', new HeadlessProvider(null, approveReading(page, said)));
  assert.match(said[0].short, /^Under your mode “Ask before heavy or irreversible”, it can use \d+ tools \(\d+ that read, \d+ whose changes can be undone\) without asking you; 1 tool whose changes cannot be undone only once you allow each call\.$/);
  assert.match(said[0].list, /^It will be able to use without asking you: .*“Describe the dataset”.*; use only once you allow each call: “Delete items”\./);
  assert.doesNotMatch(said[0].list, /will not be able to use/, 'nothing refused under this mode');
  assert.doesNotMatch(said[0].short, /refused/, 'nothing refused under this mode');

  // Listed as soon as approved, before any call of it.
  await page.locator('#agents [part=item]', { hasText: 'SDK e2e client' }).waitFor({ timeout: SHOW_MS });
  assert.equal(await page.locator('#agents tabrelay-connections [part=empty]').isVisible(), false, 'not “No agent app is connected”');

  await page.locator('#agents [part=forget]').first().click();
  await page.locator('#agents [part=forget-yes]').first().click();
  await page.locator('#agents [part=result]', { hasText: /^Forgot / }).waitFor({ timeout: SHOW_MS });
  assert.doesNotMatch(await page.textContent('#approve-result'), /Connected to/, 'the stale line went');
  await client.close().catch(() => {});
  await page.close();
});

test('with the switch on, a tool it refuses is said to be refused: in the consent, the panel and the tools agents list', async () => {
  const page = await openDemo(await chromium());
  await page.locator('#data-switch [part=switch]').check();
  await page.locator('#agents [part=tools-details]').evaluate((d) => (d.open = true));
  for (const t of CELLS) {
    await page.locator(`#agents #now-${t.name}`, { hasText: /^refused while “Agents see names and summaries only” is on$/ }).waitFor({ timeout: SHOW_MS });
  }
  const said = [];
  const { client } = await connectThroughPage(page, 'can-do-switch-e2e', new HeadlessProvider(null, approveReading(page, said)));
  assert.match(said[0].short, new RegExp(`; ${CELLS.length} refused\\.$`));
  assert.match(said[0].list, new RegExp(`It will not be able to use .*“${CELLS[0].title.replace(/[’']/g, '.')}”.* \\(refused while “Agents see names and summaries only” is on\\)`));
  // Refused tools are left out of the list agents see: none of them is listed, so none is
  // described as running without asking. (The list is the tab's own: it holds the tools the
  // switch leaves on.)
  assert.ok(CELLS.length > 0, 'the catalogue has tools the switch refuses');
  const { tools } = await client.listTools();
  const listed = tools.map((t) => t.name);
  assert.ok(listed.includes('status') && listed.length > 1, JSON.stringify(listed));
  const refusedListed = CELLS.filter((c) => listed.includes(c.name)).map((c) => c.name);
  assert.deepEqual(refusedListed, [], 'no refused tool is listed');
  const status = textOf(await client.callTool({ name: 'status', arguments: {} }));
  for (const t of CELLS) assert.match(status, new RegExp(t.name), `status names ${t.name} refused`);
  const refused = await client.callTool({ name: CELLS[0].name, arguments: CELLS[0].name === 'items_values' ? { ids: [1] } : {} });
  assert.equal(refused.isError, true);
  assert.match(textOf(refused), /names and summaries only/, 'the refusal says why');
  await client.close();
});
