// Nothing an outsider can create: made-up refresh tokens and access tokens (at /revoke, at
// /token, as bearers of MCP calls) are refused by the Worker before any pairing's Durable Object
// is addressed, and a pairing asked about something it never stored stores nothing.
//
// What the runtime writes, measured on wrangler dev: every Durable Object that is addressed at
// all gets a SQLite file under the state directory (miniflare keeps its name in it), whether or
// not it writes; an object that makes its tables holds them there too. So the count of the
// Pairing class's *.sqlite files says whether an object was addressed, and their tables say
// whether it stored anything. The second half forges tokens the relay would have issued (this
// file runs a relay of its own, with a signing key it knows) to reach objects that never stored
// anything, as a token of a pairing whose storage is gone would.
//
// When: an object's file is there by the time its request is answered (the Worker answers only
// after the object has; measured for 130 of 130, 30 one at a time and 100 at once), so the files
// are counted once the requests are answered, never after a wait. The first test closes with one
// request that does address an object, and sees its one file come: the count is read where the
// objects would be, after the event that would have made them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openTab, useRelay, connectByHand, refresh, postForm, mcpPost, startRelay, register, pkcePair, askForCode, CALLBACK } from './harness.mjs';

const work = mkdtempSync(join(tmpdir(), 'tabrelay-outsiders-'));
const pairingDir = join(work, 'state', 'v3', 'do', 'tabrelay-Pairing');
const codeDir = join(work, 'state', 'v3', 'do', 'tabrelay-ConnectCode');
const KEY = randomBytes(48).toString('base64url');
let relay;
let relayUrl;
let tab;
let owner; // a real connection of the tab's pairing

before(async () => {
  relay = await startRelay({ state: join(work, 'state'), key: KEY });
  relayUrl = relay.url;
  useRelay(relayUrl);
  tab = await openTab({ relay: relayUrl, seed: 71 });
  assert.equal(tab.connected.status, 'connected');
  owner = await connectByHand(tab);
});

after(() => {
  tab?.close();
  relay?.stop();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// What is stored.

/** The database files of one class's objects (miniflare's own index, metadata.sqlite, left out). */
function objectFiles(dir) {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith('.sqlite') && n !== 'metadata.sqlite').sort();
}
const pairingFiles = () => objectFiles(pairingDir);

/** The tables a database holds besides miniflare's and the runtime's own. */
function tablesOf(file, dir = pairingDir) {
  const db = new DatabaseSync(join(dir, file), { readOnly: true });
  try {
    return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name)
      .filter((n) => !n.startsWith('__miniflare') && !n.startsWith('_cf_') && !n.startsWith('sqlite_'));
  } finally {
    db.close();
  }
}

/** Every row of every table of the pairing's database, as text (to tell whether anything was written). */
function contentOf(file) {
  const db = new DatabaseSync(join(pairingDir, file), { readOnly: true });
  try {
    return tablesOf(file).map((t) => `${t}: ${JSON.stringify(db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all())}`).join('\n');
  } finally {
    db.close();
  }
}

/** Runs `requests` (functions returning a promise of a Response-like) eight at a time. */
async function all(requests) {
  const answers = [];
  for (let i = 0; i < requests.length; i += 8) answers.push(...(await Promise.all(requests.slice(i, i + 8).map((r) => r()))));
  return answers;
}

const hex = () => randomBytes(32).toString('hex');
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const secret = () => randomBytes(32).toString('base64url');
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'history_list', arguments: {} } };

/** A JWT in the relay's access token shape for `sub`/`gid`, signed with `key` (HS256, under `kid`). */
function jwt(key, { sub = hex(), gid = 'g', kid = 'ffffffffffffffff', alg = 'HS256' } = {}) {
  const now = Math.floor(Date.now() / 1000);
  const h = b64({ alg, kid, typ: 'at+jwt' });
  const c = b64({ iat: now, exp: now + 3600, iss: relayUrl, aud: relayUrl, sub, gid, cli: 'Forged', hst: 'evil.example' });
  return `${h}.${c}.${createHmac('sha256', key).update(`${h}.${c}`).digest('base64url')}`;
}

