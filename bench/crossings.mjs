// Counts the crossings between JavaScript and wasm on a Worker's hot path (issue 12: every call
// pays for each one). A measuring tool, not part of any build:
//   node bench/crossings.mjs patch build/index.js     counts every import (wasm -> JS) and
//       export (JS -> wasm) call of a built Worker's glue, logged as a CROSSINGS line at every
//       50th fetch (Worker `fetch`, `pairing_fetch`, `hop_fetch`); rebuild to undo
//   node bench/crossings.mjs report LOG fetch=150 fetch=300
//       the calls per request between two of those lines of a wrangler log (drive only the
//       request measured in between: the counts are for everything the isolate ran)
import { readFileSync, writeFileSync } from 'node:fs';

const [command, file, a, b] = process.argv.slice(2);
if (command === 'patch') {
  let s = readFileSync(file, 'utf8');
  const re = /new WebAssembly\.Instance\((\w+),(\w+)\(\)\),(\w+)=(\w+)\.exports/g;
  const n = (s.match(re) || []).length;
  if (n === 0) throw new Error('no instance found');
  s = s.replace(re, 'new WebAssembly.Instance($1,__cx.imports($2())),$3=__cx.exports($4.exports)');
  const prefix = `const __cx = (() => {
    const id = Math.random().toString(36).slice(2, 6);
    const imports = {}, exports = {};
    const dump = (why) => console.log('CROSSINGS ' + id + ' ' + why + ' ' + JSON.stringify({ imports, exports }));
    return {
      imports(o) {
        const m = o['./index_bg.js'];
        for (const k of Object.keys(m)) {
          const f = m[k];
          if (typeof f !== 'function') continue;
          const name = k.replace(/_[0-9a-f]{16}$/, '');
          m[k] = function (...a) { imports[name] = (imports[name] || 0) + 1; return f.apply(this, a); };
        }
        return o;
      },
      exports(e) {
        const w = {};
        for (const k of Object.keys(e)) {
          const f = e[k];
          if (typeof f !== 'function') { w[k] = f; continue; }
          w[k] = function (...a) {
            exports[k] = (exports[k] || 0) + 1;
            if ((k === 'fetch' || k === 'pairing_fetch' || k === 'hop_fetch') && exports[k] % 50 === 0) dump(k + '=' + exports[k]);
            return f.apply(this, a);
          };
        }
        return w;
      },
    };
  })();
  `;
  writeFileSync(file, prefix + s);
  console.log(`patched ${n} instances in ${file}`);
} else if (command === 'report') {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => { const m = /CROSSINGS (\w+) (\S+) (.*)$/.exec(l); return { id: m[1], why: m[2], data: JSON.parse(m[3]) }; });
  const find = (why) => lines.find((l) => l.why === why);
  const A = find(a), B = find(b);
  const calls = Number(b.split('=')[1]) - Number(a.split('=')[1]);
  console.log(`isolate ${A.id}/${B.id}, ${calls} calls between ${a} and ${b}`);
  for (const kind of ['imports', 'exports']) {
    const rows = Object.keys(B.data[kind]).map((k) => [k, ((B.data[kind][k] || 0) - (A.data[kind][k] || 0)) / calls]).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]);
    const total = rows.reduce((s, [, v]) => s + v, 0);
    console.log(`${kind} per call: ${total.toFixed(1)}`);
    for (const [k, v] of rows) console.log(`  ${v.toFixed(2).padStart(6)} ${k}`);
  }
} else {
  throw new Error('usage: node bench/crossings.mjs patch FILE | report LOG FROM TO');
}
