/**
 * Applying and deleting sets of objects in order (groups of kinds, see `applyObjects`): read the
 * live objects (one LIST per kind+namespace), plan (SSA dry-runs only where the live object does
 * not already match), create absent objects with one apply each, write only what changes, wait
 * for CRDs to be Established before their custom resources, and prune objects a task applied
 * before but no longer has.
 */
import pLimit from 'p-limit';
import { KubeApiError } from './errors.js';
import { diffEntry, maskObject, normalize } from './normalize.js';
import { OTHER_RANK, phases, rankOf, sortForApply, sortForDelete } from './order.js';
import type { DriftRule } from './drift.js';
import { pointerOf, sortForRemoval, type FieldAddition } from './fields.js';
import { comparePlan, removesOnlyAdditions, fetchLive, labelOf, liveKey, LIST_MIN, objectRef, planOne, resolveNamespace } from './plan.js';
import { readinessOf } from './readiness/index.js';
import { WAIT_STALL_MS, waitFor } from './wait.js';
import { abortReason, sleepOrThrow } from './http.js';
import type { KubeClient, KubeObject, ObjectPlan, ObjectRef, WatchOptions } from './types.js';
import { apiVersionOf, crdServedKinds } from './discovery.js';
import { isRecord } from '../core/shape.js';

/** What happened to one object. */
export type ObjectAction = 'created' | 'configured' | 'unchanged' | 'deleted';

/** Result for one object. */
export interface ObjectResult {
  ref: ObjectRef;
  action: ObjectAction;
  plan: ObjectPlan;
  /** Why the object was not dry-run (check mode, dependency created in the same task). */
  note?: string;
  /** The object as stored (or as it would be), normalised and masked. */
  object?: KubeObject;
}

/** Options of {@link applyObjects}. */
export interface ApplySetOptions {
  fieldManager: string;
  force: boolean;
  defaultNamespace: string;
  /** Plan only (SSA dry-runs); write nothing. */
  checkMode: boolean;
  signal?: AbortSignal;
  mask?: (s: string) => string;
  /** Progress/log line sink. */
  log?: (msg: string) => void;
  /** How long to wait for a CRD to be Established, ms. @default 60000 */
  crdTimeoutMs?: number;
  /** Rules hiding drift (`drift_ignore`), see `drift.ts`. */
  driftRules?: readonly DriftRule[];
  /** Managers whose fields are the desired state. @default [fieldManager] */
  ownManagers?: readonly string[];
  /**
   * Sink of the apiserver's warnings to dry-runs and writes (deprecated APIs and fields,
   * webhooks): one line per object and warning, e.g. `Deployment web/api:
   * spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use
   * "kubernetes.io/os" instead`, each once per apply, masked.
   */
  warn?: (msg: string) => void;
}


/** `apiVersion|kind` → scope for every custom resource kind the CRDs in `objects` serve. */
export function crdKinds(objects: KubeObject[]): Map<string, { apiVersion: string; kind: string; namespaced: boolean; crd: string }> {
  const out = new Map<string, { apiVersion: string; kind: string; namespaced: boolean; crd: string }>();
  for (const o of objects) {
    if (o.kind !== 'CustomResourceDefinition') continue;
    for (const k of crdServedKinds(o)) {
      const apiVersion = apiVersionOf(k.group, k.version);
      out.set(`${apiVersion}|${k.kind}`, { apiVersion, kind: k.kind, namespaced: k.namespaced, crd: o.metadata.name ?? '' });
    }
  }
  return out;
}

const isUnknownKind = (e: unknown): boolean => e instanceof KubeApiError && e.verb === 'DISCOVER';

/**
 * A plan for an object that cannot be dry-run yet (its CRD or namespace is created by the same
 * task), or that is created by its write (whose answer then makes the plan). Its normalised
 * object and diff are made when first read: a create's write replaces the plan before anything
 * reads them, and normalising every object of a set (large CRDs) before its first write cost
 * ~0.1 s on a cold apply's critical path.
 */
function pendingCreate(obj: KubeObject, mask?: (s: string) => string): ObjectPlan {
  const ref = objectRef(obj);
  let n: KubeObject | undefined;
  let diff: ObjectPlan['diff'] | undefined;
  const desired = (): KubeObject => (n ??= maskObject(normalize(obj)));
  return {
    ref,
    action: 'create',
    get desired(): KubeObject {
      return desired();
    },
    get diff(): ObjectPlan['diff'] {
      return (diff ??= diffEntry(labelOf(ref), undefined, desired(), mask));
    },
    changedPaths: [],
  };
}

/**
 * `obj` without the empty `rules` of an aggregated ClusterRole (one with an `aggregationRule`):
 * the controller manager's clusterrole-aggregation-controller owns and fills them in, so a
 * manifest's `rules: []` (Knative ships it: "filled in by the controller manager") would make
 * every later apply conflict with that controller (and, forced, empty them until it fills them
 * in again). The empty list says nothing the aggregation does not; non-empty rules are applied
 * as given. Other objects are returned as they are.
 */
