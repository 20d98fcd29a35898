/**
 * `k8s_info`: read one object or a list of objects (for `register`), optionally waiting for
 * them like `wait_for`. Never changes anything.
 */
import { defineModule, kubeFor, KubeApiError, secretValues, waitFor, errorMessage, type WaitMode, type KubeObject } from 'kplay/sdk';

/** Arguments of `k8s_info`. */
export interface K8sInfoArgs {
  /** Kind to read, e.g. `Deployment`. */
  kind: string;
  /** API version of the kind. @default "v1" */
  api_version?: string;
  /** Namespace (namespaced kinds); omit to list across all namespaces. */
  namespace?: string;
  /** Name of one object; omit to list. */
  name?: string;
  /** Label selector for lists. */
  label_selector?: string;
  /** Field selector for lists. */
  field_selector?: string;
  /** Wait for the objects first (readiness rules of `wait_for`). @default false */
  wait?: boolean;
  /** With `wait`: a condition to wait for instead of readiness. */
  wait_condition?: { type: string; status?: string };
  /** Seconds to wait. @default 120 */
  wait_timeout?: number;
}

export default defineModule<K8sInfoArgs>({
  name: 'k8s_info',
  summary: 'Read Kubernetes objects (one by name, or a list by namespace/selectors) for register',
  description:
    'Registers `resources`: a list of the objects found (empty when the object does not exist — that is not an error). Secret values are registered as secrets: they stay usable in later tasks through the registered variable but are masked (`********`) in every output. Never reports changed.',
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { type: 'string', minLength: 1, description: 'Kind to read.', examples: ['Deployment', 'Secret'] },
      api_version: { type: 'string', minLength: 1, default: 'v1', description: 'API version of `kind`.', examples: ['apps/v1'] },
      namespace: { type: 'string', minLength: 1, description: 'Namespace of namespaced kinds; omitted: `default` with `name`, all namespaces for lists.', examples: ['web'] },
      name: { type: 'string', minLength: 1, description: 'Name of a single object; omit to list objects.', examples: ['web'] },
      label_selector: { type: 'string', minLength: 1, description: 'Label selector (lists only).', examples: ['app=web'] },
      field_selector: { type: 'string', minLength: 1, description: 'Field selector (lists only).', examples: ['status.phase=Running'] },
      wait: { type: 'boolean', default: false, description: 'Wait until the object(s) exist and are ready (rules of `wait_for`) before reading them.' },
      wait_condition: {
        type: 'object',
        additionalProperties: false,
        required: ['type'],
        description: 'With `wait: true`: wait for this status condition instead of the readiness rules.',
        properties: {
          type: { type: 'string', minLength: 1, description: 'Condition type, e.g. `Ready`.' },
          status: { enum: ['True', 'False', 'Unknown'], default: 'True', description: 'Wanted status.' },
        },
      },
      wait_timeout: { type: 'number', exclusiveMinimum: 0, default: 120, description: 'Seconds to wait with `wait: true`.' },
    },
  },
  examples: [
    { title: 'Read a Deployment', yaml: '- k8s_info:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n  register: web\n- debug:\n    msg: "{{ web.resources[0].status.readyReplicas }}"' },
    { title: 'List running pods of an app', yaml: '- k8s_info:\n    kind: Pod\n    namespace: web\n    label_selector: app=web\n    field_selector: status.phase=Running\n  register: pods' },
  ],
  async run(args, ctx) {
    const apiVersion = args.api_version ?? 'v1';
    const client = await kubeFor(ctx);
    try {
      const info = await client.resource(apiVersion, args.kind);
      const namespace = info.namespaced ? (args.namespace ?? (args.name ? 'default' : undefined)) : undefined;
      if (args.wait) {
        const mode: WaitMode = args.wait_condition ? { type: 'condition', condition: args.wait_condition.type, status: args.wait_condition.status ?? 'True' } : { type: 'ready' };
        const w = await waitFor(client, [{ apiVersion, kind: args.kind, name: args.name, namespace, labelSelector: args.label_selector }], mode, {
          timeoutMs: (args.wait_timeout ?? 120) * 1000,
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
