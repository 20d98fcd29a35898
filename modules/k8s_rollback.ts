/**
 * `k8s_rollback` (kubernetes.core.k8s_rollback): roll Deployments and DaemonSets back to their
 * previous revision (`kubectl rollout undo`), as kubernetes.core does it.
 */
import { asList, defineModule, errorMessage, k8sAuthProperties, KubeApiError, taskClient, normalizeObject, secretValues, Default, Type, type KubeClient, type KubeObject, type ModuleContext, type ObjectRef } from 'kplay/sdk';

const list = (description: string): ReturnType<typeof Type.Unsafe<string | string[]>> => Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string' }, description });

const info = Type.Object(
  {
    changed: Type.Boolean({ description: 'Whether the object was rolled back.' }),
    method: Type.Optional(Type.String({ description: '`patch`.' })),
    body: Type.Optional(Type.Unknown({ description: 'The patch sent (a JSON patch for a Deployment, the ControllerRevision\'s data for a DaemonSet).' })),
    resources: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'The object after the rollback (before it in check mode).' })),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'Why nothing was done (no previous revision).' })),
  },
  { description: 'One object\'s rollback.' },
);

type Info = { changed: boolean; method?: string; body?: unknown; resources?: Record<string, unknown>; warnings?: string[] };

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export default defineModule({
  name: 'k8s_rollback',
  summary: 'kubernetes.core.k8s_rollback: roll Deployments and DaemonSets back to their previous revision',
  description:
    'For each Deployment (or DaemonSet) found by `name` or the selectors, finds the ReplicaSet (ControllerRevision) of the previous revision (current revision − 1) and patches the object back to its pod template, as kubernetes.core does (a Deployment\'s annotations are replaced by the revision annotation, as there). Without a previous revision nothing is done and the object\'s entry has a warning. Registers `rollback_info`: `[{changed, method: patch, body, resources}]`. Connection settings as `k8s`.',
  usesCluster: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Type.String({ description: 'Kind of the object(s) to roll back: `Deployment` or `DaemonSet` (another kind fails the task once an object of it is found, as kubernetes.core).' }),
      api_version: Default(Type.String({ description: 'API version (`apps/v1`). Aliases: `api`, `version`.' }), 'v1'),
      api: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
      version: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
      name: Type.Optional(Type.String({ description: 'Name of the object; omit to roll back what the selectors select.' })),
      namespace: Type.Optional(Type.String({ description: 'Namespace of the object(s).' })),
      label_selectors: Default(list('Label selectors of the objects to roll back.'), []),
      field_selectors: Default(list('Field selectors of the objects to roll back.'), []),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ rollback_info: Type.Array(info, { description: 'One entry per object found.' }) }),
  examples: [{ title: 'Roll a Deployment back', yaml: '- kubernetes.core.k8s_rollback:\n    api_version: apps/v1\n    kind: Deployment\n    name: web\n    namespace: web' }],
  async run(args, ctx) {
    const apiVersion = args.version ?? args.api ?? args.api_version;
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    const out: Info[] = [];
    try {
      let found: KubeObject[];
      if (args.name) {
        const o = await client.get({ apiVersion, kind: args.kind, name: args.name, namespace: args.namespace ?? 'default' }, ctx.signal);
        found = o ? [o] : [];
      } else {
        const labels = asList(args.label_selectors);
        const fields = asList(args.field_selectors);
        found = (await client.list(apiVersion, args.kind, { namespace: args.namespace, labelSelector: labels.length ? labels.join(',') : undefined, fieldSelector: fields.length ? fields.join(',') : undefined, signal: ctx.signal })).items;
      }
      for (const o of found) {
        // kubernetes.core takes any kind and fails on the first object it cannot roll back
        if (args.kind !== 'Deployment' && args.kind !== 'DaemonSet') return { status: 'failed', msg: `Cannot perform rollback on resource of kind ${args.kind}` };
        out.push(await rollback(client, o, apiVersion, args.kind, ctx));
      }
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : errorMessage(e)) };
    }
    for (const w of out.flatMap((i) => i.warnings ?? [])) ctx.log.warn(w);
    const changed = out.some((i) => i.changed);
    const msg = `${out.filter((i) => i.changed).length} ${ctx.checkMode ? 'would be ' : ''}rolled back, ${out.filter((i) => !i.changed).length} unchanged`;
    return changed ? { status: 'changed', registerMsg: false, msg, data: { rollback_info: out } } : { status: 'ok', registerMsg: false, msg, data: { rollback_info: out } };
  },
});

async function rollback(client: KubeClient, obj: KubeObject, apiVersion: string, kind: 'Deployment' | 'DaemonSet', ctx: ModuleContext): Promise<Info> {
  const ref: ObjectRef = { apiVersion, kind, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace };
  const rawSpec = (obj as { spec?: unknown }).spec;
  const spec = isMap(rawSpec) ? rawSpec : {};
  const selector = isMap(spec.selector) && isMap(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
  const labelSelector = Object.entries(selector).map(([k, v]) => `${k}=${String(v)}`).join(',') || undefined;
  const current = kind === 'DaemonSet' ? Number(obj.metadata.generation) : Number(obj.metadata.annotations?.['deployment.kubernetes.io/revision']);
  const managedKind = kind === 'DaemonSet' ? 'ControllerRevision' : 'ReplicaSet';
  const annotation = kind === 'DaemonSet' ? 'deprecated.daemonset.template.generation' : 'deployment.kubernetes.io/revision';
  const owned = (await client.list('apps/v1', managedKind, { namespace: ref.namespace, labelSelector, signal: ctx.signal })).items;
  const previous = owned.find((r) => Number(r.metadata.annotations?.[annotation]) === current - 1);
  if (!previous) return { changed: false, warnings: [`No rollout history found for resource ${kind}/${ref.name}`] };
  let after: KubeObject;
  let body: unknown;
  if (kind === 'Deployment') {
    const prevSpec = (previous as { spec?: { template?: Record<string, unknown> } }).spec;
    const template = structuredClone(prevSpec?.template ?? {});
    const tmd = isMap(template.metadata) ? template.metadata : {};
    if (isMap(tmd.labels)) delete tmd.labels['pod-template-hash'];
    const ops = [
      { op: 'replace' as const, path: '/spec/template', value: template },
      { op: 'replace' as const, path: '/metadata/annotations', value: { 'deployment.kubernetes.io/revision': previous.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '' } },
    ];
    body = ops;
    after = ctx.checkMode ? obj : await client.jsonPatch(ref, ops, { signal: ctx.signal });
  } else {
    const data = (previous as { data?: unknown }).data;
    if (!isMap(data)) return { changed: false, warnings: [`No rollout history found for resource ${kind}/${ref.name}`] };
    body = data;
    after = ctx.checkMode ? obj : await client.mergePatch(ref, data, { strategic: true, signal: ctx.signal });
  }
  const shown = { ...after, metadata: { ...after.metadata } } as KubeObject & { metadata: Record<string, unknown> };
  delete shown.metadata.managedFields;
  for (const v of secretValues(shown)) ctx.addSecret(v);
  // a rollback to the template it already has changes nothing but the revision annotation
  const changed = ctx.checkMode || JSON.stringify(normalizeObject(after)) !== JSON.stringify(normalizeObject(obj));
  return { changed, method: 'patch', body, resources: shown as unknown as Record<string, unknown> };
}
