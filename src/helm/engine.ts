/**
 * The release engine: install, upgrade or uninstall one Helm release with honest idempotence (no
 * helm write when chart, values AND the live objects already match). `helm_release` and
 * kubernetes.core's `helm` are both thin adapters over {@link runRelease}: they map their
 * arguments to {@link EngineArgs} and their results from {@link ReleaseData}.
 */
import { setting } from '../core/settings.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { diffEntry, maskObject } from '../k8s/normalize.js';
import { driftOf, labelOf, objectRef, planApply, removesOnlyAdditions } from '../k8s/object-plan.js';
import { applyObjects, removeAdditions } from '../k8s/apply/index.js';
import { parseDriftRules, type DriftRule } from '../k8s/drift.js';
import { parseManifests } from '../k8s/manifests.js';
import type { KubeClient, KubeObject, ObjectPlan } from '../k8s/types.js';
import { unreachableAfter, UnreachableError, type DiffEntry, type ModuleContext, type ModuleResult } from '../core/module.js';
import { writtenNote, type WrittenEntry } from '../core/results.js';
import { chartDifferences, chartDigestDescription, isChartDir, localCrdFiles, mayRenderLists, readLocalChart, recordedChartDigest, type LocalChart } from './chart.js';
import type { ChartDownload, ChartRef, HelmCli } from './cli.js';
import { HelmError } from './errors.js';
import { isKept, parseRendered, removedObjects, withHelmOwnership } from './manifests.js';
import type { ChartMeta, ReleaseInfo } from './release.js';
import { storageKind, type StoredChart } from './storage.js';
import { runRollback } from './rollback.js';
import { dataOf, deleteEntries, describeHelmError, fail, noteRevisions, readRelease, recoverPending, releaseLabel, releaseText, rethrowUnreachable, statusAfter, storedObjects, TaskFailure, withNamespaces, type ReleaseData, type Target } from './target.js';
import { changedValueKeys, secretValues, valuesEqual, type Values } from './values.js';
import { serverChecksFields } from './version.js';
import { clientFor, releaseHelm } from './release-helm.js';

/** What the engine is asked to do (the `helm_release` arguments, plus what kubernetes.core's `helm` adds). */
export interface EngineArgs {
  /** Module name, for messages. */
  module: string;
  /** Name of the chart argument, for messages (`chart`, `chart_ref`). */
  chartArg: string;
  name: string;
  namespace: string;
  /** `present` installs/upgrades, `absent` uninstalls, `rollback` rolls back (helm_release only). */
  state: 'present' | 'absent' | 'rollback';
  /** `state: rollback`: the revision to roll back to; the previous one when unset or 0. */
  revision?: number;
  chart?: string;
  version?: string;
  repo_url?: string;
  /** How helm downloads a chart that is not local (TLS, plain HTTP, credentials). */
  download?: ChartDownload;
  create_namespace: boolean;
  wait: boolean;
  /** Seconds for `--timeout`; helm's default (5m) when unset. */
  timeout?: number;
  atomic: boolean;
  force: boolean;
  skip_crds: boolean;
  upgrade_crds: boolean;
  dependency_update: boolean;
  on_pending: 'fail' | 'rollback';
  /**
   * The user-supplied values the release must have, given the values of the installed release
   * (`undefined` when not installed); may run helm (`helm()`) to compute them. Registers secrets.
   */
  desiredValues: (current: Values | undefined, helm: () => Promise<HelmCli>, chart: ChartRef) => Promise<Values>;
  /** `--reuse-values` instead of `--reset-values` (the desired values already include the old ones). */
  reuse_values?: boolean;
  /** More `helm upgrade` flags (`--history-max 5`, `--no-hooks`, `--post-renderer x`). */
  upgrade_extra?: string[];
  /** Uninstall with `--keep-history`. */
  keep_history?: boolean;
  /** Uninstall with `--no-hooks`. */
  no_hooks?: boolean;
}

export { TaskFailure, type ReleaseData } from './target.js';

/** Which helm, against which cluster. */
export interface EngineTarget {
  /** The helm program. */
  binary: string;
  /** kubeconfig context of helm and of the kube client. */
  kubeContext: string;
  /** kubeconfig file (absolute); helm's default when unset. */
  kubeconfig?: string;
}

