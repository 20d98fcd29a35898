/**
 * The Kubernetes layer's contract: what modules (k8s_apply, k8s_info, wait_for, helm_release,
 * lb_switch providers) use to talk to a cluster. One `KubeClient` per cluster per run, created
 * lazily through `kubeFor(ctx)` (see `client.ts`).
 */
import type { KubeStatus } from './errors.js';
import type { DiffEntry } from '../core/module.js';
import type { DriftField, HiddenField } from './drift.js';
import type { FieldAddition } from './fields.js';
import type { ResolvedContext } from './resolved.js';

/** One operation of an RFC 6902 JSON patch. */
export type JsonPatchOp = { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string } | { op: 'move' | 'copy'; from: string; path: string };

/** A Kubernetes object as plain JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: KubeMetadata;
  [key: string]: unknown;
}

/** The parts of `metadata` kplay reads. */
export interface KubeMetadata {
  name?: string;
  generateName?: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  resourceVersion?: string;
  uid?: string;
  generation?: number;
  [key: string]: unknown;
}

/** Identifies one object. `namespace` is ignored for cluster-scoped kinds. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** What API discovery says about a kind. */
export interface ResourceInfo {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name used in URLs, e.g. `deployments`. */
  resource: string;
  namespaced: boolean;
  verbs: string[];
}

/** Request counters (tests and benchmarks assert on these). */
export interface ClientStats {
  requests: number;
  /** POST/PUT/PATCH/DELETE that were not dry-run. */
  writes: number;
  retries: number;
  /**
   * Requests by Kubernetes verb: `discovery` (/version, /api, /apis), `get`, `list`, `watch`,
   * `apply` (server-side apply), `dryrun` (any write with `dryRun=All`), `create`, `update`,
   * `patch`, `delete`.
   */
  byVerb: Partial<Record<RequestVerb, number>>;
  /** Responses 404 Not Found (reads of objects that do not exist, deletes of absent ones). */
  notFound: number;
  /** Bytes of the answers to requests that are not streams (watches are not counted). */
  responseBytes?: number;
  /** LISTs answered metadata-only (`PartialObjectMetadataList`, see {@link ListOptions.metadataOnly}); counted under `list` too. */
  metadataLists?: number;
  /** Paged LISTs read again whole because a continue token expired (410 Expired), as client-go's pager does. */
  listFallbacks?: number;
}

/** The verb a request is counted under in {@link ClientStats.byVerb}. */
export type RequestVerb = 'discovery' | 'get' | 'list' | 'watch' | 'apply' | 'dryrun' | 'create' | 'update' | 'patch' | 'delete';

/** A watch event; `SYNC` is delivered once after the initial list (the current state). */
export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC'; object: KubeObject | undefined };

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  signal?: AbortSignal;
  /**
   * Ask for the objects' metadata only (`Accept: application/json;as=PartialObjectMetadataList;
   * g=meta.k8s.io;v=v1,application/json`, as kubectl and client-go's metadata client do): items
   * are `PartialObjectMetadata` (no spec, no status). A server that cannot answer so answers the
   * full list (see {@link ListResult.metadataOnly}) or 406.
   */
  metadataOnly?: boolean;
}

/** What a LIST answers: every page's items, and the resourceVersion of the list. */
export interface ListResult {
  items: KubeObject[];
  resourceVersion: string;
  /**
   * True when the items are metadata only (`PartialObjectMetadata`): asked with
   * {@link ListOptions.metadataOnly} and answered so. Absent: the items are whole objects.
   */
  metadataOnly?: boolean;
}

export interface WatchOptions extends ListOptions {
  /**
   * Reconnect when no event (or bookmark) arrives for this long.
   * @default 5000
   */
  stallMs?: number;
  /**
   * A LIST of the watched kind (same namespace and selectors) the caller already made: the watch
   * starts from its items and resourceVersion instead of listing again. Later re-lists (410 Gone,
   * a stalled stream) are the watch's own.
   */
  from?: { items: KubeObject[]; resourceVersion: string };
}

