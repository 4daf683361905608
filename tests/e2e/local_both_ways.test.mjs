// Both ways in at once, in one tab: an agent app that started tabrelay-local over stdio (the
// official TypeScript SDK's StdioClientTransport) and a remote agent through the relay list and
// call the demo's tools in the same Chromium tab, each with its own connection and its own line.
// The local agent is connected as any agent is: the person types the code it was given into the
// tab's Agents panel, and the connection is named "<its name> (local)".
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, connectThroughPage, namedProvider, approveIn, textOf, activityLines } from './demo_harness.mjs';
import { dataOf, waitFor } from './harness.mjs';
import { stdioClient, codeIn, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

test('a local agent over stdio and a remote agent act in the same tab, each with its own connection', async (t) => {
  const local = await stdioClient('Local SDK agent');
  t.after(() => local.client.close());
  // Before the person approved: the bundled list, and every call says the code to type.
  const before = await local.client.listTools();
  assert.ok(before.tools.some((tool) => tool.name === 'dataset_describe'), 'the bundled list');
  const said = textOf(await local.client.callTool({ name: 'status', arguments: {} }));
  const code = codeIn(said);
  const refused = await local.client.callTool({ name: 'dataset_describe', arguments: {} });
  assert.equal(refused.isError, true);
  assert.equal(codeIn(textOf(refused)), code, 'a call says the same code');

  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  const remote = await connectThroughPage(page, 'remote', namedProvider(page, 'Remote SDK agent'));
  t.after(() => remote.client.close());
  await approveIn(page)(code);
  await page.locator('#approve-result', { hasText: 'Connected to Local SDK agent (local)' }).waitFor();

  // The list changed once connected: the tab's list, read through the local server.
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));
  const listed = await local.client.listTools();
  assert.ok(listed.tools.some((tool) => tool.name === 'dataset_describe'));

  // Both at once, each answered by the tab with the same data.
  const [mine, theirs] = await Promise.all([
    local.client.callTool({ name: 'dataset_describe', arguments: {} }),
    remote.client.callTool({ name: 'dataset_describe', arguments: {} }),
  ]);
  assert.notEqual(mine.isError, true, textOf(mine));
  assert.notEqual(theirs.isError, true, textOf(theirs));
  assert.deepEqual(dataOf(mine), dataOf(theirs));

  // Each its own line, named as the person approved it.
  await page.locator('#activity [part~=line]', { hasText: 'Local SDK agent (local)' }).first().waitFor();
  await page.locator('#activity [part~=line]', { hasText: 'Remote SDK agent' }).first().waitFor();
  const lines = await activityLines(page);
  assert.equal(lines.filter((l) => l.startsWith('Local SDK agent (local)')).length, 1, lines.join(' | '));
  assert.equal(lines.filter((l) => l.startsWith('Remote SDK agent')).length, 1, lines.join(' | '));
  // And its own connection in the panel's list.
  const connections = page.locator('tabrelay-agents tabrelay-connections');
  await connections.getByText('Local SDK agent (local)').first().waitFor();
  await connections.getByText('Remote SDK agent').first().waitFor();
});

