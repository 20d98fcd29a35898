/**
 * The Kubernetes client: one per cluster per run (`kubeFor(ctx)`), built from the inventory's
 * kubeconfig + context (certificates and tokens read directly; anything else — exec plugins, auth
 * providers, the default kubeconfig — through `@kubernetes/client-node`'s `KubeConfig`, imported
 * only then), then plain node HTTP with one keep-alive agent (see `http.ts`).
 */
import { setting } from '../core/settings.js';
import type { ProxySettings } from './proxy.js';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type * as https from 'node:https';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { parseData } from '../load/fast-yaml.js';
import { UnreachableError, type ClusterRef, type ModuleContext } from '../core/module.js';
import { AGGREGATED_ACCEPT, apiVersionOf, coreKind, DiscoveryIndex, groupVersionsOf, isAggregated, parseAggregated, parseResourceList, splitApiVersion } from './discovery.js';
import { ApplyConflictError, isConnectError, KubeApiError, parseConflicts, parseStatus } from './errors.js';
import { sleepOrThrow, Transport, TransportError, type RetryClass, type TransportAuth, type TransportRequest, type TransportResponse } from './http.js';
import type { ApplyOptions, ClientStats, DeleteOptions, JsonPatchOp, PatchOptions, KubeClient, KubeObject, ListOptions, ObjectRef, ResourceInfo, WatchEvent, WatchOptions } from './types.js';
import { runWatch } from './watch.js';
import { parseExecConfig, runExecPlugin, type ExecConfig, type ExecCredential } from './exec-credential.js';
import { errorMessage } from '../load/errors.js';
import { parseWarnings } from './warnings.js';
import { isRecord as isObj } from '../load/shape.js';

/** Options of {@link connect}. */
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

/** The client for the task's cluster (created once per cluster per run, on first use). */
export async function kubeFor(ctx: Pick<ModuleContext, 'adapter' | 'cluster' | 'vars' | 'log'>): Promise<KubeClient> {
  const client = await ctx.adapter<KubeClient>('k8s', () => connect(ctx.cluster, connectOptionsFrom(ctx.vars)));
  // Outage notices go to the task running on this cluster now.
  if (client instanceof KubeClientImpl) client.notice = (msg) => ctx.log.warn(msg);
  return client;
}

/**
 * The connection settings a cluster's variables give (`k8s_qps`, `k8s_burst`): the same for every
 * client of the cluster, whoever creates it first — a task, or the run's lock before the first change.
 */
export function connectOptionsFrom(vars: Record<string, unknown>): ConnectOptions {
  return { qps: numVar(vars.k8s_qps), burst: numVar(vars.k8s_burst) };
}

