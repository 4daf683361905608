// The tab end is shaped as the package an app installs: tab/package.json's exports name files
// that exist, every name each entry exports at run time is declared in its TypeScript
// declarations (and nothing more), an app's use of them compiles under `strict`, and the
// changelog has a line for the protocol version the tab speaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { PROTOCOL_VERSION } from '../../tab/relay-client.js';

const TAB = new URL('../../tab/', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', TAB), 'utf8'));
const entries = Object.entries(pkg.exports).filter(([, v]) => typeof v === 'object');

const OPTIONS = {
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  skipLibCheck: false,
  types: [],
};

test('the package’s exports name files that exist, each with its declarations', () => {
  assert.equal(pkg.type, 'module');
  assert.equal(Object.keys(pkg.dependencies || {}).length, 0, 'no dependencies');
  assert.ok(entries.length >= 3);
  assert.equal(pkg.version.split('.')[0], String(PROTOCOL_VERSION), 'the major version is the protocol version');
  for (const [name, files] of entries) {
    for (const file of [files.types, files.default]) assert.ok(existsSync(new URL(file, TAB)), `${name}: ${file}`);
    assert.ok(pkg.files.includes(files.types.replace('./', '')), `${files.types} is packed`);
    assert.ok(pkg.files.includes(files.default.replace('./', '')), `${files.default} is packed`);
  }
});

test('every public name is declared, and every declared name exists', async () => {
  const files = entries.map(([, f]) => fileURLToPath(new URL(f.types, TAB)));
  const program = ts.createProgram(files, OPTIONS);
  const checker = program.getTypeChecker();
  for (const [name, f] of entries) {
    const source = program.getSourceFile(fileURLToPath(new URL(f.types, TAB)));
    const declared = checker
      .getExportsOfModule(checker.getSymbolAtLocation(source))
      .filter((s) => s.flags & (ts.SymbolFlags.Value | ts.SymbolFlags.Alias) && !(s.flags & ts.SymbolFlags.Interface) && !(s.flags & ts.SymbolFlags.TypeAlias))
      .map((s) => s.name)
      .sort();
    const runtime = Object.keys(await import(new URL(f.default, TAB).href)).sort();
    assert.deepEqual(declared, runtime, `${name}: declared names = exported names`);
  }
});

test('an app’s use of the declarations compiles under strict', () => {
  const consumer = fileURLToPath(new URL('./types/consumer.ts', import.meta.url));
  const program = ts.createProgram([consumer], OPTIONS);
  const problems = ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${d.file.fileName.replace(/.*\/(tab|tests)\//, '$1/')}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
  assert.deepEqual(problems, []);
  assert.ok(program.getSourceFiles().some((s) => s.fileName.endsWith('tab/presence-elements.d.ts')), 'the declarations were read');
});

test('the changelog has a line for the protocol version the tab speaks', () => {
  const log = readFileSync(new URL('CHANGELOG.md', TAB), 'utf8');
  for (let v = 1; v <= PROTOCOL_VERSION; v += 1) assert.match(log, new RegExp(`^- \\*\\*Protocol ${v}\\*\\*`, 'm'));
});
