// Helpers for integration tests that run against the kplay sandbox
// (started by test/sandbox/global-setup.ts).
//
//   const env = sandboxEnv();                     // paths + parsed state.json
//   await kubectl(['get', 'pods', '-A'], { context: 'sandbox-2' });
//   await helm(['install', 'x', chartDir, '--wait']);
//   const mark = auditLineCount(env.clusters[0].auditLog);
//   ... do something ...
//   countWrites(env.clusters[0].auditLog, mark, { user: 'kubernetes-admin', namespace: 'ns' });
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';
import type { SandboxCluster, SandboxState } from './lib.mjs';

export type { SandboxCluster, SandboxState } from './lib.mjs';

/** What global-setup provides (also exported as KPLAY_SANDBOX_* env vars). */
export interface SandboxInfo {
  /** KPLAY_SANDBOX_KUBECONFIG: one kubeconfig, contexts sandbox-N (admin) and sandbox-N-dev */
  kubeconfig: string;
  /** KPLAY_SANDBOX_INVENTORY: kplay inventory with group `sandbox` */
  inventory: string;
  /** KPLAY_SANDBOX_STATE: path of state.json */
  statePath: string;
  /** KPLAY_SANDBOX_BIN: directory with helm, kubectl, kube-apiserver, ... */
  binDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    sandbox: SandboxInfo;
  }
}

export interface SandboxEnv extends SandboxInfo {
  state: SandboxState;
  clusters: SandboxCluster[];
  /** cluster by name (sandbox-1 ...); throws when unknown */
  cluster(name: string): SandboxCluster;
}

function fromEnv(): SandboxInfo | null {
  const { KPLAY_SANDBOX_KUBECONFIG, KPLAY_SANDBOX_INVENTORY, KPLAY_SANDBOX_STATE, KPLAY_SANDBOX_BIN } = process.env;
  if (KPLAY_SANDBOX_KUBECONFIG && KPLAY_SANDBOX_INVENTORY && KPLAY_SANDBOX_STATE && KPLAY_SANDBOX_BIN) {
    return { kubeconfig: KPLAY_SANDBOX_KUBECONFIG, inventory: KPLAY_SANDBOX_INVENTORY, statePath: KPLAY_SANDBOX_STATE, binDir: KPLAY_SANDBOX_BIN };
  }
  return null;
}

function fromInject(): SandboxInfo | null {
  try {
    const v: unknown = inject('sandbox');
    if (isSandboxInfo(v)) return v;
  } catch {
    // not inside a vitest worker
  }
  return null;
}

function isSandboxInfo(v: unknown): v is SandboxInfo {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  return ['kubeconfig', 'inventory', 'statePath', 'binDir'].every((k) => typeof o[k] === 'string');
}

/** Sandbox paths and state. Throws (never skips) when the sandbox is not available. */
export function sandboxEnv(): SandboxEnv {
  const info = fromEnv() ?? fromInject();
  if (!info) {
    throw new Error('kplay sandbox not available: KPLAY_SANDBOX_* env vars unset and nothing provided; run tests through the `integration` vitest project (globalSetup test/sandbox/global-setup.ts)');
  }
  const state = JSON.parse(fs.readFileSync(info.statePath, 'utf8')) as SandboxState;
  return {
    ...info,
    state,
    clusters: state.clusters,
    cluster(name: string): SandboxCluster {
      const c = state.clusters.find((x) => x.name === name);
      if (!c) throw new Error(`no sandbox cluster ${name} (have ${state.clusters.map((x) => x.name).join(', ')})`);
      return c;
    },
  };
}

// ------------------------------------------------------------------ commands

