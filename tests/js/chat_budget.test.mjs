// The chat's token budget, without a page: every call counts (answers, calls tried or stopped,
// the summariser's), checked before each model call and before a retry, with one sentence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createConversation } from '../../tab/chat-conversation.js';

test('every call counts: answers, calls stopped or tried, and the summariser’s', () => {
  const talk = createConversation({ id: 'c', budget: 1000 });
  talk.person('hi', 1);
  talk.model({ provider: 'p', model: 'm', parts: [{ type: 'text', text: 'hello' }], stop: 'end', usage: { input: 100, output: 50 } }, 1);
  talk.note('stopped', 'Stopped mid-answer.', 1, { input: 120, output: 30 });
  talk.note('tried', 'The answer could not be read; asked once more.', 1, { input: 120, output: 0 });
  talk.person('again', 2);
  talk.summary('They said hi.', 2, { input: 200, output: 10 });
  assert.equal(talk.spent(), 150 + 150 + 120 + 210);
});

test('no call is made once the budget is spent, nor one that would pass it; a raised budget lets it go on', () => {
  const talk = createConversation({ id: 'c', budget: 300 });
  assert.equal(talk.budgetRefusal(100), null);
  talk.model({ provider: 'p', model: 'm', parts: [], stop: 'end', usage: { input: 200, output: 50 } }, 1);
  assert.match(talk.budgetRefusal(100), /next call would pass this chat’s token budget \(250 spent, about 100 more, of 300 tokens\)/);
  talk.note('stopped', 'x', 1, { input: 40, output: 20 });
  assert.match(talk.budgetRefusal(0), /has spent its token budget \(310 of 300 tokens\): raise the budget/);
  talk.setBudget(1000);
  assert.equal(talk.budgetRefusal(100), null);
  talk.setBudget(0);
  assert.equal(talk.budgetRefusal(1e9), null, 'no budget: no limit');
});
