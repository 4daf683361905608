// What <tabrelay-chat> says of a tool call's line and of how long it took, without a page (the
// element itself is tested in Chromium, tests/e2e/chat_*): each state in words (waiting its
// turn, waiting for the card, running), and once ended its outcome and time, in ms under a
// second and in tenths of seconds above.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolLineWords, tookWords, LINE_WORDS } from '../../tab/chat-element.js';

test('a tool line says the tool, its arguments in words, and where the call is', () => {
  const line = { callId: 'c-1', tool: 'items_delete', words: 'ids: 5, 6', turn: 1, outcome: null, ms: null };
  assert.equal(toolLineWords({ ...line, state: 'queued' }), `items_delete (ids: 5, 6): ${LINE_WORDS.queued}`);
  assert.equal(toolLineWords({ ...line, state: 'asking' }), 'items_delete (ids: 5, 6): waiting for your answer on the card');
  assert.equal(toolLineWords({ ...line, state: 'running' }), 'items_delete (ids: 5, 6): running');
  assert.equal(toolLineWords({ ...line, state: 'ended', outcome: 'done', ms: 42.4 }), 'items_delete (ids: 5, 6): done in 42 ms');
  assert.equal(toolLineWords({ ...line, state: 'ended', outcome: 'not run: declined by the person', ms: 1540 }), 'items_delete (ids: 5, 6): not run: declined by the person in 1.5 s');
  assert.equal(toolLineWords({ ...line, words: '', state: 'running' }), 'items_delete: running', 'no arguments, no brackets');
});

test('how long a call took, in words', () => {
  assert.equal(tookWords(null), '');
  assert.equal(tookWords(0), '0 ms');
  assert.equal(tookWords(999), '999 ms');
  assert.equal(tookWords(1000), '1.0 s');
  assert.equal(tookWords(-3), '0 ms');
});
