// A small reverse proxy in front of the relay for the conformance suite's `server` mode, which
// has no way to send a bearer token: it adds a valid one to every request and streams each
// answer back as it comes. A page's Origin equal to the proxy's own is passed on as the
// relay's (the proxy stands where the relay would); any other Origin is passed on unchanged,
// so the relay's own DNS-rebinding refusal is what the suite sees. Nothing in the relay is
// switched off for this.

import { createServer, request as httpRequest } from 'node:http';

/** Starts the proxy on 127.0.0.1; resolves to { url, close }. */
export function startProxy(relay, token) {
  const upstream = new URL(relay);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` };
    const port = server.address().port;
    if (headers.origin === `http://localhost:${port}` || headers.origin === `http://127.0.0.1:${port}`) {
      headers.origin = upstream.origin;
    }
    const out = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    // A client closing its stream is passed on: the relay then cancels the call in the tab.
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://localhost:${port}/`,
        close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
      });
    });
  });
}
