/** ReplicaSet (and ReplicationController) readiness. */
import type { KubeObject } from '../types.js';
import { num, observed, progressing, ready, specOf, statusOf, type Readiness } from './common.js';

/** ReplicaSet: all replicas ready and available. */
export function replicaSetReadiness(obj: KubeObject): Readiness {
  const want = num(specOf(obj), 'replicas', 1);
  const st = statusOf(obj);
  if (!observed(obj)) return progressing('waiting for the controller to observe the new generation');
  const readyN = num(st, 'readyReplicas');
  const available = num(st, 'availableReplicas');
  const msg = `${readyN}/${want} ready`;
  return readyN >= want && available >= want && num(st, 'replicas') === want ? ready(msg) : progressing(msg);
}
