// Drops from the wasm's export section the classes that workers-rs and wasm-streams export
// (`#[wasm_bindgen]` on a struct exports it from every Worker that links the crate) and that the
// relay never makes: a container's options, minify settings, an R2 range, and wasm-streams'
// sources and sink of a stream made in Rust (the relay's are made in platform.js).
// An export is kept alive by the wasm even when unused, with all it calls; once dropped,
// `wasm-opt --remove-unused-module-elements` removes that code (about 3 KiB of upload, gzip).
// The JS glue keeps its classes of them, never constructed. Run by scripts/build (and
// scripts/size) on what worker-build made; a class missing here fails the build, so the list
// stays true when workers-rs changes.
//   node scripts/drop-exports.mjs WASM
import { readFileSync, writeFileSync } from 'node:fs';

const CLASSES = ['containerstartupoptions', 'minifyconfig', 'r2range', 'intounderlyingsource',
  'intounderlyingbytesource', 'intounderlyingsink'];
const unused = new RegExp(`^(__wbg_(get_|set_)?)?(${CLASSES.join('|')})(_|$)`);

const [wasmFile] = process.argv.slice(2);
const b = readFileSync(wasmFile);
let i = 8;
const leb = () => { let r = 0, s = 0, x; do { x = b[i++]; r += (x & 0x7f) * 2 ** s; s += 7; } while (x & 0x80); return r; };
const lebBytes = (n) => { const out = []; do { let x = n % 128; n = Math.floor(n / 128); if (n > 0) x |= 0x80; out.push(x); } while (n > 0); return Buffer.from(out); };
const parts = [b.subarray(0, 8)];
const dropped = new Set();
while (i < b.length) {
  const id = b[i++], size = leb(), at = i, end = at + size;
  if (id !== 7) { parts.push(Buffer.from([id]), lebBytes(size), b.subarray(at, end)); i = end; continue; }
  const kept = [];
  for (let count = leb(); count > 0; count--) {
    const start = i, n = leb(), name = b.subarray(i, i + n).toString();
    i += n + 1;
    leb();
    const m = unused.exec(name);
    if (m) dropped.add(m[3]); else kept.push(b.subarray(start, i));
  }
  if (i !== end) throw new Error('the export section did not read to its end');
  const body = Buffer.concat([lebBytes(kept.length), ...kept]);
  parts.push(Buffer.from([7]), lebBytes(body.length), body);
}
const missing = CLASSES.filter((c) => !dropped.has(c));
if (missing.length > 0) throw new Error(`no export of ${missing.join(', ')}: update scripts/drop-exports.mjs`);
writeFileSync(wasmFile, Buffer.concat(parts));
