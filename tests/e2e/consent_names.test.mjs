// Names judged as a person would be fooled, through the real relay and a tab: an unverified
// client named "Claude" in full-width or mathematical letters is warned about as Claude's
// look-alike; a name with a Cyrillic letter inside a Latin word, and one with no Latin letter
// at all, are warned about too; an ordinary name is not. The tab shows the relay's sentence of
// each kind (nameWarningSentence, from the bundle's CONSENT.WARNINGS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RELAY, openTab, register, pkcePair, openWaitingPage } from './harness.mjs';
import { nameWarningSentence, lookalikeSentence } from '../../tab/relay-client.js';
import { CONSENT } from '../../tab/generated/bundle.js';

/** A waiting page for a client registered as `name`: its connect code. */
async function codeFor(name) {
  const client = await register(name);
  const url = new URL(`${RELAY}/authorize`);
  url.search = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0], code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'names' });
  const page = await openWaitingPage(url);
  assert.equal(page.status, 200, page.html.slice(0, 200));
  return page.code;
}

test('disguised names are warned about in the relay’s words; an ordinary one is not', { timeout: 60_000 }, async () => {
  const tab = await openTab({ seed: 81 });
  const cases = [
    ['Ｃｌａｕｄｅ', 'looks_like', 'Claude'], // full-width
    ['𝐂𝐥𝐚𝐮𝐝𝐞 𝐂𝐨𝐝𝐞', 'looks_like', 'Claude'], // mathematical bold
    ['Nоtes helper', 'mixed_scripts', undefined], // a Cyrillic о in a Latin word
    ['Клод', 'not_latin', undefined],
    ['Orders dashboard', undefined, undefined],
  ];
  for (const [name, warning, app] of cases) {
    const said = await tab.client.describe(await codeFor(name));
    assert.equal(said.client, name);
    assert.equal(said.verified, undefined);
    assert.equal(said.name_warning, warning, name);
    assert.equal(said.lookalike, app, name);
    const sentence = nameWarningSentence(said);
    if (!warning) {
      assert.equal(sentence, '', name);
      continue;
    }
    assert.equal(sentence, CONSENT.WARNINGS[warning].replaceAll('{app}', app ?? ''), name);
    assert.ok(!/\{app\}|\{domain\}/.test(sentence), sentence);
  }
  assert.equal(nameWarningSentence({ name_warning: 'looks_like', lookalike: 'Claude' }), lookalikeSentence('Claude'));
  tab.close();
});
