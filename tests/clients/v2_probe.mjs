// What the MCP TypeScript SDK v2 client (@modelcontextprotocol/client) sends, recorded against
// small local HTTP servers written here (no relay, no network beyond 127.0.0.1). Run by hand:
//   node tests/clients/v2_probe.mjs [scenario ...]     (all scenarios when none is named)
// It prints, per scenario, every HTTP request the client made (method, path, the headers that
// matter, the JSON body) with the fake server's answer, and what the client concluded.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const SHOWN_HEADERS = ['accept', 'content-type', 'authorization', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'last-event-id'];
const MODERN = '2026-07-28';
const TOOL = { name: 'dataset_describe', description: 'Describes the dataset.', inputSchema: { type: 'object', properties: { detail: { type: 'string' } } } };

/** A local server answering with `handle(req, body, url)`; records every exchange. */
async function fakeServer(handle) {
  const log = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString();
    let body;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const url = new URL(req.url, 'http://x');
    const headers = Object.fromEntries(SHOWN_HEADERS.filter((h) => req.headers[h] !== undefined).map((h) => [h, req.headers[h]]));
    const entry = { request: `${req.method} ${url.pathname}${url.search}`, headers, body };
    log.push(entry);
    const answer = (await handle(req, body, url, server)) ?? { status: 404, json: { error: 'not_found' } };
    entry.answer = answer.sse ? { status: 200, sse: answer.sse } : { status: answer.status, json: answer.json };
    const h = { ...(answer.headers || {}) };
    if (answer.sse) {
      res.writeHead(200, { 'content-type': 'text/event-stream', ...h });
      for (const m of answer.sse) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
      return res.end();
    }
    if (answer.json === undefined) {
      res.writeHead(answer.status, h);
      return res.end();
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...h });
    res.end(JSON.stringify(answer.json));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  return { base, log, close: () => new Promise((r) => server.close(r)) };
}

const rpc = (id, result) => ({ jsonrpc: '2.0', id, result });
const rpcError = (id, code, message, data) => ({ jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } });
const serverInfo = { name: 'fake', version: '0.0.1' };

/** A 2026-07-28 server: server/discover, tools/list, tools/call (SSE with one progress). */
function modernHandler(req, body) {
  if (req.method !== 'POST') return { status: 405 };
  if (body.id === undefined) return { status: 202 };
  const meta = { 'io.modelcontextprotocol/serverInfo': serverInfo };
  switch (body.method) {
    case 'server/discover':
      return { status: 200, json: rpc(body.id, { resultType: 'complete', supportedVersions: [MODERN], capabilities: { tools: {} }, instructions: 'fake', ttlMs: 60000, cacheScope: 'public', _meta: meta }) };
    case 'tools/list':
      return { status: 200, json: rpc(body.id, { resultType: 'complete', tools: [TOOL], ttlMs: 60000, cacheScope: 'public', _meta: meta }) };
    case 'tools/call': {
      const token = body.params?._meta?.progressToken;
      const sse = [];
      if (token !== undefined) sse.push({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2, message: 'halfway' } });
      sse.push(rpc(body.id, { resultType: 'complete', content: [{ type: 'text', text: 'answered' }], isError: false, _meta: meta }));
      return { sse };
    }
    default:
      return { status: 404, json: rpcError(body.id, -32601, 'Method not found') };
  }
}

/** A 2025-11-25 server written by hand: initialize, sessions; `discover` says how it refuses the probe. */
function legacyHandler(discover) {
  const session = randomUUID();
  return (req, body) => {
    if (req.method === 'GET') return { status: 405 };
    if (req.method === 'DELETE') return { status: 200 };
    if (body.method === 'server/discover') return discover(body);
    if (body.method === 'initialize') {
      return { status: 200, headers: { 'mcp-session-id': session }, json: rpc(body.id, { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo }) };
    }
    if (body.id === undefined) return { status: 202 };
    if (body.method === 'tools/list') return { status: 200, json: rpc(body.id, { tools: [TOOL] }) };
    if (body.method === 'tools/call') return { status: 200, json: rpc(body.id, { content: [{ type: 'text', text: 'answered' }], isError: false }) };
    return { status: 404, json: rpcError(body.id, -32601, 'Method not found') };
  };
}

