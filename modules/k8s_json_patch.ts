/**
 * `k8s_json_patch` (kubernetes.core.k8s_json_patch): apply RFC 6902 JSON patch operations to an
 * existing object; dry-run first, so an object the patch would not change is not written.
 */
import { defineModule, errorMessage, hideFields, kcoreDiff, kcoreVerdict, k8sAuthProperties, kcoreResource, kcoreWaitProperties, KubeApiError, taskClient, diffEntry, labelOf, maskObject, normalizeObject, secretValues, waitLikeKcore, Default, StringEnum, Type, type JsonPatchOp, type KubeObject, type ObjectRef } from 'kplay/sdk';

const HTTP_REASON: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 422: 'Unprocessable Entity', 500: 'Internal Server Error' };

const op = Type.Object(
  {
    op: StringEnum(['add', 'remove', 'replace', 'move', 'copy', 'test'], { description: 'The operation.' }),
    path: Type.String({ description: 'JSON pointer of the target, e.g. `/spec/replicas`, `/metadata/labels/app` (`~1` for `/` in a key).' }),
    value: Type.Optional(Type.Unknown({ description: 'Value for `add`, `replace`, `test`.' })),
    from: Type.Optional(Type.String({ description: 'Source pointer for `move` and `copy`.' })),
  },
  { additionalProperties: false, description: 'One RFC 6902 operation.' },
);

