/**
 * `helm_release`: install, upgrade or uninstall a Helm release — honestly idempotent (no helm
 * write when chart, values AND the live objects already match), diffable against the live
 * cluster in check mode, and safe to interrupt (helm is stopped with SIGTERM and waited for).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { connect, kubeFor, diffEntry, maskObject, driftOf, removesOnlyAdditions, labelOf, objectRef, planApply, resolveNamespace, HelmCli, HelmError, chartDifferences, chartDigestDescription, recordedChartDigest, isChartDir, localCrdFiles, mayRenderLists, readLocalChart, serverChecksFields, applyObjects, removeAdditions, parseDriftRules, parseManifests, isKept, objectSummaries, parseRendered, removedObjects, withHelmOwnership, readStoredRelease, storageKind, lastGoodRevision, PENDING_STATUSES, canonicalValuesJson, changedValueKeys, isMap, maskSecretValues, mergeValues, valuesSecrets as secretValues, valuesEqual, valuesFromSet, cachedHelmVersion, defineModule, UnreachableError, Default, DriftResult, StringEnum, Type, type Args, type Static, type KubeClient, type KubeObject, type ObjectPlan, type ChartRef, type LocalChart, type DriftRule, type StorageKind, type StoredChart, type ChartMeta, type ReleaseInfo, type Values, type HelmVersion, type DiffEntry, type ModuleContext, type ModuleResult } from 'kplay/sdk';

const schema = Type.Object(
  {
    name: Type.String({
      maxLength: 53,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
      description: 'Release name: lowercase letters, digits, `-` and `.`, at most 53 characters.',
      'x-kplay-example': 'web',
    }),
    namespace: Default(Type.String({ minLength: 1, description: 'Namespace of the release.', 'x-kplay-example': 'web' }), 'default'),
    create_namespace: Default(Type.Boolean({ description: 'Create the namespace when it does not exist (install only).' }), false),
    chart: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The chart: a local directory or `.tgz` (relative to the playbook), `repo/chart` (a repository added with `helm repo add`), a chart name with `repo_url`, or `oci://registry/path/chart`. Required when `state: present`.',
        'x-kplay-example': '../charts/podinfo',
      }),
    ),
    version: Type.Optional(
      Type.String({
        minLength: 1,
        description: "Chart version or constraint (`6.14.1`, `^6.0.0`); the newest when unset. For a local chart it must equal the chart's version (checked, not selected).",
        'x-kplay-example': '6.14.1',
      }),
    ),
    repo_url: Type.Optional(
      Type.String({ pattern: '^(https?|oci)://', description: 'Chart repository URL, for `chart` given as a plain chart name.', 'x-kplay-example': 'https://stefanprodan.github.io/podinfo' }),
    ),
    values: Default(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "Values (a map), templated with the cluster's variables before use — one chart, per-group differences. Merged over `values_files`. Values under keys that look secret (`password`, `token`, `secret`, `*Key`) are masked in all output.",
      }),
      {},
    ),
    values_files: Default(
      Type.Array(Type.String({ minLength: 1 }), {
        description: "Values files relative to the playbook directory, each rendered as a Jinja template with the task's variables; merged in order (later files win).",
      }),
      [],
    ),
    set: Default(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          'Single values by dotted key path (`image.tag`, `env[0].value`, `a\\.b` for a dot inside a key), merged over `values` (types are kept). Passed in a private values file, never on the command line.',
      }),
      {},
    ),
    state: Default(StringEnum(['present', 'absent'], { description: '`present` installs or upgrades the release; `absent` uninstalls it.' }), 'present'),
    wait: Default(Type.Boolean({ description: 'Wait until the resources are ready (install, upgrade, rollback) or deleted (uninstall), up to `timeout`.' }), true),
    timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds helm may take for each Kubernetes operation, hooks, and the wait.' }), 300),
    atomic: Default(
      Type.Boolean({
        description:
          'Roll back to the previous revision (uninstall a first install) when the upgrade fails or times out (helm 3 `--atomic`, helm 4 `--rollback-on-failure`). Like helm, this waits for readiness even with `wait: false`.',
      }),
      false,
    ),
    force: Default(Type.Boolean({ description: 'Replace resources that cannot be updated in place (helm 3 `--force`, helm 4 `--force-replace`).' }), false),
    skip_crds: Default(Type.Boolean({ description: "Do not install the chart's CRDs (`crds/`), nor upgrade them." }), false),
    upgrade_crds: Default(
      Type.Boolean({
        description:
          "Before an upgrade, server-side apply the chart's CRDs (`crds/`, subcharts' too) that changed, and wait until they are Established. helm installs `crds/` only on the first install and never upgrades them, so custom resources using new CRD fields would be pruned by the old schema. CRDs are never deleted.",
      }),
      true,
    ),
    dependency_update: Default(Type.Boolean({ description: 'Run `helm dependency update` for the chart before rendering it.' }), false),
    on_pending: Default(
      StringEnum(['fail', 'rollback'], {
        description:
          'A release left `pending-install`/`pending-upgrade`/`pending-rollback` (helm was killed) blocks every helm operation: `fail` the task, or `rollback` to the last deployed revision first (uninstall a first install that never deployed), reported as a change, then continue.',
      }),
      'fail',
    ),
    helm_binary: Type.Optional(
      Type.String({ minLength: 1, description: 'The helm program (helm ≥ 3.14 or helm 4). Default: `$KPLAY_HELM`, else `helm` on PATH.', 'x-kplay-example': '/opt/helm/bin/helm' }),
    ),
    kube_context: Type.Optional(Type.String({ minLength: 1, description: "kubeconfig context for helm. Default: the inventory cluster's context." })),
    kubeconfig: Type.Optional(Type.String({ minLength: 1, description: "kubeconfig file for helm (relative to the playbook). Default: the inventory cluster's kubeconfig." })),
  },
  { additionalProperties: false },
);

/** Arguments of `helm_release` (after defaults). */
export type HelmReleaseArgs = Args<typeof schema>;

