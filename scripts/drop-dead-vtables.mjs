// Empties the table slots of the dead closures of the classes scripts/drop-exports.mjs drops.
// Their methods (wasm-streams' sources and sink, never made by the relay) hand futures to
// `future_to_promise`, whose closures' vtables put functions in the wasm's table; the table is
// exported (the JS glue calls closures through it), so those functions, and all they poll,
// stay in the wasm once the methods are gone (about 9 KB, 2.8 KiB of upload gzip). A slot is
// emptied (its function a new one that traps) only when nothing can reach it:
//  - a vtable is dead when its drop (first entry) is the drop of one of those classes' types
//    (by its function's name) and no code holds the vtable's address, nor any of its entries'
//    (a constant folded into a load), as a constant, nor any data as a word: no trait object
//    is ever made with it;
//  - a slot of a dead vtable (its drop or a method, up to the next drop) is emptied when every
//    word of the data equal to it is in a dead vtable or is a panic location's line; a slot of
//    a type-specific function is not taken as a number by code.
// The closures that only those closures made have vtables of their own, dead once the first
// are gone: scripts/build runs this, removes the unused code, and runs it again (`--again`:
// finding none then is no error). Run by scripts/build (and scripts/size) on a wasm that still
// has its names, each time before wasm-opt removes what no longer has a use.
//   node scripts/drop-dead-vtables.mjs [--again] WASM
import { readFileSync, writeFileSync } from 'node:fs';
import { Reader, lebBytes, sections, section } from './wasm-sections.mjs';

const DEAD = /wasm_streams::(readable::into_underlying_(byte_)?source|writable::into_underlying_sink)::/;

const again = process.argv[2] === '--again';
const [wasmFile] = process.argv.slice(again ? 3 : 2);
const b = readFileSync(wasmFile);
const all = sections(b);
const body = (s) => b.subarray(s.at, s.at + s.size);
let imported = 0, defined = 0, code;
const names = new Map(), data = [];
let elem;
for (const s of all) {
  const r = new Reader(b, s.at);
  if (s.id === 2) {
    imported = r.importedFunctions();
  } else if (s.id === 3) {
    defined = r.leb();
  } else if (s.id === 10) {
    code = body(s);
  } else if (s.id === 11) {
    for (let n = r.leb(); n > 0; n--) {
      const flags = r.leb();
      if (flags !== 0 || b[r.i] !== 0x41) throw new Error('a data segment not at a constant address');
      r.i++;
      const at = sleb(r);
      if (b[r.i++] !== 0x0b) throw new Error('a data segment not at a constant address');
      const len = r.leb();
      data.push({ at, bytes: b.subarray(r.i, r.i + len) });
      r.i += len;
    }
  } else if (s.id === 9) {
    if (r.leb() !== 1 || r.leb() !== 0 || b[r.i] !== 0x41) throw new Error('not one table segment at a constant');
    r.i++;
    const offset = sleb(r);
    if (b[r.i++] !== 0x0b) throw new Error('not one table segment at a constant');
    const funcs = [];
    for (let n = r.leb(); n > 0; n--) funcs.push(r.leb());
    elem = { offset, funcs };
  } else if (s.id === 0 && r.text() === 'name') {
    while (r.i < s.at + s.size) {
      const sub = r.byte(), len = r.leb(), end = r.i + len;
      if (sub === 1) for (let n = r.leb(); n > 0; n--) names.set(r.leb(), r.text());
      r.i = end;
    }
  }
}
if (!elem || !code || names.size === 0) throw new Error('the wasm has no table, code or names');

function sleb(r) {
  let result = 0n, shift = 0n, x;
  do {
    x = BigInt(r.byte());
    result |= (x & 0x7fn) << shift;
    shift += 7n;
  } while (x & 0x80n);
  if (x & 0x40n) result -= 1n << shift;
  return Number(BigInt.asIntN(32, result));
}
const slebBytes = (n) => {
  const out = [];
  for (;;) {
    const x = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(x & 0x40)) || (n === -1 && (x & 0x40))) return Buffer.from([...out, x]);
    out.push(x | 0x80);
  }
};
const word = (address) => {
  for (const d of data) {
    const k = address - d.at;
    if (k >= 0 && k + 4 <= d.bytes.length) return d.bytes.readUInt32LE(k);
  }
  return undefined;
};
/** Every 4-aligned address whose word is `value`. */
const wordsEqual = (value) => {
  const found = [];
  for (const d of data) {
    for (let k = (4 - (d.at % 4)) % 4; k + 4 <= d.bytes.length; k += 4) {
      if (d.bytes.readUInt32LE(k) === value) found.push(d.at + k);
    }
  }
  return found;
};
const inCode = (value) => code.indexOf(Buffer.concat([Buffer.from([0x41]), slebBytes(value)])) >= 0;

