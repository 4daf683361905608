// Nothing an outsider can fill or keep: a pairing of a self-made key that proves itself and
// sends what a tab sends keeps no row once its last socket goes; a connect code's object keeps
// nothing past its end; and what makes objects without a token (connect codes, tab sockets) is
// limited per sender.
//
// Read from where it would be kept: wrangler dev's storage under --persist-to, one SQLite file
// per object (see outsiders_store_nothing). This file runs a relay of its own, with a connect
// code's object kept 3 s instead of 11 minutes (CODE_KEPT_MS), so its end is seen.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { openTab, useRelay, startRelay, register, pkcePair, askForCode, rawTabSocket, waitFor, MemoryStorage, CALLBACK } from './harness.mjs';
import { CLOSE } from '../../tab/relay-client.js';

const work = mkdtempSync(join(tmpdir(), 'tabrelay-keep-nothing-'));
const pairingDir = join(work, 'state', 'v3', 'do', 'tabrelay-Pairing');
const codeDir = join(work, 'state', 'v3', 'do', 'tabrelay-ConnectCode');
const CODE_KEPT_MS = 3000;
let relay;

before(async () => {
  relay = await startRelay({ state: join(work, 'state'), vars: { CODE_KEPT_MS: String(CODE_KEPT_MS) } });
  useRelay(relay.url);
});

after(() => {
  relay?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The database files of one class's objects (miniflare's own index left out). */
function objectFiles(dir) {
  try {
    return readdirSync(dir).filter((n) => n.endsWith('.sqlite') && n !== 'metadata.sqlite').sort();
  } catch {
    return [];
  }
}

/** Each table an object's database holds besides the runtime's own, with its rows. */
function rowsOf(dir, file) {
  const db = new DatabaseSync(join(dir, file), { readOnly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name)
      .filter((n) => !n.startsWith('__miniflare') && !n.startsWith('_cf_') && !n.startsWith('sqlite_'));
    return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}"`).all()]));
  } finally {
    db.close();
  }
}

/** [`rowsOf`], or null while the runtime holds the database locked (it is writing). */
function rowsNow(dir, file) {
  try {
    return rowsOf(dir, file);
  } catch (e) {
    if (/locked|busy/i.test(String(e?.message))) return null;
    throw e;
  }
}

/** Waits until the object's database holds no table (a read between its writes); what it holds. */
async function emptied(dir, file, ms) {
  const seen = await waitFor(() => {
    const now = rowsNow(dir, file);
    return now && Object.keys(now).length === 0 ? now : null;
  }, ms, 100).catch(() => rowsOf(dir, file));
  return seen;
}

/** The one object of `dir` made since `before` (a set of files) that stores something. */
async function newStoring(dir, before) {
  return waitFor(() => objectFiles(dir).filter((f) => !before.has(f)).find((f) => Object.keys(rowsNow(dir, f) ?? {}).length > 0), 10_000, 100);
}