export function withoutAggregatedRules(obj: KubeObject): KubeObject {
  if (obj.kind !== 'ClusterRole' || obj.apiVersion !== 'rbac.authorization.k8s.io/v1' || !isRecord(obj.aggregationRule)) return obj;
  if (!('rules' in obj) || (obj.rules !== null && !(Array.isArray(obj.rules) && obj.rules.length === 0))) return obj;
  const { rules: _empty, ...rest } = obj;
  return rest;
}

/**
 * The apply groups: what must exist before what, and nothing more (each group is applied with
 * all its objects in parallel, under the client's QPS budget).
 * - `foundations`: namespaces (rank 0) and the cluster-wide kinds pods name (PriorityClass,
 *   StorageClass, …);
 * - `definitions`: CRDs (rank 1), alongside `foundations`: only their custom resources wait for
 *   them, and the apiserver's work on large CRDs (validation, then Established one after another)
 *   is the longest wait of a cold apply;
 * - `prerequisites`: what workloads refer to (quotas, limits, RBAC, service accounts, config,
 *   storage, services; ranks 2–7), after `foundations`;
 * - `workloads` (rank 8), after `prerequisites`;
 * - `custom`: custom resources and other kinds (rank 10, and any kind a CRD of the set defines),
 *   after `foundations` and `definitions`; each custom resource of a CRD this apply created or
 *   changed goes as soon as that CRD is Established — alongside `prerequisites` and `workloads`,
 *   so the wait for Established costs nothing when there is other work;
 * - `last`: webhooks and APIServices (rank 9): registered after every other object — the
 *   objects they would intercept (a webhook whose backend is not up yet would refuse them) and
 *   the workloads that serve them.
 * A group that fails stops the groups after it; groups running alongside it finish first.
 */
type ApplyGroup = 'foundations' | 'definitions' | 'prerequisites' | 'workloads' | 'custom' | 'last';
const GROUP_ORDER: readonly ApplyGroup[] = ['foundations', 'definitions', 'prerequisites', 'workloads', 'custom', 'last'];
const CLUSTER_PREREQUISITES = new Set(['PriorityClass', 'StorageClass', 'PodSecurityPolicy', 'IngressClass', 'RuntimeClass']);

function groupOf(obj: KubeObject, crds: ReturnType<typeof crdKinds>): ApplyGroup {
  // A kind a CRD of this set defines waits for it, whatever its name (a CRD group may end in `.k8s.io`).
  if (crds.has(`${obj.apiVersion}|${obj.kind}`)) return 'custom';
  const rank = rankOf(obj.apiVersion, obj.kind);
  if (rank === 1) return 'definitions';
  if (rank === 0 || (rank !== OTHER_RANK && CLUSTER_PREREQUISITES.has(obj.kind))) return 'foundations';
  if (rank <= 7) return 'prerequisites';
  if (rank === 8) return 'workloads';
  if (rank === 9) return 'last';
  return 'custom';
}

/**
 * Server-side apply `objects` in groups (see {@link ApplyGroup}); returns one result per object,
 * in apply order. Objects that cannot exist yet — in a namespace this apply created, or of a kind
 * whose CRD it created — are created without reading them first. The built-in kinds of the later
 * groups are read at the start, alongside the first groups (reads wait for no write).
 */
