// A card answered in the agent app (issue 32 item 3): an agent app that declared elicitation and
// started tabrelay-local is asked each of its cards too (elicitation/create). Allow once there
// runs the call and the tab's card goes, the record saying where it was answered; Deny there
// refuses it; an irreversible card is offered only Deny there, and an Allow sent anyway leaves
// the card waiting in the tab; a card answered in the tab first withdraws the question from the
// agent app (notifications/cancelled). An agent app that did not declare it is asked nothing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, openDemo, approveIn, cardSays, cardGone, choose, textOf, SHOW_MS } from './demo_harness.mjs';
import { waitFor } from './harness.mjs';
import { DECISION_WORDS } from '../../tab/record.js';
import { stdioClient, codeIn, localStatus } from './local_harness.mjs';

const chromium = fileChromium();

/** An agent app connected through tabrelay-local to a fresh demo tab, the `item_set_value` tool set to ask. */
async function connectedApp(t, name, options) {
  const local = await stdioClient(name, options);
  t.after(() => local.client.close());
  const code = codeIn(textOf(await local.client.callTool({ name: 'status', arguments: {} })));
  const page = await openDemo(await chromium());
  await localStatus(page).filter({ hasText: /^this tab is connected/ }).waitFor({ timeout: 20_000 });
  await approveIn(page)(code);
  await waitFor(() => local.changed.includes('notifications/tools/list_changed'));
  await page.click('#tools-title');
  await page.selectOption('#setting-item_set_value', 'ask');
  return { ...local, page };
}

/** The record's line in `page`'s Agents panel saying `decision`. */
const recorded = (page, decision) => page.locator('#record [part~=entry]', { hasText: decision }).first().waitFor({ timeout: SHOW_MS });

/** Lets the SDK write the handler's answer (it writes it once the handler's promise settles). */
const written = () => new Promise((resolve) => setImmediate(resolve));

test('a card answered in the agent app goes as if clicked: Allow once, Deny, never an irreversible Allow, and the tab first wins', async (t) => {
  const asks = [];
  const app = await connectedApp(t, 'Asked local agent', { elicit: (request, extra) => new Promise((resolve) => asks.push({ request, extra, resolve })) });
  const { client, page } = app;
  const answer = (i, content) => asks[i].resolve(content ? { action: 'accept', content } : { action: 'decline' });

  // Allow once in the agent app: the call runs, the tab's card goes.
  const allowed = client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 41 } });
  await cardSays(page, /^Asked local agent \(local\) asks to /);
  await waitFor(() => asks.length === 1);
  assert.match(asks[0].request.params.message, /^Asked local agent \(local\) asks to /);
  assert.deepEqual(asks[0].request.params.requestedSchema.properties.answer.enum, ['allow_once', 'deny']);
  answer(0, { answer: 'allow_once' });
  assert.notEqual((await allowed).isError, true, textOf(await allowed));
  await cardGone(page);
  await recorded(page, DECISION_WORDS.onceInApp);

  // Deny in the agent app: refused.
  const denied = client.callTool({ name: 'item_set_value', arguments: { id: 2, column: 'score', value: 42 } });
  await waitFor(() => asks.length === 2);
  answer(1, { answer: 'deny' });
  assert.equal((await denied).isError, true);
  assert.match(textOf(await denied), /declined/);
  await cardGone(page);
  await recorded(page, DECISION_WORDS.denyInApp);

  // An irreversible card: only Deny is offered there, and an Allow sent anyway does nothing:
  // the agent app's cancel, which reaches the tab after the answer, finds the card unanswered.
  const stop = new AbortController();
  const deleting = client.callTool({ name: 'items_delete', arguments: { ids: [5] } }, undefined, { signal: stop.signal });
  await cardSays(page, /asks to delete item 5\./);
  await waitFor(() => asks.length === 3);
  assert.deepEqual(asks[2].request.params.requestedSchema.properties.answer.enum, ['deny']);
  answer(2, { answer: 'allow_once' });
  await written();
  stop.abort();
  await assert.rejects(deleting);
  await cardGone(page);
  await recorded(page, DECISION_WORDS.unanswered);
  assert.equal(await page.locator('#record [part~=entry]', { hasText: DECISION_WORDS.onceInApp }).count(), 1, 'only the first call was allowed in the agent app');
  const kept = await client.callTool({ name: 'items_values', arguments: { ids: [5], columns: ['score'] } });
  assert.notEqual(kept.isError, true, `item 5 is still there: ${textOf(kept)}`);

  // The tab answers first: the question is withdrawn from the agent app, its later answer does nothing.
  const tabFirst = client.callTool({ name: 'item_set_value', arguments: { id: 3, column: 'score', value: 43 } });
  await waitFor(() => asks.length === 4);
  await choose(page, 'deny');
  assert.match(textOf(await tabFirst), /declined/);
  await waitFor(() => asks[3].extra.signal.aborted);
  answer(3, { answer: 'allow_once' });
  await recorded(page, DECISION_WORDS.deny);
});

test('an agent app that did not declare elicitation is asked nothing', async (t) => {
  const app = await connectedApp(t, 'Unasked local agent');
  const asked = [];
  app.client.fallbackRequestHandler = async (request) => {
    asked.push(request.method);
    return {};
  };
  const call = app.client.callTool({ name: 'item_set_value', arguments: { id: 4, column: 'score', value: 44 } });
  await cardSays(app.page, /^Unasked local agent \(local\) asks to /);
  await choose(app.page, 'once');
  assert.notEqual((await call).isError, true);
  assert.deepEqual(asked, [], 'nothing was asked in the agent app');
});
