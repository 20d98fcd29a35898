/**
 * The Kubernetes client: one per cluster per run (`kubeFor(ctx)`), on a pooled connection
 * (pool.ts: credentials from the inventory's kubeconfig + context, see credentials.ts, and one
 * reachability probe), with plain node HTTP through one keep-alive agent (http.ts). This file
 * holds the verbs (get, list, apply, delete, patch, watch, …) and the kind → URL discovery;
 * the request layer under them is requests.ts.
 */
import type { ClusterRef, ModuleContext } from '../core/module.js';
import { AGGREGATED_ACCEPT, apiVersionOf, coreKind, DiscoveryIndex, groupVersionsOf, isAggregated, parseAggregated, parseResourceList, splitApiVersion } from './discovery.js';
import { ApplyConflictError, KubeApiError, parseConflicts } from './errors.js';
import { TransportError, type Transport } from './http.js';
import type { RetryClass } from './retry.js';
import type { ApplyOptions, DeleteOptions, ExecRequest, ExecResult, JsonPatchOp, LogQuery, PatchOptions, KubeClient, KubeObject, ListOptions, ListResult, ObjectRef, ResourceInfo, WatchEvent, WatchOptions } from './types.js';
import { runWatch } from './watch.js';
import { isRecord } from '../core/shape.js';
import { acquireConnection, type ConnectOptions, type DiscoveryCache } from './pool.js';
import type { ResolvedContext } from './resolved.js';
import { isEndpointMissing, KubeRequests } from './requests.js';
import { recordStats } from './stats.js';
import { podExec, podLog } from './pod-io.js';

export type { ConnectOptions, DiscoveryCache } from './pool.js';

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

/**
 * The client of an inventory entry. Entries with the same kubeconfig, context and limits (several
 * names for one cluster: per-team entries, aliases, a canary entry) share what a connection
 * learns — the credentials (one exec-plugin/OIDC token), one reachability probe, one API
 * discovery — while each keeps its own transport (its QPS budget, `k8s_qps`/`k8s_burst`), its
 * name in messages and its outage notices.
 */
export async function connect(cluster: ClusterRef, opts: ConnectOptions = {}): Promise<KubeClientImpl> {
  const lease = await acquireConnection(cluster, opts);
  const client = new KubeClientImpl(cluster.name, lease.server, lease.transport, lease.discovery, lease.release);
  client.serverVersion = lease.version;
  client.resolved = lease.resolved;
  recordStats(client);
  return client;
}

/** The Accept of a metadata-only LIST (what kubectl and client-go's metadata client send); JSON as the fallback. */
const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/** The client implementation: the verbs of `KubeClient` over {@link KubeRequests}. */
export class KubeClientImpl extends KubeRequests implements KubeClient {
  /** `gitVersion` from /version. */
  serverVersion = '';
  /** The kubeconfig context as resolved when the connection opened (what helm is handed). */
  resolved: ResolvedContext | undefined;

  /**
   * @param discovery shared with the other clients of the same connection
   * @param onClose what `close()` does instead of closing the transport (and what it shares)
   */
  constructor(name: string, server: string, transport: Transport, private readonly discovery: DiscoveryCache = { missing: new Set(), learned: new Map() }, onClose?: () => void) {
    super(name, server, transport, onClose);
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
    index.then(
      (read) => {
        if (this.discovery.index === index) this.discovery.read = read;
      },
      () => {
        if (this.discovery.index === index) this.discovery.index = undefined;
      },
    );
    return index;
  }

  prefetchDiscovery(): Promise<void> {
    // errors are not this caller's: the first lookup that needs discovery reads it again
    return this.loadDiscovery().then(
      () => undefined,
      () => undefined,
    );
  }

  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    // Kinds every cluster serves need no discovery (nor wait for a read under way); once it is
    // read, discovery answers.
    const core = this.discovery.read ? undefined : coreKind(apiVersion, kind, this.serverVersion);
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
    this.discovery.read = undefined;
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

