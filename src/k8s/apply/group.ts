/**
 * One apply group's turn: resolve namespaces, read the live objects (one LIST per kind and
 * namespace; CRDs a GET each, see crd-reads.ts), plan (SSA dry-runs only where the live object
 * does not already match), create absent objects with one apply each, and write only what
 * changes — all in parallel.
 */
import type pLimit from 'p-limit';
import { diffEntry, maskObject, normalize } from '../normalize.js';
import { comparePlan, removesOnlyAdditions, fetchLive, labelOf, liveKey, LIST_MIN, objectRef, planOne, resolveNamespace } from '../object-plan.js';
import type { KubeClient, KubeObject, ListResult, ObjectPlan, ObjectRef, WatchOptions } from '../types.js';
import { crdWatchStart, isCrdV1, listCrdVersions, readCrds } from './crd-reads.js';
import { smallCrdsFirst, writeServed, type CrdKind } from './crds.js';
import { removeAdditions } from './removals.js';
import { allSettledOrThrow, isUnknownKind, type ApplySetOptions, type ObjectAction, type ObjectResult } from './types.js';

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

/** What earlier groups of one apply created. */
export interface GroupState {
  /** Namespaces created: nothing can exist in them yet. */
  newNamespaces: Set<string>;
  /** `apiVersion|kind` of CRDs created: no object of theirs exists yet. */
  newKinds: Set<string>;
  /** Until when (epoch ms) writes of `newKinds` are retried while their endpoint is not served. */
  servedBy: number;
  /** The apply's warning sink (see {@link warnOnce}). */
  onWarning?: (ref: ObjectRef, warning: string) => void;
  /**
   * Where the wait for the CRDs written starts its watch: a LIST of CRDs made before they were
   * written, when at least `LIST_MIN` are (see `crdWatchStart` in crd-reads.ts, `watchCrds`
   * in crds.ts).
   */
  crdList?: WatchOptions['from'];
}

