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
import { lebBytes, rewriteSection } from './wasm-sections.mjs';

const CLASSES = ['containerstartupoptions', 'minifyconfig', 'r2range', 'intounderlyingsource',
  'intounderlyingbytesource', 'intounderlyingsink'];
const unused = new RegExp(`^(__wbg_(get_|set_)?)?(${CLASSES.join('|')})(_|$)`);

const [wasmFile] = process.argv.slice(2);
const dropped = new Set();
const wasm = rewriteSection(readFileSync(wasmFile), 7, (r, end) => {
  const kept = [];
  for (let count = r.leb(); count > 0; count--) {
    const start = r.i, name = r.text();
    r.byte();
    r.leb();
    const m = unused.exec(name);
    if (m) dropped.add(m[3]); else kept.push(r.b.subarray(start, r.i));
  }
  if (r.i !== end) throw new Error('the export section did not read to its end');
  return Buffer.concat([lebBytes(kept.length), ...kept]);
});
const missing = CLASSES.filter((c) => !dropped.has(c));
if (missing.length > 0) throw new Error(`no export of ${missing.join(', ')}: update scripts/drop-exports.mjs`);
writeFileSync(wasmFile, wasm);