export async function applyObjects(client: KubeClient, given: KubeObject[], opts: ApplySetOptions): Promise<ObjectResult[]> {
  const objects = given.map(withoutAggregatedRules);
  const crds = crdKinds(objects);
  const limit = pLimit(16);
  const byGroup = new Map<ApplyGroup, KubeObject[]>(GROUP_ORDER.map((g) => [g, []]));
  const sorted = sortForApply(objects);
  for (const obj of sorted) byGroup.get(groupOf(obj, crds))?.push(obj);
  const deadline = Date.now() + (opts.crdTimeoutMs ?? 60_000);
  const state: GroupState = { newNamespaces: new Set(), newKinds: new Set(), servedBy: deadline, onWarning: warnOnce(opts) };
  const run = (objs: KubeObject[], ahead?: Promise<Map<string, KubeObject | undefined>>, onLive?: (lives: ReadonlyMap<string, KubeObject | undefined>) => void): Promise<ObjectResult[]> =>
    applyGroup(client, objs, crds, state, limit, opts, ahead, onLive);
  // Reads wait for no write: the built-in groups behind a barrier have their live state read now,
  // alongside the first groups' reads, and their turn starts with their writes (a read of the
  // last group alone costs a round trip after everything else is done).
  const declared = new Set(objects.filter((o) => o.apiVersion === 'v1' && o.kind === 'Namespace').map((o) => o.metadata.name ?? ''));
  const ahead = (g: 'prerequisites' | 'workloads' | 'last'): Promise<Map<string, KubeObject | undefined>> => readAhead(client, byGroup.get(g) ?? [], declared, opts);
  // The live CRDs of the set, as the definitions group reads them (before planning or writing them).
  let crdsRead: (lives: ReadonlyMap<string, KubeObject | undefined>) => void = () => undefined;
  const liveCrds = new Promise<ReadonlyMap<string, KubeObject | undefined>>((resolve) => (crdsRead = resolve));
  const custom = byGroup.get('custom') ?? [];
  const crdOf = (o: KubeObject): string | undefined => crds.get(`${o.apiVersion}|${o.kind}`)?.crd;
  const early = { prerequisites: ahead('prerequisites'), workloads: ahead('workloads'), last: ahead('last'), custom: readAheadCustom(client, custom, crdOf, liveCrds, declared, opts) };

  const foundationsDone = run(byGroup.get('foundations') ?? []).then((results) => {
    for (const r of results) if (r.action === 'created' && r.ref.kind === 'Namespace') state.newNamespaces.add(r.ref.name);
    return results;
  });
  const definitionsDone = run(byGroup.get('definitions') ?? [], undefined, (lives) => crdsRead(lives)).then((results) => {
    for (const r of results) if (r.action === 'created') for (const [k, v] of crds) if (v.crd === r.ref.name) state.newKinds.add(k);
    return results;
  });
  definitionsDone.then(
    () => crdsRead(new Map()),
    () => crdsRead(new Map()),
  );
  // CRDs must be Established before their custom resources can be applied: each CRD's custom
  // resources go as soon as that CRD is (the apiserver establishes CRDs one after another), the
  // other groups and custom resources of untouched CRDs do not wait.
  let shared: Map<string, Promise<KubeObject>> | undefined;
  const stopShared = new AbortController();
  const established = async (crd: ObjectResult): Promise<void> => {
    let live: KubeObject | undefined;
    const one = shared?.get(crd.ref.name);
    if (one) live = await one;
    else {
      const w = await waitFor(client, [{ apiVersion: crd.ref.apiVersion, kind: crd.ref.kind, name: crd.ref.name }], { type: 'ready' }, { timeoutMs: Math.max(1, deadline - Date.now()), signal: opts.signal });
      if (!w.ok) throw new Error(`CRD not established: ${w.msg}`);
      live = w.objects[0];
    }
    // A new CRD's kinds are known from the CRD itself: discovery publishes them a moment after
    // Established, and writes of its custom resources are retried until served (see writeServed).
    if (crd.action === 'created' && live) client.learnKinds(crd.ref.name, crdServedKinds(live).filter((k) => k.resource));
    // A changed CRD (a new version): wait for discovery, every served version, not only those
    // this apply uses (the next task may apply the others).
    else await waitServed(client, [...crds.values()].filter((v) => v.crd === crd.ref.name), Math.max(1000, deadline - Date.now()), opts.signal);
  };
  const runCustom = async (): Promise<ObjectResult[]> => {
    const [, definitions] = await allSettledOrThrow<ObjectResult[]>([foundationsDone, definitionsDone]);
    const changedCrds = opts.checkMode ? [] : (definitions ?? []).filter((r) => r.action !== 'unchanged');
    const waited = new Set(changedCrds.map((r) => r.ref.name));
    if (waited.size >= LIST_MIN) shared = watchEstablished(client, [...waited], deadline, AbortSignal.any([stopShared.signal, ...(opts.signal ? [opts.signal] : [])]), state.crdList);
    const customLanes: { crd?: ObjectResult; objects: KubeObject[] }[] = [
      { objects: custom.filter((o) => !waited.has(crdOf(o) ?? '')) },
      ...changedCrds.map((crd) => ({ crd, objects: custom.filter((o) => crdOf(o) === crd.ref.name) })),
    ];
    const parts = await allSettledOrThrow(
      customLanes.map(async (l) => {
        if (l.crd) await established(l.crd);
        // Read ahead only for CRDs this apply leaves as they are: a changed CRD (new defaults,
        // versions, pruning) can change how its objects read, so those are read in their turn.
        return run(l.objects, l.crd ? undefined : early.custom);
      }),
    );
    return inOrder(custom, customLanes.map((l, i) => [l.objects, parts[i]]));
  };
  const runBuiltins = async (): Promise<ObjectResult[]> => {
    await foundationsDone;
    return [...(await run(byGroup.get('prerequisites') ?? [], early.prerequisites)), ...(await run(byGroup.get('workloads') ?? [], early.workloads))];
  };
  let settled: ObjectResult[][];
  try {
    settled = await allSettledOrThrow<ObjectResult[]>([foundationsDone, definitionsDone, runBuiltins(), runCustom()]);
  } finally {
    stopShared.abort();
    await Promise.all(Object.values(early)); // reads only, and they never reject: nothing left running
  }
  const [foundations, definitions, builtins, customResults] = settled;
  const last = await run(byGroup.get('last') ?? [], early.last);
  // namespaces, CRDs and cluster-wide kinds in apply order, as one group before them did
  const first = inOrder(sorted, [
    [byGroup.get('foundations') ?? [], foundations],
    [byGroup.get('definitions') ?? [], definitions],
  ]);
  return [...first, ...(builtins ?? []), ...(customResults ?? []), ...last];
}

/**
 * The results of `objects` applied in separate lanes (each lane's objects and applyGroup's
 * results, in the order of its objects), in the order of `objects`; objects of no lane are left out.
 */
