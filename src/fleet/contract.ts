/**
 * The coordination contract of a fleet run: what the shards of one window (`kplay run --shard I/N
 * --fleet-run ID`, e.g. the pods of an Indexed Job) share in the management cluster, and what a
 * shard needs to be allowed there. `kplay fleet job` generates least-privilege RBAC from these
 * constants; `kplay fleet status` reads the same object.
 *
 * **One object per fleet run**: a ConfigMap {@link fleetObjectName}(ID) in the fleet namespace.
 * Every write is a `PUT` carrying the `resourceVersion` read just before (optimistic concurrency;
 * a 409 Conflict is read again and retried), so no shard's update is lost.
 *
 * **Data keys** (all values JSON unless said otherwise):
 * - `shards`: the number of shards N (plain text). Written by the shard that creates the object;
 *   a shard started with another N is refused.
 * - `stop`: set once, when the fleet must stop — `any_errors_fatal` on one cluster, or a fleet
 *   batch's failures over `max_fail_percentage`: `{ reason, shard, play, batch }`. Every shard
 *   reads it before each batch and after each task, and starts nothing new once it is set.
 * - `p<P>.b<B>.failed`: the names of the clusters that failed in batch B (1-based) of play P
 *   (0-based), fleet-wide, sorted. A set, so a shard reporting again (retry, resume) counts once.
 * - `p<P>.b<B>.done`: the shard indexes that finished batch B of play P, sorted. A shard starts
 *   batch B+1 only when every shard finished batch B (the fleet's batches follow each other as
 *   one process's do: `serial: [1, "10%"]` still runs one canary first).
 * - `shard.<I>`: the report of shard I: {@link ShardReport} (its run id, state, recap per cluster).
 */
import { SETTINGS } from '../core/settings-table.js';

/** The kind of the coordination object. */
export const FLEET_OBJECT = { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', apiGroup: '' } as const;

/** Name prefix of the coordination object: `kplay-fleet-<fleet run id>`. */
export const FLEET_OBJECT_PREFIX = 'kplay-fleet-';

/** Labels on the coordination object. */
export const FLEET_LABELS = { managedBy: 'app.kubernetes.io/managed-by', run: 'kplay.dev/fleet-run' } as const;

/** The namespace when neither `--fleet-namespace` nor `KPLAY_FLEET_NAMESPACE` (nor a pod's own namespace) says. */
export const DEFAULT_FLEET_NAMESPACE = 'kplay-system';

/** Where a pod finds its own namespace (used as the fleet namespace in a pod when none is given). */
export const POD_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The name of the coordination object of fleet run `id`. */
export function fleetObjectName(id: string): string {
  return `${FLEET_OBJECT_PREFIX}${id}`;
}

/** A fleet run id: a DNS label part (the object name must stay a valid name), 1–50 characters. */
export const FLEET_RUN_ID_PATTERN = /^[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?$/;

/** Data keys of the coordination object. */
export const FLEET_KEYS = {
  shards: 'shards',
  stop: 'stop',
  failed: (play: number, batch: number): string => `p${play}.b${batch}.failed`,
  done: (play: number, batch: number): string => `p${play}.b${batch}.done`,
  shard: (index: number): string => `shard.${index}`,
} as const;

/**
 * API verbs a shard needs on the coordination object, in the fleet namespace. `create` cannot be
 * limited to a resource name by RBAC (the name is not known before the object exists): grant it
 * without `resourceNames`, or create the object with the Job (an empty ConfigMap named
 * {@link fleetObjectName}(ID) is accepted: the first shard fills `shards`) and leave `create` out.
 * `get` and `update` can be limited to `resourceNames: [fleetObjectName(ID)]`.
 */
export const SHARD_VERBS = {
  named: ['get', 'update'],
  unnamed: ['create'],
} as const;

/** API verbs `kplay fleet status` needs (read only). */
export const STATUS_VERBS = ['get'] as const;

/**
 * Environment a shard reads (flags win over them). In an Indexed Job pod Kubernetes sets
 * `JOB_COMPLETION_INDEX`; the Job sets the others.
 */
export const FLEET_ENV = {
  /** Set by Kubernetes in an Indexed Job pod: the shard index I (0-based). Needs N from `--shards` or `KPLAY_SHARDS`. */
  completionIndex: SETTINGS.jobCompletionIndex.env,
  /** The number of shards N (with `JOB_COMPLETION_INDEX`). */
  shards: SETTINGS.shards.env,
  /** `I/N` in one variable (wins over `JOB_COMPLETION_INDEX`). */
  shard: SETTINGS.shard.env,
  /** The fleet run id shared by all shards (`--fleet-run`). */
  run: SETTINGS.fleetRun.env,
  /** The namespace of the coordination object (`--fleet-namespace`). */
  namespace: SETTINGS.fleetNamespace.env,
  /** The kubeconfig context of the management cluster (`--fleet-context`); unset in a pod: in-cluster credentials. */
  context: SETTINGS.fleetContext.env,
  /** The kubeconfig file of the management cluster (`--fleet-kubeconfig`). */
  kubeconfig: SETTINGS.fleetKubeconfig.env,
} as const;

/** Flags of `kplay run` for a shard (each has the environment variable of the same meaning above). */
export const FLEET_FLAGS = {
  shard: '--shard I/N',
  shards: '--shards N',
  run: '--fleet-run ID',
  namespace: '--fleet-namespace NS',
  context: '--fleet-context CONTEXT',
  kubeconfig: '--fleet-kubeconfig FILE',
} as const;

/** Per-cluster outcome in a shard report (the PLAY RECAP numbers). */
export interface ShardClusterRecap {
  ok: number;
  changed: number;
  failed: number;
  skipped: number;
  unreachable: number;
  rescued: number;
  ignored: number;
}

/** What shard I reports under `shard.<I>`. */
export interface ShardReport {
  shard: number;
  shards: number;
  /** The run id of the shard's kplay run (its local record and journal). */
  run_id: string;
  /** The run it resumed, if any. */
  resumed_from?: string;
  state: 'running' | 'finished' | 'stopped' | 'failed' | 'interrupted';
  started: string;
  finished?: string;
  /** The clusters this shard owns (after `--limit`). */
  clusters: string[];
  /** Recap of the clusters it ran (a resumed shard: those of this attempt merged over the earlier ones). */
  recap: Record<string, ShardClusterRecap>;
  /** Why the shard stopped early, if it did. */
  stop_reason?: string;
  exit_code?: number;
}