/** `opts.warn` for one object's warning, each line once (a dry-run and its write warn alike), masked. */
export function warnOnce(opts: ApplySetOptions): GroupState['onWarning'] {
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
 * The live state of `objects` (see `fetchLive`), keyed by `liveKey`; CRDs with a GET each (see
 * `readCrds` in crd-reads.ts: never the cluster's CRD list), alongside the others. `onAbsentCrd`:
 * see `readCrds`.
 */
async function readLive(client: KubeClient, objects: KubeObject[], signal?: AbortSignal, onAbsentCrd?: () => void): Promise<Map<string, KubeObject | undefined>> {
  const crds = objects.filter(isCrdV1);
  if (!crds.length) return fetchLive(client, objects, { signal });
  const [crdLives, others] = await Promise.all([readCrds(client, crds, signal, onAbsentCrd), fetchLive(client, objects.filter((o) => !isCrdV1(o)), { signal })]);
  for (const [k, v] of crdLives) others.set(k, v);
  return others;
}

/** What a group's turn is given besides its objects (see {@link applyGroup}). */
export interface GroupTurn {
  /** Live objects already read (see `readAhead` in read-ahead.ts); the others are read in the turn. */
  ahead?: Promise<Map<string, KubeObject | undefined>>;
  /** Called with the live objects once they are read (before planning). */
  onLive?: (lives: ReadonlyMap<string, KubeObject | undefined>) => void;
  /** The writes (only) wait until it settles; reads and plans do not. */
  gate?: Promise<void>;
}

/**
 * Plan and write one group: read the live objects, plan, write only what changes, all in parallel
 * (see {@link GroupTurn} for what `turn` adds). Before writing `LIST_MIN` or more CRDs it notes
 * where the wait for their establishment starts (`state.crdList`).
 */
export async function applyGroup(
  client: KubeClient,
  objects: KubeObject[],
  crds: ReadonlyMap<string, CrdKind>,
  state: GroupState,
  limit: ReturnType<typeof pLimit>,
  opts: ApplySetOptions,
  turn: GroupTurn = {},
): Promise<ObjectResult[]> {
  const { ahead, onLive, gate } = turn;
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
  const toRead = prepared.filter((x): x is KubeObject => !isResult(x) && !cannotExist(x) && !early?.has(liveKey(objectRef(x))));
  // The LIST the wait for written CRDs starts from (see `crdWatchStart`): made before any CRD is
  // written, only when enough are written for one watch of all CRDs — at once when a GET finds
  // one missing (it will be created), else before writing changed ones.
  let crdVersions: Promise<ListResult | undefined> | undefined;
  const listCrds = (): Promise<ListResult | undefined> => {
    if (!crdVersions) {
      crdVersions = listCrdVersions(client, opts.signal);
      crdVersions.catch(() => undefined); // its error is thrown where it is awaited, before the writes
    }
    return crdVersions;
  };
  const manyCrds = !opts.checkMode && toRead.filter(isCrdV1).length >= LIST_MIN;
  try {
    const lives = await readLive(client, toRead, opts.signal, manyCrds ? listCrds : undefined);
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
          // check mode reports a conflict (the task fails with it, `kplay drift` counts it as drift); a real apply fails on it before any write
          const plan = await planOne(client, x, { fieldManager: opts.fieldManager, force: opts.force, signal: opts.signal, mask: opts.mask, driftRules: opts.driftRules, ownManagers: opts.ownManagers, onWarning: state.onWarning, conflicts: opts.checkMode ? 'report' : 'fail' }, { live });
          const action: ObjectAction = plan.action === 'create' ? 'created' : plan.action === 'update' ? 'configured' : 'unchanged';
          const r: ObjectResult = { ref: plan.ref, action, plan, object: plan.desired };
          if (!opts.checkMode && action !== 'unchanged') toWrite.set(r, x);
          return r;
        }),
      ),
    );
    // Writes: only what changes, concurrently within the group (once `gate` opens, when given).
    if (!opts.checkMode && toWrite.size) {
      const crdWrites = [...toWrite.values()].filter(isCrdV1);
      if (crdWrites.length >= LIST_MIN) state.crdList = crdWatchStart(await listCrds(), lives, crdWrites);
      await gate;
      opts.signal?.throwIfAborted();
      // The first write of each CRD's new kinds goes alone; the others follow once it is answered.
      // The kinds are written as soon as the apiserver accepted the CRD's names, and an apiserver
      // whose copy of the CRD lags answers 404 for the endpoint (retried, see writeServed): one
      // such write per CRD instead of one per custom resource.
      const firstOfCrd = new Map<string, Promise<void>>();
      const inTurn = (obj: KubeObject, writeOne: () => Promise<void>): Promise<void> => {
        const kind = `${obj.apiVersion}|${obj.kind}`;
        if (!state.newKinds.has(kind)) return writeOne();
        const crd = crds.get(kind)?.crd ?? kind;
        const first = firstOfCrd.get(crd);
        if (first) return first.then(writeOne, writeOne);
        const p = writeOne();
        firstOfCrd.set(crd, p);
        return p;
      };
      // every write answered before a failure is thrown: the writes that succeeded are known (onWritten)
      await allSettledOrThrow(
        smallCrdsFirst([...toWrite]).map(([r, obj]) =>
          inTurn(obj, () =>
            limit(async () => {
              // Forced only where the plan reclaimed fields from a manual kubectl edit (or force_conflicts).
              const onWarning = state.onWarning && ((w: string): void => state.onWarning?.(r.ref, w));
              const onAttempts = (n: number, first: string | undefined): void => {
                r.attempts = n;
                opts.log?.(`${labelOf(r.ref)}: applied on attempt ${n}${first ? ` (the first met ${first})` : ''}`);
              };
              const write = (): Promise<KubeObject> =>
                client.apply(r.plan.toApply ?? obj, { fieldManager: opts.fieldManager, force: opts.force || r.plan.reclaimed !== undefined, signal: opts.signal, onWarning, onAttempts });
              const applied = removesOnlyAdditions(r.plan) ? undefined : state.newKinds.has(`${obj.apiVersion}|${obj.kind}`) ? await writeServed(write, state.servedBy, opts.signal) : await write();
              // written: a change of the cluster, whatever happens to the rest of the set
              if (applied) opts.onWritten?.(r);
              if (r.plan.reclaimed) opts.log?.(`took back ${r.plan.reclaimed.join(', ')} on ${labelOf(r.ref)} (manual edit)`);
              let stored = applied;
              if (r.plan.additions?.length) {
                stored = await removeAdditions(client, r.ref, r.plan.additions, { signal: opts.signal, current: applied });
                if (!applied) opts.onWritten?.(r);
                opts.log?.(`removed ${r.plan.additions.map((a) => `${a.path} (${a.manager})`).join(', ')} from ${labelOf(r.ref)}`);
              }
              if (!stored) throw new Error(`internal: nothing written for ${labelOf(r.ref)}`);
              // a create's plan is the object as stored, normalised and masked once for both
              if (r.action === 'created' && !r.plan.live) r.plan = comparePlan(r.ref, undefined, stored, opts.mask);
              r.object = (r.action === 'created' && !r.plan.live ? r.plan.desired : undefined) ?? maskObject(normalize(stored));
              opts.log?.(`${r.action} ${labelOf(r.ref)}`);
            }),
          ),
        ),
      );
    }
    return planned;
  } finally {
    await crdVersions?.catch(() => undefined); // nothing left running behind an error
  }
}

