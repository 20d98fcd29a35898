/**
 * `helm_template` (kubernetes.core.helm_template): render a chart with `helm template` (no
 * cluster is contacted). `changed` only when `output_dir` gets a new or different file.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { aliased, kcoreMessage, defineModule, Default, HelmError, helmFor, SetValuesProp, setValuesFlags, syncDir, Type, valuesSecrets, type Values, setting } from 'kplay/sdk';

const schema = Type.Object(
  {
    chart_ref: Type.String({ minLength: 1, description: 'The chart: a local directory or `.tgz` (relative to the playbook), `repo/chart`, a chart URL, `oci://…`, or a name with `chart_repo_url`.', 'x-kplay-example': 'charts/webapp' }),
    chart_repo_url: Type.Optional(Type.String({ minLength: 1, description: 'Chart repository URL (`--repo`).' })),
    chart_version: Type.Optional(Type.String({ minLength: 1, description: 'Chart version or constraint (`--version`).' })),
    release_name: Type.Optional(Type.String({ minLength: 1, description: "Release name used in the templates (alias `name`); helm's `release-name` when unset." })),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `release_name`.' })),
    release_namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace used in the templates (`-n`).' })),
    release_values: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Values (a map; alias `values`), after `values_files`.' })),
    values: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Alias of `release_values`.' })),
    values_files: Default(Type.Array(Type.String({ minLength: 1 }), { description: 'Values files (relative to the playbook), in order.' }), []),
    set_values: SetValuesProp,
    include_crds: Default(Type.Boolean({ description: "Include the chart's CRDs (`--include-crds`)." }), false),
    show_only: Default(Type.Array(Type.String({ minLength: 1 }), { description: 'Only these templates (`-s templates/x.yaml`).' }), []),
    output_dir: Type.Optional(Type.String({ minLength: 1, description: 'Write the rendered templates under this directory (relative to the playbook) instead of `stdout`; only files that differ are written.' })),
    disable_hook: Default(Type.Boolean({ description: 'Leave the hooks out (`--no-hooks`).' }), false),
    dependency_update: Type.Optional(Type.Boolean({ description: 'Update the chart dependencies first (`--dependency-update`; alias `dep_up`). Default: false.' })),
    dep_up: Type.Optional(Type.Boolean({ description: 'Alias of `dependency_update`.' })),
    update_repo_cache: Default(Type.Boolean({ description: 'Run `helm repo update` first.' }), false),
    insecure_registry: Default(Type.Boolean({ description: "Do not verify the chart registry's TLS certificate (`--insecure-skip-tls-verify`)." }), false),
    plain_http: Default(Type.Boolean({ description: 'Fetch the chart over plain HTTP (`--plain-http`).' }), false),
    binary_path: Type.Optional(Type.String({ minLength: 1, description: 'The helm program. Default: `$KPLAY_HELM`, else `helm` on PATH.' })),
  },
  { additionalProperties: false },
);

const result = Type.Object({
  stdout: Type.String({ description: 'The rendered templates (multi-document YAML); with `output_dir`, helm\'s `wrote …` lines.' }),
  stdout_lines: Type.Array(Type.String(), { description: '`stdout` split into lines.' }),
  stderr: Type.String({ description: 'Error output of helm.' }),
  stderr_lines: Type.Array(Type.String(), { description: '`stderr` split into lines.' }),
  command: Type.String({ description: 'The helm command line (values files and secrets masked).' }),
  rc: Type.Integer({ description: "helm's exit code (0)." }),
});

const lines = (s: string): string[] => (s ? s.replace(/\n$/, '').split('\n') : []);

export default defineModule({
  name: 'helm_template',
  summary: 'kubernetes.core.helm_template: render a chart with helm template (changed only when output_dir is written)',
  description:
    "kubernetes.core's `helm_template`: runs `helm template` with the same flags (values as a private temporary file) and registers `stdout`, `stderr`, `command`, `rc`. It changes nothing, so it is `ok` — kubernetes.core always reports changed — unless `output_dir` gets a new or different file (kplay renders into a temporary directory and writes only the files that differ). In check mode it still renders (read-only); with `output_dir` nothing is written.",
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'unsupported',
  examples: [
    { title: 'Render a local chart', yaml: '- helm_template:\n    chart_ref: charts/webapp\n    release_name: web\n    release_namespace: web\n    values: { replicaCount: 2 }\n  register: rendered\n- debug:\n    msg: "{{ rendered.stdout | from_yaml_all | list | length }} objects"' },
  ],
  async run(args, ctx) {
    const warn = (w: string | undefined): void => {
      if (w) ctx.log.warn(w);
    };
    const n = aliased<string>(args, 'release_name', 'name');
    const v = aliased<Values>(args, 'release_values', 'values');
    const d = aliased<boolean>(args, 'dependency_update', 'dep_up');
    [n, v, d].forEach((r) => warn(r.warning));
    const values = v.value ?? {};
    for (const s of valuesSecrets(values)) ctx.addSecret(s);
    const binary = args.binary_path ?? setting('helm');
    const local = ctx.findFile(args.chart_ref, 'files');
    const chart = !args.chart_repo_url && !args.chart_ref.startsWith('oci://') && existsSync(local) ? local : args.chart_ref;
    const outDir = args.output_dir !== undefined ? path.resolve(ctx.baseDir, args.output_dir) : undefined;
    const tmp = outDir !== undefined ? await mkdtemp(path.join(os.tmpdir(), 'kplay-helm-template-')) : undefined;
    try {
      const helm = await helmFor(ctx, binary, {});
      if (args.update_repo_cache) await helm.runOk('helm repo update', ['repo', 'update'], { signal: ctx.signal });
      const cmd = [
        'template',
        ...(n.value ? [n.value] : []),
        chart,
        ...(d.value ? ['--dependency-update'] : []),
        ...(args.chart_repo_url ? ['--repo', args.chart_repo_url] : []),
        ...(args.chart_version ? ['--version', args.chart_version] : []),
        ...(args.disable_hook ? ['--no-hooks'] : []),
        ...(tmp !== undefined ? ['--output-dir', tmp] : []),
        ...(args.insecure_registry ? ['--insecure-skip-tls-verify'] : []),
        ...(args.plain_http ? ['--plain-http'] : []),
        ...args.show_only.flatMap((s) => ['-s', s]),
        ...args.values_files.flatMap((f) => ['-f', ctx.findFile(f, 'files')]),
        ...(args.release_namespace ? ['-n', args.release_namespace] : []),
        ...(args.include_crds ? ['--include-crds'] : []),
        ...setValuesFlags(args.set_values ?? []),
      ];
      const r = await helm.runWithValues(`helm template ${args.chart_ref}`, cmd, Object.keys(values).length ? values : undefined, { signal: ctx.signal }, true);
      const fromTmp = (s: string): string => (tmp !== undefined && outDir !== undefined ? s.split(tmp).join(outDir) : s);
      // registered as rendered (later tasks use it); secret values are masked wherever it is printed
      const stdout = fromTmp(r.stdout);
      const stderr = fromTmp(r.stderr);
      const command = fromTmp(helm.lastWrite?.command ?? `${binary} ${cmd.join(' ')}`);
      const data = { stdout, stdout_lines: lines(stdout), stderr, stderr_lines: lines(stderr), command, rc: r.code ?? 0 };
      if (tmp === undefined || outDir === undefined) return { status: 'ok', data };
      const written = await syncDir(tmp, outDir, ctx.checkMode);
      if (!written.length) return { status: 'ok', registerMsg: false, msg: `${outDir} is up to date`, data };
      return { status: 'changed', registerMsg: false, msg: `${ctx.checkMode ? 'would write' : 'wrote'} ${written.length} file(s) under ${outDir}: ${written.slice(0, 10).join(', ')}${written.length > 10 ? ', …' : ''}`, data };
    } catch (e) {
      if (e instanceof HelmError) return { status: 'failed', msg: kcoreMessage(ctx.mask(e.message)) };
      throw e;
    } finally {
      if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
    }
  },
});