// ---------------------------------------------------------------------------------------------
// 1. Made up by someone who holds no key: no object is addressed.

test('a few hundred made-up tokens at /revoke, /token and the MCP endpoint address no pairing', { timeout: 120_000 }, async () => {
  const before = pairingFiles();
  assert.ok(before.length >= 1, 'the tab\'s own pairing is stored');
  const real = owner.tokens.refresh_token;
  const [p, g, s, tag] = real.split('.');
  const requests = [];
  for (let i = 0; i < 100; i++) {
    // A refresh token of the right form, made up, revoked (RFC 7009: 200 either way).
    const token = i % 2 ? `${hex()}.${secret().slice(0, 16)}.${secret()}.${secret()}` : `${hex()}.g.s`;
    requests.push(() => postForm('/revoke', { token, token_type_hint: 'refresh_token' }).then((r) => ['revoke refresh', r.status, 200]));
  }
  for (let i = 0; i < 50; i++) {
    requests.push(() => postForm('/revoke', { token: jwt(randomBytes(32)), token_type_hint: 'access_token' }).then((r) => ['revoke access', r.status, 200]));
  }
  const altered = [
    `${hex()}.${g}.${s}.${tag}`, // another pairing, the real tag
    `${p}.${g}x.${s}.${tag}`, // another grant
    `${p}.${g}.${secret()}.${tag}`, // another secret
    `${p}.${g}.${s}`, // no tag
    `${p}.${g}.${s}.${secret()}`, // a made-up tag
  ];
  for (let i = 0; i < 100; i++) {
    const token = i < 50 ? altered[i % altered.length] : `${hex()}.${secret().slice(0, 16)}.${secret()}.${secret()}`;
    requests.push(() => refresh(owner.client, token).then((r) => ['refresh', r.status === 400 && r.body.error === 'invalid_grant' ? 'invalid_grant' : r.status, 'invalid_grant']));
  }
  for (let i = 0; i < 100; i++) {
    const bearer = [
      () => jwt(randomBytes(32)),
      () => jwt(Buffer.alloc(0)),
      () => jwt(randomBytes(32), { alg: 'none' }),
      () => `${hex()}.g.s.${secret()}`,
      () => randomBytes(24).toString('base64url'),
    ][i % 5]();
    requests.push(() => mcpPost(bearer, call).then((r) => ['mcp', r.status, 401]));
  }
  const answers = await all(requests);
  assert.ok(requests.length >= 350);
  for (const [what, got, want] of answers) assert.equal(got, want, what);
  assert.deepEqual(pairingFiles(), before, 'no pairing object was addressed');
  // The one that does address an object (a token with a good signature, of a pairing never
  // stored): its file is there once it is answered.
  assert.equal((await mcpPost(issuedAccess(hex()), call)).status, 401);
  assert.equal(pairingFiles().filter((f) => !before.includes(f)).length, 1, 'an addressed object shows by its answer');
  // The owner's connection is untouched by all of it.
  assert.equal((await refresh(owner.client, real)).status, 200, 'the real refresh token still works');
});

// ---------------------------------------------------------------------------------------------
// 2. Tokens the relay would have issued, for pairings that never stored anything, and unknown
//    grants of a pairing that did: the objects are asked, and store nothing.

const derived = (label) => createHmac('sha256', Buffer.from(KEY)).update(label).digest();
const KID = createHash('sha256').update(Buffer.concat([Buffer.from('tabrelay key id:'), Buffer.from(KEY)])).digest('hex').slice(0, 16);
/** A refresh token with a good tag (src/oauth/refresh.rs refresh_token). */
function issuedRefresh(pairing, grant, sec) {
  const body = `${pairing}.${grant}.${sec}`;
  return `${body}.${createHmac('sha256', derived('tabrelay refresh token v1')).update(body).digest('base64url')}`;
}
/** An access token with a good signature (src/oauth/token.rs). */
const issuedAccess = (sub, gid = 'g') => jwt(derived('tabrelay access token v1'), { sub, gid, kid: KID });