function inOrder(objects: readonly KubeObject[], lanes: [KubeObject[], ObjectResult[] | undefined][]): ObjectResult[] {
  const byObject = new Map<KubeObject, ObjectResult>();
  for (const [objs, results] of lanes) {
    objs.forEach((o, i) => {
      const r = results?.[i];
      if (r) byObject.set(o, r);
    });
  }
  return objects.flatMap((o) => byObject.get(o) ?? []);
}

/**
 * Each CRD in `names` once it is Established, from one watch of all CRDs: one LIST and one stream
 * instead of a LIST and a stream per CRD (without the apiserver's watch cache each of those reads
 * every CRD from etcd, and each status update of a large CRD — two per new CRD — is decoded once
 * per stream, while the apiserver is busy establishing them). With `from` (the LIST of CRDs the
 * apply made before writing them) not even that LIST: the stream starts at its resourceVersion,
 * so it carries the writes and every status update after them. For a few CRDs a watch each
 * (field-selected) is cheaper: a cluster's whole CRD list can be megabytes. A CRD whose names are
 * not accepted rejects at once; the others when `deadline` (epoch ms) passes or `signal` aborts.
 */
export function watchEstablished(client: Pick<KubeClient, 'watch'>, names: readonly string[], deadline: number, signal?: AbortSignal, from?: WatchOptions['from']): Map<string, Promise<KubeObject>> {
  const pending = new Map<string, { resolve: (o: KubeObject) => void; reject: (e: unknown) => void; last: string }>();
  const out = new Map<string, Promise<KubeObject>>();
  for (const name of names) {
    const p = new Promise<KubeObject>((resolve, reject) => pending.set(name, { resolve, reject, last: 'not created yet' }));
    p.catch(() => undefined); // rejections are seen by whoever awaits the CRD; none is left unhandled
    out.set(name, p);
  }
  const timeoutMs = Math.max(1, deadline - Date.now());
  const timeout = AbortSignal.timeout(timeoutMs);
  client
    .watch('apiextensions.k8s.io/v1', 'CustomResourceDefinition', { signal: AbortSignal.any([timeout, ...(signal ? [signal] : [])]), stallMs: WAIT_STALL_MS, from }, (_e, state) => {
      for (const o of state.values()) {
        const name = o.metadata.name ?? '';
        const d = pending.get(name);
        if (!d) continue;
        const r = readinessOf(o);
        d.last = r.message;
        if (!r.done) continue;
        pending.delete(name);
        if (r.successful) d.resolve(o);
        else d.reject(new Error(`CRD not established: CustomResourceDefinition ${name}: ${r.message}`));
      }
      return pending.size === 0;
    })
    .catch((e: unknown) => {
      for (const [name, d] of pending) {
        if (signal?.aborted) d.reject(abortReason(signal));
        else if (timeout.aborted) d.reject(new Error(`CRD not established: timed out after ${Math.round(timeoutMs / 1000)}s waiting for readiness; not ready: CustomResourceDefinition ${name}: ${d.last}`));
        else d.reject(e);
      }
      pending.clear();
    });
  return out;
}

/**
 * All the promises' values; when some reject, the first rejection — but only after every one has
 * settled (nothing is left running behind the error).
 */
async function allSettledOrThrow<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.flatMap((l) => (l.status === 'fulfilled' ? [l.value] : []));
}

/**
 * Write an object of a kind whose CRD this apply just created. The apiserver serves a new CRD's
 * endpoint from its own copy of the CRD, which can trail the Established condition (by a moment,
 * or longer behind a load balancer over several apiservers): a 404 that names no object (the
 * endpoint itself is missing) is retried, backing off 50 → 500 ms, until `until` (epoch ms).
 */
export async function writeServed<T>(write: () => Promise<T>, until: number, signal?: AbortSignal): Promise<T> {
  let pause = 50;
  for (;;) {
    try {
      return await write();
    } catch (e) {
      const endpointMissing = e instanceof KubeApiError && e.status === 404 && !e.body?.details?.name;
      const left = until - Date.now();
      if (!endpointMissing || left <= 0) throw e;
      await sleepOrThrow(Math.min(pause, left), signal);
      pause = Math.min(pause * 2, 500);
    }
  }
}

/**
 * Wait until discovery serves the kinds of CRDs that just became Established. The apiserver
 * publishes a CRD's kinds in discovery on its own schedule, a moment after the Established
 * condition is set; a custom resource applied in that gap would fail as an unknown kind. The
 * first try asks the discovery already read (a changed CRD that keeps its versions costs no
 * request; a kind it lacks is read again once, by `resource`); each later try re-reads it (2
 * requests, aggregated); tries back off from 50 ms to 500 ms.
 */
