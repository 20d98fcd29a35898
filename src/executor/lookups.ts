/**
 * Lookups that read the cluster (kubernetes.core's `k8s`): templates render synchronously, so
 * before a task's loop or arguments are rendered, the calls are found and their objects read
 * with the task's cluster client; the render then answers from what was read.
 */
import { kubeFor } from '../k8s/client.js';
import type { ModuleContext } from '../sdk/module.js';
import type { TemplateHost } from '../template/engine.js';
import { templar } from '../template/index.js';
import { K8S_LOOKUP_NAMES, k8sQuery, k8sQueryKey, type K8sQuery } from '../template/k8s-lookup.js';

/** A template host whose k8s lookup answers the calls found under `values`; undefined when there are none. */
export async function lookupHost(values: unknown[], vars: Record<string, unknown>, ctx: ModuleContext): Promise<TemplateHost | undefined> {
  const calls = values.flatMap((v) => templar.lookupCalls(v, vars, K8S_LOOKUP_NAMES));
  if (calls.length === 0) return undefined;
  const answers = new Map<string, unknown[]>();
  const client = await kubeFor(ctx);
  for (const call of calls) {
    let q: K8sQuery;
    try {
      q = k8sQuery(call.kwargs);
    } catch {
      continue; // the render reports the bad call
    }
    const key = k8sQueryKey(q);
    if (answers.has(key)) continue;
    answers.set(key, await read(client, q, ctx.signal));
  }
  return {
    addSecret: (v) => ctx.addSecret(v),
    k8s: {
      find: (query) => {
        const hit = answers.get(k8sQueryKey(query as unknown as K8sQuery));
        if (!hit) throw new Error('the k8s lookup could not be read ahead: its arguments depend on values known only while rendering (e.g. a loop variable)');
        return hit;
      },
    },
  };
}

/** One object by name (`[]` when it does not exist, as kubernetes.core answers) or a list. */
async function read(client: Awaited<ReturnType<typeof kubeFor>>, q: K8sQuery, signal: AbortSignal): Promise<unknown[]> {
  const info = await client.resource(q.apiVersion, q.kind);
  const namespace = info.namespaced ? q.namespace : undefined;
  if (q.name) {
    const o = await client.get({ apiVersion: q.apiVersion, kind: q.kind, name: q.name, namespace: namespace ?? (info.namespaced ? 'default' : undefined) }, signal);
    return o ? [o] : [];
  }
  return (await client.list(q.apiVersion, q.kind, { namespace, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector, signal })).items;
}
