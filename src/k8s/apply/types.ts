/**
 * What the apply files share: the result of one object (applied, deleted or pruned), the options
 * of an apply, and the test for "this kind is not served" that each of them tolerates somewhere.
 */
import { KubeApiError } from '../errors.js';
import type { DriftRule } from '../drift.js';
import type { KubeObject, ObjectPlan, ObjectRef } from '../types.js';

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
  /** Attempts its write took, when more than one (a retried server-side apply). */
  attempts?: number;
}

/** Options of `applyObjects`. */
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
  /**
   * Called with each object's result as soon as its write (an apply, a delete, the removal of
   * fields added by hand) has been answered: what the cluster holds whatever happens next. When
   * a later object of the set fails, these are the changes the failed task made.
   */
  onWritten?: (r: ObjectResult) => void;
}

/** True for the error of a kind the cluster does not serve (discovery knows no such kind). */
export const isUnknownKind = (e: unknown): boolean => e instanceof KubeApiError && e.verb === 'DISCOVER';

/**
 * All the promises' values; when some reject, the first rejection — but only after every one has
 * settled (nothing is left running behind the error, and every write that went out is answered,
 * so a failed set knows all it wrote).
 */
export async function allSettledOrThrow<T>(promises: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.flatMap((l) => (l.status === 'fulfilled' ? [l.value] : []));
}
