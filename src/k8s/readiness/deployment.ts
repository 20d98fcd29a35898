/** Deployment readiness: the rollout of the current generation is complete. */
import type { KubeObject } from '../types.js';
import { condition, failed, num, observed, progressing, ready, specOf, statusOf, type Readiness } from './common.js';

/** Deployment: observedGeneration current, all replicas updated, available and ready, no old pods left. */
export function deploymentReadiness(obj: KubeObject): Readiness {
  const spec = specOf(obj);
  const st = statusOf(obj);
  const want = num(spec, 'replicas', 1);
  if (!observed(obj)) return progressing('waiting for the controller to observe the new generation');
  const prog = condition(obj, 'Progressing');
  if (prog?.status === 'False' && prog.reason === 'ProgressDeadlineExceeded') return failed(`progress deadline exceeded${prog.message ? `: ${prog.message}` : ''}`);
  const updated = num(st, 'updatedReplicas');
  const available = num(st, 'availableReplicas');
  const readyN = num(st, 'readyReplicas');
  const total = num(st, 'replicas');
  const parts = [`${readyN}/${want} ready`];
  if (updated < want) parts.push(`${want - updated} updating`);
  if (total > updated) parts.push(`${total - updated} old pending termination`);
  if (available < want) parts.push(`${available}/${want} available`);
  const msg = parts.join(', ');
  if (spec.paused === true) return progressing(`${msg} (paused)`);
  if (updated === want && available === want && readyN === want && total === updated) return ready(msg);
  return progressing(msg);
}
