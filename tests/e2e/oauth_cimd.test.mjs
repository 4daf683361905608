// Client ID Metadata Documents end to end: a client whose id is an https URL is fetched from
// an https server of this test's own (a certificate made here, for the machine's name `vm`),
// shown as its verified domain, and completes /authorize -> the tab approves -> /token ->
// tools/list, the official SDK choosing the URL because the metadata advertises it. Every
// refusal (http, an IP literal, unreachable, over 5 KB, a client_id mismatch, a redirect not
// listed, a server slower than 5 s, a redirect, a secret) is shown on the page, never
// redirected; a failed fetch reads the same whatever failed (the detail goes to the log only),
// and single-label names and private suffixes (.lan, .corp, …) are not fetched, but for the
// machine's own name, which this test's relay names in LOCAL_METADATA_HOSTS. workerd trusts the certificate through NODE_EXTRA_CA_CERTS, which miniflare adds
// to its trust store, so this test runs a relay of its own on wrangler dev.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, writeFileSync, openSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir, hostname } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  openTab, useRelay, waitFor, pkcePair, openWaitingPage, waitForRedirect, redeem, mcpPost,
  HeadlessProvider, connectSdkClient, APP_ORIGIN, CALLBACK, freePort } from './harness.mjs';
import { askerOf } from '../../tab/presence-elements.js';
import { nameWarningSentence } from '../../tab/relay-client.js';

const root = new URL('../../', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'tabrelay-cimd-'));
// The machine's own name: /etc/hosts maps it to 127.0.0.1. It is not an IP literal or a local
// name, but a single label, which the relay fetches only when the owner names it in
// LOCAL_METADATA_HOSTS (this test's relay does; nothing else resolves here); see src/oauth/cimd.rs.
const HOST = 'vm';
let docs; // the https server of the documents
let docsPort;
let relay;
let relayUrl;
const fetched = []; // the paths the relay fetched, in order

