// The tab's generated reader and writer (tab/generated/wire.js, from the codec! declarations
// the relay reads and writes by) read every line of tests/data/wire/tab.txt and write it again
// byte for byte, as the relay's own test does (bundle/src/protocol.rs): the three ends cannot
// drift apart. And what is not a message is refused, never half read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readRelay, readTab, writeRelay, writeTab, RELAY_MESSAGES, TAB_MESSAGES } from '../../tab/generated/wire.js';

const golden = readFileSync(new URL('../data/wire/tab.txt', import.meta.url), 'utf8').split('\n');
const side = (name) => {
  const from = golden.indexOf(name) + 1;
  const to = golden.findIndex((l, i) => i >= from && (l.startsWith('#') || l === ''));
  return golden.slice(from, to);
};

test('every line the relay sends reads and is written again the same', () => {
  const lines = side('# relay');
  assert.ok(lines.length > 10);
  for (const line of lines) {
    const message = readRelay(line);
    assert.ok(message, line);
    assert.equal(writeRelay(message.type, message), line);
  }
  assert.deepEqual(new Set(lines.map((l) => JSON.parse(l).type)), new Set(Object.keys(RELAY_MESSAGES)), 'one of every message');
});

test('every line a tab sends reads and is written again the same', () => {
  const lines = side('# tab');
  assert.ok(lines.length > 10);
  for (const line of lines) {
    const message = readTab(line);
    assert.ok(message, line);
    assert.equal(writeTab(message.type, message), line);
  }
  assert.deepEqual(new Set(lines.map((l) => JSON.parse(l).type)), new Set(Object.keys(TAB_MESSAGES)), 'one of every message');
});

test('a missing field reads as its default, and a default is not written', () => {
  const welcome = readRelay('{"type":"welcome","pairing":"p","protocol":3}');
  assert.deepEqual(welcome, { type: 'welcome', pairing: 'p', protocol: 3, presence: null });
  const described = readRelay('{"type":"described","code":"C","client":"A","host":"h","age_ms":1}');
  assert.deepEqual(described.connections, []);
  assert.equal(writeTab('approve', { code: 'C', proof: null }), '{"type":"approve","code":"C"}');
  assert.equal(writeTab('result', { id: 1, data: null }), '{"type":"result","id":1,"data":null}');
});

test('what is not a message of the relay is refused', () => {
  for (const bad of [
    '', 'ping', '[]', 'null', '{}', '{"type":"launch"}', '{"type":"toString"}',
    '{"type":"cancel"}', // its id missing
    '{"type":"cancel","id":"7"}', // of another kind
    '{"type":"cancel","id":-1}',
    '{"type":"cancel","id":18446744073709551615}', // not exact in JavaScript
    '{"type":"connections","list":{}}',
    '{"type":"stopped","connection":"g1","stopped":"yes"}',
    '{"type":"welcome","pairing":"p","protocol":3,"presence":"k"}',
  ]) assert.equal(readRelay(bad), null, bad);
  assert.equal(readTab('{"type":"approve","code":"A","link":"B"}'), null, 'not both');
  assert.equal(readTab('{"type":"deny"}'), null, 'nor neither');
});

test('a tab message missing a field or of another kind is not written', () => {
  assert.throws(() => writeTab('focus', {}), TypeError);
  assert.throws(() => writeTab('focus', { focused: 'yes' }), TypeError);
  assert.throws(() => writeTab('deny', {}), TypeError);
  assert.throws(() => writeTab('deny', { code: 'A', link: 'B' }), TypeError);
  assert.throws(() => writeTab('launch', {}), TypeError);
  assert.equal(writeTab('step'), '{"type":"step"}');
});
