// A call that waits for the person ends well in clients that give up early: a client named like
// ChatGPT (it gives up after about 60 s and takes no progress) gets the relay's "still being
// asked" answer before then, and a client that gave a progress token hears progress at least
// every 30 s while it waits. Both on a relay of this file's own with the default wait (225 s),
// in parallel, so the file takes about a minute.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTab, useRelay, startRelay, register, authorizeByHand, redeem, readEvents } from './harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'tabrelay-limits-'));
let relay;
let tab;

before(async () => {
  relay = await startRelay({ state: join(work, 'state') }); // CALL_WAIT_MS unset: 225 s
  useRelay(relay.url);
  tab = await openTab({ relay: relay.url, seed: 13 });
  // Every call asks the person, who never answers.
  tab.client.handle = (call) => {
    tab.client.asking(call.id, 'Delete 3 items from “Oak”?');
    return new Promise(() => {});
  };
});

after(() => {
  tab?.close();
  relay?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** An access token for a client registered under `name`. */
async function tokenFor(name) {
  const a = await authorizeByHand(tab, { client: await register(name) });
  const t = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  assert.equal(t.status, 200);
  return t.body.access_token;
}

/** Posts a tools/call and reads its event stream as it comes: each message with when it came. */
async function streamCall(token, params, { until = Infinity } = {}) {
  const started = Date.now();
  const controller = new AbortController();
  const r = await fetch(`${relay.url}/`, {
    method: 'POST',
    signal: controller.signal,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }),
  });
  assert.equal(r.status, 200);
  const messages = [];
  const stop = Number.isFinite(until) ? setTimeout(() => controller.abort(), until) : null;
  await readEvents(r.body, (message) => messages.push({ at: Date.now() - started, message }));
  clearTimeout(stop);
  return { messages, took: Date.now() - started };
}

test('a ChatGPT client is answered before its 60 s, and one with a progress token hears progress at least every 30 s', { timeout: 120_000 }, async () => {
  const [chatgpt, agent] = await Promise.all([tokenFor('ChatGPT'), tokenFor('Some agent')]);
  const call = { name: 'items_delete', arguments: { ids: [1, 2, 3] } };
  const [early, kept] = await Promise.all([
    streamCall(chatgpt, call),
    streamCall(agent, { ...call, _meta: { progressToken: 'p1' } }, { until: 70_000 }),
  ]);

  // ChatGPT: the answer, before it would give up (54 s: its 60 s less a tenth).
  const last = early.messages.at(-1);
  assert.equal(last.message.id, 1, 'the stream ends with the answer');
  assert.ok(last.at > 45_000 && last.at < 60_000, `answered after ${last.at} ms`);
  assert.equal(last.message.result.isError, true);
  assert.match(last.message.result.content[0].text, /being asked about this step.*Read the history once they have answered/s);

  // The other client: still waiting at 70 s (the relay's wait is 225 s), with progress.
  const progress = kept.messages.filter((m) => m.message.method === 'notifications/progress');
  assert.ok(!kept.messages.some((m) => m.message.id === 1), 'not answered yet: the wait is 225 s');
  assert.ok(progress.length >= 3, `progress: ${JSON.stringify(progress.map((p) => p.at))}`);
  const times = [0, ...progress.map((p) => p.at), kept.took];
  for (let i = 1; i < times.length; i++) {
    assert.ok(times[i] - times[i - 1] <= 31_000, `${times[i] - times[i - 1]} ms without progress (${times})`);
  }
  progress.forEach((p, i) => {
    assert.equal(p.message.params.progressToken, 'p1');
    assert.equal(p.message.params.progress, i + 1, 'the count grows by one');
    assert.match(p.message.params.message, /being asked about this step/, 'the card while the person is asked');
  });
});
