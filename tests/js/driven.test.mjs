// The tab shows it is being driven: while an agent's call runs or waits for the person, the
// title and the favicon say so, and they are the app's own again after (a title the app set
// meanwhile kept); each part can be turned off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPresence } from '../../tab/presence.js';
import { createDrivenIndicator, drivenState, DRIVEN_ICONS } from '../../tab/driven.js';
import { MemoryStorage as Storage } from './memory_storage.mjs';

const TOOLS = [
  { name: 'read', title: 'Read values', safety: 'read' },
  { name: 'delete', title: 'Delete items', safety: 'destructive' },
];
const call = (tool, extra = {}) => ({ id: Math.random(), tool, args: {}, agent: 'Claude', connection: { id: 'c1' }, turn: 1, ...extra });
const tick = () => new Promise((r) => setTimeout(r, 0));

/** The part of a document the indicator uses: the title, the head's links. */
class FakeLink {
  constructor(href) {
    this.attrs = new Map([['rel', 'icon']]);
    if (href != null) this.attrs.set('href', href);
    this.removed = false;
  }
  getAttribute(k) {
    return this.attrs.has(k) ? this.attrs.get(k) : null;
  }
  setAttribute(k, v) {
    this.attrs.set(k, String(v));
  }
  removeAttribute(k) {
    this.attrs.delete(k);
  }
  remove() {
    this.removed = true;
    fakeHead.links = fakeHead.links.filter((l) => l !== this);
  }
}
const fakeHead = { links: [], append: (l) => fakeHead.links.push(l) };
function fakeDocument(icons = ['/icon.png']) {
  fakeHead.links = icons.map((h) => new FakeLink(h));
  return { title: 'Orders', head: fakeHead, body: null, querySelectorAll: () => [...fakeHead.links], createElement: () => new FakeLink(null) };
}

function presenceFor() {
  return createPresence({ app: 't', storage: new Storage(), tools: TOOLS, confirmKinds: { delete: ['deletes-saved'] } });
}

test('while a call runs the title and favicon say so; after, the app’s own come back', async () => {
  const presence = presenceFor();
  const document = fakeDocument();
  createDrivenIndicator({ presence, document, banner: false });
  let finish;
  const running = presence.run(call('read'), () => new Promise((r) => (finish = r)));
  await tick();
  assert.equal(document.title, '▶ Claude is using this tab · Orders');
  assert.equal(fakeHead.links[0].getAttribute('href'), DRIVEN_ICONS.running);
  finish({ data: 1 });
  await running;
  assert.equal(document.title, 'Orders');
  assert.equal(fakeHead.links[0].getAttribute('href'), '/icon.png');
});

test('while a call waits for the person they say it waits; a title the app set meanwhile stays the app’s', async () => {
  const presence = presenceFor();
  const document = fakeDocument([]);
  createDrivenIndicator({ presence, document, banner: false });
  const asked = presence.run(call('delete'), async () => ({ data: 1 }));
  await tick();
  assert.equal(drivenState(presence).state, 'asking');
  assert.equal(document.title, '⏸ Claude waits for you · Orders');
  assert.equal(fakeHead.links.length, 1, 'a page without a favicon gets one while driven');
  assert.equal(fakeHead.links[0].getAttribute('href'), DRIVEN_ICONS.asking);
  // The app changes its title while the call waits: the driven title follows it.
  document.title = 'Orders · March';
  presence.cancel(-1); // any change of the presence
  assert.equal(document.title, '⏸ Claude waits for you · Orders · March');
  presence.answer(presence.questions()[0].id, 'once');
  await asked;
  assert.equal(document.title, 'Orders · March');
  assert.equal(fakeHead.links.length, 0, 'the favicon added is gone again');
});

test('a stopped line no longer drives the tab; title and favicon can be turned off', async () => {
  const presence = presenceFor();
  const document = fakeDocument();
  createDrivenIndicator({ presence, document, title: false, favicon: false, banner: false });
  const asked = presence.run(call('delete'), async () => ({ data: 1 }));
  await tick();
  assert.equal(drivenState(presence).agents[0].agent, 'Claude');
  assert.equal(document.title, 'Orders');
  assert.equal(fakeHead.links[0].getAttribute('href'), '/icon.png');
  presence.stop(presence.lines()[0].key);
  await assert.rejects(asked);
  assert.equal(drivenState(presence).state, null);
});

test('the title’s verb agrees with how many agents drive the tab', async () => {
  const { drivenTitle } = await import('../../tab/driven.js');
  const one = [{ agent: 'Claude' }, { agent: 'Claude' }];
  const two = [{ agent: 'Data Analyst' }, { agent: 'ChatGPT' }];
  assert.equal(drivenTitle({ state: 'running', agents: one }, 'Orders'), '▶ Claude is using this tab · Orders');
  assert.equal(drivenTitle({ state: 'running', agents: two }, 'Orders'), '▶ Data Analyst and ChatGPT are using this tab · Orders');
  assert.equal(drivenTitle({ state: 'asking', agents: two }, 'Orders'), '⏸ Data Analyst and ChatGPT wait for you · Orders');
  assert.equal(drivenTitle({ state: null, agents: [] }, 'Orders'), 'Orders');
});