/** A waiting page's sealed request for a new authorization of `client`. */
async function sealFor(client) {
  const url = new URL(`${relay.url}/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK,
    code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 's',
  });
  const page = await (await fetch(url)).text();
  return /data-request="([^"]*)"/.exec(page)[1];
}

/** Waits until the clock is early in a minute (the platform counts senders per minute). */
async function freshMinute() {
  const into = Date.now() % 60_000;
  if (into > 30_000) await new Promise((r) => setTimeout(r, 60_000 - into + 200));
}

test('a self-keyed tab that proves itself and speaks leaves no row once it goes', { timeout: 60_000 }, async () => {
  const before = new Set(objectFiles(pairingDir));
  // A browser nobody connected an agent in: its key is new, so is its pairing.
  const tab = await openTab({ storage: new MemoryStorage(), dataset: 'Mine' });
  assert.equal(tab.connected.status, 'connected');
  tab.client.send('step');
  // A wrong code: its answer comes after the relay took every message before it.
  await assert.rejects(tab.client.approve('ABCDE-FGHJK'));
  const file = await newStoring(pairingDir, before);
  const kept = await waitFor(() => rowsNow(pairingDir, file), 5000, 50);
  assert.ok(kept.tab_state?.length === 1 && kept.meta?.length >= 1, `it stored while open: ${JSON.stringify(Object.keys(kept))}`);
  tab.close();
  // Read where it was stored, once the relay saw the socket go.
  const left = await emptied(pairingDir, file, 15_000);
  assert.deepEqual(left, {}, 'nothing outlives the last socket of a pairing without a grant');
});

test('a connect code\'s object deletes everything it stored at its end', { timeout: 60_000 }, async () => {
  const client = await register('Code keeper');
  const before = new Set(objectFiles(codeDir));
  const made = await askForCode(relay.url, await sealFor(client));
  assert.equal(made.status, 200);
  const file = await newStoring(codeDir, before);
  assert.deepEqual(Object.keys(await waitFor(() => rowsNow(codeDir, file), 5000, 50)), ['session']);
  const madeAt = Date.now();
  const left = await emptied(codeDir, file, CODE_KEPT_MS + 10_000);
  assert.deepEqual(left, {}, 'not its session, nor the table that held it');
  assert.ok(Date.now() - madeAt >= CODE_KEPT_MS - 500, 'at its end, not before');
  const status = await fetch(`${relay.url}/authorize/status?code=${encodeURIComponent(made.body.code)}`, { headers: { cookie: made.cookie } });
  assert.equal((await status.json()).state, 'expired');
});

test('one sender makes only so many connect codes a minute; another is unaffected', { timeout: 120_000 }, async () => {
  const client = await register('Seal poster');
  const seals = [];
  for (let i = 0; i < 26; i++) seals.push(await sealFor(client));
  await freshMinute();
  const before = new Set(objectFiles(codeDir));
  const sender = { 'cf-connecting-ip': '10.77.0.1' };
  const answers = [];
  for (const sealed of seals.slice(0, 25)) answers.push(await askForCode(relay.url, sealed, sender));
  const made = answers.filter((a) => a.status === 200).length;
  const limited = answers.filter((a) => a.status === 429);
  assert.equal(made, 20, `made ${made}: ${JSON.stringify(answers.map((a) => a.status))}`);
  assert.equal(limited.length, 5);
  for (const a of limited) {
    assert.match(a.body.sentence, /Too many connect codes/);
    assert.equal(a.body.code, undefined);
    assert.equal(a.cookie, '');
  }
  const other = await askForCode(relay.url, seals[25], { 'cf-connecting-ip': '10.77.0.2' });
  assert.equal(other.status, 200, 'another sender still gets its code');
  await waitFor(() => objectFiles(codeDir).filter((f) => !before.has(f)).length >= 21, 5000, 100);
  const added = objectFiles(codeDir).filter((f) => !before.has(f)).length;
  assert.equal(added, 21, 'a refused sender made no object');
});

test('one sender opens only so many tab sockets (each may make a pairing) a minute', { timeout: 120_000 }, async () => {
  await freshMinute();
  const sender = '10.88.0.1';
  const sockets = [];
  for (let i = 0; i < 64; i++) {
    const s = rawTabSocket(`pairing=${randomBytes(32).toString('hex')}`, { sender, relay: relay.url });
    sockets.push(s);
    await Promise.race([s.challenge, s.closed]);
  }
  const refused = [];
  for (const s of sockets) {
    if (s.messages.length === 0) refused.push(await s.closed);
  }
  assert.equal(refused.length, 4, `the 61st and later are refused: ${refused.length}`);
  for (const c of refused) {
    assert.equal(c.code, CLOSE.TOO_MANY_TABS, JSON.stringify(c));
    assert.match(c.reason, /Too many tab connections/);
  }
  // Another sender's tab connects.
  const tab = await openTab();
  assert.equal(tab.connected.status, 'connected');
  tab.close();
  for (const s of sockets) s.ws.close();
});
