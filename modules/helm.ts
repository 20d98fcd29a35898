/**
 * `helm` (kubernetes.core.helm): kubernetes.core's arguments and results over kplay's release
 * engine (the one `helm_release` uses): honest idempotence, no second implementation.
 */
import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import {
  aliased,
  kcoreMessage,
  defineModule,
  Default,
  HelmAuthProps,
  helmConnection,
  HelmError,
  KubeApiError,
  helmFor,
  isMap,
  listReleaseWithHelm,
  listStoredRelease,
  mergeValues,
  parseGoDuration,
  releaseClient,
  releaseHelm,
  runRelease,
  SetValuesProp,
  setValuesFlags,
  storageKind,
  StringEnum,
  TaskFailure,
  Type,
  valuesSecrets,
  type Args,
  type ChartRef,
  type EngineArgs,
  type HelmAuthArgs,
  type HelmConnection,
  type HelmCli,
  type ListedRelease,
  type ListState,
  type ModuleContext,
  type Values,
  setting,
  withoutBom,
} from 'kplay/sdk';

const schema = Type.Object(
  {
    release_name: Type.Optional(Type.String({ minLength: 1, maxLength: 53, description: 'Release name (alias `name`). Required.', 'x-kplay-example': 'web' })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 53, description: 'Alias of `release_name`.' })),
    release_namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of the release (alias `namespace`). Required.', 'x-kplay-example': 'web' })),
    namespace: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `release_namespace`.' })),
    release_state: Type.Optional(StringEnum(['present', 'absent'], { description: '`present` (default) installs or upgrades; `absent` uninstalls (alias `state`).' })),
    state: Type.Optional(StringEnum(['present', 'absent'], { description: 'Alias of `release_state`.' })),
    chart_ref: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'The chart: a local directory or `.tgz` (relative to the playbook), `repo/chart` (a repository added with `helm_repository`), a chart URL, `oci://registry/chart`, or a chart name with `chart_repo_url`. Required when present.',
        'x-kplay-example': 'charts/webapp',
      }),
    ),
    chart_version: Type.Optional(Type.String({ minLength: 1, description: 'Chart version or constraint (`--version`); the newest when unset.' })),
    chart_repo_url: Type.Optional(Type.String({ minLength: 1, description: 'Chart repository URL for a plain chart name (`--repo`).' })),
    release_values: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Values (a map; alias `values`), applied after `values_files`.' })),
    values: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Alias of `release_values`.' })),
    values_files: Default(Type.Array(Type.String({ minLength: 1 }), { description: 'Values files (relative to the playbook), in order; read by helm as they are (not templated).' }), []),
    set_values: SetValuesProp,
    create_namespace: Default(Type.Boolean({ description: 'Create the release namespace if missing (`--create-namespace`).' }), false),
    wait: Default(Type.Boolean({ description: 'Wait until the resources are ready (or deleted), up to `wait_timeout`.' }), false),
    wait_timeout: Type.Optional(Type.String({ minLength: 1, description: 'With `wait`: how long helm may take, a Go duration (`5m`, `300s`). Helm\'s default: 5m.' })),
    timeout: Type.Optional(Type.String({ minLength: 1, description: 'How long helm may take for each Kubernetes operation (`--timeout`, a Go duration). Not with `wait_timeout`.' })),
    atomic: Default(Type.Boolean({ description: 'Roll back when the upgrade fails (helm 3 `--atomic`, helm 4 `--rollback-on-failure`).' }), false),
    force: Default(Type.Boolean({ description: 'Replace resources that cannot be updated in place (`--force`), when an upgrade is needed.' }), false),
    reuse_values: Type.Optional(Type.Boolean({ description: "With `reset_values: false`: merge the release's current values under the given ones (`--reuse-values`)." })),
    reset_values: Default(Type.Boolean({ description: "Use only the given values and the chart's defaults (`--reset-values`)." }), true),
    reset_then_reuse_values: Default(Type.Boolean({ description: "With `reset_values: false`: the new chart's defaults, the release's current values, then the given ones." }), false),
    skip_crds: Default(Type.Boolean({ description: "Do not install the chart's CRDs (`--skip-crds`)." }), false),
    history_max: Type.Optional(Type.Integer({ minimum: 0, description: 'Most revisions kept per release (`--history-max`); helm\'s default (10) when unset. Not with `replace`.' })),
    dependency_update: Type.Optional(Type.Boolean({ description: 'Run `helm dependency update` for the chart before installing (alias `dep_up`). Default: false.' })),
    dep_up: Type.Optional(Type.Boolean({ description: 'Alias of `dependency_update`.' })),
    update_repo_cache: Default(Type.Boolean({ description: 'Run `helm repo update` first.' }), false),
    disable_hook: Default(Type.Boolean({ description: 'Do not run hooks (`--no-hooks`) on install, upgrade and uninstall.' }), false),
    purge: Default(Type.Boolean({ description: 'With `absent`: remove the release history too; `false`: `--keep-history`.' }), true),
    replace: Default(Type.Boolean({ description: "Reuse the name of a release uninstalled with its history kept. kplay's `helm upgrade --install` does that by itself; accepted for compatibility." }), false),
    post_renderer: Type.Optional(Type.String({ minLength: 1, description: 'Program that post-processes the rendered manifests (`--post-renderer`).' })),
    take_ownership: Default(Type.Boolean({ description: 'Adopt existing objects not owned by the release (`--take-ownership`, helm ≥ 3.17).' }), false),
    insecure_skip_tls_verify: Type.Optional(Type.Boolean({ description: "Do not verify the TLS certificate of the chart's repository or registry when downloading it (`--insecure-skip-tls-verify`; alias `skip_tls_certs_check`). Default: false." })),
    skip_tls_certs_check: Type.Optional(Type.Boolean({ description: 'Alias of `insecure_skip_tls_verify`.' })),
    plain_http: Default(Type.Boolean({ description: 'Download the chart from an OCI registry over plain HTTP (`--plain-http`).' }), false),
    skip_schema_validation: Default(Type.Boolean({ description: "Do not check values against the chart's `values.schema.json` (`--skip-schema-validation`)." }), false),
    ...HelmAuthProps,
  },
  { additionalProperties: false },
);

