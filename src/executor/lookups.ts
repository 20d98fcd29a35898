/**
 * Lookups that read the cluster (kubernetes.core's `k8s`): templates render synchronously, so
 * before a task's loop or arguments are rendered, the calls are found and their objects read
 * with the task's cluster client; the render then answers from what was read. A call the scan
 * cannot see (inside a variable the arguments read, `vars: {pods: "{{ query('k8s', …) }}"}`, or
 * with arguments known only while rendering) is noted when the render asks for it; the caller
 * reads it ({@link LookupHost.fill}) and renders again ({@link withLookups}), as many rounds as
 * the nesting needs. `cluster_info=` reads /version or /apis.
 */
import { kubeFor } from '../k8s/client.js';
import { kcoreResource } from '../k8s/kcore-action.js';
import { isRecord } from '../core/shape.js';
import type { ModuleContext } from '../core/module.js';
import type { TemplateHost } from '../template/engine.js';
import { templar } from '../template/index.js';
import { K8S_LOOKUP_NAMES, k8sQuery, k8sQueryKey, type K8sQuery } from '../template/k8s-lookup.js';

/** What reading the cluster for a lookup needs of a task's context (an include has no module context). */
export type LookupContext = Pick<ModuleContext, 'adapter' | 'cluster' | 'vars' | 'log' | 'signal' | 'addSecret'>;

/** A template host whose k8s lookup answers from objects read ahead, noting the queries it missed. */
export interface LookupHost extends TemplateHost {
  /** Read the queries the last render missed; false when there were none (a render error is then final). */
  fill: () => Promise<boolean>;
}

/** At most this many rounds of read-and-render again (one per level of variables holding lookups). */
const MAX_ROUNDS = 8;

/** A template host for a task: the k8s lookup calls found under `values` are read now, others when missed. */
export async function lookupHost(values: unknown[], vars: Record<string, unknown>, ctx: LookupContext): Promise<LookupHost> {
  const calls = values.flatMap((v) => templar.lookupCalls(v, vars, K8S_LOOKUP_NAMES));
  const answers = new Map<string, unknown[]>();
  const missed = new Map<string, K8sQuery>();
  let client: Awaited<ReturnType<typeof kubeFor>> | undefined;
  const readAll = async (queries: Iterable<K8sQuery>): Promise<void> => {
    for (const q of queries) {
      const key = k8sQueryKey(q);
      if (answers.has(key)) continue;
      client ??= await kubeFor(ctx);
      answers.set(key, await read(client, q, ctx.signal));
    }
  };
  const found: K8sQuery[] = [];
  for (const call of calls) {
    try {
      found.push(k8sQuery(call.kwargs));
    } catch {
      // the render reports the bad call
    }
  }
  await readAll(found);
  return {
    addSecret: (v) => ctx.addSecret(v),
    k8s: {
      find: (query) => {
        const key = k8sQueryKey(query as unknown as K8sQuery);
        const hit = answers.get(key);
        if (hit) return hit;
        missed.set(key, query as unknown as K8sQuery);
        throw new Error('the k8s lookup could not be read ahead: its arguments depend on values known only while rendering (e.g. a loop variable)');
      },
    },
    fill: async () => {
      if (missed.size === 0) return false;
      const queries = [...missed.values()];
      missed.clear();
      await readAll(queries);
      return true;
    },
  };
}

/** Run a render, reading the k8s lookups it missed and rendering again until none is missed. */
export async function withLookups<T>(host: LookupHost, render: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await render();
    } catch (e) {
      if (round >= MAX_ROUNDS || !(await host.fill())) throw e;
    }
  }
}

/** One object by name (`[]` when it does not exist, as kubernetes.core answers) or a list. */
async function read(client: Awaited<ReturnType<typeof kubeFor>>, q: K8sQuery, signal: AbortSignal): Promise<unknown[]> {
  // cluster_info: one value, as kubernetes.core returns [client.version] / [api_groups]
  if (q.clusterInfo === 'version') return [{ kubernetes: await client.getPath('/version', signal) }];
  if (q.clusterInfo === 'api_groups') {
    const apis = await client.getPath('/apis', signal);
    const groups = isRecord(apis) && Array.isArray(apis.groups) ? apis.groups : [];
    return [['', ...groups.flatMap((g: unknown) => (isRecord(g) && typeof g.name === 'string' ? [g.name] : []))]];
  }
  // kubernetes.core's kind lookup: `kind` may be a plural, singular or short name (`cm`)
  const { info, apiVersion } = await kcoreResource(client, q.apiVersion, q.kind);
  const namespace = info.namespaced ? q.namespace : undefined;
  if (q.name) {
    const o = await client.get({ apiVersion, kind: info.kind, name: q.name, namespace: namespace ?? (info.namespaced ? 'default' : undefined) }, signal);
    return o ? [o] : [];
  }
  return (await client.list(apiVersion, info.kind, { namespace, labelSelector: q.labelSelector, fieldSelector: q.fieldSelector, signal })).items;
}
