/** StatefulSet readiness, including partitioned rolling updates. */
import type { KubeObject } from '../types.js';
import { num, observed, progressing, ready, specOf, statusOf, type Readiness } from './common.js';

/** StatefulSet: updated >= replicas - partition, revisions converged (without partition), all ready, no pod left above the count (a scale-down is done when its pods are gone, as kubernetes.core's `statefulset_ready`). */
export function statefulSetReadiness(obj: KubeObject): Readiness {
  const spec = specOf(obj);
  const st = statusOf(obj);
  const want = num(spec, 'replicas', 1);
  if (!observed(obj)) return progressing('waiting for the controller to observe the new generation');
  const strategy = typeof spec.updateStrategy === 'object' && spec.updateStrategy !== null ? (spec.updateStrategy as Record<string, unknown>) : {};
  const ru = typeof strategy.rollingUpdate === 'object' && strategy.rollingUpdate !== null ? (strategy.rollingUpdate as Record<string, unknown>) : {};
  const partition = strategy.type === 'OnDelete' ? 0 : num(ru, 'partition', 0);
  const updated = num(st, 'updatedReplicas');
  const readyN = num(st, 'readyReplicas');
  const msg = `${readyN}/${want} ready, ${updated}/${Math.max(0, want - partition)} updated${partition ? ` (partition ${partition})` : ''}`;
  if (readyN < want) return progressing(msg);
  const total = num(st, 'replicas');
  if (total > want) return progressing(`${msg}, ${total - want} pod(s) above the count still terminating`);
  if (strategy.type === 'OnDelete') return ready(msg);
  if (partition > 0) return updated >= want - partition ? ready(msg) : progressing(msg);
  if (updated < want) return progressing(msg);
  if (st.currentRevision !== st.updateRevision) return progressing(`${msg}, revision ${String(st.updateRevision)} rolling out`);
  return ready(msg);
}
