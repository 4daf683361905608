// A hello captured from one connection and replayed on another is refused: each socket gets a
// fresh challenge, so a signature proves one socket once. The replaying socket gets no power:
// it is never welcomed, a call made while it is open goes to the browser's own tab, its focus
// and its approval of a connect code go nowhere, and the pairing's count of tabs stays the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, callTool, MemoryStorage, rawTabSocket, pairingOf, connectedTabs, waitFor, register, pkcePair, openWaitingPage, RELAY, CALLBACK } from './harness.mjs';
import { CLOSE } from '../../tab/relay-client.js';

/** A WebSocket that records what the page sends, as someone watching the connection would. */
function recording(sent) {
  return class extends WebSocket {
    send(data) {
      sent.push(String(data));
      super.send(data);
    }
  };
}

test('a hello replayed on another socket is refused and the socket gets no call or approval power', async () => {
  const storage = new MemoryStorage();
  const sent = [];
  const victim = await openTab({ storage, WebSocket: recording(sent) });
  assert.equal(victim.connected.status, 'connected');
  const token = await accessToken(victim);
  const captured = sent.find((m) => m.startsWith('{') && JSON.parse(m).type === 'hello');
  assert.ok(JSON.parse(captured).signature, 'a signed hello was captured');
  assert.equal(await connectedTabs(token), 1);

  // A real code, waiting for approval, that the replaying socket tries to approve.
  const client = await register('Replayer');
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'replay' });
  const waiting = await openWaitingPage(url);
  assert.ok(waiting.code, 'a live code');

  const replay = rawTabSocket(`pairing=${pairingOf(victim)}`);
  await replay.challenge;
  replay.ws.send(captured);
  replay.ws.send(JSON.stringify({ type: 'focus', focused: true }));
  replay.ws.send(JSON.stringify({ type: 'approve', code: waiting.code }));
  // A call while the replaying socket is open: it goes to the browser's own tab.
  const during = await callTool(token, 'dataset_describe');
  // The socket is closed, or its approval answered: either way the approval was decided.
  const outcome = await Promise.race([
    replay.closed,
    waitFor(() => replay.messages.find((m) => ['approved', 'refused'].includes(m.type)), 10_000).then((m) => ({ answered: m })),
  ]);
  // Read where an approval would show: the code's page still polls "waiting", and the
  // browser's own tab finds the code undecided (not "already approved or denied").
  const status = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(waiting.code)}`, { headers: { cookie: waiting.cookie } });
  assert.equal((await status.json()).state, 'waiting', `the replay approved nothing: ${JSON.stringify(outcome)}`);
  assert.equal((await victim.client.describe(waiting.code)).client, 'Replayer', 'the code is still undecided');
  assert.equal(outcome.code, CLOSE.PROOF_FAILED, `the replay was refused: ${JSON.stringify(outcome)}`);
  assert.match(outcome.reason, /did not prove/);
  assert.equal(during.isError, false, JSON.stringify(during));
  assert.deepEqual(replay.messages.map((m) => m.type), ['challenge'], 'no welcome, no call, no answer to its approval');
  assert.equal(victim.calls.length, 1, 'the call reached the browser’s own tab');
  const after = await callTool(token, 'dataset_describe');
  assert.equal(after.isError, false);
  assert.equal(victim.calls.length, 2);
  assert.equal(await connectedTabs(token), 1, 'the pairing still holds its one tab');
  assert.equal(victim.client.status, 'connected');
  victim.close();
});
