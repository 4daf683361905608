// Drops the hash wasm-bindgen gives each import's name (`__wbg_fetch_58e62838507dad34` becomes
// `__wbg_fetch`, a second `__wbg_fetch` `__wbg_fetch_2`), in the wasm's import section and in
// the JS glue that provides them: 16 hex digits each, written twice, are incompressible (about
// 4 KiB of the upload, gzip). Run by scripts/build on what worker-build made; the names are
// only ever matched between these two files.
//   node scripts/short-imports.mjs WASM JS
import { readFileSync, writeFileSync } from 'node:fs';

const [wasmFile, jsFile] = process.argv.slice(2);
const b = readFileSync(wasmFile);
let js = readFileSync(jsFile, 'utf8');
let i = 8;
const leb = () => { let r = 0, s = 0, x; do { x = b[i++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80); return r; };
const lebBytes = (n) => { const out = []; do { let x = n % 128; n = Math.floor(n / 128); if (n > 0) x |= 0x80; out.push(x); } while (n > 0); return Buffer.from(out); };
const name = (s) => { const t = Buffer.from(s); return Buffer.concat([lebBytes(t.length), t]); };
const parts = [b.subarray(0, 8)];
const taken = new Set();
const renamed = new Map();
while (i < b.length) {
  const id = b[i++], size = leb(), at = i, end = at + size;
  if (id !== 2) { parts.push(Buffer.from([id]), lebBytes(size), b.subarray(at, end)); i = end; continue; }
  const entries = [];
  const count = leb();
  const text = () => { const n = leb(); const s = b.subarray(i, i + n).toString(); i += n; return s; };
  const limits = () => { const flags = leb(); leb(); if (flags & 1) leb(); };
  for (let k = 0; k < count; k++) {
    const module = text(), field = text(), descAt = i, kind = b[i++];
    if (kind === 0) leb(); else if (kind === 1) { i++; limits(); } else if (kind === 2) limits(); else if (kind === 3) i += 2; else if (kind === 4) { i++; leb(); } else throw new Error(`import kind ${kind}`);
    entries.push({ module, field, desc: b.subarray(descAt, i) });
  }
  if (i !== end) throw new Error('the import section did not read to its end');
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
  const body = Buffer.concat([lebBytes(count), ...entries.flatMap((e) => [name(e.module), name(e.field), e.desc])]);
  parts.push(Buffer.from([2]), lebBytes(body.length), body);
}
for (const [long, short] of renamed) {
  const uses = js.split(long).length - 1;
  if (uses !== 1) throw new Error(`${long} is written ${uses} times in ${jsFile}, not once`);
  js = js.replace(long, short);
}
writeFileSync(wasmFile, Buffer.concat(parts));
writeFileSync(jsFile, js);
