// Questions in the agent app for session-era clients (issue 13 item 4): a tab's inputRequired
// reaches a 2025-11-25 client that declared elicitation at initialize as elicitation/create on
// the call's stream; its answer (a separate POST) reaches the waiting call, and the tab's next
// round gets it. The official TS SDK client, with its own elicitation handler, does it all;
// the rules around it are checked by hand: only the connection asked may answer, a client
// that declared nothing gets the sentence as before, a session id the relay did not give this
// connection is "session not found" (404).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { RELAY, connectSdkClient, openTab, accessToken, mcpPost, toolDef, waitFor, readEvents } from './harness.mjs';

const INPUT_NOT_POSSIBLE = /needs an answer from the agent's app that this client cannot give/;

let tab;
let token;
let other;
const seen = [];
before(async () => {
  tab = await openTab({
    tools: [toolDef('ask_name')],
    run: (call) => {
      seen.push(call);
      const answer = call.input?.responses?.who;
      if (answer && call.input?.state?.round === 1) {
        if (answer.error) return { data: { said: `error ${answer.error.code}` } };
        if (answer.action !== 'accept') return { data: { said: answer.action } };
        return { data: { greeting: `Hello, ${answer.content?.name}` } };
      }
      return { inputRequired: { who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } } }, state: { round: 1 } };
    },
  });
  token = await accessToken(tab);
  other = await accessToken(tab);
  await waitFor(async () => (await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools.some((t) => t.name === 'ask_name'));
});
after(() => tab.close());

/** The official SDK client declaring elicitation, with `answer` as its handler. */
async function sdkClient(answer) {
  const asked = [];
  const { client, transport } = await connectSdkClient(tab, 'session-elicitation-e2e', undefined, { capabilities: { elicitation: {} } }, (c) =>
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params);
    }),
  );
  return { client, transport, asked };
}

/** A session by hand: its id, from an initialize declaring `capabilities`. */
async function initialize(accessTokenOf, capabilities) {
  const r = await mcpPost(accessTokenOf, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'by-hand', version: '1' } } }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(r.status, 200);
  const id = r.headers.get('mcp-session-id');
  assert.ok(id, 'the initialize answer carries a session id');
  return id;
}

const sessionHeaders = (session) => ({ 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session });

test("the SDK client's elicitation handler is asked the tab's question and the tab's next round gets its answer", async () => {
  const { client, transport, asked } = await sdkClient(() => ({ action: 'accept', content: { name: 'Ada' } }));
  try {
    assert.ok(transport.sessionId, 'the relay gave a session id');
    const before = seen.length;
    const result = await client.callTool({ name: 'ask_name', arguments: {} });
    assert.equal(asked.length, 1, 'the handler was asked once');
    assert.equal(asked[0].message, 'Your name?');
    assert.equal(asked[0].requestedSchema.properties.name.type, 'string');
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.match(result.content[0].text, /Hello, Ada/);
    assert.equal(seen.length, before + 2, 'two rounds reached the tab');
    assert.deepEqual(seen.at(-1).input, { responses: { who: { action: 'accept', content: { name: 'Ada' } } }, state: { round: 1 } });
  } finally {
    await client.close();
  }
});

test('a person declining in the agent app, or the client failing, is an answer the tab gets too', async () => {
  const declined = await sdkClient(() => ({ action: 'decline' }));
  try {
    const r = await declined.client.callTool({ name: 'ask_name', arguments: {} });
    assert.match(r.content[0].text, /decline/);
  } finally {
    await declined.client.close();
  }
  const failing = await sdkClient(() => {
    throw new Error('no person here');
  });
  try {
    const r = await failing.client.callTool({ name: 'ask_name', arguments: {} });
    assert.match(r.content[0].text, /error -?\d+/);
    assert.ok(seen.at(-1).input.responses.who.error, 'the error came to the tab as the answer');
  } finally {
    await failing.client.close();
  }
});

test('only the connection asked can answer: another connection is refused and the call still waits for the right one', async () => {
  const session = await initialize(token, { elicitation: {} });
  const abort = new AbortController();
  const res = await fetch(`${RELAY}/`, {
    method: 'POST',
    signal: abort.signal,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...sessionHeaders(session) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask_name', arguments: { by: 'hand' } } }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const messages = [];
  const reading = readEvents(res.body, (m) => messages.push(m));
  const question = await waitFor(() => messages.find((m) => m.method === 'elicitation/create'));
  assert.match(question.id, /^tabrelay-/, 'the relay made the id');
  const rounds = seen.length;
  const answer = (name) => ({ jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { name } } });

  // Another connection of the same pairing (its own token, even its own session) is refused.
  const otherSession = await initialize(other, { elicitation: {} });
  const foreign = await mcpPost(other, answer('Mallory'), sessionHeaders(otherSession));
  assert.equal(foreign.status, 400);
  assert.equal(foreign.body.error.code, -32600);
  // An id never asked is refused too.
  const unknown = await mcpPost(token, { ...answer('Ada'), id: 'tabrelay-nothing' }, sessionHeaders(session));
  assert.equal(unknown.status, 400);
  assert.equal(seen.length, rounds, 'nothing reached the tab');

  const right = await mcpPost(token, answer('Ada'), sessionHeaders(session));
  assert.equal(right.status, 202);
  await reading;
  const end = messages.find((m) => m.id === 7);
  assert.match(end.result.content[0].text, /Hello, Ada/);
  assert.equal(seen.at(-1).input.responses.who.content.name, 'Ada');
  // Answered once: the same answer again is no longer waited for.
  assert.equal((await mcpPost(token, answer('Ada'), sessionHeaders(session))).status, 400);
});

test('a client that did not declare elicitation, or sent no session id, gets the sentence as before', async () => {
  const session = await initialize(token, { sampling: {} });
  const withSession = await mcpPost(token, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'ask_name', arguments: {} } }, sessionHeaders(session));
  assert.equal(withSession.status, 200);
  assert.match(withSession.body.result.content[0].text, INPUT_NOT_POSSIBLE);
  assert.ok(!(withSession.events ?? []).some((m) => m.method === 'elicitation/create'));
  const without = await mcpPost(token, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'ask_name', arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' });
  assert.match(without.body.result.content[0].text, INPUT_NOT_POSSIBLE);
});

test("a session id the relay did not give this connection is 'session not found' (404)", async () => {
  const session = await initialize(token, { elicitation: {} });
  const list = { jsonrpc: '2.0', id: 3, method: 'tools/list' };
  assert.equal((await mcpPost(token, list, sessionHeaders(session))).status, 200);
  for (const [who, id] of [[other, session], [token, session.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))], [token, '1fsur.forged']]) {
    const r = await mcpPost(who, list, sessionHeaders(id));
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, -32001);
  }
  // An initialize carrying a stale id starts a new session.
  const again = await mcpPost(other, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, sessionHeaders(session));
  assert.equal(again.status, 200);
  assert.notEqual(again.headers.get('mcp-session-id'), session);
});
