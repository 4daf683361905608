#!/usr/bin/env node
// Serves the tab/ folder (the relay client and the demo page) for local runs, with no dependencies.
//
//   node scripts/serve-tab.mjs --port 8788 [--host 127.0.0.1] [--relay http://127.0.0.1:8787]
//
// `/` redirects to `/demo/` (keeping the query), nothing outside tab/ is served, nothing is cached.
// `--relay` fixes the relay the demo app pairs with: `/demo/config.js` (the page's configuration)
// is then served naming that relay's origin instead of the file's default. A query cannot change it.
// `--local` does the same for the local server's address (`tabrelay-local`) the tab connects to beside it.

import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../tab/', import.meta.url)));
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};
const USAGE = 'usage: node scripts/serve-tab.mjs --port 8788 [--host 127.0.0.1] [--relay http://127.0.0.1:8787] [--local http://127.0.0.1:8790]';
/** The demo app's configuration, served for `--relay`. */
const CONFIG_PATH = '/demo/config.js';

const { port, host, relay, local } = options(process.argv.slice(2));
const server = createServer((req, res) => {
  serve(req, res).catch(() => send(res, 500, 'The file could not be read.'));
});
server.on('error', (err) => {
  console.error(
    err.code === 'EADDRINUSE'
      ? `serve-tab: port ${port} is in use; choose another with --port.`
      : `serve-tab: ${err.message}`,
  );
  process.exit(1);
});
server.listen(port, host, () => {
  const shown = host.includes(':') ? `[${host}]` : host;
  console.log(`demo: http://${shown}:${server.address().port}/demo/`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

function options(args) {
  const out = { port: 8788, host: '127.0.0.1' };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === '--port' && /^\d{1,5}$/.test(value ?? '') && Number(value) <= 65535) out.port = Number(value);
    else if (flag === '--host' && value) out.host = value;
    else if (flag === '--relay') out.relay = relayOrigin(value) || fail(`serve-tab: --relay needs the relay's http(s) address, not ${JSON.stringify(value ?? '')}; ${USAGE}`);
    else if (flag === '--local') out.local = relayOrigin(value) || fail(`serve-tab: --local needs the local server's http address, not ${JSON.stringify(value ?? '')}; ${USAGE}`);
    else fail(flag === '--help' || flag === '-h' ? USAGE : `serve-tab: ${JSON.stringify(flag)} is not understood; ${USAGE}`);
  }
  return out;
}

/** The origin of an http(s) relay address, or null. */
function relayOrigin(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : null;
  } catch {
    return null;
  }
}

function fail(message) {
  console.error(message);
  process.exit(2);
}

async function serve(req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return send(res, 405, 'Only GET and HEAD are served.');
  }
  const url = new URL(req.url, 'http://tab.local');
  let path;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return send(res, 400, 'The path is not valid.');
  }
  if (path === '/') return redirect(res, `/demo/${url.search}`);
  if (path === CONFIG_PATH && (relay || local)) {
    // The file as it is, with the addresses given in place of its own.
    let text = await readFile(join(ROOT, `.${CONFIG_PATH}`)).then(String);
    if (relay) text = text.replace(/^export const RELAY = .*$/m, `export const RELAY = ${JSON.stringify(relay)};`);
    if (local) text = text.replace(/^export const LOCAL = .*$/m, `export const LOCAL = ${JSON.stringify(local)};`);
    res.writeHead(200, {
      'Content-Type': TYPES['.js'],
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    return res.end(req.method === 'HEAD' ? undefined : text);
  }
  // No NUL, no backslash, no `..` (even encoded): the path names a file under tab/.
  const parts = path.split('/');
  const file = resolve(ROOT, `.${path}`);
  if (/[\0\\]/.test(path) || parts.includes('..') || (file !== ROOT && !file.startsWith(ROOT + sep))) {
    return send(res, 403, 'Only files in the tab folder are served.');
  }
  if (parts.some((part) => part.startsWith('.'))) return send(res, 404, 'Not found.');
  let info;
  try {
    info = await stat(file);
  } catch {
    return send(res, 404, 'Not found.');
  }
  if (info.isDirectory()) {
    // One leading slash: `//demo` must not become a redirect to another host.
    if (!path.endsWith('/')) return redirect(res, `/${url.pathname.replace(/^\/+/, '')}/${url.search}`);
    return serveFile(req, res, join(file, 'index.html'));
  }
  return serveFile(req, res, file);
}

async function serveFile(req, res, file) {
  let real;
  let info;
  try {
    real = await realpath(file);
    info = await stat(real);
  } catch {
    return send(res, 404, 'Not found.');
  }
  // A symbolic link must not lead out of tab/.
  const root = await realpath(ROOT);
  if (!real.startsWith(root + sep) || !info.isFile()) return send(res, 404, 'Not found.');
  res.writeHead(200, {
    'Content-Type': TYPES[extname(real).toLowerCase()] || 'application/octet-stream',
    'Content-Length': info.size,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(real).on('error', () => res.destroy()).pipe(res);
}

function redirect(res, location) {
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}

function send(res, status, text) {
  if (res.headersSent) return res.destroy();
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(`${text}\n`);
}
