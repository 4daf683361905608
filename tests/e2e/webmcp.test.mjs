// Every agent through one door, in a real Chromium with WebMCP on (--enable-features=WebMCP):
// the demo's tools, registered once through the tab end, are listed by the browser's
// `document.modelContext.getTools()` and by a remote MCP client; a remote call and an
// in-browser `executeTool` call of the destructive tool both raise the person's card (naming
// who asks); withdrawing a tool takes it from both (a remote listener hears list_changed); a
// tool the page registers with `document.modelContext` itself is relayed and asks the person
// first, and one whose input schema the relay could not state is left out without costing the
// others their place. An in-browser agent meets the same data switch and Stop, and reads why a
// call did not run as the tool's result (a thrown message would reach it as a bare
// UnknownError). A tool registered with an outputSchema is stated with it and called by the
// official SDK's client, which gets structured content.
// A cross-origin frame's tools, registered with allow="tools", are not in the top page's
// getTools(), a same-origin frame's are (so the bridge has no `frames` option). Without WebMCP
// the same page works with the relay alone (withdrawing included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, listenStream, dataOfText, APP_ORIGIN } from './harness.mjs';
import { fileChromium, fileSession, openDemo, connectThroughPage, namedProvider, cardSays, cardGone, choose, textOf, activityLines, SHOW_MS } from './demo_harness.mjs';
import { CATALOGUE } from '../../tab/generated/bundle.js';
import { SENTENCES } from '../../tab/presence.js';
import { DATA_SENTENCES } from '../../tab/data-guard.js';

const WEBMCP = ['--enable-features=WebMCP'];
const withWebMcp = fileChromium(WEBMCP);
const withoutWebMcp = fileChromium();
const CATALOGUE_NAMES = CATALOGUE.tools.map((t) => t.name).sort();
/** The demo page in Chromium with WebMCP, and the SDK client the person approved in it. */
const session = fileSession(async () => {
  const page = await openDemo(await withWebMcp());
  const { client, provider } = await connectThroughPage(page, 'webmcp-e2e', namedProvider(page, 'webmcp-e2e'));
  return { page, client, provider };
});

/** The tool names the browser's model context lists in `page`. */
function browserToolNames(page) {
  return page.evaluate(async () => (await document.modelContext.getTools()).map((t) => t.name).sort());
}

/** The tool names a remote client lists (the relay's own `status` tool left out). */
async function remoteToolNames(client) {
  const { tools } = await client.listTools();
  return tools.map((t) => t.name).filter((n) => n !== 'status').sort();
}

test('the demo’s tools, registered once, are listed by getTools() and by a remote MCP client', async () => {
  const { page, client } = await session();
  assert.equal(await page.evaluate(() => typeof document.modelContext?.registerTool), 'function', 'this Chromium has WebMCP on');
  assert.deepEqual(await browserToolNames(page), CATALOGUE_NAMES);
  assert.deepEqual(await remoteToolNames(client), CATALOGUE_NAMES);
  const annotations = await page.evaluate(async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.annotations])));
  assert.equal(annotations.items_delete.consequentialHint, true);
  assert.equal(annotations.items_values.readOnlyHint, true);
});

test('a remote call and an in-browser executeTool call of the destructive tool both raise the card', async () => {
  const { page, client } = await session();
  const remote = client.callTool({ name: 'items_delete', arguments: { ids: [1] } });
  assert.match(await cardSays(page, /asks to delete item 1/), /^webmcp-e2e asks to delete item 1/);
  await choose(page, 'once');
  const done = await remote;
  assert.equal(done.isError, false, textOf(done));
  assert.equal(dataOfText(textOf(done)).deleted, 1);
  await cardGone(page);

  // An agent in this browser calls the same tool through WebMCP: the same card, naming it.
  await page.evaluate(() => {
    window.inBrowserCall = (async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'items_delete');
      return document.modelContext.executeTool(tool, { ids: [2] });
    })().then((text) => ({ text }), (e) => ({ error: `${e.name}: ${e.message}` }));
  });
  assert.match(await cardSays(page, /asks to delete item 2/), /^an agent in this browser asks to delete item 2/);
  const who = await page.locator('#confirm [part=who]').textContent();
  assert.equal(who, 'Who asks: an agent in this browser');
  assert.equal(await page.evaluate(() => document.querySelector('#history').textContent.includes('an agent in this browser')), false, 'nothing ran before the person answered');
  await choose(page, 'once');
  const answered = await page.evaluate(() => window.inBrowserCall);
  assert.ok(answered.text, JSON.stringify(answered));
  assert.equal(JSON.parse(answered.text).data.deleted, 1);
  await cardGone(page);
  await waitFor(async () => (await activityLines(page)).some((l) => l.startsWith('an agent in this browser: done')), SHOW_MS);

  // Deny: the in-browser agent reads that the person declined, as the result; nothing is deleted.
  const items = await page.evaluate(() => document.querySelector('#plot').getAttribute('aria-label'));
  await page.evaluate(() => {
    window.inBrowserCall = (async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'items_delete');
      return document.modelContext.executeTool(tool, { ids: [3] });
    })().then((text) => ({ text }), (e) => ({ error: e.name }));
  });
  await cardSays(page, /asks to delete item 3/);
  await choose(page, 'deny');
  const declined = await page.evaluate(() => window.inBrowserCall);
  assert.match(declined.text ?? declined.error, /^The person declined “.+”, so nothing was changed\.$/);
  assert.equal(await page.evaluate(() => document.querySelector('#plot').getAttribute('aria-label')), items, 'nothing deleted');
});

