/**
 * What the generated Job takes from the shards' coordination contract (contract.ts): the flags a
 * shard pod is started with, the env it reads, and the coordination object with the verbs the Role
 * grants on it by exact name. The Job creates that object up front (an empty ConfigMap, which the
 * contract accepts: the first shard fills it), so the shards never need `create` — the one verb
 * RBAC cannot restrict to a name.
 */
import { FLEET_ENV, FLEET_LABELS, FLEET_OBJECT, fleetObjectName, SHARD_VERBS } from './contract.js';

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
/** Env var naming the namespace of the coordination object in the management cluster. */
export const FLEET_NAMESPACE_ENV = FLEET_ENV.namespace;
/** Env vars naming the management cluster's kubeconfig file and context (KUBECONFIG is the target clusters'). */
export const FLEET_KUBECONFIG_ENV = FLEET_ENV.kubeconfig;
export const FLEET_CONTEXT_ENV = FLEET_ENV.context;
/** The env var Kubernetes sets in each pod of an Indexed Job. */
export const COMPLETION_INDEX_ENV = FLEET_ENV.completionIndex;
/** The longest run id the contract allows (its FLEET_RUN_ID_PATTERN: 1–50 characters of a DNS label; `kplay-<id>`, the Job's name, stays within 63 characters). */
export const RUN_ID_MAX = 50;

/** The coordination object and the verbs a shard needs on it (by name), from the contract. */
export const COORDINATION: CoordinationGrant[] = [
  { apiGroup: FLEET_OBJECT.apiGroup, resource: FLEET_OBJECT.resource, kind: FLEET_OBJECT.kind, apiVersion: FLEET_OBJECT.apiVersion, name: fleetObjectName, verbs: [...SHARD_VERBS.named] },
];

/** Label keys tying the generated objects to the fleet run. */
export const LABEL_RUN = FLEET_LABELS.run;
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const LABEL_MANAGED_BY = FLEET_LABELS.managedBy;
