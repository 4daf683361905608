// The person sees their connections in the tab and forgets one: its access and refresh tokens
// stop at once, and the others go on; so does everything it already sent (its call in flight,
// its card, a tab's late answer). /revoke (RFC 7009) does the same for a client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORGOTTEN } from '../../tab/relay-client.js';
import { openTab, connectByHand, refresh, callTool, mcpPost, postForm, register, waitFor, accessToken, toolDef, RELAY, CALLBACK } from './harness.mjs';
import { fileChromium, demoWithAgent, heavyComparisonRunning, cardSays, cardGone, textOf, SHOW_MS } from './demo_harness.mjs';

const chromium = fileChromium();

const call = (token) => mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: {} } });

test('the tab lists its connections and forgets one; its tokens stop at once', async () => {
  const tab = await openTab();
  const a = await connectByHand(tab);
  const b = await connectByHand(tab);
  const list = await tab.client.connections();
  assert.equal(list.length, 2);
  for (const c of list) {
    assert.equal(c.client, 'E2E client');
    assert.equal(c.host, '127.0.0.1');
    assert.ok(c.created_ms > Date.now() - 60_000 && c.used_ms >= c.created_ms);
  }
  const [first] = list;
  const remaining = await tab.client.forget(first.id);
  assert.deepEqual(remaining.map((c) => c.id), [list[1].id]);
  const results = await Promise.all([call(a.tokens.access_token), call(b.tokens.access_token)]);
  const statuses = results.map((r) => r.status).sort();
  assert.deepEqual(statuses, [200, 401], 'the forgotten one stops, the other goes on');
  const forgotten = results[0].status === 401 ? a : b;
  assert.equal((await refresh(forgotten.client, forgotten.tokens.refresh_token)).body.error, 'invalid_grant');
  tab.close();
});

test('after Forget the agent app signs in again with the client id it kept: Forget ends the grant, not the registration', async () => {
  const tab = await openTab();
  const { authorizeByHand, redeem } = await import('./harness.mjs');
  const a = await connectByHand(tab);
  const [connection] = await tab.client.connections();
  await tab.client.forget(connection.id);
  // What the app hears: the grant is gone (invalid_grant), never that its client is unknown
  // (invalid_client, on which apps drop the registration, or, as mcp-remote 0.15.1 does on a
  // stale one, stop short of the sign-in they restart).
  const refused = await refresh(a.client, a.tokens.refresh_token);
  assert.equal(refused.body.error, 'invalid_grant');
  const probe = new URL(`${RELAY}/authorize`);
  probe.search = new URLSearchParams({ response_type: 'code', client_id: a.client.client_id, redirect_uri: CALLBACK, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's' });
  const probed = await fetch(probe, { headers: { accept: 'application/json' }, redirect: 'manual' });
  assert.equal(probed.status, 200, 'the kept client id is still one the relay knows');
  const again = await authorizeByHand(tab, { client: a.client });
  const tokens = await redeem({ client: a.client, code: again.code, verifier: again.pkce.verifier });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal((await call(tokens.body.access_token)).status, 200, 'connected again');
  assert.equal((await call(a.tokens.access_token)).status, 401, 'the forgotten grant stays forgotten');
  assert.equal((await tab.client.connections()).length, 1);
  tab.close();
});

test('/revoke of a refresh token or an access token ends the grant; anything else is 200 too', async () => {
  const tab = await openTab();
  const a = await connectByHand(tab);
  assert.equal((await postForm('/revoke', { token: a.tokens.refresh_token, client_id: a.client.client_id })).status, 200);
  assert.equal((await call(a.tokens.access_token)).status, 401);
  const b = await connectByHand(tab);
  assert.equal((await postForm('/revoke', { token: b.tokens.access_token, token_type_hint: 'access_token' })).status, 200);
  assert.equal((await refresh(b.client, b.tokens.refresh_token)).body.error, 'invalid_grant');
  assert.equal((await postForm('/revoke', { token: 'not-a-token' })).status, 200);
  assert.equal((await postForm('/revoke', {})).body.error, 'invalid_request');
  tab.close();
});

test('authorizing the same client again keeps its old grant beside the new one', async () => {
  const tab = await openTab();
  const client = await register('Twice');
  const { authorizeByHand, redeem } = await import('./harness.mjs');
  const first = await authorizeByHand(tab, { client });
  const t1 = (await redeem({ client, code: first.code, verifier: first.pkce.verifier })).body;
  const second = await authorizeByHand(tab, { client });
  const t2 = (await redeem({ client, code: second.code, verifier: second.pkce.verifier })).body;
  // Every Claude user shares one client id: approving never pushes out another connection.
  assert.equal((await call(t1.access_token)).status, 200, 'the old grant still works');
  assert.equal((await call(t2.access_token)).status, 200);
  assert.equal((await tab.client.connections()).length, 2);
  tab.close();
});

// Forget stops what the connection already sent: in the demo page in headless Chromium with the
// official SDK client as the agent, and with a tab that answers anyway (the relay's own part).

