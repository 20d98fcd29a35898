/**
 * Planning: what would server-side applying these objects change? The live objects are read
 * with one LIST per kind and namespace ({@link fetchLive}; a GET for a lone object). When the
 * live object already holds every field of the desired one with the same value, and every field
 * the field manager applied before is still in the desired object ({@link appliedUnchanged}),
 * applying cannot change anything and no dry-run is sent. Otherwise the object is server-side
 * applied with `dryRun=All`, both are normalised and compared. Used by `k8s_apply`
 * (idempotence, check mode, diffs) and `helm_release` (live drift).
 */
import pLimit from 'p-limit';
import { describeRef } from './client.js';
import { ApplyConflictError } from './errors.js';
import { changedPaths, diffEntry, maskPair, normalize, sameObject } from './normalize.js';
import type { DiffEntry } from '../core/module.js';
import { addedField, hidingRule, type DriftField, type DriftRule, type HiddenField } from './drift.js';
import { childAt, fieldAdditions, ownersOf, parseFieldPath, pointerOf, withoutFields, type FieldSegment } from './fields.js';
import type { KubeClient, KubeObject, ObjectPlan, ObjectRef } from './types.js';
import { normalisesQuantities, sameQuantity } from './quantity.js';
import { splitApiVersion } from './discovery.js';
import { isRecord } from '../core/shape.js';

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
  /**
   * Take back fields whose conflicting owner is a manual kubectl edit (see
   * {@link isManualEdit}) instead of failing: that is drift to repair, not another applier.
   * @default true
   */
  reclaimManualEdits?: boolean;
  /**
   * Managers whose fields are the desired state (additions by any other manager are drift).
   * @default [fieldManager]
   */
  ownManagers?: readonly string[];
  /** User rules hiding drift (`drift_ignore`). */
  driftRules?: readonly DriftRule[];
  /** Called with each warning the apiserver answers a dry-run with. */
  onWarning?: (ref: ObjectRef, warning: string) => void;
  /**
   * What a conflict with another field manager (not a manual edit, not hidden by a rule) does:
   * `fail` throws its `ApplyConflictError`; `report` (check mode) plans as a forced apply would,
   * the conflicting fields are drift attributed to their manager, and the plan's `conflict` says
   * what a real apply would fail with. @default "fail"
   */
  conflicts?: 'fail' | 'report';
}

/**
 * True when `manager` edited `live` by hand: a kubectl command (`kubectl`, `kubectl-edit`,
 * `kubectl-patch`, …) whose every managedFields entry is an imperative `Update` — `kubectl
 * edit/scale/patch/set/label`. Fields owned through `Apply` (someone's `kubectl apply
 * --server-side`, another tool) or by controllers (HPA, operators) are real conflicts.
 */
