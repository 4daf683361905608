// The pairing's change stream (GET /listen with the connection's bearer token): a keep-alive
// line at once, then {"tools_changed":true} when the focused tab states a new list, when focus
// moves to a tab whose list differs (not when it is the same), and when the focused tab goes
// away; it needs a live token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, accessToken, MemoryStorage, toolDef, waitFor } from './harness.mjs';

/** Reads the stream's lines into `lines` as they come; `stop()` ends the request. */
async function listen(token) {
  const abort = new AbortController();
  const r = await fetch(`${RELAY}/listen`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /ndjson/);
  const lines = [];
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let at;
        while ((at = buffer.indexOf('\n')) >= 0) {
          lines.push(JSON.parse(buffer.slice(0, at)));
          buffer = buffer.slice(at + 1);
        }
      }
    } catch {
      // aborted
    }
  })();
  return { lines, changes: () => lines.filter((l) => l.tools_changed).length, stop: () => (abort.abort(), reading) };
}

const quiet = () => new Promise((r) => setTimeout(r, 400));

test('/listen says when the focused tab’s list changes', async () => {
  const storage = new MemoryStorage();
  const a = await openTab({ storage, tools: [toolDef('one')] });
  const token = await accessToken(a);
  const s = await listen(token);
  await waitFor(() => s.lines.length >= 1);
  assert.deepEqual(s.lines[0], { tick: true }, 'a keep-alive at once');

  a.client.setTools([toolDef('one'), toolDef('two')]);
  await waitFor(() => s.changes() === 1);

  a.client.setTools([toolDef('one'), toolDef('two')]);
  await quiet();
  assert.equal(s.changes(), 1, 'the same list again is no change');

  const b = await openTab({ storage, tools: [toolDef('one'), toolDef('two')] });
  await quiet();
  a.client.setFocused(true);
  b.client.setFocused(true);
  await quiet();
  // b's welcome focused it before its list came (one change to the bundled list and one back at
  // most); moving focus between equal lists is none.
  const settled = s.changes();
  a.client.setFocused(true);
  await quiet();
  assert.equal(s.changes(), settled, 'focus moving between equal lists is no change');

  b.client.setTools([toolDef('three')]);
  await quiet();
  assert.equal(s.changes(), settled, 'a tab that is not focused changing its list is no change');
  b.client.setFocused(true);
  await waitFor(() => s.changes() === settled + 1);

  b.close();
  await waitFor(() => s.changes() === settled + 2);
  a.close();
  await waitFor(() => s.changes() === settled + 3);
  await s.stop();
});

test('/listen needs a live token', async () => {
  const r = await fetch(`${RELAY}/listen`, { headers: { authorization: 'Bearer nope' } });
  assert.equal(r.status, 401);
  assert.match(r.headers.get('www-authenticate'), /Bearer/);
});
