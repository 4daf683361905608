// A client that listens to SSE gets its call as a stream: progress notifications carrying the
// tab's sentence while the person is asked (when it sent a progress token), the same sentences
// as log messages (a session-era client), then the result. A client that does not gets plain
// JSON at the end of the wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost, dataOf } from './harness.mjs';

const call = (id, meta) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'items_delete', arguments: { ids: [4] }, ...(meta ? { _meta: meta } : {}) } });

function askingTab(tab) {
  const run = tab.client.handle;
  tab.client.handle = async (c) => {
    tab.client.asking(c.id, 'Delete item 4?');
    await new Promise((r) => setTimeout(r, 300));
    tab.client.answered(c.id);
    return run(c);
  };
}

test('progress carries the card’s sentence while the person is asked, then the result', async () => {
  const tab = await openTab();
  const token = await accessToken(tab);
  askingTab(tab);
  const r = await mcpPost(token, call(5, { progressToken: 'tok-1' }));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /^text\/event-stream/);
  const progress = r.events.filter((m) => m.method === 'notifications/progress');
  assert.equal(progress.length, 2, r.raw);
  assert.deepEqual(progress.map((p) => p.params.progressToken), ['tok-1', 'tok-1']);
  assert.deepEqual(progress.map((p) => p.params.progress), [1, 2], 'progress grows');
  assert.match(progress[0].params.message, /being asked/);
  assert.ok(progress[0].params.message.includes('<tabrelay-data>"Delete item 4?"</tabrelay-data>'), progress[0].params.message);
  assert.match(progress[1].params.message, /allowed this step/);
  assert.equal(r.body.id, 5);
  assert.equal(r.body.result.isError, false);
  assert.equal(r.events.at(-1), r.body, 'the result comes last');
  tab.close();
});

test('without a progress token the stream carries no progress: what the tab said, as log messages, then the result', async () => {
  const tab = await openTab();
  const token = await accessToken(tab);
  askingTab(tab);
  const r = await mcpPost(token, call(6));
  assert.deepEqual(r.events.map((m) => m.method ?? m.id), ['notifications/message', 'notifications/message', 6], r.raw);
  const [asked, allowed] = r.events.map((m) => m.params);
  assert.deepEqual([asked.level, asked.logger, allowed.level], ['info', 'tab', 'info']);
  assert.ok(asked.data.includes('<tabrelay-data>"Delete item 4?"</tabrelay-data>'), asked.data);
  assert.match(allowed.data, /allowed this step/);
  tab.close();
});

test('a client that does not listen to SSE gets plain JSON', async () => {
  const tab = await openTab({ seed: 9 });
  const token = await accessToken(tab);
  askingTab(tab);
  const r = await mcpPost(token, call(7), { accept: 'application/json' });
  assert.match(r.headers.get('content-type'), /^application\/json/);
  assert.equal(r.body.id, 7);
  assert.equal(r.body.result.isError, false);
  const d = await mcpPost(token, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'dataset_describe' } }, { accept: 'application/json' });
  assert.equal(dataOf(d.body.result).name, tab.app.dataset.name);
  tab.close();
});