export async function waitServed(
  client: Pick<KubeClient, 'invalidateDiscovery' | 'resource'>,
  kinds: readonly { apiVersion: string; kind: string; crd: string }[],
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const started = Date.now();
  let pause = 50;
  for (let tries = 0; ; tries++) {
    if (tries > 0) client.invalidateDiscovery();
    let unserved: (typeof kinds)[number] | undefined;
    for (const k of kinds) {
      const served = await client.resource(k.apiVersion, k.kind).then(
        () => true,
        (e: unknown) => {
          if (isUnknownKind(e)) return false;
          throw e;
        },
      );
      if (!served) {
        unserved = k;
        break;
      }
    }
    if (!unserved) return;
    const left = timeoutMs - (Date.now() - started);
    if (left <= 0) {
      throw new Error(`CRD ${unserved.crd} is Established but the apiserver does not serve ${unserved.kind} (${unserved.apiVersion}) after ${Math.round(timeoutMs / 1000)} s: check the CRD's versions (served: true) and the apiserver's log`);
    }
    await sleepOrThrow(Math.min(pause, left), signal);
    pause = Math.min(pause * 2, 500);
  }
}

/** What earlier groups of one apply created. */
interface GroupState {
  /** Namespaces created: nothing can exist in them yet. */
  newNamespaces: Set<string>;
  /** `apiVersion|kind` of CRDs created: no object of theirs exists yet. */
  newKinds: Set<string>;
  /** Until when (epoch ms) writes of `newKinds` are retried while their endpoint is not served. */
  servedBy: number;
  /** The apply's warning sink (see {@link warnOnce}). */
  onWarning?: (ref: ObjectRef, warning: string) => void;
  /** The LIST of all CRDs made before the CRDs were written, if one was (see {@link watchEstablished}). */
  crdList?: WatchOptions['from'];
}

/** `opts.warn` for one object's warning, each line once (a dry-run and its write warn alike), masked. */
function warnOnce(opts: ApplySetOptions): GroupState['onWarning'] {
  const warn = opts.warn;
  if (!warn) return undefined;
  const seen = new Set<string>();
  return (ref, warning) => {
    const line = `${labelOf(ref)}: ${warning}`;
    if (seen.has(line)) return;
    seen.add(line);
    warn(opts.mask ? opts.mask(line) : line);
  };
}

/**
 * The live state of `objects`, read before their group's turn, alongside the apply's first reads
 * (see applyObjects): objects in a namespace of `declared` are left out (the apply may create it,
 * and nothing can exist in a new namespace). Never rejects: on any error the group reads for
 * itself, and reports the error in its turn.
 */
async function readAhead(client: KubeClient, objects: KubeObject[], declared: ReadonlySet<string>, opts: ApplySetOptions): Promise<Map<string, KubeObject | undefined>> {
  try {
    const resolved = await Promise.all(objects.map((o) => resolveNamespace(client, o, opts.defaultNamespace)));
    const readable = resolved.filter((o) => o.metadata.namespace === undefined || !declared.has(o.metadata.namespace));
    return readable.length ? await fetchLive(client, readable, { signal: opts.signal }) : new Map();
  } catch {
    return new Map();
  }
}

/**
 * The live state of custom resources (see {@link readAhead}), read as soon as the LIST of the
 * set's CRDs (`liveCrds`, keyed by {@link liveKey}) says which exist: objects of a CRD of the set
 * that does not exist yet cannot exist either (a cold apply reads nothing here, not even
 * discovery); the others — of CRDs the cluster has, or of kinds no CRD of the set defines — are
 * read alongside the planning of the CRDs instead of after it. Objects of a kind the cluster does
 * not serve are left to their turn (which reports it). Never rejects.
 */
async function readAheadCustom(
  client: KubeClient,
  objects: KubeObject[],
  crdOf: (o: KubeObject) => string | undefined,
  liveCrds: Promise<ReadonlyMap<string, KubeObject | undefined>>,
  declared: ReadonlySet<string>,
  opts: ApplySetOptions,
): Promise<Map<string, KubeObject | undefined>> {
  if (!objects.length) return new Map();
  const lives = await liveCrds;
  const exists = (crd: string): boolean => lives.get(liveKey({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: crd })) !== undefined;
  const candidates = objects.filter((o) => {
    const crd = crdOf(o);
    return crd === undefined || exists(crd);
  });
  if (!candidates.length) return new Map();
  const served = await Promise.all(candidates.map((o) => client.resource(o.apiVersion, o.kind).then(() => o, () => undefined)));
  return readAhead(client, served.filter((o): o is KubeObject => o !== undefined), declared, opts);
}

/**
 * Plan and write one group: read the live objects, plan, write only what changes, all in parallel.
 * `ahead`: live objects already read (see {@link readAhead}); the others are read here.
 */
