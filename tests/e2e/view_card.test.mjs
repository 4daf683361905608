// The view card (MCP Apps): resources/read serves it as text/html;profile=mcp-app, the status
// tool declares it, and in a real Chromium, hosted the way an agent app hosts an MCP App (a
// sandboxed iframe talking JSON-RPC over postMessage), it shows the tool's answer, Refresh asks
// its host to call `status` again (answered by the relay), Open in the app asks the host to
// open APP_URL, and it reaches nothing on the network.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTab, accessToken, mcpPost, waitFor, APP_ORIGIN } from './harness.mjs';
import { launchChromium } from './demo_harness.mjs';

let tab;
let token;
let browser;
before(async () => {
  tab = await openTab({ seed: 73, dataset: 'Orders <b>2026</b>' });
  token = await accessToken(tab);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  tab.close();
});

const call = (id, method, params = {}) => mcpPost(token, { jsonrpc: '2.0', id, method, params });

test('the card is listed, read as an MCP App and declared by the status tool', async () => {
  const list = await call(1, 'resources/list');
  const card = list.body.result.resources.find((r) => r.uri === 'ui://tabrelay/view');
  assert.equal(card.mimeType, 'text/html;profile=mcp-app');
  const read = await call(2, 'resources/read', { uri: 'ui://tabrelay/view' });
  const contents = read.body.result.contents[0];
  assert.equal(contents.mimeType, 'text/html;profile=mcp-app');
  assert.deepEqual(contents._meta.ui.csp.connectDomains, []);
  assert.match(contents.text, /default-src 'none'/);
  const tools = (await call(3, 'tools/list')).body.result.tools;
  assert.equal(tools.find((t) => t.name === 'status')._meta.ui.resourceUri, 'ui://tabrelay/view');
  const missing = await call(4, 'resources/read', { uri: 'ui://tabrelay/nope' });
  assert.equal(missing.body.error.code, -32602);
});

test('hosted in Chromium, the card shows, refreshes through its host and opens the app', async () => {
  const html = (await call(5, 'resources/read', { uri: 'ui://tabrelay/view' })).body.result.contents[0].text;
  const page = await browser.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const host = { asked: [], opened: [] };
  // The host forwards the card's tools/call to the relay, as an agent app does.
  await page.exposeFunction('relayCall', async (params) => (await call(6, 'tools/call', params)).body.result);
  await page.exposeFunction('recordAsk', (m) => host.asked.push(m));
  await page.exposeFunction('recordOpen', (url) => host.opened.push(url));
  await page.setContent('<iframe id="card" sandbox="allow-scripts"></iframe>');
  await page.evaluate((cardHtml) => {
    const frame = document.getElementById('card');
    window.addEventListener('message', async (event) => {
      if (event.source !== frame.contentWindow) return;
      const m = event.data;
      window.recordAsk(m.method);
      const reply = (result) => frame.contentWindow.postMessage({ jsonrpc: '2.0', id: m.id, result }, '*');
      if (m.method === 'ui/initialize') reply({ protocolVersion: '2026-01-26', hostInfo: { name: 'test-host', version: '1' }, hostCapabilities: {} });
      else if (m.method === 'tools/call') reply(await window.relayCall(m.params));
      else if (m.method === 'ui/open-link') {
        window.recordOpen(m.params.url);
        reply({});
      }
    });
    frame.srcdoc = cardHtml;
  }, html);
  const frame = page.frameLocator('#card');
  await waitFor(() => host.asked.includes('ui/notifications/initialized'));

  // The host hands the card the status tool's result.
  const first = (await call(7, 'tools/call', { name: 'status', arguments: {} })).body.result;
  await page.evaluate((result) => {
    document.getElementById('card').contentWindow.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: result }, '*');
  }, first);
  const shown = frame.locator('#shown');
  await waitFor(async () => (await shown.textContent()).includes('Orders'));
  // The page's name is shown as the text it is: marked as data, never as markup.
  assert.match(await shown.textContent(), /<tabrelay-data>.*Orders \\u003cb>2026\\u003c\/b>/s);
  assert.equal(await frame.locator('b').count(), 0);

  tab.client.setView({ dataset: 'Invoices' });
  await frame.locator('#refresh').click();
  await waitFor(async () => (await shown.textContent()).includes('Invoices'));
  assert.ok(host.asked.includes('tools/call'));

  await frame.locator('#open').click();
  await waitFor(() => host.opened.length === 1);
  assert.ok(host.opened[0].startsWith(APP_ORIGIN), host.opened[0]);

  // Nothing but the host page itself was loaded: the card reached no network.
  assert.deepEqual(requests.filter((u) => !u.startsWith('about:') && !u.startsWith('data:')), []);
  await page.close();
});
