/**
 * `k8s_info`: read one object or a list of objects (for `register`), optionally waiting for
 * them like `wait_for`. Never changes anything.
 */
import { defineModule, kubeFor, KubeApiError, secretValues, waitFor, errorMessage, Default, StringEnum, Type, type WaitMode, type KubeObject } from 'kplay/sdk';

export default defineModule({
  name: 'k8s_info',
  summary: 'Read Kubernetes objects (one by name, or a list by namespace/selectors) for register',
  description:
    'Registers `resources`: a list of the objects found (empty when the object does not exist — that is not an error). Secret values are registered as secrets: they stay usable in later tasks through the registered variable but are masked (`********`) in every output. Never reports changed.',
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Type.String({ minLength: 1, description: 'Kind to read.', examples: ['Deployment', 'Secret'] }),
      api_version: Default(Type.String({ minLength: 1, description: 'API version of `kind`.', examples: ['apps/v1'] }), 'v1'),
      namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of namespaced kinds; omitted: `default` with `name`, all namespaces for lists.', examples: ['web'] })),
      name: Type.Optional(Type.String({ minLength: 1, description: 'Name of a single object; omit to list objects.', examples: ['web'] })),
      label_selector: Type.Optional(Type.String({ minLength: 1, description: 'Label selector (lists only).', examples: ['app=web'] })),
      field_selector: Type.Optional(Type.String({ minLength: 1, description: 'Field selector (lists only).', examples: ['status.phase=Running'] })),
      wait: Default(Type.Boolean({ description: 'Wait until the object(s) exist and are ready (rules of `wait_for`) before reading them.' }), false),
      wait_condition: Type.Optional(
        Type.Object(
          {
            type: Type.String({ minLength: 1, description: 'Condition type, e.g. `Ready`.' }),
            status: Default(StringEnum(['True', 'False', 'Unknown'], { description: 'Wanted status.' }), 'True'),
          },
          { additionalProperties: false, description: 'With `wait: true`: wait for this status condition instead of the readiness rules.' },
        ),
      ),
      wait_timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds to wait with `wait: true`.' }), 120),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    resources: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The objects found (without `managedFields`); empty when none exists.' }),
  }),
  examples: [
    { title: 'Read a Deployment', yaml: '- k8s_info:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n  register: web\n- debug:\n    msg: "{{ web.resources[0].status.readyReplicas }}"' },
    { title: 'List running pods of an app', yaml: '- k8s_info:\n    kind: Pod\n    namespace: web\n    label_selector: app=web\n    field_selector: status.phase=Running\n  register: pods' },
  ],
  async run(args, ctx) {
    const apiVersion = args.api_version;
    const client = await kubeFor(ctx);
    try {
      const info = await client.resource(apiVersion, args.kind);
      const namespace = info.namespaced ? (args.namespace ?? (args.name ? 'default' : undefined)) : undefined;
      if (args.wait) {
        const mode: WaitMode = args.wait_condition ? { type: 'condition', condition: args.wait_condition.type, status: args.wait_condition.status } : { type: 'ready' };
        const w = await waitFor(client, [{ apiVersion, kind: args.kind, name: args.name, namespace, labelSelector: args.label_selector }], mode, {
          timeoutMs: args.wait_timeout * 1000,
          signal: ctx.signal,
          progress: (m) => ctx.log.progress(m),
        });
        if (!w.ok) return { status: 'failed', msg: ctx.mask(w.msg) };
      }
      let resources: KubeObject[];
      if (args.name) {
        const o = await client.get({ apiVersion, kind: args.kind, name: args.name, namespace }, ctx.signal);
        resources = o ? [o] : [];
      } else {
        resources = (await client.list(apiVersion, args.kind, { namespace, labelSelector: args.label_selector, fieldSelector: args.field_selector, signal: ctx.signal })).items;
      }
      for (const o of resources) {
        const md = o.metadata as Record<string, unknown>;
        delete md.managedFields;
        for (const v of secretValues(o)) ctx.addSecret(v);
      }
      return { status: 'ok', msg: `${resources.length} ${args.kind}${resources.length === 1 ? '' : ' objects'} found`, data: { resources } };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : `k8s_info: ${errorMessage(e)}`) };
    }
  },
});