  /** `run`, with a 404 for the URL of a kind no longer served made that error (see {@link unserved}). */
  private async served<T>(info: ResourceInfo, of: { apiVersion: string; kind: string }, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      throw await this.unserved(info, of.apiVersion, of.kind, e, signal);
    }
  }

  /**
   * `e`, or — when it is a 404 for the URL itself (not for an object) of a custom resource whose
   * CRD no longer serves it — the error of a kind that is not served (see {@link kindGone}).
   */
  private async unserved(info: ResourceInfo, apiVersion: string, kind: string, e: unknown, signal?: AbortSignal): Promise<unknown> {
    if (!(e instanceof KubeApiError) || e.status !== 404 || !isEndpointMissing(e.body)) return e;
    return (await this.kindGone(info, apiVersion, kind, signal)) ?? e;
  }

  /**
   * After a 404 for the URL of a kind discovery knew (`404 page not found`: its CRD was deleted
   * between two tasks, or the version dropped), whether the kind is gone: its CRD (by the
   * resource and group) is absent, or no longer serves the version. Then the kind is forgotten
   * (discovery is read again by the next lookup) and the error is the one of a kind missing at
   * the start (`DISCOVER`, see {@link resource}), saying so and what to do. Undefined when the
   * CRD still serves it (an apiserver that has not caught up with a new CRD answers 404 for a
   * moment, see `writeServed`), or when that cannot be told (a built-in kind, an aggregated API,
   * no right to read CRDs).
   */
  private async kindGone(info: ResourceInfo, apiVersion: string, kind: string, signal?: AbortSignal): Promise<KubeApiError | undefined> {
    if (!info.group) return undefined;
    const crd = `${info.resource}.${info.group}`;
    let why: string | undefined;
    try {
      const r = await this.call({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(crd)}`, retry: 'read', signal }, { allow404: true });
      if (r.status === 404 && !r.endpointMissing) why = `its CustomResourceDefinition ${crd} was deleted`;
      else if (isRecord(r.body) && r.body.kind === 'CustomResourceDefinition') {
        const spec = isRecord(r.body.spec) ? r.body.spec : {};
        const served = (Array.isArray(spec.versions) ? spec.versions : []).filter((v): v is { name: string; served: true } => isRecord(v) && typeof v.name === 'string' && v.served === true).map((v) => v.name);
        if (!served.includes(info.version)) why = `its CustomResourceDefinition ${crd} no longer serves version ${info.version} (it serves ${served.join(', ') || 'none'})`;
      }
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
    }
    if (!why) return undefined;
    this.invalidateDiscovery();
    for (const [name, kinds] of this.discovery.learned) if (kinds.some((k) => k.kind === kind && apiVersionOf(k.group, k.version) === apiVersion)) this.discovery.learned.delete(name);
    return new KubeApiError(404, 'NotFound', `no kind ${kind} in apiVersion ${apiVersion} on cluster ${this.name} any more: the kind is no longer served — ${why} after this run started (the apiserver answered 404 page not found); install the CRD again before this task (or serve ${apiVersion} again), or remove the task`, 'DISCOVER', apiVersion, this.name);
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
    const { info, path } = await this.objectPath(ref);
    const r = await this.call({ method: 'GET', path, retry: 'read', signal }, { allow404: true });
    if (r.status === 404 && r.endpointMissing) {
      const gone = await this.kindGone(info, ref.apiVersion, ref.kind, signal);
      if (gone) throw gone;
    }
    return r.status === 404 ? undefined : asObject(r.body, ref.apiVersion, ref.kind);
  }

  podExec(x: ExecRequest): Promise<ExecResult> {
    return podExec(this, x);
  }

  podLog(namespace: string, pod: string, q: LogQuery, signal?: AbortSignal): Promise<string> {
    return podLog(this, namespace, pod, q, signal);
  }

  async getPath(path: string, signal?: AbortSignal): Promise<unknown> {
    const r = await this.call({ method: 'GET', path, verb: 'discovery', retry: 'read', signal });
    return r.body;
  }

  async list(apiVersion: string, kind: string, opts: ListOptions = {}): Promise<ListResult> {
    const info = await this.resource(apiVersion, kind);
    const path = this.path(info, info.namespaced ? opts.namespace : undefined);
    const items: KubeObject[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    let partialPages = 0;
    let pages = 0;
    let limit: number | undefined = 500;
    for (;;) {
      let r: Awaited<ReturnType<KubeClientImpl['call']>>;
      try {
        r = await this.call({ method: 'GET', path, query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit, continue: cont }, accept: opts.metadataOnly ? METADATA_LIST_ACCEPT : undefined, verb: 'list', retry: 'read', signal: opts.signal });
      } catch (e) {
        // The continue token of a later page expired (410 Expired: the list's resourceVersion was
        // compacted while paging): as client-go's pager, the list is read again whole, without a
        // limit, at the latest version — the pages read so far are dropped.
        if (!(cont !== undefined && isExpired(e))) throw await this.unserved(info, apiVersion, kind, e, opts.signal);
        this.transport.stats.listFallbacks = (this.transport.stats.listFallbacks ?? 0) + 1;
        items.length = 0;
        partialPages = 0;
        pages = 0;
        cont = undefined;
        limit = undefined;
        continue;
      }
      // A LIST answers a JSON object with `items`: anything else is not an empty list.
      if (!isRecord(r.body) || !('items' in r.body)) throw new TransportError(`cluster ${this.name}: the apiserver's answer to LIST ${path} is not a list (${typeof r.body === 'string' ? `${r.body.length} bytes of text` : 'no items'})`, 'EBADBODY', true, false);
      const body = r.body;
      pages++;
      if (opts.metadataOnly && body.kind === 'PartialObjectMetadataList') partialPages++;
      const meta = isRecord(body.metadata) ? body.metadata : {};
      resourceVersion = typeof meta.resourceVersion === 'string' ? meta.resourceVersion : resourceVersion;
      cont = typeof meta.continue === 'string' && meta.continue ? meta.continue : undefined;
      for (const it of Array.isArray(body.items) ? body.items : []) items.push(asObject(it, apiVersion, kind));
      if (!cont) break;
    }
    // Pages answered some one way, some the other (apiservers of two versions behind one
    // address): the items are neither, so the list is read again, whole.
    if (partialPages > 0 && partialPages < pages) return this.list(apiVersion, kind, { ...opts, metadataOnly: false });
    if (partialPages > 0) {
      this.transport.stats.metadataLists = (this.transport.stats.metadataLists ?? 0) + 1;
      return { items, resourceVersion, metadataOnly: true };
    }
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
        // the same patch from the same field manager lands the same however often: retried as a read (see RetryClass)
        retry: opts.fieldManager ? 'apply' : 'idempotent',
        write: !opts.dryRun,
        signal: opts.signal,
      });
      if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
      if (r.attempts > 1) opts.onAttempts?.(r.attempts, r.firstFailure);
      return asObject(r.body, obj.apiVersion, obj.kind);
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 409) {
        const conflicts = parseConflicts(e.body);
        if (conflicts.length) throw new ApplyConflictError(describeRef(ref, info.namespaced), conflicts, 'PATCH', path, this.name, e.body);
      }
      throw await this.unserved(info, ref.apiVersion, ref.kind, e, opts.signal);
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
    const { info, path } = await this.objectPath(ref);
    const contentType = opts.strategic ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json';
    const r = await this.served(info, ref, opts.signal, () => this.call({ method: 'PATCH', path, query: { dryRun: opts.dryRun ? 'All' : undefined, fieldManager: opts.fieldManager }, body: patch, contentType, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal }));
    if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
    return asObject(r.body, ref.apiVersion, ref.kind);
  }

  async jsonPatch(ref: ObjectRef, ops: JsonPatchOp[], opts: { dryRun?: boolean; signal?: AbortSignal } = {}): Promise<KubeObject> {
    const { info, path } = await this.objectPath(ref);
    const r = await this.served(info, ref, opts.signal, () => this.call({ method: 'PATCH', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: ops, contentType: 'application/json-patch+json', retry: 'unsafe', write: !opts.dryRun, signal: opts.signal }));
    return asObject(r.body, ref.apiVersion, ref.kind);
  }

  async create(obj: KubeObject, opts: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void } = {}): Promise<KubeObject> {
    const info = await this.resource(obj.apiVersion, obj.kind);
    const ns = info.namespaced ? (obj.metadata.namespace ?? 'default') : undefined;
    const path = this.path(info, ns);
    const r = await this.served(info, obj, opts.signal, () => this.call({ method: 'POST', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: ns ? withNamespace(obj, ns) : obj, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal }));
    if (opts.onWarning) for (const w of r.warnings) opts.onWarning(w);
    return asObject(r.body, obj.apiVersion, obj.kind);
  }

  async replace(obj: KubeObject, opts: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void } = {}): Promise<KubeObject> {
    const { info, path } = await this.objectPath(refOf(obj));
    const r = await this.served(info, obj, opts.signal, () => this.call({ method: 'PUT', path, query: { dryRun: opts.dryRun ? 'All' : undefined }, body: obj, retry: 'unsafe', write: !opts.dryRun, signal: opts.signal }));
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

/** A `410 Gone` whose reason is `Expired`: a continue token (or resourceVersion) too old to serve. */
function isExpired(e: unknown): boolean {
  return e instanceof KubeApiError && e.status === 410 && e.reason === 'Expired';
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
  if (!isRecord(v)) throw new Error(`unexpected response for ${kind}: ${JSON.stringify(v)?.slice(0, 100)}`);
  const o = v as KubeObject;
  if (!isRecord(o.metadata)) o.metadata = {};
  if (typeof o.apiVersion !== 'string') o.apiVersion = apiVersion;
  if (typeof o.kind !== 'string') o.kind = kind;
  return o;
}

/** Exported for unit tests of the group/version split. */
export { splitApiVersion };
/** Retry classes (re-exported for modules that issue raw requests). */
export type { RetryClass };