export interface ApplyOptions {
  /** Server-side apply field manager. @default "kplay" */
  fieldManager: string;
  /** Take ownership of conflicting fields. @default false */
  force?: boolean;
  /** `dryRun=All`: nothing is persisted. */
  dryRun?: boolean;
  /** Called with each warning the apiserver answers the write with (deprecated APIs and fields, webhooks). */
  onWarning?: (warning: string) => void;
  /**
   * Called when the apply took more than one attempt (a 500 from a webhook that timed out, a
   * 503, a reset connection: a server-side apply with a field manager is repeated as a read is),
   * with the number of attempts and what the first one met (`500 InternalError`).
   */
  onAttempts?: (attempts: number, firstFailure: string | undefined) => void;
  signal?: AbortSignal;
}

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Seconds before the object (a Pod) is killed; the kind's default when absent. */
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  signal?: AbortSignal;
  /** Called with the apiserver's answer when the object existed: the object (being deleted) or a `Status`. */
  onResponse?: (body: unknown) => void;
}

/** Options of `KubeClient.mergePatch`. */
export interface PatchOptions {
  dryRun?: boolean;
  signal?: AbortSignal;
  /** A strategic merge patch (built-in kinds only) instead of a JSON merge patch. */
  strategic?: boolean;
  /** Field manager of the update. @default derived from the user agent (`kplay`) */
  fieldManager?: string;
  /** Called with each warning the apiserver answers with. */
  onWarning?: (warning: string) => void;
}

/** What a command run in a container printed and how it ended. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  /** The Status of the error channel (`status: Success`, or the exit code in `details.causes`); undefined when the server sent none. */
  status: KubeStatus | undefined;
}

/** Where and what to run. */
export interface ExecRequest {
  namespace: string;
  pod: string;
  container?: string;
  command: readonly string[];
  signal?: AbortSignal;
}

/** Options of the log endpoint. */
export interface LogQuery {
  container?: string;
  sinceSeconds?: string;
  previous?: boolean;
  tailLines?: number;
}

/** A client for one cluster. Every method retries what is safe to retry (see client.ts and requests.ts). */
export interface KubeClient {
  /** Inventory name of the cluster. */
  readonly name: string;
  readonly stats: ClientStats;
  /** The apiserver's URL (the kubeconfig's `server`). */
  readonly server: string;
  /** The cluster's `gitVersion` from the reachability probe (`v1.34.4`); `''` when `/version` did not say. */
  readonly serverVersion: string;
  /** Run a command in a container (pods/exec over a WebSocket); a refusal throws `KubeApiError`. */
  podExec?(x: ExecRequest): Promise<ExecResult>;
  /** A container's log (pods/log) as text; a missing pod throws a 404 `KubeApiError`. */
  podLog?(namespace: string, pod: string, q: LogQuery, signal?: AbortSignal): Promise<string>;
  /**
   * The kubeconfig context as resolved when the connection opened — server, CA, credentials,
   * plugins, proxy (see resolved.ts); helm is handed exactly it. `undefined` for a client that
   * did not connect through a kubeconfig context (a test double).
   */
  readonly resolved?: ResolvedContext;
  /** Discovery (cached per run; refreshed once when a kind is unknown). Throws a clear error for an unknown kind. */
  resource(apiVersion: string, kind: string): Promise<ResourceInfo>;
  /** Forget cached discovery (after CRDs were created). */
  invalidateDiscovery(): void;
  /**
   * Start reading discovery now, without waiting for it, when the caller knows kinds outside the
   * built-in table will be looked up: the read then runs alongside the first requests instead of
   * on the path of the first custom kind. Built-in kinds do not wait for it. Resolves once the
   * read has settled; never rejects (a failed read is read again by the next lookup).
   */
  prefetchDiscovery?(): Promise<void>;
  /**
   * Call `fn` with the URL path of each write (not a dry-run) sent through this client's
   * connection — by any client sharing it — until it returns true. The run uses it to read the
   * cluster's run records only when the run is about to change the cluster. Returns what
   * removes `fn` before that (connections outlive a run in a process running several).
   */
  onWrite(fn: (path: string) => boolean): () => void;
  /**
   * The kinds a CRD serves, known before discovery lists them (discovery publishes a new CRD's
   * kinds a moment after it is Established); consulted only for kinds discovery does not list.
   * An empty list forgets the CRD's kinds (it was deleted).
   */
  learnKinds(crd: string, kinds: readonly ResourceInfo[]): void;
  /** GET a discovery path (`/version`, `/api/v1`, `/apis/apps/v1`): the parsed JSON answer. */
  getPath(path: string, signal?: AbortSignal): Promise<unknown>;
  /** GET one object; `undefined` when it does not exist. */
  get(ref: ObjectRef, signal?: AbortSignal): Promise<KubeObject | undefined>;
  /** LIST a kind (every page), in one namespace with `namespace`; metadata only with `metadataOnly` (when the server can). */
  list(apiVersion: string, kind: string, opts?: ListOptions): Promise<ListResult>;
  /** Server-side apply. A 409 conflict throws `ApplyConflictError`. */
  apply(obj: KubeObject, opts: ApplyOptions): Promise<KubeObject>;
  /** DELETE; resolves false when the object was already gone. */
  delete(ref: ObjectRef, opts?: DeleteOptions): Promise<boolean>;
  /** Evict a Pod (POST its `eviction` subresource: PodDisruptionBudgets are honoured); resolves false when the pod was already gone. */
  evict(ref: ObjectRef, opts?: { gracePeriodSeconds?: number; signal?: AbortSignal }): Promise<boolean>;
  /** JSON merge patch (used for small edits such as lease renewals); not retried on conflict. */
  mergePatch(ref: ObjectRef, patch: Record<string, unknown>, opts?: PatchOptions): Promise<KubeObject>;
  /** RFC 6902 JSON patch (e.g. `test` the resourceVersion, then `remove` fields). */
  jsonPatch(ref: ObjectRef, ops: JsonPatchOp[], opts?: { dryRun?: boolean; signal?: AbortSignal }): Promise<KubeObject>;
  /** Create (POST). A 409 AlreadyExists throws `KubeApiError` with status 409. */
  create(obj: KubeObject, opts?: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void }): Promise<KubeObject>;
  /** Replace (PUT) with optimistic concurrency (metadata.resourceVersion). */
  replace(obj: KubeObject, opts?: { dryRun?: boolean; signal?: AbortSignal; onWarning?: (warning: string) => void }): Promise<KubeObject>;
  /**
   * List-then-watch from the list's resourceVersion; re-lists on 410 Gone, reconnects on a
   * silent stall. Calls `onEvent` for each event (and once with SYNC after each (re)list);
   * resolves when `onEvent` returns true, rejects when the signal aborts.
   */
  watch(apiVersion: string, kind: string, opts: WatchOptions, onEvent: (e: WatchEvent, state: Map<string, KubeObject>) => boolean | Promise<boolean>): Promise<void>;
}

