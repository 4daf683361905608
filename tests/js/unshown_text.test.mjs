// Text from outside (an agent's name, a tool's words, an argument) is shown without the
// characters that change what a person reads unseen: a name that hides a zero-width space,
// a direction mark or a tag character is shown with a space where it hid, on every part of
// the person's side (the elements, the card's words, the record), the same characters the
// relay drops from a client's name (bundle/src/unshown.rs, one list for both ends).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNSHOWN, shownText } from '../../tab/generated/bundle.js';
import { shown, NAME_CHARS } from '../../tab/presence-elements.js';
import { createPresence } from '../../tab/presence.js';
import { createRecord, memoryBackend } from '../../tab/record.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

// Each hides in "Claude": a zero-width space, joiner and word joiner, a byte order mark, a soft
// hyphen, a left-to-right mark, an Arabic letter mark, a right-to-left override, an isolate, a
// line separator, a tag letter, a control character.
const HIDDEN = ['\u200B', '\u200D', '\u2060', '\uFEFF', '\u00AD', '\u200E', '\u061C', '\u202E', '\u2066', '\u2028', '\u{E0041}', '\u0007'];

test('a character that hides in a name is shown as a space, wherever the person reads it', () => {
  for (const c of HIDDEN) {
    const name = `Cl${c}aude`;
    const seen = `c${c.codePointAt(0).toString(16)}`;
    assert.equal(shownText(name, 80), 'Cl aude', seen);
    assert.equal(shown(name), 'Cl aude', `the elements: ${seen}`);
  }
});

test('letters, digits, spaces, punctuation and emoji of any script are shown as written', () => {
  for (const text of ['Claude', 'Ünïcödé Agent', 'Агент 7', '数据助手', 'وكيل ٣', 'a\u00A0b', 'It’s … done', '🙂 bot', '❤️']) {
    assert.equal(shownText(text, 80), text);
    assert.equal(text.replace(UNSHOWN, ''), text);
  }
});

test('text is cut to its length with an ellipsis, counted in characters, not UTF-16 units', () => {
  assert.equal(shown('x'.repeat(NAME_CHARS)), 'x'.repeat(NAME_CHARS));
  assert.equal(shown('x'.repeat(NAME_CHARS + 1)), `${'x'.repeat(NAME_CHARS - 1)}…`);
  assert.equal(shownText('🙂'.repeat(5), 5), '🙂'.repeat(5));
  assert.equal(shownText('🙂'.repeat(6), 5), `${'🙂'.repeat(4)}…`);
});

test('the record keeps an agent’s name as shown, with no character hiding in it', async () => {
  const tools = [{ name: 'read', title: 'Read values', safety: 'read' }];
  const presence = createPresence({ app: 't', storage: new Storage(), tools });
  const record = createRecord({ app: 't', backend: memoryBackend(), now: () => 1_000_000, channel: null });
  record.follow(presence);
  await record.ready;
  const door = record.door((c, fn) => presence.run(c, fn));
  for (const c of ['\u200B', '\u200E', '\u061C', '\u{E0041}']) {
    await door({ id: Math.random(), tool: 'read', args: {}, agent: `Cl${c}aude`, connection: { id: 'c1', host: 'claude.ai' }, turn: 1 }, async () => ({ data: {} }));
  }
  assert.deepEqual(record.entries().map((e) => e.agent), ['Cl aude', 'Cl aude', 'Cl aude', 'Cl aude']);
});
