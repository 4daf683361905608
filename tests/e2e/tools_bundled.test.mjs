// Without a tab's own list the agents get the bundled catalogue (with status), in name order:
// when no tab is connected, and when the focused tab states no list (a page of before tool lists).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CATALOGUE, STATUS_TOOL } from '../../tab/generated/bundle.js';
import { openTab, accessToken, toolNames, listTools, waitFor } from './harness.mjs';

const BUNDLED = [...CATALOGUE.tools.map((t) => t.name), STATUS_TOOL].sort();

test('no tab connected: the bundled list, in name order', async () => {
  const tab = await openTab();
  const token = await accessToken(tab);
  tab.close();
  await waitFor(async () => {
    const tools = await listTools(token);
    return !tools.some((t) => t._meta?.['tabrelay/setting']) && tools;
  });
  assert.deepEqual(await toolNames(token), BUNDLED);
  const tools = await listTools(token);
  const del = tools.find((t) => t.name === 'items_delete');
  assert.equal(del.annotations.destructiveHint, true);
  assert.equal(del.description, CATALOGUE.tools.find((t) => t.name === 'items_delete').description, 'no setting is claimed');
});

test('a tab that states no list: the bundled list', async () => {
  const tab = await openTab();
  const send = tab.client.send.bind(tab.client);
  tab.client.send = (type, fields) => type !== 'tools' && send(type, fields);
  tab.client.socket.close(); // reconnects, now without stating its tools
  await waitFor(() => tab.statuses.filter((s) => s.status === 'connected').length >= 2);
  const token = await accessToken(tab);
  assert.deepEqual(await toolNames(token), BUNDLED);
  tab.close();
});