async function applyGroup(
  client: KubeClient,
  objects: KubeObject[],
  crds: ReturnType<typeof crdKinds>,
  state: GroupState,
  limit: ReturnType<typeof pLimit>,
  opts: ApplySetOptions,
  ahead?: Promise<Map<string, KubeObject | undefined>>,
  onLive?: (lives: ReadonlyMap<string, KubeObject | undefined>) => void,
): Promise<ObjectResult[]> {
  if (!objects.length) return [];
  opts.signal?.throwIfAborted();
  const toWrite = new Map<ObjectResult, KubeObject>();
  // Resolve namespaces; objects that cannot be planned yet (check mode) get their result here.
  const prepared = await Promise.all(
    objects.map((obj) =>
      limit(async (): Promise<ObjectResult | KubeObject> => {
        let resolved: KubeObject;
        try {
          resolved = await resolveNamespace(client, obj, opts.defaultNamespace);
        } catch (e) {
          const crd = crds.get(`${obj.apiVersion}|${obj.kind}`);
          if (!isUnknownKind(e) || !crd || !opts.checkMode) throw e;
          const o = crd.namespaced && !obj.metadata.namespace ? { ...obj, metadata: { ...obj.metadata, namespace: opts.defaultNamespace } } : obj;
          return { ref: objectRef(o), action: 'created', plan: pendingCreate(o, opts.mask), note: `CRD ${crd.crd} created in the same task`, object: maskObject(normalize(o)) };
        }
        const ns = resolved.metadata.namespace;
        if (opts.checkMode && ns && state.newNamespaces.has(ns)) {
          return { ref: objectRef(resolved), action: 'created', plan: pendingCreate(resolved, opts.mask), note: `namespace ${ns} created in the same task`, object: maskObject(normalize(resolved)) };
        }
        return resolved;
      }),
    ),
  );
  const isResult = (x: ObjectResult | KubeObject): x is ObjectResult => 'plan' in x && 'ref' in x;
  const cannotExist = (o: KubeObject): boolean => (o.metadata.namespace !== undefined && state.newNamespaces.has(o.metadata.namespace)) || state.newKinds.has(`${o.apiVersion}|${o.kind}`);
  // Live objects: one LIST per kind+namespace instead of a GET per object; none for objects that cannot exist yet.
  const early = await ahead;
  const lives = await fetchLive(
    client,
    prepared.filter((x): x is KubeObject => !isResult(x) && !cannotExist(x) && !early?.has(liveKey(objectRef(x)))),
    {
      signal: opts.signal,
      onList: (o, listed) => {
        if (o.kind === 'CustomResourceDefinition' && o.apiVersion === 'apiextensions.k8s.io/v1') state.crdList = listed;
      },
    },
  );
  for (const [k, v] of early ?? []) if (!lives.has(k)) lives.set(k, v);
  onLive?.(lives);
  const planned = await Promise.all(
    prepared.map((x) =>
      limit(async (): Promise<ObjectResult> => {
        if (isResult(x)) return x;
        const ref = objectRef(x);
        const live = lives.get(liveKey(ref));
        if (!live && !opts.checkMode) {
          // A create: the write itself returns what a dry-run would; the plan is built from it.
          const r: ObjectResult = { ref, action: 'created', plan: pendingCreate(x, opts.mask) };
          toWrite.set(r, x);
          return r;
        }
        // Planning an existing object is CPU work (large CRDs: ~5 ms each): let answers to reads
        // made meanwhile (read-ahead of later groups) be handled between objects, not after all.
        await new Promise((r) => setImmediate(r));
        const plan = await planOne(client, x, { fieldManager: opts.fieldManager, force: opts.force, signal: opts.signal, mask: opts.mask, driftRules: opts.driftRules, ownManagers: opts.ownManagers, onWarning: state.onWarning }, { live });
        const action: ObjectAction = plan.action === 'create' ? 'created' : plan.action === 'update' ? 'configured' : 'unchanged';
        const r: ObjectResult = { ref: plan.ref, action, plan, object: plan.desired };
        if (!opts.checkMode && action !== 'unchanged') toWrite.set(r, x);
        return r;
      }),
    ),
  );
  // Writes: only what changes, concurrently within the group.
  if (!opts.checkMode) {
    await Promise.all(
      smallCrdsFirst([...toWrite]).map(([r, obj]) =>
        limit(async () => {
          // Forced only where the plan reclaimed fields from a manual kubectl edit (or force_conflicts).
          const onWarning = state.onWarning && ((w: string): void => state.onWarning?.(r.ref, w));
          const write = (): Promise<KubeObject> =>
            client.apply(r.plan.toApply ?? obj, { fieldManager: opts.fieldManager, force: opts.force || r.plan.reclaimed !== undefined, signal: opts.signal, onWarning });
          const applied = removesOnlyAdditions(r.plan) ? undefined : state.newKinds.has(`${obj.apiVersion}|${obj.kind}`) ? await writeServed(write, state.servedBy, opts.signal) : await write();
          if (r.plan.reclaimed) opts.log?.(`took back ${r.plan.reclaimed.join(', ')} on ${labelOf(r.ref)} (manual edit)`);
          let stored = applied;
          if (r.plan.additions?.length) {
            stored = await removeAdditions(client, r.ref, r.plan.additions, { signal: opts.signal, current: applied });
            opts.log?.(`removed ${r.plan.additions.map((a) => `${a.path} (${a.manager})`).join(', ')} from ${labelOf(r.ref)}`);
          }
          if (!stored) throw new Error(`internal: nothing written for ${labelOf(r.ref)}`);
          // a create's plan is the object as stored, normalised and masked once for both
          if (r.action === 'created' && !r.plan.live) r.plan = comparePlan(r.ref, undefined, stored, opts.mask);
          r.object = (r.action === 'created' && !r.plan.live ? r.plan.desired : undefined) ?? maskObject(normalize(stored));
          opts.log?.(`${r.action} ${labelOf(r.ref)}`);
        }),
      ),
    );
  }
  return planned;
}

