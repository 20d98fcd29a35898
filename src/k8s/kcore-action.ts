/**
 * kubernetes.core's `perform_action` (module_utils/k8s/runner.py) for one resource definition, on
 * kplay's client and engines: what `k8s` and `k8s_service` do with each object. Create (POST), update
 * (strategic merge, then JSON merge patch), replace (PUT) and apply (server-side, `applyObjects`),
 * each sent as a dry-run first so nothing is written when nothing would change; delete with
 * `delete_options`; `wait` through `waitLikeKcore`.
 */
import { applyObjects } from './apply/index.js';
import { ApplyConflictError, KubeApiError } from './errors.js';
import { asList, definitionHash, hideFields, selectorsMatch, waitLikeKcore, type WaitCondition } from './kcore.js';
import { diffEntry, maskObject, normalize as normalizeObject, secretValues } from './normalize.js';
import { findResource } from './kcore-kind.js';
import { labelOf } from './object-plan.js';
import type { KubeClient, KubeObject, ObjectRef, ResourceInfo } from './types.js';
import { waitFor } from './wait.js';
import { errorMessage } from '../load/errors.js';
import type { DiffEntry, ModuleContext } from '../core/module.js';
import { isRecord } from '../core/shape.js';

/** The module arguments `perform_action` reads (kubernetes.core's names, after defaults). */
export interface KcoreActionParams {
  state: 'present' | 'absent' | 'patched';
  apply: boolean;
  force: boolean;
  append_hash: boolean;
  server_side_apply?: { field_manager: string; force_conflicts: boolean };
  delete_options?: { propagationPolicy?: 'Foreground' | 'Background' | 'Orphan'; gracePeriodSeconds?: number; preconditions?: { resourceVersion?: string; uid?: string } };
  label_selectors?: string | string[];
  hidden_fields?: string[];
  wait: boolean;
  wait_timeout: number;
  wait_condition?: WaitCondition;
}

/** The result of one definition (kubernetes.core's per-object result). */
export type KcoreItem = {
  changed: boolean;
  result: Record<string, unknown> | Record<string, unknown>[];
  method?: 'create' | 'update' | 'replace' | 'apply' | 'delete';
  diff?: DiffEntry;
  /** kubernetes.core's registered `diff` (with `--diff`, for update/replace/apply): `{before, after}` of the keys that differ, `{}` when none. */
  kdiff?: Record<string, unknown>;
  duration?: number;
  warnings?: string[];
  msg?: string;
  error?: Record<string, unknown>;
};

/** A failure of one object, with what kubernetes.core registers with it (`reason`, partial result). */
export class KcoreObjectFailure extends Error {
  constructor(
    msg: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(msg);
  }
}

export { findResource } from './kcore-kind.js';

