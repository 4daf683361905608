// The end-to-end harness: the relay under test (started by scripts/test on wrangler dev), a
// tab made of the real relay-client.js and the demo app in Node, the official MCP SDK client
// with an OAuth provider that completes the authorization without a person, and a manual
// OAuth flow for tests that need to hold each step.

import assert from 'node:assert/strict';
import { createServer as createNetServer } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { RelayClient, signProof, publicKeyOf, PROTOCOL_VERSION, BUNDLE_DIGEST } from '../../tab/relay-client.js';
import { TAB_PATH } from '../../tab/generated/bundle.js';
import { createDemoApp } from '../../tab/demo/app.js';
import { MemoryStorage as PlainStorage } from '../js/memory_storage.mjs';

export let RELAY = process.env.TABRELAY_URL;
export const APP_ORIGIN = process.env.TABRELAY_APP_ORIGIN;
if (!RELAY || !APP_ORIGIN) {
  throw new Error('Run the end-to-end tests through scripts/test (TABRELAY_URL and TABRELAY_APP_ORIGIN are unset).');
}
export const CALLBACK = 'http://127.0.0.1:9/callback';

/** Points this file's tests at another relay (a test that starts its own, say). */
export function useRelay(url) {
  RELAY = url;
}

/**
 * The pairing keys of a simulated browser, in memory (the relay client's `keys`; a browser
 * keeps them in IndexedDB). `put` keeps the pair stored first for an origin, as IndexedDB's does.
 */
export class MemoryKeys {
  constructor() {
    this.map = new Map();
  }
  async get(origin) {
    return this.map.get(origin) ?? null;
  }
  async put(origin, keyPair) {
    if (!this.map.has(origin)) this.map.set(origin, keyPair);
  }
}

/**
 * A localStorage stand-in and the browser's pairing keys (`keys`): one per simulated browser,
 * with an address of its own (`sender`, sent as `CF-Connecting-IP`, which wrangler dev keeps
 * when a request brings one): the relay limits what each sender makes per minute.
 */
export class MemoryStorage extends PlainStorage {
  constructor() {
    super();
    this.keys = new MemoryKeys();
    this.sender = someSender();
  }
}

/** A made-up sender address, in a private range (never a client of a deployed relay). */
export function someSender() {
  const [a, b, c] = randomBytes(3);
  return `10.${a}.${b}.${c}`;
}

/**
 * A tab of the demo app in Node: the real relay client, the real demo app. `tools` (MCP
 * definitions with `setting`) and `dataset` are what it states (default: the catalogue's tools,
 * no dataset); `run(call)` answers calls instead of the demo app; `refusedLists` collects the
 * relay's refusals of its lists. `storage` is the simulated browser (its pairing keys in
 * `storage.keys` unless `keys` is given); other options go to the RelayClient as they are.
 */
export async function openTab({ storage = new MemoryStorage(), keys = storage.keys, origin = APP_ORIGIN, seed = 42, relay = RELAY, tools, dataset, run, ...options } = {}) {
  const app = createDemoApp({ seed });
  const calls = [];
  const statuses = [];
  const refusedLists = [];
  const client = new RelayClient({
    ...options,
    relay,
    storage,
    keys,
    headers: { origin, 'cf-connecting-ip': storage.sender ?? someSender() },
    tools,
    dataset,
    handle: async (call) => {
      calls.push(call);
      return run ? run(call) : app.run(call.tool, call.args, call.agent);
    },
    onStatus: (status, detail) => statuses.push({ status, detail }),
    onToolsRefused: (sentence) => refusedLists.push(sentence),
  });
  client.start();
  const connected = await waitFor(() => statuses.find((s) => s.status === 'connected' || s.status === 'refused'), 10_000);
  return { client, app, calls, statuses, refusedLists, storage, connected, close: () => client.stop() };
}

/** The public pairing key (base64url) a connected tab's hello carried. */
export function keyOf(tab) {
  return tab.client.key;
}

/** The pairing id a connected tab's socket named (`pairing=…`), as tokens carry it. */
export function pairingOf(tab) {
  return new URL(tab.client.socket.url).searchParams.get('pairing');
}

/**
 * A raw socket to the relay's tab channel, as an outsider opens one: `query` is the URL's query
 * (`pairing=…`); it collects what the relay sends (`messages`), `challenge` resolves with the
 * first challenge, `closed` with the close code and reason. `sender` is the address it comes
 * from (a new one each time unless given).
 */
