// MCP subscriptions/listen (2026-07-28) on the pairing's change stream: the acknowledgement at
// once, then notifications/tools/list_changed (with the listen request's id) when the focused
// tab states a new list, when focus moves to a tab whose list differs (not when it is the
// same), and when the focused tab goes away; it needs a live token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, accessToken, MemoryStorage, toolDef, waitFor, listenStream } from './harness.mjs';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

const listen = listenStream;

/**
 * A listener on a connection of its own, for a check that something is NOT said: `end` forgets
 * that connection from `tab`, which ends its listen streams after everything the pairing wrote to
 * them before, and resolves when the stream has ended, with the changes it carried. So "no
 * change" is read at the stream's end, after the step, never after a fixed wait. `others` are
 * tabs whose earlier messages must be read by the pairing first (a round trip on each).
 */
async function ownListener(tab, others = [], notifications = { toolsListChanged: true }) {
  const before = new Set((await tab.client.connections()).map((c) => c.id));
  const token = await accessToken(tab);
  const id = (await tab.client.connections()).find((c) => !before.has(c.id)).id;
  for (const other of others) await other.client.connections();
  const s = await listen(token, notifications);
  await waitFor(() => s.events.length >= 1);
  assert.equal(s.events[0].method, 'notifications/subscriptions/acknowledged');
  return {
    ...s,
    /** Forgets the connection through `by` (the tab whose step is checked) once `others` are read. */
    end: async (by, ...others) => {
      for (const other of others) await other.client.connections();
      await by.client.forget(id);
      await s.reading;
      return s.changes();
    },
  };
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

  let n = await ownListener(a);
  a.client.setTools([toolDef('one'), toolDef('two')]);
  assert.equal(await n.end(a), 0, 'the same list again is no change');

  const b = await openTab({ storage, tools: [toolDef('one'), toolDef('two')] });
  a.client.setFocused(true);
  b.client.setFocused(true);
  // b's welcome focused it before its list came (one change to the bundled list and one back at
  // most); moving focus between equal lists is none.
  n = await ownListener(a, [b]);
  a.client.setFocused(true);
  assert.equal(await n.end(a), 0, 'focus moving between equal lists is no change');

  n = await ownListener(b, [a]);
  b.client.setTools([toolDef('three')]);
  assert.equal(await n.end(b), 0, 'a tab that is not focused changing its list is no change');
  const settled = s.changes();
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
  const n = await ownListener(a, [], {});
  assert.deepEqual(n.events[0].params.notifications, {});
  a.client.setTools([toolDef('one'), toolDef('two')]);
  assert.equal(await n.end(a), 0);
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
