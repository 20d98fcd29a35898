/**
 * Real HAProxy instances for tests: a config from test/fixtures/haproxy/haproxy.cfg.tpl, two
 * local node backends answering their own name, and raw runtime API access.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHttp, type TestServer } from './http.js';

const TEMPLATE = fileURLToPath(new URL('../fixtures/haproxy/haproxy.cfg.tpl', import.meta.url));

/** Path of the haproxy binary; throws (never skips) with install instructions when missing. */
export function requireHaproxy(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'haproxy is not installed, but the lb_switch HAProxy tests need a real HAProxy: run `apt-get update && apt-get install -y haproxy`',
    );
  }
}

/** A free TCP port on 127.0.0.1 (bound and released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Two node HTTP backends answering their name; `/slow…` paths answer after `slowMs`. */
export interface Backends {
  s1: TestServer;
  s2: TestServer;
  close(): Promise<void>;
}

/** Start the backends `s1` and `s2`. */
export async function startBackends(slowMs = 1500): Promise<Backends> {
  const make = (name: string): Promise<TestServer> =>
    startHttp((req, res) => {
      const reply = (): void => {
        res.writeHead(200, { 'content-type': 'text/plain', connection: 'close' });
        res.end(name);
      };
      if ((req.url ?? '').includes('/slow')) setTimeout(reply, slowMs);
      else reply();
    });
  const s1 = await make('s1');
  const s2 = await make('s2');
  return { s1, s2, close: async () => void (await Promise.all([s1.close(), s2.close()])) };
}

/** A running HAProxy. */
export interface HaproxyInstance {
  /** Temp directory holding the config and the unix socket. */
  dir: string;
  /** Admin unix socket path. */
  sock: string;
  /** Extra sockets (`tcp` → `tcp://127.0.0.1:PORT`, `operator` → operator-level unix socket), when asked for (empty string otherwise). */
  extra: { tcp: string; operator: string };
  /** Frontend port. */
  port: number;
  /** The child process. */
  proc: ChildProcess;
  /** Everything HAProxy wrote (stdout + stderr). */
  output(): string;
  /** Kill HAProxy and remove the temp dir. */
  stop(): Promise<void>;
}

/** Options of {@link startHaproxy}. */
export interface HaproxyOptions {
  /** Also listen on a TCP admin socket (`extra.tcp`). */
  tcpSocket?: boolean;
  /** Also listen on an operator-level unix socket (`extra.operator`: reads work, `set server` is refused). */
  operatorSocket?: boolean;
}

/** Write the config, start `haproxy -f cfg -db` and wait until the admin socket answers. */
export async function startHaproxy(backends: Backends, opts: HaproxyOptions = {}): Promise<HaproxyInstance> {
  const bin = requireHaproxy();
  const dir = mkdtempSync(join(tmpdir(), 'kplay-haproxy-'));
  const sock = join(dir, 'admin.sock');
  const extra = { tcp: '', operator: '' };
  const stats = [`  stats socket ${sock} level admin`];
  if (opts.tcpSocket) {
    const p = await freePort();
    stats.push(`  stats socket ipv4@127.0.0.1:${p} level admin`);
    extra.tcp = `tcp://127.0.0.1:${p}`;
  }
  if (opts.operatorSocket) {
    extra.operator = join(dir, 'operator.sock');
    stats.push(`  stats socket ${extra.operator} level operator`);
  }
  const port = await freePort();
  const cfg = readFileSync(TEMPLATE, 'utf8')
    .replace('{{STATS_SOCKETS}}', stats.join('\n'))
    .replace('{{FRONT_PORT}}', String(port))
    .replaceAll('{{S1_PORT}}', String(backends.s1.port))
    .replace('{{S2_PORT}}', String(backends.s2.port));
  const cfgPath = join(dir, 'haproxy.cfg');
  writeFileSync(cfgPath, cfg);
  const proc = spawn(bin, ['-f', cfgPath, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  let exited = false;
  proc.on('exit', () => (exited = true));
  const inst: HaproxyInstance = {
    dir,
    sock,
    extra,
    port,
    proc,
    output: () => out,
    stop: async () => {
      if (!exited) {
        const gone = new Promise<void>((r) => proc.once('exit', () => r()));
        proc.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
        if (!exited) proc.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 15_000;
  while (true) {
    if (exited) throw new Error(`haproxy exited at start:\n${out}`);
    try {
      if ((await rawCommand(sock, 'show info')).includes('Name:')) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await inst.stop();
      throw new Error(`haproxy did not open ${sock} within 15s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return inst;
}

/** Send one runtime API command (unix path or `tcp://host:port`) and return the answer. */
export function rawCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const m = /^tcp:\/\/([^:]+):(\d+)$/.exec(socket);
    const s = m ? net.createConnection({ host: m[1], port: Number(m[2]) }) : net.createConnection({ path: socket });
    let buf = '';
    s.on('connect', () => s.end(`${command}\n`));
    s.on('data', (c: Buffer) => (buf += c.toString()));
    s.on('close', () => resolve(buf));
    s.on('error', reject);
  });
}

/** `{admin, op, weight}` of a server from `show servers state` (parsed by header names). */
export async function serverState(socket: string, backend: string, server: string): Promise<{ admin: number; op: number; weight: number }> {
  const text = await rawCommand(socket, `show servers state ${backend}`);
  const lines = text.split('\n');
  const header = lines.find((l) => l.startsWith('#'));
  if (!header) throw new Error(`bad answer: ${text}`);
  const f = header.slice(1).trim().split(' ');
  for (const l of lines) {
    if (l.startsWith('#') || !l.trim()) continue;
    const v = l.trim().split(' ');
    if (v[f.indexOf('srv_name')] === server) {
      return {
        admin: Number(v[f.indexOf('srv_admin_state')]),
        op: Number(v[f.indexOf('srv_op_state')]),
        weight: Number(v[f.indexOf('srv_uweight')]),
      };
    }
  }
  throw new Error(`no server ${server} in ${text}`);
}

/** `scur` of a server from `show stat`. */
export async function scur(socket: string, backend: string, server: string): Promise<number> {
  const text = await rawCommand(socket, 'show stat');
  const lines = text.split('\n');
  const f = (lines[0] ?? '').replace(/^# /, '').split(',');
  for (const l of lines.slice(1)) {
    const v = l.split(',');
    if (v[f.indexOf('pxname')] === backend && v[f.indexOf('svname')] === server) return Number(v[f.indexOf('scur')]);
  }
  throw new Error(`no ${backend}/${server} in show stat`);
}

/** GET a path through HAProxy on a fresh connection; resolves to the body (the backend's name). */
export function get(port: number, path = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Send `n` sequential requests and count answers per backend name. */
export async function spread(port: number, n: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const who = await get(port);
    counts[who] = (counts[who] ?? 0) + 1;
  }
  return counts;
}
