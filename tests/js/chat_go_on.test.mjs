// A stopped chat goes on only as the activity line's "Let it go on" lets any agent go on: once
// the person's device confirmed it is them. A message typed into the chat is no proof (an agent
// driving the browser can type too): refused, no model call is made, the chat stays stopped and
// says why; once the device confirms, the message is sent and the chat's calls run again.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createChat } from '../../tab/chat.js';
import { createPresence } from '../../tab/presence.js';
import { PRESENCE } from '../../tab/generated/bundle.js';
import { playProvider, PLAYED_KEY } from '../played/providers.mjs';
import { MemoryStorage } from './memory_storage.mjs';

let played;
after(() => played?.close());

test('after Stop, a typed message lets the chat go on only once the person’s device confirms it', { timeout: 15_000 }, async () => {
  played = await playProvider('anthropic');
  let device = 'refuse';
  const asked = [];
  const confirmPresence = async (decision, subject) => {
    asked.push([decision, subject]);
    if (device === 'refuse') throw new Error('This device could not confirm it was you');
  };
  const presence = createPresence({ app: 'a', storage: new MemoryStorage(), tools: [{ name: 'slow', title: 'Slow read', safety: 'read' }], confirmPresence });
  let running;
  const ran = new Promise((r) => (running = r));
  const run = (signal) => {
    running();
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
  };
  const chat = createChat({ app: 'a', presence, handle: (call) => presence.run(call, run), tools: () => [{ name: 'slow', definition: { name: 'slow', description: 'Slow', inputSchema: { type: 'object' } } }], origins: { anthropic: played.origin }, session: new MemoryStorage(), local: new MemoryStorage() });
  chat.setKey('anthropic', PLAYED_KEY);
  await chat.listModels();

  // The person stops the chat while its tool call runs: the activity line's Stop holds it.
  played.script({ answer: [{ tool: { name: 'slow', input: {} } }] });
  const turn = chat.send('Read slowly');
  await ran;
  const line = presence.lines().find((l) => l.connection?.id === chat.id);
  presence.stop(line.key);
  await turn;
  assert.equal(chat.stopped, true);

  // A message typed now (by whoever types): the device refuses, nothing is sent.
  const calls = played.calls().length;
  const entries = chat.conversation.entries().length;
  assert.equal(await chat.send('Go on and do it all'), false);
  assert.deepEqual(asked, [[PRESENCE.SETTING, `go on\n${chat.id}`]], 'the same check as the activity line’s Let it go on');
  assert.equal(played.calls().length, calls, 'no model call');
  assert.equal(chat.stopped, true, 'still stopped');
  const added = chat.conversation.entries().slice(entries);
  assert.deepEqual(added.map((e) => [e.kind, e.note]), [['note', 'stopped']], 'the message is not in the conversation; a note says why');
  assert.match(added[0].text, /goes on only once your device confirms it is you \(This device could not confirm it was you\)/);

  // The person's device confirms: the message is sent and the chat goes on.
  device = 'confirm';
  played.script({ answer: [{ text: 'Going on.' }] });
  assert.equal(await chat.send('Go on'), true);
  assert.equal(chat.stopped, false);
  assert.equal(played.calls().length, calls + 1);
  assert.equal(chat.conversation.entries().at(-1).parts[0].text, 'Going on.');
});
