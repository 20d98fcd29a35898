/**
 * The process-wide connection pool: inventory entries that reach the same apiserver with the
 * same kubeconfig, context and limits share one connection — its credentials, one reachability
 * probe (GET /version), one API discovery — while each client keeps its own transport. A
 * kubeconfig context is resolved (read, its files read, see resolved.ts) once while any
 * connection of it is open, whatever the limits: a client made later in the run (other limits, a
 * helm task's client) reaches the same server with the same credentials even if the kubeconfig
 * was rewritten meanwhile.
 */
import path from 'node:path';
import { UnreachableError, type ClusterRef } from '../core/module.js';
import type { DiscoveryIndex } from './discovery.js';
import { Transport, TransportError, type Reachability, type TransportResponse } from './http.js';
import type { ResourceInfo } from './types.js';
import { ConnectFailure, loadCredentials, type Credentials } from './credentials.js';
import type { ResolvedContext } from './resolved.js';

/** Options of `connect`. */
export interface ConnectOptions {
  /** Client-side requests per second. @default 50 */
  qps?: number;
  /** Client-side burst. @default 300 */
  burst?: number;
  /** Timeout of the reachability probe (GET /version), ms. @default 10000 */
  probeTimeoutMs?: number;
  /** Per-request timeout, ms. @default 60000 */
  timeoutMs?: number;
  /** Abort the probe. */
  signal?: AbortSignal;
}

/** The discovery of one apiserver as one user: shared by every client of a {@link Connection}. */
export interface DiscoveryCache {
  /** The discovery read under way or done (undefined: not read, or forgotten). */
  index?: Promise<DiscoveryIndex>;
  /**
   * The last read that completed, until discovery is forgotten: while `index` is a read still
   * under way (a prefetch), built-in kinds answer from the built-in table instead of waiting.
   */
  read?: DiscoveryIndex;
  /** Kinds still unknown after a refresh (so a typo does not refresh again and again). */
  missing: Set<string>;
  /** Kinds of CRDs seen Established, by CRD name (see `KubeClient.learnKinds`). */
  learned: Map<string, readonly ResourceInfo[]>;
}

/** What inventory entries reaching the same apiserver with the same credentials share. */
interface Connection {
  server: string;
  creds: Credentials;
  version: string;
  discovery: DiscoveryCache;
  /** The transport of the reachability probe, until the first client takes it. */
  spare: Transport | undefined;
  /**
   * One outage clock for every client of the connection (the tasks', the lock's, the run
   * record's): reached once the probe answered, so an apiserver that stops answering later —
   * refusing, or trickling bytes — is ridden out within one bound (`KPLAY_OUTAGE_SECONDS`).
   */
  reachability: Reachability;
  /** Clients not closed yet; when the last closes, the next connect probes again. */
  users: number;
  /** Give the resolved credentials back (the last connection of a context: the next one resolves again). */
  closed: () => void;
}

/** One client's share of a pooled connection (see {@link acquireConnection}). */
export interface ConnectionLease {
  server: string;
  /** `gitVersion` from /version. */
  version: string;
  /** Shared with the other clients of the connection. */
  discovery: DiscoveryCache;
  /** The client's own transport (its QPS budget). */
  transport: Transport;
  /** The context as resolved when the connection opened (what helm is handed). */
  resolved: ResolvedContext;
  /** Close the transport and give the lease back (once; later calls only close the transport). */
  release: () => void;
}

/** Open connections by kubeconfig file, context and transport options. */
const connections = new Map<string, Promise<Connection>>();

/** Resolved credentials by kubeconfig file and context, with how many open (or opening) connections use them. */
const resolutions = new Map<string, { creds: Promise<Credentials>; connections: number }>();

function contextKeyOf(cluster: ClusterRef): string {
  return JSON.stringify([cluster.kubeconfig ? path.resolve(cluster.kubeconfig) : '', cluster.context]);
}

/**
 * The context of `cluster` as an open connection of it resolved it; `undefined` when none is
 * open (then nothing reached that cluster yet: reading the kubeconfig now diverges from nothing).
 */
export async function openResolution(cluster: ClusterRef): Promise<ResolvedContext | undefined> {
  const r = resolutions.get(contextKeyOf(cluster));
  return r ? r.creds.then((c) => c.resolved, () => undefined) : undefined;
}

/** The credentials of `cluster`: resolved by the first connection of its kubeconfig context, shared while one is open. */
function credentialsOf(key: string, cluster: ClusterRef): { creds: Promise<Credentials>; done: () => void } {
  let r = resolutions.get(key);
  if (!r) {
    const entry = { creds: loadCredentials(cluster), connections: 0 };
    resolutions.set(key, entry);
    // a failed resolution is not kept: the next connection tries again
    entry.creds.catch(() => {
      if (resolutions.get(key) === entry) resolutions.delete(key);
    });
    r = entry;
  }
  const entry = r;
  entry.connections++;
  let done = false;
  return {
    creds: entry.creds,
    done: () => {
      if (done) return;
      done = true;
      if (--entry.connections === 0 && resolutions.get(key) === entry) resolutions.delete(key);
    },
  };
}

