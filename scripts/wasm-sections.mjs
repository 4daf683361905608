// The wasm binary format as far as the build's and the size report's scripts read and write it
// (drop-exports.mjs, short-imports.mjs, size.mjs): LEB128 numbers, names, sections, and an
// import's description.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

/** Reads `bytes` from `at` (8: past the module's magic and version). */
export class Reader {
  constructor(bytes, at = 8) {
    this.b = bytes;
    this.i = at;
  }

  byte() {
    return this.b[this.i++];
  }

  /** An unsigned LEB128 number. */
  leb() {
    let r = 0, s = 0, x;
    do {
      x = this.b[this.i++];
      r += (x & 0x7f) * 2 ** s;
      s += 7;
    } while (x & 0x80);
    return r;
  }

  /** A name: its length, then its UTF-8 bytes. */
  text() {
    const n = this.leb();
    const s = this.b.subarray(this.i, this.i + n).toString();
    this.i += n;
    return s;
  }

  /** Steps over an import's description of `kind` (its kind byte read already). */
  /** Reads an import section's entries (the reader at its start): how many import a function. */
  importedFunctions() {
    let functions = 0;
    for (let n = this.leb(); n > 0; n--) {
      this.text();
      this.text();
      const kind = this.byte();
      if (kind === 0) functions++;
      this.skipImport(kind);
    }
    return functions;
  }

  skipImport(kind) {
    const limits = () => {
      const flags = this.leb();
      this.leb();
      if (flags & 1) this.leb();
    };
    if (kind === 0) this.leb();
    else if (kind === 1) (this.i++, limits());
    else if (kind === 2) limits();
    else if (kind === 3) this.i += 2;
    else if (kind === 4) (this.i++, this.leb());
    else throw new Error(`import kind ${kind}`);
  }
}

/** `n` as unsigned LEB128. */
export function lebBytes(n) {
  const out = [];
  do {
    let x = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) x |= 0x80;
    out.push(x);
  } while (n > 0);
  return Buffer.from(out);
}

/** A name as written: its length, then its bytes. */
export const name = (s) => {
  const t = Buffer.from(s);
  return Buffer.concat([lebBytes(t.length), t]);
};

/** The module's sections, in order: each `{ id, at, size }` (`at`: its body's first byte). */
export function sections(b) {
  const r = new Reader(b);
  const all = [];
  while (r.i < b.length) {
    const id = r.byte(), size = r.leb();
    all.push({ id, at: r.i, size });
    r.i += size;
  }
  return all;
}

/** A section as written: its id, its body's length, the body. */
export const section = (id, body) => Buffer.concat([Buffer.from([id]), lebBytes(body.length), body]);

/**
 * `wasm` with the body of each section of id `id` replaced by `rewrite(reader at its body, its
 * end)`'s; the other sections as they were.
 */
export function rewriteSection(wasm, id, rewrite) {
  const parts = [wasm.subarray(0, 8)];
  for (const s of sections(wasm)) {
    const body = s.id === id ? rewrite(new Reader(wasm, s.at), s.at + s.size) : wasm.subarray(s.at, s.at + s.size);
    parts.push(section(s.id, body));
  }
  return Buffer.concat(parts);
}

// `node scripts/wasm-sections.mjs WASM`: its size and gzip, and its import, export, code and
// data sections', each gzipped alone (scripts/size prints it for the upload's wasm).
if (import.meta.url === `file://${process.argv[1]}`) {
  const b = readFileSync(process.argv[2]);
  const titles = { 2: 'imports', 7: 'exports', 10: 'code', 11: 'data' };
  const kib = (n) => (n / 1024).toFixed(1);
  const gz = (buf) => gzipSync(buf, { level: 9 }).length;
  console.log(`stripped wasm ${kib(b.length)} KiB, gzip ${kib(gz(b))} KiB; by section (each gzipped alone):`);
  for (const { id, at, size } of sections(b)) {
    if (titles[id]) console.log(`  ${titles[id].padEnd(8)} ${kib(size).padStart(7)} KiB raw ${kib(gz(b.subarray(at, at + size))).padStart(6)} KiB gzip`);
  }
}
