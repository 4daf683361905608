// What an agent did, as the person and the agent read it, in the demo page in headless Chromium
// with the official SDK client as the agent: the activity line says what its turn read and
// changed (never "done, 0 steps"); a heavy call's line counts its running time beside the app's
// estimate; after a Deny the agent's progress never says the step runs (after an Allow it says
// the person allowed it); a line of a dataset no longer shown says at once why it cannot be
// undone, and offers no Undo turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dataOf } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, choose, cardGone, activityLines, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();
/** The most permutations groups_compare takes (the catalogue's maximum). */
const MOST = 100_000_000;

test('a line says what was read and changed; a heavy call’s line its running time and the estimate; a previous dataset’s Undo turn says why not', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'activity-said-e2e');
  const { groups } = dataOf(await client.callTool({ name: 'dataset_describe', arguments: {} }));
  await client.callTool({ name: 'items_highlight', arguments: { ids: [3, 4] } });
  await page.locator('#activity [part=text]', { hasText: /done, 1 step — read “Describe the dataset”; Highlighted 2 items/ }).waitFor({ timeout: SHOW_MS });
  const lines = (await activityLines(page)).join('\n');
  assert.doesNotMatch(lines, /0 steps/);

  // Heavy, and allowed in this mode: the line counts its time beside the app's estimate.
  await page.locator('#permissions [part=mode]').selectOption('undoable');
  const args = { column: 'score', groups: [groups[0].name, groups[1].name], permutations: MOST };
  const heavy = client.callTool({ name: 'groups_compare', arguments: args }, undefined, { timeout: 120_000 }).catch(() => null);
  const elapsed = page.locator('#activity [part=elapsed]');
  await elapsed.waitFor({ timeout: SHOW_MS });
  const first = await elapsed.textContent();
  assert.match(first, /^ for \d+ s \(about \d+ (min \d+ )?s by this app’s measurements\)$/);
  await page.waitForFunction(
    (before) => {
      const span = document.querySelector('#activity').shadowRoot.querySelector('[part=elapsed]');
      return span && Number(/for (\d+) s/.exec(span.textContent)?.[1]) > Number(/for (\d+) s/.exec(before)?.[1]);
    },
    first,
    { timeout: SHOW_MS },
  );
  // Stop it: the agent is held; let it go on for the rest.
  await page.locator('#activity [part=stop]').click();
  await heavy;
  await page.locator('#activity [part=go-on]').first().click();
  // Letting it go on waits for the person's device (or its absence) before it is sent: the next
  // call goes only once the line no longer offers it (before, a call could reach the relay first
  // and be refused as stopped).
  await page.locator('#activity [part=go-on]').first().waitFor({ state: 'detached', timeout: SHOW_MS });

  // A turn on this dataset, then another dataset shown: its Undo turn says why it cannot.
  await page.locator('#activity [part=dismiss]').evaluateAll((bs) => bs.forEach((b) => b.click()));
  // The step taken by the relay (it answers what the tab asks after it on the same socket)
  // before the agent's next call, which comes another way.
  await page.evaluate(async () => {
    window.tabrelayDemo.bridge.step();
    await document.querySelector('#agents').relay.connections();
  });
  const set = await client.callTool({ name: 'items_highlight', arguments: { ids: [9] } });
  assert.equal(set.isError, false, textOf(set));
  const undo = page.locator('#activity [part=undo]');
  await undo.waitFor({ timeout: SHOW_MS });
  // At once, with no question first and no Undo turn left to press.
  await page.click('#another-dataset');
  await page.locator('#activity [part=text]', { hasText: /which is no longer shown, so it cannot be undone here/ }).waitFor({ timeout: SHOW_MS });
  assert.equal(await undo.count(), 0, 'the line no longer offers Undo turn');
  assert.equal(await page.locator('#activity [part~=ask-undo]').count(), 0, 'nothing was asked');
  await client.close();
});

test('after a Deny the agent’s progress does not say the step runs; after an Allow it says the person allowed it', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'deny-progress-e2e');
  const said = [];
  const denied = client.callTool({ name: 'items_delete', arguments: { ids: [6] } }, undefined, { onprogress: (p) => said.push(p.message ?? '') });
  await cardSays(page, /delete item 6\. Allow\?$/);
  await choose(page, 'deny');
  const result = await denied;
  assert.equal(result.isError, true);
  assert.match(textOf(result), /declined/);
  await cardGone(page);
  assert.ok(said.some((m) => /being asked/.test(m)), `the agent heard it was asked: ${said.join(' | ')}`);
  assert.ok(!said.some((m) => /runs in their tab|allowed/.test(m)), `nothing says the step runs: ${said.join(' | ')}`);

  const heard = [];
  const allowed = client.callTool({ name: 'items_delete', arguments: { ids: [7] } }, undefined, { onprogress: (p) => heard.push(p.message ?? '') });
  await cardSays(page, /delete item 7\. Allow\?$/);
  await choose(page, 'once');
  assert.equal((await allowed).isError, false);
  assert.ok(heard.some((m) => /allowed this step; it runs in their tab/.test(m)), heard.join(' | '));
  await client.close();
});
