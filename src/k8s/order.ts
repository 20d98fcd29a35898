/**
 * Apply order (like kapp): namespaces and CRDs first, then RBAC, service accounts, config,
 * services, workloads, then everything else (custom resources). Deletes run in reverse.
 */
import { splitApiVersion } from './discovery.js';
import type { KubeObject } from './types.js';

/** Rank of each well-known kind; lower is applied first. */
const RANKS: [number, string[]][] = [
  [0, ['Namespace']],
  [1, ['CustomResourceDefinition']],
  [2, ['PriorityClass', 'StorageClass', 'RuntimeClass', 'PodSecurityPolicy', 'ResourceQuota', 'LimitRange']],
  [3, ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']],
  [4, ['ServiceAccount']],
  [5, ['ConfigMap', 'Secret']],
  [6, ['PersistentVolume', 'PersistentVolumeClaim']],
  [7, ['Service', 'Endpoints', 'EndpointSlice', 'Ingress', 'IngressClass', 'NetworkPolicy']],
  [8, ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob', 'ReplicaSet', 'Pod', 'ReplicationController', 'HorizontalPodAutoscaler', 'PodDisruptionBudget']],
  [9, ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'APIService']],
];
const BY_KIND = new Map<string, number>();
for (const [rank, kinds] of RANKS) for (const k of kinds) BY_KIND.set(k, rank);
/** Rank of kinds not listed (custom resources and the rest). */
export const OTHER_RANK = 10;

/** Apply rank of a kind. Only core/well-known API groups get the well-known rank. */
export function rankOf(apiVersion: string, kind: string): number {
  const { group } = splitApiVersion(apiVersion);
  const wellKnown = group === '' || group.endsWith('.k8s.io') || ['apps', 'batch', 'policy', 'autoscaling', 'networking.k8s.io', 'storage.k8s.io', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io', 'discovery.k8s.io', 'scheduling.k8s.io', 'admissionregistration.k8s.io', 'apiregistration.k8s.io'].includes(group);
  if (!wellKnown) return OTHER_RANK;
  return BY_KIND.get(kind) ?? OTHER_RANK;
}

/** Objects grouped into phases by rank, ascending (stable within a phase). */
export function phases<T extends { obj: KubeObject }>(items: T[]): { rank: number; items: T[] }[] {
  const m = new Map<number, T[]>();
  for (const it of items) {
    const r = rankOf(it.obj.apiVersion, it.obj.kind);
    m.set(r, [...(m.get(r) ?? []), it]);
  }
  return [...m.entries()].sort((a, b) => a[0] - b[0]).map(([rank, list]) => ({ rank, items: list }));
}

/** Objects sorted in apply order (stable). */
export function sortForApply<T extends KubeObject>(objects: T[]): T[] {
  return objects.map((o, i) => ({ o, i })).sort((a, b) => rankOf(a.o.apiVersion, a.o.kind) - rankOf(b.o.apiVersion, b.o.kind) || a.i - b.i).map((x) => x.o);
}

/** Objects sorted in delete order (reverse of apply order). */
export function sortForDelete<T extends KubeObject>(objects: T[]): T[] {
  return sortForApply(objects).reverse();
}