const result = Type.Object({
  name: Type.String({ description: 'Release name.' }),
  namespace: Type.String({ description: 'Release namespace.' }),
  revision: Type.Integer({ description: 'Revision after the task (0 when not installed).' }),
  chart: Type.String({ description: 'Chart name.' }),
  chart_version: Type.String({ description: 'Chart version.' }),
  app_version: Type.String({ description: 'The chart\'s appVersion.' }),
  status: Type.String({ description: 'Release status (`deployed`, `failed`, `not-installed`, `uninstalled`, ...).' }),
  objects: Type.Array(Type.Object({ kind: Type.String(), name: Type.String(), namespace: Type.Optional(Type.String()) }), {
    description: 'The rendered objects (kind, name, effective namespace), hooks excluded.',
  }),
  drift: Type.Optional(DriftResult),
});

/** What the module registers (`register:`). */
type ReleaseData = Static<typeof result>;

/** A failure to report as the task result (not a bug). */
class TaskFailure extends Error {}

const fail = (msg: string): never => {
  throw new TaskFailure(msg);
};

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
}

/** The chart reference for helm, with local paths resolved against the playbook. */
function chartRef(args: HelmReleaseArgs, ctx: ModuleContext): { ref: ChartRef; local: boolean } {
  const chart = args.chart ?? fail("helm_release: 'chart' is required when state is present");
  if (chart.startsWith('oci://') || args.repo_url) return { ref: { chart, version: args.version, repoUrl: args.repo_url }, local: false };
  const local = ctx.findFile(expandHome(chart), 'files');
  if (existsSync(local)) return { ref: { chart: local }, local: true };
  if (/^(\.{1,2}\/|\/|~)/.test(chart) || chart.endsWith('.tgz')) fail(`helm_release: chart ${chart} not found (looked at ${local})`);
  return { ref: { chart, version: args.version }, local: false };
}