function numVar(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** What a connection needs from the kubeconfig. */
interface Credentials {
  server: string;
  skipTLSVerify: boolean;
  tls: https.AgentOptions;
  auth: TransportAuth;
  /** The kubeconfig cluster's `proxy-url` (with kplay's `kplay-proxy-headers`). */
  proxy?: ProxySettings;
}

/**
 * Credentials from a kubeconfig file for the common cases (certificates, CA, bearer token or
 * token file, basic auth, `exec` credential plugins — run bounded, see exec-credential.ts; data
 * inline or in files), without loading `@kubernetes/client-node` (whose import costs most of a
 * second). `undefined` when the context needs more (auth providers, proxies, …): then
 * {@link clientNodeCredentials} handles it.
 */
/**
 * The parsed kubeconfig, by its text: the contexts of one kubeconfig (an inventory's clusters)
 * connect with one parse, not one each (~5 ms for the sandbox's three). The file is read every
 * time, so an edit between connections is seen; the parse is only reused for the same text.
 */
const kubeconfigDocs = new Map<string, unknown>();
function parsedKubeconfig(text: string): unknown {
  if (kubeconfigDocs.has(text)) return kubeconfigDocs.get(text);
  const doc = parseData(text);
  kubeconfigDocs.set(text, doc);
  return doc;
}

async function fastCredentials(cluster: ClusterRef): Promise<Credentials | undefined> {
  if (!cluster.kubeconfig) return undefined;
  let doc: unknown;
  try {
    doc = parsedKubeconfig(readFileSync(cluster.kubeconfig, 'utf8'));
  } catch {
    return undefined;
  }
  if (!isObj(doc)) return undefined;
  const named = (list: unknown, name: unknown, field: string): Record<string, unknown> | undefined => {
    if (!Array.isArray(list) || typeof name !== 'string') return undefined;
    const e: unknown = list.find((x) => isObj(x) && x.name === name);
    return isObj(e) && isObj(e[field]) ? e[field] : undefined;
  };
  const ctx = named(doc.contexts, cluster.context, 'context');
  if (!ctx) return undefined;
  const kcluster = named(doc.clusters, ctx.cluster, 'cluster');
  const user = ctx.user === undefined ? {} : named(doc.users, ctx.user, 'user');
  if (!kcluster || !user || typeof kcluster.server !== 'string' || !kcluster.server) return undefined;
  const clusterKeys = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name', 'extensions', 'proxy-url', 'kplay-proxy-headers']);
  const userKeys = new Set(['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data', 'token', 'tokenFile', 'username', 'password', 'exec', 'as', 'as-groups', 'extensions']);
  if (Object.keys(kcluster).some((k) => !clusterKeys.has(k)) || Object.keys(user).some((k) => !userKeys.has(k))) return undefined;
  const exec = user.exec === undefined ? undefined : parseExecConfig(user.exec);
  if (user.exec !== undefined && !exec) return undefined;
  const dir = path.dirname(path.resolve(cluster.kubeconfig));
  let cred: ExecCredential | undefined;
  const runPlugin = async (): Promise<ExecCredential> => {
    try {
      return await runExecPlugin(exec as ExecConfig, dir);
    } catch (e) {
      throw new ConnectFailure((name) => `cluster ${name} (context "${cluster.context}"): ${errorMessage(e)}`);
    }
  };
  if (exec) cred = await runPlugin();
  const data = (inline: unknown, file: unknown): Buffer | undefined => {
    if (typeof inline === 'string' && inline) return Buffer.from(inline, 'base64');
    if (typeof file === 'string' && file) return readFileSync(path.resolve(dir, file));
    return undefined;
  };
  const skipTLSVerify = kcluster['insecure-skip-tls-verify'] === true;
  const proxyHeaders = isObj(kcluster['kplay-proxy-headers']) ? Object.fromEntries(Object.entries(kcluster['kplay-proxy-headers']).filter((e): e is [string, string] => typeof e[1] === 'string')) : undefined;
  const proxy: ProxySettings | undefined = typeof kcluster['proxy-url'] === 'string' && kcluster['proxy-url'] ? { url: kcluster['proxy-url'], headers: proxyHeaders } : undefined;
  const tls: https.AgentOptions = {
    ca: data(kcluster['certificate-authority-data'], kcluster['certificate-authority']),
    cert: cred?.cert ?? data(user['client-certificate-data'], user['client-certificate']),
    key: cred?.key ?? data(user['client-key-data'], user['client-key']),
    servername: typeof kcluster['tls-server-name'] === 'string' ? kcluster['tls-server-name'] : undefined,
    rejectUnauthorized: !skipTLSVerify,
  };
  const tokenFile = typeof user.tokenFile === 'string' ? path.resolve(dir, user.tokenFile) : undefined;
  // impersonation (kubeconfig `as`/`as-groups`, kubectl's --as/--as-group)
  const impersonate: Record<string, string | string[]> = {};
  if (typeof user.as === 'string' && user.as) impersonate['Impersonate-User'] = user.as;
  const groups = Array.isArray(user['as-groups']) ? user['as-groups'].filter((g): g is string => typeof g === 'string' && g !== '') : [];
  if (groups.length) impersonate['Impersonate-Group'] = groups;
  const headers = (): Record<string, string | string[]> => {
    const token = typeof user.token === 'string' && user.token ? user.token : tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined;
    if (token) return { ...impersonate, Authorization: `Bearer ${token}` };
    if (typeof user.username === 'string' && typeof user.password === 'string') return { ...impersonate, Authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` };
    return impersonate;
  };
  if (cred?.token) {
    // an exec plugin's token: asked again (bounded) shortly before it expires, and after a 401
    let stale = false;
    return {
      server: kcluster.server,
      skipTLSVerify,
      tls,
      proxy,
      auth: {
        headers: async (): Promise<Record<string, string | string[]>> => {
          if (stale || (cred?.expiresAt !== undefined && Date.now() > cred.expiresAt - 10_000)) {
            stale = false;
            cred = await runPlugin();
          }
          return cred?.token ? { ...impersonate, Authorization: `Bearer ${cred.token}` } : impersonate;
        },
        invalidate: () => {
          stale = true;
        },
      },
    };
  }
  // a token file is re-read (it may be rotated), like client-go does
  let cached = headers();
  return { server: kcluster.server, skipTLSVerify, tls, proxy, auth: { headers: () => Promise.resolve(tokenFile ? (cached = headers()) : cached), invalidate: () => undefined } };
}

/** Credentials through `@kubernetes/client-node`'s `KubeConfig` (exec plugins, OIDC, default kubeconfig, in-cluster). */
async function clientNodeCredentials(cluster: ClusterRef): Promise<Credentials> {
  const { KubeConfig: KubeConfigClass } = await import('@kubernetes/client-node');
  const kc = new KubeConfigClass();
  try {
    if (cluster.kubeconfig) kc.loadFromFile(cluster.kubeconfig);
    else kc.loadFromDefault();
  } catch (e) {
    throw new ConnectFailure((name) => `cluster ${name}: cannot load kubeconfig${cluster.kubeconfig ? ` ${cluster.kubeconfig}` : ''}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const contexts = kc.getContexts().map((c) => c.name);
  if (!contexts.includes(cluster.context)) {
    throw new ConnectFailure((name) => `cluster ${name}: no context "${cluster.context}" in kubeconfig ${cluster.kubeconfig ?? '(default)'}; contexts: ${contexts.join(', ') || '(none)'}`);
  }
  kc.setCurrentContext(cluster.context);
  const kcluster = kc.getCurrentCluster();
  if (!kcluster?.server) throw new ConnectFailure((name) => `cluster ${name}: context "${cluster.context}" has no cluster server in the kubeconfig`);
  const base: https.RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(base);
  } catch (e) {
    throw new ConnectFailure((name) => `cluster ${name}: cannot get credentials for context "${cluster.context}": ${e instanceof Error ? e.message : String(e)}`);
  }
  const tls: https.AgentOptions = { ca: base.ca, cert: base.cert, key: base.key, pfx: base.pfx, passphrase: base.passphrase, servername: base.servername };
  tls.rejectUnauthorized = kcluster.skipTLSVerify ? false : true;
  return { server: kcluster.server, skipTLSVerify: kcluster.skipTLSVerify, tls, auth: authProvider(kc, base), ...(kcluster.proxyUrl ? { proxy: { url: kcluster.proxyUrl } } : {}) };
}

/**
 * A connection failure, worded for whichever inventory entry asked (entries can share one
 * connection, see {@link connect}).
 */
class ConnectFailure extends Error {
  constructor(readonly describe: (cluster: string) => string) {
    super(describe('(cluster)'));
  }
}

/** The discovery of one apiserver as one user: shared by every client of a {@link Connection}. */
export interface DiscoveryCache {
  index?: Promise<DiscoveryIndex>;
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
  /** Clients not closed yet; when the last closes, the next connect probes again. */
  users: number;
}

/** Open connections by kubeconfig file, context and transport options. */
const connections = new Map<string, Promise<Connection>>();

/**
 * The client of an inventory entry. Entries with the same kubeconfig, context and limits (several
 * names for one cluster: per-team entries, aliases, a canary entry) share what a connection
 * learns — the credentials (one exec-plugin/OIDC token), one reachability probe, one API
 * discovery — while each keeps its own transport (its QPS budget, `k8s_qps`/`k8s_burst`), its
 * name in messages and its outage notices.
 */
export async function connect(cluster: ClusterRef, opts: ConnectOptions = {}): Promise<KubeClientImpl> {
  const key = JSON.stringify([cluster.kubeconfig ? path.resolve(cluster.kubeconfig) : '', cluster.context, opts.qps, opts.burst, opts.timeoutMs, opts.probeTimeoutMs]);
  let pending = connections.get(key);
  if (!pending) {
    const opening = open(cluster, opts);
    pending = opening;
    connections.set(key, opening);
    // a failed connection is not kept: the next entry (or task) tries again
    opening.catch(() => {
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
  const transport = conn.spare ?? new Transport({ cluster: cluster.name, server: conn.server, tls: conn.creds.tls, auth: conn.creds.auth, proxy: conn.creds.proxy, qps: opts.qps, burst: opts.burst, timeoutMs: opts.timeoutMs });
  conn.spare = undefined;
  let closed = false;
  const client = new KubeClientImpl(cluster.name, conn.server, transport, conn.discovery, () => {
    transport.close();
    if (closed) return;
    closed = true;
    if (--conn.users === 0 && connections.get(key) === pending) connections.delete(key);
  });
  client.serverVersion = conn.version;
  recordStats(client);
  return client;
}

/** Load the kubeconfig of a cluster, select its context, and check the server answers. */
async function open(cluster: ClusterRef, opts: ConnectOptions): Promise<Connection> {
  if (cluster.kubeconfig && !existsSync(cluster.kubeconfig)) throw new ConnectFailure((name) => `cluster ${name}: cannot load kubeconfig ${cluster.kubeconfig}: kubeconfig ${cluster.kubeconfig} does not exist`);
  let creds: Credentials | undefined;
  try {
    creds = await fastCredentials(cluster);
  } catch (e) {
    if (e instanceof ConnectFailure) throw e; // a credential plugin that failed or hung: said as it is
    creds = undefined; // e.g. an unreadable certificate file: client-node reports it
  }
  creds ??= await clientNodeCredentials(cluster);
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
  return { server, creds, version, discovery: { missing: new Set(), learned: new Map() }, spare: transport, users: 0 };
}

const statsClients: KubeClientImpl[] = [];

/**
 * With `KPLAY_STATS_FILE` set, append one JSON line per cluster client
 * (`{"cluster", "server", "requests", "writes", "retries", …}`) to that file when the process exits.
 * Used by the benchmarks (test/bench) to count every request, reads included.
 */
function recordStats(client: KubeClientImpl): void {
  const file = setting('statsFile');
  if (!file) return;
  if (statsClients.length === 0) {
    process.on('exit', () => {
      const lines = statsClients.map((c) => JSON.stringify({ cluster: c.name, server: c.server, ...c.stats }) + '\n').join('');
      try {
        appendFileSync(file, lines);
      } catch {
        // statistics are best effort
      }
    });
  }
  statsClients.push(client);
}

function outageBudgetFromEnv(): number {
  return setting('outageSeconds') * 1000;
}

/** Whether a Content-Type says JSON (`application/json`, `…+json`, with parameters such as `;as=APIGroupDiscoveryList`). */
function isJsonType(v: string | string[] | undefined): boolean {
  const t = (Array.isArray(v) ? v[0] : v)?.split(';')[0]?.trim().toLowerCase();
  return t !== undefined && (t === 'application/json' || t.endsWith('+json'));
}

function describeNetError(e: unknown, fallback: string): string {
  const code = e instanceof TransportError ? e.code : undefined;
  if (e instanceof TransportError && e.timeout) return `connect timeout (${fallback})`;
  if (code === 'ECONNREFUSED') return `connect ECONNREFUSED (${fallback})`;
  return fallback;
}

/** Auth headers from the kubeconfig, refreshed every minute (exec plugins/OIDC tokens expire) and after a 401. */
function authProvider(kc: KubeConfig, initial: https.RequestOptions): TransportAuth {
  const toHeaders = (o: https.RequestOptions): Record<string, string> => {
    const h: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (typeof v === 'string' || typeof v === 'number') h[k] = String(v);
    if (o.auth) h.Authorization = `Basic ${Buffer.from(o.auth).toString('base64')}`;
    return h;
  };
  let cached: Promise<Record<string, string>> = Promise.resolve(toHeaders(initial));
  let at = Date.now();
  return {
    headers: () => {
      if (Date.now() - at > 60_000) {
        at = Date.now();
        const o: https.RequestOptions = {};
        cached = kc.applyToHTTPSOptions(o).then(() => toHeaders(o));
      }
      return cached;
    },
    invalidate: () => {
      at = 0;
    },
  };
}


/** The client implementation. */
export class KubeClientImpl implements KubeClient {
  /** `gitVersion` from /version. */
  serverVersion = '';

  /**
   * How long to ride out an apiserver that stops answering after it was reached in this run (a
   * control-plane restart, an etcd leader change), ms. `KPLAY_OUTAGE_SECONDS` sets it.
   * @default 60000
   */
  outageBudgetMs = outageBudgetFromEnv();
  /** Where to say that the apiserver is unreachable and how long kplay keeps trying. */
  notice: (msg: string) => void = () => undefined;

  /**
   * @param discovery shared with the other clients of the same connection
   * @param onClose what `close()` does instead of closing the transport (and what it shares)
   */
  constructor(
    readonly name: string,
    readonly server: string,
    readonly transport: Transport,
    private readonly discovery: DiscoveryCache = { missing: new Set(), learned: new Map() },
    private readonly onClose?: () => void,
  ) {}

  get stats(): ClientStats {
    return this.transport.stats;
  }

  onWrite(fn: (path: string) => boolean): () => void {
    const hooks = this.transport.writeHooks;
    hooks.push(fn);
    return () => {
      const i = hooks.indexOf(fn);
      if (i >= 0) hooks.splice(i, 1);
    };
  }

  /** Close idle connections. */
  close(): void {
    if (this.onClose) this.onClose();
    else this.transport.close();
  }

  // ---------------------------------------------------------------- requests

  /** Send a request; maps network failures to UnreachableError and error statuses to KubeApiError. */
  async call(req: TransportRequest, opts: { allow404?: boolean } = {}): Promise<{ status: number; body: unknown; warnings: string[] }> {
    for (let attempt = 1; ; attempt++) {
      const res = await this.send(req);
      if (res.status === 404 && opts.allow404) return { status: 404, body: undefined, warnings: [] };
      if (res.status === 401) throw new UnreachableError(`cluster ${this.name} at ${this.server}: credentials rejected (401 Unauthorized)`);
      if (res.status >= 300) {
        const st = parseStatus(res.body);
        throw new KubeApiError(res.status, st?.reason ?? httpReason(res.status), st?.message ?? res.body.slice(0, 300), req.method, req.path, this.name, st);
      }
      let body: unknown;
      try {
        body = res.body ? JSON.parse(res.body) : undefined;
      } catch {
        if (!isJsonType(res.headers['content-type'])) body = res.body;
        else {
          // An answer that says it is JSON and does not parse was cut short (a proxy or LB closed
          // the connection mid-body, cleanly): never data. A read is asked again; anything else
          // is an error — a write's outcome is unknown and must not be guessed from half a body.
          this.transport.stats.retries++;
          if (req.retry === 'read' && attempt < 3 && !req.signal?.aborted) continue;
          throw new TransportError(`cluster ${this.name}: the apiserver's answer to ${req.method} ${req.path} was cut short (${res.body.length} bytes of JSON that does not parse${attempt > 1 ? `, ${attempt} tries` : ''}); check proxies or load balancers between kplay and ${this.server}`, 'EBADBODY', true, false);
        }
      }
      return { status: res.status, body, warnings: parseWarnings(res.headers.warning) };
    }
  }

  /** One request, riding out an outage of the apiserver within the connection's bound. */
  private async send(req: TransportRequest): Promise<TransportResponse> {
    let res: TransportResponse;
    // One outage clock per connection (shared with the other clients and requests on it): a
    // request that meets an outage already under way gets only what is left of the budget.
    const state = this.transport.reachability;
    let noted = 0;
    for (;;) {
      const attemptStarted = Date.now();
      try {
        // Once the apiserver has answered, an outage is bounded from its first failed request:
        // the transport's own backoff stops at the same bound.
        const deadline = state.reached ? (state.downSince ?? attemptStarted) + this.outageBudgetMs : undefined;
        res = await this.transport.request(deadline === undefined ? req : { ...req, deadline });
        state.reached = true;
        state.downSince = undefined;
        break;
      } catch (e) {
        const down = e instanceof TransportError && isConnectError(e) && e.code !== 'ECONNRESET' && e.code !== 'ETIMEDOUT' && e.code !== 'EPIPE';
        if (!down) throw e;
        state.downSince ??= attemptStarted;
        const started = state.downSince;
        // Nothing was sent (the connection was refused), or the request is safe to repeat.
        const repeatable = !e.sent || req.retry === 'read' || req.retry === 'idempotent';
        const left = this.outageBudgetMs - (Date.now() - started);
        if (state.reached && repeatable && left > 0 && !req.signal?.aborted) {
          if (Date.now() - noted >= 10_000) {
            noted = Date.now();
            this.notice(`cluster ${this.name}: apiserver ${this.server} unreachable (${e.code ?? e.message}), retrying for ${Math.ceil(left / 1000)} s more`);
          }
          await sleepOrThrow(Math.min(1000, left), req.signal);
          continue;
        }
        const tried = state.reached ? ` (kept trying for ${Math.round((Date.now() - started) / 1000)} s; KPLAY_OUTAGE_SECONDS sets how long)` : '';
        throw new UnreachableError(`cluster ${this.name} unreachable at ${this.server}: ${e.message}${tried}`);
      }
    }
    return res;
  }

  // ---------------------------------------------------------------- discovery

  private loadDiscovery(): Promise<DiscoveryIndex> {
    this.discovery.index ??= (async () => {
      const index = new DiscoveryIndex();
      // both at once: one round trip, not two
      const [core, apis] = await Promise.all([
        this.call({ method: 'GET', path: '/api', accept: AGGREGATED_ACCEPT, verb: 'discovery', retry: 'read' }),
        this.call({ method: 'GET', path: '/apis', accept: AGGREGATED_ACCEPT, verb: 'discovery', retry: 'read' }),
      ]);
      if (isAggregated(core.body) && isAggregated(apis.body)) {
        parseAggregated(core.body, index);
        parseAggregated(apis.body, index);
        return index;
      }
      // Classic discovery: one request per group-version.
      const gvs = [...groupVersionsOf(core.body), ...groupVersionsOf(apis.body)];
      await Promise.all(
        gvs.map(async (gv) => {
          const path = gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`;
          try {
            const r = await this.call({ method: 'GET', path, verb: 'discovery', retry: 'read' });
            parseResourceList(r.body, index);
          } catch (e) {
            // An unavailable aggregated API must not break discovery of the others.
            if (!(e instanceof KubeApiError)) throw e;
          }
        }),
      );
      return index;
    })();
    const index = this.discovery.index;
    index.catch(() => {
      if (this.discovery.index === index) this.discovery.index = undefined;
    });
    return index;
  }

  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    // Kinds every cluster serves need no discovery; once it is read, discovery answers.
    const core = this.discovery.index ? undefined : coreKind(apiVersion, kind, this.serverVersion);
    if (core) return core;
    const key = `${apiVersion} ${kind}`;
    const read = this.loadDiscovery();
    let info = (await read).get(apiVersion, kind) ?? this.learnedKind(apiVersion, kind);
    if (!info && !this.discovery.missing.has(key)) {
      // Maybe a CRD applied earlier in the run: refresh once (lookups that missed in the same
      // read share one refresh).
      if (this.discovery.index === read) this.discovery.index = undefined;
      info = (await this.loadDiscovery()).get(apiVersion, kind);
      if (!info) this.discovery.missing.add(key);
    }
    if (!info) throw new KubeApiError(404, 'NotFound', `no kind ${kind} in apiVersion ${apiVersion} on cluster ${this.name} (is the CRD installed?)`, 'DISCOVER', apiVersion, this.name);
    return info;
  }

  /** Like `resource`, but `undefined` for an unknown kind. */
  async tryResource(apiVersion: string, kind: string): Promise<ResourceInfo | undefined> {
    try {
      return await this.resource(apiVersion, kind);
    } catch (e) {
      if (e instanceof KubeApiError && e.verb === 'DISCOVER') return undefined;
      throw e;
    }
  }

  invalidateDiscovery(): void {
    this.discovery.index = undefined;
    this.discovery.missing.clear();
  }

  learnKinds(crd: string, kinds: readonly ResourceInfo[]): void {
    if (kinds.length) this.discovery.learned.set(crd, kinds);
    else this.discovery.learned.delete(crd);
    for (const k of kinds) this.discovery.missing.delete(`${apiVersionOf(k.group, k.version)} ${k.kind}`);
  }

  private learnedKind(apiVersion: string, kind: string): ResourceInfo | undefined {
    for (const kinds of this.discovery.learned.values()) for (const k of kinds) if (k.kind === kind && apiVersionOf(k.group, k.version) === apiVersion) return k;
    return undefined;
  }

  /** URL path of a collection or object. */
  path(info: ResourceInfo, namespace?: string, name?: string): string {
    const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
    const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${base}${ns}/${info.resource}${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private async objectPath(ref: ObjectRef): Promise<{ info: ResourceInfo; path: string }> {
    const info = await this.resource(ref.apiVersion, ref.kind);
    const ns = info.namespaced ? (ref.namespace ?? 'default') : undefined;
    return { info, path: this.path(info, ns, ref.name) };
  }

  // ---------------------------------------------------------------- verbs

  async get(ref: ObjectRef, signal?: AbortSignal): Promise<KubeObject | undefined> {
    const { path } = await this.objectPath(ref);
    const r = await this.call({ method: 'GET', path, retry: 'read', signal }, { allow404: true });
    return r.status === 404 ? undefined : asObject(r.body, ref.apiVersion, ref.kind);
  }

  async getPath(path: string, signal?: AbortSignal): Promise<unknown> {
    const r = await this.call({ method: 'GET', path, verb: 'discovery', retry: 'read', signal });
    return r.body;
  }

  async list(apiVersion: string, kind: string, opts: ListOptions = {}): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    const info = await this.resource(apiVersion, kind);
    const path = this.path(info, info.namespaced ? opts.namespace : undefined);
    const items: KubeObject[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const r = await this.call({ method: 'GET', path, query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: 500, continue: cont }, verb: 'list', retry: 'read', signal: opts.signal });
      // A LIST answers a JSON object with `items`: anything else is not an empty list.
      if (!isObj(r.body) || !('items' in r.body)) throw new TransportError(`cluster ${this.name}: the apiserver's answer to LIST ${path} is not a list (${typeof r.body === 'string' ? `${r.body.length} bytes of text` : 'no items'})`, 'EBADBODY', true, false);
      const body = r.body;
      const meta = isObj(body.metadata) ? body.metadata : {};
      resourceVersion = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : resourceVersion;
      cont = typeof meta.continue === 'string' && meta.continue ? meta.continue : undefined;
      for (const it of Array.isArray(body.items) ? body.items : []) items.push(asObject(it, apiVersion, kind));
    } while (cont);
    return { items, resourceVersion };
  }

  async apply(obj: KubeObject, opts: ApplyOptions): Promise<KubeObject> {
    const ref = refOf(obj);
    const { info, path } = await this.objectPath(ref);
    const body = info.namespaced ? withNamespace(obj, ref.namespace ?? 'default') : obj;
    try {
      const r = await this.call({
        method: 'PATCH',
        path,
        query: { fieldManager: opts.fieldManager, force: opts.force ? 'true' : undefined, dryRun: opts.dryRun ? 'All' : undefined },
        body,
        contentType: 'application/apply-patch+yaml',
        verb: 'apply',
        retry: 'idempotent',
        write: !opts.dryRun,
        signal: opts.signal,
      });
      if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
      return asObject(r.body, obj.apiVersion, obj.kind);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 409) {
        const conflicts = parseConflicts(e.body);
        if (conflicts.length) throw new ApplyConflictError(describeRef(ref, info.namespaced), conflicts, 'PATCH', path, this.name, e.body);
      }
      throw e;
    }
  }

  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<boolean> {
    const { path } = await this.objectPath(ref);
    const r = await this.call(
      {
        method: 'DELETE',
        path,
        query: { dryRun: opts.dryRun ? 'All' : undefined },
        // the apiserver reads DeleteOptions from the body when there is one, ignoring the query: dryRun goes in both
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: opts.propagationPolicy ?? 'Background', gracePeriodSeconds: opts.gracePeriodSeconds, preconditions: opts.preconditions, dryRun: opts.dryRun ? ['All'] : undefined },
        retry: 'idempotent',
        write: !opts.dryRun,
        signal: opts.signal,
      },
      { allow404: true },
    );
    if (r.status !== 404) opts.onResponse?.(r.body);
    return r.status !== 404;
  }

  async evict(ref: ObjectRef, opts: { gracePeriodSeconds?: number; signal?: AbortSignal } = {}): Promise<boolean> {
    const { path } = await this.objectPath(ref);
    const body = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: ref.name, namespace: ref.namespace }, ...(opts.gracePeriodSeconds !== undefined ? { deleteOptions: { gracePeriodSeconds: opts.gracePeriodSeconds } } : {}) };
    const r = await this.call({ method: 'POST', path: `${path}/eviction`, body, retry: 'unsafe', write: true, signal: opts.signal }, { allow404: true });
    return r.status !== 404;
  }

  async mergePatch(ref: ObjectRef, patch: Record<string, unknown>, opts: PatchOptions = {}): Promise<KubeObject> {
    const { path } = await this.objectPath(ref);
    const contentType = opts.strategic ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json';
    const r = await this.call({ method: 'PATCH', path, query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager }, body: patch, contentType, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal });
    if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
    return asObject(r.body, ref.apiVersion, ref.kind);
  }

  async jsonPatch(ref: ObjectRef, ops: JsonPatchOp[], opts: { dryRun?: boolean; signal?: AbortSignal } = {}): Promise<KubeObject> {
    const { path } = await this.objectPath(ref);
    const r = await this.call({ method: 'PATCH', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: ops, contentType: 'application/json-patch+json', retry: 'unsafe', write: !opts.dryRun, signal: opts.signal });
    return asObject(r.body, ref.apiVersion, ref.kind);
  }

  async create(obj: KubeObject, opts: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void } = {}): Promise<KubeObject> {
    const info = await this.resource(obj.apiVersion, obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    const path = this.path(info, ns);
    const r = await this.call({ method: 'POST', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: ns ? withNamespace(obj, ns) : obj, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal });
    if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
    return asObject(r.body, obj.apiVersion, obj.kind);
  }

  async replace(obj: KubeObject, opts: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void } = {}): Promise<KubeObject> {
    const { path } = await this.objectPath(refOf(obj));
    const r = await this.call({ method: 'PUT', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: obj, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal });
    if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
    return asObject(r.body, obj.apiVersion, obj.kind);
  }

  async watch(apiVersion: string, kind: string, opts: WatchOptions, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean | Promise<boolean>): Promise<void> {
    const info = await this.resource(apiVersion, kind);
    await runWatch(
      {
        transport: this.transport,
        cluster: this.name,
        apiVersion,
        kind,
        list: (o) => this.list(apiVersion, kind, o),
        collectionPath: (ns) => Promise.resolve(this.path(info, info.namespaced ? ns : undefined)),
      },
      opts,
      onEvent,
    );
  }
}

/** The `ObjectRef` of an object. */
export function refOf(obj: KubeObject): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
}

/** `Kind ns/name` (or `Kind name` for cluster-scoped objects). */
export function describeRef(ref: ObjectRef, namespaced = ref.namespace !== undefined): string {
  return `${ref.kind} ${namespaced && ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

function withNamespace(obj: KubeObject, namespace: string): KubeObject {
  if (obj.metadata.namespace === namespace) return obj;
  return { ...obj, metadata: { ...obj.metadata, namespace } };
}

function asObject(v: unknown, apiVersion: string, kind: string): KubeObject {
  if (!isObj(v)) throw new Error(`unexpected response for ${kind}: ${JSON.stringify(v)?.slice(0, 100)}`);
  const o = v as KubeObject;
  if (!isObj(o.metadata)) o.metadata = {};
  if (typeof o.apiVersion !== 'string') o.apiVersion = apiVersion;
  if (typeof o.kind !== 'string') o.kind = kind;
  return o;
}

function httpReason(status: number): string {
  return { 400: 'BadRequest', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 409: 'Conflict', 410: 'Gone', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout' }[status] ?? `HTTP ${status}`;
}

/** Exported for unit tests of the group/version split. */
export { splitApiVersion };
/** Retry classes (re-exported for modules that issue raw requests). */
export type { RetryClass };