/** The result of {@link runRelease}, with the helm binding used (when helm ran) for its last write. */
export interface EngineOutcome {
  result: ModuleResult<ReleaseData>;
  /** The helm binding, when helm was started. */
  helm?: HelmCli;
}


function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
}

/** The chart reference for helm, with local paths resolved against the playbook. */
function chartRef(args: EngineArgs, ctx: ModuleContext): { ref: ChartRef; local: boolean } {
  const chart = args.chart ?? fail(`${args.module}: '${args.chartArg}' is required when state is present`);
  // oci://, https:// (a chart archive URL) and a name in a repository are helm's to fetch
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(chart) || args.repo_url) return { ref: { chart, version: args.version, repoUrl: args.repo_url, download: args.download }, local: false };
  const local = ctx.findFile(expandHome(chart), 'files');
  if (existsSync(local)) return { ref: { chart: local }, local: true };
  if (/^(\.{1,2}\/|\/|~)/.test(chart) || chart.endsWith('.tgz')) fail(`${args.module}: chart ${chart} not found (looked at ${local})`);
  return { ref: { chart, version: args.version, download: args.download }, local: false };
}


/** Diff entries for objects shown as created (before ''), without asking the cluster. */
function createEntries(objs: KubeObject[], ns: string, mask: (s: string) => string): DiffEntry[] {
  return objs.map((o) => {
    const withNs = o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: ns } };
    return diffEntry(labelOf(objectRef(withNs)), undefined, maskObject(withNs), mask);
  });
}



