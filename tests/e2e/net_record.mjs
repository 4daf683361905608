// Preloaded (NODE_OPTIONS=--import) into a client run as a child process: appends one JSON line
// per network access to the file named by TABRELAY_NET_RECORD, so a test can check that the
// client spoke to the relay and to nothing else, and what the relay answered it. Records every
// outgoing TCP connection (whatever makes it) and, for fetch, each URL with its status and
// WWW-Authenticate. It only watches; it changes nothing.
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const file = process.env.TABRELAY_NET_RECORD;
if (file) {
  const record = (entry) => appendFileSync(file, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);

  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    const options = typeof args[0] === 'object' && args[0] !== null ? (Array.isArray(args[0]) ? args[0][0] : args[0]) : { port: args[0], host: args[1] };
    record({ kind: 'connect', host: options.host ?? 'localhost', port: Number(options.port), path: options.path });
    return connect.apply(this, args);
  };

  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    try {
      const r = await realFetch(input, init);
      record({ kind: 'fetch', method, url, status: r.status, wwwAuthenticate: r.headers.get('www-authenticate') });
      return r;
    } catch (e) {
      record({ kind: 'fetch', method, url, error: String(e?.cause?.code ?? e?.message ?? e) });
      throw e;
    }
  };
}
