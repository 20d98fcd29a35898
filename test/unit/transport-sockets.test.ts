// The transport's sockets: requests share a few keep-alive sockets; watches hold their own. The
// local HTTP server below is a FAKE apiserver that keeps watch streams open without ever sending
// an event and counts connections — what a real apiserver does between events, on demand.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SOCKETS, Transport } from '../../src/k8s/http.js';

const servers: http.Server[] = [];
const transports: Transport[] = [];
afterEach(async () => {
  for (const t of transports.splice(0)) t.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

/** A server that answers GETs with `{}` and keeps watches open; counts the connections it accepted. */
async function server(): Promise<{ url: string; connections: () => number; watching: () => number }> {
  let connections = 0;
  let watching = 0;
  const s = http.createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://x').searchParams.get('watch') === 'true') {
      watching++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      return; // a stream with no event yet
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  s.on('connection', () => connections++);
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, connections: () => connections, watching: () => watching };
}

describe('Transport sockets', () => {
  it('open watches never hold the sockets requests need', async () => {
    const srv = await server();
    const t = new Transport({ cluster: 'c1', server: srv.url, maxSockets: 2 });
    transports.push(t);
    const watches = await Promise.all([1, 2, 3].map(() => t.open({ method: 'GET', path: '/api/v1/pods', query: { watch: 'true' }, retry: 'read' }, 0)));
    expect(watches.map((w) => w.res.statusCode)).toEqual([200, 200, 200]);
    expect(srv.watching()).toBe(3);
    // With watches on the request agent, these would wait for a socket until their timeout.
    const answers = await Promise.all([1, 2, 3, 4].map(() => t.request({ method: 'GET', path: '/api/v1/namespaces', retry: 'none', timeoutMs: 10_000 })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    for (const w of watches) {
      w.abort();
      w.done();
    }
  });

  it('requests share at most maxSockets sockets, kept alive between requests', async () => {
    const srv = await server();
    const t = new Transport({ cluster: 'c1', server: srv.url });
    transports.push(t);
    await Promise.all(Array.from({ length: 40 }, () => t.request({ method: 'GET', path: '/api/v1/namespaces', retry: 'none' })));
    expect(srv.connections()).toBeLessThanOrEqual(DEFAULT_MAX_SOCKETS);
    const before = srv.connections();
    await t.request({ method: 'GET', path: '/api/v1/namespaces', retry: 'none' });
    expect(srv.connections()).toBe(before);
  });
});
