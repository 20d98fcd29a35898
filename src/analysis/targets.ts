/**
 * The objects an `analysis` gate's Kubernetes signals follow: taken from a registered result
 * (`k8s_apply`, `helm_release`, `kubernetes.core.k8s`, `k8s_info`, `kubernetes.core.helm`, or a
 * loop of them), or listed explicitly.
 */
import { isRecord } from '../core/shape.js';

/** One object to follow. */
export interface KubeTarget {
  kind: string;
  name: string;
  namespace?: string;
  apiVersion?: string;
}

/** A helm release whose objects are read from its stored manifest (a `kubernetes.core.helm` result names only the release). */
export interface HelmRef {
  name: string;
  namespace: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A target from `kind`/`name`/`namespace`/`apiVersion` fields, when they are there. */
function target(kind: unknown, name: unknown, namespace: unknown, apiVersion: unknown): KubeTarget | undefined {
  const k = str(kind);
  const n = str(name);
  if (k === undefined || n === undefined) return undefined;
  const t: KubeTarget = { kind: k, name: n };
  const ns = str(namespace);
  if (ns !== undefined) t.namespace = ns;
  const av = str(apiVersion);
  if (av !== undefined) t.apiVersion = av;
  return t;
}

/**
 * Collect the objects a registered result names. Knows: a Kubernetes object (`kind` +
 * `metadata.name`); `k8s_apply` (`resources`, deleted ones left out) and `k8s_info` (`resources`
 * of objects); `helm_release` (`objects` + `revision`, the release namespace for objects without
 * one); `kubernetes.core.k8s` (`result`, `result.results`); `kubernetes.core.helm` (`status.name`
 * + `status.namespace`: a release to read); a loop (`results`) or a list of any of these.
 */
export function targetsFrom(value: unknown): { targets: KubeTarget[]; helm: HelmRef[] } {
  const targets: KubeTarget[] = [];
  const helm: HelmRef[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 6) return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    if (!isRecord(v) || v.skipped === true) return;
    if (isRecord(v.metadata) && str(v.kind) !== undefined) {
      const t = target(v.kind, v.metadata.name, v.metadata.namespace, v.apiVersion);
      if (t) targets.push(t);
      return;
    }
    if (Array.isArray(v.resources)) {
      for (const r of v.resources) {
        if (!isRecord(r)) continue;
        if (isRecord(r.metadata)) walk(r, depth + 1);
        else if (r.action !== 'deleted') {
          const t = target(r.kind, r.name, r.namespace, r.apiVersion);
          if (t) targets.push(t);
        }
      }
      return;
    }
    if (Array.isArray(v.objects) && typeof v.revision === 'number') {
      for (const o of v.objects) if (isRecord(o)) {
        const t = target(o.kind, o.name, o.namespace ?? v.namespace, undefined);
        if (t) targets.push(t);
      }
      return;
    }
    if (isRecord(v.status) && 'stdout' in v && str(v.status.name) !== undefined && str(v.status.namespace) !== undefined) {
      helm.push({ name: v.status.name as string, namespace: v.status.namespace as string });
      return;
    }
    if ('result' in v) walk(v.result, depth + 1);
    if (Array.isArray(v.results)) walk(v.results, depth + 1);
  };
  walk(value, 0);
  return { targets: dedupe(targets), helm };
}

/** Targets without repeats (first one wins). */
export function dedupe(targets: KubeTarget[]): KubeTarget[] {
  const seen = new Set<string>();
  return targets.filter((t) => {
    const k = `${t.kind}/${t.namespace ?? ''}/${t.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** The label selector of a workload's `spec.selector` (`matchLabels` and `matchExpressions`); undefined for none or an empty one. */
export function selectorString(sel: unknown): string | undefined {
  if (!isRecord(sel)) return undefined;
  const parts: string[] = [];
  if (isRecord(sel.matchLabels)) for (const [k, v] of Object.entries(sel.matchLabels)) parts.push(`${k}=${String(v)}`);
  if (Array.isArray(sel.matchExpressions)) {
    for (const e of sel.matchExpressions) {
      if (!isRecord(e) || typeof e.key !== 'string') continue;
      const values = Array.isArray(e.values) ? e.values.map(String).join(',') : '';
      if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
      else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
      else if (e.operator === 'Exists') parts.push(e.key);
      else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    }
  }
  return parts.length ? parts.join(',') : undefined;
}
