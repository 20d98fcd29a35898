/**
 * `state: rollback`: roll a release back to the previous revision or a given one, idempotently.
 * The release's revisions are read from helm's storage records (helm only for storage drivers
 * kplay cannot read); helm runs only when the newest revision is not already what the target
 * revision holds (chart, user-supplied values and rendered manifest, and `deployed`).
 */
import { planApply } from '../k8s/object-plan.js';
import type { DiffEntry, ModuleContext, ModuleResult } from '../core/module.js';
import { HelmError } from './errors.js';
import { isKept, removedObjects } from './manifests.js';
import type { ReleaseInfo } from './release.js';
import { readStoredHistory } from './storage.js';
import { dataOf, deleteEntries, describeHelmError, noteRevisions, readRelease, recoverPending, releaseLabel, releaseText, rethrowUnreachable, statusAfter, storedObjects, withNamespaces, type ReleaseData, type Target } from './target.js';
import { secretValues, valuesEqual } from './values.js';

/** What a rollback needs from the task's arguments. */
export interface RollbackArgs {
  /** Module name, for messages. */
  module: string;
  /** The revision to go back to; the previous one when unset or 0. */
  revision?: number;
  wait: boolean;
  timeout?: number;
  on_pending: 'fail' | 'rollback';
}

/** What a rollback registers besides the release: where it went from and to. */
export interface RollbackData extends ReleaseData {
  /** The revision whose chart and values the release now has (or would have, in check mode). */
  rolled_back_to?: number;
  /** The revision the release was at before the rollback. */
  rolled_back_from?: number;
}

/** The revisions of a release, oldest first, each loaded on demand. */
interface History {
  revisions: number[];
  load: (revision: number) => Promise<ReleaseInfo | undefined>;
}

/** Every revision of the release: from the storage records (one LIST), else `helm history` + `helm status/get values --revision`. */
async function readHistory(t: Target, signal: AbortSignal): Promise<History> {
  if (t.storage) {
    const records = await readStoredHistory(await t.client(), t.storage, t.name, t.ns, signal);
    const byRevision = new Map(records.map((r) => [r.revision, r]));
    return { revisions: records.map((r) => r.revision), load: (rev) => Promise.resolve(byRevision.get(rev)) };
  }
  const helm = await t.helm();
  const entries = await helm.history(t.name, t.ns, { signal });
  return {
    revisions: entries.map((e) => e.revision),
    load: async (rev) => {
      const info = await helm.status(t.name, t.ns, { signal }, rev);
      return info && { ...info, config: await helm.getValues(t.name, t.ns, { signal }, rev) };
    },
  };
}

/** helm's description of a revision made by `helm rollback`: `Rollback to 3`. */
export function rolledBackTo(description: string): number | undefined {
  const m = /^Rollback to (\d+)\b/.exec(description.trim());
  return m?.[1] ? Number(m[1]) : undefined;
}

/**
 * The revision a rollback goes to: `wanted` when given (> 0); else the previous one — and when the
 * newest revision is itself a rollback, the revision it rolled back to, so that running the
 * same task again changes nothing. `undefined`: nothing to roll back to (a single revision).
 */
export function rollbackTarget(current: { revision: number; description: string }, revisions: readonly number[], wanted: number | undefined): number | undefined {
  if (wanted !== undefined && wanted > 0) return wanted;
  const again = rolledBackTo(current.description);
  if (again !== undefined) return again;
  const older = revisions.filter((r) => r < current.revision);
  return older[older.length - 1];
}

/** Whether `current` already is what rolling back to `target` makes: deployed, same chart, values and manifest. */
export function sameAsTarget(current: ReleaseInfo, target: ReleaseInfo): boolean {
  return (
    current.status === 'deployed' &&
    current.chart === target.chart &&
    current.chartVersion === target.chartVersion &&
    valuesEqual(current.config, target.config) &&
    current.manifest.trim() === target.manifest.trim()
  );
}

/**
 * Roll release `t.name` back (see {@link rollbackTarget}). `ok` when the newest revision already
 * has the target's chart, values and manifest; `failed` with what to do next when the release is
 * not installed or the revision is not in its history.
 */
