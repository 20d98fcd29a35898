/**
 * Applying a set of objects in order: which group each object belongs to (see {@link ApplyGroup}),
 * which group waits for which, the reads made ahead of a group's turn, and the waits for the
 * set's CRDs to be Established before their custom resources. Each group's own turn (plan and
 * write) is `applyGroup` (group.ts).
 */
import pLimit from 'p-limit';
import { OTHER_RANK, rankOf, sortForApply } from '../order.js';
import type { KubeClient, KubeObject } from '../types.js';
import { coreKind, crdServedKinds } from '../discovery.js';
import { withoutAggregatedRules } from './aggregated-rules.js';
import { crdKinds, waitServed, watchCrds, type CrdKind, type CrdWait } from './crds.js';
import { applyGroup, warnOnce, type GroupState, type GroupTurn } from './group.js';
import { readAhead, readAheadCustom } from './read-ahead.js';
import { allSettledOrThrow, type ApplySetOptions, type ObjectResult } from './types.js';

/**
 * The apply groups: what must exist before what, and nothing more (each group is applied with
 * all its objects in parallel, under the client's QPS budget).
 * - `foundations`: namespaces (rank 0) and the cluster-wide kinds pods name (PriorityClass,
 *   StorageClass, …);
 * - `definitions`: CRDs (rank 1), alongside `foundations`: only their custom resources wait for
 *   them, and the apiserver's work on large CRDs (validation, then their names accepted and
 *   Established one after another) is the longest wait of a cold apply;
 * - `prerequisites`: what workloads refer to (quotas, limits, RBAC, service accounts, config,
 *   storage, services; ranks 2–7), after `foundations`;
 * - `workloads` (rank 8), after `prerequisites`;
 * - `custom`: custom resources and other kinds (rank 10, and any kind a CRD of the set defines),
 *   after `foundations` and `definitions`; each custom resource of a CRD this apply created or
 *   changed goes as soon as the apiserver serves that CRD's kinds (see `crdServable`: its names
 *   are accepted, one status update before Established — 5 s before it with several apiservers);
 *   the apply ends once every such CRD is Established;
 * - when the apply writes CRDs, `prerequisites` and `workloads` are read and planned at once but
 *   written only once those CRDs' kinds are served (as kapp orders a set, and as ops apply one
 *   with kubectl: CRDs, wait, the rest). The apiserver establishes CRDs one after another, two status
 *   updates of each whole CRD, on the CPU the rest of the set's writes would take — and each
 *   Service and Deployment written sets controllers writing (IP allocation, endpoints, replica
 *   sets, pods). Measured on B8 (10 large CRDs, 130 objects): the chain took ~1.5 s with those
 *   writes alongside and ~1.0 s without; the whole apply ~15% less. An operator's Deployment
 *   then also starts with its kinds served;
 * - `last`: webhooks and APIServices (rank 9): registered after every other object — the
 *   objects they would intercept (a webhook whose backend is not up yet would refuse them) and
 *   the workloads that serve them.
 * A group that fails stops the groups after it; groups running alongside it finish first.
 */
type ApplyGroup = 'foundations' | 'definitions' | 'prerequisites' | 'workloads' | 'custom' | 'last';
const GROUP_ORDER: readonly ApplyGroup[] = ['foundations', 'definitions', 'prerequisites', 'workloads', 'custom', 'last'];
const CLUSTER_PREREQUISITES = new Set(['PriorityClass', 'StorageClass', 'PodSecurityPolicy', 'IngressClass', 'RuntimeClass']);

