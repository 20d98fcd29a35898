/**
 * `k8s_service` (kubernetes.core.k8s_service): create, update or delete a Service from a few
 * arguments (type, ports, selector), optionally merged into a definition; the same engine as `k8s`.
 */
import { readFile } from 'node:fs/promises';
import { defineModule, Default, errorMessage, k8sAuthProperties, KcoreObjectFailure, taskClient, loadAllDocuments, performAction, StringEnum, Type, type KcoreItem } from 'kplay/sdk';

const raw = (description: string): ReturnType<typeof Type.Unsafe<unknown>> => Type.Unsafe<unknown>({ type: ['object', 'array', 'string'], description });
const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** kubernetes.core's `merge_dicts`: `y` wins where it has a value, maps merged recursively (null values dropped). */
function mergeDicts(x: Record<string, unknown>, y: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
    const a = x[k];
    const b = y[k];
    const v = isMap(a) && isMap(b) ? mergeDicts(a, b) : b !== undefined && b !== null && b !== '' && b !== false && b !== 0 ? b : a;
    if (v !== undefined && v !== null) out[k] = v;
  }
  return out;
}

export default defineModule({
  name: 'k8s_service',
  summary: 'kubernetes.core.k8s_service: create, update or delete a Service from type, ports and selector',
  description:
    'Builds a Service `name` in `namespace` from `type`, `ports` and `selector` (merged over `resource_definition`/`src` when given, the arguments winning) and creates, patches (`merge_type`), replaces (`force`), applies server-side (`apply`) or deletes it exactly as `k8s` does: dry-run first, so an unchanged Service is `ok`. Registers `result`, `method` (and `diff` with `--diff`). Connection settings as `k8s`.',
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'supported',
  schema: Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'Name of the Service.' }),
      namespace: Type.String({ minLength: 1, description: 'Namespace of the Service.' }),
      state: Default(StringEnum(['present', 'absent'], { description: '`present`: create or update the Service; `absent`: delete it.' }), 'present'),
      type: Type.Optional(StringEnum(['NodePort', 'ClusterIP', 'LoadBalancer', 'ExternalName'], { description: 'Service type.' })),
      ports: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The ports (`port`, `targetPort`, `protocol`, `name`, `nodePort`).' })),
      selector: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Labels of the pods the Service sends traffic to.' })),
      apply: Default(Type.Boolean({ description: 'Apply server-side (field manager `kplay`) instead of patching.' }), false),
      force: Default(Type.Boolean({ description: 'Replace (PUT) an existing Service instead of patching it.' }), false),
      merge_type: Type.Optional(
        Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string', enum: ['json', 'merge', 'strategic-merge'] }, description: 'Patch types to try in order (default `[strategic-merge, merge]`); `json` is refused, as by `k8s` (use `k8s_json_patch`).' }),
      ),
      resource_definition: Type.Optional(raw('A Service definition the arguments are merged into. Aliases: `definition`, `inline`.')),
      definition: Type.Optional(raw('Alias of `resource_definition`.')),
      inline: Type.Optional(raw('Alias of `resource_definition`.')),
      src: Type.Optional(Type.String({ description: 'A YAML file with a Service definition the arguments are merged into.' })),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    result: Type.Record(Type.String(), Type.Unknown(), { description: 'The Service as the apiserver returned it (`{}` after a deletion in check mode).' }),
    method: Type.Optional(StringEnum(['create', 'update', 'replace', 'apply', 'delete'], { description: 'What was done.' })),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'The apiserver\'s warnings.' })),
  }),
  examples: [
    { title: 'Expose port 8080 of the app=web pods', yaml: '- kubernetes.core.k8s_service:\n    name: web\n    namespace: web\n    type: ClusterIP\n    ports:\n      - port: 80\n        targetPort: 8080\n        protocol: TCP\n    selector:\n      app: web' },
    { title: 'Delete it', yaml: '- kubernetes.core.k8s_service:\n    name: web\n    namespace: web\n    state: absent' },
  ],
  async run(args, ctx) {
    const definitionArg = args.resource_definition ?? args.definition ?? args.inline;
    if (definitionArg !== undefined && args.src !== undefined) return { status: 'failed', msg: 'parameters are mutually exclusive: resource_definition|src' };
    const mergeTypes = args.merge_type === undefined ? [] : typeof args.merge_type === 'string' ? args.merge_type.split(',').map((s) => s.trim()) : args.merge_type;
    if (mergeTypes.includes('json')) return { status: 'failed', msg: 'merge_type json is not supported (kubernetes.core removed it): use k8s_json_patch for JSON patches' };
    if (args.apply && mergeTypes.length) return { status: 'failed', msg: 'parameters are mutually exclusive: merge_type|apply' };
    let base: Record<string, unknown> = {};
    try {
      const docs = definitionArg !== undefined ? (typeof definitionArg === 'string' ? loadAllDocuments(definitionArg, 'resource_definition') : Array.isArray(definitionArg) ? (definitionArg as unknown[]) : [definitionArg]) : args.src !== undefined ? loadAllDocuments(await readFile(ctx.findFile(args.src, 'files'), 'utf8'), args.src) : [];
      const first = docs[0];
      if (first !== undefined && !isMap(first)) return { status: 'failed', msg: 'Failed to load resource definition: the definition is not a map' };
      if (first) base = first;
    } catch (e) {
      return { status: 'failed', msg: `Failed to load resource definition: ${errorMessage(e)}` };
    }
    const def = mergeDicts(base, { kind: 'Service', apiVersion: 'v1', metadata: { name: args.name, namespace: args.namespace }, spec: { type: args.type, ports: args.ports, selector: args.selector } });
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    let item: KcoreItem;
    try {
      item = await performAction(client, def, { ...args, append_hash: false, wait: false, wait_timeout: 0 }, mergeTypes, ctx);
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(errorMessage(e)), data: e instanceof KcoreObjectFailure ? e.extra : undefined };
    }
    for (const w of item.warnings ?? []) ctx.log.warn(w);
    const result = Array.isArray(item.result) ? {} : item.result;
    // with --diff kubernetes.core registers `{before, after}` of what differs for every method but create and delete
    const data = { result, ...(item.method ? { method: item.method } : {}), ...(item.warnings ? { warnings: item.warnings } : {}), ...(ctx.diffMode && item.kdiff ? { diff: item.kdiff } : {}) };
    const verb = { create: 'created', update: 'patched', replace: 'replaced', apply: 'applied', delete: 'deleted' }[item.method ?? 'update'];
    const msg = `Service ${args.namespace}/${args.name}: ${item.changed ? `${ctx.checkMode ? 'would be ' : ''}${verb}` : 'unchanged'}`;
    const diff = ctx.diffMode && item.changed && item.diff ? [item.diff] : undefined;
    return item.changed ? { status: 'changed', registerMsg: false, msg, data, diff, registerDiff: false } : { status: 'ok', registerMsg: false, msg, data };
  },
});
