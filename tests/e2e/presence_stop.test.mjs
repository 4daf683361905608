// Stop on an agent's activity line, in the demo page in headless Chromium with the official
// SDK client as the agent: while a card of its turn waits and more calls of the turn queue
// behind it, Stop withdraws the card and refuses every one of them, none runs, the line says
// stopped. Stop stops the agent, not only the turn: its next call is refused with a sentence
// saying so until the person presses Let it go on; the relay refuses it itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AGENT_STOPPED } from '../../tab/relay-client.js';
import { dataOf, openTab, connectByHand, callTool } from './harness.mjs';
import { fileChromium, demoWithAgent, cardSays, cardGone, activityLines, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

test('Stop mid-turn withdraws the card and refuses the turn’s queued calls', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'stop-e2e');
  const before = dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [2] } })).items[0].score;

  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  const queued = [
    client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 99 } }),
    client.callTool({ name: 'items_highlight', arguments: { ids: [3] } }),
  ];
  await page.locator('#activity [part~=acting] [part=stop]').waitFor({ timeout: SHOW_MS });
  assert.match((await activityLines(page)).join('\n'), /SDK e2e client.*waiting/);
  await page.locator('#activity [part~=acting] [part=stop]').click();

  await cardGone(page);
  for (const result of await Promise.all([asked, ...queued])) {
    assert.equal(result.isError, true);
    assert.match(textOf(result), /pressed Stop on this turn/);
  }
  await page.locator('#activity [part=text]', { hasText: 'stopped' }).waitFor({ timeout: SHOW_MS });
  const history = await page.textContent('#history');
  assert.doesNotMatch(history, /Deleted item 1|Set score of item 2|Highlighted/, 'nothing of the turn ran');
  // A looping agent's next call, a new turn, does not run: the agent is stopped.
  const callsBefore = await page.locator('#calls li').count();
  const next = await client.callTool({ name: 'items_values', arguments: { ids: [2] } });
  assert.equal(next.isError, true);
  assert.ok(textOf(next).includes(AGENT_STOPPED), textOf(next));
  assert.equal(await page.locator('#calls li').count(), callsBefore, 'it never ran in the page');
  const goOn = page.locator('#activity [part=go-on]').first();
  await goOn.waitFor({ timeout: SHOW_MS });
  assert.match((await activityLines(page)).join('\n'), /SDK e2e client.*stopped: its calls are refused until you let it go on/);
  // The connections list says so too (it outlives a reload of the page).
  await page.click('#connections [part=refresh]');
  await page.locator('#connections [part=go-on]').waitFor({ timeout: SHOW_MS });
  assert.match(await page.locator('#connections [part=item]').first().textContent(), /stopped/);
  await goOn.click();
  await page.locator('#activity [part=go-on]').first().waitFor({ state: 'detached', timeout: SHOW_MS });
  await page.click('#connections [part=refresh]');
  await page.locator('#connections [part=go-on]').waitFor({ state: 'detached', timeout: SHOW_MS });
  const after = dataOf(await client.callTool({ name: 'items_values', arguments: { ids: [2] } })).items[0].score;
  assert.equal(after, before, 'once let go on, its next call runs; the value was never set');
  await client.close();
});

test('the relay refuses a stopped agent’s calls itself until the tab lets it go on, and only that agent’s', async () => {
  const tab = await openTab();
  const [a, b] = [await connectByHand(tab), await connectByHand(tab)];
  await callTool(a.tokens.access_token, 'dataset_describe');
  const connection = tab.calls[0].connection.id;
  // Told straight on the socket, so the tab end's own refusal plays no part: only the relay's.
  tab.client.socket.send(JSON.stringify({ type: 'stop', connection }));
  // The relay answers the list after the stop (one socket, in order): it lists it stopped.
  const stopped = (await tab.client.connections()).find((c) => c.id === connection);
  assert.equal(stopped.stopped, true);
  const refused = await callTool(a.tokens.access_token, 'dataset_describe', {}, 2);
  assert.equal(refused.isError, true);
  assert.ok(textOf(refused).includes(AGENT_STOPPED), JSON.stringify(refused));
  assert.equal(tab.calls.length, 1, 'the stopped agent’s call never reached the tab');
  assert.equal((await callTool(b.tokens.access_token, 'dataset_describe')).isError, false, 'another agent goes on');
  tab.client.socket.send(JSON.stringify({ type: 'go_on', connection }));
  assert.equal((await tab.client.connections()).find((c) => c.id === connection).stopped, undefined);
  assert.equal((await callTool(a.tokens.access_token, 'dataset_describe', {}, 3)).isError, false, 'let go on, it runs');
  assert.equal(tab.calls.length, 3);
  tab.close();
});
