// Drops the hash wasm-bindgen gives each import's name (`__wbg_fetch_58e62838507dad34` becomes
// `__wbg_fetch`, a second `__wbg_fetch` `__wbg_fetch_2`), in the wasm's import section and in
// the JS glue that provides them: 16 hex digits each, written twice, are incompressible (about
// 4 KiB of the upload, gzip). Run by scripts/build on what worker-build made; the names are
// only ever matched between these two files.
//   node scripts/short-imports.mjs WASM JS
import { readFileSync, writeFileSync } from 'node:fs';
import { lebBytes, name, rewriteSection } from './wasm-sections.mjs';

const [wasmFile, jsFile] = process.argv.slice(2);
let js = readFileSync(jsFile, 'utf8');
const taken = new Set();
const renamed = new Map();
const wasm = rewriteSection(readFileSync(wasmFile), 2, (r, end) => {
  const entries = [];
  const count = r.leb();
  for (let k = 0; k < count; k++) {
    const module = r.text(), field = r.text(), descAt = r.i;
    r.skipImport(r.byte());
    entries.push({ module, field, desc: r.b.subarray(descAt, r.i) });
  }
  if (r.i !== end) throw new Error('the import section did not read to its end');
  for (const e of entries) taken.add(e.field);
  for (const e of entries) {
    const m = /^(__wbg_.*)_[0-9a-f]{16}$/.exec(e.field);
    if (!m) continue;
    let short = m[1];
    for (let n = 2; taken.has(short); n++) short = `${m[1]}_${n}`;
    taken.add(short);
    renamed.set(e.field, short);
    e.field = short;
  }
  return Buffer.concat([lebBytes(count), ...entries.flatMap((e) => [name(e.module), name(e.field), e.desc])]);
});
// The glue's functions for imports the wasm no longer has (their code removed after
// scripts/drop-dead-vtables.mjs): shortened alike, never called.
for (const [long, base] of js.matchAll(/\b(__wbg_\w*?)_[0-9a-f]{16}\b/g)) {
  if (renamed.has(long)) continue;
  let short = base;
  for (let n = 2; taken.has(short); n++) short = `${base}_${n}`;
  taken.add(short);
  renamed.set(long, short);
}
for (const [long, short] of renamed) {
  const uses = js.split(long).length - 1;
  if (uses !== 1) throw new Error(`${long} is written ${uses} times in ${jsFile}, not once`);
  js = js.replace(long, short);
}
writeFileSync(wasmFile, wasm);
writeFileSync(jsFile, js);
