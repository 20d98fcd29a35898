/**
 * What the generated Job relies on from the shard side (`kplay run --shard I/N --fleet-run ID`):
 * the flags a shard pod is started with and the coordination objects it reads and writes in the
 * management cluster, with the verbs the Role grants on them (by exact name).
 *
 * Kept in one place so the Job, its RBAC and the tests follow the shard's contract together.
 */

/** One kind of coordination object a shard uses, and what it may do with it. */
export interface CoordinationGrant {
  /** API group (`''` for the core group). */
  apiGroup: string;
  /** Resource (plural), e.g. `configmaps`. */
  resource: string;
  /** Kind, for the object created up front. */
  kind: string;
  apiVersion: string;
  /** The object's name for a fleet run. */
  name: (runId: string) => string;
  /** Verbs the shard needs on it (restricted to that name). */
  verbs: string[];
}

/** The flag that selects the shard: `--shard I/N`. */
export const SHARD_FLAG = '--shard';
/** The flag that ties shards into one fleet run (one failure budget): `--fleet-run ID`. */
export const FLEET_RUN_FLAG = '--fleet-run';
/** Env var naming the namespace of the coordination objects in the management cluster. */
export const FLEET_NAMESPACE_ENV = 'KPLAY_FLEET_NAMESPACE';
/** The env var Kubernetes sets in each pod of an Indexed Job. */
export const COMPLETION_INDEX_ENV = 'JOB_COMPLETION_INDEX';

/**
 * The coordination objects: the fleet's failure budget, a ConfigMap updated with resourceVersion
 * preconditions (read, then update). The generator creates it up front (empty), so shards never
 * need `create` — a verb RBAC cannot restrict to one name.
 */
export const COORDINATION: CoordinationGrant[] = [
  { apiGroup: '', resource: 'configmaps', kind: 'ConfigMap', apiVersion: 'v1', name: (id) => `kplay-fleet-${id}`, verbs: ['get', 'update', 'patch', 'watch'] },
];

/** Label keys tying the generated objects to the fleet run. */
export const LABEL_RUN = 'kplay.dev/fleet-run';
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