/** The group of `obj` (see {@link ApplyGroup}); `crds`: the kinds the set's CRDs define. */
function groupOf(obj: KubeObject, crds: ReadonlyMap<string, CrdKind>): ApplyGroup {
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

/** Live objects read ahead of a group's turn, by `liveKey`. */
type LiveObjects = Map<string, KubeObject | undefined>;

/** What the groups of one {@link applyObjects} share. */
interface ApplyRun {
  client: KubeClient;
  opts: ApplySetOptions;
  /** `apiVersion|kind` → the custom resource kinds the set's CRDs define (see `crdKinds`). */
  crds: Map<string, CrdKind>;
  /** The objects of each group, in apply order. */
  byGroup: Map<ApplyGroup, KubeObject[]>;
  /** What earlier groups created. */
  state: GroupState;
  /** The apply's concurrency: 16 requests at a time, across all its groups. */
  limit: ReturnType<typeof pLimit>;
  /** Until when (epoch ms) the set's CRDs are waited for (`crdTimeoutMs` from the start). */
  deadline: number;
  /**
   * Settles once the kinds of every CRD this apply writes are served or its wait has ended otherwise (as
   * soon as the CRDs are planned when it writes none, or when they fail): the built-in groups'
   * writes wait for it (see {@link ApplyGroup}).
   */
  crdsSettled: Promise<void>;
  /** Settles {@link crdsSettled} (idempotent). */
  settleCrds: () => void;
  /**
   * The CRDs this apply wrote, once Established: their custom resources go as soon as the kinds
   * are served (see `crdServable`), the apply ends only once each is Established.
   */
  established: Promise<KubeObject>[];
}

/** The reads made at the start of an apply for the groups that wait for others (see {@link readEarly}). */
interface EarlyReads {
  prerequisites: Promise<LiveObjects>;
  workloads: Promise<LiveObjects>;
  last: Promise<LiveObjects>;
  custom: Promise<LiveObjects>;
}

/**
 * Server-side apply `objects` in groups (see {@link ApplyGroup}); returns one result per object,
 * in apply order. Objects that cannot exist yet — in a namespace this apply created, or of a kind
 * whose CRD it created — are created without reading them first. The built-in kinds of the later
 * groups are read at the start, alongside the first groups (reads wait for no write).
 */
export async function applyObjects(client: KubeClient, given: KubeObject[], opts: ApplySetOptions): Promise<ObjectResult[]> {
  const objects = given.map(withoutAggregatedRules);
  // Kinds outside the built-in table need discovery: read it alongside the first reads, not on
  // the path of the first custom resource.
  if (objects.some((o) => !coreKind(o.apiVersion, o.kind))) void client.prefetchDiscovery?.();
  const crds = crdKinds(objects);
  const limit = pLimit(16);
  const byGroup = new Map<ApplyGroup, KubeObject[]>(GROUP_ORDER.map((g) => [g, []]));
  const sorted = sortForApply(objects);
  for (const obj of sorted) byGroup.get(groupOf(obj, crds))?.push(obj);
  const deadline = Date.now() + (opts.crdTimeoutMs ?? 60_000);
  const state: GroupState = { newNamespaces: new Set(), newKinds: new Set(), servedBy: deadline, onWarning: warnOnce(opts) };
  let settleCrds: () => void = () => undefined;
  const crdsSettled = new Promise<void>((resolve) => (settleCrds = resolve));
  const run: ApplyRun = { client, opts, crds, byGroup, state, limit, deadline, crdsSettled, settleCrds, established: [] };
  // The live CRDs of the set, as the definitions group reads them (before planning or writing them).
  let crdsRead: (lives: ReadonlyMap<string, KubeObject | undefined>) => void = () => undefined;
  const liveCrds = new Promise<ReadonlyMap<string, KubeObject | undefined>>((resolve) => (crdsRead = resolve));
  const early = readEarly(run, objects, liveCrds);
  const foundationsDone = applyFoundations(run);
  const definitionsDone = applyDefinitions(run, crdsRead);
  // Stops the watches of CRDs (see applyCustom) once the apply is done.
  const stopWatches = new AbortController();
  let settled: ObjectResult[][];
  let last: ObjectResult[];
  try {
    try {
      settled = await allSettledOrThrow<ObjectResult[]>([foundationsDone, definitionsDone, applyBuiltins(run, foundationsDone, early), applyCustom(run, foundationsDone, definitionsDone, early.custom, stopWatches.signal)]);
    } finally {
      await Promise.all(Object.values(early)); // reads only, and they never reject: nothing left running
    }
    last = await runGroup(run, objectsOf(run, 'last'), { ahead: early.last });
    // The CRDs' custom resources went once their kinds were served; the apply ends once the CRDs
    // are Established, as `kubectl wait --for=condition=Established` would see them.
    await Promise.all(run.established);
  } finally {
    stopWatches.abort();
  }
  const [foundations, definitions, builtins, customResults] = settled;
  // namespaces, CRDs and cluster-wide kinds in apply order, as one group before them did
  const first = inOrder(sorted, [
    [objectsOf(run, 'foundations'), foundations],
    [objectsOf(run, 'definitions'), definitions],
  ]);
  return [...first, ...(builtins ?? []), ...(customResults ?? []), ...last];
}

/** The objects of group `g`, in apply order. */
function objectsOf(run: ApplyRun, g: ApplyGroup): KubeObject[] {
  return run.byGroup.get(g) ?? [];
}

/** The name of the CRD of the set that defines `o`'s kind, if one does. */
function crdOf(crds: ReadonlyMap<string, CrdKind>, o: KubeObject): string | undefined {
  return crds.get(`${o.apiVersion}|${o.kind}`)?.crd;
}

/** One group's turn (see `applyGroup`), with what the apply's groups share. */
function runGroup(run: ApplyRun, objs: KubeObject[], turn?: GroupTurn): Promise<ObjectResult[]> {
  return applyGroup(run.client, objs, run.crds, run.state, run.limit, run.opts, turn);
}

/**
 * Reads wait for no write: the built-in groups behind a barrier have their live state read now,
 * alongside the first groups' reads, and their turn starts with their writes (a read of the
 * last group alone costs a round trip after everything else is done). Custom resources are read
 * once `liveCrds` (the definitions group's read of the set's CRDs) says which CRDs exist.
 */
function readEarly(run: ApplyRun, objects: KubeObject[], liveCrds: Promise<ReadonlyMap<string, KubeObject | undefined>>): EarlyReads {
  const declared = new Set(objects.filter((o) => o.apiVersion === 'v1' && o.kind === 'Namespace').map((o) => o.metadata.name ?? ''));
  const ahead = (g: 'prerequisites' | 'workloads' | 'last'): Promise<LiveObjects> => readAhead(run.client, objectsOf(run, g), declared, run.opts);
  return {
    prerequisites: ahead('prerequisites'),
    workloads: ahead('workloads'),
    last: ahead('last'),
    custom: readAheadCustom(run.client, objectsOf(run, 'custom'), (o) => crdOf(run.crds, o), liveCrds, declared, run.opts),
  };
}

/** The `foundations` group's turn; the namespaces it creates are noted (nothing exists in them yet). */
function applyFoundations(run: ApplyRun): Promise<ObjectResult[]> {
  return runGroup(run, objectsOf(run, 'foundations')).then((results) => {
    for (const r of results) if (r.action === 'created' && r.ref.kind === 'Namespace') run.state.newNamespaces.add(r.ref.name);
    return results;
  });
}

/**
 * The `definitions` group's turn (CRDs); the kinds of the CRDs it creates are noted (no object of
 * theirs exists yet). `crdsRead` gets the live CRDs as the group reads them, or an empty map when
 * the group ends without reading (nothing to read, or an error).
 */
function applyDefinitions(run: ApplyRun, crdsRead: (lives: ReadonlyMap<string, KubeObject | undefined>) => void): Promise<ObjectResult[]> {
  const done = runGroup(run, objectsOf(run, 'definitions'), { onLive: crdsRead }).then((results) => {
    for (const r of results) if (r.action === 'created') for (const [k, v] of run.crds) if (v.crd === r.ref.name) run.state.newKinds.add(k);
    return results;
  });
  done.then(
    () => crdsRead(new Map()),
    () => crdsRead(new Map()),
  );
  return done;
}

/**
 * The built-in groups' turns after `foundations`: `prerequisites`, then `workloads`; their writes
 * wait until the kinds of the CRDs the apply writes are served (see {@link ApplyGroup}).
 */
async function applyBuiltins(run: ApplyRun, foundationsDone: Promise<ObjectResult[]>, early: EarlyReads): Promise<ObjectResult[]> {
  await foundationsDone;
  const prerequisites = await runGroup(run, objectsOf(run, 'prerequisites'), { ahead: early.prerequisites, gate: run.crdsSettled });
  return [...prerequisites, ...(await runGroup(run, objectsOf(run, 'workloads'), { ahead: early.workloads, gate: run.crdsSettled }))];
}

/**
 * The `custom` group's turn, after `foundations` and `definitions`, in lanes: the apiserver must
 * serve a CRD's kinds before its custom resources can be applied, so each CRD this apply created
 * or changed has a lane whose custom resources go as soon as its kinds are served (see
 * `crdServable`; the apiserver accepts the names of CRDs one after another); custom resources of
 * untouched CRDs (and of kinds no CRD of the set defines) go at once, in one lane. Many changed
 * CRDs are waited for with one shared watch (see `watchCrds`), which `stop` ends; each
 * CRD's Established moment goes to `run.established`.
 */
async function applyCustom(run: ApplyRun, foundationsDone: Promise<ObjectResult[]>, definitionsDone: Promise<ObjectResult[]>, earlyCustom: Promise<LiveObjects>, stop: AbortSignal): Promise<ObjectResult[]> {
  const custom = objectsOf(run, 'custom');
  try {
    const [, definitions] = await allSettledOrThrow<ObjectResult[]>([foundationsDone, definitionsDone]);
    const changedCrds = run.opts.checkMode ? [] : (definitions ?? []).filter((r) => r.action !== 'unchanged');
    const waited = new Set(changedCrds.map((r) => r.ref.name));
    const waits = watchCrds(run.client, [...waited], run.deadline, AbortSignal.any([stop, ...(run.opts.signal ? [run.opts.signal] : [])]), run.state.crdList);
    for (const w of waits.values()) run.established.push(w.established);
    const customLanes: { crd?: ObjectResult; objects: KubeObject[] }[] = [
      { objects: custom.filter((o) => !waited.has(crdOf(run.crds, o) ?? '')) },
      ...changedCrds.map((crd) => ({ crd, objects: custom.filter((o) => crdOf(run.crds, o) === crd.ref.name) })),
    ];
    const served = customLanes.map((l) => (l.crd ? whenServed(run, l.crd, waits.get(l.crd.ref.name)) : Promise.resolve()));
    void Promise.allSettled(served).then(() => run.settleCrds());
    const parts = await allSettledOrThrow(
      customLanes.map(async (l, i) => {
        await served[i];
        // Read ahead only for CRDs this apply leaves as they are: a changed CRD (new defaults,
        // versions, pruning) can change how its objects read, so those are read in their turn.
        return runGroup(run, l.objects, { ahead: l.crd ? undefined : earlyCustom });
      }),
    );
    return inOrder(custom, customLanes.map((l, i) => [l.objects, parts[i]]));
  } finally {
    // the CRDs failed, or were never waited for: the built-in groups' writes go on (as without CRDs)
    run.settleCrds();
  }
}

/**
 * Resolves once the kinds of the CRD of `crd` (a result of the definitions group) are served and
 * its custom resources can be written (see `crdServable`), as `wait` (its watch) says. A new
 * CRD's kinds are learnt from the CRD itself; a changed one's are waited for in discovery.
 */
async function whenServed(run: ApplyRun, crd: ObjectResult, wait: CrdWait | undefined): Promise<void> {
  const { client, crds, deadline, opts } = run;
  if (!wait) throw new Error(`CRD ${crd.ref.name}: not watched (a bug in kplay)`);
  const live = await wait.served;
  // A new CRD's kinds are known from the CRD itself: discovery publishes them a moment after
  // Established, and writes of its custom resources are retried until served (see writeServed).
  if (crd.action === 'created') client.learnKinds(crd.ref.name, crdServedKinds(live).filter((k) => k.resource));
  // A changed CRD (a new version): wait for discovery, every served version, not only those
  // this apply uses (the next task may apply the others).
  else await waitServed(client, [...crds.values()].filter((v) => v.crd === crd.ref.name), Math.max(1000, deadline - Date.now()), opts.signal);
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
