// A 2025-11-25 client that polls tasks (as VS Code does), here the official TypeScript SDK's
// own task support (client.experimental.tasks.callToolStream): the relay offers tasks for
// tools.call, a tool the person is asked about says it may run as one, the call becomes a task
// at once, the client polls tasks/get (the card as its status) while the person decides, then
// reads the result with tasks/result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { openTab, connectSdkClient, toolDef, waitFor } from './harness.mjs';

test('a session-era client polls the task while the person decides, then reads its result', { timeout: 60_000 }, async () => {
  let decide;
  const tab = await openTab({
    tools: [toolDef('rows_delete', 'asks'), toolDef('rows_count')],
    run: async (call) => {
      if (call.tool === 'rows_count') return { data: { rows: 12 } };
      tab.client.asking(call.id, 'Delete rows 2 and 3?');
      await new Promise((resolve) => (decide = resolve));
      tab.client.answered(call.id);
      return { data: { deleted: [2, 3] } };
    },
  });
  const { client } = await connectSdkClient(tab, 'VS Code-like e2e');
  assert.deepEqual(client.getServerCapabilities().tasks.requests.tools.call, {});
  const { tools } = await waitFor(async () => {
    const listed = await client.listTools();
    return listed.tools.some((t) => t.name === 'rows_delete') && listed;
  });
  assert.equal(tools.find((t) => t.name === 'rows_delete').execution.taskSupport, 'optional', 'the person is asked: it may be a task');
  assert.equal(tools.find((t) => t.name === 'rows_count').execution, undefined, 'a tool that runs at once is answered at once');
  const seen = [];
  const started = Date.now();
  const stream = client.experimental.tasks.callToolStream({ name: 'rows_delete', arguments: {} }, CallToolResultSchema, { task: { ttl: 600_000 } });
  let result;
  // The card is the status from when the tab's question reaches the relay (a poll between the
  // call reaching the tab and its question can say `working` alone); the person decides once a
  // poll has shown it and 3 s have passed (after 20 s without it, to end with the check below).
  let carded = 0;
  for await (const message of stream) {
    seen.push(message.type === 'taskStatus' ? `${message.type}:${message.task.status}` : message.type);
    if (message.type === 'taskCreated') assert.ok(Date.now() - started < 5_000, 'the task is made at once');
    if (message.type === 'taskStatus' && message.task.status === 'working') {
      if (message.task.statusMessage !== undefined) {
        assert.match(message.task.statusMessage, /Delete rows 2 and 3\?/);
        carded += 1;
      }
      const waited = Date.now() - started;
      if (decide && ((carded > 0 && waited > 3_000) || waited > 20_000)) decide();
    }
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') throw message.error;
  }
  assert.ok(carded >= 1, `a poll while the person decides shows the card: ${seen.join(' ')}`);
  assert.equal(seen[0], 'taskCreated');
  assert.ok(seen.filter((s) => s === 'taskStatus:working').length >= 2, seen.join(' '));
  assert.ok(seen.includes('taskStatus:completed'), seen.join(' '));
  assert.match(result.content[0].text, /"deleted":\[2,3\]/);
  // A plain call of the same client is answered as before.
  const counted = await client.callTool({ name: 'rows_count', arguments: {} });
  assert.match(counted.content[0].text, /"rows":12/);
  await client.close();
  tab.close();
});