/** Chart name/version/appVersion: read from a local chart directory, else `helm show chart`; the local chart itself when it is a directory. */
async function desiredChart(ref: ChartRef, local: boolean, dependencyUpdate: boolean, t: Target, signal: AbortSignal): Promise<{ chart: ChartMeta; localChart?: LocalChart }> {
  if (local && (await isChartDir(ref.chart))) {
    try {
      const localChart = await readLocalChart(ref.chart, { dependencyUpdate });
      return { chart: localChart, localChart };
    } catch (e) {
      return fail(`chart ${ref.chart}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { chart: await (await t.helm()).showChart(ref, { signal }) };
}

/** The CRDs of the chart (`crds/`, subcharts' too): read from a local directory, else `helm show crds`. */
async function chartCrds(ref: ChartRef, pinned: ChartRef, localChart: LocalChart | undefined, t: Target, signal: AbortSignal): Promise<KubeObject[]> {
  const texts = (localChart && localCrdFiles(localChart)) ?? [{ file: 'crds', text: await (await t.helm()).showCrds(pinned, { signal }) }];
  const out: KubeObject[] = [];
  for (const { file, text } of texts) out.push(...parseManifests(text, `chart ${ref.chart} ${file}`).filter((o) => o.kind === 'CustomResourceDefinition'));
  return out;
}


async function runPresent(args: EngineArgs, ctx: ModuleContext, t: Target): Promise<ModuleResult<ReleaseData>> {
  const { name, ns } = t;
  const wait = args.wait;
  const timeout = args.timeout;
  const signal = ctx.signal;
  const { ref, local } = chartRef(args, ctx);
  const done: string[] = []; // changes already made (pending recovery)
  const diffs: DiffEntry[] = [];

  const first = await readRelease(t, signal);
  const pending = await recoverPending(args, t, first, { checkMode: ctx.checkMode, signal, info: (m) => ctx.log.info(m) });
  if (pending.kind === 'failed') return { status: 'failed', msg: pending.msg };
  const release = pending.release;
  done.push(...pending.done);

  // ---- desired state: chart and values, compared with what the release stores
  const values = await args.desiredValues(release?.config, t.helm, ref);
  const { chart, localChart } = await desiredChart(ref, local, args.dependency_update, t, signal);
  if (local && args.version && args.version !== chart.version) {
    return { status: 'failed', msg: `chart ${args.chart} is version ${chart.version}, not ${args.version} (a local chart's version is checked, not selected)` };
  }
  const pinned: ChartRef = local ? ref : { ...ref, version: chart.version };
  const current = release?.config;
  // The deployed revision's secrets show up in "before" texts (values, live objects): mask them too.
  for (const s of secretValues(current ?? {})) ctx.addSecret(s);

  const reasons: string[] = [];
  if (!release) reasons.push(`install ${chart.name} ${chart.version}`);
  else {
    if (localChart && release.storedChart) {
      // helm's own reading of the chart, only when kplay's cannot decide (a release without the
      // digest kplay records, of a chart whose stored default values helm computes)
      const helmChart = async (): Promise<StoredChart | undefined> => {
        try {
          return await (await t.helm()).chartAsStored(name, ns, pinned, values, { signal });
        } catch (e) {
          if (signal.aborted) throw e;
          ctx.log.debug(`helm could not read chart ${args.chart ?? ''}: ${e instanceof Error ? e.message : String(e)}`);
          return undefined;
        }
      };
      reasons.push(...(await chartDifferences(localChart, release.storedChart, { recordedDigest: recordedChartDigest(release.description), helmChart })));
    }
    else if (release.chart !== chart.name || release.chartVersion !== chart.version) reasons.push(`chart ${release.chart} ${release.chartVersion} → ${chart.name} ${chart.version}`);
    if (current && !valuesEqual(current, values)) {
      const keys = changedValueKeys(current, values);
      reasons.push(`values changed: ${keys.slice(0, 20).join(', ')}${keys.length > 20 ? `, … (${keys.length} keys)` : ''}`);
    }
    if (release.status !== 'deployed') reasons.push(`revision ${release.revision} is ${release.status}`);
  }
  const releaseSame = release !== undefined && reasons.length === 0;

  // ---- CRDs. helm installs crds/ on the first install and never touches them again; kplay applies
  // changed CRDs of the new chart before upgrading (server-side apply as helm, never deleting one),
  // so that custom resources using new CRD fields are not pruned by the old schema.
  if (release && !releaseSame && !args.skip_crds && args.upgrade_crds) {
    const crds = await chartCrds(ref, pinned, localChart, t, signal);
    if (crds.length) {
      const res = await applyObjects(await t.client(), crds, { fieldManager: 'helm', force: true, defaultNamespace: ns, checkMode: ctx.checkMode, signal, mask: (s) => ctx.mask(s), log: (m) => ctx.log.info(m), onWritten: (r) => t.written.push({ kind: r.ref.kind, apiVersion: r.ref.apiVersion, name: r.ref.name, action: r.action }) });
      const changedCrds = res.filter((r) => r.action !== 'unchanged');
      if (changedCrds.length) {
        done.push(`${ctx.checkMode ? 'would apply' : 'applied'} changed CRDs: ${changedCrds.map((r) => r.ref.name).join(', ')}`);
        diffs.push(...changedCrds.map((r) => r.plan.diff));
      }
    }
  }

  // ---- live state. An unchanged release is checked against the manifest helm applied (stored in
  // the release), not a fresh render: templates with randAlphaNum/now/lookup render differently
  // each time and must not look like drift.
  let objects: KubeObject[] = release ? storedObjects(release, name, ns) : [];
  let plans: ObjectPlan[] | undefined;
  let driftRules: DriftRule[];
  try {
    driftRules = parseDriftRules(ctx.vars.drift_ignore);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e));
  }
  const planOpts = { fieldManager: 'helm', force: true, defaultNamespace: ns, signal, mask: (s: string) => ctx.mask(s), driftRules };
  if (releaseSame) plans = await planApply(await t.client(), objects, planOpts);
  const drifted = (plans ?? []).filter((p) => p.action !== 'unchanged');
  if (releaseSame && drifted.length) {
    const what = drifted.slice(0, 5).map((p) => `${labelOf(p.ref)} (${p.action === 'create' ? 'deleted' : describeDrift(p)})`);
    reasons.push(`live drift: ${what.join('; ')}${drifted.length > 5 ? `; … (${drifted.length} objects)` : ''}`);
  }
  // Fields added by hand (`kubectl set env`, `kubectl label`) are removed by kplay: helm's
  // server-side apply leaves other managers' fields alone. Only additions: no helm process at all.
  const withAdditions = drifted.filter((p) => (p.additions?.length ?? 0) > 0);
  const additionsOnly = releaseSame && drifted.length > 0 && drifted.every(removesOnlyAdditions);
  const addedText = (): string => `fields added by hand: ${withAdditions.flatMap((p) => (p.additions ?? []).map((a) => `${a.manager}: ${a.path} on ${labelOf(p.ref)}`)).join(', ')}`;
  const removeAdded = async (): Promise<string> => {
    const client = await t.client();
    for (const p of withAdditions) await removeAdditions(client, p.ref, p.additions ?? [], { signal });
    return `removed ${addedText()}`;
  };
  if (additionsOnly && release) {
    const removed = ctx.checkMode ? `would remove ${addedText()}` : await removeAdded();
    return { status: 'changed', msg: `release ${ns}/${name} (revision ${release.revision}): ${removed}`, data: { ...dataOf(release, chart, name, ns, await withNamespaces(t, objects)), drift: driftOf(plans ?? []) }, diff: ctx.diffMode ? drifted.map((p) => p.diff) : undefined };
  }

  if (release && reasons.length === 0) {
    const upToDate = `release ${ns}/${name} is up to date (${chart.name} ${chart.version}, revision ${release.revision})`;
    if (done.length === 0) return { status: 'ok', msg: upToDate, data: { ...dataOf(release, chart, name, ns, await withNamespaces(t, objects)), drift: driftOf(plans ?? []) } };
    // Recovered from a pending lock and already as desired: no upgrade needed.
    if (!ctx.checkMode) return { status: 'changed', msg: `${done.join('; ')}; ${upToDate}`, data: dataOf(release, chart, name, ns, objects) };
  }

  // ---- a change. Render the chart only where a diff must be shown (check or diff mode).
  if (ctx.diffMode || ctx.checkMode) {
    const entries: DiffEntry[] = [];
    if (!releaseSame) {
      const helm = await t.helm();
      const rendered = await helm.template(name, ns, pinned, values, { isUpgrade: release !== undefined, skipCrds: args.skip_crds, dependencyUpdate: args.dependency_update }, { signal });
      const previous = objects;
      objects = parseRendered(rendered, false, `chart ${args.chart ?? ''}`).map((o) => withHelmOwnership(o, name, ns));
      const client = await t.client();
      const nsExists = release !== undefined || (await client.get({ apiVersion: 'v1', kind: 'Namespace', name: ns }, signal)) !== undefined;
      if (nsExists) entries.push(...(await planApply(client, objects, planOpts)).filter((p) => p.action !== 'unchanged').map((p) => p.diff));
      else if (!args.create_namespace && !ctx.checkMode) return { status: 'failed', msg: `namespace ${ns} does not exist; set create_namespace: true` };
      else entries.push(...createEntries(objects, ns, (s) => ctx.mask(s)));
      if (release) entries.push(...deleteEntries(removedObjects(previous, objects, ns).filter((o) => !isKept(o)), ns, (s) => ctx.mask(s)));
    } else entries.push(...drifted.map((p) => p.diff));
    const before = release ? releaseText(`${release.chart}-${release.chartVersion}`, current) : '';
    const after = releaseText(`${chart.name}-${chart.version}`, values, current);
    if (before !== after) entries.unshift({ label: releaseLabel(ns, name), before: ctx.mask(before), after: ctx.mask(after) });
    diffs.push(...entries);
  }
  const summary = [...done, ...reasons].join('; ');

  if (ctx.checkMode) {
    return { status: 'changed', msg: `would ${release ? 'upgrade' : 'install'} ${ns}/${name}: ${summary}`, data: { ...dataOf(release, chart, name, ns, await withNamespaces(t, objects)), drift: driftOf(plans ?? []) }, diff: ctx.diffMode ? diffs : undefined };
  }

  ctx.log.info(`${release ? 'upgrading' : 'installing'} ${ns}/${name}: ${summary}`);
  ctx.log.progress(`helm ${release ? 'upgrade' : 'install'} ${name} (${chart.name} ${chart.version})${wait ? ', waiting' : ''}`);
  const helm = await t.helm();
  // Work helm would do at a cost and kplay does cheaper with the same outcome (see
  // serverChecksFields): its client-side OpenAPI check where the server checks every field, and
  // a new release's namespace, made as helm 4 makes it (its creation fetches OpenAPI documents
  // too). helm installs when only uninstalled revisions are left (`--keep-history`), else
  // upgrades the release the way its newest revision was applied.
  const applyMethod = !release || release.status === 'uninstalled' ? 'install' : release.applyMethod;
  const installs = applyMethod === 'install';
  // Only with the client already connected to read the release (helm's storage driver is
  // Secret or ConfigMap); with other drivers helm alone talks to the cluster, as before.
  const client = t.storage ? await t.client() : undefined;
  const skipClientCheck = client !== undefined && localChart !== undefined && serverChecksFields({ helmMajor: helm.major, serverVersion: client.serverVersion, applyMethod, mayRenderLists: mayRenderLists(localChart, values) });
  let createNamespace = args.create_namespace;
  if (client && createNamespace && installs && helm.major >= 4) {
    try {
      await createReleaseNamespace(client, ns, signal);
      t.written.push({ kind: 'Namespace', apiVersion: 'v1', name: ns, action: 'applied' });
    } catch (e) {
      rethrowUnreachable(e, ctx.cluster.name);
      return { status: 'failed', msg: ctx.mask(`create_namespace: cannot create namespace ${ns}: ${e instanceof Error ? e.message : String(e)}`) };
    }
    createNamespace = false;
  }
  let after: ReleaseInfo;
  try {
    after = await helm.upgradeInstall(name, ns, pinned, values, {
      wait,
      timeout,
      atomic: args.atomic,
      force: args.force,
      skipCrds: args.skip_crds,
      dependencyUpdate: args.dependency_update,
      createNamespace,
      reuseValues: args.reuse_values,
      extra: args.upgrade_extra,
      skipClientCheck,
      clientSideApply: applyMethod !== 'install' && applyMethod !== 'ssa',
      // the digest of the local chart's files, stored with this revision: the next run knows it
      // is the same chart (sub-charts included) without helm
      ...(localChart ? { description: chartDigestDescription(installs, localChart.digest) } : {}),
    }, { signal });
  } catch (e) {
    rethrowUnreachable(e, ctx.cluster.name);
    if (!(e instanceof HelmError)) throw e;
    const after = await statusAfter(helm, name, ns);
    const { release: now, text: state } = after;
    // a failed upgrade (or install) that made a revision changed the cluster: the history says so
    noteRevisions(t, first, after);
    const msg = e.interrupted
      ? `interrupted: helm was stopped (SIGTERM) and has exited; ${state}`
      : `${describeHelmError(e)}${args.atomic ? ` — atomic: ${state}` : `; ${state}`}`;
    return { status: 'failed', msg: ctx.mask(msg), data: dataOf(now, chart, name, ns, objects), diff: ctx.diffMode ? diffs : undefined };
  }
  objects = await withNamespaces(t, storedObjects(after, name, ns));
  const removed = withAdditions.length ? `; ${await removeAdded()}` : '';
  return {
    status: 'changed',
    msg: `${release ? 'upgraded' : 'installed'} ${ns}/${name} to revision ${after.revision}: ${summary}${removed}`,
    data: { ...dataOf(after, chart, name, ns, objects), drift: driftOf(plans ?? []) },
    diff: ctx.diffMode ? diffs : undefined,
  };
}

/**
 * The namespace of a new release as `helm install --create-namespace` makes it on helm 4:
 * server-side apply by field manager `helm` (no force), label `name`; an existing namespace gets
 * the label as it would from helm.
 */
async function createReleaseNamespace(client: KubeClient, ns: string, signal: AbortSignal): Promise<void> {
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { name: ns } } }, { fieldManager: 'helm', signal });
}