/** HTTP reason phrases, as the Python client reports them in `reason`. */
export const HTTP_REASON: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** What kubernetes.core's `perform_action` does for one definition. */
export async function performAction(client: KubeClient, def: Record<string, unknown>, args: KcoreActionParams, mergeTypes: string[], ctx: ModuleContext): Promise<KcoreItem> {
  const named = typeof def.kind === 'string' ? def.kind : undefined;
  const asked = typeof def.apiVersion === 'string' ? def.apiVersion : String(def.apiVersion);
  const info = named ? await findResource(client, asked, named) : undefined;
  if (!named || !info) throw new KcoreObjectFailure(`Failed to find exact match for ${asked}.${String(named)} by [kind, name, singularName, shortNames]`);
  const apiVersion = asked === 'v1' ? groupVersion(info) : asked;
  // the kind as discovery names it (a task may have named it `cm` or `configmaps`)
  const kind = info.kind;
  def.apiVersion = apiVersion;
  def.kind = kind;
  const md = def.metadata as Record<string, unknown>;
  if (args.append_hash) {
    const hash = definitionHash(def);
    if (hash && typeof md.name === 'string' && md.name) md.name = `${md.name}-${hash}`;
    else if (hash && typeof md.generateName === 'string' && md.generateName) md.generateName = `${md.generateName}-${hash}`;
  }
  const name = typeof md.name === 'string' && md.name ? md.name : undefined;
  const namespace = info.namespaced && typeof md.namespace === 'string' && md.namespace ? md.namespace : undefined;
  if (!info.namespaced) delete md.namespace;
  const selectors = asList(args.label_selectors);
  const ref: ObjectRef = { apiVersion, kind, name: name ?? '', namespace };
  const hidden = args.hidden_fields;
  const show = (o: KubeObject | Record<string, unknown>): Record<string, unknown> => {
    const copy = { ...o } as Record<string, unknown>;
    for (const v of secretValues(copy as unknown as KubeObject)) ctx.addSecret(v);
    return hideFields(copy, hidden);
  };
  const diffOf = (before: KubeObject | undefined, after: KubeObject | undefined): DiffEntry => diffEntry(labelOf(ref), before && maskObject(normalizeObject(before)), after && maskObject(normalizeObject(after)), (s) => ctx.mask(s));
  const warnings: string[] = [];
  const onWarning = (w: string): void => void warnings.push(ctx.mask(w));
  // A namespaced object without a namespace cannot be read (kubernetes.core reads no such path).
  // a read the apiserver refuses (403) fails as kubernetes.core's `retrieve` does: its words, and the `reason`
  const existing = name && (namespace || !info.namespaced) ? await client.get(ref, ctx.signal).catch((e: unknown) => Promise.reject(apiFailure('Failed to retrieve requested object', e))) : undefined;

  if (args.state === 'absent') {
    let targets: KubeObject[] = existing ? [existing] : [];
    if (!name && selectors.length) targets = (await client.list(apiVersion, kind, { namespace, labelSelector: selectors.join(','), signal: ctx.signal })).items;
    const item: KcoreItem = { changed: targets.length > 0, result: {}, method: 'delete' };
    const results: Record<string, unknown>[] = [];
    for (const t of targets) {
      const tref: ObjectRef = { apiVersion, kind, name: t.metadata.name ?? '', namespace: t.metadata.namespace };
      let answer: unknown;
      try {
        const o = args.delete_options ?? {};
        await client.delete(tref, { dryRun: ctx.checkMode, signal: ctx.signal, propagationPolicy: o.propagationPolicy, gracePeriodSeconds: ctx.checkMode ? undefined : o.gracePeriodSeconds, preconditions: ctx.checkMode ? undefined : o.preconditions, onResponse: (b) => (answer = b) });
      } catch (e) {
        const failure = apiFailure('Failed to delete object', e);
        // the objects deleted before this one (by selectors) are changes all the same
        if (failure instanceof KcoreObjectFailure && results.length && !ctx.checkMode) Object.assign(failure.extra, { changed: true, result: results, method: 'delete' });
        throw failure;
      }
      // the apiserver's answer (the object being deleted, or a Status), the dry-run's in check mode
      results.push(isRecord(answer) ? show(answer) : {});
    }
    // by selectors: the list of what was deleted; nothing matched (or by name): the object or {}, as kubernetes.core
    item.result = !name && selectors.length && results.length ? results : (results[0] ?? {});
    if (targets.length) item.diff = diffOf(targets[0], undefined);
    if (args.wait && !ctx.checkMode) {
      const started = Date.now();
      const w = await waitFor(client, targets.map((t) => ({ apiVersion, kind, name: t.metadata.name, namespace: t.metadata.namespace })), { type: 'absent' }, { timeoutMs: args.wait_timeout * 1000, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
      item.duration = Math.round((Date.now() - started) / 1000);
      if (!w.ok) throw new KcoreObjectFailure(`"${kind}" "${name ?? ''}": Timed out waiting on resource`, { changed: item.changed, result: item.result, method: 'delete', duration: item.duration });
    }
    return item;
  }

  if (selectors.length && !selectorsMatch(selectors, def)) {
    return { changed: false, result: {}, msg: `resource 'kind=${kind},name=${String(md.name ?? null)},namespace=${String(md.namespace ?? null)}' filtered by label_selectors.` };
  }
  if (info.namespaced && !namespace) {
    const verb = args.apply ? 'apply' : existing || args.state === 'patched' ? 'patch' : 'create';
    if (args.state === 'patched') return { changed: false, result: {}, warnings: [`resource 'kind=${kind},name=${String(md.name ?? null)}' was not found but will not be created as 'state' parameter has been set to 'patched'`] };
    throw new KcoreObjectFailure(`Failed to ${verb} object: Namespace is required for ${apiVersion}.${kind}`);
  }
  const obj = def as unknown as KubeObject;
  let item: KcoreItem;
  if (args.apply) item = await applyServerSide(client, obj, existing, args, ctx, onWarning, show, diffOf);
  else if (!existing) {
    if (args.state === 'patched') return { changed: false, result: {}, warnings: [`resource 'kind=${kind},name=${String(md.name ?? null)}' was not found but will not be created as 'state' parameter has been set to 'patched'`] };
    let created: KubeObject;
    try {
      created = await client.create(obj, { dryRun: ctx.checkMode, signal: ctx.signal, onWarning });
    } catch (e) {
      throw apiFailure('Failed to create object', e);
    }
    ref.name = created.metadata.name ?? ref.name;
    item = { changed: true, result: show(created), method: 'create', diff: diffOf(undefined, created) };
  } else if (args.force) {
    const body: KubeObject = { ...obj, metadata: { ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } };
    item = await writeIfChanged('replace', existing, (dryRun) => client.replace(body, { dryRun, signal: ctx.signal, onWarning }), ctx, show, diffOf, 'Failed to replace object', hidden);
  } else {
    const types = mergeTypes.length ? mergeTypes : ['strategic-merge', 'merge'];
    const patch = (dryRun: boolean): Promise<KubeObject> => patchInTurn(client, ref, def, types, dryRun, ctx.signal, onWarning);
    item = await writeIfChanged('update', existing, patch, ctx, show, diffOf, 'Failed to patch object', hidden, () => client.get(ref, ctx.signal));
  }
  if (warnings.length) item.warnings = [...(item.warnings ?? []), ...new Set(warnings)];
  if (args.wait && !ctx.checkMode) await waitPresent(client, { ...ref, name: ref.name }, item, args, ctx, show);
  return item;
}

/**
 * Write only when the server's dry-run of the write differs from the live object (honest `changed`).
 * With `reread`: when the dry-run answers with another resourceVersion than `live`'s, the object
 * was changed since it was read (a controller's annotation or status, e.g. a new Deployment's
 * `deployment.kubernetes.io/revision`), so it is read again and the dry-run compared with that.
 * A write counts as a change as kubernetes.core counts it ({@link kcoreVerdict}): with `hidden`
 * fields (`hidden_fields`), a write that changed only those is `ok`, with kubernetes.core's warning.
 */
export async function writeIfChanged(
  method: 'update' | 'replace',
  live: KubeObject,
  write: (dryRun: boolean) => Promise<KubeObject>,
  ctx: Pick<ModuleContext, 'checkMode'>,
  show: (o: KubeObject) => Record<string, unknown>,
  diffOf: (a: KubeObject | undefined, b: KubeObject | undefined) => DiffEntry,
  failure: string,
  hidden: readonly string[] | undefined,
  reread?: () => Promise<KubeObject | undefined>,
): Promise<KcoreItem> {
  try {
    let dry = await write(true);
    for (let i = 0; reread && i < 3 && !sameObject(live, dry) && dry.metadata.resourceVersion !== live.metadata.resourceVersion; i++) {
      const now = await reread();
      if (!now) break;
      live = now;
      if (now.metadata.resourceVersion !== dry.metadata.resourceVersion) dry = await write(true);
    }
    if (sameObject(live, dry)) return { changed: false, result: show(live), method, kdiff: {} };
    const after = ctx.checkMode ? dry : await write(false);
    const verdict = kcoreVerdict(live, after, hidden);
    return { changed: verdict.changed, result: show(after), method, diff: diffOf(live, after), kdiff: registeredDiff(show, live, after, verdict.changed, hidden), ...(verdict.warning ? { warnings: [verdict.warning] } : {}) };
  } catch (e) {
    throw apiFailure(failure, e);
  }
}

/**
 * Ansible's `recursive_diff` (module_utils/common/dict_transformations.py), which kubernetes.core
 * registers as `diff`: the keys only one side has, and those whose values differ (maps compared
 * key by key); `undefined` when the two are equal.
 * @example recursiveDiff({ a: 1, b: { c: 1, d: 2 } }, { a: 1, b: { c: 2, d: 2 } }) // [{ b: { c: 1 } }, { b: { c: 2 } }]
 */
export function recursiveDiff(a: Record<string, unknown>, b: Record<string, unknown>): [Record<string, unknown>, Record<string, unknown>] | undefined {
  const left: Record<string, unknown> = {};
  const right: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(a)) if (!(k in b)) left[k] = v;
  for (const [k, v] of Object.entries(b)) if (!(k in a)) right[k] = v;
  for (const k of Object.keys(a)) {
    if (!(k in b)) continue;
    const x = a[k];
    const y = b[k];
    if (isRecord(x) && isRecord(y)) {
      const d = recursiveDiff(x, y);
      if (d) {
        left[k] = d[0];
        right[k] = d[1];
      }
    } else if (JSON.stringify(x) !== JSON.stringify(y)) {
      left[k] = x;
      right[k] = y;
    }
  }
  return Object.keys(left).length || Object.keys(right).length ? [left, right] : undefined;
}

const IGNORED_METADATA = new Set(['generation', 'resourceVersion']);

/**
 * kubernetes.core's `diff_objects` verdict on a write (module_utils/k8s/service.py): the raw objects
 * before and after differ outside the `hidden` fields, and by more than `metadata.generation` and
 * `metadata.resourceVersion` (which alone are no change, with a warning). So a write whose only
 * change is in a hidden field (`hidden_fields: [data, metadata.managedFields]`) is no change.
 * @example kcoreVerdict(live, written, ['data', 'metadata.managedFields']) // { changed: false, warning: 'No meaningful diff …' }
 */
export function kcoreVerdict(before: KubeObject | Record<string, unknown>, after: KubeObject | Record<string, unknown>, hidden: readonly string[] | undefined): { changed: boolean; warning?: string; diff: Record<string, unknown> } {
  const d = recursiveDiff(before as Record<string, unknown>, after as Record<string, unknown>);
  if (!d) return { changed: false, diff: {} };
  const b = hideFields(d[0], hidden);
  const a = hideFields(d[1], hidden);
  const diff = { before: b, after: a };
  const onlyMetadata = (o: Record<string, unknown>): boolean => Object.keys(o).length === 1 && isRecord(o.metadata) && Object.keys(o.metadata).every((k) => IGNORED_METADATA.has(k));
  if (onlyMetadata(a) && onlyMetadata(b)) return { changed: false, warning: 'No meaningful diff was generated, but the API may not be idempotent (only metadata.generation or metadata.resourceVersion were changed)', diff };
  return { changed: true, diff };
}

/**
 * The registered diff of a write: {@link kcoreDiff} (without server bookkeeping); when that is empty
 * although the write is a change (it changed only bookkeeping and hidden fields, e.g. the
 * managedFields of an apply), kubernetes.core's own diff (Secret data masked), so a change always
 * has `before`/`after`.
 */
function registeredDiff(show: (o: KubeObject) => Record<string, unknown>, before: KubeObject | undefined, after: KubeObject, changed: boolean, hidden: readonly string[] | undefined): Record<string, unknown> {
  const d = kcoreDiff(show, before, after);
  if (!changed || Object.keys(d).length || !before) return d;
  return kcoreVerdict(maskObject(before), maskObject(after), hidden).diff;
}

/** kubernetes.core's registered diff of two states of an object (normalized: no managedFields or resourceVersion noise; Secret data masked; `hidden_fields` left out by `show`). */
export function kcoreDiff(show: (o: KubeObject) => Record<string, unknown>, before: KubeObject | undefined, after: KubeObject | undefined): Record<string, unknown> {
  const side = (o: KubeObject | undefined): Record<string, unknown> => (o ? show(maskObject(normalizeObject(o))) : {});
  const d = recursiveDiff(side(before), side(after));
  return d ? { before: d[0], after: d[1] } : {};
}

const sameObject = (a: KubeObject, b: KubeObject): boolean => JSON.stringify(normalizeObject(a)) === JSON.stringify(normalizeObject(b));

/** Patch with each merge type in turn until one is accepted (kubernetes.core's `update`). */
async function patchInTurn(client: KubeClient, ref: ObjectRef, def: Record<string, unknown>, types: string[], dryRun: boolean, signal: AbortSignal, onWarning: (w: string) => void): Promise<KubeObject> {
  let last: unknown;
  for (const t of types) {
    try {
      return await client.mergePatch(ref, def, { dryRun, signal, strategic: t === 'strategic-merge', onWarning });
    } catch (e) {
      if (!(e instanceof KubeApiError)) throw e;
      last = e;
    }
  }
  throw last instanceof Error ? last : new Error('no merge type');
}

/** `apply: true`: server-side apply with kplay's engine (`applyObjects`: dry-run first, no write when unchanged). */
async function applyServerSide(
  client: KubeClient,
  obj: KubeObject,
  existing: KubeObject | undefined,
  args: KcoreActionParams,
  ctx: ModuleContext,
  onWarning: (w: string) => void,
  show: (o: KubeObject) => Record<string, unknown>,
  diffOf: (a: KubeObject | undefined, b: KubeObject | undefined) => DiffEntry,
): Promise<KcoreItem> {
  const ssa = args.server_side_apply;
  try {
    const [r] = await applyObjects(client, [obj], {
      fieldManager: ssa?.field_manager ?? 'kplay',
      // without server_side_apply kubernetes.core applies client-side, which sets the definition's fields whoever
      // set them before (no conflicts): taking them over is the same outcome
      force: ssa ? ssa.force_conflicts : true,
      defaultNamespace: obj.metadata.namespace ?? 'default',
      checkMode: ctx.checkMode,
      signal: ctx.signal,
      mask: (s) => ctx.mask(s),
      log: (m) => ctx.log.info(m),
      warn: onWarning,
    });
    if (!r) throw new Error('nothing applied');
    const live = ctx.checkMode ? undefined : await client.get(r.ref, ctx.signal);
    // a write over an existing object: a change as kubernetes.core counts it (hidden fields left out)
    const verdict = r.action !== 'unchanged' && existing && live ? kcoreVerdict(existing, live, args.hidden_fields) : { changed: r.action !== 'unchanged', diff: {} };
    const changed = verdict.changed;
    const shown = live ?? (changed ? (r.plan.desired ?? r.object) : existing) ?? obj;
    return { changed, result: show(shown), method: 'apply', diff: changed ? r.plan.diff : diffOf(existing, existing), kdiff: r.action !== 'unchanged' ? registeredDiff(show, existing, shown, changed, args.hidden_fields) : {}, ...(verdict.warning ? { warnings: [verdict.warning] } : {}) };
  } catch (e) {
    if (e instanceof ApplyConflictError) throw new KcoreObjectFailure(`Failed to apply object: ${e.message}`, { reason: 'Conflict' });
    throw apiFailure('Failed to apply object', e);
  }
}

/** `wait` for a present object (see `waitLikeKcore`); the result becomes the object as last seen. */
async function waitPresent(client: KubeClient, ref: ObjectRef, item: KcoreItem, args: KcoreActionParams, ctx: ModuleContext, show: (o: KubeObject) => Record<string, unknown>): Promise<void> {
  const w = await waitLikeKcore(client, ref, { condition: args.wait_condition, timeoutSeconds: args.wait_timeout, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
  item.duration = w.duration;
  if (w.object) item.result = show(w.object);
  if (!w.ok) throw new KcoreObjectFailure(`"${ref.kind}" "${ref.name}": Timed out waiting on resource`, { changed: item.changed, result: item.result, method: item.method, duration: item.duration, ...(w.msg ? { wait_msg: ctx.mask(w.msg) } : {}) });
}

/** A failed API call as kubernetes.core words it (`Failed to create object: …`, `reason`; no `status`, which only k8s_json_patch registers). */
function apiFailure(prefix: string, e: unknown): Error {
  if (e instanceof KcoreObjectFailure || (e instanceof Error && e.name === 'UnreachableError')) return e;
  if (e instanceof KubeApiError) return new KcoreObjectFailure(`${prefix}: ${e.message}`, { reason: HTTP_REASON[e.status] ?? e.reason });
  return new KcoreObjectFailure(`${prefix}: ${errorMessage(e)}`);
}

/**
 * {@link findResource} for the modules that name a kind: the kind's discovery and the apiVersion
 * to address it with (`apps/v1` for `v1` + `Deployment`); throws discovery's error when none.
 * @example const { info, apiVersion } = await kcoreResource(client, 'v1', 'Deployment');
 */
export async function kcoreResource(client: KubeClient, apiVersion: string, kind: string): Promise<{ info: ResourceInfo; apiVersion: string }> {
  const info = (await findResource(client, apiVersion, kind)) ?? (await client.resource(apiVersion, kind));
  return { info, apiVersion: apiVersion === 'v1' ? groupVersion(info) : apiVersion };
}

/** The `apiVersion` of a discovered kind (`apps/v1`, `v1`). */
export const groupVersion = (info: ResourceInfo): string => (info.group ? `${info.group}/${info.version}` : info.version);

