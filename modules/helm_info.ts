/**
 * `helm_info` (kubernetes.core.helm_info): a release as kubernetes.core registers it (`status`:
 * the `helm list` row, values, manifest, notes, hooks), read from helm's storage record through
 * the Kubernetes API — no helm process unless `get_all_values` (helm coalesces the chart's values).
 */
import {
  aliased,
  kcoreMessage,
  defineModule,
  Default,
  HelmAuthProps,
  HelmError,
  KubeApiError,
  helmConnection,
  releaseHelm,
  isMap,
  LIST_STATES,
  listReleaseWithHelm,
  listStoredRelease,
  notesText,
  parseHelmValuesJson,
  releaseClient,
  storageKind,
  Type,
  valuesSecrets,
  yamlDocuments,
  secretValues,
  type KubeObject,
  type HelmAuthArgs,
  type HelmConnection,
  type ListState,
  type Values,
  setting,
} from 'kplay/sdk';

const schema = Type.Object(
  {
    release_name: Type.Optional(Type.String({ minLength: 1, description: 'Release name (alias `name`). Required.', 'x-kplay-example': 'web' })),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `release_name`.' })),
    release_namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of the release (alias `namespace`). Required.', 'x-kplay-example': 'web' })),
    namespace: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `release_namespace`.' })),
    release_state: Default(
      Type.Array(Type.String(), {
        description: "States to look for, as `helm list`'s flags: `all`, `deployed`, `failed`, `pending`, `superseded`, `uninstalled`, `uninstalling` (other words are ignored, as kubernetes.core). Empty: deployed or failed (helm's default).",
      }),
      [],
    ),
    get_all_values: Default(Type.Boolean({ description: "`values` with the chart's defaults too (`helm get values --all`); runs helm." }), false),
    ...HelmAuthProps,
  },
  { additionalProperties: false },
);

const result = Type.Object({
  status: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        "Only when the release exists: `name`, `namespace`, `revision` (a string), `updated`, `status`, `chart` (`name-version`), `app_version` (the `helm list` row), `values` (user-supplied; all with `get_all_values`), `manifest` (list of objects), `notes` (`helm get notes` output: `NOTES:` and the text, empty when none), `hooks` (list of objects). `values`, `manifest`, `notes` and `hooks` are the newest revision's (as `helm get` without `--revision` gives them, which kubernetes.core runs), whatever revision `release_state` found.",
    }),
  ),
});

export default defineModule({
  name: 'helm_info',
  summary: 'kubernetes.core.helm_info: read a Helm release (status, values, manifest, notes, hooks)',
  description:
    "kubernetes.core's `helm_info`: registers `status` (absent when the release is not found with the given `release_state`). The release is read from helm's storage record (Secret, or ConfigMap with `HELM_DRIVER=configmap`) through the Kubernetes API; other storage drivers are read with `helm list`/`helm status`. Secret-looking values are masked in output. Never changes anything.",
  schema,
  result,
  checkMode: 'supported',
  diffMode: 'unsupported',
  usesCluster: true,
  readOnly: true,
  examples: [
    { title: 'Read a release', yaml: '- helm_info:\n    name: web\n    release_namespace: web\n  register: web\n- debug:\n    msg: "{{ web.status.revision }} {{ web.status.values }}"' },
    { title: 'Also a release that failed or is pending', yaml: '- helm_info:\n    name: web\n    release_namespace: web\n    release_state: [all]\n  register: web' },
  ],
  async run(args, ctx) {
    const warn = (w: string | undefined): void => {
      if (w) ctx.log.warn(w);
    };
    const n = aliased<string>(args, 'release_name', 'name');
    const s = aliased<string>(args, 'release_namespace', 'namespace');
    warn(n.warning);
    warn(s.warning);
    const name = n.value;
    const ns = s.value;
    if (!name || !ns) return { status: 'failed', msg: `missing required arguments: ${[!name && 'release_name', !ns && 'release_namespace'].filter(Boolean).join(', ')}` };
    const context = aliased<string>(args, 'context', 'kube_context');
    const kubeconfigArg = aliased<string | Values>(args, 'kubeconfig', 'kubeconfig_path');
    const caCert = aliased<string>(args, 'ca_cert', 'ssl_ca_cert');
    const validate = aliased<boolean>(args, 'validate_certs', 'verify_ssl');
    for (const r of [context, kubeconfigArg, caCert, validate]) warn(r.warning);
    if (context.value !== undefined && (caCert.value !== undefined || validate.value !== undefined)) {
      return { status: 'failed', msg: `parameters are mutually exclusive: context|${caCert.value !== undefined ? 'ca_cert' : 'validate_certs'}` };
    }
    const auth: HelmAuthArgs = { binary_path: args.binary_path, context: context.value, kubeconfig: kubeconfigArg.value, host: args.host, api_key: args.api_key, ca_cert: caCert.value, validate_certs: validate.value };
    if (args.api_key) ctx.addSecret(args.api_key);
    const states = args.release_state.filter((x): x is ListState => (LIST_STATES as readonly string[]).includes(x));
    const binary = args.binary_path ?? setting('helm');
    let conn: HelmConnection;
    try {
      conn = await helmConnection(auth, ctx.cluster, ctx.baseDir, { ...process.env, ...ctx.environment });
    } catch (e) {
      return { status: 'failed', msg: ctx.mask(e instanceof Error ? e.message : String(e)) };
    }
    try {
      const { kubeContext, kubeconfig } = conn;
      const helm = () => releaseHelm(ctx, binary, kubeContext, kubeconfig);
      const kind = storageKind(setting('helmDriver'));
      const found = kind ? await listStoredRelease(await releaseClient(ctx, kubeContext, kubeconfig), kind, name, ns, states, ctx.signal) : await listReleaseWithHelm(await helm(), name, ns, states, ctx.signal);
      if (!found) return { status: 'ok', registerMsg: false, msg: `release ${ns}/${name} not found${states.length ? ` (release_state: ${states.join(', ')})` : ''}`, data: {} };
      let values: Values = found.config;
      if (args.get_all_values) {
        const r = await (await helm()).runOk(`helm get values ${name}`, ['get', 'values', name, '-n', ns, '--all', '-o', 'json'], { signal: ctx.signal });
        values = parseHelmValuesJson(r.stdout);
      }
      for (const v of [...valuesSecrets(values), ...valuesSecrets(found.config)]) ctx.addSecret(v);
      const hooks = found.hooks.flatMap((h) => yamlDocuments(`---\n# Source: ${h.path}\n${h.manifest}`));
      const manifest = yamlDocuments(found.manifest);
      // Secrets of the release stay usable in later tasks but are masked in every output (as k8s_info)
      for (const o of [...manifest, ...hooks]) if (isMap(o) && o.kind === 'Secret') for (const v of secretValues(o as KubeObject)) ctx.addSecret(v);
      const status = {
        ...found.entry,
        values,
        manifest,
        notes: notesText(found.notes),
        hooks,
      };
      return { status: 'ok', registerMsg: false, msg: `release ${ns}/${name}: revision ${found.entry.revision}, ${found.entry.status}`, data: { status } };
    } catch (e) {
      if (e instanceof HelmError || e instanceof KubeApiError) return { status: 'failed', msg: kcoreMessage(ctx.mask(`helm_info: cannot read release ${ns}/${name}: ${e.message}`)) };
      throw e;
    } finally {
      await conn.cleanup();
    }
  },
});
