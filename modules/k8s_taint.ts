/**
 * `k8s_taint` (kubernetes.core.k8s_taint): add, update, replace or remove taints of a Node, with
 * kubernetes.core's matching rules (a taint is its key, and its effect when both sides give one).
 */
import { defineModule, Default, errorMessage, k8sAuthProperties, KubeApiError, taskClient, secretValues, StringEnum, Type, type KubeObject } from 'kplay/sdk';

/** A taint as given or stored. */
interface Taint {
  key: string;
  value?: string;
  effect?: string;
  timeAdded?: string;
}

/** kubernetes.core's `_equal_dicts`: same key, and same effect when both have one. */
const same = (a: Taint, b: Taint): boolean => a.key === b.key && (a.effect === undefined || b.effect === undefined || a.effect === b.effect);
/** Items of `a` matching none of `b`. */
const difference = (a: Taint[], b: Taint[]): Taint[] => a.filter((x) => !b.some((y) => same(x, y)));
/** Items of `a` matching one of `b`. */
const intersection = (a: Taint[], b: Taint[]): Taint[] => a.filter((x) => b.some((y) => same(x, y)));
/** A taint of `a` matching one of `b` with another value. */
const valueChanged = (a: Taint[], b: Taint[]): boolean => a.some((x) => b.some((y) => same(x, y) && (x.value ?? null) !== (y.value ?? null)));

export default defineModule({
  name: 'k8s_taint',
  summary: 'kubernetes.core.k8s_taint: add, update, replace or remove taints of a Node',
  description:
    'Taints match by key, and by effect when both the given and the stored taint have one (kubernetes.core\'s rule). `state: present` adds the missing taints and updates values (with `replace: true`, when a taint is missing the list is replaced by `taints`); `state: absent` removes the matching taints. Nothing is written when nothing changes. Registers `result`: the Node after the change (`{}` in check mode and after a removal, as kubernetes.core). Connection settings as `k8s`.',
  usesCluster: true,
  declaresState: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'Name of the Node.' }),
      state: Default(StringEnum(['present', 'absent'], { description: '`present`: the taints are on the node; `absent`: they are not.' }), 'present'),
      taints: Type.Array(
        Type.Object(
          {
            key: Type.String({ minLength: 1, description: 'Taint key.' }),
            value: Type.Optional(Type.String({ description: 'Taint value.' })),
            effect: Type.Optional(StringEnum(['NoSchedule', 'NoExecute', 'PreferNoSchedule'], { description: 'Taint effect (required to add a taint).' })),
          },
          { additionalProperties: false, description: 'One taint.' },
        ),
        { description: 'The taints.' },
      ),
      replace: Default(Type.Boolean({ description: 'With `state: present`: replace the node\'s taints by `taints` (when one of them is missing).' }), false),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({ result: Type.Record(Type.String(), Type.Unknown(), { description: 'The Node (after the change, when one was made and not in check mode); `{}` after a removal and in check mode.' }) }),
  examples: [
    { title: 'Taint a node for maintenance', yaml: '- kubernetes.core.k8s_taint:\n    name: node-1\n    taints:\n      - key: maintenance\n        value: "true"\n        effect: NoSchedule' },
    { title: 'Remove the taint', yaml: '- kubernetes.core.k8s_taint:\n    name: node-1\n    state: absent\n    taints:\n      - key: maintenance\n        effect: NoSchedule' },
  ],
  async run(args, ctx) {
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    const ref = { apiVersion: 'v1', kind: 'Node', name: args.name };
    const show = (o: KubeObject): Record<string, unknown> => {
      const copy = { ...o, metadata: { ...o.metadata } } as KubeObject & { metadata: Record<string, unknown> };
      delete copy.metadata.managedFields;
      for (const v of secretValues(copy)) ctx.addSecret(v);
      return copy as unknown as Record<string, unknown>;
    };
    try {
      const node = await client.get(ref, ctx.signal);
      if (!node) return { status: 'failed', msg: `Node '${args.name}' has not been found.` };
      const spec = (node as { spec?: { taints?: Taint[] } }).spec;
      const existing = Array.isArray(spec?.taints) ? spec.taints : [];
      const wanted: Taint[] = args.taints;
      const missing = difference(wanted, existing);
      let next: Taint[] | undefined;
      if (args.state === 'present') {
        if (missing.length) next = args.replace ? wanted : [...difference(existing, wanted), ...wanted];
        else if (valueChanged(existing, wanted)) next = [...difference(existing, wanted), ...wanted];
      } else if (intersection(existing, wanted).length) next = difference(existing, wanted);
      // kubernetes.core registers no msg; nothing to remove returns the node only when it has no taints at all
      if (!next) return { status: 'ok', data: { result: args.state === 'absent' && existing.length ? {} : show(node) } };
      ctx.log.info(`Node ${args.name}: taints ${ctx.checkMode ? 'would be ' : ''}${args.state === 'present' ? 'set' : 'removed'} (${next.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}${t.effect ? `:${t.effect}` : ''}`).join(', ') || 'none left'})`);
      if (ctx.checkMode) return { status: 'changed', data: { result: {} } };
      const after = await client.mergePatch(ref, { spec: { taints: next } }, { signal: ctx.signal });
      return { status: 'changed', data: { result: args.state === 'present' ? show(after) : {} } };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? `Failed to patch node due to: ${e.message}` : errorMessage(e)) };
    }
  },
});
