// The chat bar's turn, without a page, wired by createTabrelay's `chat` option against a played
// provider (tests/played/providers.mjs): a typed request; the model's tool call goes through the
// same door as every agent's (the person's card, the record, the `call` event) with the chat as
// its connection, the model's name and the turn; Allow runs it and its result goes back to the
// model, whose answer ends the turn with a footer saying what left the browser; Deny goes back as
// the card's sentence; a question with choices (ask_person) ends the turn and a choice is the
// next message; the activity line's Stop ends the chat's turn and the next message goes on.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTabrelay } from '../../tab/tabrelay.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';
import { DATA_OPEN } from '../../tab/generated/bundle.js';

const TOOLS = [
  { name: 'orders_count', title: 'Count orders', description: 'Counts the orders.', safety: 'read', input: { type: 'object' } },
  { name: 'orders_read', title: 'Read orders', description: 'Reads the orders’ cells.', safety: 'read', input: { type: 'object' }, data: 'cells' },
  { name: 'orders_mean', title: 'Mean order', description: 'The mean order.', safety: 'read', input: { type: 'object' }, data: 'summaries', summaries_only: { result: ['mean'], errors: 'as_said' } },
  { name: 'orders_delete', title: 'Delete orders', description: 'Deletes orders.', safety: 'destructive', input: { type: 'object', properties: { ids: { type: 'array' } } } },
];
let played;
after(() => played?.close());
const tick = () => new Promise((r) => setTimeout(r, 0));
const until = async (test) => {
  for (let i = 0; i < 500 && !test(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(test(), 'waited for it');
};

async function wired() {
  played ||= await playProvider('anthropic');
  played.clear();
  const ran = [];
  const heard = [];
  const session = new MemoryStorage();
  const local = new MemoryStorage();
  const tabrelay = createTabrelay({
    relay: null,
    app: 'orders',
    tools: TOOLS,
    run: (name, input) => {
      ran.push({ name, input });
      if (name === 'orders_read') return { data: { cells: ['SECRET-CELL'] } };
      if (name === 'orders_mean') return { data: { mean: 12.5, values: ['SECRET-VALUE'] } };
      return { data: name === 'orders_count' ? { count: 3 } : { deleted: input.ids.length } };
    },
    confirmKinds: { orders_delete: ['deletes-saved'] },
    dataset: 'orders-2026',
    storage: new MemoryStorage(),
    channel: null,
    modelContext: null,
    start: false,
    window: null,
    document: null,
    chat: { origins: { anthropic: played.origin }, session, local },
  });
  tabrelay.on('call', (e) => heard.push(e));
  await tabrelay.registered;
  const chat = await tabrelay.chat;
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();
  return { tabrelay, chat, ran, heard, presence: tabrelay.presence, session, local };
}

test('a typed request: the tool call asks on the card, Allow runs it, the result goes back, the answer ends the turn', async () => {
  const { tabrelay, chat, ran, heard, presence } = await wired();
  played.script({ answer: [{ text: 'I will delete order 7.' }, { tool: { name: 'orders_delete', input: { ids: [7] } } }] }, { answer: [{ text: 'Order 7 is deleted.' }] });
  const turn = chat.send('Delete order 7');
  await until(() => presence.questions().length === 1);
  const q = presence.questions()[0];
  assert.equal(q.call.agent, 'Claude Played 1');
  assert.deepEqual({ ...q.call.connection }, { id: chat.id, kind: 'chat', client: 'your chat in this tab', host: '' });
  assert.equal(q.call.turn, 1);
  assert.match(q.choices.find((c) => c.choice === 'connection').words, /this chat/);
  assert.equal(ran.length, 0, 'nothing runs before the person answers');
  presence.answer(q.id, 'once');
  await turn;
  assert.deepEqual(ran, [{ name: 'orders_delete', input: { ids: [7] } }]);
  const back = played.calls()[1].body.messages.at(-1).content[0];
  assert.equal(back.type, 'tool_result');
  assert.equal(back.content, `${DATA_OPEN}{"deleted":1}</tabrelay-data>`);
  const said = chat.conversation.entries().filter((e) => e.kind === 'model').at(-1).parts[0].text;
  assert.equal(said, 'Order 7 is deleted.');
  assert.deepEqual(heard.map((e) => [e.agent, e.tool, e.outcome]), [['Claude Played 1', 'orders_delete', 'ok']]);
  await until(() => tabrelay.record.entries().length === 1);
  assert.deepEqual(
    tabrelay.record.entries().map((e) => [e.agent, e.connection, e.from, e.tool, e.outcome]),
    [['Claude Played 1', chat.id, 'the chat in this tab', 'orders_delete', 'done']],
  );
  assert.match(chat.footer(1), /^Sent to Anthropic \(127\.0\.0\.1:\d+\): the conversation so far, 1 tool result, the tools’ descriptions and the instructions, in 2 calls\.$/);
  assert.ok(played.calls()[0].body.system.includes('ask_person'), 'the instructions have the chat’s part');
  assert.ok(played.calls()[0].body.tools.some((t) => t.name === 'ask_person'));
});

test('Deny: the call does not run and the card’s sentence goes back to the model', async () => {
  const { chat, ran, presence } = await wired();
  played.script({ answer: [{ tool: { name: 'orders_delete', input: { ids: [1] } } }] }, { answer: [{ text: 'Understood.' }] });
  const turn = chat.send('Delete order 1');
  await until(() => presence.questions().length === 1);
  presence.answer(presence.questions()[0].id, 'deny');
  await turn;
  assert.equal(ran.length, 0);
  const back = played.calls().at(-1).body.messages.at(-1).content[0];
  assert.equal(back.is_error, true);
  assert.match(back.content, /declined|did not run/i);
});

test('ask_person: the choices end the turn; a choice is the person’s next message', async () => {
  const { chat } = await wired();
  played.script({ answer: [{ text: 'Which one?' }, { tool: { name: 'ask_person', input: { question: 'Delete which?', choices: ['Order 1', 'Order 2'] } } }] }, { answer: [{ text: 'Fine.' }] });
  const before = played.calls().length;
  await chat.send('Delete one');
  assert.deepEqual({ ...chat.asking(), choices: [...chat.asking().choices] }, { question: 'Delete which?', choices: ['Order 1', 'Order 2'] });
  assert.equal(played.calls().length, before + 1, 'the turn ended with the question');
  assert.equal(chat.choose('Order 3'), false, 'only a choice offered');
  await chat.choose('Order 2');
  assert.equal(chat.asking(), null);
  const sent = played.calls().at(-1).body.messages;
  // The question's result, then the choice, in the message after the model's call (the Messages API's rule).
  assert.deepEqual(sent.at(-1).content.map((c) => c.type), ['tool_result', 'text']);
  assert.equal(sent.at(-1).content[1].text, 'Order 2');
});

test('ask_person with one choice, or six, is refused to the model, which goes on', async () => {
  const { chat } = await wired();
  played.script({ answer: [{ tool: { name: 'ask_person', input: { question: 'Sure?', choices: ['Yes'] } } }] }, { answer: [{ text: 'Going on.' }] });
  await chat.send('Do it');
  assert.equal(chat.asking(), null);
  assert.match(played.calls().at(-1).body.messages.at(-1).content[0].content, /2 to 5 choices/);
});

test('the activity line’s Stop ends the chat’s turn; its next message goes on', async () => {
  const { chat, presence, ran } = await wired();
  played.script({ answer: [{ tool: { name: 'orders_delete', input: { ids: [2] } } }] });
  const before = played.calls().length;
  const turn = chat.send('Delete order 2');
  await until(() => presence.questions().length === 1);
  const line = presence.lines().find((l) => l.connection?.id === chat.id);
  presence.stop(line.key);
  await turn;
  assert.equal(ran.length, 0);
  assert.equal(played.calls().length, before + 1, 'no model call after Stop');
  assert.equal(chat.conversation.entries().at(-1).note, 'stopped');
  played.script({ answer: [{ tool: { name: 'orders_count', input: {} } }] }, { answer: [{ text: '3 orders.' }] });
  await chat.send('Count them');
  assert.deepEqual(ran, [{ name: 'orders_count', input: {} }], 'the chat goes on with the next message');
});

test('with the data switch on, the chat’s calls meet it as every agent’s, and the footer says values were kept out', async () => {
  const { tabrelay, chat, ran } = await wired();
  tabrelay.dataSwitch.set('orders-2026', true);
  played.script({ answer: [{ tool: { name: 'orders_read', input: {} } }, { tool: { name: 'orders_mean', input: {} } }] }, { answer: [{ text: 'The mean is 12.5.' }] });
  const before = played.calls().length;
  await chat.send('What is in the orders?');
  const sent = JSON.stringify(played.calls().slice(before));
  assert.ok(!sent.includes('SECRET-CELL') && !sent.includes('SECRET-VALUE'), 'no value reached the provider');
  assert.ok(sent.includes('12.5'), 'the summary did');
  assert.deepEqual(ran.map((r) => r.name), ['orders_mean'], 'the read of cells was refused before it ran');
  assert.match(chat.footer(chat.turn), /The data switch was on: values and pictures were kept out\.$/);
});