/** Presses Forget on the first connection the demo page's Agents panel lists. */
async function forgetIn(page) {
  await page.click('#connections [part=refresh]');
  await page.locator('#connections [part=forget]').first().waitFor({ timeout: SHOW_MS });
  await page.locator('#connections [part=forget]').first().click();
  await page.locator('#connections [part=forget-yes]').first().click();
  await page.locator('#connections [part=result]', { hasText: /^Forgot / }).waitFor({ timeout: 10_000 });
}

test('Forget while its delete card shows: the card goes, Allow cannot run it, the item stays, the agent hears it was forgotten', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'forget-card-e2e');
  const asked = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  await cardSays(page, /delete item 1\./);
  await forgetIn(page);
  await cardGone(page);
  assert.equal(await page.locator('#confirm [part=once]').isVisible(), false, 'no Allow to press');
  const result = await asked;
  assert.equal(result.isError, true);
  assert.ok(textOf(result).includes(FORGOTTEN), textOf(result));
  assert.doesNotMatch(textOf(result), /deleted/);
  await waitFor(async () => /items_delete · its connection was forgotten\s*$/.test(await page.textContent('#calls')), SHOW_MS, 100);
  assert.doesNotMatch(await page.textContent('#history'), /Deleted item 1/, 'the item was not deleted');
  await client.close();
});

test('Forget while a heavy comparison runs: the app stops it and the agent never gets its result', async () => {
  const { page, client } = await demoWithAgent(await chromium(), 'forget-running-e2e');
  const { running } = await heavyComparisonRunning(page, client);
  const pressed = Date.now();
  await forgetIn(page);
  const result = await running;
  const heard = Date.now() - pressed;
  assert.equal(result.isError, true);
  assert.ok(textOf(result).includes(FORGOTTEN), textOf(result));
  assert.ok(heard < 5000, `the agent heard ${heard} ms after Forget (the comparison alone takes tens of seconds)`);
  // The app stopped between two slices: its log says so, not that it finished.
  await waitFor(async () => /groups_compare · its connection was forgotten while it ran\s*$/.test(await page.textContent('#calls')), SHOW_MS, 100);
  await client.close();
});

test('a result a tab sends anyway for a forgotten connection’s call never reaches it', async () => {
  let release = () => {};
  const tab = await openTab({ run: () => new Promise((resolve) => (release = resolve)) });
  const a = await connectByHand(tab);
  const pending = callTool(a.tokens.access_token, 'dataset_describe');
  await waitFor(() => tab.calls.length === 1);
  const [sent] = tab.calls;
  // The person is asked about it; they forget the connection; a tab that ignores the relay's
  // word answers the call anyway, on the same socket, right after.
  tab.client.asking(sent.id, 'Delete item 1?');
  const forgot = tab.client.forget(sent.connection.id);
  tab.client.socket.send(JSON.stringify({ type: 'result', id: sent.id, data: { deleted: 1 } }));
  await forgot;
  const result = await pending;
  assert.equal(result.isError, true);
  assert.ok(textOf(result).includes(FORGOTTEN), JSON.stringify(result));
  assert.doesNotMatch(JSON.stringify(result), /deleted/);
  release({ data: 'late' });
  tab.close();
});

test('Forget while its call is a task the person is asked about: the tab is told to drop its call, and the task goes with the token', async () => {
  const heard = { cancelled: [], forgotten: [] };
  const decisions = [];
  const tab = await openTab({
    tools: [toolDef('rows_delete', 'asks')],
    onCancel: (id) => heard.cancelled.push(id),
    onForgotten: (id) => heard.forgotten.push(id),
    run: async (call) => {
      tab.client.asking(call.id, 'Delete rows?');
      await new Promise((resolve) => decisions.push(resolve));
      return { data: { deleted: call.args.rows } };
    },
  });
  // What the relay itself sends the tab (its cancel, not the tab end's own on hearing forgotten).
  const fromRelay = [];
  const receive = tab.client.receive.bind(tab.client);
  tab.client.receive = (socket, text) => {
    if (text !== 'pong') fromRelay.push(JSON.parse(text));
    return receive(socket, text);
  };
  const token = await accessToken(tab);
  await waitFor(async () => (await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools.some((t) => t.name === 'rows_delete'));
  // A 2026-07-28 client that takes tasks: the call is a task as soon as the person is asked.
  const tasks = 'io.modelcontextprotocol/tasks';
  const modern = (method, id, params) => mcpPost(token, {
    jsonrpc: '2.0', id, method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [tasks]: {} } } } },
  }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': params.name ?? params.taskId });
  const created = (await modern('tools/call', 2, { name: 'rows_delete', arguments: { rows: [1] } })).body.result;
  assert.equal(created.resultType, 'task', JSON.stringify(created));
  const [call] = tab.calls;
  await tab.client.forget(call.connection.id);
  await waitFor(() => fromRelay.some((m) => m.type === 'cancel' && m.id === call.id));
  assert.ok(heard.cancelled.includes(call.id));
  assert.deepEqual(heard.forgotten, [call.connection.id], 'the tab heard it was forgotten');
  // The person allows anyway, and a tab that ignores the relay's word answers: nothing to read it.
  decisions[0]();
  tab.client.socket.send(JSON.stringify({ type: 'result', id: call.id, data: { deleted: [1] } }));
  assert.equal((await modern('tasks/get', 3, { taskId: created.taskId })).status, 401, 'its token stopped at once');
  tab.close();
});
