/**
 * Ansible's `wait_for` on the machine running kplay: a TCP port (`started`/`stopped`, optionally
 * reading until `search_regex` matches), a file (`present`/`absent`, optionally containing
 * `search_regex`), connections draining from a port (`drained`, from /proc/net/tcp*), or a plain
 * sleep of `timeout` seconds. Polls every `sleep` seconds, as ansible-core does.
 */
import { readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import type { ModuleContext, ModuleResult } from '../core/module.js';
import { sleep } from '../core/sleep.js';
import { pathInfo } from './files.js';
import { localPath } from './paths.js';
import { pyRegex } from './pyre.js';

/** The arguments of Ansible's form (after defaults). */
export interface LocalWaitArgs {
  host: string;
  port?: number;
  path?: string;
  search_regex?: string;
  state: 'started' | 'stopped' | 'present' | 'absent' | 'drained';
  timeout: number;
  connect_timeout: number;
  delay: number;
  sleep: number;
  msg?: string;
  active_connection_states: string[];
  exclude_hosts?: string[];
}

/** The registered result of Ansible's form. */
export interface LocalWaitData {
  [key: string]: unknown;
  elapsed: number;
}

/** TCP states of /proc/net/tcp (hex) by name, as ansible's wait_for knows them. */
const TCP_STATES: Record<string, string> = { ESTABLISHED: '01', SYN_SENT: '02', SYN_RECV: '03', FIN_WAIT1: '04', FIN_WAIT2: '05', TIME_WAIT: '06' };

/** Connect once; resolves the socket or undefined. */
function connect(host: string, port: number, timeoutMs: number): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const t = setTimeout(() => {
      s.destroy();
      resolve(undefined);
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(t);
      resolve(s);
    });
    s.once('error', () => {
      clearTimeout(t);
      s.destroy();
      resolve(undefined);
    });
  });
}

/** Read from a connected socket until `re` matches the data, it closes, or the deadline. */
function readUntil(s: net.Socket, re: RegExp, deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    let data = '';
    const done = (ok: boolean): void => {
      clearTimeout(t);
      s.destroy();
      resolve(ok);
    };
    const t = setTimeout(() => done(false), Math.max(0, deadline - Date.now()));
    s.on('data', (d: Buffer) => {
      data += d.toString('latin1');
      if (re.test(data)) done(true);
    });
    s.once('end', () => done(false));
    s.once('error', () => done(false));
  });
}

/** IPv4/IPv6 addresses of /proc/net/tcp's hex form. */
function hexAddress(hex: string): string {
  if (hex.length === 8) return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
  const words: string[] = [];
  for (let i = 0; i < 4; i++) {
    const w = hex.slice(i * 8, i * 8 + 8);
    const b = [3, 2, 1, 0].map((j) => w.slice(j * 2, j * 2 + 2)).join('');
    words.push(b.slice(0, 4), b.slice(4));
  }
  const v6 = words.map((w) => parseInt(w, 16).toString(16)).join(':');
  const mapped = /^0:0:0:0:0:ffff:([0-9a-f]+):([0-9a-f]+)$/.exec(v6);
  if (mapped) {
    const hi = parseInt(mapped[1] as string, 16);
    const lo = parseInt(mapped[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return v6;
}

/** Active connections to local `port` (in `states`, not from `exclude`), from /proc/net/tcp and tcp6. */
export function activeConnections(port: number, states: string[], exclude: string[]): number {
  const wanted = new Set(states.map((s) => TCP_STATES[s]));
  let n = 0;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4) continue;
      const [, local, remote, st] = cols as [string, string, string, string];
      const [, lport] = local.split(':');
      const [rhex] = remote.split(':');
      if (parseInt(lport ?? '', 16) !== port || !wanted.has(st)) continue;
      if (exclude.includes(hexAddress(rhex ?? ''))) continue;
      n++;
    }
  }
  return n;
}

