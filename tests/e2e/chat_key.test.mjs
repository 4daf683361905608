// The person's key in the demo page's chat, in headless Chromium against a played provider:
// after a turn with a tool call, the key is nowhere in the DOM (shadow roots and field values
// included), in no storage but the one chosen (sessionStorage; with Remember, localStorage
// alone), not in the record (IndexedDB), the export, the console, a URL, the relay's socket or any
// request but the provider's own; Forget key removes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileChromium, cardSays, choose } from './demo_harness.mjs';
import { filePlayed, openChatDemo, say, chatShows, turnEnded, PLAYED_KEY } from './chat_harness.mjs';

const chromium = fileChromium();
const played = filePlayed();

/** Everything of the page where a key could be: the DOM with its shadow roots and fields, both storages, every IndexedDB. */
function pageHolds(page) {
  return page.evaluate(async () => {
    const dom = [];
    const walk = (root) => {
      for (const el of root.querySelectorAll('*')) {
        if ('value' in el && typeof el.value === 'string') dom.push(el.value);
        if (el.shadowRoot) {
          dom.push(el.shadowRoot.innerHTML);
          walk(el.shadowRoot);
        }
      }
    };
    dom.push(document.documentElement.outerHTML);
    walk(document);
    const dump = (s) => Object.fromEntries(Array.from({ length: s.length }, (_, i) => [s.key(i), s.getItem(s.key(i))]));
    const idb = [];
    for (const { name } of await indexedDB.databases()) {
      const db = await new Promise((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(open.error);
      });
      for (const store of db.objectStoreNames) {
        const all = await new Promise((resolve) => {
          const r = db.transaction(store).objectStore(store).getAll();
          r.onsuccess = () => resolve(r.result);
          r.onerror = () => resolve([]);
        });
        idb.push(JSON.stringify(all.map((x) => (x instanceof CryptoKey ? 'a CryptoKey' : x))));
      }
      db.close();
    }
    return { dom: dom.join('\n'), session: dump(sessionStorage), local: dump(localStorage), idb: idb.join('\n') };
  });
}

for (const remember of [false, true]) {
  test(`the key is kept ${remember ? 'in localStorage alone (Remember)' : 'in sessionStorage alone'} and goes nowhere but the provider`, async () => {
    const p = await played();
    const seen = [];
    const watch = (context) => {
      context.on('request', async (r) => seen.push({ url: r.url(), headers: JSON.stringify(await r.allHeaders().catch(() => r.headers())), body: r.postData() ?? '' }));
      context.on('console', (m) => seen.push({ url: 'console', headers: '', body: m.text() }));
      context.on('page', (pg) => pg.on('websocket', (ws) => ws.on('framesent', (f) => seen.push({ url: ws.url(), headers: '', body: String(f.payload) }))));
    };
    const { page, context } = await openChatDemo(await chromium(), p, { remember, watch });
    p.anthropic.script({ answer: [{ text: 'Deleting.' }, { tool: { name: 'items_delete', input: { ids: [9] } } }] }, { answer: [{ text: 'Deleted item 9.' }] });
    await say(page, 'Delete item 9');
    await cardSays(page, /delete/i);
    await choose(page, 'once');
    await chatShows(page, 'Deleted item 9.');
    await turnEnded(page, 1);
    const download = page.waitForEvent('download');
    await page.locator('#chat [part=export]').click();
    const exported = await (await download).createReadStream().then((s) => new Promise((resolve) => {
      let t = '';
      s.on('data', (c) => (t += c));
      s.on('end', () => resolve(t));
    }));
    assert.match(exported, /Delete item 9/);
    assert.ok(!exported.includes(PLAYED_KEY), 'not in the export');

    const held = await pageHolds(page);
    assert.ok(!held.dom.includes(PLAYED_KEY), 'not in the DOM');
    assert.ok(!held.idb.includes(PLAYED_KEY), 'not in IndexedDB (the record)');
    const kept = (s) => Object.entries(s).filter(([, v]) => v.includes(PLAYED_KEY)).map(([k]) => k);
    assert.deepEqual(kept(held.session), remember ? [] : ['tabrelay:chat-key:tabrelay-demo:anthropic']);
    assert.deepEqual(kept(held.local), remember ? ['tabrelay:chat-key:tabrelay-demo:anthropic'] : []);
    const carrying = seen.filter((r) => (r.url + r.headers + r.body).includes(PLAYED_KEY));
    assert.ok(carrying.length >= 3, 'the provider’s requests carry it');
    for (const r of carrying) {
      assert.ok(r.url.startsWith(`${p.anthropic.origin}/v1/`), `only the provider gets it, not ${r.url}`);
      assert.ok(!r.url.includes(PLAYED_KEY) && !r.body.includes(PLAYED_KEY), 'in a header, not the URL or the body');
    }
    assert.ok(seen.some((r) => r.url.startsWith('ws')), 'the relay’s socket was watched');

    await page.locator('#chat [part=forget-key]').click();
    const after = await pageHolds(page);
    assert.deepEqual([kept(after.session), kept(after.local)], [[], []], 'Forget key removes it');
    await context.close();
  });
}
