// Retry/backoff policy and the transport's retry behaviour. The tiny local HTTP server below is a
// FAKE used only to inject faults a real apiserver cannot be made to produce on demand (429 with
// Retry-After, 503, dropped connections); everything else is tested against the real sandbox.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Transport } from '../../src/k8s/http.js';
import { TokenBucket } from '../../src/k8s/rate-limit.js';
import { isPermanent500, parseRetryAfter, retryDelay } from '../../src/k8s/retry.js';

describe('retryDelay', () => {
  const zero = (): number => 0;
  it('retries 429 for every class and honours Retry-After', () => {
    for (const cls of ['read', 'idempotent', 'unsafe'] as const) expect(retryDelay(cls, { kind: 'status', status: 429, retryAfterSeconds: 2 }, 1, undefined, zero)).toBe(2000);
  });
  it('retries 500 only for reads; 502/503/504 for idempotent calls only', () => {
    expect(retryDelay('read', { kind: 'status', status: 500 }, 1)).toBeDefined();
    expect(retryDelay('idempotent', { kind: 'status', status: 500 }, 1)).toBeUndefined();
    expect(retryDelay('idempotent', { kind: 'status', status: 503 }, 1)).toBeDefined();
    expect(retryDelay('unsafe', { kind: 'status', status: 503 }, 1)).toBeUndefined();
    expect(retryDelay('read', { kind: 'status', status: 404 }, 1)).toBeUndefined();
    expect(retryDelay('read', { kind: 'status', status: 409 }, 1)).toBeUndefined();
  });
  it('retries a 500 of a server-side apply (a webhook that timed out) as a read; never of a delete, create, PUT or patch (issue 51)', () => {
    expect(retryDelay('apply', { kind: 'status', status: 500 }, 1)).toBeDefined();
    expect(retryDelay('apply', { kind: 'status', status: 500 }, 5)).toBeDefined();
    expect(retryDelay('apply', { kind: 'status', status: 500 }, 6)).toBeUndefined(); // the bound of reads: 5 retries
    expect(retryDelay('apply', { kind: 'status', status: 503 }, 1)).toBeDefined();
    expect(retryDelay('apply', { kind: 'error', code: 'ECONNRESET', sent: true }, 1)).toBeDefined();
    expect(retryDelay('apply', { kind: 'status', status: 409 }, 1)).toBeUndefined();
    expect(retryDelay('apply', { kind: 'status', status: 422 }, 1)).toBeUndefined();
    expect(retryDelay('idempotent', { kind: 'status', status: 500 }, 1)).toBeUndefined(); // DELETE: a second copy answers 404
    expect(retryDelay('unsafe', { kind: 'status', status: 500 }, 1)).toBeUndefined();
    // a manifest field the kind does not declare: SSA answers 500 the same every time
    expect(isPermanent500('{"kind":"Status","code":500,"message":"failed to create typed patch object (ns/x; /v1, Kind=ConfigMap): .spec: field not declared in schema"}')).toBe(true);
    expect(retryDelay('apply', { kind: 'status', status: 500, permanent: true }, 1)).toBeUndefined();
    expect(isPermanent500('{"kind":"Status","code":500,"message":"Internal error occurred: failed calling webhook \\"v.example.com\\": context deadline exceeded"}')).toBe(false);
  });
  it('retries a create after a network error only when the request was not sent', () => {
    expect(retryDelay('unsafe', { kind: 'error', code: 'ECONNREFUSED', sent: false }, 1)).toBeDefined();
    expect(retryDelay('unsafe', { kind: 'error', code: 'ECONNRESET', sent: true }, 1)).toBeUndefined();
    expect(retryDelay('idempotent', { kind: 'error', code: 'ECONNRESET', sent: true }, 1)).toBeDefined();
    expect(retryDelay('read', { kind: 'error', timeout: true, sent: true }, 1)).toBeDefined();
    expect(retryDelay('none', { kind: 'error', code: 'ECONNREFUSED', sent: false }, 1)).toBeUndefined();
  });
  it('backs off exponentially with jitter, capped, and gives up after maxRetries', () => {
    const policy = { maxRetries: 4, baseDelayMs: 100, maxDelayMs: 500 };
    const lo = [1, 2, 3, 4].map((a) => retryDelay('read', { kind: 'status', status: 503 }, a, policy, () => 0));
    const hi = [1, 2, 3, 4].map((a) => retryDelay('read', { kind: 'status', status: 503 }, a, policy, () => 0.999999));
    expect(lo).toEqual([50, 100, 200, 250]);
    expect(hi.map((x) => Math.round(x ?? 0))).toEqual([100, 200, 400, 500]);
    expect(retryDelay('read', { kind: 'status', status: 503 }, 5, policy)).toBeUndefined();
  });
  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString(), Date.now())).toBeGreaterThan(3);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('TokenBucket', () => {
  it('allows a burst, then limits to qps', async () => {
    const b = new TokenBucket(20, 5);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await b.take();
    expect(Date.now() - t0).toBeLessThan(30);
    for (let i = 0; i < 4; i++) await b.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150); // 4 more tokens at 20/s ≈ 200 ms
  });
});