export function isManualEdit(live: KubeObject | undefined, manager: string): boolean {
  if (!live || !/^kubectl(-|$)/.test(manager) || manager === 'kubectl-client-side-apply') return false;
  const entries = (Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : []) as { manager?: string; operation?: string }[];
  const mine = entries.filter((e) => e.manager === manager);
  return mine.length > 0 && mine.every((e) => e.operation === 'Update');
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

/**
 * Plan one object whose namespace is already resolved. `prefetched` is its live object as read
 * by {@link fetchLive} (`{ live: undefined }`: it does not exist); without it the object is read with a GET.
 */
export async function planOne(client: KubeClient, obj: KubeObject, opts: PlanOptions, prefetched?: { live: KubeObject | undefined }): Promise<ObjectPlan> {
  const ref = objectRef(obj);
  const live = prefetched ? prefetched.live : await client.get(ref, opts.signal);
  const own = opts.ownManagers ?? [opts.fieldManager];
  const rules = opts.driftRules ?? [];
  // additions: fields other managers set that kplay never applied (hidden by rules, or drift to remove)
  const hidden: HiddenField[] = [];
  const added: DriftField[] = [];
  const additions = fieldAdditions(live, own, obj).filter((a) => {
    const f = addedField(a);
    const rule = hidingRule(ref, f, undefined, rules);
    if (rule) hidden.push({ ...f, rule });
    else added.push(f);
    return rule === undefined;
  });
  const strip = additions.map((a) => a.segments);
  let toApply = obj;
  let plan: ObjectPlan;
  let planOpts = opts;
  let conflict: ObjectPlan['conflict'];
  try {
    plan = await planValues(client, toApply, live, planOpts, strip);
  } catch (e) {
    // a conflict on fields a rule hides (replicas the autoscaler owns): they keep their live value
    if (!(e instanceof ApplyConflictError) || !live || e.conflicts.length === 0) throw e;
    const hiddenConflicts = e.conflicts.map((c) => {
      const segments = parseFieldPath(c.field);
      const owner = ownersOf(live, segments).find((o) => o.manager === c.manager);
      const field: DriftField = { path: c.field.startsWith('.') ? c.field : `.${c.field}`, change: 'changed', manager: c.manager, operation: owner?.operation, time: owner?.time, kplay_owns: false };
      return { segments, field, rule: hidingRule(ref, field, owner, rules) };
    });
    const unhidden = hiddenConflicts.filter((h) => h.rule === undefined);
    if (unhidden.length && opts.conflicts !== 'report') throw e;
    const kept = hiddenConflicts.filter((h) => h.rule !== undefined);
    hidden.push(...kept.map((h) => ({ ...h.field, rule: h.rule ?? '' })));
    toApply = withLiveValues(obj, live, kept.map((h) => h.segments));
    if (unhidden.length) {
      // reported, not thrown: what a forced apply would change; the conflicting fields are its drift
      planOpts = { ...opts, force: true };
      const left = e.conflicts.filter((c) => unhidden.some((h) => h.field.manager === c.manager && h.field.path === (c.field.startsWith('.') ? c.field : `.${c.field}`)));
      conflict = { message: new ApplyConflictError(e.object, left, e.verb, e.path, e.cluster, e.body).message, conflicts: left };
    }
    plan = await planValues(client, toApply, live, planOpts, strip);
  }
  // changed values: attributed; those a rule hides keep their live value (one more dry-run)
  let changed = live ? attribute(plan.changedPaths, live, own, strip) : [];
  const hideNow = changed.map((c) => ({ c, rule: hidingRule(ref, c.field, c.owner, rules) })).filter((x): x is { c: Attributed; rule: string } => x.rule !== undefined);
  if (live && hideNow.length) {
    hidden.push(...hideNow.map(({ c, rule }) => ({ ...c.field, rule })));
    toApply = withLiveValues(obj, live, hideNow.map(({ c }) => c.segments));
    plan = await planValues(client, toApply, live, planOpts, strip);
    changed = attribute(plan.changedPaths, live, own, strip);
  }
  if (conflict) plan.conflict = conflict;
  const drift = [...changed.map((c) => c.field), ...added];
  // set on the plan itself: spreading it would compute its lazy `diff` (two YAML renderings per object)
  if (drift.length) plan.drift = drift;
  if (hidden.length) plan.hidden = hidden;
  if (additions.length) plan.additions = additions;
  if (toApply !== obj) plan.toApply = toApply;
  return plan;
}

/** Plan the values of one object: no request when nothing can change, else an SSA dry-run (taking back manual kubectl edits). */
async function planValues(client: KubeClient, obj: KubeObject, live: KubeObject | undefined, opts: PlanOptions, strip: FieldSegment[][]): Promise<ObjectPlan> {
  const ref = objectRef(obj);
  if (live && appliedUnchanged(live, obj, opts.fieldManager)) return comparePlan(ref, live, live, opts.mask, strip);
  const onWarning = opts.onWarning && ((w: string): void => opts.onWarning?.(ref, w));
  try {
    const dry = await client.apply(obj, { fieldManager: opts.fieldManager, force: opts.force, dryRun: true, signal: opts.signal, onWarning });
    return comparePlan(ref, live, dry, opts.mask, strip);
  } catch (e) {
    const manual = e instanceof ApplyConflictError && !opts.force && opts.reclaimManualEdits !== false && e.conflicts.length > 0 && e.conflicts.every((c) => isManualEdit(live, c.manager));
    if (!manual) throw e;
    const dry = await client.apply(obj, { fieldManager: opts.fieldManager, force: true, dryRun: true, signal: opts.signal, onWarning });
    const plan = comparePlan(ref, live, dry, opts.mask, strip);
    plan.reclaimed = e.conflicts.map((c) => `${c.manager}: ${c.field}`);
    return plan;
  }
}

interface Attributed {
  field: DriftField;
  segments: FieldSegment[];
  owner: ReturnType<typeof ownersOf>[number] | undefined;
}

/** Changed paths (normaliser form) as attributed drift fields; paths that are additions are left out. */
function attribute(paths: string[], live: KubeObject, own: readonly string[], additions: FieldSegment[][]): Attributed[] {
  const out: Attributed[] = [];
  const added = additions.map((a) => pointerOf(live, a)).filter((p): p is string => p !== undefined);
  for (const p of paths) {
    const path = p.startsWith('.') ? p : `.${p}`;
    const segments = parseFieldPath(path);
    const ptr = pointerOf(live, segments);
    // the removal of an addition shows as a change of it or of its parent: reported once, as the addition
    if (ptr !== undefined && added.some((a) => a === ptr || a.startsWith(`${ptr}/`) || ptr.startsWith(`${a}/`))) continue;
    const owners = ownersOf(live, segments);
    const other = owners.find((o) => !own.includes(o.manager));
    out.push({
      segments,
      owner: other,
      field: { path, change: 'changed', ...(other ? { manager: other.manager, operation: other.operation, time: other.time } : {}), kplay_owns: owners.some((o) => own.includes(o.manager)) },
    });
  }
  return out;
}

/** A copy of `obj` where the fields at `paths` take their value from `live` (fields absent from either are left alone). */
function withLiveValues(obj: KubeObject, live: KubeObject, paths: FieldSegment[][]): KubeObject {
  const copy = structuredClone(obj);
  for (const segs of paths) {
    let src: unknown = live;
    let dst: unknown = copy;
    for (let i = 0; i < segs.length; i++) {
      const seg = segs[i] as FieldSegment;
      const s = childAt(src, seg);
      const d = childAt(dst, seg);
      if (!s || !d) break;
      if (i === segs.length - 1) {
        if (Array.isArray(dst)) dst[Number(d.token)] = structuredClone(s.value);
        else if (isRecord(dst)) dst[d.token] = structuredClone(s.value);
      }
      src = s.value;
      dst = d.value;
    }
  }
  return copy;
}

/** Key of an object in the map returned by {@link fetchLive}. */
export function liveKey(ref: ObjectRef): string {
  return `${ref.apiVersion}|${ref.kind}|${ref.namespace ?? ''}|${ref.name}`;
}

/** Objects of one kind+namespace from which on a LIST is cheaper than a GET each. */
export const LIST_MIN = 3;

/**
 * The live objects of `objects` (namespace-resolved), keyed by {@link liveKey}; absent objects
 * map to `undefined`. One LIST per apiVersion+kind+namespace with at least 3 objects, a GET for the others.
 */
export async function fetchLive(
  client: KubeClient,
  objects: KubeObject[],
  opts: { signal?: AbortSignal; concurrency?: number } = {},
): Promise<Map<string, KubeObject | undefined>> {
  const groups = new Map<string, KubeObject[]>();
  for (const o of objects) {
    const k = `${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}`;
    groups.set(k, [...(groups.get(k) ?? []), o]);
  }
  const out = new Map<string, KubeObject | undefined>();
  const limit = pLimit(opts.concurrency ?? 16);
  await Promise.all(
    [...groups.values()].map((group) =>
      limit(async () => {
        const first = group[0];
        if (!first) return;
        if (group.length < LIST_MIN) {
          for (const o of group) out.set(liveKey(objectRef(o)), await client.get(objectRef(o), opts.signal));
          return;
        }
        const { items } = await client.list(first.apiVersion, first.kind, { namespace: first.metadata.namespace, signal: opts.signal });
        const byName = new Map(items.map((it) => [it.metadata.name ?? '', it]));
        for (const o of group) {
          const live = byName.get(o.metadata.name ?? '');
          out.set(liveKey(objectRef(o)), live ? { ...live, apiVersion: o.apiVersion, kind: o.kind } : undefined);
        }
      }),
    ),
  );
  return out;
}


/**
 * True when `live` holds every field of `want` with the same value (lists: same length, item by
 * item). With `quantities` (built-in kinds), a resource quantity counts as the same when the API
 * server stores the manifest's value as the live one (`cpu: 0.1` and `100m`; see quantity.ts).
 * With `zeros` (built-in kinds), a field of {@link OMITTED_ZERO} with its zero is held by a live
 * object without it.
 */
export function containsFields(live: unknown, want: unknown, quantities = false, key?: string, parent?: string, zeros = false): boolean {
  if (isRecord(want)) return isRecord(live) && Object.entries(want).every(([k, w]) => w === undefined || (zeros && live[k] === undefined && OMITTED_ZERO.get(k) === w) || containsFields(live[k], w, quantities, k, key, zeros));
  if (Array.isArray(want)) return Array.isArray(live) && live.length === want.length && want.every((w, i) => containsFields(live[i], w, quantities, undefined, key, zeros));
  return live === want || (quantities && sameQuantity(live, want, key, parent));
}

/**
 * Fields of built-in kinds the apiserver does not store when zero (Go `omitempty` on a value,
 * not a pointer) and whose absence means that same zero: a manifest's `minReadySeconds: 0`,
 * `initialDelaySeconds: 0`, `readOnly: false` or a subject's `apiGroup: ""` is the live object
 * without the field, and needs no dry-run to tell (charts render them: ingress-nginx's
 * `minReadySeconds: 0`). Only names whose every built-in use has the zero as its meaning when
 * absent (`automountServiceAccountToken: false`, absent meaning true, is not one).
 */
const OMITTED_ZERO: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['minReadySeconds', 0],
  ['initialDelaySeconds', 0],
  ['hostPort', 0],
  ['readOnly', false],
  ['hostNetwork', false],
  ['hostPID', false],
  ['hostIPC', false],
  ['stdin', false],
  ['stdinOnce', false],
  ['tty', false],
  ['paused', false],
  ['publishNotReadyAddresses', false],
  ['apiGroup', ''],
]);