export async function runRollback(args: RollbackArgs, ctx: ModuleContext, t: Target): Promise<ModuleResult<RollbackData>> {
  const { name, ns } = t;
  const signal = ctx.signal;
  const cluster = ctx.cluster.name;
  const first = await readRelease(t, signal);
  if (!first) {
    return {
      status: 'failed',
      msg: `${args.module}: release ${ns}/${name} is not installed on cluster ${cluster}: nothing to roll back. Check name and namespace (helm list -n ${ns}), or install it with state: present.`,
      data: dataOf(undefined, undefined, name, ns, []),
    };
  }
  const pending = await recoverPending(args, t, first, { checkMode: ctx.checkMode, signal, info: (m) => ctx.log.info(m) });
  if (pending.kind === 'failed') return { status: 'failed', msg: pending.msg, data: dataOf(first, undefined, name, ns, []) };
  const done = pending.done;
  if (!pending.release) return { status: 'changed', msg: `${done.join('; ')}; nothing left to roll back on cluster ${cluster}`, data: dataOf(undefined, undefined, name, ns, []) };

  const history = await readHistory(t, signal);
  // In check mode a pending revision was not rolled back: plan from it as if it had been.
  const current = (await history.load(pending.release.revision)) ?? pending.release;
  for (const s of secretValues(current.config)) ctx.addSecret(s);
  const to = rollbackTarget(current, history.revisions, args.revision);
  const prefix = done.length ? `${done.join('; ')}; ` : '';
  const unchanged = async (msg: string, extra: Partial<RollbackData> = {}): Promise<ModuleResult<RollbackData>> => ({
    status: done.length ? 'changed' : 'ok',
    msg: `${prefix}${msg}`,
    data: { ...dataOf(current, undefined, name, ns, await withNamespaces(t, storedObjects(current, name, ns))), ...extra },
  });
  if (to === undefined) return unchanged(`release ${ns}/${name} has no revision before revision ${current.revision} on cluster ${cluster}: nothing to roll back to`);
  const target = history.revisions.includes(to) ? await history.load(to) : undefined;
  if (!target) {
    if ((args.revision === undefined || args.revision === 0) && current.status === 'deployed') {
      // the newest revision is a rollback to a revision helm has since pruned: it is done
      return unchanged(`release ${ns}/${name} is already rolled back to revision ${to} (revision ${current.revision}, ${current.status})`, { rolled_back_to: to });
    }
    return {
      status: 'failed',
      msg: `${args.module}: revision ${to} of release ${ns}/${name} is not in its history on cluster ${cluster} (revisions kept: ${history.revisions.join(', ')}; helm keeps --history-max, 10 by default). Pick one of them (helm history ${name} -n ${ns})${args.revision ? ', or leave revision unset for the previous one' : ` as revision: the newest revision ${current.revision} (${current.status}) was a rollback to it`}.`,
      data: dataOf(current, undefined, name, ns, storedObjects(current, name, ns)),
    };
  }
  for (const s of secretValues(target.config)) ctx.addSecret(s);
  const rollback = { rolled_back_to: to, rolled_back_from: current.revision };
  if (sameAsTarget(current, target)) {
    return unchanged(`release ${ns}/${name} already has revision ${to}'s chart and values (${current.chart} ${current.chartVersion}, revision ${current.revision})`, { rolled_back_to: to });
  }

  const from = `${current.chart} ${current.chartVersion}`;
  const what = `roll back ${ns}/${name} from revision ${current.revision} (${from}, ${current.status}) to revision ${to} (${target.chart} ${target.chartVersion})`;
  const targetObjects = storedObjects(target, name, ns);
  let diff: DiffEntry[] | undefined;
  if (ctx.diffMode) {
    const mask = (s: string): string => ctx.mask(s);
    const plans = await planApply(await t.client(), targetObjects, { fieldManager: 'helm', force: true, defaultNamespace: ns, signal, mask });
    const before = releaseText(`${current.chart}-${current.chartVersion}`, current.config);
    const after = releaseText(`${target.chart}-${target.chartVersion}`, target.config, current.config);
    diff = [
      ...(before !== after ? [{ label: releaseLabel(ns, name), before: mask(before), after: mask(after) }] : []),
      ...plans.filter((p) => p.action !== 'unchanged').map((p) => p.diff),
      ...deleteEntries(removedObjects(storedObjects(current, name, ns), targetObjects, ns).filter((o) => !isKept(o)), ns, mask),
    ];
  }
  if (ctx.checkMode) {
    return { status: 'changed', msg: `${prefix}would ${what}`, data: { ...dataOf(current, undefined, name, ns, await withNamespaces(t, targetObjects)), ...rollback }, diff };
  }

  ctx.log.info(`${prefix}${what}`);
  ctx.log.progress(`helm rollback ${name} ${to}${args.wait ? ', waiting' : ''}`);
  const helm = await t.helm();
  try {
    await helm.rollback(name, ns, to, { wait: args.wait, timeout: args.timeout, forceConflicts: current.applyMethod === 'ssa' && target.applyMethod === 'ssa' }, { signal });
  } catch (e) {
    rethrowUnreachable(e, cluster);
    if (!(e instanceof HelmError)) throw e;
    const after = await statusAfter(helm, name, ns);
    const { release: now, text: state } = after;
    noteRevisions(t, first, after);
    const msg = e.interrupted ? `interrupted: helm rollback was stopped (SIGTERM) and has exited; ${state}` : `${prefix}${describeHelmError(e)}; ${state}`;
    return { status: 'failed', msg: ctx.mask(msg), data: { ...dataOf(now, undefined, name, ns, targetObjects), ...rollback }, diff };
  }
  const after = (await readRelease(t, signal)) ?? target;
  return {
    status: 'changed',
    msg: `${prefix}rolled back ${ns}/${name} from revision ${current.revision} (${from}) to revision ${to} (${target.chart} ${target.chartVersion}): now revision ${after.revision}`,
    data: { ...dataOf(after, undefined, name, ns, await withNamespaces(t, storedObjects(after, name, ns))), ...rollback },
    diff,
  };
}
