/**
 * A minimal client of the HAProxy runtime API (the "stats socket"), non-interactive mode:
 * connect, write one command + `\n`, read until HAProxy closes the connection.
 *
 * Parsers read `show servers state` and `show stat` by their header field names, never by
 * position, so they survive fields added by newer HAProxy versions.
 */
import * as net from 'node:net';

/** Where a runtime API listens. */
export interface RuntimeEndpoint {
  /** As the user wrote it (used in messages). */
  display: string;
  /** Unix socket path, when it is one. */
  path?: string;
  /** TCP host, when it is a TCP socket. */
  host?: string;
  /** TCP port, when it is a TCP socket. */
  port?: number;
}

/** A runtime API failure with a user-facing message (connection problem or an error answer). */
export class RuntimeApiError extends Error {
  override name = 'RuntimeApiError';
}

/**
 * Parse a socket address: a path (`/run/haproxy/admin.sock`, `unix:///run/haproxy/admin.sock`,
 * `unix:/x.sock`) or TCP (`tcp://127.0.0.1:9999`, `ipv4@127.0.0.1:9999`).
 */
export function parseEndpoint(socket: string): RuntimeEndpoint {
  const s = socket.trim();
  const tcp = /^(?:tcp:\/\/|ipv4@|ipv6@)(\[[^\]]+\]|[^:/]+):(\d{1,5})\/?$/.exec(s);
  if (tcp) {
    const port = Number(tcp[2]);
    if (port < 1 || port > 65535) throw new RuntimeApiError(`invalid port in HAProxy socket address ${socket}`);
    return { display: s, host: (tcp[1] ?? '').replace(/^\[|\]$/g, ''), port };
  }
  if (/^tcp:/.test(s)) throw new RuntimeApiError(`invalid HAProxy socket address ${socket}: expected tcp://HOST:PORT`);
  const path = s.replace(/^unix:(\/\/)?/, '');
  if (!path) throw new RuntimeApiError('empty HAProxy socket address');
  return { display: s, path };
}

/** The `stats socket` line that would serve this endpoint (for hints). */
function statsSocketLine(ep: RuntimeEndpoint): string {
  if (ep.path !== undefined) return `stats socket ${ep.path} level admin`;
  const host = ep.host?.includes(':') ? `ipv6@[${ep.host}]` : `ipv4@${ep.host ?? ''}`;
  return `stats socket ${host}:${ep.port ?? 0} level admin`;
}

/** Options of {@link runtimeCommand}. */
export interface CommandOptions {
  /** Give up after this many milliseconds. @default 10000 */
  timeoutMs?: number;
  /** Abort (destroys the connection). */
  signal?: AbortSignal;
}

/**
 * Send one command and return HAProxy's whole answer. Rejects with a {@link RuntimeApiError}
 * whose message says where it tried to connect and how to enable the socket.
 */
export function runtimeCommand(ep: RuntimeEndpoint, command: string, opts: CommandOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise<string>((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new RuntimeApiError('aborted'));
    const sock =
      ep.path !== undefined
        ? net.createConnection({ path: ep.path })
        : net.createConnection({ host: ep.host ?? '127.0.0.1', port: ep.port ?? 0 });
    const chunks: Buffer[] = [];
    let connected = false;
    let done = false;
    const finish = (err: Error | undefined): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      sock.destroy();
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onAbort = (): void => finish(new RuntimeApiError('aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        finish(
          new RuntimeApiError(
            connected
              ? `HAProxy runtime API at ${ep.display} did not answer \`${command}\` within ${timeoutMs / 1000}s`
              : `cannot connect to HAProxy runtime API at ${ep.display}: timed out after ${timeoutMs / 1000}s`,
          ),
        ),
      timeoutMs,
    );
    sock.on('connect', () => {
      connected = true;
      sock.end(`${command}\n`);
    });
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('end', () => finish(undefined));
    sock.on('close', () => finish(connected ? undefined : new RuntimeApiError(`cannot connect to HAProxy runtime API at ${ep.display}`)));
    sock.on('error', (e: NodeJS.ErrnoException) => {
      const code = e.code ?? e.message;
      if (!connected) {
        finish(
          new RuntimeApiError(
            `cannot connect to HAProxy runtime API at ${ep.display}: ${code} — is HAProxy running with \`${statsSocketLine(ep)}\`?`,
          ),
        );
      } else {
        finish(new RuntimeApiError(`HAProxy runtime API at ${ep.display} failed during \`${command}\`: ${code}`));
      }
    });
  });
}

/**
 * Send a command that answers nothing on success (`set server …`); any text back is an error
 * (e.g. `No such server.`, `Permission denied`), thrown as a {@link RuntimeApiError}.
 */
export async function runtimeSet(ep: RuntimeEndpoint, command: string, opts: CommandOptions = {}): Promise<void> {
  const out = (await runtimeCommand(ep, command, opts)).trim();
  if (out === '') return;
  const hint = /permission denied/i.test(out) ? ` — the stats socket needs \`level admin\` (${statsSocketLine(ep)})` : '';
  throw new RuntimeApiError(`HAProxy at ${ep.display} refused \`${command}\`: ${oneLine(out)}${hint}`);
}

