// Two agent apps on the person's computer at once (Claude Code and Cursor both open): each starts
// `tabrelay-local` on the same port; the first serves the tab, the second joins it (its stdio
// handed over a loopback socket only a tabrelay-local of the same user opens). Each is its own
// agent: its own connect code, connection, line and grants; Forget of one leaves the other;
// and the first agent app closing leaves the second served (its tabrelay-local takes the first's
// place, with the second's own connection).
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, approveIn, cardSays, choose, textOf } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus, freshState } from './local_harness.mjs';

const chromium = fileChromium();

/** The code the agent app is told now. */
async function codeOf(client) {
  return codeIn(textOf(await client.callTool({ name: 'status', arguments: {} })));
}

/** What everything the agent app's tabrelay-local said on stderr reads. */
function stderrOf(local) {
  let said = '';
  local.transport.stderr.on('data', (d) => (said += d));
  return () => said;
}

test('two agent apps each start tabrelay-local: both served, each its own connection', async (t) => {
  // One state directory for both, as the default one is for every agent app of the person.
  const state = freshState();
  const one = await stdioClient('Agent app one', { state });
  t.after(() => one.client.close());
  const codeOne = await codeOf(one.client);
  const two = await stdioClient('Agent app two', { state });
  t.after(() => two.client.close());
  const saidTwo = stderrOf(two);
  const codeTwo = await codeOf(two.client);
  assert.notEqual(codeTwo, codeOne, 'each agent app its own code');
  assert.match(saidTwo(), /joined the one already serving the tab/);

  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await approveIn(page)(codeTwo);
  await waitFor(() => two.changed.includes('notifications/tools/list_changed'));
  assert.equal(await codeOf(one.client), codeOne, 'approving the second did not connect the first');
  await approveIn(page)(codeOne);
  await waitFor(() => one.changed.includes('notifications/tools/list_changed'));

  // Each its own line and card.
  const call = two.client.callTool({ name: 'items_delete', arguments: { ids: [3] } });
  await cardSays(page, /^Agent app two \(local\) asks to delete item 3\./);
  await choose(page, 'deny');
  assert.equal((await call).isError, true);
  assert.notEqual((await one.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);

  // Each its own connection: Forget of the second leaves the first.
  await page.click('#connections [part=refresh]');
  const items = page.locator('#connections [part=item]');
  await items.filter({ hasText: 'Agent app one (local)' }).waitFor();
  const second = items.filter({ hasText: 'Agent app two (local)' });
  await second.locator('[part=forget]').click();
  await page.click('#connections [part=forget-yes]');
  await page.locator('#connections [part=result]', { hasText: 'Forgot Agent app two (local)' }).waitFor();
  const again = await codeOf(two.client);
  assert.notEqual(again, codeTwo, 'the second is told a new code');
  assert.notEqual((await one.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true, 'the first goes on');

  await approveIn(page)(again);
  await waitFor(() => two.changed.filter((m) => m === 'notifications/tools/list_changed').length >= 2);
  assert.notEqual((await two.client.callTool({ name: 'dataset_describe', arguments: {} })).isError, true);

  // The first agent app closes (its tabrelay-local with it): the second's takes its place, with
  // the second's connection (no new code), and the tab comes back to it.
  await one.client.close();
  let last = null;
  const served = async () => !(last = await two.client.callTool({ name: 'dataset_describe', arguments: {} })).isError;
  await waitFor(served, 30_000, 250).catch((e) => assert.fail(`${e.message}: ${textOf(last)}`));
  assert.match(saidTwo(), /taking its place/);
});