export default defineModule({
  name: 'k8s_json_patch',
  summary: 'kubernetes.core.k8s_json_patch: apply JSON patch (RFC 6902) operations to an existing Kubernetes object',
  description:
    'The patch is sent as a server-side dry-run first: when the object would not change (e.g. `replace` with the value it has) nothing is written and the task is `ok`. In check mode only the dry-run is sent. A `test` operation that fails makes the task fail. Registers `result` (the patched object), `duration` with `wait`. Connection settings as `k8s`.',
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'supported',
  schema: Type.Object(
    {
      kind: Type.String({ minLength: 1, description: 'Kind of the object.' }),
      name: Type.String({ minLength: 1, description: 'Name of the object.' }),
      namespace: Type.Optional(Type.String({ description: 'Namespace of the object (namespaced kinds need one).' })),
      api_version: Default(Type.String({ description: 'API version. Aliases: `api`, `version`.' }), 'v1'),
      api: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
      version: Type.Optional(Type.String({ description: 'Alias of `api_version`.' })),
      patch: Type.Array(op, { minItems: 1, description: 'The JSON patch operations, applied in order.' }),
      hidden_fields: Default(Type.Array(Type.String(), { description: 'Fields left out of `result` and the diff, e.g. `metadata.managedFields`.' }), []),
      ...kcoreWaitProperties,
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    result: Type.Record(Type.String(), Type.Unknown(), { description: 'The object after the patch (the dry-run answer in check mode).' }),
    duration: Type.Optional(Type.Integer({ description: 'With `wait`: seconds waited.' })),
  }),
  examples: [
    {
      title: 'Add a label and scale a Deployment',
      yaml: '- kubernetes.core.k8s_json_patch:\n    kind: Deployment\n    api_version: apps/v1\n    namespace: web\n    name: web\n    patch:\n      - op: add\n        path: /metadata/labels/tier\n        value: frontend\n      - op: replace\n        path: /spec/replicas\n        value: 3',
    },
  ],
  async run(args, ctx) {
    let apiVersion = args.version ?? args.api ?? args.api_version;
    const ops: JsonPatchOp[] = [];
    for (const [i, o] of args.patch.entries()) {
      if (o.op === 'move' || o.op === 'copy') {
        if (o.from === undefined) return { status: 'failed', msg: `Invalid JSON patch: operation ${i + 1} (${o.op}) needs 'from'` };
        ops.push({ op: o.op, from: o.from, path: o.path });
      } else if (o.op === 'remove') ops.push({ op: 'remove', path: o.path });
      else {
        if (!('value' in o)) return { status: 'failed', msg: `Invalid JSON patch: operation ${i + 1} (${o.op}) needs 'value'` };
        ops.push({ op: o.op, path: o.path, value: o.value });
      }
    }
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    const fail = (msg: string, e?: unknown): { status: 'failed'; msg: string; data: Record<string, unknown> } => {
      const status = e instanceof KubeApiError ? e.status : '';
      return { status: 'failed', msg: ctx.mask(msg), data: { error: status, status, reason: e instanceof KubeApiError ? (HTTP_REASON[e.status] ?? e.reason) : '' } };
    };
    let ref: ObjectRef;
    let existing: KubeObject | undefined;
    try {
      const { info, apiVersion: found } = await kcoreResource(client, apiVersion, args.kind);
      apiVersion = found;
      if (info.namespaced && !args.namespace) return fail(`${args.kind} ${args.name}: Failed to retrieve requested object: a namespace is required for the namespaced kind ${apiVersion}.${args.kind}`);
      ref = { apiVersion, kind: info.kind, name: args.name, namespace: info.namespaced ? args.namespace : undefined };
      existing = await client.get(ref, ctx.signal);
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return fail(`${args.kind} ${args.name}: Failed to retrieve requested object: ${errorMessage(e)}`, e);
    }
    if (!existing) return fail(`${args.kind} ${args.name}: Failed to retrieve requested object: ${apiVersion} ${args.kind} "${args.name}" not found`, new KubeApiError(404, 'NotFound', 'not found', 'GET', '', client.name));
    const show = (o: KubeObject): Record<string, unknown> => {
      // the object as the apiserver answered (managedFields included, as kubernetes.core registers it)
      const copy = { ...o, metadata: { ...o.metadata } };
      for (const v of secretValues(copy)) ctx.addSecret(v);
      return hideFields(copy as unknown as Record<string, unknown>, args.hidden_fields);
    };
    let after: KubeObject;
    let changed: boolean;
    let warning: string | undefined;
    try {
      const dry = await client.jsonPatch(ref, ops, { dryRun: true, signal: ctx.signal });
      changed = JSON.stringify(normalizeObject(dry)) !== JSON.stringify(normalizeObject(existing));
      after = changed && !ctx.checkMode ? await client.jsonPatch(ref, ops, { signal: ctx.signal }) : changed ? dry : existing;
      // a write counts as kubernetes.core counts it: a change only in `hidden_fields` is none
      if (changed) ({ changed, warning } = kcoreVerdict(existing, after, args.hidden_fields));
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return fail(`Failed to patch existing object: ${errorMessage(e)}`, e);
    }
    if (warning) ctx.log.warn(warning);
    // with --diff kubernetes.core registers `{before, after}` of what differs (`{}` when nothing does)
    const data: { result: Record<string, unknown>; duration?: number; diff?: Record<string, unknown> } = { result: show(after), ...(ctx.diffMode ? { diff: kcoreDiff((o) => hideFields({ ...o }, args.hidden_fields), existing, after) } : {}) };
    const diff = ctx.diffMode && changed ? [diffEntry(labelOf(ref), maskObject(hideFields(normalizeObject(existing), args.hidden_fields)), maskObject(hideFields(normalizeObject(after), args.hidden_fields)), (s) => ctx.mask(s))] : undefined;
    if (args.wait && !ctx.checkMode) {
      const w = await waitLikeKcore(client, ref, { condition: args.wait_condition, timeoutSeconds: args.wait_timeout, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
      data.duration = w.duration;
      if (w.object) data.result = show(w.object);
      if (!w.ok) return { status: 'failed', msg: ctx.mask(`Resource update timed out: ${w.msg}`), data, diff, changed, registerDiff: false };
    }
    const msg = `${labelOf(ref)}: ${changed ? (ctx.checkMode ? 'would be patched' : 'patched') : 'unchanged'}`;
    return changed ? { status: 'changed', registerMsg: false, msg, data, diff, registerDiff: false } : { status: 'ok', registerMsg: false, msg, data };
  },
});
