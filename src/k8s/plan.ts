/**
 * Planning: what would server-side applying these objects change? For each object: GET the
 * live object, server-side apply with `dryRun=All`, normalise both and compare. Used by
 * `k8s_apply` (idempotence, check mode, diffs) and `helm_release` (live drift).
 */
import pLimit from 'p-limit';
import { describeRef } from './client.js';
import { changedPaths, diffEntry, maskPair, normalize, sameObject } from './normalize.js';
import type { KubeClient, KubeObject, ObjectPlan, ObjectRef } from './types.js';

/** Options of {@link planApply}. */
export interface PlanOptions {
  /** Server-side apply field manager (`kplay`, `helm`, …). */
  fieldManager: string;
  /** Dry-run with `force=true` (take over conflicting fields) instead of failing on conflicts. */
  force?: boolean;
  /** Namespace for namespaced objects without one. @default "default" */
  defaultNamespace?: string;
  signal?: AbortSignal;
  /** Applied to the YAML texts of the diff (the run's secret masker). */
  mask?: (s: string) => string;
  /** Objects planned at once. @default 16 */
  concurrency?: number;
}

/**
 * The object with its namespace resolved against discovery: namespaced kinds get
 * `defaultNamespace` when they have none; cluster-scoped kinds lose a stray namespace.
 */
export async function resolveNamespace(client: KubeClient, obj: KubeObject, defaultNamespace = 'default'): Promise<KubeObject> {
  const info = await client.resource(obj.apiVersion, obj.kind);
  if (info.namespaced && !obj.metadata.namespace) return { ...obj, metadata: { ...obj.metadata, namespace: defaultNamespace } };
  if (!info.namespaced && obj.metadata.namespace !== undefined) {
    const md = { ...obj.metadata };
    delete md.namespace;
    return { ...obj, metadata: md };
  }
  return obj;
}

/** The reference of a (namespace-resolved) object. */
export function objectRef(obj: KubeObject): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
}

/** Label of an object for diffs and messages: `Deployment ns/web`. */
export function labelOf(ref: ObjectRef): string {
  return describeRef(ref);
}

/** Plan one object whose namespace is already resolved. */
export async function planOne(client: KubeClient, obj: KubeObject, opts: PlanOptions): Promise<ObjectPlan> {
  const ref = objectRef(obj);
  const live = await client.get(ref, opts.signal);
  const dry = await client.apply(obj, { fieldManager: opts.fieldManager, force: opts.force, dryRun: true, signal: opts.signal });
  return comparePlan(ref, live, dry, opts.mask);
}

/** Build the plan from a live object (or none) and the dry-run result. */
export function comparePlan(ref: ObjectRef, live: KubeObject | undefined, dry: KubeObject, mask?: (s: string) => string): ObjectPlan {
  const nLive = live ? normalize(live) : undefined;
  const nDesired = normalize(dry);
  const action: ObjectPlan['action'] = !nLive ? 'create' : sameObject(nLive, nDesired) ? 'unchanged' : 'update';
  const masked = maskPair(nLive, nDesired);
  const paths = !nLive ? [] : action === 'unchanged' ? [] : changedPaths(nLive, nDesired);
  return {
    ref,
    action,
    live: masked.before,
    desired: masked.after,
    diff: diffEntry(labelOf(ref), action === 'unchanged' ? masked.after : masked.before, masked.after, mask),
    changedPaths: paths,
  };
}

/**
 * Plan server-side applying `objects` (results in the same order). Objects are planned
 * concurrently (at most `concurrency`); a conflict (without `force`) rejects with `ApplyConflictError`.
 */
export async function planApply(client: KubeClient, objects: KubeObject[], opts: PlanOptions): Promise<ObjectPlan[]> {
  const limit = pLimit(opts.concurrency ?? 16);
  return Promise.all(
    objects.map((o) =>
      limit(async () => {
        opts.signal?.throwIfAborted();
        const obj = await resolveNamespace(client, o, opts.defaultNamespace);
        return planOne(client, obj, opts);
      }),
    ),
  );
}