test('a pairing asked about grants it never stored, by tokens with good tags, stores nothing', { timeout: 120_000 }, async () => {
  // The forged tokens do reach the relay's checks: a good one for the real grant works.
  const [p, g] = owner.tokens.refresh_token.split('.');
  const before = new Set(pairingFiles());
  const mine = [...before].filter((f) => tablesOf(f).length > 0);
  assert.equal(mine.length, 1, 'one pairing stores something: the tab\'s');
  const content = contentOf(mine[0]);
  const requests = [];
  for (let i = 0; i < 20; i++) {
    const stranger = hex();
    requests.push(() => postForm('/revoke', { token: issuedRefresh(stranger, 'g', secret()) }).then((r) => ['revoke', r.status, 200]));
    requests.push(() => refresh(owner.client, issuedRefresh(hex(), 'g', secret())).then((r) => ['refresh', r.body?.error, 'invalid_grant']));
    requests.push(() => postForm('/revoke', { token: issuedAccess(hex()) }).then((r) => ['revoke access', r.status, 200]));
    requests.push(() => mcpPost(issuedAccess(hex()), call).then((r) => ['mcp call', r.status, 401]));
    requests.push(() => mcpPost(issuedAccess(hex()), { jsonrpc: '2.0', id: 2, method: 'tools/list' }).then((r) => ['mcp list', r.status, 401]));
    // The tab's own pairing, asked about grants it does not hold.
    requests.push(() => postForm('/revoke', { token: issuedRefresh(p, `x${i}`, secret()) }).then((r) => ['revoke unknown grant', r.status, 200]));
    requests.push(() => postForm('/revoke', { token: issuedRefresh(p, g, secret()) }).then((r) => ['revoke unknown secret', r.status, 200]));
    requests.push(() => refresh(owner.client, issuedRefresh(p, `x${i}`, secret())).then((r) => ['refresh unknown grant', r.body?.error, 'invalid_grant']));
    requests.push(() => postForm('/revoke', { token: issuedAccess(p, `x${i}`) }).then((r) => ['revoke unknown access', r.status, 200]));
  }
  for (const [what, got, want] of await all(requests)) assert.equal(got, want, what);
  const added = pairingFiles().filter((f) => !before.has(f));
  assert.ok(added.length >= 80, `the forged tokens reached ${added.length} objects`);
  for (const f of added) assert.deepEqual(tablesOf(f), [], `${f}: a pairing only asked stores no table`);
  assert.equal(contentOf(mine[0]), content, 'the tab\'s pairing wrote nothing for unknown grants');
  assert.equal((await tab.client.connections()).length, 1, 'its connection is still there');
});

// ---------------------------------------------------------------------------------------------
// 3. A waiting page's sealed request, taken and posted again and again: one code, one object.

test('one waiting page\'s sealed request posted 40 times makes one connect code and one object', { timeout: 120_000 }, async () => {
  const client = await register('Seal reposter');
  const url = new URL(`${relayUrl}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK,
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's',
  });
  const page = await (await fetch(url)).text();
  const sealed = /data-request="([^"]*)"/.exec(page)?.[1];
  assert.ok(sealed, 'the waiting page carries its sealed request');
  const before = new Set(objectFiles(codeDir));
  const first = await askForCode(relayUrl, sealed);
  assert.equal(first.status, 200);
  assert.match(first.body.code, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
  // The rest: one after another, then eight at a time.
  const again = [];
  for (let i = 0; i < 8; i++) again.push(await askForCode(relayUrl, sealed));
  again.push(...(await all(Array.from({ length: 31 }, () => () => askForCode(relayUrl, sealed)))));
  for (const made of again) {
    assert.equal(made.status, 409);
    assert.match(made.body.sentence, /already has its connect code/);
    assert.equal(made.body.code, undefined, 'no second code');
    assert.equal(made.cookie, '', 'no other browser is bound to the code');
  }
  const added = objectFiles(codeDir).filter((f) => !before.has(f));
  assert.equal(added.length, 1, `one connect code object, not ${added.length}`);
  assert.deepEqual(tablesOf(added[0], codeDir), ['session']);
  // The first browser still waits on its code.
  const status = await fetch(`${relayUrl}/authorize/status?code=${encodeURIComponent(first.body.code)}`, { headers: { cookie: first.cookie } });
  assert.equal((await status.json()).state, 'waiting');
});
