/** Pod readiness and the container states that mean a rollout will not make progress. */
import type { KubeObject } from '../types.js';
import { condition, failed, progressing, ready, statusOf, type Readiness } from './common.js';

/** Container waiting reasons that will not fix themselves (fail fast). */
export const FATAL_WAITING_REASONS = ['ImagePullBackOff', 'ErrImagePull', 'CrashLoopBackOff', 'CreateContainerConfigError', 'InvalidImageName', 'CreateContainerError', 'RunContainerError'];

/** A container stuck in a fatal state: `container web: ImagePullBackOff (Back-off pulling image "x")`, or undefined. */
export function podFatalReason(pod: KubeObject): string | undefined {
  const st = statusOf(pod);
  for (const field of ['initContainerStatuses', 'containerStatuses']) {
    const list = st[field];
    if (!Array.isArray(list)) continue;
    for (const cs of list) {
      if (typeof cs !== 'object' || cs === null) continue;
      const c = cs as Record<string, unknown>;
      const state = typeof c.state === 'object' && c.state !== null ? (c.state as Record<string, unknown>) : {};
      const waiting = typeof state.waiting === 'object' && state.waiting !== null ? (state.waiting as Record<string, unknown>) : undefined;
      const reason = typeof waiting?.reason === 'string' ? waiting.reason : undefined;
      if (reason && FATAL_WAITING_REASONS.includes(reason)) {
        const message = typeof waiting?.message === 'string' ? ` (${waiting.message})` : '';
        return `pod ${pod.metadata.name ?? '?'} container ${String(c.name)}: ${reason}${message}`;
      }
    }
  }
  return undefined;
}

/** Pod: Ready condition true, or Succeeded; Failed or a fatal container state fails. */
export function podReadiness(obj: KubeObject): Readiness {
  const st = statusOf(obj);
  const phase = typeof st.phase === 'string' ? st.phase : 'Pending';
  if (phase === 'Succeeded') return ready('succeeded');
  if (phase === 'Failed') return failed(`pod failed${typeof st.reason === 'string' ? `: ${st.reason}` : ''}${typeof st.message === 'string' ? ` ${st.message}` : ''}`);
  const fatal = podFatalReason(obj);
  if (fatal) return failed(fatal);
  const r = condition(obj, 'Ready');
  if (r?.status === 'True') return ready('ready');
  const sched = condition(obj, 'PodScheduled');
  if (sched?.status === 'False') return progressing(`not scheduled: ${sched.reason ?? ''} ${sched.message ?? ''}`.trim());
  return progressing(`${phase}, not ready${r?.reason ? ` (${r.reason})` : ''}`);
}
