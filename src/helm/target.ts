/**
 * What the release operations (install/upgrade, uninstall, rollback) share: the task's target
 * (kube client, helm on first use, storage driver), reading the newest revision, the registered
 * data, diff texts, and helm failure handling.
 */
import YAML from 'yaml';
import { resolveNamespace, labelOf, objectRef, type ObjectDrift } from '../k8s/object-plan.js';
import { diffEntry, maskObject } from '../k8s/normalize.js';
import type { KubeClient, KubeObject } from '../k8s/types.js';
import { UnreachableError, type DiffEntry } from '../core/module.js';
import type { WrittenEntry } from '../core/results.js';
import type { HelmCli } from './cli.js';
import { HelmError } from './errors.js';
import { objectSummaries, parseRendered, withHelmOwnership } from './manifests.js';
import { lastGoodRevision, PENDING_STATUSES, type ChartMeta, type ReleaseInfo } from './release.js';
import { readStoredRelease, type StorageKind, type StoredChart } from './storage.js';
import { canonicalValuesJson, maskSecretValues, type Values } from './values.js';

/** What the engine registers (`helm_release`'s result). */
export interface ReleaseData {
  [key: string]: unknown;
  name: string;
  namespace: string;
  revision: number;
  chart: string;
  chart_version: string;
  app_version: string;
  status: string;
  objects: { kind: string; name: string; namespace?: string }[];
  drift?: ObjectDrift[];
}

/** A failure to report as the task result (not a bug). */
export class TaskFailure extends Error {}

/** Throw a {@link TaskFailure}. */
export const fail = (msg: string): never => {
  throw new TaskFailure(msg);
};

/** The diff label of a release. */
export function releaseLabel(ns: string, name: string): string {
  return `helm release ${ns}/${name}`;
}

/** The release summary shown in diffs: chart and (masked) user-supplied values. */
export function releaseText(chart: string | undefined, values: Values | undefined, previous?: Values): string {
  if (chart === undefined) return '';
  const sorted: unknown = JSON.parse(canonicalValuesJson(maskSecretValues(values ?? {}, previous ?? {})));
  return YAML.stringify({ chart, values: sorted }, { lineWidth: 0 });
}

/** The registered data of a release revision. */
export function dataOf(release: ReleaseInfo | undefined, chart: ChartMeta | undefined, name: string, ns: string, objects: KubeObject[]): ReleaseData {
  return {
    name,
    namespace: ns,
    revision: release?.revision ?? 0,
    chart: chart?.name ?? release?.chart ?? '',
    chart_version: chart?.version ?? release?.chartVersion ?? '',
    app_version: chart?.appVersion ?? release?.appVersion ?? '',
    status: release?.status ?? 'not-installed',
    objects: objectSummaries(objects),
  };
}

/** Diff entries for objects shown as deleted (after ''), without asking the cluster. */
export function deleteEntries(objs: KubeObject[], ns: string, mask: (s: string) => string): DiffEntry[] {
  return objs.map((o) => {
    const withNs = o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: ns } };
    return diffEntry(labelOf(objectRef(withNs)), maskObject(withNs), undefined, mask);
  });
}

/** The message of a helm failure. */
export function describeHelmError(e: HelmError): string {
  return e.message;
}

/** Turn helm's "cluster unreachable" into the executor's unreachable state. */
export function rethrowUnreachable(e: unknown, cluster: string): void {
  if (e instanceof HelmError && /Kubernetes cluster unreachable/i.test(e.detail)) throw new UnreachableError(`cluster ${cluster}: ${e.detail}`);
}

