// The tab end's part in consent: the waiting page's link carries a reference (never the code),
// read from the fragment and sent to the relay as a link, not as a typed code; approving it
// yields the relay's confirm address; the describe passes on how old the request is, where it
// came from, what its name imitates and this client's connections already here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient, connectLinkFromFragment, fragmentWithoutLink, takeConnectLink, lookalikeSentence, nameWarningSentence, CONSENT } from '../../tab/relay-client.js';

test('the link is read from its fragment key, and taking it off leaves the app’s own fragment', () => {
  assert.equal(connectLinkFromFragment('#tabrelay-connect=abcdefgh0123456789'), 'ABCDEFGH0123456789');
  assert.equal(connectLinkFromFragment('#other=1&tabrelay-connect=ABCDEFGH0123456789'), 'ABCDEFGH0123456789');
  for (const bad of ['', '#', '#tabrelay-connect=', '#tabrelay-connect=<script>', '#code=ABCDEFGH0123456789']) assert.equal(connectLinkFromFragment(bad), null, bad);
  assert.equal(fragmentWithoutLink('#tabrelay-connect=ABC'), '');
  assert.equal(fragmentWithoutLink('#view=2&tabrelay-connect=ABC'), '#view=2');
  assert.equal(takeConnectLink(), null, 'Node loads no page, so there is no link');
  assert.ok(CONSENT.NOT_THIS_BROWSER.includes('whole code'));
});

test('the look-alike warning names the app in the relay’s words', () => {
  assert.equal(lookalikeSentence('Claude'), CONSENT.LOOKALIKE.replaceAll('{app}', 'Claude'));
  assert.ok(!lookalikeSentence('Claude').includes('{app}'));
});

test('each warning about a name is the relay’s sentence of its kind, with the app and the domain', () => {
  assert.equal(nameWarningSentence({ name_warning: 'looks_like', lookalike: 'Claude' }), lookalikeSentence('Claude'));
  const claims = nameWarningSentence({ name_warning: 'claims', lookalike: 'Claude', verified: 'example.com' });
  assert.equal(claims, CONSENT.WARNINGS.claims.replaceAll('{app}', 'Claude').replaceAll('{domain}', 'example.com'));
  assert.match(claims, /verified only as example\.com, which is not Claude's/);
  assert.equal(nameWarningSentence({ name_warning: 'mixed_scripts' }), CONSENT.WARNINGS.mixed_scripts);
  assert.equal(nameWarningSentence({ name_warning: 'not_latin' }), CONSENT.WARNINGS.not_latin);
  for (const none of [{}, { lookalike: 'Claude' }, { name_warning: 'other' }, null]) assert.equal(nameWarningSentence(none), '');
  assert.equal(nameWarningSentence({ name_warning: 'looks_like', lookalike: '<b>' }, (t) => `[${t}]`), lookalikeSentence('[<b>]'), 'names are written as the page shows them');
});

function connected() {
  const c = new RelayClient({ relay: 'http://relay.test', storage: { getItem: () => null, setItem() {} }, handle: async () => ({}) });
  const sent = [];
  c.socket = { readyState: 1, send: (t) => sent.push(JSON.parse(t)) };
  c.status = 'connected';
  return { c, sent };
}

test('describe resolves with what the relay said: age, place, look-alike and connections when present', async () => {
  const { c, sent } = connected();
  const asked = c.describe('ABCDE-FGHJK');
  const connections = [{ id: 'g1', client: 'Claude Code', host: '127.0.0.1', created_ms: 5, used_ms: 6, place: 'Lisbon, PT' }];
  await c.receive(c.socket, JSON.stringify({ type: 'described', code: 'ABCDEFGHJK', client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude', name_warning: 'looks_like', connections }));
  assert.deepEqual(await asked, { client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude', name_warning: 'looks_like', connections });
  assert.deepEqual(sent, [{ type: 'describe', code: 'ABCDE-FGHJK' }]);
});

test('a link is sent as a link, and its approval resolves with the relay’s confirm address', async () => {
  const { c, sent } = connected();
  const link = 'ABCDEFGH0123456789';
  const asked = c.describeLink(link);
  await c.receive(c.socket, JSON.stringify({ type: 'described', code: link, client: 'Claude', host: 'claude.ai', age_ms: 1 }));
  assert.equal((await asked).client, 'Claude');
  const approving = c.approveLink(link);
  await c.receive(c.socket, JSON.stringify({ type: 'confirm', code: link, client: 'Claude', ticket: `${link}.s3cret` }));
  assert.deepEqual(await approving, { client: 'Claude', host: undefined, confirm: `http://relay.test/authorize/confirm?ticket=${link}.s3cret` });
  const denying = c.denyLink(link);
  await c.receive(c.socket, JSON.stringify({ type: 'refused', code: link, sentence: 'No.' }));
  await assert.rejects(denying, /No\./);
  assert.deepEqual(sent, [
    { type: 'describe', link },
    { type: 'approve', link },
    { type: 'deny', link },
  ]);
});
