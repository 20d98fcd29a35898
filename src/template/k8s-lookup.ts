/**
 * kubernetes.core's `k8s` lookup: objects read from the cluster the task runs on. Templates
 * render synchronously, so the executor reads the objects first (it finds the calls with
 * `Templar.lookupCalls`, also when the plug-in name is a variable) and hands them in through
 * `PluginContext.k8s`; this plug-in answers from that.
 */
import type { LookupDef } from './plugins.js';
import { ExprError, isMap } from './values.js';

/** The names the lookup answers to. */
export const K8S_LOOKUP_NAMES: ReadonlySet<string> = new Set(['k8s', 'kubernetes.core.k8s', 'community.kubernetes.k8s']);

/** What the lookup reads: kubernetes.core's options (connection options are the task's cluster's). */
export interface K8sQuery {
  kind: string;
  apiVersion: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** `cluster_info=`: the cluster's `version` (`{kubernetes: <GET /version>}`) or its `api_groups` (`''` for the core group, then /apis's groups). */
  clusterInfo?: 'version' | 'api_groups';
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The query of a lookup call's keyword arguments (kubernetes.core's names; `resource_definition`/`src` give kind and name). */
export function k8sQuery(kwargs: Readonly<Record<string, unknown>>): K8sQuery {
  const info = kwargs.cluster_info;
  if (info !== undefined && info !== null) {
    if (info !== 'version' && info !== 'api_groups') throw new ExprError(`the k8s lookup's cluster_info must be 'version' or 'api_groups', got ${JSON.stringify(info)}`);
    return { kind: '', apiVersion: '', clusterInfo: info };
  }
  const def = isMap(kwargs.resource_definition) ? kwargs.resource_definition : undefined;
  const meta = def && isMap(def.metadata) ? def.metadata : undefined;
  const kind = str(kwargs.kind) ?? str(def?.kind);
  if (!kind) throw new ExprError("the k8s lookup needs kind= (or resource_definition=), e.g. lookup('kubernetes.core.k8s', kind='Deployment', namespace='web')");
  const q: K8sQuery = { kind, apiVersion: str(kwargs.api_version) ?? str(def?.apiVersion) ?? 'v1' };
  const name = str(kwargs.resource_name) ?? str(meta?.name);
  const namespace = str(kwargs.namespace) ?? str(meta?.namespace);
  if (name) q.name = name;
  if (namespace) q.namespace = namespace;
  const labels = kwargs.label_selector;
  const ls = Array.isArray(labels) ? labels.filter((x): x is string => typeof x === 'string').join(',') : str(labels);
  if (ls) q.labelSelector = ls;
  const fields = kwargs.field_selector;
  const fs = Array.isArray(fields) ? fields.filter((x): x is string => typeof x === 'string').join(',') : str(fields);
  if (fs) q.fieldSelector = fs;
  return q;
}

/** A stable key of a query (the executor's cache and the plug-in agree on it). */
export function k8sQueryKey(q: K8sQuery): string {
  return JSON.stringify([q.apiVersion, q.kind, q.namespace ?? '', q.name ?? '', q.labelSelector ?? '', q.fieldSelector ?? '', q.clusterInfo ?? '']);
}

const k8sLookup: LookupDef = {
  fn: (_terms, kwargs, ctx) => {
    if (!ctx.k8s) throw new ExprError('the k8s lookup reads from the cluster a task runs on: use it in the arguments or loop of a task that runs against a cluster');
    return ctx.k8s.find(k8sQuery(kwargs) as unknown as Record<string, unknown>);
  },
};

/** The lookup under each of its names. */
export const K8S_LOOKUPS: ReadonlyMap<string, LookupDef> = new Map([...K8S_LOOKUP_NAMES].map((n) => [n, k8sLookup]));