/** API groups whose objects the apiserver stores without {@link OMITTED_ZERO} zeros (custom resources keep them). */
const OMITS_ZEROS = new Set(['', 'apps', 'batch', 'rbac.authorization.k8s.io']);

/**
 * True when every field in `owned` (a managedFields `fieldsV1` tree) is still in `desired`.
 * `live` is walked alongside (same list lengths, see {@link containsFields}) to find list items by their keys.
 */
export function ownedFieldsIn(owned: Record<string, unknown>, desired: unknown, live: unknown): boolean {
  for (const [k, sub] of Object.entries(owned)) {
    if (k === '.') continue;
    let d: unknown;
    let l: unknown;
    if (k.startsWith('f:')) {
      const name = k.slice(2);
      if (!isRecord(desired) || desired[name] === undefined) return false;
      d = desired[name];
      l = isRecord(live) ? live[name] : undefined;
    } else if (k.startsWith('k:') || k.startsWith('v:') || k.startsWith('i:')) {
      if (!Array.isArray(desired) || !Array.isArray(live)) return false;
      let i = -1;
      if (k.startsWith('i:')) i = Number(k.slice(2));
      else {
        let key: unknown;
        try {
          key = JSON.parse(k.slice(2));
        } catch {
          return false;
        }
        if (k.startsWith('v:')) i = live.findIndex((it) => JSON.stringify(it) === JSON.stringify(key));
        else if (isRecord(key)) i = live.findIndex((it) => isRecord(it) && Object.entries(key).every(([kk, kv]) => JSON.stringify(it[kk]) === JSON.stringify(kv)));
      }
      if (!Number.isInteger(i) || i < 0 || i >= desired.length) return false;
      d = desired[i];
      l = live[i];
    } else return false;
    if (isRecord(sub) && !ownedFieldsIn(sub, d, l)) return false;
  }
  return true;
}