/** Collapse an answer to one line for messages. */
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, ' ').slice(0, 500);
}

/** Rows of a whitespace- or comma-separated table, keyed by the header's field names. */
export type Row = Record<string, string>;

/**
 * Parse `show servers state [<backend>]`: line 1 is the format version (`1`), line 2 a `# `
 * header with field names, then one whitespace-separated line per server.
 * Throws a {@link RuntimeApiError} with HAProxy's own text when the answer is not a table
 * (e.g. `Can't find backend.`).
 */
export function parseServersState(text: string): Row[] {
  const lines = text.split('\n').map((l) => l.trimEnd());
  const headerIdx = lines.findIndex((l) => l.startsWith('#'));
  const version = lines[0]?.trim();
  if (headerIdx < 0 || !/^\d+$/.test(version ?? '')) throw new RuntimeApiError(oneLine(text) || 'empty answer');
  if (version !== '1') throw new RuntimeApiError(`unsupported \`show servers state\` format version ${version}`);
  const fields = (lines[headerIdx] ?? '').replace(/^#\s*/, '').split(/\s+/);
  const rows: Row[] = [];
  for (const line of lines.slice(headerIdx + 1)) {
    if (!line.trim() || line.startsWith('#')) continue;
    const values = line.trim().split(/\s+/);
    const row: Row = {};
    fields.forEach((f, i) => (row[f] = values[i] ?? ''));
    rows.push(row);
  }
  return rows;
}

/**
 * Parse `show stat` CSV: a `# pxname,svname,…` header, then one line per proxy/server.
 * Throws a {@link RuntimeApiError} with HAProxy's text when there is no header.
 */
export function parseStatCsv(text: string): Row[] {
  const lines = text.split('\n').map((l) => l.trimEnd());
  const headerIdx = lines.findIndex((l) => l.startsWith('# '));
  if (headerIdx < 0) throw new RuntimeApiError(oneLine(text) || 'empty answer');
  const fields = (lines[headerIdx] ?? '').slice(2).split(',');
  const rows: Row[] = [];
  for (const line of lines.slice(headerIdx + 1)) {
    if (!line.trim()) continue;
    const values = line.split(',');
    const row: Row = {};
    fields.forEach((f, i) => {
      if (f) row[f] = values[i] ?? '';
    });
    rows.push(row);
  }
  return rows;
}

/** Parse `show backend` (a `# name` header, then one backend name per line). */
export function parseBackendList(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** Administrative state as `set server … state` names it. */
export type AdminState = 'ready' | 'drain' | 'maint';
/** Operational state (health), from `srv_op_state`. */
export type OperState = 'down' | 'starting' | 'up' | 'stopping';

/** One server's state as `show servers state` reports it. */
export interface ServerState {
  /** Backend name. */
  backend: string;
  /** Server name. */
  server: string;
  /** Numeric server id (`srv_id`), used to filter `show stat`. */
  id: string;
  /** Administrative state derived from the `srv_admin_state` flags. */
  admin: AdminState;
  /** Raw `srv_admin_state` flags. */
  adminFlags: number;
  /** Operational state. */
  oper: OperState;
  /** Current user weight (`srv_uweight`). */
  weight: number;
  /** Initial (configured) weight (`srv_iweight`); `N%` weights are relative to it. */
  initialWeight: number;
}

// srv_admin flags (haproxy include/haproxy/server-t.h).
const ADMF_FMAINT = 0x01;
const ADMF_IMAINT = 0x02;
const ADMF_CMAINT = 0x04;
const ADMF_FDRAIN = 0x08;
const ADMF_IDRAIN = 0x10;
const ADMF_RMAINT = 0x20;
const OPER: Record<string, OperState> = { '0': 'down', '1': 'starting', '2': 'up', '3': 'stopping' };

/** Admin state of the flags (a maintenance flag wins over drain). */
export function adminStateOf(flags: number): AdminState {
  if (flags & (ADMF_FMAINT | ADMF_IMAINT | ADMF_CMAINT | ADMF_RMAINT)) return 'maint';
  if (flags & (ADMF_FDRAIN | ADMF_IDRAIN)) return 'drain';
  return 'ready';
}

/** Turn a `show servers state` row into a {@link ServerState}. */
export function serverStateOf(row: Row): ServerState {
  const num = (k: string): number => {
    const v = row[k];
    if (v === undefined || !/^-?\d+$/.test(v)) throw new RuntimeApiError(`unexpected \`show servers state\` answer: field ${k} is ${JSON.stringify(v)}`);
    return Number(v);
  };
  const flags = num('srv_admin_state');
  return {
    backend: row.be_name ?? '',
    server: row.srv_name ?? '',
    id: row.srv_id ?? '',
    admin: adminStateOf(flags),
    adminFlags: flags,
    oper: OPER[row.srv_op_state ?? ''] ?? 'down',
    weight: num('srv_uweight'),
    initialWeight: num('srv_iweight'),
  };
}
