/** Shared helpers of the readiness checks (kstatus spirit: each returns done/successful/message). */
import type { KubeObject } from '../types.js';
import { isRecord } from '../../core/shape.js';

/** Result of a readiness check. */
export interface Readiness {
  /** The object reached a final state (ready, or failed for good). */
  done: boolean;
  /** When done: true = ready/succeeded, false = failed (stop waiting). */
  successful: boolean;
  /** Short human description, e.g. `2/3 ready, 1 updating`. */
  message: string;
}

/** A readiness check for one kind. */
export type ReadinessCheck = (obj: KubeObject) => Readiness;

/** A Kubernetes condition. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}


/** `obj.status` as a map (empty when missing). */
export function statusOf(obj: KubeObject): Record<string, unknown> {
  return isRecord(obj.status) ? obj.status : {};
}

/** `obj.spec` as a map (empty when missing). */
export function specOf(obj: KubeObject): Record<string, unknown> {
  return isRecord(obj.spec) ? obj.spec : {};
}

/** A number field (0 when missing). */
export function num(m: Record<string, unknown>, key: string, dflt = 0): number {
  const v = m[key];
  return typeof v === 'number' ? v : dflt;
}

/** The conditions of an object. */
export function conditionsOf(obj: KubeObject): Condition[] {
  const c = statusOf(obj).conditions;
  if (!Array.isArray(c)) return [];
  return c.filter(isRecord).map((x) => ({ type: String(x.type ?? ''), status: String(x.status ?? ''), reason: typeof x.reason === 'string' ? x.reason : undefined, message: typeof x.message === 'string' ? x.message : undefined }));
}

/** One condition by type. */
export function condition(obj: KubeObject, type: string): Condition | undefined {
  return conditionsOf(obj).find((c) => c.type === type);
}

/** Whether the controller has seen the current generation. */
export function observed(obj: KubeObject): boolean {
  const gen = obj.metadata.generation;
  const og = statusOf(obj).observedGeneration;
  // No observedGeneration: nothing reports progress (a custom resource without a controller
  // that writes status, a ConfigMap-like kind); as in kstatus, that is current.
  if (typeof gen !== 'number' || typeof og !== 'number') return true;
  return og >= gen;
}

/** Ready result. */
export const ready = (message = 'ready'): Readiness => ({ done: true, successful: true, message });
/** In progress result. */
export const progressing = (message: string): Readiness => ({ done: false, successful: false, message });
/** Failed result. */
export const failed = (message: string): Readiness => ({ done: true, successful: false, message });
