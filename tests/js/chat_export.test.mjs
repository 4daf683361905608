// The chat's export as Markdown, without a page: every entry in order, raw HTML escaped (a
// script the model or a tool wrote never runs where the file is shown), links to scripts left as
// text, and never the key (the conversation never holds it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConversation, safeMarkdown } from '../../tab/chat-conversation.js';

test('the export has the person’s words, the model’s, its calls, the results and the notes', () => {
  const talk = createConversation({ id: 'c' });
  talk.person('Highlight item 3', 1);
  talk.model({ provider: 'anthropic', model: 'claude-x', parts: [{ type: 'text', text: 'Sure.' }, { type: 'tool_call', id: 't', name: 'items_highlight', input: { ids: [3] } }], stop: 'tool', usage: {} }, 1);
  talk.toolResult({ callId: 't', name: 'items_highlight', content: 'ok' }, 1);
  talk.note('error', 'The provider is busy.', 1);
  const md = talk.toMarkdown('Chat in the demo');
  assert.equal(md, ['# Chat in the demo', '', '**You:** Highlight item 3', '', '**claude-x** (anthropic): Sure.', '- calls `items_highlight` with {"ids":[3]}', '', '- items_highlight answered: ok', '', '_error: The provider is busy._', ''].join('\n'));
});

test('raw HTML is escaped', () => {
  assert.equal(safeMarkdown('<script>alert(1)</script><img src=x onerror=alert(1)> & co'), '&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &amp; co');
});

test('links to scripts are left as text; others stay links', () => {
  assert.equal(safeMarkdown('[click](javascript:alert(1))'), '[click]\\(javascript:alert(1))');
  assert.equal(safeMarkdown('[x]( JaVa\tScRiPt:alert(1))'), '[x]\\( JaVa\tScRiPt:alert(1))');
  assert.equal(safeMarkdown('![p](data:text/html;base64,PHNjcmlwdD4=)'), '![p]\\(data:text/html;base64,PHNjcmlwdD4=)');
  assert.equal(safeMarkdown('[x](<javascript:alert(1)>)'), '[x]\\(&lt;javascript:alert(1)&gt;)');
  assert.equal(safeMarkdown('[ref]: vbscript:msgbox'), '\\[ref\\]: vbscript:msgbox');
  // A definition counts inside a list item or a quote, and its destination may be on the next line.
  assert.equal(safeMarkdown('- [ref]: javascript:alert(1)'), '- \\[ref\\]: javascript:alert(1)');
  assert.equal(safeMarkdown('1. [ref]: JavaScript:alert(1)'), '1. \\[ref\\]: JavaScript:alert(1)');
  assert.equal(safeMarkdown('[ref]:\n  javascript:alert(1)'), '\\[ref\\]:\n  javascript:alert(1)');
  assert.equal(safeMarkdown('- [ref]: https://example.com'), '- [ref]: https://example.com');
  assert.equal(safeMarkdown('[a\\]b]: javascript:alert(1)'), '\\[a\\]b\\]: javascript:alert(1)', 'a label with an escaped bracket');
  assert.equal(safeMarkdown('[docs](https://example.com/a)'), '[docs](https://example.com/a)');
  assert.equal(safeMarkdown('<javascript:alert(1)>'), '&lt;javascript:alert(1)&gt;');
});