const slotName = (slot) => names.get(elem.funcs[slot - elem.offset]) || '';
const isSlot = (v) => v >= elem.offset && v < elem.offset + elem.funcs.length;
// A panic location's line (`{file: &str, line, column}`: the file's address and length before
// it, its column after), not a slot however small the number.
const dataStart = Math.min(...data.map((d) => d.at));
const dataEnd = Math.max(...data.map((d) => d.at + d.bytes.length));
const isLine = (at) => {
  const file = word(at - 8), len = word(at - 4), column = word(at + 4);
  return file >= dataStart && file < dataEnd && len > 0 && len < 4096 && column < 4096;
};
const isDrop = (slot) => slotName(slot).startsWith('core::ptr::drop_in_place<');
// The dead vtables: at an address holding a dead drop's slot, aligned as a vtable is, and never
// referred to.
const deadVtables = new Set();
for (let k = 0; k < elem.funcs.length; k++) {
  const slot = elem.offset + k;
  if (!DEAD.test(slotName(slot)) || !slotName(slot).startsWith('core::ptr::drop_in_place<')) continue;
  for (const at of wordsEqual(slot)) {
    const align = word(at + 8);
    if (![1, 2, 4, 8, 16].includes(align) || !isSlot(word(at + 12))) continue;
    // Its address, or an entry's (a constant folded into a load), in code or data: not dead.
    let end = at + 12;
    while (isSlot(word(end)) && !isDrop(word(end))) end += 4;
    let held = false;
    for (let a = at; a < end && !held; a += 4) held = inCode(a) || wordsEqual(a).length > 0;
    if (!held) deadVtables.add(at);
  }
}
// A slot goes when every data word that holds it is a dead vtable's entry or a location's line.
const deadEntries = new Set();
for (const at of deadVtables) {
  deadEntries.add(at);
  // Its methods: the slots after its size and alignment, up to the next vtable's drop.
  for (let m = at + 12; isSlot(word(m)) && !isDrop(word(m)); m += 4) deadEntries.add(m);
}
const emptied = new Set();
for (const at of deadEntries) {
  const slot = word(at);
  if (emptied.has(slot)) continue;
  if (wordsEqual(slot).every((w) => deadEntries.has(w) || isLine(w))) emptied.add(slot);
}
if (emptied.size === 0) {
  if (!again) throw new Error('no dead vtable slot found: update scripts/drop-dead-vtables.mjs');
  process.exit(0);
}

// The slots' new function: one that traps (a new type () -> () if the module has none).
const trap = imported + defined;
const parts = [b.subarray(0, 8)];
let typeIndex;
for (const s of all) {
  if (s.id === 1) {
    const r = new Reader(b, s.at);
    const count = r.leb();
    const first = r.i;
    for (let t = 0; t < count; t++) {
      if (b[r.i] !== 0x60) throw new Error('a type that is not a function type');
      const start = r.i++;
      const params = r.leb();
      for (let p = 0; p < params; p++) valType(r);
      const results = r.leb();
      for (let p = 0; p < results; p++) valType(r);
      if (r.i - start === 3 && typeIndex === undefined) typeIndex = t;
    }
    if (typeIndex === undefined) {
      typeIndex = count;
      parts.push(section(1, Buffer.concat([lebBytes(count + 1), b.subarray(first, r.i), Buffer.from([0x60, 0, 0])])));
    } else {
      parts.push(section(1, body(s)));
    }
  } else if (s.id === 3) {
    const r = new Reader(b, s.at);
    const count = r.leb();
    parts.push(section(3, Buffer.concat([lebBytes(count + 1), b.subarray(r.i, s.at + s.size), lebBytes(typeIndex)])));
  } else if (s.id === 10) {
    const r = new Reader(b, s.at);
    const count = r.leb();
    parts.push(section(10, Buffer.concat([lebBytes(count + 1), b.subarray(r.i, s.at + s.size), Buffer.from([3, 0, 0x00, 0x0b])])));
  } else if (s.id === 9) {
    const funcs = elem.funcs.map((f, k) => (emptied.has(elem.offset + k) ? trap : f));
    parts.push(section(9, Buffer.concat([lebBytes(1), lebBytes(0), Buffer.from([0x41]), slebBytes(elem.offset), Buffer.from([0x0b]),
      lebBytes(funcs.length), ...funcs.map((f) => lebBytes(f))])));
  } else {
    parts.push(section(s.id, body(s)));
  }
}

function valType(r) {
  const t = r.byte();
  // (ref null? heaptype): a heap type follows.
  if (t === 0x63 || t === 0x64) sleb(r);
}

console.error(`drop-dead-vtables: ${deadVtables.size} dead vtables, ${emptied.size} slots emptied`);
writeFileSync(wasmFile, Buffer.concat(parts));