/** Starts an in-browser agent's executeTool call of `name` in `page`; `settled(page)` reads how it ended. */
function inBrowserCall(page, name, input) {
  return page.evaluate(
    ([n, i]) => {
      window.inBrowserCall = (async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === n);
        return document.modelContext.executeTool(tool, i);
      })().then((text) => ({ text }), (e) => ({ error: e.name }));
    },
    [name, input],
  );
}
const settled = (page) => page.evaluate(() => window.inBrowserCall);

test('an in-browser agent meets the same data switch and the same Stop', async () => {
  const { page } = await session();
  const toggle = page.locator('#data-switch [part=switch]');
  await toggle.check();
  try {
    await inBrowserCall(page, 'items_values', { ids: [5] });
    const refused = await settled(page);
    assert.equal(refused.text ?? refused.error, DATA_SENTENCES.REFUSED.replace('{tool}', '“items_values”'), 'a cell read is refused, and it reads why');
    await waitFor(async () => /an agent in this browser · items_values · error: The person set this dataset/.test(await page.textContent('#calls')), SHOW_MS);
  } finally {
    await toggle.uncheck();
  }
  await inBrowserCall(page, 'items_values', { ids: [5] });
  assert.equal(typeof JSON.parse((await settled(page)).text).data.items[0].score, 'number', 'off: it reads');

  await inBrowserCall(page, 'items_delete', { ids: [6] });
  await cardSays(page, /^an agent in this browser asks to delete item 6/);
  await page.locator('#activity [part~=acting] [part=stop]').click();
  const stopped = await settled(page);
  assert.equal(stopped.text ?? stopped.error, SENTENCES.STOPPED, 'Stop refuses the call, and it reads why');
  await cardGone(page);
  await waitFor(async () => (await activityLines(page)).some((l) => l.startsWith('an agent in this browser: stopped')), SHOW_MS);
});

test('withdrawing a tool takes it from the browser and from remote agents, who hear list_changed', async () => {
  const { page, client, provider } = await session();
  const listener = await listenStream(provider.tokens().access_token);
  try {
    await waitFor(() => listener.events.length >= 1); // the acknowledgement: the listener is on
    await page.evaluate(() => window.tabrelayDemo.withdraw('group_rename'));
    await waitFor(async () => !(await remoteToolNames(client)).includes('group_rename'));
    await waitFor(() => listener.changes() >= 1);
    assert.deepEqual(await browserToolNames(page), CATALOGUE_NAMES.filter((n) => n !== 'group_rename'));
    await assert.rejects(client.callTool({ name: 'group_rename', arguments: { group: 'g1', name: 'x' } }), /no tool named "group_rename"/);
  } finally {
    await listener.stop();
  }
});

test('a tool the page registers with document.modelContext itself is relayed, and asks before it runs', async () => {
  const { page, client } = await session();
  await page.evaluate(async () => {
    window.pageToolRuns = [];
    // Chromium takes an input schema of any type; MCP states an object's only (the relay refuses
    // a whole list for one such): this one is left out, the others stay.
    await document.modelContext.registerTool({ name: 'note_word', description: 'Takes a bare word.', inputSchema: { type: 'string' }, execute: () => 1 });
    return document.modelContext.registerTool({
      name: 'note_pin',
      title: 'Pin a note',
      description: 'Pins a note above the chart.',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { consequentialHint: true },
      execute: (input) => (window.pageToolRuns.push(input), { pinned: input.text }),
    });
  });
  await waitFor(async () => (await remoteToolNames(client)).includes('note_pin'));
  assert.deepEqual(await remoteToolNames(client), (await browserToolNames(page)).filter((n) => n !== 'note_word'), 'note_word is left out, the rest listed');
  const pin = (await client.listTools()).tools.find((t) => t.name === 'note_pin');
  assert.deepEqual([pin.title, pin.inputSchema.required], ['Pin a note', ['text']], 'its title and schema as the page wrote them');
  const call = client.callTool({ name: 'note_pin', arguments: { text: 'hello' } });
  await cardSays(page, /webmcp-e2e asks to /);
  assert.deepEqual(await page.evaluate(() => window.pageToolRuns), [], 'it waits for the person');
  await choose(page, 'once');
  const done = await call;
  assert.equal(done.isError, false, textOf(done));
  assert.deepEqual(dataOfText(textOf(done)), { pinned: 'hello' });
  assert.deepEqual(await page.evaluate(() => window.pageToolRuns), [{ text: 'hello' }]);
});

