/**
 * Shared plumbing of the Kubernetes `lb_switch` providers (k8s_service, ingress_canary,
 * httproute): read the object (clear error when it is missing), compute a small edit, and write
 * it as a JSON merge patch guarded by the `resourceVersion` that was read (retrying on a
 * concurrent change), or — in check mode — send the same patch with `dryRun=All`.
 *
 * Why a merge patch and not server-side apply: the objects lb_switch edits (a Service's
 * selector, two Ingress annotations, the weights inside an HTTPRoute's rules) are owned by
 * whoever deployed them (kubectl, Helm, a GitOps controller). SSA would either conflict with that
 * owner on exactly these fields, or — with `force` — move their ownership to `kplay`, so the
 * owner's next apply conflicts (or silently re-takes them); SSA also cannot drop a selector key
 * that another manager owns. A merge patch changes only the keys we name (`null` deletes a key),
 * leaves ownership of everything else alone, and is recorded in managedFields under `kplay` (our
 * User-Agent). Lists are replaced wholesale by merge patches (HTTPRoute `rules`), so every patch
 * carries `metadata.resourceVersion`: the apiserver rejects it with 409 when the object changed
 * after we read it, and we re-read and recompute instead of overwriting someone else's change.
 */
import { kubeFor } from '../k8s/client.js';
import { isRecord } from '../core/shape.js';
import { KubeApiError } from '../k8s/errors.js';
import type { KubeClient, KubeObject, ObjectRef } from '../k8s/types.js';
import { errorMessage } from '../load/errors.js';
import { UnreachableError, type ModuleContext, type ModuleResult } from '../core/module.js';

/** An expected failure of a provider (missing object, unknown backend, …): becomes `failed` with this message. */
export class LbError extends Error {
  override name = 'LbError';
}

/** How many times a patch is retried after a 409 caused by a concurrent change. */
export const CONFLICT_RETRIES = 4;

/** A map of string values (labels, selectors, annotations); non-string values are dropped. */
export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (isRecord(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

/** `k=v,k2=v2` (sorted) — a label selector string. */
export function selectorText(sel: Record<string, string>): string {
  return Object.keys(sel)
    .sort()
    .map((k) => `${k}=${sel[k]}`)
    .join(',');
}

/** `Kind namespace/name on cluster X`. */
export function where(ref: ObjectRef, cluster: string): string {
  return `${ref.kind} ${ref.namespace ?? 'default'}/${ref.name} on cluster ${cluster}`;
}

/** The client of the task's cluster. */
export function clientFor(ctx: ModuleContext): Promise<KubeClient> {
  return kubeFor(ctx);
}

/**
 * GET an object; throws {@link LbError} naming the object, namespace and cluster when it does not
 * exist, or when its kind is unknown on the cluster (CRD not installed).
 */
export async function readObject(client: KubeClient, ref: ObjectRef, signal: AbortSignal, crdHint?: string): Promise<KubeObject> {
  let obj: KubeObject | undefined;
  try {
    obj = await client.get(ref, signal);
  } catch (e) {
    if (e instanceof KubeApiError && e.verb === 'DISCOVER') {
      throw new LbError(`cluster ${client.name} has no kind ${ref.kind} (${ref.apiVersion})${crdHint ? `: ${crdHint}` : ''}`);
    }
    throw e;
  }
  if (!obj) {
    throw new LbError(`${ref.kind} '${ref.name}' not found in namespace '${ref.namespace ?? 'default'}' on cluster ${client.name}`);
  }
  return obj;
}

/** What a provider wants to change, computed from the live object. */
export interface Edit<P> {
  /** Provider-specific description of the change (before/after values for results and diffs). */
  plan: P;
  /** Merge patch to send, without `metadata.resourceVersion`; `undefined` when nothing has to change. */
  patch: Record<string, unknown> | undefined;
}

/** Outcome of {@link readModifyWrite}. */
export interface WriteOutcome<P> {
  /** The object as read (last read, when a conflict made us re-read). */
  before: KubeObject;
  /** The object after the patch: as stored, as the dry run predicts (check mode), or `before` when unchanged. */
  after: KubeObject;
  /** The plan computed from `before`. */
  plan: P;
  /** Whether something had to change (in check mode: would have changed). */
  changed: boolean;
  /** Whether a patch was persisted (false in check mode and when unchanged). */
  written: boolean;
}

/**
 * Read an object, let `compute` decide the edit, and send it as a merge patch guarded by the
 * read `resourceVersion` (dry run in check mode). On a 409 (the object changed in between) the
 * object is read again and the edit recomputed, up to {@link CONFLICT_RETRIES} times.
 * `compute` may throw {@link LbError} (e.g. unknown backend); nothing is written then.
 */
export async function readModifyWrite<P>(
  client: KubeClient,
  ref: ObjectRef,
  ctx: ModuleContext,
  compute: (live: KubeObject) => Edit<P> | Promise<Edit<P>>,
  crdHint?: string,
): Promise<WriteOutcome<P>> {
  for (let attempt = 0; ; attempt++) {
    const before = await readObject(client, ref, ctx.signal, crdHint);
    const { plan, patch } = await compute(before);
    if (!patch) return { before, after: before, plan, changed: false, written: false };
    const rv = before.metadata.resourceVersion;
    const guarded: Record<string, unknown> = {
      ...patch,
      metadata: { ...(isRecord(patch.metadata) ? patch.metadata : {}), ...(rv ? { resourceVersion: rv } : {}) },
    };
    try {
      const after = await client.mergePatch(ref, guarded, { dryRun: ctx.checkMode, signal: ctx.signal });
      return { before, after, plan, changed: true, written: !ctx.checkMode };
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 404) {
        throw new LbError(`${ref.kind} '${ref.name}' in namespace '${ref.namespace ?? 'default'}' was deleted on cluster ${client.name} while switching`);
      }
      if (e instanceof KubeApiError && e.status === 409 && attempt < CONFLICT_RETRIES) {
        ctx.log.info(`lb_switch: ${where(ref, client.name)} changed while switching; reading it again`);
        continue;
      }
      throw e;
    }
  }
}


/**
 * Wrap a provider's `run`: {@link LbError} becomes `failed` with its message, other errors are
 * prefixed with the target, and `UnreachableError` is re-thrown so the executor marks the
 * cluster unreachable.
 */
/**
 * The shared `weight` argument where the provider narrowed it to an integer (`narrow`): the
 * schema already refused a percentage, this only tells the type checker.
 */
export function integerWeight(weight: number | string): number {
  if (typeof weight !== 'number') throw new LbError(`weight must be an integer here, got '${weight}'`);
  return weight;
}

export function guard<A>(provider: string, target: (args: A) => string, fn: (args: A, ctx: ModuleContext) => Promise<ModuleResult>): (args: A, ctx: ModuleContext) => Promise<ModuleResult> {
  return async (args, ctx) => {
    try {
      return await fn(args, ctx);
    } catch (e) {
      if (e instanceof UnreachableError) throw e;
      if (e instanceof LbError) return { status: 'failed', msg: `lb_switch (${provider}): ${e.message}` };
      return { status: 'failed', msg: `lb_switch (${provider}) ${target(args)}: ${errorMessage(e)}` };
    }
  };
}