/** A CA and a certificate for HOST signed by it, made with openssl in `work`. */
function makeCertificates() {
  const ssl = (...args) => execFileSync('openssl', args, { cwd: work, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=Tabrelay e2e CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  ssl('req', ...ec, '-keyout', 'host.key', '-out', 'host.csr', '-subj', `/CN=${HOST}`);
  writeFileSync(join(work, 'host.ext'), `subjectAltName=DNS:${HOST}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  ssl('x509', '-req', '-in', 'host.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'host.pem', '-days', '2', '-extfile', 'host.ext');
}

function docUrl(path) {
  return `https://${HOST}:${docsPort}${path}`;
}

/** A document naming `id` (its own URL unless told otherwise). */
function documentFor(id, extra = {}) {
  return JSON.stringify({ client_id: id, client_name: 'CIMD e2e client', redirect_uris: [CALLBACK], token_endpoint_auth_method: 'none', ...extra });
}

/** What the document server answers on each path. */
function serve(req, res) {
  const path = req.url;
  fetched.push(path);
  const json = (body, headers = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(body);
  };
  if (path.startsWith('/good')) return json(documentFor(docUrl(path)), { 'cache-control': 'max-age=600' });
  if (path === '/unnamed.json') return json(documentFor(docUrl(path), { client_name: undefined }));
  if (path === '/claims.json') return json(documentFor(docUrl(path), { client_name: 'Claude' }));
  if (path === '/mismatch.json') return json(documentFor(docUrl('/other.json')));
  if (path === '/secret.json') return json(documentFor(docUrl(path), { client_secret: 's3cret' }));
  if (path === '/confidential.json') return json(documentFor(docUrl(path), { token_endpoint_auth_method: 'client_secret_basic' }));
  if (path === '/big.json') return json(documentFor(docUrl(path), { client_uri: `https://${HOST}/${'x'.repeat(6000)}` }));
  if (path === '/declared-big.json') {
    // A Content-Length over 5 KB and a body that never comes: refused on the header alone.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '6000' });
    res.write('{"client_id":');
    return;
  }
  if (path === '/endless.json') {
    // No Content-Length, and a body that never ends: the relay must stop reading at 5 KB.
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '.repeat(1024)), 20);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (path === '/slow.json') {
    const timer = setTimeout(() => json(documentFor(docUrl(path))), 8000);
    res.on('close', () => clearTimeout(timer));
    return;
  }
  if (path === '/redirect.json') {
    res.writeHead(302, { location: docUrl('/good-redirected.json') });
    return res.end();
  }
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('not found');
}


before(async () => {
  assert.equal(hostname(), HOST, `this test expects the machine's name to be ${HOST}`);
  makeCertificates();
  docs = createHttpsServer({ key: readFileSync(join(work, 'host.key')), cert: readFileSync(join(work, 'host.pem')) }, serve);
  await new Promise((resolve) => docs.listen(0, '127.0.0.1', resolve));
  docsPort = docs.address().port;
  const port = await freePort();
  relayUrl = `http://127.0.0.1:${port}`;
  const key = randomBytes(48).toString('base64url');
  relay = spawn('wrangler', ['dev', '--ip', '127.0.0.1', '--port', String(port), '--persist-to', join(work, 'state'), '--show-interactive-dev-session=false',
    '--var', `RELAY_SIGNING_KEY:${key}`, '--var', `ALLOWED_ORIGINS:${APP_ORIGIN}`, '--var', `APP_URL:${APP_ORIGIN}/demo/`, '--var', `LOCAL_METADATA_HOSTS:${HOST}`],
  { cwd: root, detached: true, stdio: ['ignore', openSync(join(work, 'relay.log'), 'w'), openSync(join(work, 'relay.log'), 'a')], env: { ...process.env, NODE_EXTRA_CA_CERTS: join(work, 'ca.pem') } });
  await waitFor(async () => (await fetch(`${relayUrl}/health`).catch(() => null))?.ok, 60_000, 200);
  useRelay(relayUrl);
});

after(() => {
  try {
    process.kill(-relay.pid, 'SIGKILL'); // wrangler and its workerd
  } catch {
    // Already gone.
  }
  docs?.closeAllConnections();
  docs?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The authorization URL for a client id (and redirect URI). */
function authorizeUrl(clientId, { redirectUri = CALLBACK, pkce = pkcePair() } = {}) {
  const url = new URL(`${relayUrl}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: pkce.challenge,
    code_challenge_method: 'S256', state: 'cimd-state', resource: relayUrl,
  });
  return url;
}

/** Asserts that /authorize refuses on the page (never a redirect) with `error` and a sentence matching `sentence`. */
async function assertRefusedOnPage(clientId, error, sentence, options) {
  const page = await openWaitingPage(authorizeUrl(clientId, options));
  assert.equal(page.status, 400, `${clientId}: ${page.html.slice(0, 300)}`);
  assert.equal(page.headers.get('location'), null, 'never redirected');
  assert.equal(page.code, undefined, 'no connect code');
  const reason = /<p id="reason" data-error="([^"]*)">([^<]*)<\/p>/.exec(page.html);
  assert.ok(reason, page.html);
  const text = reason[2].replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  assert.equal(reason[1], error, text);
  assert.match(text, sentence);
  assert.doesNotMatch(text, /Error|TypeError|internal|stack|undefined|fetch failed/, 'no internals leak');
  return text;
}

test('the authorization server advertises client id metadata documents with public clients', async () => {
  const m = await (await fetch(`${relayUrl}/.well-known/oauth-authorization-server`)).json();
  assert.equal(m.client_id_metadata_document_supported, true);
  assert.ok(m.token_endpoint_auth_methods_supported.includes('none'));
});

test('a CIMD client completes /authorize -> the tab approves -> /token -> tools/list, shown by its verified domain', { timeout: 60_000 }, async () => {
  const tab = await openTab({ relay: relayUrl, seed: 61 });
  assert.equal(tab.connected.status, 'connected');
  const clientId = docUrl('/good.json');
  const pkce = pkcePair();
  const page = await openWaitingPage(authorizeUrl(clientId, { pkce }));
  assert.equal(page.status, 200, page.html.slice(0, 400));
  assert.match(page.html, /Connect vm to your tab/);
  assert.match(page.html, /<strong>vm<\/strong> <span class="verified" id="verified">\(verified domain/);
  assert.match(page.html, /calls itself “CIMD e2e client”/);
  assert.doesNotMatch(page.html, /not verified/);
  assert.match(page.html, /<strong id="redirect-host">127\.0\.0\.1<\/strong>/);

  const said = await tab.client.describe(page.code);
  assert.deepEqual({ ...said, age_ms: typeof said.age_ms }, { client: 'CIMD e2e client', host: '127.0.0.1', verified: HOST, age_ms: 'number' }, 'a verified name is never flagged as a look-alike');
  await tab.client.approve(page.code);
  const s = await waitForRedirect(page);
  assert.equal(s.state, 'approved');
  const back = new URL(s.redirect);
  assert.equal(`${back.origin}${back.pathname}`, CALLBACK);
  const t = await redeem({ client: { client_id: clientId }, code: back.searchParams.get('code'), verifier: pkce.verifier, resource: relayUrl });
  assert.equal(t.status, 200, JSON.stringify(t.body));
  const list = await mcpPost(t.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal(list.status, 200, JSON.stringify(list.body));
  assert.ok(list.body.result.tools.length > 0, JSON.stringify(list.body));
  // Its calls reach the tab with the domain that verified it, from the pairing's record of
  // the connection: the confirm card says so instead of "name not verified".
  const called = await mcpPost(t.body.access_token, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'history_list', arguments: {} } });
  assert.equal(called.status, 200, JSON.stringify(called.body));
  const call = tab.calls.at(-1);
  assert.equal(call.connection.verified, HOST);
  assert.match(askerOf(call), /\(verified domain vm\)$/);
  assert.doesNotMatch(askerOf(call), /not verified/);

  // Another client id may not redeem the code; a refresh with the URL rotates.
  const refreshed = await fetch(`${relayUrl}/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: t.body.refresh_token }),
  });
  assert.equal(refreshed.status, 200, await refreshed.clone().text());
  assert.notEqual((await refreshed.json()).refresh_token, t.body.refresh_token);

  // The checked document was cached: a second authorization does not fetch it again.
  const before = fetched.filter((p) => p === '/good.json').length;
  assert.equal(before, 1, `fetched ${before} times`);
  const again = await openWaitingPage(authorizeUrl(clientId));
  assert.equal(again.status, 200);
  assert.equal(fetched.filter((p) => p === '/good.json').length, 1, 'the second authorization used the cache');
  tab.close();
});

test('a client verified as one domain that calls itself another app is warned about', { timeout: 60_000 }, async () => {
  const tab = await openTab({ relay: relayUrl, seed: 64 });
  const page = await openWaitingPage(authorizeUrl(docUrl('/claims.json')));
  assert.equal(page.status, 200, page.html.slice(0, 300));
  const said = await tab.client.describe(page.code);
  assert.deepEqual([said.verified, said.client, said.name_warning, said.lookalike], [HOST, 'Claude', 'claims', 'Claude']);
  assert.match(nameWarningSentence(said), /^This app is verified only as vm, which is not Claude's/);
  tab.close();
});

test('a code issued to a CIMD client is redeemed by that client id only', { timeout: 60_000 }, async () => {
  const tab = await openTab({ relay: relayUrl, seed: 62 });
  const clientId = docUrl('/good-2.json');
  const pkce = pkcePair();
  const page = await openWaitingPage(authorizeUrl(clientId, { pkce }));
  assert.equal(page.status, 200, page.html.slice(0, 300));
  await tab.client.approve(page.code);
  const code = new URL((await waitForRedirect(page)).redirect).searchParams.get('code');
  const other = await redeem({ client: { client_id: docUrl('/good-3.json') }, code, verifier: pkce.verifier, resource: relayUrl });
  assert.equal(other.status, 400);
  assert.equal(other.body.error, 'invalid_grant');
  const http = await redeem({ client: { client_id: `http://${HOST}:${docsPort}/good-2.json` }, code, verifier: pkce.verifier, resource: relayUrl });
  assert.equal(http.body.error, 'invalid_client');
  tab.close();
});

test('the official SDK uses its client metadata URL when the relay advertises it, and calls a tool', { timeout: 60_000 }, async () => {
  const tab = await openTab({ relay: relayUrl, seed: 63 });
  const clientId = docUrl('/good-sdk.json');
  class CimdProvider extends HeadlessProvider {
    get clientMetadataUrl() {
      return clientId;
    }
  }
  // connectSdkClient builds a HeadlessProvider; this one differs only by the metadata URL.
  const provider = new CimdProvider(tab);
  const { client } = await connectSdkClient(tab, 'sdk-cimd', provider);
  assert.equal(provider.clientInformation()?.client_id, clientId, 'the SDK used the URL as its client id');
  assert.ok(fetched.includes('/good-sdk.json'), 'the relay fetched the document');
  assert.match(provider.pages[0].html, /verified domain/);
  const tools = await client.listTools();
  assert.ok(tools.tools.length > 0);
  await client.close();
  tab.close();
});

test('CIMD refusals are shown on the page with one sentence, never redirected', { timeout: 60_000 }, async () => {
  const count = () => fetched.length;
  const n = count();
  await assertRefusedOnPage(`http://${HOST}:${docsPort}/good-http.json`, 'invalid_client', /not https/);
  await assertRefusedOnPage(`https://127.0.0.1:${docsPort}/good-ip.json`, 'invalid_client', /numeric or local address/);
  await assertRefusedOnPage(`https://[::1]:${docsPort}/good-ip.json`, 'invalid_client', /numeric or local address/);
  await assertRefusedOnPage(`https://localhost:${docsPort}/good-local.json`, 'invalid_client', /numeric or local address/);
  await assertRefusedOnPage(`https://${HOST}:${docsPort}/`, 'invalid_client', /no path/);
  await assertRefusedOnPage(`https://user@${HOST}:${docsPort}/good-u.json`, 'invalid_client', /user name or password/);
  // Private suffixes, and single-label names the owner did not name (vm2 is not vm).
  for (const host of ['nas.lan', 'wiki.corp', 'printer.home', 'portal.intranet', 'db.private', 'vm2', 'wpad']) {
    await assertRefusedOnPage(`https://${host}:${docsPort}/good-${host}.json`, 'invalid_client', /numeric or local address/);
  }
  assert.equal(count(), n, 'nothing was fetched for a URL the rules refuse');

  // Every failed fetch reads the same: nothing tells a prober what the relay's network reaches.
  const failed = [];
  const closed = await freePort();
  failed.push(await assertRefusedOnPage(`https://${HOST}:${closed}/gone.json`, 'invalid_client', /could not read the client's metadata document from vm/));
  failed.push(await assertRefusedOnPage(docUrl('/missing.json'), 'invalid_client', /could not read the client's metadata document/));
  failed.push(await assertRefusedOnPage(docUrl('/big.json'), 'invalid_client', /could not read the client's metadata document/));
  let started = Date.now();
  failed.push(await assertRefusedOnPage(docUrl('/declared-big.json'), 'invalid_client', /could not read the client's metadata document/));
  // Cut before the fetch's own 5 s limit (the slow server below is given that whole limit).
  assert.ok(Date.now() - started < 4500, `a Content-Length over 5 KB was waited on for ${Date.now() - started} ms`);
  started = Date.now();
  failed.push(await assertRefusedOnPage(docUrl('/endless.json'), 'invalid_client', /could not read the client's metadata document/));
  assert.ok(Date.now() - started < 4000, `an endless body was read for ${Date.now() - started} ms`);
  failed.push(await assertRefusedOnPage(docUrl('/redirect.json'), 'invalid_client', /could not read the client's metadata document/));
  assert.ok(!fetched.includes('/good-redirected.json'), 'the redirect was not followed');
  started = Date.now();
  failed.push(await assertRefusedOnPage(docUrl('/slow.json'), 'invalid_client', /could not read the client's metadata document/));
  const took = Date.now() - started;
  assert.ok(took >= 4500 && took < 7500, `the slow server was given ${took} ms`);
  assert.equal(new Set(failed).size, 1, `one sentence for every failure: ${[...new Set(failed)].join(' | ')}`);
  for (const detail of [/404/, /timeout|within 5/, /5 KB|5120/, /redirect/]) {
    assert.ok(!failed.some((t) => detail.test(t)), `the page says nothing of ${detail}`);
  }
  // The owner's log says what failed.
  const log = readFileSync(join(work, 'relay.log'), 'utf8');
  for (const detail of ['HTTP 404', 'no document within 5000 ms', 'more than 5120 bytes', 'a redirect, not followed', 'no answer']) {
    assert.ok(log.includes(`client metadata from vm not read: ${detail}`), `the log names ${detail}`);
  }
  // The refusals about the document's content still say what is wrong (the client's fault).
  await assertRefusedOnPage(docUrl('/mismatch.json'), 'invalid_client', /names another client id/);
  await assertRefusedOnPage(docUrl('/secret.json'), 'invalid_client', /holds a client secret/);
  await assertRefusedOnPage(docUrl('/confidential.json'), 'invalid_client', /public clients only/);
  await assertRefusedOnPage(docUrl('/good-listed.json'), 'invalid_request', /not one the app registered/, { redirectUri: 'http://127.0.0.1:9/elsewhere' });
});

test('a document without a name is shown by its domain alone', { timeout: 30_000 }, async () => {
  const page = await openWaitingPage(authorizeUrl(docUrl('/unnamed.json')));
  assert.equal(page.status, 200, page.html.slice(0, 300));
  assert.match(page.html, /Connect vm to your tab/);
  assert.doesNotMatch(page.html, /calls itself/);
});
