// The tab end's part in consent: a linked code of an unverified client is shown without its
// last characters and approved only once the person typed them from the waiting page; the
// describe passes on how old the request is, where it came from and what its name imitates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient, maskedCode, tailMatches, lookalikeSentence, nameWarningSentence, CONSENT } from '../../tab/relay-client.js';

test('a code is masked to all but its last characters, which are matched as codes are read', () => {
  assert.equal(CONSENT.TAIL_CHARS, 4);
  assert.equal(maskedCode('abcde-fghjk'), 'ABCDE-F••••');
  assert.ok(!maskedCode('ABCDE-FGHJK').includes('GHJK'));
  assert.ok(tailMatches('ABCDE-FGHJK', 'ghjk'));
  assert.ok(tailMatches('ABCDE-FGH10', 'GHIO'), 'I read as 1 and O as 0');
  assert.ok(tailMatches('ABCDE-FGHJK', ' gh-jk '));
  for (const wrong of ['', 'GHJ', 'GHJKK', 'FGHJ', 'KJHG', 'ABCDEFGHJK']) assert.ok(!tailMatches('ABCDE-FGHJK', wrong), wrong);
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

test('describe resolves with what the relay said: age, place and look-alike when present', async () => {
  const c = new RelayClient({ relay: 'http://relay.test', storage: { getItem: () => null, setItem() {} }, handle: async () => ({}) });
  const sent = [];
  c.socket = { readyState: 1, send: (t) => sent.push(JSON.parse(t)) };
  c.status = 'connected';
  const asked = c.describe('ABCDE-FGHJK');
  await c.receive(c.socket, JSON.stringify({ type: 'described', code: 'ABCDEFGHJK', client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude', name_warning: 'looks_like' }));
  assert.deepEqual(await asked, { client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude', name_warning: 'looks_like' });
  assert.deepEqual(sent, [{ type: 'describe', code: 'ABCDE-FGHJK' }]);
});
