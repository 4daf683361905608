// MCP subscriptions/listen (2026-07-28) on the pairing's change stream: the acknowledgement at
// once, then notifications/tools/list_changed (with the listen request's id) when the focused
// tab states a new list, when focus moves to a tab whose list differs (not when it is the
// same), and when the focused tab goes away; it needs a live token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, accessToken, MemoryStorage, toolDef, waitFor, readEvents } from './harness.mjs';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Opens subscriptions/listen and reads its events into `events` as they come. */
async function listen(token, notifications = { toolsListChanged: true }) {
  const abort = new AbortController();
  const r = await fetch(RELAY, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'sub-1', method: 'subscriptions/listen', params: { notifications, _meta: META } }),
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  const events = [];
  const reading = readEvents(r.body, (m) => events.push(m));
  const changes = () => events.filter((e) => e.method === 'notifications/tools/list_changed').length;
  return { events, changes, stop: () => (abort.abort(), reading) };
}

/**
 * Waits until the pairing has read everything `tabs` sent (a round trip on each tab's socket
 * comes back after it), then a moment for a notification it wrote to cross the Worker: a change
 * the step made would be on the stream by then. (The stream carries no marker to wait on.)
 */
async function quiet(...tabs) {
  for (const tab of tabs) await tab.client.connections();
  await new Promise((r) => setTimeout(r, 250));
}

test('subscriptions/listen says when the focused tab’s list changes', async () => {
  const storage = new MemoryStorage();
  const a = await openTab({ storage, tools: [toolDef('one')] });
  const token = await accessToken(a);
  const s = await listen(token);
  await waitFor(() => s.events.length >= 1);
  assert.equal(s.events[0].method, 'notifications/subscriptions/acknowledged', 'the acknowledgement at once');
  assert.deepEqual(s.events[0].params.notifications, { toolsListChanged: true });

  a.client.setTools([toolDef('one'), toolDef('two')]);
  await waitFor(() => s.changes() === 1);

  a.client.setTools([toolDef('one'), toolDef('two')]);
  await quiet(a);
  assert.equal(s.changes(), 1, 'the same list again is no change');

  const b = await openTab({ storage, tools: [toolDef('one'), toolDef('two')] });
  await quiet(b);
  a.client.setFocused(true);
  b.client.setFocused(true);
  await quiet(a, b);
  // b's welcome focused it before its list came (one change to the bundled list and one back at
  // most); moving focus between equal lists is none.
  const settled = s.changes();
  a.client.setFocused(true);
  await quiet(a);
  assert.equal(s.changes(), settled, 'focus moving between equal lists is no change');

  b.client.setTools([toolDef('three')]);
  await quiet(b);
  assert.equal(s.changes(), settled, 'a tab that is not focused changing its list is no change');
  b.client.setFocused(true);
  await waitFor(() => s.changes() === settled + 1);

  b.close();
  await waitFor(() => s.changes() === settled + 2);
  a.close();
  await waitFor(() => s.changes() === settled + 3);
  for (const e of s.events) assert.equal(e.params._meta['io.modelcontextprotocol/subscriptionId'], 'sub-1');
  await s.stop();
});

test('a listener that did not ask for tool changes hears none', async () => {
  const a = await openTab({ tools: [toolDef('one')] });
  const token = await accessToken(a);
  const s = await listen(token, {});
  await waitFor(() => s.events.length >= 1);
  assert.deepEqual(s.events[0].params.notifications, {});
  a.client.setTools([toolDef('one'), toolDef('two')]);
  await quiet(a);
  assert.equal(s.changes(), 0);
  await s.stop();
  a.close();
});

test('subscriptions/listen needs a live token', async () => {
  const r = await fetch(RELAY, {
    method: 'POST',
    headers: { authorization: 'Bearer nope', 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { _meta: META } }),
  });
  assert.equal(r.status, 401);
  assert.match(r.headers.get('www-authenticate'), /Bearer/);
});
