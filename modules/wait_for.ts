/**
 * `wait_for`: wait (driven by watch events, never polling) until Kubernetes objects are ready,
 * a condition holds, an expression on the object is true, or they are deleted.
 */
import { defineModule, kubeFor, KubeApiError, maskObject, secretValues, waitFor, errorMessage, Default, StringEnum, Type, type WaitMode } from 'kplay/sdk';

export default defineModule({
  name: 'wait_for',
  summary: 'Wait until Kubernetes objects are ready, match a condition or expression, or are deleted',
  description: `Watches the objects (one watch per target, no polling) until they reach the wanted state. Readiness rules (kstatus spirit): Deployment rollout complete (observed generation, all replicas updated, available and ready, no old pods), StatefulSet (partition aware), DaemonSet, ReplicaSet, Job (Complete; Failed fails), Pod (Ready or Succeeded), PVC (Bound), Service (LoadBalancer ingress assigned), CRD (Established), Namespace (Active); other objects: a \`Ready\` condition if present, else observedGeneration == generation.

Fails fast, without waiting for the timeout, when pods of a rollout are stuck in ImagePullBackOff, ErrImagePull, CrashLoopBackOff, CreateContainerConfigError or InvalidImageName, or a Job failed. On timeout the message lists what was not ready and recent Warning events. Never reports changed.`,
  usesCluster: true,
  readOnly: true,
  checkMode: 'supported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      kind: Type.String({ minLength: 1, description: 'Kind of the object(s) to wait on.', examples: ['Deployment', 'Job', 'Pod'] }),
      api_version: Default(Type.String({ minLength: 1, description: 'API version of `kind` (`apps/v1` for Deployments).', examples: ['apps/v1', 'batch/v1'] }), 'v1'),
      name: Type.Optional(Type.String({ minLength: 1, description: 'Name of the object. Give `name` or `label_selector`.', examples: ['web'] })),
      namespace: Default(Type.String({ minLength: 1, description: 'Namespace of the object(s) (namespaced kinds).', examples: ['web'] }), 'default'),
      label_selector: Type.Optional(Type.String({ minLength: 1, description: 'Label selector; every matching object must reach the state (at least one must exist unless `state: absent`).', examples: ['app=web,tier!=canary'] })),
      state: Default(StringEnum(['present', 'absent'], { description: '`present`: wait for readiness (or `condition` / `that`). `absent`: wait until the object(s) no longer exist.' }), 'present'),
      condition: Type.Optional(
        Type.Object(
          {
            type: Type.String({ minLength: 1, description: 'Condition type, e.g. `Available`.' }),
            status: Default(StringEnum(['True', 'False', 'Unknown'], { description: 'Wanted status of the condition.' }), 'True'),
          },
          { additionalProperties: false, description: 'Wait for a status condition instead of the readiness rules: `type` and `status` (default `"True"`).', examples: [{ type: 'Available', status: 'True' }] },
        ),
      ),
      that: Type.Optional(Type.String({ minLength: 1, description: 'Condition (an Ansible expression) evaluated with `object` (the live object) besides the task variables; wait until it is true for every object.', examples: ['object.status.readyReplicas == 3'] })),
      timeout: Default(Type.Number({ exclusiveMinimum: 0, description: 'Seconds to wait before failing with what was not ready.' }), 300),
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    resources: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'The objects as last seen (Secret values masked).' }),
    elapsed: Type.Number({ description: 'Seconds waited (one decimal).' }),
    not_ready: Type.Array(Type.String(), { description: 'What was not ready when the wait ended (empty on success).' }),
  }),
  examples: [
    { title: 'Wait for a rollout', yaml: '- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    timeout: 600' },
    { title: 'Wait for a condition', yaml: '- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    condition: { type: Available, status: "True" }' },
    { title: 'Wait for an expression on the object', yaml: "- wait_for:\n    kind: Deployment\n    api_version: apps/v1\n    name: web\n    namespace: web\n    that: 'object.status.readyReplicas == 3'" },
    { title: 'Wait until pods are gone', yaml: '- wait_for:\n    kind: Pod\n    namespace: batch\n    label_selector: job-name=migrate\n    state: absent' },
  ],
  async run(args, ctx) {
    if (!args.name && !args.label_selector) return { status: 'failed', msg: 'wait_for: give name or label_selector' };
    const modes = [args.condition !== undefined, args.that !== undefined].filter(Boolean).length;
    if (modes > 1) return { status: 'failed', msg: 'wait_for: give at most one of condition, that' };
    if (args.state === 'absent' && modes) return { status: 'failed', msg: 'wait_for: condition/that cannot be combined with state: absent' };
    const that = args.that;
    const mode: WaitMode =
      args.state === 'absent'
        ? { type: 'absent' }
        : args.condition
          ? { type: 'condition', condition: args.condition.type, status: args.condition.status }
          : that !== undefined
            ? { type: 'check', describe: `\`${that}\``, check: (object) => ctx.evalCondition(that, { object }) }
            : { type: 'ready' };
    const client = await kubeFor(ctx);
    const started = Date.now();
    try {
      const info = await client.resource(args.api_version, args.kind);
      const namespace = info.namespaced ? args.namespace : undefined;
      const out = await waitFor(client, [{ apiVersion: args.api_version, kind: args.kind, name: args.name, namespace, labelSelector: args.label_selector }], mode, {
        timeoutMs: args.timeout * 1000,
        signal: ctx.signal,
        progress: (m) => ctx.log.progress(m),
      });
      for (const o of out.objects) for (const v of secretValues(o)) ctx.addSecret(v);
      const data = { resources: out.objects.map(maskObject), elapsed: Math.round((Date.now() - started) / 100) / 10, not_ready: out.notReady };
      return out.ok ? { status: 'ok', msg: out.msg, data } : { status: 'failed', msg: ctx.mask(out.msg), data };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      if (ctx.signal.aborted) throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? e.message : `wait_for: ${errorMessage(e)}`) };
    }
  },
});