/** Run Ansible's `wait_for` (see the file header). */
export async function waitLocal(args: LocalWaitArgs, ctx: ModuleContext): Promise<ModuleResult<LocalWaitData>> {
  const start = Date.now();
  const elapsed = (): number => Math.floor((Date.now() - start) / 1000);
  const fail = (msg: string): ModuleResult<LocalWaitData> => ({ status: 'failed', msg: args.msg ?? msg, data: { elapsed: elapsed() } });
  let re: RegExp | undefined;
  if (args.search_regex !== undefined) {
    try {
      re = pyRegex(args.search_regex);
    } catch (e) {
      return { status: 'failed', msg: `Invalid regular expression: ${(e as Error).message}`, data: { elapsed: 0 } };
    }
  }
  if (args.port !== undefined && args.path !== undefined) return { status: 'failed', msg: 'port and path parameter can not both be passed to wait_for', data: { elapsed: 0 } };
  if (args.path !== undefined && args.state === 'stopped') return { status: 'failed', msg: 'state=stopped should only be used for checking a port in the wait_for module', data: { elapsed: 0 } };
  if (args.path !== undefined && args.state === 'drained') return { status: 'failed', msg: 'state=drained should only be used for checking a port in the wait_for module', data: { elapsed: 0 } };
  if (args.exclude_hosts !== undefined && args.state !== 'drained') return { status: 'failed', msg: 'exclude_hosts should only be with state=drained', data: { elapsed: 0 } };
  for (const s of args.active_connection_states) if (!(s in TCP_STATES)) return { status: 'failed', msg: `unknown active_connection_state (${s}) defined`, data: { elapsed: 0 } };
  if (ctx.checkMode) return { status: 'skipped', msg: 'wait_for (host/port/path form) does not run in check mode, as in Ansible' };
  const interrupted = (): ModuleResult<LocalWaitData> => ({ status: 'failed', msg: 'wait_for interrupted', data: { elapsed: elapsed() } });
  if (args.delay && !(await sleep(args.delay * 1000, ctx.signal))) return interrupted();
  const file = args.path === undefined ? undefined : localPath(args.path);
  const end = start + args.timeout * 1000;
  const pause = async (): Promise<boolean> => sleep(Math.max(0, Math.min(args.sleep * 1000, end - Date.now())), ctx.signal);
  let groups: (string | null)[] = [];
  let groupdict: Record<string, string | null> = {};
  if (args.port === undefined && file === undefined && args.state !== 'drained') {
    if (!(await sleep(Math.max(0, end - Date.now()), ctx.signal))) return interrupted();
  } else if (args.state === 'absent' || args.state === 'stopped') {
    for (;;) {
      if (Date.now() >= end) return fail(args.port !== undefined ? `Timeout when waiting for ${args.host}:${args.port} to stop.` : `Timeout when waiting for ${args.path} to be absent.`);
      if (file !== undefined) {
        try {
          statSync(file);
        } catch {
          break;
        }
      } else if (args.port !== undefined) {
        const s = await connect(args.host, args.port, args.connect_timeout * 1000);
        if (!s) break;
        s.destroy();
      }
      if (!(await pause())) return interrupted();
    }
  } else if (args.state === 'started' || args.state === 'present') {
    for (;;) {
      if (Date.now() >= end) {
        if (args.port !== undefined) return fail(re ? `Timeout when waiting for search string ${args.search_regex} in ${args.host}:${args.port}` : `Timeout when waiting for ${args.host}:${args.port}`);
        return fail(re ? `Timeout when waiting for search string ${args.search_regex} in ${args.path}` : `Timeout when waiting for file ${args.path}`);
      }
      if (file !== undefined) {
        let text: string | undefined;
        try {
          text = statSync(file).isDirectory() ? '' : readFileSync(file, 'latin1');
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code !== 'ENOENT' && code !== 'ENOTDIR') return fail(`Failed to stat ${args.path}, ${(e as Error).message}`);
        }
        if (text !== undefined) {
          if (!re) break;
          const m = re.exec(text);
          if (m) {
            groups = m.slice(1).map((g) => g ?? null);
            groupdict = m.groups ? Object.fromEntries(Object.entries(m.groups).map(([k, v]) => [k, v ?? null])) : {};
            break;
          }
        }
      } else if (args.port !== undefined) {
        const s = await connect(args.host, args.port, Math.min(args.connect_timeout * 1000, Math.max(1, end - Date.now())));
        if (s) {
          if (!re) {
            s.destroy();
            break;
          }
          if (await readUntil(s, re, end)) break;
        }
      }
      if (!(await pause())) return interrupted();
    }
  } else {
    for (;;) {
      if (Date.now() >= end) return fail(`Timeout when waiting for ${args.host}:${args.port ?? ''} to drain`);
      if (activeConnections(args.port ?? 0, args.active_connection_states, args.exclude_hosts ?? []) === 0) break;
      if (!(await pause())) return interrupted();
    }
  }
  const data: LocalWaitData = { state: args.state, port: args.port ?? null, search_regex: args.search_regex ?? null, match_groups: groups, match_groupdict: groupdict, path: args.path ?? null, elapsed: elapsed() };
  // as ansible-core's exit_json: a result with a path gets the path's attributes (its `state` too)
  if (file !== undefined) Object.assign(data, pathInfo(file));
  return { status: 'ok', data };
}
