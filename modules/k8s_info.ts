/**
 * `k8s_info` (also kubernetes.core.k8s_info): read one object or a list of objects (for
 * `register`), optionally waiting for them like `wait_for`. Never changes anything.
 */
import { asList, conditionMet, defineModule, findResource, groupVersion, hideFields, k8sAuthProperties, kcoreReadiness, KubeApiError, taskClient, secretValues, waitFor, errorMessage, Default, StringEnum, Type, type WaitMode, type KubeObject } from 'kplay/sdk';

const list = (description: string): ReturnType<typeof Type.Unsafe<string | string[]>> => Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string' }, description });

export default defineModule({
  name: 'k8s_info',
  summary: 'Read Kubernetes objects (one by name, or a list by namespace/selectors) for register (kubernetes.core.k8s_info arguments too)',
  description:
    'Registers `resources`: a list of the objects found (empty when the object does not exist — that is not an error) and `api_found` (false, with an empty list and a message, when the cluster does not serve the kind: a CRD that is not installed). Accepts kubernetes.core.k8s_info\'s arguments too (`label_selectors`/`field_selectors` lists, `api`/`version`, `wait_sleep`, `wait_condition.reason`, `hidden_fields`, and the connection settings `kubeconfig`, `context`, `host`, `api_key`, … or `K8S_AUTH_*`). Secret values are registered as secrets: they stay usable in later tasks through the registered variable but are masked (`********`) in every output. Never reports changed.',
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Type.String({ minLength: 1, description: 'Kind to read.', examples: ['Deployment', 'Secret'] }),
      api_version: Default(Type.String({ minLength: 1, description: 'API version of `kind`. Aliases: `api`, `version`.', examples: ['apps/v1'] }), 'v1'),
      api: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `api_version`.' })),
      version: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `api_version`.' })),
      namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace of namespaced kinds; omitted: `default` with `name`, all namespaces for lists.', examples: ['web'] })),
      name: Type.Optional(Type.String({ minLength: 1, description: 'Name of a single object; omit to list objects.', examples: ['web'] })),
      label_selector: Type.Optional(Type.String({ minLength: 1, description: 'Label selector (lists only).', examples: ['app=web'] })),
      field_selector: Type.Optional(Type.String({ minLength: 1, description: 'Field selector (lists only).', examples: ['status.phase=Running'] })),
      label_selectors: Type.Optional(list('Label selectors (kubernetes.core), all of which must match; combined with `label_selector`.')),
      field_selectors: Type.Optional(list('Field selectors (kubernetes.core), all of which must match; combined with `field_selector`.')),
      hidden_fields: Type.Optional(Type.Array(Type.String(), { description: 'Fields left out of `resources`, e.g. `status`, `spec.containers[0].env[3].value`, `metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]`.' })),
      wait: Default(Type.Boolean({ description: 'Wait until the object(s) exist and, as kubernetes.core waits, Deployments, DaemonSets and StatefulSets are ready (kplay\'s readiness rules) and Pods have every container ready (a pod that ran to completion fails at once); other kinds only need to exist.' }), false),
      wait_condition: Type.Optional(
        Type.Object(
          {
            type: Type.Optional(Type.String({ minLength: 1, description: 'Condition type, e.g. `Ready`. Without it `wait_condition` is ignored.' })),
            status: Default(StringEnum(['True', 'False', 'Unknown'], { description: 'Wanted status.' }), 'True'),
            reason: Type.Optional(Type.String({ description: 'Wanted reason of the condition (kubernetes.core).' })),
          },
          { additionalProperties: false, description: 'With `wait: true`: wait for this status condition instead of the readiness rules.' },
        ),
      ),
      wait_sleep: Default(Type.Integer({ minimum: 0, description: 'Accepted for kubernetes.core compatibility: kplay watches instead of polling.' }), 5),
      wait_timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds to wait with `wait: true`.' }), 120),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    resources: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The objects found (without `managedFields`); empty when none exists.' }),
    api_found: Type.Boolean({ description: 'Whether the cluster serves `api_version`/`kind` (false: `resources` is empty).' }),
  }),
  examples: [
    { title: 'Read a Deployment', yaml: '- k8s_info:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n  register: web\n- debug:\n    msg: "{{ web.resources[0].status.readyReplicas }}"' },
    { title: 'List running pods of an app', yaml: '- k8s_info:\n    kind: Pod\n    namespace: web\n    label_selector: app=web\n    field_selector: status.phase=Running\n  register: pods' },
    { title: 'kubernetes.core style: selectors as lists, wait for a condition', yaml: '- kubernetes.core.k8s_info:\n    kind: Pod\n    namespace: web\n    label_selectors: [app=web]\n    wait: true\n    wait_condition: { type: Ready, status: "True" }\n  register: pods' },
  ],
  async run(args, ctx) {
    const asked = args.version ?? args.api ?? args.api_version;
    const labelSelector = [...(args.label_selector ? [args.label_selector] : []), ...asList(args.label_selectors)].join(',') || undefined;
    const fieldSelector = [...(args.field_selector ? [args.field_selector] : []), ...asList(args.field_selectors)].join(',') || undefined;
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    try {
      const info = await findResource(client, asked, args.kind);
      if (!info) return { status: 'ok', msg: `Failed to find API for resource with apiVersion "${asked}" and kind "${args.kind}"`, data: { resources: [], api_found: false } };
      const apiVersion = asked === 'v1' ? groupVersion(info) : asked;
      const namespace = info.namespaced ? (args.namespace ?? (args.name ? 'default' : undefined)) : undefined;
      let waited: KubeObject[] | undefined;
      if (args.wait) {
        const cond = args.wait_condition?.type ? { ...args.wait_condition, type: args.wait_condition.type } : undefined;
        const mode: WaitMode = !cond
          ? { type: 'ready', rules: kcoreReadiness }
          : cond.reason
            ? { type: 'check', describe: `condition ${cond.type}=${cond.status} (${cond.reason})`, check: (o) => Promise.resolve(conditionMet(cond, o)) }
            : { type: 'condition', condition: cond.type, status: cond.status };
        const w = await waitFor(client, [{ apiVersion, kind: info.kind, name: args.name, namespace, labelSelector }], mode, {
          timeoutMs: args.wait_timeout * 1000,
          signal: ctx.signal,
          progress: (m) => ctx.log.progress(m),
        });
        // nothing there when the wait ends is an empty list, as kubernetes.core's find: only an object
        // that exists and did not become ready fails the task
        if (!w.ok && w.objects.length > 0) return { status: 'failed', msg: ctx.mask(w.msg) };
        // as kubernetes.core's find: the objects as the wait saw them ready (a pod read again a
        // moment later may have moved on, e.g. run to completion)
        if (w.ok && !fieldSelector) waited = w.objects;
      }
      let resources: KubeObject[];
      if (waited) {
        resources = waited;
      } else if (args.name) {
        const o = await client.get({ apiVersion, kind: info.kind, name: args.name, namespace }, ctx.signal);
        resources = o ? [o] : [];
      } else {
        resources = (await client.list(apiVersion, info.kind, { namespace, labelSelector, fieldSelector, signal: ctx.signal })).items;
      }
      for (const o of resources) {
        const md = o.metadata as Record<string, unknown>;
        delete md.managedFields;
        for (const v of secretValues(o)) ctx.addSecret(v);
      }
      if (args.hidden_fields) resources = resources.map((o) => hideFields(o, args.hidden_fields));
      return { status: 'ok', registerMsg: false, msg: `${resources.length} ${args.kind}${resources.length === 1 ? '' : ' objects'} found`, data: { resources, api_found: true } };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      // the kind stopped being served during the run (its CRD deleted): as when it is missing at the start, saying so
      if (e instanceof KubeApiError && e.verb === 'DISCOVER') return { status: 'ok', msg: ctx.mask(e.apiMessage), data: { resources: [], api_found: false } };
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : `k8s_info: ${errorMessage(e)}`) };
    }
  },
});
