// The way back for an agent whose call the relay stopped waiting for while the person was being
// asked (a client that gives up early, such as ChatGPT, is answered before it does): the call
// stays open in the tab, and the connection's `status` says it still waits for the person, then
// what came of it once the tab answered. Another connection of the pairing hears nothing of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, waitFor, CALL_WAIT_MS } from './harness.mjs';

const statusText = async (token) => (await callTool(token, 'status')).content[0].text;

test('status tells the connection what came of a call the relay stopped waiting for', { timeout: CALL_WAIT_MS + 30_000 }, async () => {
  const tab = await openTab();
  const [mine, theirs] = [await accessToken(tab), await accessToken(tab)];
  let decide;
  tab.client.handle = (call) => {
    tab.client.asking(call.id, 'Delete 3 items from “Oak”?');
    return new Promise((resolve) => (decide = () => {
      tab.client.answered(call.id);
      resolve({ data: { deleted: [1, 2, 3] } });
    }));
  };
  const first = await callTool(mine, 'items_delete', { ids: [1, 2, 3] });
  assert.equal(first.isError, true);
  assert.match(first.content[0].text, /being asked about this step.*`status` says what came of it/s);

  const waiting = await statusText(mine);
  assert.match(waiting, /Your call to <tabrelay-data>"items_delete"<\/tabrelay-data> still waits for the person/);
  assert.ok(waiting.includes('Delete 3 items from “Oak”?'), waiting);
  assert.doesNotMatch(await statusText(theirs), /Your call/, 'another connection hears nothing of it');

  decide();
  const after = await waitFor(async () => {
    const text = await statusText(mine);
    return /earlier call/.test(text) ? text : null;
  }, 5000, 100);
  assert.match(after, /Your earlier call to <tabrelay-data>"items_delete"<\/tabrelay-data>, after the relay stopped waiting: it ran; its answer: <tabrelay-data>/);
  assert.ok(after.includes('\\"deleted\\":[1,2,3]'), after);
  assert.doesNotMatch(after, /still waits/);
  tab.close();
});