/**
 * True when server-side applying `desired` with `fieldManager` cannot change `live`: every
 * field of `desired` is in `live` with the same value (so nothing is set), and every field the
 * manager applied before is still in `desired` (so nothing is removed). Conservative: anything
 * it cannot tell (another apiVersion, a quantity in a form it does not model, an object being deleted)
 * answers false, and the caller falls back to a dry-run.
 */
export function appliedUnchanged(live: KubeObject, desired: KubeObject, fieldManager: string): boolean {
  if (live.metadata.deletionTimestamp) return false;
  const { apiVersion, kind, status, ...wanted } = desired;
  void apiVersion;
  void kind;
  void status;
  if (!containsFields(live, wanted, normalisesQuantities(desired.apiVersion), undefined, undefined, OMITS_ZEROS.has(splitApiVersion(desired.apiVersion).group))) return false;
  const entries = Array.isArray(live.metadata.managedFields) ? live.metadata.managedFields : [];
  for (const e of entries) {
    if (!isRecord(e) || e.manager !== fieldManager || e.operation !== 'Apply' || (e.subresource !== undefined && e.subresource !== '')) continue;
    if (e.apiVersion !== desired.apiVersion) return false;
    if (e.fieldsV1 !== undefined && (!isRecord(e.fieldsV1) || !ownedFieldsIn(e.fieldsV1, desired, live))) return false;
  }
  return true;
}

