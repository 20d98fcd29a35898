/**
 * Real local HTTP(S) servers and throw-away PKI for module tests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A started server and how to reach / stop it. */
export interface TestServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Port it listens on. */
  port: number;
  /** Number of requests received so far. */
  readonly requests: number;
  /** Stop the server (drops open connections). */
  close(): Promise<void>;
}

/** Request handler for test servers. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

function wrap(server: http.Server | https.Server, scheme: 'http' | 'https', handler: Handler): Promise<TestServer> {
  let count = 0;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    count++;
    handler(req, res, count);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `${scheme}://127.0.0.1:${port}`,
        port,
        get requests() {
          return count;
        },
        close: () =>
          new Promise<void>((res) => {
            server.closeAllConnections();
            server.close(() => res());
          }),
      });
    });
  });
}

/** Start a plain HTTP server on 127.0.0.1 (random port). */
export function startHttp(handler: Handler): Promise<TestServer> {
  return wrap(http.createServer(), 'http', handler);
}

/** Start an HTTPS server on 127.0.0.1 (random port). */
export function startHttps(opts: https.ServerOptions, handler: Handler): Promise<TestServer> {
  return wrap(https.createServer(opts), 'https', handler);
}

/** Read a whole request body as text. */
export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Files of a throw-away PKI: a CA, a server cert for 127.0.0.1/localhost and a client cert. */
export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Remove the directory. */
  cleanup(): void;
}

/** Generate a CA + server + client certificate with `openssl` in a temp dir. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'kplay-pki-'));
  const p = (f: string): string => join(dir, f);
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('ca.key'), '-out', p('ca.crt'), '-days', '2', '-subj', '/CN=kplay test CA');
  writeFileSync(
    p('server.ext'),
    'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  writeFileSync(p('client.ext'), 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p(`${who}.key`), '-out', p(`${who}.csr`), '-subj', `/CN=${who === 'server' ? '127.0.0.1' : 'kplay-client'}`);
    ssl('x509', '-req', '-in', p(`${who}.csr`), '-CA', p('ca.crt'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p(`${who}.crt`), '-days', '2', '-extfile', p(`${who}.ext`));
  }
  return {
    dir,
    caCert: p('ca.crt'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    clientCert: p('client.crt'),
    clientKey: p('client.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Read a PEM file (for server options). */
export function pem(path: string): Buffer {
  return readFileSync(path);
}
