// The CPU a Worker used, as the operating system counts it (scripts/bench, scripts/bench-ab).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

// wrangler dev runs the Worker in workerd, a child (or grandchild) of the wrangler process. The
// CPU a process used is its utime + stime in /proc/<pid>/stat (clock ticks, all its threads).
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
function processes() {
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const f = stat.slice(close + 2).split(' ');
      all.push({ pid: Number(name), comm, ppid: Number(f[1]) });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}
/**
 * The workerd processes under a wrangler process, as `{ worker, proxy }`: wrangler dev runs two,
 * its proxy (listening on the public port) and the one that runs the Worker and its Durable
 * Objects (on a port of its own). The Worker's is the one judged; the proxy's is shown.
 */
export function workerdsUnder(root, url) {
  const all = processes();
  const under = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!under.has(p.pid) && under.has(p.ppid)) {
        under.add(p.pid);
        grew = true;
      }
    }
  }
  const found = all.filter((p) => under.has(p.pid) && p.comm === 'workerd').map((p) => p.pid);
  const publicAddr = `entry=${new URL(url).host}`;
  const isProxy = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((a) => a.endsWith(publicAddr));
  const worker = found.filter((pid) => !isProxy(pid));
  if (worker.length !== 1) throw new Error(`not one Worker workerd under process ${root}: ${found}`);
  return { worker, proxy: found.filter(isProxy) };
}
export function cpuMs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
  }
  return ticks * TICK_MS;
}
