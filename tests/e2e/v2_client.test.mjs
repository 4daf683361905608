// The MCP TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0), which speaks the
// 2026-07-28 stateless revision when asked to negotiate: it authorizes through the relay (DCR,
// PKCE, RFC 9207 iss checked) with a tab approving the connect code, lists the tools, calls one
// with a progress token that the tab answers, and all of it goes in the 2026-07-28 era:
// server/discover instead of initialize, no session, MCP-Protocol-Version / Mcp-Method /
// Mcp-Name on every POST, the per-request _meta envelope, and results carrying resultType.
// The relay's own replies (recorded through the client's fetch) are what is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { openTab, HeadlessProvider, RELAY, dataOf } from './harness.mjs';

const catalogue = JSON.parse(readFileSync(new URL('../../bundle/data/catalogue.json', import.meta.url), 'utf8'));
const MODERN = '2026-07-28';

/** The harness's headless provider, plus the discovery state v2 keeps across the redirect. */
class V2Provider extends HeadlessProvider {
  get clientMetadata() {
    return { ...super.clientMetadata, client_name: 'SDK v2 e2e client' };
  }
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A fetch that records each exchange with the relay's MCP endpoint: request and reply. */
function recordingFetch(exchanges) {
  return async (input, init = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const response = await fetch(input, init);
    if (url.origin === RELAY && url.pathname === '/' && (init.method ?? 'GET') === 'POST') {
      const headers = new Headers(init.headers);
      const body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
      const entry = { headers: Object.fromEntries(headers), body, status: response.status, replyHeaders: Object.fromEntries(response.headers) };
      exchanges.push(entry);
      // The reply's messages (JSON or SSE), read from a copy while the client reads the original.
      entry.reply = response
        .clone()
        .text()
        .then((text) => {
          if ((response.headers.get('content-type') || '').startsWith('text/event-stream')) {
            return text
              .split('\n\n')
              .map((b) => b.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'))
              .filter(Boolean)
              .map((d) => JSON.parse(d));
          }
          try {
            return text ? [JSON.parse(text)] : [];
          } catch {
            return [text];
          }
        });
    }
    return response;
  };
}

test('the SDK v2 client authorizes through the tab and calls a tool in the 2026-07-28 era', async () => {
  const tab = await openTab({ seed: 62 });
  assert.equal(tab.connected.status, 'connected');
  const provider = new V2Provider(tab);
  const exchanges = [];
  const make = () =>
    new StreamableHTTPClientTransport(new URL(`${RELAY}/`), { authProvider: provider, fetch: recordingFetch(exchanges) });
  // 'auto': server/discover first, the initialize handshake only if the server shows no 2026-07-28.
  const client = new Client({ name: 'sdk-v2-e2e', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  let transport = make();
  try {
    try {
      await client.connect(transport);
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
      // The redirect's parameters: the code and the issuer (RFC 9207), checked by the SDK.
      await transport.finishAuth(provider.lastRedirect.searchParams);
      transport = make();
      await client.connect(transport);
    }
    assert.equal(provider.pages.length, 1, 'one waiting page, approved once by the tab');
    assert.ok(provider.info?.client_id, 'the client registered (DCR)');
    assert.ok(provider.tokens()?.access_token, 'the client holds an access token');
    const era = { era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() };

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [...catalogue.tools.map((t) => t.name), 'status'].sort(), 'the bundled tools and status, by name');

    // With onprogress the call carries a progress token (the tab answers at once: none comes).
    const result = await client.callTool({ name: 'dataset_describe', arguments: {} }, { onprogress: () => {} });
    assert.equal(result.isError, false);
    assert.equal(dataOf(result).name, tab.app.dataset.name, 'the answer is the tab’s own dataset');
    assert.equal(tab.calls.at(-1).tool, 'dataset_describe');
    assert.equal(tab.calls.at(-1).agent, 'SDK v2 e2e client');

    // What went over the wire, after the authorization (before it, the probe met the 401).
    for (const x of exchanges) x.reply = await x.reply;
    const authorized = exchanges.filter((x) => x.headers.authorization);
    const wire = authorized.map((x) => ({ method: x.body?.method, status: x.status, version: x.headers['mcp-protocol-version'] }));
    const said = `the client negotiated ${JSON.stringify(era)}; the exchanges were ${JSON.stringify(wire)}; the relay answered server/discover with ${JSON.stringify(authorized.find((x) => x.body?.method === 'server/discover')?.reply)}`;

    assert.deepEqual(era, { era: 'modern', version: MODERN }, said);
    assert.deepEqual(authorized.map((x) => x.body?.method), ['server/discover', 'tools/list', 'tools/call'], said);
    for (const x of authorized) {
      assert.equal(x.headers['mcp-protocol-version'], MODERN, said);
      assert.equal(x.headers['mcp-method'], x.body.method, said);
      assert.equal(x.body.params._meta['io.modelcontextprotocol/protocolVersion'], MODERN);
      assert.equal(x.replyHeaders['mcp-session-id'], undefined, 'no session in the 2026-07-28 era');
      const answer = x.reply.find((m) => m.id === x.body.id);
      assert.equal(answer?.result?.resultType, 'complete', `the relay's ${x.body.method} result has resultType: ${JSON.stringify(answer)}`);
    }
    const [discover, list, call] = authorized.map((x) => x.reply.find((m) => m.id === x.body.id).result);
    assert.ok(discover.supportedVersions.includes(MODERN));
    assert.ok(discover.capabilities.tools);
    assert.equal(discover._meta?.['io.modelcontextprotocol/serverInfo']?.name, 'tabrelay');
    assert.ok(Number.isInteger(list.ttlMs) && ['public', 'private'].includes(list.cacheScope), 'tools/list carries ttlMs and cacheScope');
    assert.equal(authorized[2].headers['mcp-name'], 'dataset_describe');
    assert.notEqual(authorized[2].body.params._meta.progressToken, undefined, 'the call asked for progress');
    // Before the authorization, the probe met the relay's 401 and its challenge.
    assert.equal(exchanges[0].status, 401);
    assert.match(exchanges[0].replyHeaders['www-authenticate'], /resource_metadata=/);
    assert.ok(call.content[0].text.startsWith('<tabrelay-data>'));
    assert.equal(client.getServerVersion()?.name, 'tabrelay');
  } finally {
    await client.close();
    tab.close();
  }
});
