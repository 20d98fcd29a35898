/**
 * `helm_release`: install, upgrade or uninstall a Helm release — honestly idempotent (no helm
 * write when chart, values AND the live objects already match), diffable against the live
 * cluster in check mode, and safe to interrupt (helm is stopped with SIGTERM and waited for).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { TaskFailure, withoutBom, runRelease, isMap, mergeValues, valuesSecrets as secretValues, valuesFromSet, defineModule, Default, DriftResult, StringEnum, Type, type Args, type EngineArgs, type Values, type ModuleContext, setting } from 'kplay/sdk';

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
    state: Default(
      StringEnum(['present', 'absent', 'rollback'], {
        description:
          '`present` installs or upgrades the release; `absent` uninstalls it; `rollback` rolls it back to `revision` (the previous revision when unset), like `helm rollback` — the chart and values arguments are not used then.',
      }),
      'present',
    ),
    revision: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "`state: rollback`: the revision to roll back to (`helm history` lists them). Only with `state: rollback` (another state with a revision > 0 fails the task). Unset or 0: the previous revision — or, when the newest revision is itself a rollback, the revision it went back to, so a rerun changes nothing. The task is `ok` when the newest revision already has the target revision's chart, values and manifest and is deployed.",
        'x-kplay-example': 2,
      }),
    ),
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
  rolled_back_to: Type.Optional(Type.Integer({ description: '`state: rollback`: the revision whose chart and values the release has after the task (or would have, in check mode).' })),
  rolled_back_from: Type.Optional(Type.Integer({ description: '`state: rollback`: the revision the release was at before the rollback (absent when nothing was rolled back).' })),
});

const fail = (msg: string): never => {
  throw new TaskFailure(msg);
};

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(process.env.HOME ?? '', p.slice(1)) : p;
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
      parsed = YAML.parse(withoutBom(rendered), { merge: true });
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

export default defineModule({
  name: 'helm_release',
  summary: 'Install, upgrade, roll back or uninstall a Helm release (idempotent, live drift aware)',
  description: [
    'Drives the helm binary (3.14+ or 4) against the task\'s cluster, and runs it only to change something. It reads the release from helm\'s own storage record through the Kubernetes API (the `sh.helm.release.v1.<name>.v<N>` Secret, or ConfigMap with `HELM_DRIVER=configmap`; other drivers are read with `helm status`), compares the chart (name, version, and for a local chart directory — read exactly as helm loads it: `.helmignore`, sub-charts in `charts/` — the digest of its files that kplay records in the release description when it installs or upgrades (`Upgrade complete (kplay: chart sha256:…)`), else every template, file, schema and default value; helm itself is asked, with `helm install --dry-run=client`, only for the default values it computes for a chart with dependencies) and the user-supplied values with what the release stores, and server-side-apply dry-runs the manifest the release applied against the live objects. When all of that matches, the task is `ok` and no helm process runs at all (no new revision). Templates that render differently each time (`randAlphaNum`, `now`, `lookup`) are therefore not drift.',
    'CRDs: helm installs a chart\'s `crds/` on the first install only and never upgrades them; kplay applies changed CRDs of the new chart before an upgrade (`upgrade_crds`, default true) and never deletes a CRD. Hooks and `helm test` objects are not part of the live state: they are never planned, diffed or reported as drift. Objects with `helm.sh/resource-policy: keep` are not shown as deleted.',
    'Otherwise it runs `helm upgrade --install` (always `--reset-values`; on helm 4 also `--force-conflicts` when it applies server-side, so fields changed behind helm\'s back — `kubectl scale`, `kubectl edit` — are taken back; a release helm applied client-side, as helm 3 did, is upgraded client-side and its three-way merge takes them back). On helm 4 and Kubernetes ≥ 1.27 kplay spares helm two costly steps with the same outcome: a new release\'s namespace is made by kplay as helm makes it (server-side apply by `helm`, label `name`), and helm\'s client-side OpenAPI check is skipped (`--disable-openapi-validation`) when the server checks the same fields — server-side apply with `fieldValidation=Strict` and a local chart that cannot render a `List` (whose items helm checks before applying anything). With `--check`, it reports what would change; with `--diff`, a per-object unified diff against the live objects plus a release summary (chart, values), Secret data and secret-looking values masked.',
    'Values are passed to helm only in temporary files (mode 0600, removed afterwards). On Ctrl-C/SIGTERM, helm gets SIGTERM and kplay waits for it to exit, so the release is marked failed instead of staying pending. A release left pending by a killed helm fails the task unless `on_pending: rollback`.',
    '`state: rollback` runs `helm rollback` to `revision` (the previous revision when unset) — only when needed: the revisions are read from helm\'s storage records, and when the newest revision is deployed with the target revision\'s chart, user-supplied values and manifest (a rollback already done), the task is `ok`. A rerun of a rollback to the previous revision changes nothing: when the newest revision is itself a rollback (`Rollback to N`), its target is N. `wait`, `timeout` and `on_pending` apply as for an upgrade; `--check` reports `would roll back … from revision X to revision Y` and `--diff` shows the objects that would change. A release that is not installed, or a `revision` not in its history, fails the task with the cluster named and what to do next. Registered data adds `rolled_back_from` and `rolled_back_to`; `revision` is the new revision.',
    'Registered data: `name`, `namespace`, `revision`, `chart`, `chart_version`, `app_version`, `status`, `objects` (kind, name, namespace of the rendered objects, hooks excluded). A failed task registers `written`: what it changed before failing — CRDs applied, the namespace made, and each revision the failed helm command added to the release\'s history (its storage record `sh.helm.release.v1.<name>.v<N>`, as `helm history` shows it); when there is any, the task is `changed` too (the run record in the cluster is written).',
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
    {
      title: 'Roll back when a metrics gate fails (previous revision; a rerun changes nothing)',
      yaml: [
        '- block:',
        '    - helm_release: { name: web, namespace: web, chart: charts/web, values: { image: { tag: "{{ tag }}" } } }',
        '    - analysis:',
        '        interval: 5',
        '        count: 6',
        '        metrics:',
        '          - { name: error-rate, prometheus: { address: "{{ prometheus_url }}", query: "{{ error_rate_query }}" }, success_condition: result < 0.05 }',
        '  rescue:',
        '    - helm_release: { name: web, namespace: web, state: rollback }',
        '      register: rolled',
        '    - fail: { msg: "rolled back to revision {{ rolled.rolled_back_to }} (now revision {{ rolled.revision }})" }',
      ].join('\n'),
    },
    { title: 'Roll back to a given revision', yaml: '- helm_release:\n    name: web\n    namespace: web\n    state: rollback\n    revision: 3\n    wait: true\n    timeout: 120' },
    { title: 'Uninstall', yaml: '- helm_release:\n    name: web\n    namespace: web\n    state: absent' },
  ],
  async run(args, ctx) {
    if (args.state !== 'rollback' && args.revision !== undefined && args.revision > 0) {
      return { status: 'failed', msg: `revision: ${args.revision} is only used with state: rollback (state is ${args.state}); remove it, or set state: rollback to roll the release back to that revision` };
    }
    const binary = args.helm_binary ?? setting('helm');
    const kubeContext = args.kube_context ?? ctx.cluster.context;
    const kubeconfig = args.kubeconfig !== undefined ? path.resolve(ctx.baseDir, expandHome(args.kubeconfig)) : ctx.cluster.kubeconfig;
    // Registered early so that nothing printed below can show them (values_files are registered as they are read).
    for (const s of secretValues(args.values)) ctx.addSecret(s);
    for (const [k, v] of Object.entries(args.set)) for (const s of secretValues({ [k.split('.').pop() ?? k]: v })) ctx.addSecret(s);
    const engineArgs: EngineArgs = {
      ...args,
      module: 'helm_release',
      chartArg: 'chart',
      desiredValues: async () => {
        try {
          return await desiredValues(args, ctx);
        } catch (e) {
          if (e instanceof TaskFailure) throw e;
          throw new TaskFailure(e instanceof Error ? e.message : String(e));
        }
      },
    };
    const { result } = await runRelease(engineArgs, ctx, { binary, kubeContext, kubeconfig });
    return result;
  },
});
