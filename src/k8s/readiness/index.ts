/**
 * Readiness of Kubernetes objects by kind (kstatus spirit). One small file per kind family;
 * `readinessOf(obj)` dispatches.
 */
import { splitApiVersion } from '../discovery.js';
import type { KubeObject } from '../types.js';
import type { Readiness, ReadinessCheck } from './common.js';
import { daemonSetReadiness } from './daemonset.js';
import { deploymentReadiness } from './deployment.js';
import { jobReadiness } from './job.js';
import { podReadiness } from './pod.js';
import { replicaSetReadiness } from './replicaset.js';
import { crdReadiness, genericReadiness, namespaceReadiness, pvcReadiness, serviceReadiness } from './simple.js';
import { statefulSetReadiness } from './statefulset.js';

export type { Readiness, ReadinessCheck } from './common.js';
export { FATAL_WAITING_REASONS, podFatalReason } from './pod.js';

const CHECKS: Record<string, ReadinessCheck> = {
  'apps/Deployment': deploymentReadiness,
  'apps/StatefulSet': statefulSetReadiness,
  'apps/DaemonSet': daemonSetReadiness,
  'apps/ReplicaSet': replicaSetReadiness,
  '/ReplicationController': replicaSetReadiness,
  'batch/Job': jobReadiness,
  '/Pod': podReadiness,
  '/PersistentVolumeClaim': pvcReadiness,
  '/Service': serviceReadiness,
  '/Namespace': namespaceReadiness,
  'apiextensions.k8s.io/CustomResourceDefinition': crdReadiness,
};

/** Readiness of an object of any kind. */
export function readinessOf(obj: KubeObject): Readiness {
  const { group } = splitApiVersion(obj.apiVersion);
  const check = CHECKS[`${group}/${obj.kind}`] ?? genericReadiness;
  return check(obj);
}

/** Kinds whose pods are watched for fatal container states during a rollout. */
export function hasPods(obj: KubeObject): boolean {
  return ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'ReplicationController'].includes(obj.kind);
}
