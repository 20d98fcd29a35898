/** Readiness of PVCs, Services, CRDs, Namespaces and any other object. */
import type { KubeObject } from '../types.js';
import { condition, failed, observed, progressing, ready, specOf, statusOf, type Readiness } from './common.js';

/** PersistentVolumeClaim: Bound. */
export function pvcReadiness(obj: KubeObject): Readiness {
  const phase = statusOf(obj).phase;
  if (phase === 'Bound') return ready('bound');
  if (phase === 'Lost') return failed('claim lost its volume');
  return progressing(`${typeof phase === 'string' ? phase : 'Pending'}, not bound`);
}

/** Service: LoadBalancer needs an ingress address; other types are ready at once. */
export function serviceReadiness(obj: KubeObject): Readiness {
  if (specOf(obj).type !== 'LoadBalancer') return ready('ready');
  const lb = statusOf(obj).loadBalancer;
  const ingress = typeof lb === 'object' && lb !== null ? (lb as Record<string, unknown>).ingress : undefined;
  return Array.isArray(ingress) && ingress.length > 0 ? ready('load balancer ingress assigned') : progressing('waiting for a load balancer ingress address');
}

/** CustomResourceDefinition: Established (NamesAccepted false fails). */
export function crdReadiness(obj: KubeObject): Readiness {
  const names = condition(obj, 'NamesAccepted');
  if (names?.status === 'False') return failed(`names not accepted: ${names.message ?? names.reason ?? ''}`);
  return condition(obj, 'Established')?.status === 'True' ? ready('established') : progressing('not established yet');
}

/** Namespace: Active. */
export function namespaceReadiness(obj: KubeObject): Readiness {
  const phase = statusOf(obj).phase;
  return phase === 'Active' ? ready('active') : progressing(`${typeof phase === 'string' ? phase : 'unknown phase'}`);
}

/** Any other object: the `Ready` condition if present, else observedGeneration == generation, else ready. */
export function genericReadiness(obj: KubeObject): Readiness {
  const r = condition(obj, 'Ready');
  if (r) {
    if (r.status === 'True') return ready('Ready');
    const stalled = condition(obj, 'Stalled');
    if (stalled?.status === 'True') return failed(`stalled: ${stalled.message ?? stalled.reason ?? ''}`);
    return progressing(`Ready=${r.status}${r.reason ? ` (${r.reason})` : ''}${r.message ? `: ${r.message}` : ''}`);
  }
  if (!observed(obj)) return progressing('waiting for the controller to observe the new generation');
  return ready('ready');
}
