// Connect codes outsiders cannot use to make the relay store anything. A code carries a keyed
// check (its last letters are an HMAC, under the relay's key, of the others), so a made-up code
// is refused by the Worker (the waiting page's status) or by the pairing (a tab typing it)
// without addressing any connect code's Durable Object, and the pairing's wrong-code limiter
// still counts it; /authorize makes no code until the page's script asks for one, so a client
// probing it (asking for JSON) makes none. Proven by counting the Durable Objects wrangler dev
// stored (one SQLite file each) before and after a few hundred such requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';
import { RELAY, CALLBACK, openTab, register, pkcePair, openWaitingPage } from './harness.mjs';

const STATE = path.join(path.dirname(process.env.TABRELAY_WRANGLER_LOG), 'state');
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const PROBES = 300;

/** How many Durable Objects of `cls` wrangler dev stored: their SQLite files. */
function stored(cls) {
  const dir = path.join(STATE, 'v3', 'do', `tabrelay-${cls}`);
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return 0; // no object of the class yet
  }
  return names.filter((n) => n.endsWith('.sqlite') && n !== 'metadata.sqlite').length;
}

/** A code of the right form that the relay never made. */
function madeUpCode() {
  let s = '';
  for (let i = 0; i < 10; i++) s += ALPHABET[randomInt(32)];
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}

async function authorizeUrl(client, over = {}) {
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: CALLBACK, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st', ...over });
  return url;
}

test('made-up codes and probes of /authorize leave no Durable Object behind', { timeout: 120_000 }, async () => {
  const tab = await openTab();
  const client = await register('Outsider check');
  const before = { codes: stored('ConnectCode'), pairings: stored('Pairing') };

  // The waiting page's status, asked with made-up codes.
  for (let i = 0; i < PROBES; i++) {
    const r = await fetch(`${RELAY}/authorize/status?code=${madeUpCode()}`);
    assert.deepEqual(await r.json(), { state: 'expired' });
  }
  // Made-up codes typed in a proven tab: refused, and counted by the wrong-code limiter.
  const said = new Set();
  for (let i = 0; i < PROBES; i++) {
    const err = await tab.client.approve(madeUpCode()).then(() => null, (e) => e.message);
    assert.ok(err, 'a made-up code is never approved');
    said.add(/Too many wrong/.test(err) ? 'limited' : /not waiting for approval/.test(err) ? 'unknown' : err);
  }
  assert.deepEqual([...said].sort(), ['limited', 'unknown'], 'the first few are unknown, then the limiter holds');
  // Clients probing /authorize for JSON: a stale client id, and a good request.
  for (let i = 0; i < PROBES; i++) {
    const url = i % 2 ? await authorizeUrl({ client_id: `trc1.stale${i}.sig` }) : await authorizeUrl(client);
    const r = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual' });
    assert.ok(r.status < 500, `probe ${i}: ${r.status}`);
    await r.arrayBuffer();
  }

  assert.deepEqual({ codes: stored('ConnectCode'), pairings: stored('Pairing') }, before, 'no Durable Object was stored for an outsider');

  // The count sees what is stored: a waiting page run as a browser runs it makes one code.
  const page = await openWaitingPage(await authorizeUrl(client));
  assert.ok(page.code);
  assert.equal(stored('ConnectCode'), before.codes + 1);
  tab.close();
});
