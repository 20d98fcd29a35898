// The transport's TLS: CA, client certificate and key are parsed once into one SecureContext
// shared by every socket, and the verification they carry still holds. Real TLS on 127.0.0.1
// (certificates made with openssl), no fakes.
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transport, TransportError } from '../../src/k8s/http.js';
import { withSecureContext } from '../../src/k8s/tls-context.js';
import { makePki, pem, startHttps, type TestPki, type TestServer } from '../helpers/http.js';

let pki: TestPki;
let other: TestPki;
let server: TestServer;
const seen: { cn: string; socket: unknown }[] = [];

beforeAll(async () => {
  pki = makePki();
  other = makePki();
  server = await startHttps(
    { key: pem(pki.serverKey), cert: pem(pki.serverCert), ca: pem(pki.caCert), requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      seen.push({ cn: String(socket.getPeerCertificate().subject?.CN ?? ''), socket });
      // slow enough that parallel requests need several sockets
      setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}'), 30);
    },
  );
});

afterAll(async () => {
  await server.close();
  pki.cleanup();
  other.cleanup();
});

describe('transport TLS', () => {
  it('parses CA, certificate and key once and presents the client certificate on every socket', async () => {
    const opts = withSecureContext({ ca: pem(pki.caCert), cert: pem(pki.clientCert), key: pem(pki.clientKey), servername: 'localhost' });
    expect(opts.secureContext).toBeDefined();
    expect(opts).not.toHaveProperty('key');
    expect(opts.servername).toBe('localhost');
    // entries sharing credentials share their options object, and so one context
    const shared = { ca: pem(pki.caCert), cert: pem(pki.clientCert), key: pem(pki.clientKey) };
    expect(withSecureContext(shared).secureContext).toBe(withSecureContext(shared).secureContext);
    expect(withSecureContext({ ...shared }).secureContext).not.toBe(withSecureContext(shared).secureContext);
    const t = new Transport({ cluster: 'c1', server: server.url, tls: { ca: pem(pki.caCert), cert: pem(pki.clientCert), key: pem(pki.clientKey) } });
    try {
      seen.length = 0;
      const res = await Promise.all(Array.from({ length: 8 }, () => t.request({ method: 'GET', path: '/version', retry: 'read' })));
      expect(res.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(seen.map((s) => s.cn)).toEqual(Array(8).fill('kplay-client'));
      expect(new Set(seen.map((s) => s.socket)).size).toBeGreaterThan(1);
    } finally {
      t.close();
    }
  });

  it('many requests over one kept-alive socket add no listeners to it (no MaxListenersExceededWarning)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(`${w.name}: ${w.message}`);
    };
    process.on('warning', onWarning);
    const t = new Transport({ cluster: 'c1', server: server.url, tls: { ca: pem(pki.caCert), cert: pem(pki.clientCert), key: pem(pki.clientKey) } });
    try {
      seen.length = 0;
      for (let i = 0; i < 25; i++) expect((await t.request({ method: 'GET', path: '/version', retry: 'read' })).status).toBe(200);
      // one socket carried them all, and it holds no listener per request
      expect(new Set(seen.map((s) => s.socket)).size).toBe(1);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      t.close();
    }
  });

  it('still refuses a server its CA did not sign', async () => {
    const t = new Transport({ cluster: 'c1', server: server.url, tls: { ca: pem(other.caCert), cert: pem(pki.clientCert), key: pem(pki.clientKey) }, retry: { maxRetries: 0 } });
    try {
      const err = await t.request({ method: 'GET', path: '/version', retry: 'read' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect(String((err as Error).message)).toMatch(/certificate/i);
    } finally {
      t.close();
    }
  });

  it('leaves options that do not parse as given: the error surfaces on connect, as before', async () => {
    const bad = { ca: pem(pki.caCert), cert: pem(pki.clientCert), key: 'not a key' };
    expect(withSecureContext(bad)).toBe(bad);
    const t = new Transport({ cluster: 'c1', server: server.url, tls: bad, retry: { maxRetries: 0 } });
    try {
      const err = await t.request({ method: 'GET', path: '/version', retry: 'read' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
    } finally {
      t.close();
    }
  });
});
