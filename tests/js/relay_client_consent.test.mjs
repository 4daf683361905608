// The tab end's part in consent: a linked code of an unverified client is shown without its
// last characters and approved only once the person typed them from the waiting page; the
// describe passes on how old the request is, where it came from and what its name imitates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelayClient, maskedCode, tailMatches, lookalikeSentence, CONSENT } from '../../tab/relay-client.js';

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

test('describe resolves with what the relay said: age, place and look-alike when present', async () => {
  const c = new RelayClient({ relay: 'http://relay.test', storage: { getItem: () => null, setItem() {} }, handle: async () => ({}) });
  const sent = [];
  c.socket = { readyState: 1, send: (t) => sent.push(JSON.parse(t)) };
  c.status = 'connected';
  const asked = c.describe('ABCDE-FGHJK');
  await c.receive(c.socket, JSON.stringify({ type: 'described', code: 'ABCDEFGHJK', client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude' }));
  assert.deepEqual(await asked, { client: 'Claude Code', host: '127.0.0.1', age_ms: 4200, lookalike: 'Claude' });
  assert.deepEqual(sent, [{ type: 'describe', code: 'ABCDE-FGHJK' }]);
});
