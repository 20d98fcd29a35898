/**
 * Reaching the apiserver through an HTTP(S) proxy, as kubernetes.core's client does with `proxy`,
 * `no_proxy` and `proxy_headers` (and `HTTPS_PROXY`/`NO_PROXY` from the environment): one CONNECT
 * tunnel per socket, TLS to the apiserver inside it.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { Duplex } from 'node:stream';

/** A proxy to tunnel through. */
export interface ProxySettings {
  /** `http://host:port` or `https://host:port` (credentials in the URL become Proxy-Authorization). */
  url: string;
  /** Headers sent with each CONNECT (`Proxy-Authorization`, `User-Agent`). */
  headers?: Record<string, string>;
}

/**
 * Whether `server` (a URL) bypasses the proxy by the comma-separated `noProxy` rules, as the
 * Python kubernetes client decides: `*`, an IP network (`10.0.0.0/8`) or address, a host or
 * domain suffix (`.example.com`, `example.com`), or `host:port`.
 */
export function bypassesProxy(server: string, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  let u: URL;
  try {
    u = new URL(server);
  } catch {
    return true;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) return true;
  const hostPort = u.host.toLowerCase();
  for (const raw of noProxy.split(',')) {
    let entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    if (net.isIP(host) && inNetwork(host, entry)) return true;
    entry = entry.replace(/^\.+/, '');
    if (host === entry || host.endsWith(`.${entry}`) || hostPort === entry || hostPort.endsWith(`.${entry}`)) return true;
  }
  return false;
}

/** Whether IP `ip` is in `entry` (an address, or `addr/bits`). */
function inNetwork(ip: string, entry: string): boolean {
  const [addr, bitsText] = entry.split('/');
  if (!addr || !net.isIP(addr) || net.isIP(addr) !== net.isIP(ip)) return false;
  const family = net.isIP(ip) === 4 ? 'ipv4' : 'ipv6';
  const max = family === 'ipv4' ? 32 : 128;
  const bits = bitsText === undefined ? max : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > max) return false;
  const list = new net.BlockList();
  list.addSubnet(addr, bits, family);
  return list.check(ip, family);
}

/** The proxy from the environment for `server`, as Python's `getproxies()` (lower case first). */
export function envProxy(server: string, env: Readonly<Record<string, string | undefined>>): { proxy?: string; noProxy?: string } {
  const get = (name: string): string | undefined => {
    const v = env[name.toLowerCase()] ?? env[name.toUpperCase()];
    return v === undefined || v === '' ? undefined : v;
  };
  const scheme = server.startsWith('http:') ? 'http' : 'https';
  return { proxy: get(`${scheme}_proxy`) ?? get('all_proxy'), noProxy: get('no_proxy') };
}

type CreateConnection = (options: https.RequestOptions & tls.ConnectionOptions, callback: (err: Error | null, socket?: Duplex) => void) => Duplex | undefined;

/** Open a CONNECT tunnel to `host:port` through `proxy`: resolves with the raw socket. */
export function connectTunnel(proxy: ProxySettings, host: string, port: number, signal?: AbortSignal): Promise<net.Socket> {
  const u = new URL(proxy.url);
  const headers: Record<string, string> = { Host: `${host}:${port}`, ...(proxy.headers ?? {}) };
  if (u.username && !Object.keys(headers).some((h) => h.toLowerCase() === 'proxy-authorization')) {
    headers['Proxy-Authorization'] = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  }
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request({ hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port || (u.protocol === 'https:' ? 443 : 80), method: 'CONNECT', path: `${host.includes(':') ? `[${host}]` : host}:${port}`, headers, signal });
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy ${u.host} refused the tunnel to ${host}:${port}: ${res.statusCode ?? '?'} ${res.statusMessage ?? ''}`.trim()));
        return;
      }
      resolve(socket);
    });
    req.on('response', (res) => {
      res.resume();
      reject(new Error(`proxy ${u.host} answered CONNECT with ${res.statusCode ?? '?'} ${res.statusMessage ?? ''}`.trim()));
    });
    req.on('error', (e) => reject(new Error(`proxy ${u.host}: ${e.message}`, { cause: e })));
    req.end();
  });
}

/** A keep-alive agent whose sockets are CONNECT tunnels through `proxy` (TLS inside for https servers). */
export function proxyAgent(proxy: ProxySettings, secure: boolean, options: https.AgentOptions): http.Agent {
  const agent = secure ? new https.Agent(options) : new http.Agent(options);
  const create: CreateConnection = (opts, callback) => {
    const host = String(opts.host ?? opts.hostname ?? 'localhost');
    const port = Number(opts.port ?? (secure ? 443 : 80));
    connectTunnel(proxy, host, port).then(
      (socket) => {
        if (!secure) {
          callback(null, socket);
          return;
        }
        const servername = opts.servername || (net.isIP(host) ? undefined : host);
        // handshake errors surface on the request, as with a direct socket
        callback(null, tls.connect({ ...opts, socket, host, servername }));
      },
      (e: unknown) => callback(e instanceof Error ? e : new Error(String(e))),
    );
    return undefined;
  };
  (agent as unknown as { createConnection: CreateConnection }).createConnection = create;
  return agent;
}