describe('Transport retries (fake server for fault injection)', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

  function serve(handler: (n: number, req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
    let n = 0;
    server = http.createServer((req, res) => handler(++n, req, res));
    return new Promise((r) => server?.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server?.address() as AddressInfo).port}`)));
  }

  it('retries 429 with Retry-After, then succeeds, counting requests and retries', async () => {
    const url = await serve((n, _req, res) => {
      if (n === 1) {
        res.writeHead(429, { 'Retry-After': '1', 'Content-Type': 'application/json' });
        res.end('{"kind":"Status","code":429}');
      } else res.end('{"ok":true}');
    });
    const t = new Transport({ cluster: 'fake', server: url });
    const t0 = Date.now();
    const r = await t.request({ method: 'GET', path: '/x', retry: 'read' });
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(t.stats).toEqual({ requests: 2, writes: 0, retries: 1, byVerb: { get: 2 }, notFound: 0 });
    t.close();
  });

  it('does not retry a POST that got 503 (it may have been applied), but retries a server-side apply', async () => {
    const url = await serve((n, _req, res) => {
      res.writeHead(n === 1 || n === 2 ? 503 : 200);
      res.end('{}');
    });
    const t = new Transport({ cluster: 'fake', server: url, retry: { baseDelayMs: 1 } });
    const post = await t.request({ method: 'POST', path: '/x', body: {}, retry: 'unsafe', write: true });
    expect(post.status).toBe(503);
    const apply = await t.request({ method: 'PATCH', path: '/x', body: {}, retry: 'idempotent', write: true, verb: 'apply' });
    expect(apply.status).toBe(200);
    expect(t.stats).toEqual({ requests: 3, writes: 3, retries: 1, byVerb: { create: 1, apply: 2 }, notFound: 0 });
    t.close();
  });

  it('retries a read after the server drops the connection mid-response', async () => {
    const url = await serve((n, req, res) => {
      if (n === 1) req.socket.destroy();
      else res.end('{}');
    });
    const t = new Transport({ cluster: 'fake', server: url, retry: { baseDelayMs: 1 } });
    expect((await t.request({ method: 'GET', path: '/x', retry: 'read' })).status).toBe(200);
    expect(t.stats.retries).toBe(1);
    t.close();
  });

  it('fails fast with the network error when nothing listens (retry class none)', async () => {
    const url = await serve((_n, _req, res) => res.end());
    const port = new URL(url).port;
    await new Promise<void>((r) => server?.close(() => r()));
    server = undefined;
    const t = new Transport({ cluster: 'fake', server: `http://127.0.0.1:${port}` });
    await expect(t.request({ method: 'GET', path: '/version', retry: 'none' })).rejects.toMatchObject({ code: 'ECONNREFUSED', sent: false });
    t.close();
  });
});

describe('a silent watch (fake server: a half-open connection a real apiserver cannot be made to produce)', () => {
  let server: http.Server | undefined;
  afterEach(() => new Promise<void>((r) => (server ? (server.closeAllConnections(), server.close(() => r())) : r())));

  it('is cut and the state re-listed, so the callback sees the change within the stall bound', async () => {
    const { runWatch } = await import('../../src/k8s/watch.js');
    let watches = 0;
    // Every watch is accepted and then never sends a byte (nor ends at timeoutSeconds).
    server = http.createServer((_req, res) => {
      watches++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
    });
    const url = await new Promise<string>((r) => server?.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server?.address() as AddressInfo).port}`)));
    const t = new Transport({ cluster: 'fake', server: url });
    const started = Date.now();
    const readyAt = started + 1000; // the object becomes ready 1 s in; only a LIST can tell
    let lists = 0;
    const obj = (ready: boolean) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'ns', resourceVersion: ready ? '2' : '1' }, data: { ready: String(ready) } });
    const deps = {
      transport: t,
      cluster: 'fake',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      collectionPath: () => Promise.resolve('/api/v1/namespaces/ns/configmaps'),
      list: () => {
        lists++;
        return Promise.resolve({ items: [obj(Date.now() >= readyAt)], resourceVersion: Date.now() >= readyAt ? '2' : '1' });
      },
    };
    await runWatch(deps, { stallMs: 1500 }, (_e, state) => state.get('ns/x')?.data !== undefined && (state.get('ns/x')?.data as { ready: string }).ready === 'true');
    const took = Date.now() - started;
    expect(lists).toBeGreaterThanOrEqual(2); // re-listed after the silent watch was cut
    expect(watches).toBeGreaterThanOrEqual(1);
    expect(took).toBeLessThan(1000 + 2 * 1500 + 1000); // ready + at most stallMs + grace (+ slack)
    t.close();
  });
});