/** Status of a release read after a failure, with a short deadline and no dependency on the (maybe aborted) task signal. */
export async function statusAfter(helm: HelmCli, name: string, ns: string): Promise<{ release?: ReleaseInfo; text: string; known: boolean }> {
  try {
    const release = await helm.status(name, ns, { signal: AbortSignal.timeout(30_000) });
    return { release, known: true, text: release ? `release ${ns}/${name} is now ${release.status} (revision ${release.revision})` : `release ${ns}/${name} is not installed` };
  } catch (e) {
    return { known: false, text: `the status of release ${ns}/${name} could not be read: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Where the task's release lives and how to reach it: the kube client, and helm only when needed. */
export interface Target {
  name: string;
  ns: string;
  /** The kube client of helm's cluster (connected on first use). */
  client: () => Promise<KubeClient>;
  /** The helm binary, started (version-checked) on first use: an unchanged release never runs helm. */
  helm: () => Promise<HelmCli>;
  /** How releases are stored (`HELM_DRIVER`); `undefined`: read them with helm. */
  storage: StorageKind | undefined;
  /**
   * What the task wrote so far, in order (CRDs, the namespace, helm's revisions): a failed task
   * reports them as changes (see `WrittenResult`).
   */
  written: WrittenEntry[];
}

/**
 * Note in `t.written` what helm wrote to the release as its history shows it: each revision after
 * `before` up to `now` (helm's storage record of it: `sh.helm.release.v1.<name>.v<N>`), or the
 * release gone or changed in place. `known: false` (its status could not be read): nothing.
 */
export function noteRevisions(t: Target, before: ReleaseInfo | undefined, after: { release?: ReleaseInfo; known: boolean }): void {
  if (!after.known) return;
  const now = after.release;
  const record = (revision: number, action: string): WrittenEntry => ({ kind: t.storage ?? 'Secret', apiVersion: 'v1', name: `sh.helm.release.v1.${t.name}.v${revision}`, namespace: t.ns, action });
  if (!now) {
    if (before) t.written.push(record(before.revision, 'deleted'));
    return;
  }
  const from = before?.revision ?? 0;
  if (now.revision > from) for (let r = from + 1; r <= now.revision; r++) t.written.push(record(r, 'created'));
  else if (before && now.status !== before.status) t.written.push(record(now.revision, 'configured'));
}

/** The newest revision of the release: from its storage record (no helm process), else from `helm status` + `helm get values`. */
export async function readRelease(t: Target, signal: AbortSignal): Promise<ReleaseInfo & { storedChart?: StoredChart } | undefined> {
  if (t.storage) return readStoredRelease(await t.client(), t.storage, t.name, t.ns, signal);
  const helm = await t.helm();
  const release = await helm.status(t.name, t.ns, { signal });
  if (!release) return undefined;
  return { ...release, config: await helm.getValues(t.name, t.ns, { signal }) };
}

/** Objects with their effective namespace (the release's for namespaced kinds without one), for registered data. */
export async function withNamespaces(t: Target, objects: KubeObject[]): Promise<KubeObject[]> {
  const client = await t.client();
  return Promise.all(objects.map((o) => resolveNamespace(client, o, t.ns).catch(() => o)));
}

/** The objects helm applied for a release revision (hooks excluded), as helm applies them. */
export function storedObjects(release: ReleaseInfo, name: string, ns: string): KubeObject[] {
  return parseRendered(release.manifest, false, `release ${ns}/${name} revision ${release.revision}`).map((o) => withHelmOwnership(o, name, ns));
}

/** The pending-lock arguments of a release task. */
export interface PendingArgs {
  on_pending: 'fail' | 'rollback';
  wait: boolean;
  timeout?: number;
}

/** The outcome of {@link recoverPending}: the release to continue with, what was done, or a failure message. */
export type PendingOutcome =
  | { kind: 'continue'; release: (ReleaseInfo & { storedChart?: StoredChart }) | undefined; done: string[] }
  | { kind: 'failed'; msg: string };

/**
 * A release locked by an interrupted helm (`pending-*`): fail (`on_pending: fail`), or roll it
 * back to the last deployed revision (uninstall a first install that never deployed) and go on.
 * In check mode nothing is written and the action is reported as `would have …`.
 */
export async function recoverPending(
  args: PendingArgs,
  t: Target,
  release: (ReleaseInfo & { storedChart?: StoredChart }) | undefined,
  o: { checkMode: boolean; signal: AbortSignal; info: (m: string) => void },
): Promise<PendingOutcome> {
  const { name, ns } = t;
  if (!release || !PENDING_STATUSES.includes(release.status)) return { kind: 'continue', release, done: [] };
  const what = `release ${ns}/${name} is ${release.status} (revision ${release.revision}): a helm operation is still running or was killed`;
  if (args.on_pending === 'fail') {
    return { kind: 'failed', msg: `${what}. Set on_pending: rollback to roll it back to the last deployed revision (or uninstall a first install that never deployed) and continue.` };
  }
  const helm = await t.helm();
  const history = await helm.history(name, ns, { signal: o.signal });
  const good = lastGoodRevision(history, release.revision);
  const action = good !== undefined ? `rolled back pending revision ${release.revision} to revision ${good}` : `uninstalled never-deployed release (revision ${release.revision} was ${release.status})`;
  if (o.checkMode) return { kind: 'continue', release: good === undefined ? undefined : release, done: [`would have ${action}`] };
  o.info(`${what}; on_pending: rollback`);
  if (good !== undefined) await helm.rollback(name, ns, good, { wait: args.wait, timeout: args.timeout }, { signal: o.signal });
  else await helm.uninstall(name, ns, { wait: args.wait, timeout: args.timeout }, { signal: o.signal });
  return { kind: 'continue', release: await readRelease(t, o.signal), done: [action] };
}
