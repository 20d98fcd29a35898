// The outage bound of a connection is one clock (issue 31 item 1): once the apiserver has been
// unreachable for KPLAY_OUTAGE_SECONDS, every later request on that connection — the next task's,
// a lock renewal, the run record — fails at its first refused connect instead of starting a new
// wait; an answered request ends the outage. The local HTTP server is a FAKE standing in for an
// apiserver that goes away (connections refused), or for a front end that trickles its answer (a
// slow loris): a real one cannot be stopped, or made to trickle, on demand here.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClientImpl } from '../../src/k8s/client.js';
import { Transport, type TransportRequest } from '../../src/k8s/http.js';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server?.listening ? server.close(() => r()) : r())));

function listen(port = 0): Promise<number> {
  server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"gitVersion":"v1.34.4"}'));
  return new Promise((resolve) => server?.listen(port, '127.0.0.1', () => resolve((server?.address() as AddressInfo).port)));
}
const stop = (): Promise<void> =>
  new Promise((r) => {
    if (!server) return r();
    server.close(() => r());
    server.closeAllConnections(); // the apiserver is gone: its kept-alive connections too
  });

/** A client whose transport retries once at once (a stale kept-alive socket), counting the requests the client sends it. */
function client(port: number): { c: KubeClientImpl; attempts: () => number } {
  const url = `http://127.0.0.1:${port}`;
  const transport = new Transport({ cluster: 'c1', server: url, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
  let n = 0;
  const request = transport.request.bind(transport);
  transport.request = (req: TransportRequest) => {
    n++;
    return request(req);
  };
  const c = new KubeClientImpl('c1', url, transport);
  c.outageBudgetMs = 1000;
  return { c, attempts: () => n };
}
const version: TransportRequest = { method: 'GET', path: '/version', verb: 'get', retry: 'read' };

describe('outage bound', () => {
  it('is spent once per outage: a later request does not start a new wait', async () => {
    const port = await listen();
    const { c, attempts } = client(port);
    await c.call(version);
    await stop();
    const first = attempts();
    await expect(c.call(version)).rejects.toThrow(/cluster c1 unreachable at .*ECONNREFUSED.*kept trying for \d+ s/);
    expect(attempts() - first).toBeGreaterThanOrEqual(2); // it waited for the apiserver within the bound
    const second = attempts();
    await expect(c.call(version)).rejects.toThrow(/cluster c1 unreachable/);
    expect(attempts() - second).toBe(1); // the bound is spent: no new wait
  });

  it('ends when a request is answered again', async () => {
    const port = await listen();
    const { c, attempts } = client(port);
    await c.call(version);
    await stop();
    await expect(c.call(version)).rejects.toThrow(/unreachable/);
    await listen(port);
    await c.call(version);
    await stop();
    const before = attempts();
    await expect(c.call(version)).rejects.toThrow(/unreachable/);
    expect(attempts() - before).toBeGreaterThanOrEqual(2); // a new outage gets the whole bound again
  });
});

describe("the transport's own backoff", () => {
  it('stops at the deadline the outage bound gives it', async () => {
    // a FAKE endpoint that accepts and drops every connection (a network error on each attempt)
    let connects = 0;
    const net = await import('node:net');
    const dropper = net.createServer((s) => {
      connects++;
      s.destroy();
    });
    const port = await new Promise<number>((r) => dropper.listen(0, '127.0.0.1', () => r((dropper.address() as AddressInfo).port)));
    try {
      const t = new Transport({ cluster: 'c1', server: `http://127.0.0.1:${port}`, retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 } });
      await expect(t.request({ ...version, deadline: Date.now() - 1 })).rejects.toThrow();
      expect(connects).toBe(1);
      await expect(t.request(version)).rejects.toThrow();
      expect(connects).toBe(1 + 4); // without a deadline: the first attempt and 3 retries
    } finally {
      await new Promise<void>((r) => dropper.close(() => r()));
    }
  });
});

describe('a whole request (issue 51)', () => {
  it('is bounded by the outage bound however its bytes trickle in, naming the cluster and the phase; once spent, a later request gets one short try', async () => {
    let trickle = false;
    server = http.createServer((_req, res) => {
      if (!trickle) return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"gitVersion":"v1.34.4"}');
      // headers at once, then a byte every 50 ms, never the end
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{');
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const port = await new Promise<number>((resolve) => server?.listen(0, '127.0.0.1', () => resolve((server?.address() as AddressInfo).port)));
    const { c, attempts } = client(port);
    try {
      await c.call(version);
      trickle = true;
      const first = attempts();
      await expect(c.call(version)).rejects.toThrow(/^cluster c1 did not answer in time at http:\/\/127\.0\.0\.1:\d+: GET http:\/\/127\.0\.0\.1:\d+\/version: timeout after \d+ ms reading the response body \(HTTP 200, \d+ bytes in [\d.]+ s: the apiserver, or a proxy or load balancer in front of it, sends it too slowly\) \(kept trying for \d+ s; KPLAY_OUTAGE_SECONDS sets how long\)$/);
      expect(attempts() - first).toBe(1); // one attempt, bounded by the whole outage bound (1 s), not 60 s
      const second = attempts();
      await expect(c.call(version)).rejects.toThrow(/did not answer in time/);
      expect(attempts() - second).toBe(1); // the bound is spent: one short try, no new wait
    } finally {
      server.closeAllConnections();
    }
  });
});
