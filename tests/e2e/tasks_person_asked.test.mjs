// A 2026-07-28 client that declares the tasks extension (io.modelcontextprotocol/tasks): a call
// that waits for the person becomes a task at once (the card as its status), the client polls
// it with tasks/get while the person takes their time, and reads the result inlined once they
// allowed it; a cancelled task stops the call in the tab; a task is its own connection's only;
// a client that declared no tasks is refused the methods and waits as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost, toolDef, waitFor } from './harness.mjs';

const TASKS = 'io.modelcontextprotocol/tasks';
let tab;
let token;
const decisions = new Map();
const cancelled = [];

before(async () => {
  tab = await openTab({
    tools: [toolDef('rows_delete', 'asks')],
    onCancel: (id) => cancelled.push(id),
    run: async (call) => {
      // The tab asks the person and waits for their decision.
      tab.client.asking(call.id, `Delete rows ${call.args.rows.join(', ')}?`);
      const allowed = await new Promise((resolve) => decisions.set(call.args.rows.join(','), resolve));
      tab.client.answered(call.id);
      return allowed ? { data: { deleted: call.args.rows } } : { data: { deleted: [] } };
    },
  });
  token = await accessToken(tab);
  await waitFor(async () => (await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools.some((t) => t.name === 'rows_delete'));
});
after(() => tab.close());

/** A 2026-07-28 request, the tasks extension declared unless `capabilities` says otherwise. */
function modern(method, id, params, { capabilities = { extensions: { [TASKS]: {} } }, name, bearer = token } = {}) {
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method };
  const named = name ?? params.name ?? params.taskId;
  if (named) headers['mcp-name'] = named;
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities };
  return mcpPost(bearer, { jsonrpc: '2.0', id, method, params: { ...params, _meta } }, headers);
}

const get = async (taskId) => (await modern('tasks/get', 90, { taskId })).body;

test('a call that asks the person is a task at once, polled until the person decides', { timeout: 60_000 }, async () => {
  const started = Date.now();
  const made = await modern('tools/call', 2, { name: 'rows_delete', arguments: { rows: [1, 2, 3] } });
  assert.equal(made.status, 200);
  const created = made.body.result;
  assert.equal(created.resultType, 'task', JSON.stringify(made.body));
  assert.ok(Date.now() - started < 5_000, 'the client hears of the task while the card waits');
  assert.ok(!('result' in created) && !('task' in created));
  // Polled while the person is asked: working, the card said.
  const working = (await get(created.taskId)).result;
  assert.equal(working.status, 'working');
  assert.match(working.statusMessage, /Delete rows 1, 2, 3\?/);
  // Another connection of the same pairing cannot see it.
  const other = await accessToken(tab);
  const foreign = await modern('tasks/get', 91, { taskId: created.taskId }, { bearer: other });
  assert.equal(foreign.body.error.code, -32602);
  // The person takes their time (longer than the poll interval), then allows.
  await new Promise((r) => setTimeout(r, created.pollIntervalMs + 500));
  assert.equal((await get(created.taskId)).result.status, 'working');
  decisions.get('1,2,3')(true);
  const done = await waitFor(async () => {
    const t = (await get(created.taskId)).result;
    return t.status === 'completed' && t;
  });
  assert.equal(done.result.isError, false);
  assert.match(done.result.content[0].text, /"deleted":\[1,2,3\]/);
});

test('a cancelled task stops the call in the tab and stays cancelled', { timeout: 30_000 }, async () => {
  const created = (await modern('tools/call', 3, { name: 'rows_delete', arguments: { rows: [7] } })).body.result;
  assert.equal(created.resultType, 'task');
  const ack = (await modern('tasks/cancel', 4, { taskId: created.taskId })).body.result;
  assert.deepEqual(Object.keys(ack).filter((k) => k !== '_meta'), ['resultType']);
  await waitFor(() => cancelled.length > 0);
  assert.equal((await get(created.taskId)).result.status, 'cancelled');
  // The person's late decision changes nothing.
  decisions.get('7')(true);
  // Whatever the tab sends for it leaves in the promise jobs the decision starts; a round trip
  // on the same socket after them comes back once the pairing has read it (no fixed wait).
  await new Promise((r) => setImmediate(r));
  await tab.client.connections();
  assert.equal((await get(created.taskId)).result.status, 'cancelled');
});

test('a client that declared no tasks is refused the methods and waits for its answer', { timeout: 30_000 }, async () => {
  const plain = { capabilities: {} };
  const refused = await modern('tasks/get', 5, { taskId: 'anything' }, plain);
  assert.equal(refused.body.error.code, -32021);
  assert.deepEqual(refused.body.error.data.requiredCapabilities, { extensions: { [TASKS]: {} } });
  const call = modern('tools/call', 6, { name: 'rows_delete', arguments: { rows: [9] } }, plain);
  await waitFor(() => decisions.has('9'));
  decisions.get('9')(true);
  const answered = (await call).body.result;
  assert.equal(answered.resultType, 'complete');
  assert.match(answered.content[0].text, /"deleted":\[9\]/);
});
