// The README and docs/ cannot drift silently: the README stays a front door (about 150 lines
// at most) that links every page of docs/; every relative link in them reaches a file (and a
// heading, when it names one); every test a page names in brackets (`[`forget`; natively in
// `room`]`) exists, end-to-end ones in tests/e2e/ and native ones as a module of src/; and every
// tests/e2e/*.test.mjs is listed in docs/tests.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
/** The README's bound: a newcomer reads it in five minutes. */
export const README_LINES = 150;

const pages = () => readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f));
const read = (file) => readFileSync(file, 'utf8');
/** Markdown without its fenced code blocks (a link in code is not a link). */
const prose = (text) => text.replace(/^```[\s\S]*?^```/gm, '');

/** The relative links of a Markdown text: [words](target), targets without a scheme. */
export function relativeLinks(text) {
  const out = [];
  for (const m of prose(text).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.push(target);
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation gone, spaces as hyphens. */
export function anchorOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file) {
  return new Set([...prose(read(file)).matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchorOf(m[1])));
}

/** Names in the bracket notes of a text: `[`a`, `b`; natively in `c`]` → e2e [a, b], native [c]. */
export function bracketNames(text) {
  const e2e = [];
  const native = [];
  for (const m of prose(text).matchAll(/\[(`[^\]]*)\](?!\()/g)) {
    const [before, after = ''] = m[1].split(/natively/);
    for (const n of before.matchAll(/`([^`]+)`/g)) e2e.push(n[1]);
    for (const n of after.matchAll(/`([^`]+)`/g)) native.push(n[1]);
  }
  return { e2e, native };
}

/** Every .rs file's name under `dir`, without the extension. */
function rustModules(dir, out = new Set()) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) rustModules(path, out);
    else if (entry === 'mod.rs') out.add(basename(dir)); // a module split into a directory
    else if (entry.endsWith('.rs')) out.add(entry.slice(0, -3));
  }
  return out;
}

test('the README is a front door: short, and linking every page of docs/', () => {
  const text = read(README);
  const lines = text.split('\n').length;
  assert.ok(lines <= README_LINES, `README.md has ${lines} lines; keep it to ${README_LINES} and move reference to docs/`);
  const linked = new Set(relativeLinks(text).map((t) => resolve(ROOT, t.split('#')[0])));
  const missing = pages().filter((p) => !linked.has(p)).map((p) => relative(ROOT, p));
  assert.deepEqual(missing, [], 'pages of docs/ the README does not link');
});

test('every relative link of the README and docs/ reaches a file, and a heading when it names one', () => {
  const broken = [];
  for (const file of [README, ...pages()]) {
    for (const target of relativeLinks(read(file))) {
      const [path, anchor] = target.split('#');
      const to = path ? resolve(dirname(file), path) : file;
      if (!existsSync(to)) broken.push(`${relative(ROOT, file)} → ${target} (no such file)`);
      else if (anchor && to.endsWith('.md') && !anchorsOf(to).has(anchor)) broken.push(`${relative(ROOT, file)} → ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test('every test a page names in brackets exists', () => {
  const native = rustModules(join(ROOT, 'src'));
  for (const m of rustModules(join(ROOT, 'bundle', 'src'))) native.add(m);
  const missing = [];
  for (const file of [README, ...pages()]) {
    const names = bracketNames(read(file));
    for (const n of names.e2e) if (!existsSync(join(ROOT, 'tests', 'e2e', `${n}.test.mjs`))) missing.push(`${relative(ROOT, file)}: tests/e2e/${n}.test.mjs`);
    for (const n of names.native) if (!native.has(n)) missing.push(`${relative(ROOT, file)}: a native module ${n}.rs`);
  }
  assert.deepEqual(missing, []);
  assert.ok(bracketNames(read(join(DOCS, 'security.md'))).e2e.length >= 20, 'the security model names its tests');
});

test('every end-to-end test is listed in docs/tests.md', () => {
  const listed = new Set(bracketNames(read(join(DOCS, 'tests.md'))).e2e);
  const files = readdirSync(join(ROOT, 'tests', 'e2e')).filter((f) => f.endsWith('.test.mjs')).map((f) => f.slice(0, -'.test.mjs'.length));
  assert.deepEqual(files.filter((n) => !listed.has(n)), [], 'tests/e2e files docs/tests.md does not list');
});

test('the pieces: links, anchors, bracket notes', () => {
  assert.deepEqual(relativeLinks('[a](docs/x.md) [b](https://e.example) [c](#top)\n```\n[d](no.md)\n```'), ['docs/x.md', '#top']);
  assert.equal(anchorOf("Making the relay your app's, and embedding"), 'making-the-relay-your-apps-and-embedding');
  assert.equal(anchorOf('Security: what the relay defends against'), 'security-what-the-relay-defends-against');
  assert.deepEqual(bracketNames('x [`forget`; natively in `room`] y [`a`, `b`] [`link`](z.md)'), { e2e: ['forget', 'a', 'b'], native: ['room'] });
});
