/** DaemonSet readiness. */
import type { KubeObject } from '../types.js';
import { num, observed, progressing, ready, statusOf, type Readiness } from './common.js';

/** DaemonSet: every scheduled node runs an updated, available pod. */
export function daemonSetReadiness(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  if (!observed(obj)) return progressing('waiting for the controller to observe the new generation');
  const want = num(st, 'desiredNumberScheduled');
  const updated = num(st, 'updatedNumberScheduled');
  const available = num(st, 'numberAvailable');
  const readyN = num(st, 'numberReady');
  const msg = `${readyN}/${want} ready, ${updated}/${want} updated`;
  return updated >= want && available >= want && readyN >= want ? ready(msg) : progressing(msg);
}