/**
 * Writes in the order they should start: CRDs smallest first (others as they are). The apiserver
 * establishes CRDs one after another, in the order their creates end; a small CRD's create ends in
 * a fraction of a large one's (whose schema it validates), so small CRDs first start that chain —
 * and the writes of their custom resources — while the large ones are still being validated,
 * instead of queueing behind them for the client's concurrency.
 */
export function smallCrdsFirst<T>(writes: [T, KubeObject][]): [T, KubeObject][] {
  const crds = writes.filter(([, o]) => o.kind === 'CustomResourceDefinition');
  if (crds.length < 2) return writes;
  const size = new Map(crds.map(([, o]) => [o, JSON.stringify(o.spec ?? null).length]));
  const sizeOf = (o: KubeObject): number => size.get(o) ?? 0;
  return [...crds.sort(([, a], [, b]) => sizeOf(a) - sizeOf(b)), ...writes.filter(([, o]) => o.kind !== 'CustomResourceDefinition')];
}

/**
 * Remove fields other managers added (drift) from an object with one JSON patch, guarded by the
 * resourceVersion it was computed against; when the object moved meanwhile, computed again once.
 * `current`: the object as the server just returned it (an apply's answer), saving the first read.
 */
export async function removeAdditions(client: KubeClient, ref: ObjectRef, additions: FieldAddition[], opts: { signal?: AbortSignal; current?: KubeObject } = {}): Promise<KubeObject> {
  for (let attempt = 1; ; attempt++) {
    const live = attempt === 1 && opts.current ? opts.current : await client.get(ref, opts.signal);
    if (!live) throw new Error(`${labelOf(ref)} was deleted while its drift was being repaired`);
    const ptrs = sortForRemoval(additions.map((a) => pointerOf(live, a.segments)).filter((p): p is string => p !== undefined));
    if (ptrs.length === 0) return live;
    try {
      return await client.jsonPatch(ref, [{ op: 'test', path: '/metadata/resourceVersion', value: live.metadata.resourceVersion }, ...ptrs.map((path) => ({ op: 'remove' as const, path }))], { signal: opts.signal });
    } catch (e) {
      // The object moved on between the read and the patch (a controller writing its status
      // changes resourceVersion too): read it again, as client-go's RetryOnConflict does (5 tries).
      const moved = e instanceof KubeApiError && (e.status === 409 || e.status === 422);
      if (!moved || attempt >= REMOVE_ATTEMPTS) throw e;
      await new Promise((r) => setTimeout(r, 10 * attempt));
    }
  }
}

/** Tries of {@link removeAdditions} when the object keeps changing under it. */
export const REMOVE_ATTEMPTS = 5;

/** Delete `objects` in reverse apply order (idempotent: absent objects are `unchanged`). */
export async function deleteObjects(client: KubeClient, objects: KubeObject[], opts: Omit<ApplySetOptions, 'fieldManager' | 'force'>): Promise<ObjectResult[]> {
  const results: ObjectResult[] = [];
  const limit = pLimit(16);
  const ordered = sortForDelete(objects);
  // phases in reverse order
  const groups = phases(ordered.map((obj) => ({ obj }))).reverse();
  for (const g of groups) {
    const done = await Promise.all(
      g.items.map(({ obj }) =>
        limit(async (): Promise<ObjectResult> => {
          let resolved: KubeObject;
          try {
            resolved = await resolveNamespace(client, obj, opts.defaultNamespace);
          } catch (e) {
            if (!isUnknownKind(e)) throw e;
            // The kind does not exist (CRD gone): the object cannot exist either.
            const ref = objectRef(obj);
            return { ref, action: 'unchanged', plan: { ref, action: 'unchanged', diff: diffEntry(labelOf(ref), undefined, undefined), changedPaths: [] } };
          }
          return deleteOne(client, resolved, opts);
        }),
      ),
    );
    results.push(...done);
  }
  return results;
}

/** Delete one (namespace-resolved) object. */
export async function deleteOne(client: KubeClient, obj: KubeObject, opts: { checkMode: boolean; signal?: AbortSignal; mask?: (s: string) => string; log?: (m: string) => void }): Promise<ObjectResult> {
  const ref = objectRef(obj);
  const live = await client.get(ref, opts.signal);
  if (!live || live.metadata.deletionTimestamp) {
    return { ref, action: 'unchanged', plan: { ref, action: 'unchanged', diff: diffEntry(labelOf(ref), undefined, undefined), changedPaths: [] } };
  }
  const masked = maskObject(normalize(live));
  const plan: ObjectPlan = { ref, action: 'delete', live: masked, diff: diffEntry(labelOf(ref), masked, undefined, opts.mask), changedPaths: [] };
  if (!opts.checkMode) {
    const existed = await client.delete(ref, { signal: opts.signal, propagationPolicy: 'Background' });
    if (!existed) return { ref, action: 'unchanged', plan: { ...plan, action: 'unchanged' } };
    if (ref.kind === 'CustomResourceDefinition') client.learnKinds(ref.name, []);
    opts.log?.(`deleted ${labelOf(ref)}`);
  }
  return { ref, action: 'deleted', plan, object: masked };
}

