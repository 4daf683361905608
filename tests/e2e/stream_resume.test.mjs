// Streams that survive a drop (issue 13 item 5, 2025-11-25): a call's stream to a client with
// a session opens with a priming event (an id, empty data, a retry) and numbers its events;
// when the stream drops, the call keeps running in the tab, and the client that comes back
// with GET and Last-Event-ID gets the rest: the end if it came meanwhile, else the call's
// events until its end. Another connection gets nothing of it. (Under wrangler dev a dropped
// stream reaches the pairing only when the Worker next writes to it, so the pairing's side of
// a drop seen at once is shown by the native simulation in src/pairing/room/tests/calls.rs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, accessToken, mcpPost, waitFor, readEvents } from './harness.mjs';

let tab;
let token;
let other;
const held = [];
const cancels = [];
before(async () => {
  tab = await openTab();
  token = await accessToken(tab);
  other = await accessToken(tab);
  const run = tab.client.handle;
  tab.client.handle = (c) => new Promise((resolve) => held.push({ c, answer: () => resolve(run(c)) }));
  tab.client.onCancel = (id) => cancels.push(id);
});
after(() => tab.close());

async function session(accessTokenOf) {
  const r = await mcpPost(accessTokenOf, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, { 'mcp-protocol-version': '2025-11-25' });
  return r.headers.get('mcp-session-id');
}

/** Raw SSE events (id, data) of a response body as they come, until `stop` or its end. */
function events(body) {
  const seen = [];
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const done = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const lines = buffer.slice(0, cut).split('\n');
          buffer = buffer.slice(cut + 2);
          const field = (k) => lines.find((l) => l.startsWith(`${k}:`))?.slice(k.length + 1).trimStart();
          if (lines.every((l) => l.startsWith(':'))) continue;
          seen.push({ id: field('id'), retry: field('retry'), data: field('data') ?? '' });
        }
      }
    } catch (e) {
      if (e.name !== 'AbortError') throw e;
    }
  })();
  return { seen, done };
}

function post(accessTokenOf, sessionId, id, meta = undefined) {
  const abort = new AbortController();
  const response = fetch(`${RELAY}/`, {
    method: 'POST',
    signal: abort.signal,
    headers: { authorization: `Bearer ${accessTokenOf}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'history_list', arguments: {}, ...(meta ? { _meta: meta } : {}) } }),
  });
  return { abort, response };
}

function resume(accessTokenOf, sessionId, lastEventId) {
  return fetch(`${RELAY}/`, {
    headers: { authorization: `Bearer ${accessTokenOf}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25', 'last-event-id': lastEventId },
  });
}

/** Opens a call's stream, reads its priming event, then drops the stream: the last event id. */
async function dropAfterPriming(sessionId, id, meta) {
  const before = held.length;
  const { abort, response } = post(token, sessionId, id, meta);
  const res = await response;
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const stream = events(res.body);
  await waitFor(() => stream.seen.length >= 1 && held.length > before, 5000);
  const [priming] = stream.seen;
  assert.ok(priming.id, 'the priming event has an id');
  assert.equal(priming.data, '', 'and empty data');
  assert.ok(Number(priming.retry) > 0, 'and a retry');
  abort.abort();
  await stream.done;
  return { lastEventId: priming.id, call: held.at(-1) };
}

test('a call whose stream dropped keeps running, and its end waits for the client that comes back', async () => {
  const s = await session(token);
  const { lastEventId, call } = await dropAfterPriming(s, 71);
  // The tab finishes while nobody listens.
  await new Promise((r) => setTimeout(r, 300));
  call.answer();
  await tab.client.connections(); // a round trip after the result reached the pairing
  assert.equal(cancels.includes(call.c.id), false, 'the tab was not told to drop the call');
  // Another connection (its own session) cannot take it up, and takes nothing away.
  assert.equal((await resume(other, await session(other), lastEventId)).status, 405);
  const res = await resume(token, s, lastEventId);
  assert.equal(res.status, 200);
  const back = events(res.body);
  await back.done;
  const [priming, end] = back.seen;
  assert.equal(priming.data, '', 'a resumed stream opens with its own priming event');
  const message = JSON.parse(end.data);
  assert.equal(message.id, 71);
  assert.equal(message.result.isError, false);
  assert.ok(end.id && end.id !== lastEventId, 'numbered on');
  // Taken up once.
  assert.equal((await resume(token, s, lastEventId)).status, 405);
});

test('a client that comes back while the call runs gets its progress and its end on the new stream', async () => {
  const s = await session(token);
  const { lastEventId, call } = await dropAfterPriming(s, 72, { progressToken: 'p-72' });
  const res = await resume(token, s, lastEventId);
  assert.equal(res.status, 200);
  const back = events(res.body);
  await waitFor(() => back.seen.length >= 1, 5000);
  tab.client.asking(call.c.id, 'Delete 3 rows?');
  await waitFor(() => back.seen.some((e) => e.data.includes('notifications/progress')), 5000);
  const progress = JSON.parse(back.seen.find((e) => e.data.includes('notifications/progress')).data);
  assert.equal(progress.params.progressToken, 'p-72', 'the progress token came back with the event id');
  assert.ok(progress.params.progress >= 1);
  call.answer();
  await back.done;
  const end = JSON.parse(back.seen.at(-1).data);
  assert.equal(end.id, 72);
  assert.equal(end.result.isError, false);
});

test('a GET naming no call of the relay, or without a session, is 405 as before', async () => {
  const s = await session(token);
  for (const last of ['garbage', 'Nw.1', 'OTk5.3']) assert.equal((await resume(token, s, last)).status, 405, last);
  const noSession = await fetch(`${RELAY}/`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'last-event-id': 'Nw.1' } });
  assert.equal(noSession.status, 405);
  const forged = await resume(token, '1f.forged', 'Nw.1');
  assert.equal(forged.status, 404, 'a session id not the relay\'s is session-not-found');
});