/** values_files (rendered) < values < set, as one values tree; secret-looking values are registered. */
async function desiredValues(args: HelmReleaseArgs, ctx: ModuleContext): Promise<Values> {
  let merged: Values = {};
  for (const f of args.values_files) {
    const file = ctx.findFile(expandHome(f), 'files');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      return fail(`values file ${f}: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const rendered = await ctx.render(text);
    let parsed: unknown;
    try {
      parsed = YAML.parse(rendered, { merge: true });
    } catch (e) {
      return fail(`values file ${f}: invalid YAML after rendering: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (parsed === null || parsed === undefined) continue;
    if (!isMap(parsed)) return fail(`values file ${f}: must be a map of values, got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`);
    merged = mergeValues(merged, parsed);
  }
  merged = mergeValues(merged, args.values);
  if (Object.keys(args.set).length) {
    try {
      merged = mergeValues(merged, valuesFromSet(args.set));
    } catch (e) {
      return fail(`set: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  // A JSON round trip gives the same value types helm stores (and `get values -o json` returns).
  const normalised = JSON.parse(JSON.stringify(merged)) as Values;
  for (const s of secretValues(normalised)) ctx.addSecret(s);
  return normalised;
}

/** A client for the cluster helm talks to (the inventory's, unless kube_context/kubeconfig override it). */
async function clientFor(ctx: ModuleContext, kubeContext: string, kubeconfig: string | undefined): Promise<KubeClient> {
  if (kubeContext === ctx.cluster.context && kubeconfig === ctx.cluster.kubeconfig) return kubeFor(ctx);
  return ctx.adapter<KubeClient>(`k8s:${kubeContext}:${kubeconfig ?? ''}`, () => connect({ name: ctx.cluster.name, context: kubeContext, kubeconfig }));
}

function releaseLabel(ns: string, name: string): string {
  return `helm release ${ns}/${name}`;
}

/** The release summary shown in diffs: chart and (masked) user-supplied values. */
function releaseText(chart: string | undefined, values: Values | undefined, previous?: Values): string {
  if (chart === undefined) return '';
  const sorted: unknown = JSON.parse(canonicalValuesJson(maskSecretValues(values ?? {}, previous ?? {})));
  return YAML.stringify({ chart, values: sorted }, { lineWidth: 0 });
}

function dataOf(release: ReleaseInfo | undefined, chart: ChartMeta | undefined, name: string, ns: string, objects: KubeObject[]): ReleaseData {
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

/** Diff entries for objects shown as created (before ''), without asking the cluster. */
function createEntries(objs: KubeObject[], ns: string, mask: (s: string) => string): DiffEntry[] {
  return objs.map((o) => {
    const withNs = o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: ns } };
    return diffEntry(labelOf(objectRef(withNs)), undefined, maskObject(withNs), mask);
  });
}

function deleteEntries(objs: KubeObject[], ns: string, mask: (s: string) => string): DiffEntry[] {
  return objs.map((o) => {
    const withNs = o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: ns } };
    return diffEntry(labelOf(objectRef(withNs)), maskObject(withNs), undefined, mask);
  });
}

function describeHelmError(e: HelmError): string {
  return e.message;
}

/** Turn helm's "cluster unreachable" into the executor's unreachable state. */
function rethrowUnreachable(e: unknown, cluster: string): void {
  if (e instanceof HelmError && /Kubernetes cluster unreachable/i.test(e.detail)) throw new UnreachableError(`cluster ${cluster}: ${e.detail}`);
}

/** Status of a release read after a failure, with a short deadline and no dependency on the (maybe aborted) task signal. */
async function statusAfter(helm: HelmCli, name: string, ns: string): Promise<{ release?: ReleaseInfo; text: string }> {
  try {
    const release = await helm.status(name, ns, { signal: AbortSignal.timeout(30_000) });
    return { release, text: release ? `release ${ns}/${name} is now ${release.status} (revision ${release.revision})` : `release ${ns}/${name} is not installed` };
  } catch (e) {
    return { text: `the status of release ${ns}/${name} could not be read: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Where the task's release lives and how to reach it: the kube client, and helm only when needed. */
interface Target {
  name: string;
  ns: string;
  /** The kube client of helm's cluster (connected on first use). */
  client: () => Promise<KubeClient>;
  /** The helm binary, started (version-checked) on first use: an unchanged release never runs helm. */
  helm: () => Promise<HelmCli>;
  /** How releases are stored (`HELM_DRIVER`); `undefined`: read them with helm. */
  storage: StorageKind | undefined;
}

/** The newest revision of the release: from its storage record (no helm process), else from `helm status` + `helm get values`. */
async function readRelease(t: Target, signal: AbortSignal): Promise<ReleaseInfo & { storedChart?: StoredChart } | undefined> {
  if (t.storage) return readStoredRelease(await t.client(), t.storage, t.name, t.ns, signal);
  const helm = await t.helm();
  const release = await helm.status(t.name, t.ns, { signal });
  if (!release) return undefined;
  return { ...release, config: await helm.getValues(t.name, t.ns, { signal }) };
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

/** Objects with their effective namespace (the release's for namespaced kinds without one), for registered data. */
async function withNamespaces(t: Target, objects: KubeObject[]): Promise<KubeObject[]> {
  const client = await t.client();
  return Promise.all(objects.map((o) => resolveNamespace(client, o, t.ns).catch(() => o)));
}

/** The objects helm applied for a release revision (hooks excluded), as helm applies them. */
function storedObjects(release: ReleaseInfo, name: string, ns: string): KubeObject[] {
  return parseRendered(release.manifest, false, `release ${ns}/${name} revision ${release.revision}`).map((o) => withHelmOwnership(o, name, ns));
}

async function runPresent(args: HelmReleaseArgs, ctx: ModuleContext, t: Target): Promise<ModuleResult<ReleaseData>> {
  const { name, ns } = t;
  const wait = args.wait;
  const timeout = args.timeout;
  const signal = ctx.signal;
  const { ref, local } = chartRef(args, ctx);
  const values = await desiredValues(args, ctx);
  const done: string[] = []; // changes already made (pending recovery)
  const diffs: DiffEntry[] = [];

  let release = await readRelease(t, signal);
  // ---- a release locked by an interrupted helm
  if (release && PENDING_STATUSES.includes(release.status)) {
    const what = `release ${ns}/${name} is ${release.status} (revision ${release.revision}): a helm operation is still running or was killed`;
    if (args.on_pending === 'fail') {
      return { status: 'failed', msg: `${what}. Set on_pending: rollback to roll it back to the last deployed revision (or uninstall a first install that never deployed) and continue.` };
    }
    const helm = await t.helm();
    const history = await helm.history(name, ns, { signal });
    const good = lastGoodRevision(history, release.revision);
    const action = good !== undefined ? `rolled back pending revision ${release.revision} to revision ${good}` : `uninstalled never-deployed release (revision ${release.revision} was ${release.status})`;
    if (ctx.checkMode) {
      done.push(`would have ${action}`);
      if (good === undefined) release = undefined;
    } else {
      ctx.log.info(`${what}; on_pending: rollback`);
      if (good !== undefined) await helm.rollback(name, ns, good, { wait, timeout }, { signal });
      else await helm.uninstall(name, ns, { wait, timeout }, { signal });
      done.push(action);
      release = await readRelease(t, signal);
    }
  }

  // ---- desired state: chart and values, compared with what the release stores
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
      const res = await applyObjects(await t.client(), crds, { fieldManager: 'helm', force: true, defaultNamespace: ns, checkMode: ctx.checkMode, signal, mask: (s) => ctx.mask(s), log: (m) => ctx.log.info(m) });
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
      skipClientCheck,
      clientSideApply: applyMethod !== 'install' && applyMethod !== 'ssa',
      // the digest of the local chart's files, stored with this revision: the next run knows it
      // is the same chart (sub-charts included) without helm
      ...(localChart ? { description: chartDigestDescription(installs, localChart.digest) } : {}),
    }, { signal });
  } catch (e) {
    rethrowUnreachable(e, ctx.cluster.name);
    if (!(e instanceof HelmError)) throw e;
    const { release: now, text: state } = await statusAfter(helm, name, ns);
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

async function runAbsent(args: HelmReleaseArgs, ctx: ModuleContext, t: Target): Promise<ModuleResult<ReleaseData>> {
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
    await helm.uninstall(name, ns, { wait: args.wait, timeout: args.timeout }, { signal: ctx.signal });
  } catch (e) {
    rethrowUnreachable(e, ctx.cluster.name);
    if (!(e instanceof HelmError)) throw e;
    return { status: 'failed', msg: ctx.mask(e.interrupted ? `interrupted: helm uninstall was stopped (SIGTERM) and has exited` : describeHelmError(e)), data };
  }
  const kept = objects.length - removed.length;
  return { status: 'changed', msg: `uninstalled ${ns}/${name} (was revision ${release.revision})${kept ? `; ${kept} object(s) kept by helm.sh/resource-policy: keep` : ''}`, data: { ...data, status: 'uninstalled' }, diff };
}

export default defineModule({
  name: 'helm_release',
  summary: 'Install, upgrade or uninstall a Helm release (idempotent, live drift aware)',
  description: [
    'Drives the helm binary (3.14+ or 4) against the task\'s cluster, and runs it only to change something. It reads the release from helm\'s own storage record through the Kubernetes API (the `sh.helm.release.v1.<name>.v<N>` Secret, or ConfigMap with `HELM_DRIVER=configmap`; other drivers are read with `helm status`), compares the chart (name, version, and for a local chart directory — read exactly as helm loads it: `.helmignore`, sub-charts in `charts/` — the digest of its files that kplay records in the release description when it installs or upgrades (`Upgrade complete (kplay: chart sha256:…)`), else every template, file, schema and default value; helm itself is asked, with `helm install --dry-run=client`, only for the default values it computes for a chart with dependencies) and the user-supplied values with what the release stores, and server-side-apply dry-runs the manifest the release applied against the live objects. When all of that matches, the task is `ok` and no helm process runs at all (no new revision). Templates that render differently each time (`randAlphaNum`, `now`, `lookup`) are therefore not drift.',
    'CRDs: helm installs a chart\'s `crds/` on the first install only and never upgrades them; kplay applies changed CRDs of the new chart before an upgrade (`upgrade_crds`, default true) and never deletes a CRD. Hooks and `helm test` objects are not part of the live state: they are never planned, diffed or reported as drift. Objects with `helm.sh/resource-policy: keep` are not shown as deleted.',
    'Otherwise it runs `helm upgrade --install` (always `--reset-values`; on helm 4 also `--force-conflicts` when it applies server-side, so fields changed behind helm\'s back — `kubectl scale`, `kubectl edit` — are taken back; a release helm applied client-side, as helm 3 did, is upgraded client-side and its three-way merge takes them back). On helm 4 and Kubernetes ≥ 1.27 kplay spares helm two costly steps with the same outcome: a new release\'s namespace is made by kplay as helm makes it (server-side apply by `helm`, label `name`), and helm\'s client-side OpenAPI check is skipped (`--disable-openapi-validation`) when the server checks the same fields — server-side apply with `fieldValidation=Strict` and a local chart that cannot render a `List` (whose items helm checks before applying anything). With `--check`, it reports what would change; with `--diff`, a per-object unified diff against the live objects plus a release summary (chart, values), Secret data and secret-looking values masked.',
    'Values are passed to helm only in temporary files (mode 0600, removed afterwards). On Ctrl-C/SIGTERM, helm gets SIGTERM and kplay waits for it to exit, so the release is marked failed instead of staying pending. A release left pending by a killed helm fails the task unless `on_pending: rollback`.',
    'Registered data: `name`, `namespace`, `revision`, `chart`, `chart_version`, `app_version`, `status`, `objects` (kind, name, namespace of the rendered objects, hooks excluded).',
  ].join('\n\n'),
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'supported',
  usesCluster: true,
  declaresState: true,
  examples: [
    {
      title: 'Install or upgrade a chart with per-group values',
      yaml: [
        '- name: podinfo',
        '  helm_release:',
        '    name: web',
        '    namespace: web',
        '    create_namespace: true',
        '    chart: charts/podinfo',
        '    values:',
        '      replicaCount: "{{ web_replicas }}"',
        '      ui: { message: "{{ cluster_name }}" }',
        '    values_files: [values/common.yaml]',
        '    set: { "image.tag": "6.14.1" }',
        '    atomic: true',
        '    timeout: 600',
        '  register: web',
      ].join('\n'),
    },
    {
      title: 'A chart from a repository, pinned',
      yaml: '- helm_release:\n    name: podinfo\n    namespace: web\n    chart: podinfo\n    repo_url: https://stefanprodan.github.io/podinfo\n    version: 6.14.1',
    },
    {
      title: 'Recover a release left pending by an interrupted helm, then upgrade',
      yaml: '- helm_release:\n    name: web\n    namespace: web\n    chart: oci://ghcr.io/stefanprodan/charts/podinfo\n    version: 6.14.1\n    on_pending: rollback',
    },
    { title: 'Uninstall', yaml: '- helm_release:\n    name: web\n    namespace: web\n    state: absent' },
  ],
  async run(args, ctx) {
    const name = args.name;
    const ns = args.namespace;
    const binary = args.helm_binary ?? (process.env.KPLAY_HELM || 'helm');
    const kubeContext = args.kube_context ?? ctx.cluster.context;
    const kubeconfig = args.kubeconfig !== undefined ? path.resolve(ctx.baseDir, expandHome(args.kubeconfig)) : ctx.cluster.kubeconfig;
    try {
      // Registered early so that nothing printed below can show them (values_files are registered as they are read).
      for (const s of secretValues(args.values)) ctx.addSecret(s);
      for (const [k, v] of Object.entries(args.set)) for (const s of secretValues({ [k.split('.').pop() ?? k]: v })) ctx.addSecret(s);
      const mask = (s: string): string => ctx.mask(s);
      let cli: Promise<HelmCli> | undefined;
      const helm = (): Promise<HelmCli> =>
        (cli ??= ctx
          .adapter<HelmVersion>(`helm-version:${binary}`, () => cachedHelmVersion(binary, () => HelmCli.detectVersion({ binary, mask }, { signal: ctx.signal })))
          .then((version) => new HelmCli(version, { binary, target: { kubeContext, kubeconfig }, mask, log: (m) => ctx.log.debug(m) })));
      const t: Target = { name, ns, client: () => clientFor(ctx, kubeContext, kubeconfig), helm, storage: storageKind(process.env.HELM_DRIVER) };
      return args.state === 'absent' ? await runAbsent(args, ctx, t) : await runPresent(args, ctx, t);
    } catch (e) {
      if (e instanceof TaskFailure) return { status: 'failed', msg: ctx.mask(e.message) };
      rethrowUnreachable(e, ctx.cluster.name);
      if (e instanceof HelmError) return { status: 'failed', msg: ctx.mask(e.interrupted ? `interrupted: ${e.what} was stopped` : describeHelmError(e)) };
      throw e;
    }
  },
});
