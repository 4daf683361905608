// Idle tabs cost nothing: the pairing's Durable Object is evicted while its tab stays
// connected (pings answered without waking it), and a call made after the eviction still
// reaches the tab, which the object finds again from its hibernated socket; what the tab stated
// (its tool list with the person's settings, its dataset) is still there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openTab, accessToken, callTool, MemoryStorage, dataOf, toolNames, waitFor } from './harness.mjs';
import { catalogueTools } from '../../tab/relay-client.js';

const LOG = process.env.TABRELAY_WRANGLER_LOG;

test('a call after the pairing was evicted reaches the tab', { timeout: 240_000 }, async () => {
  const storage = new MemoryStorage();
  const tab = await openTab({ storage, seed: 77, tools: catalogueTools({ history_undo: 'refused' }), dataset: 'Evicted set' });
  const token = await accessToken(tab);
  await waitFor(async () => !(await toolNames(token)).includes('history_undo'));
  assert.equal(dataOf(await callTool(token, 'dataset_describe')).name, tab.app.dataset.name);
  const pairing = tab.client.pairing;
  const tag = createHash('sha256').update(pairing).digest('hex').slice(0, 8);
  const wakes = () => (readFileSync(LOG, 'utf8').match(new RegExp(`pairing ${tag} woke with 1 tabs`, 'g')) || []).length;
  assert.equal(wakes(), 0);
  // Idle until the runtime evicts the object (about 40 s with a hibernated socket), then call.
  for (let waited = 0; wakes() === 0 && waited < 180_000; waited += 30_000) {
    await new Promise((r) => setTimeout(r, 30_000));
    const result = await callTool(token, 'dataset_describe');
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(dataOf(result).name, tab.app.dataset.name, 'the call reached the tab');
  }
  assert.ok(wakes() >= 1, 'the object was evicted and woke with the tab still attached');
  const names = await toolNames(token);
  assert.ok(names.includes('dataset_describe') && !names.includes('history_undo'), 'the tab’s list survived');
  assert.match((await callTool(token, 'status')).content[0].text, /Evicted set/, 'its dataset too');
  assert.equal(tab.statuses.filter((s) => s.status === 'connected').length, 1, 'the tab never reconnected');
  tab.close();
});