type HelmArgs = Args<typeof schema>;

const result = Type.Object({
  status: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description:
      'The release as `helm list` shows it (`name`, `namespace`, `revision` (a string), `updated`, `status`, `chart` (`name-version`), `app_version`) plus `values` (its user-supplied values); `null` when there is none. In check mode `{values: {current, declared}}`, as kubernetes.core.',
  }),
  stdout: Type.String({ description: 'Output of the helm command that changed the release (`\'\'` when nothing ran).' }),
  stdout_lines: Type.Array(Type.String(), { description: '`stdout` split into lines (as Ansible adds it).' }),
  stderr: Type.String({ description: 'Error output of that helm command.' }),
  stderr_lines: Type.Array(Type.String(), { description: '`stderr` split into lines.' }),
  command: Type.String({ description: 'The helm command line that changed the release (masked), else the helm program with `--version`/`--repo`.' }),
});

function pick<T>(args: HelmArgs, ctx: ModuleContext, name: keyof HelmArgs, alias: keyof HelmArgs): T | undefined {
  const r = aliased<T>(args, name, alias);
  if (r.warning) ctx.log.warn(r.warning);
  return r.value;
}

const lines = (s: string): string[] => (s ? s.replace(/\n$/, '').split('\n') : []);

function fail(msg: string): never {
  throw new TaskFailure(msg);
}

