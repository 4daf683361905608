// The tab reads a connect code and a link reference by the relay's rule: the examples the
// bundle's own tests hold the relay to (bundle/data/code_examples.json), read here through the
// constants the generated bundle carries, give the same normal form or null.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connectCode, linkReference, normalCode, connectLinkFromFragment } from '../../tab/relay-client.js';
import { wholeCode, CODE_CHARS } from '../../tab/agents-panel.js';
import { CODE_LEN, CODE_LINK_LEN, CONNECT_FRAGMENT } from '../../tab/generated/bundle.js';

const EXAMPLES = JSON.parse(readFileSync(new URL('../../bundle/data/code_examples.json', import.meta.url), 'utf8'));

test('a typed code reads as the relay reads it', () => {
  assert.ok(EXAMPLES.codes.length >= 10);
  for (const [typed, normal] of EXAMPLES.codes) {
    assert.equal(connectCode(typed), normal, JSON.stringify(typed));
    assert.equal(wholeCode(typed), normal, `the panel: ${JSON.stringify(typed)}`);
  }
  assert.equal(CODE_CHARS, CODE_LEN);
});

test('a link reference reads as the relay reads it, from the waiting page’s fragment too', () => {
  assert.ok(EXAMPLES.links.length >= 5);
  for (const [sent, read] of EXAMPLES.links) {
    assert.equal(linkReference(sent), read, JSON.stringify(sent));
    const hash = `#${new URLSearchParams({ [CONNECT_FRAGMENT]: sent })}`;
    assert.equal(connectLinkFromFragment(hash), read, hash);
  }
  assert.equal(linkReference('A'.repeat(CODE_LINK_LEN)), 'A'.repeat(CODE_LINK_LEN));
});

test('an answer is matched by the same key as the request, whatever the relay echoes', () => {
  // The relay echoes a code's normal form, a link's upper-cased form, or (when it is neither)
  // the text as sent: the key of what was sent and of the echo agree.
  for (const [typed, normal] of EXAMPLES.codes) {
    const echo = normal ?? linkReference(typed) ?? typed;
    assert.equal(normalCode(typed), normalCode(echo), JSON.stringify(typed));
  }
  for (const [sent, read] of EXAMPLES.links) {
    const echo = read ?? connectCode(sent) ?? sent;
    assert.equal(normalCode(sent), normalCode(echo), JSON.stringify(sent));
  }
  assert.equal(normalCode(null), '');
});
