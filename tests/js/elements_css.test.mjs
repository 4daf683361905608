// Every element's shadow template holds its CSS in one style element: a stray `</style>` ends it
// early and the rest of the rules are printed on the page as text (once above *Mode*).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

for (const file of ['presence-elements.js', 'agents-panel.js', 'record.js', 'driven.js', 'chat-element.js']) {
  test(`${file}: each template's style element is closed once, after its rules`, () => {
    const text = readFileSync(new URL(`../../tab/${file}`, import.meta.url), 'utf8');
    const templates = [...text.matchAll(/`<style>([\s\S]*?)`/g)].map((m) => m[1]);
    for (const t of templates) {
      assert.equal(t.split('</style>').length - 1, 1, `one </style> in the template beginning ${t.slice(0, 60)}`);
      const css = t.slice(0, t.indexOf('</style>'));
      assert.doesNotMatch(t.slice(t.indexOf('</style>')), /\{[^}<]*:[^}<]*\}/, 'no CSS rule after the style element');
      assert.ok(css.length > 0);
    }
  });
}