/** Label put on objects applied with `prune: true`. */
export const OWNER_LABEL = 'kplay.dev/owner';
/** Label of the ConfigMap that records which kinds/namespaces a pruning task applied. */
export const RECORD_LABEL = 'kplay.dev/prune-record';

/** One recorded kind with the namespaces it was applied in (empty for cluster-scoped kinds). */
export interface PruneRecordEntry {
  apiVersion: string;
  kind: string;
  namespaces: string[];
}

/** The record of kinds and namespaces of the objects of `objects` (sorted, canonical). */
export function pruneRecordOf(objects: KubeObject[]): PruneRecordEntry[] {
  const m = new Map<string, PruneRecordEntry>();
  for (const o of objects) {
    const key = `${o.apiVersion}|${o.kind}`;
    const e = m.get(key) ?? { apiVersion: o.apiVersion, kind: o.kind, namespaces: [] };
    const ns = o.metadata.namespace;
    if (ns && !e.namespaces.includes(ns)) e.namespaces.push(ns);
    m.set(key, e);
  }
  return [...m.values()].map((e) => ({ ...e, namespaces: e.namespaces.sort() })).sort((a, b) => `${a.apiVersion}|${a.kind}`.localeCompare(`${b.apiVersion}|${b.kind}`));
}

/** Merge two records (union of kinds and namespaces). */
export function mergeRecords(a: PruneRecordEntry[], b: PruneRecordEntry[]): PruneRecordEntry[] {
  const objs: KubeObject[] = [];
  for (const e of [...a, ...b]) {
    if (e.namespaces.length === 0) objs.push({ apiVersion: e.apiVersion, kind: e.kind, metadata: {} });
    for (const ns of e.namespaces) objs.push({ apiVersion: e.apiVersion, kind: e.kind, metadata: { namespace: ns } });
  }
  return pruneRecordOf(objs);
}

/** Options of {@link pruneObjects}. */
export interface PruneOptions {
  /** Owner id (value of the `kplay.dev/owner` label). */
  id: string;
  /** Namespace of the record ConfigMap `kplay-prune-<id>`. */
  recordNamespace: string;
  fieldManager: string;
  checkMode: boolean;
  signal?: AbortSignal;
  mask?: (s: string) => string;
  log?: (msg: string) => void;
}

/**
 * Delete objects labelled `kplay.dev/owner=<id>` that are not in `applied` (namespace-resolved
 * objects of this run). Looks in the kinds/namespaces of this run plus those recorded by
 * earlier runs (ConfigMap `kplay-prune-<id>`), then updates the record (only when it changed).
 * Objects without the owner label are never touched.
 */
export async function pruneObjects(client: KubeClient, applied: KubeObject[], opts: PruneOptions): Promise<ObjectResult[]> {
  const recordRef: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', name: `kplay-prune-${opts.id}`, namespace: opts.recordNamespace };
  const recordObj = await client.get(recordRef, opts.signal);
  let previous: PruneRecordEntry[] = [];
  const raw = isRecord(recordObj?.data) ? recordObj.data.resources : undefined;
  if (typeof raw === 'string') {
    try {
      const v: unknown = JSON.parse(raw);
      if (Array.isArray(v)) previous = v.filter((e): e is PruneRecordEntry => isRecord(e) && typeof e.apiVersion === 'string' && typeof e.kind === 'string' && Array.isArray(e.namespaces));
    } catch {
      // a corrupt record is rebuilt
    }
  }
  const current = pruneRecordOf(applied);
  const keys = new Set(applied.map((o) => `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`));
  const selector = `${OWNER_LABEL}=${opts.id}`;
  const candidates: KubeObject[] = [];
  for (const e of mergeRecords(previous, current)) {
    let info;
    try {
      info = await client.resource(e.apiVersion, e.kind);
    } catch (err) {
      if (isUnknownKind(err)) continue;
      throw err;
    }
    const scopes = info.namespaced ? e.namespaces : [undefined];
    for (const ns of scopes) {
      const { items } = await client.list(e.apiVersion, e.kind, { namespace: ns, labelSelector: selector, signal: opts.signal });
      for (const o of items) {
        if (o.metadata.labels?.[OWNER_LABEL] !== opts.id || o.metadata.deletionTimestamp) continue;
        if (!keys.has(`${e.apiVersion}|${e.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name ?? ''}`)) candidates.push({ ...o, apiVersion: e.apiVersion, kind: e.kind });
      }
    }
  }
  const results: ObjectResult[] = [];
  for (const o of sortForDelete(candidates)) results.push(await deleteOne(client, o, opts));
  if (!opts.checkMode && JSON.stringify(previous) !== JSON.stringify(current)) {
    await client.apply(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: recordRef.name, namespace: opts.recordNamespace, labels: { [RECORD_LABEL]: opts.id } }, data: { resources: JSON.stringify(current) } },
      { fieldManager: opts.fieldManager, force: true, signal: opts.signal },
    );
  }
  return results;
}