export function rawTabSocket(query, { origin = APP_ORIGIN, relay = RELAY, sender = someSender() } = {}) {
  const ws = new WebSocket(`${relay.replace(/^http/, 'ws')}${TAB_PATH}?${query}`, { headers: { origin, 'cf-connecting-ip': sender } });
  const messages = [];
  let heard;
  const challenge = new Promise((resolve) => (heard = resolve));
  ws.addEventListener('message', (e) => {
    let m = null;
    try {
      m = JSON.parse(e.data);
    } catch {
      return;
    }
    messages.push(m);
    if (m.type === 'challenge') heard(m.challenge);
  });
  const closed = new Promise((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason, at: Date.now() })));
  const opened = new Promise((resolve) => ws.addEventListener('open', () => resolve(Date.now())));
  return { ws, messages, challenge, closed, opened };
}

/** A hello as the tab sends it: `keyPair`'s public key and proof over `challenge` for `relayOrigin`. */
export async function helloFor(keyPair, challenge, relayOrigin = new URL(RELAY).origin, extra = {}) {
  const signature = await signProof(keyPair, relayOrigin, challenge);
  const key = Buffer.from(await publicKeyOf(keyPair)).toString('base64url');
  return JSON.stringify({ type: 'hello', protocol: PROTOCOL_VERSION, bundle: BUNDLE_DIGEST, key, signature, ...extra });
}

/** How many proven tabs the pairing of `token` holds, as its `status` tool says. */
export async function connectedTabs(token) {
  const text = (await callTool(token, 'status')).content[0].text;
  if (text.startsWith('No tab of the app is connected')) return 0;
  const count = /^(\d+) tabs? of the app (?:is|are) connected;/.exec(text)?.[1];
  if (count === undefined) throw new Error(`the status tool said neither how many tabs are connected nor that none is: ${text}`);
  return Number(count);
}

/** The pairing id an access token names (its `sub`). */
export function subOf(accessToken) {
  return JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString()).sub;
}

/** Polls `check` until it returns something truthy or `ms` pass. */
export async function waitFor(check, ms = 10_000, every = 25) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`waited ${ms} ms in vain`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Registers a client by DCR. */
export async function register(name = 'E2E client', redirectUris = [CALLBACK]) {
  const r = await fetch(`${RELAY}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }),
  });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${await r.text()}`);
  return r.json();
}

export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { verifier, challenge };
}

/** Where the waiting page's script posts its sealed request for a connect code. */
export const CODE_PATH = '/authorize/code';

/**
 * Opens the waiting page of an authorization URL as a browser would: the page, then what its
 * script does, posting the sealed request for the connect code. Returns the code, the link,
 * the cookie that binds the page to this "browser", the page (`status`, `headers`, `html`) and
 * the code's answer (`made`: its `status`, `headers`, `body`).
 */
export async function openWaitingPage(authorizationUrl) {
  const r = await fetch(authorizationUrl, { redirect: 'manual' });
  const html = await r.text();
  const sealed = /data-request="([^"]*)"/.exec(html)?.[1];
  if (!sealed) return { status: r.status, headers: r.headers, html, code: undefined, cookie: '' };
  const made = await askForCode(new URL(authorizationUrl).origin, sealed);
  return { status: r.status, headers: r.headers, html, code: made.body.code, link: made.body.link, cookie: made.cookie, made };
}

/** What the waiting page's script does first: posts the sealed request, gets the code. */
export async function askForCode(relay, sealed, headers = {}) {
  // Each waiting page from an address of its own, unless the caller says (the relay limits
  // how many codes one sender makes a minute).
  headers = { 'cf-connecting-ip': someSender(), ...headers };
  const r = await fetch(`${relay}${CODE_PATH}`, { method: 'POST', body: sealed, headers });
  const body = jsonOrText(await r.text());
  const cookie = (r.headers.get('set-cookie') || '').split(';')[0];
  return { status: r.status, headers: r.headers, body, cookie };
}

/** Asks the waiting page's status until it says where to go (or `ms` pass). */
export async function waitForRedirect(page, ms = 10_000) {
  return waitFor(async () => {
    const r = await fetch(`${RELAY}/authorize/status?code=${encodeURIComponent(page.code)}`, {
      headers: { cookie: page.cookie },
    });
    const s = await r.json();
    return s.state === 'waiting' ? null : s;
  }, ms, 100);
}

/** The whole authorization by hand, approved by `tab`; returns the redirect's parameters. */
export async function authorizeByHand(tab, { client, pkce = pkcePair(), state = 'st-' + Date.now() } = {}) {
  client ||= await register();
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: CALLBACK,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state,
    resource: RELAY,
  });
  const page = await openWaitingPage(url);
  await tab.client.approve(page.code);
  const s = await waitForRedirect(page);
  const back = new URL(s.redirect);
  return { client, pkce, state, page, back, code: back.searchParams.get('code') };
}

