// An answer that says it is JSON and does not parse is an error, never data (issue 32 item 2): a
// LIST cut short but ended cleanly read as 0 objects. The local HTTP server is a FAKE that injects
// the cut (a real apiserver never sends one; a proxy or LB in between does — see
// test/integration/faults-proxy.test.ts for the same fault in front of the real apiserver).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClientImpl } from '../../src/k8s/client.js';
import { Transport } from '../../src/k8s/http.js';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** Serve `answer(n)` for the n-th request (1-based): a body and its content type. */
function serve(answer: (n: number, req: http.IncomingMessage) => { body: string; type?: string }): Promise<KubeClientImpl> {
  let n = 0;
  server = http.createServer((req, res) => {
    const a = answer(++n, req);
    res.writeHead(200, { 'Content-Type': a.type ?? 'application/json', Connection: 'close' });
    res.end(a.body);
  });
  return new Promise((resolve) =>
    server?.listen(0, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
      resolve(new KubeClientImpl('c1', url, new Transport({ cluster: 'c1', server: url })));
    }),
  );
}
const full = JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] });
const half = full.slice(0, Math.floor(full.length / 2));

describe('an answer cut short', () => {
  it('a read is asked again and gets the whole answer', async () => {
    const c = await serve((n) => ({ body: n === 1 ? half : full }));
    const r = await c.call({ method: 'GET', path: '/api/v1/configmaps', verb: 'list', retry: 'read' });
    expect((r.body as { items: unknown[] }).items).toHaveLength(2);
  });

  it('a read cut short every time fails, naming the request', async () => {
    let n = 0;
    const c = await serve(() => (n++, { body: half }));
    await expect(c.call({ method: 'GET', path: '/api/v1/configmaps', verb: 'list', retry: 'read' })).rejects.toThrow(/cluster c1: the apiserver's answer to GET \/api\/v1\/configmaps was cut short \(\d+ bytes of JSON that does not parse, 3 tries\)/);
    expect(n).toBe(3);
  });

  it('a write is not repeated: its outcome is unknown', async () => {
    let n = 0;
    const c = await serve(() => (n++, { body: half }));
    await expect(c.call({ method: 'POST', path: '/api/v1/namespaces/x/configmaps', body: {}, retry: 'unsafe', write: true })).rejects.toThrow(/was cut short/);
    expect(n).toBe(1);
  });

  it('text that is not JSON is returned as text', async () => {
    const c = await serve(() => ({ body: 'ok', type: 'text/plain; charset=utf-8' }));
    expect((await c.call({ method: 'GET', path: '/healthz', verb: 'get', retry: 'read' })).body).toBe('ok');
  });
});
