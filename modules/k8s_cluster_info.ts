/**
 * `k8s_cluster_info` (kubernetes.core.k8s_cluster_info): the cluster's API groups and kinds, its
 * version and the connection in use. Never changes anything.
 */
import { defineModule, Default, errorMessage, k8sAuthProperties, KubeApiError, taskClient, Type, type KubeClient } from 'kplay/sdk';

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** One kind, as kubernetes.core describes it. */
interface KindInfo {
  categories: string[];
  name: string;
  namespaced: boolean;
  preferred: boolean;
  short_names: string[];
  singular_name: string;
}

/** The kinds of one group version (`/api/v1`, `/apis/apps/v1`), subresources and `*List` kinds left out. */
async function kindsOf(client: KubeClient, path: string, preferred: boolean, signal: AbortSignal): Promise<Record<string, KindInfo>> {
  let body: unknown;
  try {
    body = await client.getPath(path, signal);
  } catch (e) {
    // an aggregated API that is down must not hide the others (kubernetes.core's discovery skips it too)
    if (e instanceof KubeApiError) return {};
    throw e;
  }
  const out: Record<string, KindInfo> = {};
  for (const r of isMap(body) && Array.isArray(body.resources) ? body.resources : []) {
    if (!isMap(r) || typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string' || r.kind.endsWith('List')) continue;
    out[r.kind] = { categories: strings(r.categories), name: r.name, namespaced: r.namespaced === true, preferred, short_names: strings(r.shortNames), singular_name: typeof r.singularName === 'string' && r.singularName ? r.singularName : r.kind.toLowerCase() };
  }
  return out;
}

export default defineModule({
  name: 'k8s_cluster_info',
  summary: 'kubernetes.core.k8s_cluster_info: the cluster\'s API groups and kinds, its version and the connection',
  description:
    'Registers `apis` (`{"v1": {"Pod": {name, namespaced, preferred, short_names, singular_name, categories}, …}, "apps/v1": {…}, …}`, every served group version), `version` (`{server: {kubernetes: <GET /version>}, client: "kplay"}`) and `connection` (`host`, `verify_ssl`; `cert_file`, `ssl_ca_cert`, `username`, `password`, `proxy` are null: kplay reads credentials from the kubeconfig and does not expose them). Connection settings as `k8s`. Never reports changed.',
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      invalidate_cache: Default(Type.Boolean({ description: 'Accepted for compatibility: kplay reads discovery fresh for this task.' }), true),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    apis: Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), { description: 'Group version (`v1`, `apps/v1`, …) → kind → `{name, namespaced, preferred, short_names, singular_name, categories}`.' }),
    version: Type.Object({ server: Type.Record(Type.String(), Type.Unknown(), { description: '`{kubernetes: <GET /version>}`.' }), client: Type.String({ description: '`kplay`.' }) }, { description: 'Server and client versions.' }),
    connection: Type.Record(Type.String(), Type.Unknown(), { description: '`host` (the apiserver URL), `verify_ssl`; the other fields kubernetes.core has (cert_file, ssl_ca_cert, username, password, proxy) are null.' }),
  }),
  examples: [{ title: 'Check that a CRD\'s API is served', yaml: '- kubernetes.core.k8s_cluster_info:\n  register: info\n- assert:\n    that: "\'monitoring.coreos.com/v1\' in info.apis"' }],
  async run(args, ctx) {
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    try {
      const apis: Record<string, Record<string, KindInfo>> = {};
      const core = await client.getPath('/api', ctx.signal);
      const coreVersions = isMap(core) ? strings(core.versions) : ['v1'];
      for (const v of coreVersions) apis[v] = await kindsOf(client, `/api/${v}`, true, ctx.signal);
      const groups = await client.getPath('/apis', ctx.signal);
      const lanes: Promise<void>[] = [];
      for (const g of isMap(groups) && Array.isArray(groups.groups) ? groups.groups : []) {
        if (!isMap(g) || typeof g.name !== 'string') continue;
        const preferred = isMap(g.preferredVersion) ? g.preferredVersion.groupVersion : undefined;
        for (const v of Array.isArray(g.versions) ? g.versions : []) {
          if (!isMap(v) || typeof v.groupVersion !== 'string') continue;
          const gv = v.groupVersion;
          lanes.push(
            kindsOf(client, `/apis/${gv}`, gv === preferred, ctx.signal).then((kinds) => {
              apis[gv] = kinds;
            }),
          );
        }
      }
      await Promise.all(lanes);
      const sorted = Object.fromEntries(Object.keys(apis).sort().map((k) => [k, apis[k] ?? {}]));
      const server = await client.getPath('/version', ctx.signal);
      const connection = { cert_file: null, host: client.server, password: null, proxy: null, ssl_ca_cert: null, username: null, verify_ssl: !(args.validate_certs === false || args.verify_ssl === false) };
      const count = Object.values(sorted).reduce((n, k) => n + Object.keys(k).length, 0);
      // kubernetes.core registers no msg
      ctx.log.info(`${Object.keys(sorted).length} group versions, ${count} kinds; server ${client.serverVersion || 'version unknown'}`);
      return { status: 'ok', data: { apis: sorted, version: { server: { kubernetes: isMap(server) ? server : {} }, client: 'kplay' }, connection } };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : `k8s_cluster_info: ${errorMessage(e)}`) };
    }
  },
});
