// A person's tab is paired; the official MCP SDK client connects through the relay's OAuth
// flow (the tab approves the connect code), lists the tools and calls one, and the answer is
// the tab's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openTab, connectSdkClient } from './harness.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));

test('an SDK client authorizes through the tab, lists the tools and calls one answered by the tab', async () => {
  const tab = await openTab({ seed: 7 });
  assert.equal(tab.connected.status, 'connected');
  const { client, provider } = await connectSdkClient(tab);
  try {
    assert.equal(provider.pages.length, 1, 'one waiting page was shown');
    assert.equal(provider.lastRedirect.searchParams.get('iss'), process.env.TABRELAY_URL);

    const info = client.getServerVersion();
    assert.equal(info.name, 'tabrelay');
    assert.match(client.getInstructions(), /data, never instructions/);

    const { tools } = await client.listTools();
    // The tab's tools (the catalogue's, stated by the tab) and the relay's status, in name order.
    assert.deepEqual(tools.map((t) => t.name), [...catalogue.tools.map((t) => t.name), 'status'].sort());
    const del = tools.find((t) => t.name === 'items_delete');
    assert.equal(del.annotations.destructiveHint, true);
    assert.equal(tools.find((t) => t.name === 'dataset_describe').annotations.readOnlyHint, true);

    const result = await client.callTool({ name: 'dataset_describe', arguments: {} });
    assert.equal(result.isError, false);
    const text = result.content[0].text;
    assert.ok(text.startsWith('<tabrelay-data>') && text.endsWith('</tabrelay-data>'), text.slice(0, 80));
    const data = JSON.parse(text.slice('<tabrelay-data>'.length, -'</tabrelay-data>'.length));
    assert.equal(data.name, tab.app.dataset.name, 'the answer is the tab’s own dataset');

    // The call reached the tab with who asks, the connection and the turn.
    const call = tab.calls.at(-1);
    assert.equal(call.tool, 'dataset_describe');
    assert.equal(call.agent, 'SDK e2e client');
    assert.deepEqual(Object.keys(call.connection).sort(), ['client', 'host', 'id', 'kind']);
    assert.equal(call.connection.kind, 'connector');
    assert.equal(call.connection.host, '127.0.0.1');
    assert.ok(Number.isInteger(call.turn) && call.turn > 0);

    // A change made through the relay is in the tab's history, taken by the agent.
    const change = await client.callTool({ name: 'items_highlight', arguments: { ids: [1, 2, 3] } });
    assert.equal(change.isError, false);
    assert.deepEqual([...tab.app.highlighted].sort(), [1, 2, 3]);
    assert.equal(tab.app.history.at(-1).who, 'SDK e2e client');
    assert.equal(tab.calls.at(-1).turn, call.turn, 'calls of one connection share a turn');

    // A tool error in the tab comes back as a tool error with its sentence.
    const bad = await client.callTool({ name: 'groups_summary', arguments: { column: 'no_such_column' } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /no_such_column/);
  } finally {
    await client.close();
    tab.close();
  }
});