/**
 * A lease on the connection of an inventory entry, opened (credentials, probe) by the first
 * entry that asks: entries with the same kubeconfig, context and limits (several names for one
 * cluster: per-team entries, aliases, a canary entry) share it. A connection whose last lease is
 * released is dropped (the next one probes again); a failed one is not kept. Throws an
 * `UnreachableError` worded for `cluster`.
 */
export async function acquireConnection(cluster: ClusterRef, opts: ConnectOptions): Promise<ConnectionLease> {
  const contextKey = contextKeyOf(cluster);
  const key = JSON.stringify([contextKey, opts.qps, opts.burst, opts.timeoutMs, opts.probeTimeoutMs]);
  let pending = connections.get(key);
  if (!pending) {
    const creds = credentialsOf(contextKey, cluster);
    const opening = creds.creds.then((c) => open(cluster, c, opts, creds.done));
    pending = opening;
    connections.set(key, opening);
    // a failed connection is not kept: the next entry (or task) tries again
    opening.catch(() => {
      creds.done();
      if (connections.get(key) === opening) connections.delete(key);
    });
  }
  let conn: Connection;
  try {
    conn = await pending;
  } catch (e) {
    if (e instanceof ConnectFailure) throw new UnreachableError(e.describe(cluster.name));
    throw e;
  }
  conn.users++;
  const transport = conn.spare ?? new Transport({ cluster: cluster.name, server: conn.server, tls: conn.creds.tls, auth: conn.creds.auth, proxy: conn.creds.proxy, qps: opts.qps, burst: opts.burst, timeoutMs: opts.timeoutMs, reachability: conn.reachability });
  conn.spare = undefined;
  let closed = false;
  const release = (): void => {
    transport.close();
    if (closed) return;
    closed = true;
    if (--conn.users === 0 && connections.get(key) === pending) {
      connections.delete(key);
      conn.closed();
    }
  };
  return { server: conn.server, version: conn.version, discovery: conn.discovery, transport, resolved: conn.creds.resolved, release };
}

/** Open a connection with the context's resolved credentials, checking the server answers. `closed`: give the credentials back. */
async function open(cluster: ClusterRef, creds: Credentials, opts: ConnectOptions, closed: () => void): Promise<Connection> {
  const { server, tls, auth, proxy } = creds;
  if (server.startsWith('http:') && !creds.skipTLSVerify) {
    // Same rule as client-node: plain HTTP only when explicitly insecure.
    throw new ConnectFailure((name) => `cluster ${name}: server ${server} uses plain http but insecure-skip-tls-verify is not set`);
  }
  const transport = new Transport({ cluster: cluster.name, server, tls, auth, proxy, qps: opts.qps, burst: opts.burst, timeoutMs: opts.timeoutMs });
  // Reachability: GET /version (not retried: an unreachable cluster should fail fast).
  let res: TransportResponse;
  try {
    res = await transport.request({ method: 'GET', path: '/version', verb: 'discovery', retry: 'none', timeoutMs: opts.probeTimeoutMs ?? 10_000, signal: opts.signal });
  } catch (e) {
    transport.close();
    const msg = e instanceof TransportError ? (e.message.split(': ').slice(1).join(': ') || e.message) : e instanceof Error ? e.message : String(e);
    throw new ConnectFailure((name) => `cluster ${name} unreachable at ${server}: ${describeNetError(e, msg)}`);
  }
  if (res.status === 401) {
    transport.close();
    throw new ConnectFailure((name) => `cluster ${name} at ${server}: credentials rejected (401 Unauthorized) for context "${cluster.context}"`);
  }
  if (res.status >= 500 || res.status === 404) {
    transport.close();
    throw new ConnectFailure((name) => `cluster ${name} at ${server}: GET /version answered ${res.status}${res.body ? `: ${res.body.slice(0, 200)}` : ''}`);
  }
  let version = '';
  try {
    const v = JSON.parse(res.body) as { gitVersion?: unknown };
    if (typeof v.gitVersion === 'string') version = v.gitVersion;
  } catch {
    // 403 on /version (unusual RBAC): reachable anyway
  }
  transport.reachability.reached = true;
  return { server, creds, version, discovery: { missing: new Set(), learned: new Map() }, spare: transport, reachability: transport.reachability, users: 0, closed };
}

/** A network error as a connection failure says it. */
function describeNetError(e: unknown, fallback: string): string {
  const code = e instanceof TransportError ? e.code : undefined;
  if (e instanceof TransportError && e.timeout) return `connect timeout (${fallback})`;
  if (code === 'ECONNREFUSED') return `connect ECONNREFUSED (${fallback})`;
  return fallback;
}