/** Drifted fields of an object for messages: `.spec.replicas by kubectl, +.metadata.labels.x by kubectl-label`. */
function describeDrift(p: ObjectPlan): string {
  const fields = p.drift ?? [];
  if (!fields.length) return p.changedPaths.slice(0, 4).join(', ');
  const text = fields.slice(0, 4).map((f) => `${f.change === 'added' ? '+' : ''}${f.path}${f.manager ? ` by ${f.manager}` : ''}`);
  return `${text.join(', ')}${fields.length > 4 ? `, … (${fields.length} fields)` : ''}`;
}

async function runAbsent(args: EngineArgs, ctx: ModuleContext, t: Target): Promise<ModuleResult<ReleaseData>> {
  const { name, ns } = t;
  const release = await readRelease(t, ctx.signal);
  if (!release) return { status: 'ok', msg: `release ${ns}/${name} is not installed`, data: dataOf(undefined, undefined, name, ns, []) };
  for (const s of secretValues(release.config)) ctx.addSecret(s);
  const objects = parseRendered(release.manifest, false, `release ${ns}/${name} revision ${release.revision}`);
  const data = dataOf(release, undefined, name, ns, objects);
  const removed = objects.filter((o) => !isKept(o));
  const diff = ctx.diffMode ? [{ label: releaseLabel(ns, name), before: ctx.mask(releaseText(`${release.chart}-${release.chartVersion}`, release.config)), after: '' }, ...deleteEntries(removed, ns, (s) => ctx.mask(s))] : undefined;
  if (ctx.checkMode) return { status: 'changed', msg: `would uninstall ${ns}/${name} (revision ${release.revision}, ${release.status})`, data, diff };
  ctx.log.progress(`helm uninstall ${name}`);
  const helm = await t.helm();
  try {
    await helm.uninstall(name, ns, { wait: args.wait, timeout: args.timeout, keepHistory: args.keep_history, noHooks: args.no_hooks }, { signal: ctx.signal });
  } catch (e) {
    rethrowUnreachable(e, ctx.cluster.name);
    if (!(e instanceof HelmError)) throw e;
    noteRevisions(t, release, await statusAfter(helm, name, ns));
    return { status: 'failed', msg: ctx.mask(e.interrupted ? `interrupted: helm uninstall was stopped (SIGTERM) and has exited` : describeHelmError(e)), data };
  }
  const kept = objects.length - removed.length;
  return { status: 'changed', msg: `uninstalled ${ns}/${name} (was revision ${release.revision})${kept ? `; ${kept} object(s) kept by helm.sh/resource-policy: keep` : ''}`, data: { ...data, status: 'uninstalled' }, diff };
}