test('a tool registered with an outputSchema is stated with it, and the official SDK’s client gets its result as structured content too', async () => {
  // The SDK's client refuses a result without structuredContent from a tool stated with an
  // outputSchema (-32600): the relay adds it (the tab says the result is the tool's object).
  const { page, client } = await session();
  await page.evaluate(() =>
    window.tabrelayDemo.bridge.registerTool({
      name: 'notes_count',
      description: 'Counts the notes.',
      outputSchema: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
      annotations: { readOnlyHint: true },
      execute: () => ({ count: 3 }),
    }),
  );
  await waitFor(async () => (await remoteToolNames(client)).includes('notes_count'));
  const { tools } = await client.listTools();
  assert.deepEqual(tools.find((t) => t.name === 'notes_count').outputSchema, { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] });
  const done = await client.callTool({ name: 'notes_count', arguments: {} });
  assert.equal(done.isError, false, textOf(done));
  assert.deepEqual(done.structuredContent, { count: 3 });
  assert.deepEqual(dataOfText(textOf(done)), { count: 3 });
});

test('a cross-origin frame’s tools, registered with allow="tools", are not in the top page’s getTools() (a same-origin frame’s are)', async () => {
  // Pages the test serves itself (the demo's CSP allows no frame): a top page of the app's
  // origin, and a frame page there and on another origin of this machine (the host swapped).
  const app = new URL(APP_ORIGIN);
  const other = `http://${app.hostname === 'localhost' ? '127.0.0.1' : 'localhost'}:${app.port || 80}`;
  const registers = (name) => `<script>document.modelContext.registerTool({ name: '${name}', description: 'A frame’s tool.', execute: () => 1 }).then(() => parent.postMessage('${name}: registered', '*'), (e) => parent.postMessage('${name}: ' + e.name, '*'));</script>`;
  const page = await (await withWebMcp()).newPage();
  try {
    await page.route(`${APP_ORIGIN}/webmcp-top`, (route) => route.fulfill({ contentType: 'text/html', body: '<p>top</p>' }));
    await page.route(`${APP_ORIGIN}/webmcp-frame`, (route) => route.fulfill({ contentType: 'text/html', body: registers('same_origin_tool') }));
    await page.route(`${other}/webmcp-frame`, (route) => route.fulfill({ contentType: 'text/html', body: registers('cross_origin_tool') }));
    await page.goto(`${APP_ORIGIN}/webmcp-top`);
    const said = await page.evaluate(
      (sources) =>
        new Promise((resolve) => {
          const heard = [];
          window.addEventListener('message', (e) => {
            heard.push(e.data);
            if (heard.length === sources.length) resolve(heard.sort());
          });
          setTimeout(() => resolve(heard.sort()), 10_000);
          for (const src of sources) document.body.append(Object.assign(document.createElement('iframe'), { src, allow: 'tools' }));
        }),
      [`${APP_ORIGIN}/webmcp-frame`, `${other}/webmcp-frame`],
    );
    assert.deepEqual(said, ['cross_origin_tool: registered', 'same_origin_tool: registered'], 'both frames registered their tool');
    assert.deepEqual(await browserToolNames(page), ['same_origin_tool'], 'the cross-origin frame’s tool is not listed in the top page');
  } finally {
    await page.close();
  }
});

test('without WebMCP the same page works with the relay alone', async () => {
  const page = await openDemo(await withoutWebMcp());
  try {
    assert.equal(await page.evaluate(() => 'modelContext' in document), false, 'this Chromium has no WebMCP');
    const { client } = await connectThroughPage(page, 'relay-alone-e2e', namedProvider(page, 'relay-alone-e2e'));
    assert.deepEqual(await remoteToolNames(client), CATALOGUE_NAMES);
    const call = client.callTool({ name: 'items_delete', arguments: { ids: [4] } });
    await cardSays(page, /relay-alone-e2e asks to delete item 4/);
    await choose(page, 'once');
    const done = await call;
    assert.equal(done.isError, false, textOf(done));
    assert.equal(dataOfText(textOf(done)).deleted, 1);
    // Withdrawing a tool takes it from the relay here too (no browser list to follow).
    await page.evaluate(() => window.tabrelayDemo.withdraw('items_highlight'));
    await waitFor(async () => !(await remoteToolNames(client)).includes('items_highlight'));
    assert.deepEqual(await remoteToolNames(client), CATALOGUE_NAMES.filter((n) => n !== 'items_highlight'));
    await client.close();
  } finally {
    await page.close();
  }
});
