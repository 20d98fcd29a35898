// A fault-injecting HTTPS proxy in front of a real sandbox apiserver. It serves TLS with the
// apiserver's own certificate (valid for 127.0.0.1, signed by the CA the kubeconfig trusts), so
// kplay only needs the kubeconfig's server port changed; upstream it authenticates as the
// sandbox admin. A policy decides per request what happens: pass it on, answer a status itself
// (429 with Retry-After, 5xx), reset the connection before or after the request reached the
// apiserver, accept a watch and stay silent, or cut a watch without a final event. Everything
// that passes is real apiserver behaviour; only the injected faults are not. A request can also
// pass with some query parameters changed (`limit=10`: the apiserver pages a LIST as it may
// whenever it likes), and a slow-loris front end can be played: headers, then a byte every
// few seconds, never the end.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** What to do with one request. */
export type Fault =
  /** Pass it on; `query` replaces those query parameters on the way (the apiserver's own answer comes back). */
  | { kind: 'pass'; query?: Record<string, string> }
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** Destroy the connection without sending the request upstream. */
  | { kind: 'reset-before' }
  /** Send the request upstream (it takes effect), then destroy the client's connection. */
  | { kind: 'reset-after' }
  /** Answer 200 and never write a byte (a half-open watch). */
  | { kind: 'silent' }
  /** Pass a watch through, then destroy it after `afterMs` without a final event. */
  | { kind: 'cut'; afterMs: number }
  /**
   * Send the request upstream, then answer with the first `fraction` of the real body and end the
   * response cleanly (`Connection: close`, no length): an answer cut short that looks complete.
   */
  | { kind: 'truncate'; fraction: number }
  /**
   * A slow-loris front end: answer 200 with JSON headers at once, then one byte every
   * `intervalMs`, never ending the response (nothing is sent upstream).
   */
  | { kind: 'slow'; intervalMs: number };

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  n: number;
  method: string;
  path: string;
  /** The query parameters as sent by the client. */
  query: Record<string, string>;
  watch: boolean;
  dryRun: boolean;
  fault: Fault['kind'];
  status?: number;
}

export interface ApiProxy {
  port: number;
  log: ProxiedRequest[];
  close(): Promise<void>;
}

export interface ApiProxyOptions {
  /** The apiserver, e.g. https://127.0.0.1:6443. */
  upstream: string;
  /** Directory with the apiserver's `apiserver.crt`/`apiserver.key` and `ca.crt`. */
  pkiDir: string;
  /** Admin client certificate and key (PEM) for the upstream connection. */
  clientCert: string;
  clientKey: string;
  policy: (r: Omit<ProxiedRequest, 'fault' | 'status'>) => Fault;
}

export async function startApiProxy(o: ApiProxyOptions): Promise<ApiProxy> {
  const up = new URL(o.upstream);
  const ca = readFileSync(path.join(o.pkiDir, 'ca.crt'));
  const agent = new https.Agent({ keepAlive: true, ca, cert: o.clientCert, key: o.clientKey });
  const log: ProxiedRequest[] = [];
  const open = new Set<import('node:stream').Duplex>();
  let n = 0;
  const server = https.createServer({ cert: readFileSync(path.join(o.pkiDir, 'apiserver.crt')), key: readFileSync(path.join(o.pkiDir, 'apiserver.key')) }, (req, res) => {
    const url = new URL(req.url ?? '/', 'https://proxy');
    const base = { n: ++n, method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), watch: url.searchParams.get('watch') === 'true', dryRun: url.searchParams.has('dryRun') };
    const fault = o.policy(base);
    const entry: ProxiedRequest = { ...base, fault: fault.kind };
    log.push(entry);
    if (fault.kind === 'status') {
      entry.status = fault.status;
      req.resume();
      res.writeHead(fault.status, { 'Content-Type': 'application/json', ...(fault.headers ?? {}) });
      res.end(fault.body ?? JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: fault.status, reason: fault.status === 429 ? 'TooManyRequests' : 'ServiceUnavailable', message: 'injected by the fault proxy' }));
      return;
    }
    if (fault.kind === 'reset-before') {
      req.socket.destroy();
      return;
    }
    if (fault.kind === 'silent') {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      return; // never written, never ended
    }
    if (fault.kind === 'slow') {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.write('{');
      const drip = setInterval(() => res.write(' '), fault.intervalMs);
      res.on('close', () => clearInterval(drip));
      return; // never ended
    }
    if (fault.kind === 'pass' && fault.query) for (const [k, v] of Object.entries(fault.query)) url.searchParams.set(k, v);
    const headers = { ...req.headers, host: up.host };
    delete headers.authorization; // upstream identity is the proxy's client certificate
    const upstream = https.request({ hostname: up.hostname, port: up.port, method: req.method, path: fault.kind === 'pass' && fault.query ? `${url.pathname}${url.search}` : req.url, headers, agent }, (ures) => {
      entry.status = ures.statusCode;
      if (fault.kind === 'reset-after') {
        ures.resume();
        req.socket.destroy();
        return;
      }
      if (fault.kind === 'truncate') {
        const chunks: Buffer[] = [];
        ures.on('data', (c: Buffer) => chunks.push(c));
        ures.on('end', () => {
          const body = Buffer.concat(chunks);
          const cut = body.subarray(0, Math.floor(body.length * fault.fraction));
          const headers = { ...ures.headers, connection: 'close' };
          delete headers['content-length'];
          delete headers['transfer-encoding'];
          res.writeHead(ures.statusCode ?? 502, headers);
          res.end(cut);
        });
        return;
      }
      res.writeHead(ures.statusCode ?? 502, ures.headers);
      ures.pipe(res);
      if (fault.kind === 'cut') setTimeout(() => req.socket.destroy(), fault.afterMs);
    });
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    log,
    close: () =>
      new Promise((resolve) => {
        for (const s of open) s.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
