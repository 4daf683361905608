// Where the upload's KiB go, read from a wasm built with its function names (scripts/size makes
// it): the code by crate and by module of the relay, the data by segment, each gzipped (a name
// is read without the place scripts/order-functions.mjs put before it).
// A group's gzip is what the code section's gzip loses without the group's functions (what
// removing them would save, roughly: the rest compresses as it did); the groups overlap in
// what they share, so the rows add up to less than the whole.
//   node scripts/size.mjs NAMED.wasm [ROWS]
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Reader, sections } from './wasm-sections.mjs';

const b = readFileSync(process.argv[2]);
const rows = Number(process.argv[3] || 30);
const kib = (n) => (n / 1024).toFixed(1);
const gz = (buf) => gzipSync(buf, { level: 9 }).length;
let imported = 0;
const funcs = [], names = new Map(), segments = [];
for (const { id, at, size } of sections(b)) {
  const r = new Reader(b, at);
  if (id === 2) {
    imported = r.importedFunctions();
  } else if (id === 10) {
    for (let n = r.leb(), k = 0; k < n; k++) { const len = r.leb(); funcs.push({ index: imported + k, at: r.i, len }); r.i += len; }
  } else if (id === 11) {
    for (let n = r.leb(); n > 0; n--) {
      const flags = r.leb();
      if (flags === 2) r.leb();
      if (flags !== 1) { while (b[r.i] !== 0x0b) r.i++; r.i++; }
      const len = r.leb(); segments.push({ at: r.i, len }); r.i += len;
    }
  } else if (id === 0 && r.text() === 'name') {
    while (r.i < at + size) {
      const sub = r.byte(), len = r.leb(), end = r.i + len;
      if (sub === 1) for (let n = r.leb(); n > 0; n--) { const idx = r.leb(); names.set(idx, r.text()); }
      r.i = end;
    }
  }
}
// The crate a function's code belongs to: its path's first segment, or for `<T as Trait>`
// and `drop_in_place<T>` (core's glue for a type) the type's.
const bare = (name) => name.replace(/^\d{6} /, '').replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]+\]/g, '');
const crateOf = (name) => {
  let s = bare(name);
  const drop = s.match(/^core::ptr::drop_in_place<(.*)>$/);
  if (drop) s = drop[1];
  s = s.replace(/^[<&*( ]*(?:mut |const |dyn |impl )*/, '');
  return (s.match(/^[A-Za-z_][A-Za-z0-9_]*/) || ['(unnamed)'])[0];
};
// The relay's module a function is written in (or instantiated for): `tabrelay::a::b`.
const moduleOf = (name) => (bare(name).match(/tabrelay(?:_bundle)?(?:::[a-z_][a-z0-9_]*){0,2}/) || ['(outside the relay)'])[0];
const code = Buffer.concat(funcs.map((f) => b.subarray(f.at, f.at + f.len)));
const whole = gz(code);
const table = (title, groupOf) => {
  const groups = new Map();
  for (const f of funcs) { const g = groupOf(names.get(f.index) || ''); if (!groups.has(g)) groups.set(g, new Set()); groups.get(g).add(f); }
  const list = [...groups].map(([g, set]) => ({ g, set, raw: [...set].reduce((n, f) => n + f.len, 0) })).sort((x, y) => y.raw - x.raw);
  console.log(`\n${title} (code ${kib(code.length)} KiB raw, ${kib(whole)} KiB gzip)`);
  for (const { g, set, raw } of list.slice(0, rows)) {
    const rest = Buffer.concat(funcs.filter((f) => !set.has(f)).map((f) => b.subarray(f.at, f.at + f.len)));
    console.log(`  ${g.slice(0, 44).padEnd(44)} ${String(set.size).padStart(5)} fns ${kib(raw).padStart(7)} KiB raw ${kib(whole - gz(rest)).padStart(6)} KiB gzip`);
  }
  const others = list.slice(rows);
  if (others.length) console.log(`  ${`(${others.length} more)`.padEnd(44)} ${String(others.reduce((n, o) => n + o.set.size, 0)).padStart(5)} fns ${kib(others.reduce((n, o) => n + o.raw, 0)).padStart(7)} KiB raw`);
};
table('Code by crate', crateOf);
table('Code by module of the relay', moduleOf);
console.log(`\nData by segment (${kib(segments.reduce((n, s) => n + s.len, 0))} KiB raw; each gzipped alone; its text's start)`);
for (const s of [...segments].sort((x, y) => y.len - x.len).slice(0, rows).filter((s) => s.len >= 256)) {
  const d = b.subarray(s.at, s.at + s.len);
  const text = (d.toString('latin1').match(/[\x20-\x7e]{8,}/g) || []);
  const share = text.reduce((n, t) => n + t.length, 0) / s.len;
  console.log(`  ${kib(s.len).padStart(6)} KiB raw ${kib(gz(d)).padStart(5)} KiB gzip ${String(Math.round(share * 100)).padStart(3)}% text: ${text.join(' | ').slice(0, 90)}`);
}