function seconds(what: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  try {
    return parseGoDuration(v);
  } catch (e) {
    return fail(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The release's user values as helm would store them: given values, read files, `--set*` flags, and the values-reuse rules of `helm upgrade`. */
function valuesFor(args: HelmArgs, ctx: ModuleContext, name: string, ns: string, given: Values): EngineArgs['desiredValues'] {
  return async (current: Values | undefined, helm: () => Promise<HelmCli>, chart: ChartRef): Promise<Values> => {
    const files = args.values_files.map((f) => ctx.findFile(f, 'files'));
    const sets = setValuesFlags(args.set_values ?? []);
    let supplied: Values;
    if (files.length || sets.length) {
      // helm parses the files (YAML 1.1) and the --set syntax: it is asked for the exact result
      for (const f of files) {
        let text: string;
        try {
          text = await readFile(f, 'utf8');
        } catch (e) {
          return fail(`values file ${f}: cannot read it: ${e instanceof Error ? e.message : String(e)}`);
        }
        try {
          for (const s of valuesSecrets(YAML.parse(withoutBom(text), { version: '1.1' }))) ctx.addSecret(s);
        } catch {
          // helm parses the file below and reports what is wrong with it
        }
      }
      supplied = await (await helm()).suppliedValues(name, ns, chart, [...files.flatMap((f) => ['-f', f]), ...sets], given, { signal: ctx.signal });
    } else supplied = JSON.parse(JSON.stringify(given)) as Values;
    for (const s of valuesSecrets(supplied)) ctx.addSecret(s);
    if (current === undefined || args.reset_values) return supplied;
    if (args.reuse_values || args.reset_then_reuse_values) return mergeValues(current, supplied);
    return Object.keys(supplied).length ? supplied : current;
  };
}

/** The release as kubernetes.core's `get_release_status` returns it (`helm list` row + `values`). */
async function listed(ctx: ModuleContext, binary: string, kubeContext: string, kubeconfig: string | undefined, name: string, ns: string, states: ListState[]): Promise<ListedRelease | undefined> {
  const kind = storageKind(setting('helmDriver'));
  if (kind) return listStoredRelease(await releaseClient(ctx, kubeContext, kubeconfig), kind, name, ns, states, ctx.signal);
  return listReleaseWithHelm(await releaseHelm(ctx, binary, kubeContext, kubeconfig), name, ns, states, ctx.signal);
}

function statusOf(r: ListedRelease | undefined): Values | null {
  return r ? { ...r.entry, values: r.config } : null;
}

export default defineModule({
  name: 'helm',
  summary: 'kubernetes.core.helm: install, upgrade or uninstall a Helm release (kplay engine, honest changed)',
  description: [
    "kubernetes.core's `helm` module, with its argument names, aliases, defaults (`wait: false`, `purge: true`, `reset_values: true`) and registered results (`status`, `stdout`, `stderr`, `command`), over the engine of `helm_release`: the release is read from helm's storage record, compared with the chart and values (and the live objects), and helm runs only to change something — a rerun with nothing changed makes no new revision and reports ok.",
    "Values are computed exactly as helm stores them: `values_files`, then `release_values`, then `set_values` (helm itself parses the files and the `--set` syntax, with `helm install --dry-run=client`, when there are files or `set_values`); `reuse_values`/`reset_then_reuse_values`/`reset_values: false` merge the release's values as `helm upgrade` does. Connection: `context`, `kubeconfig` (a path or an inline map), `host`, `api_key`, `ca_cert`, `validate_certs` and their `K8S_AUTH_*` variables, written into one private temporary kubeconfig used by helm and by kplay.",
    'Differences with kubernetes.core (see the README): `changed` is honest (kubernetes.core without the helm-diff plugin compares only the chart name-version, appVersion and values — and only `values_files` when there are files — and misses live drift); `force` adds `--force` to an upgrade that is needed, it does not force one; `replace` is accepted (`helm upgrade --install` reuses the name of an uninstalled release); CRDs are not upgraded (as helm); the release description records the chart digest (`kplay: chart sha256:…`).',
  ].join('\n\n'),
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'supported',
  usesCluster: true,
  declaresState: true,
  examples: [
    {
      title: 'Install a chart from a repository added with helm_repository',
      yaml: '- helm:\n    name: web\n    chart_ref: myrepo/webapp\n    chart_version: 1.1.0\n    release_namespace: web\n    create_namespace: true\n    values:\n      replicaCount: 2\n    wait: true\n  register: web',
    },
    { title: 'Uninstall', yaml: '- helm:\n    name: web\n    release_namespace: web\n    state: absent' },
  ],
  async run(args, ctx) {
    const name = pick<string>(args, ctx, 'release_name', 'name');
    const ns = pick<string>(args, ctx, 'release_namespace', 'namespace');
    const state = pick<'present' | 'absent'>(args, ctx, 'release_state', 'state') ?? 'present';
    const given = pick<Values>(args, ctx, 'release_values', 'values') ?? {};
    const dependencyUpdate = pick<boolean>(args, ctx, 'dependency_update', 'dep_up') ?? false;
    const insecure = pick<boolean>(args, ctx, 'insecure_skip_tls_verify', 'skip_tls_certs_check') ?? false;
    const auth: HelmAuthArgs = {
      binary_path: args.binary_path,
      context: pick<string>(args, ctx, 'context', 'kube_context'),
      kubeconfig: pick<string | Values>(args, ctx, 'kubeconfig', 'kubeconfig_path'),
      host: args.host,
      api_key: args.api_key,
      ca_cert: pick<string>(args, ctx, 'ca_cert', 'ssl_ca_cert'),
      validate_certs: pick<boolean>(args, ctx, 'validate_certs', 'verify_ssl'),
    };
    if (args.api_key) ctx.addSecret(args.api_key);
    if (isMap(auth.kubeconfig)) for (const s of valuesSecrets(auth.kubeconfig)) ctx.addSecret(s);
    for (const s of valuesSecrets(given)) ctx.addSecret(s);
    // `key=value` pairs of set_values under secret-looking keys, before any helm command line shows them
    for (const item of args.set_values ?? []) {
      for (const pair of item.value.split(',')) {
        const eq = pair.indexOf('=');
        if (eq > 0) for (const s of valuesSecrets({ [pair.slice(0, eq).split('.').pop() ?? '']: pair.slice(eq + 1) })) ctx.addSecret(s);
      }
    }
    // Ansible's argument checks, worded as Ansible words them: required first, then required_if
    const missing = [!name && 'release_name', !ns && 'release_namespace'].filter(Boolean);
    if (missing.length || !name || !ns) return { status: 'failed', msg: `missing required arguments: ${missing.join(', ')}` };
    if (state === 'present' && !args.chart_ref) return { status: 'failed', msg: 'release_state is present but all of the following are missing: chart_ref' };
    const exclusive: [string, boolean][] = [
      ['context|ca_cert', (args.context ?? args.kube_context) !== undefined && (args.ca_cert ?? args.ssl_ca_cert) !== undefined],
      ['replace|history_max', args.replace && args.history_max !== undefined],
      ['wait_timeout|timeout', args.wait_timeout !== undefined && args.timeout !== undefined],
    ];
    for (const [pair, both] of exclusive) if (both) return { status: 'failed', msg: `parameters are mutually exclusive: ${pair}` };
    if (state === 'absent' && args.replace) return { status: 'failed', msg: 'replace is not applicable when state is absent' };

    const binary = args.binary_path ?? setting('helm');
    let conn: HelmConnection;
    try {
      conn = await helmConnection(auth, ctx.cluster, ctx.baseDir, { ...process.env, ...ctx.environment });
    } catch (e) {
      return { status: 'failed', msg: ctx.mask(e instanceof Error ? e.message : String(e)) };
    }
    const { kubeContext, kubeconfig } = conn;
    try {
      // `helm repo update` reads no cluster: no kubeconfig at all
      if (args.update_repo_cache) await (await helmFor(ctx, binary, {})).runOk('helm repo update', ['repo', 'update'], { signal: ctx.signal });
      const extra = [
        ...(args.history_max !== undefined ? ['--history-max', String(args.history_max)] : []),
        ...(args.disable_hook ? ['--no-hooks'] : []),
        ...(args.post_renderer ? ['--post-renderer', args.post_renderer] : []),
        ...(args.take_ownership ? ['--take-ownership'] : []),
        ...(args.skip_schema_validation ? ['--skip-schema-validation'] : []),
      ];
      const engineArgs: EngineArgs = {
        module: 'helm',
        chartArg: 'chart_ref',
        name,
        namespace: ns,
        state,
        chart: args.chart_ref,
        version: args.chart_version,
        repo_url: args.chart_repo_url,
        download: { insecureSkipTlsVerify: insecure, plainHttp: args.plain_http },
        create_namespace: args.create_namespace,
        wait: args.wait,
        timeout: args.wait ? (seconds('wait_timeout', args.wait_timeout) ?? seconds('timeout', args.timeout)) : seconds('timeout', args.timeout),
        atomic: args.atomic,
        force: args.force,
        skip_crds: args.skip_crds,
        upgrade_crds: false,
        dependency_update: dependencyUpdate,
        on_pending: 'fail',
        desiredValues: valuesFor(args, ctx, name, ns, given),
        reuse_values: !args.reset_values && args.reuse_values === true,
        upgrade_extra: extra,
        keep_history: !args.purge,
        no_hooks: args.disable_hook,
      };
      // kubernetes.core reads the release before deciding: `helm list` (deployed/failed) for present, every state for absent
      const before = ctx.checkMode ? await listed(ctx, binary, kubeContext, kubeconfig, name, ns, state === 'absent' ? ['all'] : []) : undefined;
      const { result: r, helm } = await runRelease(engineArgs, ctx, { binary, kubeContext, kubeconfig });
      const write = helm?.lastWrite;
      const idle = `${binary}${state === 'present' && args.chart_version ? ` --version=${args.chart_version}` : ''}${state === 'present' && args.chart_repo_url ? ` --repo=${args.chart_repo_url}` : ''}`;
      const stdout = write?.stdout ?? '';
      const stderr = write?.stderr ?? '';
      const out = { stdout, stdout_lines: lines(stdout), stderr, stderr_lines: lines(stderr), command: write?.command ?? idle };
      if (r.status === 'failed') return { ...r, msg: kcoreMessage(r.msg), data: { ...(r.data ?? {}), ...out } };
      if (r.status === 'skipped') return r;
      if (ctx.checkMode) {
        const status = { values: { current: before?.config ?? {}, declared: statusOf(before) ?? {} } };
        return { status: r.status, registerMsg: false, msg: r.msg, diff: r.diff, data: { status, ...out } };
      }
      const after = await listed(ctx, binary, kubeContext, kubeconfig, name, ns, r.status === 'changed' || state === 'absent' ? ['all'] : []);
      return { status: r.status, registerMsg: false, msg: r.msg, diff: r.diff, data: { status: statusOf(after), ...out } };
    } catch (e) {
      if (e instanceof TaskFailure) return { status: 'failed', msg: ctx.mask(e.message) };
      if (e instanceof HelmError || e instanceof KubeApiError) return { status: 'failed', msg: kcoreMessage(ctx.mask(`helm: release ${ns}/${name}: ${e.message}`)) };
      throw e;
    } finally {
      await conn.cleanup();
    }
  },
});
