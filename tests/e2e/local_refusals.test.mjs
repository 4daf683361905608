// The local server takes a tab's socket only as the relay would, and only on loopback: a socket
// from a page of another origin is closed with the relay's code, a request naming another host
// (a name rebound to 127.0.0.1: DNS rebinding) is refused before any socket exists, and a
// message over the relay's bounds closes the socket (before the hello: the relay's bound on an
// unproven socket's message). A stdin message over the endpoint's cap is refused as the relay
// refuses such a body, and the next is read. A later agent app's tabrelay-local joins on
// `/agent` only with the secret the first wrote (owner-only), and never from a page.
import test from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rawTabSocket, APP_ORIGIN, waitFor } from './harness.mjs';
import { startBare, LOCAL_URL, LOCAL_PORT } from './local_harness.mjs';

/** A pairing id of the form the relay reads (what names a socket's pairing). */
const QUERY = `pairing=${'a'.repeat(64)}`;

async function started(t) {
  const { child, listening } = startBare();
  t.after(() => child.kill());
  await listening;
  return child;
}

test('a socket from a page of another origin is closed with the relay’s refusal', async (t) => {
  await started(t);
  const outsider = rawTabSocket(QUERY, { origin: 'http://evil.example', relay: LOCAL_URL });
  const { code, reason } = await outsider.closed;
  assert.equal(code, 4403, reason);
  assert.equal(outsider.messages.length, 0, 'no challenge was sent');
  // The app's own origin gets its challenge on the same server.
  const own = rawTabSocket(QUERY, { origin: APP_ORIGIN, relay: LOCAL_URL });
  assert.match(await own.challenge, /^[A-Za-z0-9_-]+$/);
  own.ws.close();
});

test('a request naming another host (DNS rebinding) is refused before any socket', async (t) => {
  await started(t);
  const answer = (host) =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(LOCAL_PORT), '127.0.0.1', () => {
        socket.write(
          `GET /tab?${QUERY} HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: ${APP_ORIGIN}\r\n\r\n`,
        );
      });
      let said = '';
      socket.on('data', (d) => {
        said += d;
        if (said.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(said.split('\r\n')[0]);
        }
      });
      socket.on('error', reject);
    });
  assert.match(await answer(`rebound.example:${LOCAL_PORT}`), /^HTTP\/1\.1 421/);
  assert.match(await answer(`127.0.0.1:${LOCAL_PORT}`), /^HTTP\/1\.1 101/);
});

test('only a tabrelay-local of the same user joins on /agent: with the secret, and no page', async (t) => {
  await started(t);
  const answer = (headers) =>
    new Promise((resolve, reject) => {
      const socket = connect(Number(LOCAL_PORT), '127.0.0.1', () => {
        const lines = [`GET /agent HTTP/1.1`, `Host: 127.0.0.1:${LOCAL_PORT}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', ...headers];
        socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      });
      let said = '';
      socket.on('data', (d) => {
        said += d;
        if (said.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(said.split('\r\n')[0]);
        }
      });
      socket.on('error', reject);
    });
  const secret = readFileSync(join(process.env.XDG_RUNTIME_DIR || tmpdir(), `tabrelay-local-${LOCAL_PORT}.secret`), 'utf8').trim();
  assert.match(await answer([]), /^HTTP\/1\.1 403/, 'no secret');
  assert.match(await answer([`x-tabrelay-agent: ${secret.slice(1)}x`]), /^HTTP\/1\.1 403/, 'another secret');
  assert.match(await answer([`x-tabrelay-agent: ${secret}`, `Origin: ${APP_ORIGIN}`]), /^HTTP\/1\.1 403/, 'a page, even with the secret');
  assert.match(await answer([`x-tabrelay-agent: ${secret}`]), /^HTTP\/1\.1 101/);
});

test('a message over the relay’s bound closes the socket', async (t) => {
  await started(t);
  // Before its hello a socket's message is bounded as on the relay (a few KiB).
  const early = rawTabSocket(QUERY, { origin: APP_ORIGIN, relay: LOCAL_URL });
  await early.challenge;
  early.ws.send('x'.repeat(64 * 1024));
  const { code } = await early.closed;
  assert.notEqual(code, 1000);
  assert.notEqual(code, 1005);
  // Far over every bound (17 MiB): not even read whole.
  const huge = rawTabSocket(QUERY, { origin: APP_ORIGIN, relay: LOCAL_URL });
  await huge.challenge;
  huge.ws.send('x'.repeat(17 * 1024 * 1024));
  const closed = await huge.closed;
  assert.notEqual(closed.code, 1000);
});

test('a stdin message over the endpoint’s cap is refused with its sentence, and the next is answered', async (t) => {
  const child = await started(t);
  const lines = [];
  let buffered = '';
  child.stdout.on('data', (d) => {
    buffered += d;
    const parts = buffered.split('\n');
    buffered = parts.pop();
    lines.push(...parts.map((l) => JSON.parse(l)));
  });
  // 2 MiB in one line (the endpoint takes 1 MiB), then a ping.
  child.stdin.write(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}}\n`);
  child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  await waitFor(() => lines.length >= 2);
  assert.equal(lines[0].error?.code, -32600, JSON.stringify(lines[0]));
  assert.match(lines[0].error.message, /1048576|1 MiB|too large/i);
  assert.deepEqual(lines[1], { id: 2, jsonrpc: '2.0', result: {} });
});