/** What applying one object would do / did. */
export interface ObjectPlan {
  ref: ObjectRef;
  action: 'create' | 'update' | 'unchanged' | 'delete';
  /** Live object before (normalised, secrets masked), if it exists. */
  live?: KubeObject;
  /** Object as the server would store it (dry-run result, normalised, masked). */
  desired?: KubeObject;
  /** YAML before/after for `--diff` (secrets masked). */
  diff: DiffEntry;
  /** Top-level field paths that differ, e.g. `spec.replicas` (for drift summaries). */
  changedPaths: string[];
  /**
   * Fields taken back from manual kubectl edits (`manager: field`), when the plan had to force
   * them; the real apply must then force too. See `reclaimManualEdits` in plan.ts.
   */
  reclaimed?: string[];
  /** Drifted fields, attributed to their current field manager (changed values and additions; hidden ones aside). */
  drift?: DriftField[];
  /** Drifted fields a built-in or `drift_ignore` rule hid (never reported, never written back). */
  hidden?: HiddenField[];
  /** Fields another manager added, to remove when the plan is carried out (a JSON patch after the apply). */
  additions?: FieldAddition[];
  /** The object to apply when rules changed it (hidden fields keep their live values); else the desired object as given. */
  toApply?: KubeObject;
  /**
   * Set when the plan was made with `conflicts: 'report'` (check mode) and another field manager
   * owns fields with other values (`kubectl apply --server-side --force-conflicts`): the conflict
   * a real apply fails with; the plan is what a forced apply would change (those fields are drift).
   */
  conflict?: FieldConflictSummary;
}

/** The conflict of a plan (see {@link ObjectPlan.conflict}): the fields, their managers, and the error's message. */
export interface FieldConflictSummary {
  message: string;
  conflicts: { manager: string; field: string; message: string }[];
}
