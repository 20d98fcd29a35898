/**
 * `k8s_drain` (kubernetes.core.k8s_drain): cordon, uncordon or drain a Node (mark it
 * unschedulable and evict its pods, with kubernetes.core's rules for unmanaged, DaemonSet and
 * local-storage pods).
 */
import { asList, defineModule, Default, errorMessage, k8sAuthProperties, KubeApiError, taskClient, StringEnum, Type, waitFor, type KubeObject } from 'kplay/sdk';

const MIRROR = 'kubernetes.io/config.mirror';

interface PodInfo {
  metadata: { name?: string; namespace?: string; annotations?: Record<string, string>; ownerReferences?: { kind?: string }[] };
  spec?: { volumes?: { emptyDir?: unknown }[] };
  status?: { phase?: string };
}

/** kubernetes.core's `filter_pods`: what to evict, warnings, and errors that stop the drain. */
function filterPods(pods: KubeObject[], force: boolean, ignoreDaemonsets: boolean, deleteEmptydirData: boolean): { evict: KubeObject[]; warnings: string[]; errors: string[] } {
  const evict: KubeObject[] = [];
  const unmanaged: KubeObject[] = [];
  const mirror: KubeObject[] = [];
  const local: KubeObject[] = [];
  const daemon: KubeObject[] = [];
  for (const o of pods) {
    const p = o as unknown as PodInfo;
    if (p.metadata.annotations && MIRROR in p.metadata.annotations) mirror.push(o);
    else if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') evict.push(o);
    else if ((p.spec?.volumes ?? []).some((v) => v.emptyDir !== undefined && v.emptyDir !== null)) local.push(o);
    else if (!p.metadata.ownerReferences?.length) unmanaged.push(o);
    else for (const owner of p.metadata.ownerReferences) (owner.kind === 'DaemonSet' ? daemon : evict).push(o);
  }
  const names = (l: KubeObject[]): string => l.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`).join(',');
  const warnings: string[] = [];
  const errors: string[] = [];
  if (unmanaged.length) {
    if (!force) errors.push(`cannot delete Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet (use option force set to yes): ${names(unmanaged)}.`);
    else {
      warnings.push(`Deleting Pods not managed by ReplicationController, ReplicaSet, Job, DaemonSet or StatefulSet: ${names(unmanaged)}.`);
      evict.push(...unmanaged);
    }
  }
  if (mirror.length) warnings.push(`cannot delete mirror Pods using API server: ${names(mirror)}.`);
  if (local.length) {
    if (!deleteEmptydirData) errors.push(`cannot delete Pods with local storage: ${names(local)}.`);
    else {
      warnings.push(`Deleting Pods with local storage: ${names(local)}.`);
      evict.push(...local);
    }
  }
  if (daemon.length) {
    if (!ignoreDaemonsets) errors.push(`cannot delete DaemonSet-managed Pods (use option ignore_daemonset set to yes): ${names(daemon)}.`);
    else warnings.push(`Ignoring DaemonSet-managed Pods: ${names(daemon)}.`);
  }
  return { evict, warnings, errors };
}

export default defineModule({
  name: 'k8s_drain',
  summary: 'kubernetes.core.k8s_drain: cordon, uncordon or drain a Node (evicting its pods)',
  description:
    '`cordon`/`uncordon` set `spec.unschedulable` (ok when it already is). `drain` cordons the node and evicts its pods through the eviction API (PodDisruptionBudgets are honoured; `disable_eviction` deletes instead), with kubernetes.core\'s rules: pods without a controller need `force`, pods with emptyDir volumes `delete_emptydir_data`, DaemonSet pods `ignore_daemonsets` (they are left alone); mirror pods are left alone with a warning. When pods cannot be drained, the cordon this task made is undone and the task fails. With `delete_options.wait_timeout` the task waits for the evicted pods to be gone (a timeout is a warning, as in kubernetes.core). Registers `result` (a sentence) and `warnings`. Not in check mode (kubernetes.core does not support it either). Connection settings as `k8s`.',
  usesCluster: true,
  checkMode: 'unsupported',
  diffMode: 'unsupported',
  schema: Type.Object(
    {
      name: Type.String({ minLength: 1, description: 'Name of the Node.' }),
      state: Default(StringEnum(['cordon', 'drain', 'uncordon'], { description: 'What to do with the node.' }), 'drain'),
      delete_options: Default(
        Type.Object(
          {
            terminate_grace_period: Type.Optional(Type.Integer({ minimum: 0, description: 'Grace period (seconds) of the evicted pods; their own when absent.' })),
            force: Default(Type.Boolean({ description: 'Also delete pods without a controller.' }), false),
            ignore_daemonsets: Default(Type.Boolean({ description: 'Leave DaemonSet pods alone instead of failing.' }), false),
            delete_emptydir_data: Default(Type.Boolean({ description: 'Also delete pods with emptyDir volumes (their data is lost).' }), false),
            disable_eviction: Default(Type.Boolean({ description: 'Delete the pods instead of evicting them (PodDisruptionBudgets are not honoured).' }), false),
            wait_timeout: Type.Optional(Type.Integer({ minimum: 0, description: 'Wait this many seconds for the pods to be gone (0: no limit); without it the task does not wait.' })),
            wait_sleep: Default(Type.Integer({ minimum: 0, description: 'Accepted for compatibility: kplay watches instead of polling.' }), 5),
          },
          { additionalProperties: false, description: 'How pods are removed by `drain`.' },
        ),
        {},
      ),
      pod_selectors: Type.Optional(Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string' }, description: 'Drain only the pods these label selectors select. Alias: `label_selectors`.' })),
      label_selectors: Type.Optional(Type.Unsafe<string | string[]>({ type: ['array', 'string'], items: { type: 'string' }, description: 'Alias of `pod_selectors`.' })),
      ...k8sAuthProperties,
    },
    { additionalProperties: false },
  ),
  result: Type.Object({
    result: Type.String({ description: 'What was done, e.g. `node n1 marked unschedulable. 3 Pod(s) deleted from node.`' }),
    warnings: Type.Optional(Type.Array(Type.String(), { description: 'Pods left alone or deleted with force, a wait that timed out.' })),
  }),
  examples: [
    { title: 'Drain a node, leaving DaemonSet pods, waiting up to 5 minutes', yaml: '- kubernetes.core.k8s_drain:\n    name: node-1\n    delete_options:\n      ignore_daemonsets: true\n      wait_timeout: 300' },
    { title: 'Put it back in service', yaml: '- kubernetes.core.k8s_drain:\n    name: node-1\n    state: uncordon' },
  ],
  async run(args, ctx) {
    const conn = await taskClient(ctx, args);
    if ('failed' in conn) return conn.failed;
    const client = conn.client;
    const ref = { apiVersion: 'v1', kind: 'Node', name: args.name };
    const setUnschedulable = (v: boolean): Promise<KubeObject> => client.mergePatch(ref, { spec: { unschedulable: v } }, { signal: ctx.signal });
    try {
      const node = await client.get(ref, ctx.signal);
      if (!node) return { status: 'failed', msg: `Node ${args.name} not found.` };
      const unschedulable = (node as { spec?: { unschedulable?: boolean } }).spec?.unschedulable === true;
      if (args.state === 'cordon' || args.state === 'uncordon') {
        const want = args.state === 'cordon';
        const word = want ? 'unschedulable' : 'schedulable';
        if (unschedulable === want) return { status: 'ok', data: { result: `node ${args.name} already marked ${word}.` } };
        await setUnschedulable(want);
        return { status: 'changed', data: { result: `node ${args.name} marked ${word}.` } };
      }
      const lines: string[] = [];
      let cordoned = false;
      if (!unschedulable) {
        await setUnschedulable(true);
        cordoned = true;
        lines.push(`node ${args.name} marked unschedulable.`);
      } else lines.push(`node ${args.name} already marked unschedulable.`);
      const o = args.delete_options;
      const selectors = asList(args.pod_selectors ?? args.label_selectors);
      const pods = (await client.list('v1', 'Pod', { fieldSelector: `spec.nodeName=${args.name}`, labelSelector: selectors.length ? selectors.join(',') : undefined, signal: ctx.signal })).items;
      const { evict, warnings, errors } = filterPods(pods, o.force, o.ignore_daemonsets, o.delete_emptydir_data);
      if (errors.length) {
        if (cordoned) await setUnschedulable(false);
        return { status: 'failed', msg: `Pod deletion errors: ${errors.join(' ')}` };
      }
      let removed = false;
      for (const p of evict) {
        const pref = { apiVersion: 'v1', kind: 'Pod', name: p.metadata.name ?? '', namespace: p.metadata.namespace };
        try {
          if (o.disable_eviction) removed = (await client.delete(pref, { gracePeriodSeconds: o.terminate_grace_period, signal: ctx.signal })) || removed;
          else removed = (await client.evict(pref, { gracePeriodSeconds: o.terminate_grace_period, signal: ctx.signal })) || removed;
        } catch (e) {
          if (e instanceof Error && e.name === 'UnreachableError') throw e;
          return { status: 'failed', msg: ctx.mask(`Failed to delete pod ${pref.namespace ?? ''}/${pref.name} due to: ${e instanceof KubeApiError ? e.message : errorMessage(e)}`), changed: cordoned || removed };
        }
      }
      if (evict.length) {
        if (o.wait_timeout !== undefined) {
          const targets = evict.map((p) => ({ apiVersion: 'v1', kind: 'Pod', name: p.metadata.name, namespace: p.metadata.namespace }));
          const w = await waitFor(client, targets, { type: 'absent' }, { timeoutMs: o.wait_timeout === 0 ? 2 ** 31 - 1 : o.wait_timeout * 1000, signal: ctx.signal, progress: (m) => ctx.log.progress(m) });
          if (!w.ok) warnings.push('timeout reached while pods were still running.');
        }
        lines.push(`${evict.length} Pod(s) deleted from node.`);
      }
      for (const w of warnings) ctx.log.warn(w);
      const result = lines.join(' ');
      const data = warnings.length ? { result, warnings } : { result };
      // kubernetes.core registers no msg on success: the text is in `result`
      return cordoned || removed ? { status: 'changed', data } : { status: 'ok', data };
    } catch (e) {
      if (e instanceof Error && e.name === 'UnreachableError') throw e;
      return { status: 'failed', msg: ctx.mask(e instanceof KubeApiError ? `Failed to drain node ${args.name}: ${e.message}` : errorMessage(e)) };
    }
  },
});