/** Connects, lists, calls with a progress token; returns what the client saw. */
async function drive(base, { mode, authProvider, requestInit } = {}) {
  const seen = { progress: [] };
  const client = new Client({ name: 'v2-probe', version: '1.0.0' }, mode ? { versionNegotiation: { mode } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/`), { authProvider, requestInit });
  try {
    await client.connect(transport);
    seen.era = client.getProtocolEra?.();
    seen.version = client.getNegotiatedProtocolVersion();
    seen.server = client.getServerVersion();
    seen.tools = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.callTool({ name: 'dataset_describe', arguments: { detail: 'short' } }, { onprogress: (p) => seen.progress.push(p) });
    seen.result = result;
  } catch (e) {
    seen.error = `${e.constructor?.name}: ${e.message}`;
    seen.errorCode = e.code;
  } finally {
    await client.close().catch(() => {});
  }
  return seen;
}

/** The OAuth side: a provider that mints codes itself from the authorization URL it is given. */
class ProbeProvider {
  constructor({ metadataUrl } = {}) {
    if (metadataUrl) this.clientMetadataUrl = metadataUrl;
    this.authorizationUrls = [];
  }
  get redirectUrl() {
    return 'http://127.0.0.1:9/callback';
  }
  get clientMetadata() {
    return { client_name: 'v2 probe', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t) {
    this.saved = t;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(s) {
    this.discovery = s;
  }
  discoveryState() {
    return this.discovery;
  }
  redirectToAuthorization(url) {
    this.authorizationUrls.push(url.toString());
  }
}

/** A modern server behind OAuth: PRM, AS metadata (with or without CIMD), DCR, token. */
function oauthHandler({ cimd }) {
  return (req, body, url, server) => {
    const base = `http://127.0.0.1:${server.address().port}`;
    if (url.pathname === '/.well-known/oauth-protected-resource' || url.pathname === '/.well-known/oauth-protected-resource/') {
      return { status: 200, json: { resource: base, authorization_servers: [base], scopes_supported: ['tab'] } };
    }
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      return {
        status: 200,
        json: {
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          response_types_supported: ['code'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          authorization_response_iss_parameter_supported: true,
          ...(cimd ? { client_id_metadata_document_supported: true } : {}),
        },
      };
    }
    if (url.pathname === '/register') return { status: 201, json: { client_id: 'dcr-client', ...body } };
    if (url.pathname === '/token') return { status: 200, json: { access_token: 'probe-access', token_type: 'Bearer', expires_in: 3600, refresh_token: 'probe-refresh' } };
    if (url.pathname !== '/') return undefined;
    if (req.headers.authorization !== 'Bearer probe-access') {
      return { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"` }, json: { error: 'invalid_token' } };
    }
    return modernHandler(req, body);
  };
}

async function oauthScenario({ cimd, metadataUrl }) {
  const s = await fakeServer(oauthHandler({ cimd }));
  const provider = new ProbeProvider({ metadataUrl });
  const client = new Client({ name: 'v2-probe', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  let transport = new StreamableHTTPClientTransport(new URL(`${s.base}/`), { authProvider: provider });
  const seen = {};
  try {
    await client.connect(transport);
    seen.connectedWithoutAuth = true;
  } catch (e) {
    seen.firstConnect = `${e.constructor?.name}: ${e.message}`;
    seen.unauthorized = e instanceof UnauthorizedError;
    const authUrl = new URL(provider.authorizationUrls.at(-1));
    seen.authorizationUrl = Object.fromEntries(authUrl.searchParams);
    seen.clientId = provider.info?.client_id;
    await transport.finishAuth(new URLSearchParams({ code: 'probe-code', iss: s.base }));
    transport = new StreamableHTTPClientTransport(new URL(`${s.base}/`), { authProvider: provider });
    await client.connect(transport);
    seen.era = client.getProtocolEra?.();
    seen.version = client.getNegotiatedProtocolVersion();
    seen.tools = (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close().catch(() => {});
  }
  await s.close();
  return { seen, log: s.log };
}

/** A 2025 server made with the v1 SDK (the stateful Streamable HTTP transport). */
async function sdkV1Server() {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const transports = new Map();
  return fakeServerRaw(async (req, res, body) => {
    const sid = req.headers['mcp-session-id'];
    let t = sid && transports.get(sid);
    if (!t) {
      t = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (id) => transports.set(id, t) });
      const server = new McpServer({ name: 'v1-sdk-server', version: '1.32.2' });
      server.tool('dataset_describe', 'Describes the dataset.', async () => ({ content: [{ type: 'text', text: 'answered' }] }));
      await server.connect(t);
    }
    await t.handleRequest(req, res, body);
  });
}

/** Like fakeServer, for a handler that writes the response itself; records what it answered. */
async function fakeServerRaw(handle) {
  const log = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString();
    const body = text ? JSON.parse(text) : undefined;
    const url = new URL(req.url, 'http://x');
    const headers = Object.fromEntries(SHOWN_HEADERS.filter((h) => req.headers[h] !== undefined).map((h) => [h, req.headers[h]]));
    const entry = { request: `${req.method} ${url.pathname}`, headers, body };
    log.push(entry);
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    let out = '';
    const text_ = (c) => (typeof c === 'string' ? c : Buffer.from(c).toString());
    res.write = (c, ...a) => ((out += text_(c)), write(c, ...a));
    res.end = (c, ...a) => {
      if (c && typeof c !== 'function') out += text_(c);
      entry.answer = { status: res.statusCode, text: out.trim().slice(0, 400) };
      return end(c, ...a);
    };
    await handle(req, res, body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${server.address().port}`, log, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

const scenarios = {
  /** auto against a 2026-07-28 server, with a static bearer token (AuthProvider.token()). */
  async modern_auto() {
    const s = await fakeServer(modernHandler);
    const seen = await drive(s.base, { mode: 'auto', authProvider: { token: async () => 'static-token' } });
    await s.close();
    return { seen, log: s.log };
  },
  /** pinned to 2026-07-28 against the same server. */
  async modern_pin() {
    const s = await fakeServer(modernHandler);
    const seen = await drive(s.base, { mode: { pin: MODERN } });
    await s.close();
    return { seen, log: s.log };
  },
  /** no versionNegotiation option (the default, 'legacy') against a 2026-07-28 server. */
  async default_mode() {
    const s = await fakeServer(modernHandler);
    const seen = await drive(s.base, {});
    await s.close();
    return { seen, log: s.log };
  },
  /** auto against a 2025 server that answers server/discover with 404 and -32601. */
  async discover_404() {
    const s = await fakeServer(legacyHandler((b) => ({ status: 404, json: rpcError(b.id, -32601, 'Method not found') })));
    const seen = await drive(s.base, { mode: 'auto', requestInit: { headers: { authorization: 'Bearer header-token' } } });
    await s.close();
    return { seen, log: s.log };
  },
  /** auto against a 2025 server that answers server/discover with 400 (no JSON-RPC body). */
  async discover_400_plain() {
    const s = await fakeServer(legacyHandler(() => ({ status: 400, json: { error: 'bad request' } })));
    const seen = await drive(s.base, { mode: 'auto' });
    await s.close();
    return { seen, log: s.log };
  },
  /** pinned against a 2025 server (404/-32601 to server/discover). */
  async pin_vs_legacy() {
    const s = await fakeServer(legacyHandler((b) => ({ status: 404, json: rpcError(b.id, -32601, 'Method not found') })));
    const seen = await drive(s.base, { mode: { pin: MODERN } });
    await s.close();
    return { seen, log: s.log };
  },
  /** auto against a server made with the v1 SDK (initialize era, stateful). */
  async v1_sdk_server() {
    const s = await sdkV1Server();
    const seen = await drive(s.base, { mode: 'auto' });
    await s.close();
    return { seen, log: s.log };
  },
  /** OAuth: the AS advertises CIMD and the provider has a clientMetadataUrl. */
  oauth_cimd: () => oauthScenario({ cimd: true, metadataUrl: 'https://client.example/oauth/metadata.json' }),
  /** OAuth: the AS advertises CIMD, the provider has no clientMetadataUrl (so DCR). */
  oauth_cimd_without_url: () => oauthScenario({ cimd: true }),
  /** OAuth: no CIMD advertised (as the relay today): DCR. */
  oauth_dcr: () => oauthScenario({ cimd: false, metadataUrl: 'https://client.example/oauth/metadata.json' }),
};

/** One scenario's transcript: what the client concluded, then each request and its answer. */
function print(name, { seen, log }) {
  const cut = (v, n) => (v === undefined ? '' : JSON.stringify(v).slice(0, n));
  console.log(`\n===== ${name}\nclient saw: ${cut(seen, 1200)}`);
  for (const e of log) {
    console.log(`  ${e.request} ${cut(e.headers, 400)}`);
    if (e.body !== undefined) console.log(`    body:   ${cut(e.body, 700)}`);
    console.log(`    answer: ${cut(e.answer, 300)}`);
  }
}

const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : Object.keys(scenarios)) print(name, await scenarios[name]());