/**
 * Install/upgrade (`state: present`) or uninstall (`absent`) the release `args.name` in
 * `args.namespace` with helm `target.binary`, honestly idempotent. Never throws for expected
 * failures (returns `status: 'failed'`); throws {@link UnreachableError} when the cluster cannot be reached.
 */
export async function runRelease(args: EngineArgs, ctx: ModuleContext, target: EngineTarget): Promise<EngineOutcome> {
  const { binary, kubeContext, kubeconfig } = target;
  let cli: Promise<HelmCli> | undefined;
  let started: HelmCli | undefined;
  const helm = (): Promise<HelmCli> => (cli ??= releaseHelm(ctx, binary, kubeContext, kubeconfig).then((h) => (started = h)));
  const t: Target = { name: args.name, ns: args.namespace, client: () => clientFor(ctx, kubeContext, kubeconfig), helm, storage: storageKind(setting('helmDriver')), written: [] };
  try {
    const result = args.state === 'absent' ? await runAbsent(args, ctx, t) : args.state === 'rollback' ? await runRollback(args, ctx, t) : await runPresent(args, ctx, t);
    return { result: withWritten(result, t.written, ctx), helm: started };
  } catch (e) {
    if (e instanceof UnreachableError) throw unreachableAfter(e, t.written);
    if (e instanceof TaskFailure) return { result: withWritten({ status: 'failed', msg: ctx.mask(e.message) }, t.written, ctx), helm: started };
    try {
      rethrowUnreachable(e, ctx.cluster.name);
    } catch (u) {
      throw u instanceof Error ? unreachableAfter(u, t.written) : u;
    }
    if (e instanceof HelmError) return { result: withWritten({ status: 'failed', msg: ctx.mask(e.interrupted ? `interrupted: ${e.what} was stopped` : describeHelmError(e)) }, t.written, ctx), helm: started };
    throw e;
  }
}

/**
 * A failed `result` of a task that had `written` things first (CRDs, the namespace, a failed
 * revision): changed all the same, saying what it wrote (`written`, and in its message).
 */
function withWritten<D extends ReleaseData>(result: ModuleResult<D>, written: readonly WrittenEntry[], ctx: ModuleContext): ModuleResult<D> {
  if (result.status !== 'failed' || ctx.checkMode) return result;
  return { ...result, msg: ctx.mask(`${result.msg}${writtenNote(written)}`), data: { ...(result.data ?? {}), written: [...written] }, ...(written.length ? { changed: true } : {}) };
}