export interface RunOptions {
  /** kubeconfig context; default sandbox-1 */
  context?: string;
  /** data written to stdin */
  input?: string;
  /** throw when the exit code is not 0 (default true) */
  check?: boolean;
  timeoutMs?: number;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a program, collecting output. Rejects on non-zero exit unless check=false. */
export function run(file: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const { input, check = true, timeoutMs = 300_000, cwd, env } = opts;
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      const res: RunResult = { code, stdout: String(stdout), stderr: String(stderr) };
      if (code !== 0 && check) {
        reject(new Error(`${path.basename(file)} ${args.join(' ')} exited ${code}${err?.killed ? ' (killed: timeout)' : ''}\n${res.stderr || res.stdout}`));
      } else resolve(res);
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

/** kubectl from the sandbox bin dir against the sandbox kubeconfig (context default sandbox-1). */
export function kubectl(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const env = sandboxEnv();
  return run(path.join(env.binDir, 'kubectl'), ['--kubeconfig', env.kubeconfig, '--context', opts.context ?? 'sandbox-1', ...args], opts);
}

/** helm (v4) from the sandbox bin dir; helm's cache/config/data live in the sandbox run dir. */
export function helm(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const env = sandboxEnv();
  const home = path.join(env.state.runDir, 'helm');
  return run(path.join(env.binDir, 'helm'), ['--kubeconfig', env.kubeconfig, '--kube-context', opts.context ?? 'sandbox-1', ...args], {
    ...opts,
    env: {
      HELM_CACHE_HOME: path.join(home, 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'config'),
      HELM_DATA_HOME: path.join(home, 'data'),
      ...opts.env,
    },
  });
}

// ------------------------------------------------------------------ audit log

/** One audit event (Metadata level) as written by kube-apiserver. */
export interface AuditEvent {
  verb: string;
  user: string;
  groups: string[];
  namespace?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  apiGroup?: string;
  code?: number;
  requestURI: string;
  /** client User-Agent, e.g. `kplay`, `Helm/4.1.4`, `kwok/v0.8.0 (linux/amd64)` */
  userAgent: string;
  raw: Record<string, unknown>;
}

export interface AuditFilter {
  /** username (exact string or RegExp), e.g. 'kubernetes-admin' for the sandbox admin */
  user?: string | RegExp;
  namespace?: string;
  /** plural resource, e.g. 'deployments' */
  resource?: string;
  /** subresource, e.g. 'status'; use null to require none */
  subresource?: string | null;
  verbs?: string[];
  apiGroup?: string;
  /** only successful requests (HTTP < 400); default false */
  succeededOnly?: boolean;
  /**
   * Include kwok's own requests (it plays the kubelets and patches pod/node status with the admin
   * certificate, at any moment). Default false: tests count what the clients under test wrote.
   */
  includeKwok?: boolean;
}

/** Number of lines currently in an audit log (use as a mark before an action). */
export function auditLineCount(auditLogPath: string): number {
  if (!fs.existsSync(auditLogPath)) return 0;
  return readLines(auditLogPath).length;
}

function readLines(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function toEvent(raw: Record<string, unknown>): AuditEvent {
  const userRaw = raw.user;
  const user = typeof userRaw === 'object' && userRaw !== null ? (userRaw as Record<string, unknown>) : {};
  const refRaw = raw.objectRef;
  const ref = typeof refRaw === 'object' && refRaw !== null ? (refRaw as Record<string, unknown>) : {};
  const statusRaw = raw.responseStatus;
  const status = typeof statusRaw === 'object' && statusRaw !== null ? (statusRaw as Record<string, unknown>) : {};
  return {
    verb: str(raw.verb) ?? '',
    user: str(user.username) ?? '',
    groups: Array.isArray(user.groups) ? user.groups.filter((g): g is string => typeof g === 'string') : [],
    namespace: str(ref.namespace),
    resource: str(ref.resource),
    subresource: str(ref.subresource),
    name: str(ref.name),
    apiGroup: str(ref.apiGroup),
    code: typeof status.code === 'number' ? status.code : undefined,
    requestURI: str(raw.requestURI) ?? '',
    userAgent: str(raw.userAgent) ?? '',
    raw,
  };
}

function matches(e: AuditEvent, f: AuditFilter): boolean {
  if (!f.includeKwok && e.userAgent.startsWith('kwok/')) return false;
  if (f.user !== undefined && (typeof f.user === 'string' ? e.user !== f.user : !f.user.test(e.user))) return false;
  if (f.namespace !== undefined && e.namespace !== f.namespace) return false;
  if (f.resource !== undefined && e.resource !== f.resource) return false;
  if (f.subresource !== undefined && (e.subresource ?? null) !== f.subresource) return false;
  if (f.verbs !== undefined && !f.verbs.includes(e.verb)) return false;
  if (f.apiGroup !== undefined && (e.apiGroup ?? '') !== f.apiGroup) return false;
  if (f.succeededOnly && (e.code === undefined || e.code >= 400)) return false;
  return true;
}

/** Write events (create/update/patch/delete/deletecollection) after line `sinceLineCount`, filtered. */
export function auditWrites(auditLogPath: string, sinceLineCount = 0, filter: AuditFilter = {}): AuditEvent[] {
  if (!fs.existsSync(auditLogPath)) return [];
  const out: AuditEvent[] = [];
  for (const line of readLines(auditLogPath).slice(sinceLineCount)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // partially written last line
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    const e = toEvent(parsed as Record<string, unknown>);
    if (matches(e, filter)) out.push(e);
  }
  return out;
}

/** Count of write events after line `sinceLineCount` matching `filter`. */
export function countWrites(auditLogPath: string, sinceLineCount = 0, filter: AuditFilter = {}): number {
  return auditWrites(auditLogPath, sinceLineCount, filter).length;
}

/**
 * Snapshot an audit log; `count()`/`events()` then report writes made since.
 * The apiserver logs synchronously, but `settle()` waits briefly for the
 * line count to stop changing, for tests that want to be extra sure.
 */
export function auditSnapshot(auditLogPath: string): {
  lines: number;
  events(filter?: AuditFilter): AuditEvent[];
  count(filter?: AuditFilter): number;
  settle(ms?: number): Promise<void>;
} {
  const lines = auditLineCount(auditLogPath);
  return {
    lines,
    events: (filter = {}) => auditWrites(auditLogPath, lines, filter),
    count: (filter = {}) => countWrites(auditLogPath, lines, filter),
    settle: async (ms = 300) => {
      let prev = -1;
      for (;;) {
        const now = auditLineCount(auditLogPath);
        if (now === prev) return;
        prev = now;
        await new Promise((r) => setTimeout(r, ms));
      }
    },
  };
}

/** Audit user name of the sandbox admin client certificate. */
export const SANDBOX_ADMIN_USER = 'kubernetes-admin';
/** Audit user name of the unprivileged client certificate (contexts sandbox-N-dev). */
export const SANDBOX_DEV_USER = 'dev-user';