/** Build the plan from a live object (or none) and the dry-run result. */
export function comparePlan(ref: ObjectRef, live: KubeObject | undefined, dry: KubeObject, mask?: (s: string) => string, strip: FieldSegment[][] = []): ObjectPlan {
  const nLive = live ? normalize(live) : undefined;
  // The live object is what applying leaves (`appliedUnchanged`, the no-op): normalised once.
  const asLive = dry === live && strip.length === 0;
  // fields other managers added are removed when the plan is carried out
  const nDesired = asLive && nLive ? nLive : strip.length ? withoutFields(normalize(dry), strip) : normalize(dry);
  const action: ObjectPlan['action'] = !nLive ? 'create' : asLive || sameObject(nLive, nDesired) ? 'unchanged' : 'update';
  const masked = maskPair(nLive, nDesired);
  const paths = !nLive ? [] : action === 'unchanged' ? [] : changedPaths(nLive, nDesired);
  // The diff (two YAML renderings) is only computed when read: most objects are unchanged and
  // their diff is never shown.
  let diff: DiffEntry | undefined;
  return {
    ref,
    action,
    live: masked.before,
    desired: masked.after,
    get diff(): DiffEntry {
      diff ??= diffEntry(labelOf(ref), action === 'unchanged' ? masked.after : masked.before, masked.after, mask);
      return diff;
    },
    set diff(d: DiffEntry) {
      diff = d;
    },
    changedPaths: paths,
  };
}

/**
 * Plan server-side applying `objects` (results in the same order). Objects are planned
 * concurrently (at most `concurrency`); a conflict (without `force`) rejects with `ApplyConflictError`.
 */
export async function planApply(client: KubeClient, objects: KubeObject[], opts: PlanOptions): Promise<ObjectPlan[]> {
  const limit = pLimit(opts.concurrency ?? 16);
  const resolved = await Promise.all(objects.map((o) => resolveNamespace(client, o, opts.defaultNamespace)));
  const lives = await fetchLive(client, resolved, { signal: opts.signal, concurrency: opts.concurrency });
  return Promise.all(
    resolved.map((obj) =>
      limit(async () => {
        opts.signal?.throwIfAborted();
        return planOne(client, obj, opts, { live: lives.get(liveKey(objectRef(obj))) });
      }),
    ),
  );
}

/**
 * True when carrying out a plan only means removing fields other managers added (no value to
 * set, nothing reclaimed): no server-side apply is needed, only the removal patch.
 */
export function removesOnlyAdditions(plan: ObjectPlan): boolean {
  return plan.action === 'update' && plan.live !== undefined && plan.reclaimed === undefined && (plan.additions?.length ?? 0) > 0 && !(plan.drift ?? []).some((d) => d.change === 'changed');
}

/** The drift of one object: what differs from the desired state, attributed; and what rules hid. */
export interface ObjectDrift {
  kind: string;
  apiVersion: string;
  name: string;
  namespace?: string;
  /** `update` (fields differ), `create` (the object is missing), `delete` (it should not exist). */
  action: ObjectPlan['action'];
  fields: DriftField[];
  hidden: HiddenField[];
}

/** Drift of the objects of a plan that differ or had drift hidden by rules (registered as `drift`). */
export function driftOf(plans: readonly ObjectPlan[]): ObjectDrift[] {
  return plans
    .filter((p) => p.action !== 'unchanged' || (p.hidden?.length ?? 0) > 0)
    .map((p) => ({ kind: p.ref.kind, apiVersion: p.ref.apiVersion, name: p.ref.name, ...(p.ref.namespace ? { namespace: p.ref.namespace } : {}), action: p.action, fields: p.drift ?? [], hidden: p.hidden ?? [] }));
}