/** Redeems an authorization code at /token. */
export async function redeem({ client, code, verifier, redirectUri = CALLBACK, resource = RELAY }) {
  const body = new URLSearchParams({ grant_type: 'authorization_code', client_id: client.client_id, code, redirect_uri: redirectUri, resource });
  if (verifier !== undefined) body.set('code_verifier', verifier);
  const r = await fetch(`${RELAY}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  return { status: r.status, body: await r.json() };
}

/** An access token for `tab`'s pairing, by the manual flow. */
export async function accessToken(tab) {
  const a = await authorizeByHand(tab);
  const t = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  if (t.status !== 200) throw new Error(`token failed: ${JSON.stringify(t.body)}`);
  return t.body.access_token;
}

/** Posts one JSON-RPC message to the MCP endpoint. */
export async function mcpPost(token, message, headers = {}) {
  const r = await fetch(`${RELAY}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  const text = await r.text();
  if ((r.headers.get('content-type') || '').startsWith('text/event-stream')) {
    // A streamed answer: every event's JSON, and the response (the message with an id) as body.
    const events = sseEvents(text);
    const body = events.find((m) => m.id !== undefined && (m.result !== undefined || m.error !== undefined)) ?? null;
    return { status: r.status, headers: r.headers, body, events, raw: text };
  }
  return { status: r.status, headers: r.headers, body: jsonOrText(text) };
}

/** A response body as JSON when it reads as JSON, else as its text. */
function jsonOrText(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The JSON messages of a server-sent event stream's text. */
export function sseEvents(text) {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n'))
    .filter(Boolean)
    .map((data) => JSON.parse(data));
}

/**
 * The official SDK's OAuth provider, completing the authorization without a person: it opens
 * the waiting page by hand, the tab approves the code shown, and the page's redirect gives the
 * authorization code.
 */
export class HeadlessProvider {
  constructor(tab, approve) {
    this.tab = tab;
    this.approve = approve || ((code) => tab.client.approve(code));
    this.info = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.authorizationCode = undefined;
    this.pages = [];
  }
  get redirectUrl() {
    return CALLBACK;
  }
  get clientMetadata() {
    return { client_name: 'SDK e2e client', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
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
  saveTokens(tokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url) {
    const page = await openWaitingPage(url);
    this.pages.push(page);
    await this.approve(page.code);
    const s = await waitForRedirect(page);
    const back = new URL(s.redirect);
    this.authorizationCode = back.searchParams.get('code');
    this.lastRedirect = back;
  }
}

/**
 * Connects the official SDK client to the relay through the full OAuth flow; `options` are the
 * client's (its capabilities, say), `prepare(client)` runs before it connects (to set request
 * handlers).
 */
export async function connectSdkClient(tab, name = 'sdk-e2e', provider = new HeadlessProvider(tab), options = {}, prepare = () => {}) {
  const make = () => new StreamableHTTPClientTransport(new URL(`${RELAY}/`), { authProvider: provider });
  let transport = make();
  const client = new Client({ name, version: '1.0.0' }, options);
  prepare(client);
  try {
    await client.connect(transport);
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    await transport.finishAuth(provider.authorizationCode);
    transport = make();
    await client.connect(transport);
  }
  return { client, provider, transport };
}

/** How long the relay under test lets a call wait (scripts/relay-up.sh sets it). */
export const CALL_WAIT_MS = Number(process.env.TABRELAY_CALL_WAIT_MS || 225_000);

/** Calls `tool` through the relay with `token`; the JSON-RPC result (or error). */
export async function callTool(token, tool, args = {}, id = 1) {
  const r = await mcpPost(token, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });
  if (r.status !== 200) throw new Error(`tools/call answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.result ?? r.body;
}

/** The JSON between the data tags of a tool result's text. */
export function dataOf(result) {
  return dataOfText(result.content[0].text);
}

/** The JSON between the data tags of a text. */
export function dataOfText(text) {
  const open = '<tabrelay-data>';
  const close = '</tabrelay-data>';
  if (!text.startsWith(open) || !text.includes(close)) throw new Error(`not data: ${text.slice(0, 200)}`);
  return JSON.parse(text.slice(open.length, text.indexOf(close)));
}

/** The names of the tools `tools/list` gives `token`. */
export async function toolNames(token) {
  return (await listTools(token)).map((t) => t.name);
}

/** The tools `tools/list` gives `token`. */
export async function listTools(token) {
  const r = await mcpPost(token, { jsonrpc: '2.0', id: 'list', method: 'tools/list' });
  if (r.status !== 200 || !r.body.result) throw new Error(`tools/list answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body.result.tools;
}

/** A tool definition for a scripted tab: `name`, an object input schema, `setting`. */
export function toolDef(name, setting = 'runs', extra = {}) {
  return { name, description: `The ${name} tool.`, inputSchema: { type: 'object', properties: {} }, setting, ...extra };
}

/** Posts a form to the relay (the token and revocation endpoints). */
export async function postForm(path, fields) {
  const r = await fetch(`${RELAY}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
  return { status: r.status, body: jsonOrText(await r.text()) };
}

/** A whole grant for `tab`'s pairing by the manual flow: the client and the token response. */
export async function connectByHand(tab) {
  const a = await authorizeByHand(tab);
  const t = await redeem({ client: a.client, code: a.code, verifier: a.pkce.verifier });
  if (t.status !== 200) throw new Error(`token failed: ${JSON.stringify(t.body)}`);
  return { client: a.client, tokens: t.body };
}

/** Uses a refresh token. */
export function refresh(client, refreshToken) {
  return postForm('/token', { grant_type: 'refresh_token', client_id: client.client_id, refresh_token: refreshToken });
}

/** Asserts a waiting page's status is a denial sent back to the client: access_denied, its
 * state, the issuer, and no code. */
export function assertDenied(status, state) {
  assert.equal(status.state, 'denied');
  const back = new URL(status.redirect);
  assert.equal(`${back.origin}${back.pathname}`, CALLBACK);
  assert.equal(back.searchParams.get('error'), 'access_denied');
  assert.equal(back.searchParams.get('state'), state);
  assert.equal(back.searchParams.get('iss'), RELAY);
  assert.equal(back.searchParams.get('code'), null, 'nothing issued');
}

/** A free TCP port on 127.0.0.1, for a test that starts a server of its own. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a relay of the test's own on wrangler dev (a free port, `state` as its storage, a
 * fresh signing key unless `key` is given, the test's app origin, and `vars` on top), and waits
 * until it answers. Returns `{ url, key, stop }`; `stop` kills wrangler and its workerd.
 */
export async function startRelay({ state, key = randomBytes(48).toString('base64url'), vars = {}, env = process.env, stdio = 'ignore', config }) {
  const { spawn } = await import('node:child_process');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const all = { RELAY_SIGNING_KEY: key, ALLOWED_ORIGINS: APP_ORIGIN, APP_URL: `${APP_ORIGIN}/demo/`, ...vars };
  const args = ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', state, '--show-interactive-dev-session=false'];
  for (const [name, value] of Object.entries(all)) args.push('--var', `${name}:${value}`);
  if (config) args.push('--config', config); // another wrangler.toml (in the repository's root)
  const root = new URL('../../', import.meta.url).pathname;
  const relay = spawn('wrangler', args, { cwd: root, detached: true, stdio, env });
  const stop = () => {
    try {
      process.kill(-relay.pid, 'SIGKILL'); // wrangler and its workerd
    } catch {
      // Already gone.
    }
  };
  await waitFor(async () => (await fetch(`${url}/health`).catch(() => null))?.ok, 60_000, 200);
  return { url, key, stop };
}

/**
 * Reads a server-sent event stream as it comes, handing each event's JSON message to
 * `onMessage`; resolves when the stream ends or is aborted.
 */
export async function readEvents(body, onMessage) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const data = buffer.slice(0, end).split('\n').find((l) => l.startsWith('data: '));
        buffer = buffer.slice(end + 2);
        // A priming event (2025-11-25 resumable streams) has an id and empty data.
        if (data && data.slice(6).trim()) onMessage(JSON.parse(data.slice(6)));
      }
    }
  } catch (e) {
    if (e.name !== 'AbortError') throw e;
  }
}

/**
 * Opens a 2026-07-28 `subscriptions/listen` with `token` and reads its events into `events` as
 * they come; `changes()` counts the tools/list_changed notifications, `stop()` ends the stream.
 * `reading` (and `stop()`) rejects with whatever broke the stream (a reset, an event that is
 * not JSON), never swallowed: a test that never awaits it fails on the unhandled rejection.
 */
export async function listenStream(token, notifications = { toolsListChanged: true }) {
  const abort = new AbortController();
  const r = await fetch(RELAY, {
    method: 'POST',
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'sub-1',
      method: 'subscriptions/listen',
      params: {
        notifications,
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    }),
  });
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /text\/event-stream/);
  const events = [];
  const reading = readEvents(r.body, (m) => events.push(m));
  const changes = () => events.filter((e) => e.method === 'notifications/tools/list_changed').length;
  return { events, changes, reading, stop: () => (abort.abort(), reading) };
}
