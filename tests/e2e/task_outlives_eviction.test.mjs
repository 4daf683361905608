// A task outlives the pairing's object: while the person takes their time over the card, the
// object is evicted (its tab stays connected); the task is read back from storage, polling it
// still says it waits for the person, and the person's decision completes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openTab, accessToken, mcpPost, toolDef, waitFor } from './harness.mjs';

const LOG = process.env.TABRELAY_WRANGLER_LOG;
const TASKS = 'io.modelcontextprotocol/tasks';

function modern(token, method, id, params) {
  const headers = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, 'mcp-name': params.name ?? params.taskId };
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
  return mcpPost(token, { jsonrpc: '2.0', id, method, params: { ...params, _meta } }, headers);
}

test('a task waiting for the person outlives an eviction and completes', { timeout: 240_000 }, async () => {
  let decide;
  const tab = await openTab({
    tools: [toolDef('rows_delete', 'asks')],
    run: async (call) => {
      tab.client.asking(call.id, 'Delete rows 4 and 5?');
      await new Promise((resolve) => (decide = resolve));
      tab.client.answered(call.id);
      return { data: { deleted: [4, 5] } };
    },
  });
  const token = await accessToken(tab);
  await waitFor(async () => (await mcpPost(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.result.tools.some((t) => t.name === 'rows_delete'));
  const tag = createHash('sha256').update(tab.client.pairing).digest('hex').slice(0, 8);
  const wakes = () => (readFileSync(LOG, 'utf8').match(new RegExp(`pairing ${tag} woke with 1 tabs`, 'g')) || []).length;
  const created = (await modern(token, 'tools/call', 2, { name: 'rows_delete', arguments: {} })).body.result;
  assert.equal(created.resultType, 'task');
  assert.equal(wakes(), 0);
  // Idle until the runtime evicts the object (about 40 s with a hibernated socket); each poll
  // after that wakes a new object, which reads the task back.
  for (let waited = 0; wakes() === 0 && waited < 180_000; waited += 30_000) {
    await new Promise((r) => setTimeout(r, 30_000));
    const polled = (await modern(token, 'tasks/get', 3, { taskId: created.taskId })).body.result;
    assert.equal(polled.status, 'working', JSON.stringify(polled));
    assert.match(polled.statusMessage, /Delete rows 4 and 5\?/);
  }
  assert.ok(wakes() >= 1, 'the object was evicted and woke with the tab still attached');
  decide();
  const done = await waitFor(async () => {
    const t = (await modern(token, 'tasks/get', 4, { taskId: created.taskId })).body.result;
    return t.status === 'completed' && t;
  });
  assert.match(done.result.content[0].text, /"deleted":\[4,5\]/);
  tab.close();
});
