/**
 * Normalisation and diff of Kubernetes objects: drop server-managed noise (managedFields,
 * resourceVersion, status, …), compare canonical JSON, mask Secret values, render YAML.
 */
import YAML from 'yaml';
import type { DiffEntry } from '../core/module.js';
import type { KubeObject } from './types.js';
import { isRecord } from '../core/shape.js';
import { publicSecretKey } from '../core/provenance.js';

/** Annotation kubectl writes for client-side apply; noise for SSA comparisons. */
export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
/** Shown instead of a Secret value that did not change. */
export const SECRET_MARK = '********';
/** Shown instead of a Secret value that changed (or is new). */
export const SECRET_MARK_CHANGED = '******** (changed)';

const METADATA_NOISE = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A deep copy with sorted keys (canonical form). */
export function canonical(v: unknown): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (isRecord(v)) {
    const out: { [k: string]: Json } = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = canonical(v[k]);
    return out;
  }
  if (v === undefined) return null;
  return v as Json;
}

/** Copy of `obj` without status and server-managed metadata, keys sorted. */
export function normalize(obj: KubeObject): KubeObject {
  const c = canonical(obj) as unknown as KubeObject;
  delete c.status;
  const md = isRecord(c.metadata) ? c.metadata : {};
  for (const k of METADATA_NOISE) delete md[k];
  if (isRecord(md.annotations)) {
    delete md.annotations[LAST_APPLIED];
    if (Object.keys(md.annotations).length === 0) delete md.annotations;
  }
  c.metadata = md;
  return c;
}

/** Canonical JSON text (sorted keys). */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(canonical(v));
}

/**
 * True when `a` and `b` have the same {@link canonicalJson} — compared in place, without the
 * sorted copies and the text (comparing 300 live objects with their manifests on a no-op).
 * As in JSON: a property holding `undefined` is absent, `undefined` in a list and non-finite
 * numbers are `null`.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const x = asJsonValue(a);
  const y = asJsonValue(b);
  if (x === y) return true;
  if (Array.isArray(x)) {
    if (!Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  if (!isRecord(x) || !isRecord(y)) return false;
  let n = 0;
  for (const k of Object.keys(x)) {
    if (x[k] === undefined) continue;
    n++;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (y[k] !== undefined) n--;
  return n === 0;
}

/** `undefined` and non-finite numbers as JSON writes them (in lists and at the top): `null`. */
const asJsonValue = (v: unknown): unknown => (v === undefined || (typeof v === 'number' && !Number.isFinite(v)) ? null : v);

/** True when two (normalised) objects are equal. */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  return sameJson(a, b);
}

/** True for a core/v1 Secret. */
export function isSecret(o: KubeObject | undefined): boolean {
  return o !== undefined && o.kind === 'Secret' && o.apiVersion === 'v1';
}

/** Every secret value of a Secret (data values decoded and raw, stringData values; not the public keys of a service account token, see `publicSecretKey`). */
export function secretValues(o: KubeObject | undefined): string[] {
  if (!isSecret(o) || !o) return [];
  const out: string[] = [];
  if (isRecord(o.data)) {
    for (const [k, v] of Object.entries(o.data)) {
      if (typeof v !== 'string' || publicSecretKey(o, k)) continue;
      out.push(v);
      const dec = Buffer.from(v, 'base64').toString('utf8');
      if (dec) out.push(dec);
    }
  }
  if (isRecord(o.stringData)) for (const v of Object.values(o.stringData)) if (typeof v === 'string') out.push(v);
  return out;
}

/**
 * Masked copies of the before/after versions of an object. For Secrets, every `data`/`stringData`
 * value becomes `********`, or `******** (changed)` on the `after` side when it differs from
 * `before` (never the value, nor its base64). Also strips the values from the last-applied annotation.
 */
export function maskPair(before: KubeObject | undefined, after: KubeObject | undefined): { before?: KubeObject; after?: KubeObject } {
  if (!isSecret(before) && !isSecret(after)) return { before, after };
  const plain = (o: KubeObject | undefined): Record<string, string> => {
    const m: Record<string, string> = {};
    if (!o) return m;
    if (isRecord(o.data)) for (const [k, v] of Object.entries(o.data)) if (typeof v === 'string') m[k] = Buffer.from(v, 'base64').toString('utf8');
    if (isRecord(o.stringData)) for (const [k, v] of Object.entries(o.stringData)) if (typeof v === 'string') m[k] = v;
    return m;
  };
  const b = plain(before);
  const a = plain(after);
  const maskOne = (o: KubeObject | undefined, side: 'before' | 'after'): KubeObject | undefined => {
    if (!o) return o;
    const c = JSON.parse(JSON.stringify(o)) as KubeObject;
    for (const field of ['data', 'stringData'] as const) {
      const d = c[field];
      if (!isRecord(d)) continue;
      for (const k of Object.keys(d)) d[k] = side === 'after' && before !== undefined && b[k] !== a[k] ? SECRET_MARK_CHANGED : SECRET_MARK;
    }
    const ann = c.metadata.annotations;
    if (ann && typeof ann[LAST_APPLIED] === 'string') ann[LAST_APPLIED] = SECRET_MARK;
    return c;
  };
  return { before: maskOne(before, 'before'), after: maskOne(after, 'after') };
}

/** Mask Secret values of one object (for `register`ed data / logs). */
export function maskObject(o: KubeObject): KubeObject {
  return maskPair(o, undefined).before ?? o;
}

/** Field paths (dot notation, `[i]` for list items) where two values differ; at most `limit`. */
export function changedPaths(a: unknown, b: unknown, prefix = '', limit = 50, out: string[] = []): string[] {
  if (out.length >= limit) return out;
  if (isRecord(a) && isRecord(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const p = prefix ? `${prefix}.${k}` : k;
      changedPaths(a[k], b[k], p, limit, out);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) changedPaths(a[i], b[i], `${prefix}[${i}]`, limit, out);
    return out;
  }
  if (!sameJson(a, b)) out.push(prefix || '.');
  return out;
}

/** YAML text of an object (`''` for none). */
export function toYaml(o: KubeObject | undefined): string {
  if (!o) return '';
  return YAML.stringify(canonical(o), { lineWidth: 0 });
}

/**
 * A `DiffEntry` for a (masked) before/after pair; `mask` is applied to both texts. The texts are
 * rendered when first read (most entries — created objects of a cold apply, unchanged ones — are
 * never shown, and rendering a large CRD as YAML costs milliseconds); `before` and `after` must
 * not change afterwards.
 */
export function diffEntry(label: string, before: KubeObject | undefined, after: KubeObject | undefined, mask: (s: string) => string = (s) => s): DiffEntry {
  let texts: { before: string; after: string } | undefined;
  const render = (): { before: string; after: string } => (texts ??= { before: mask(toYaml(before)), after: mask(toYaml(after)) });
  return {
    label,
    get before(): string {
      return render().before;
    },
    get after(): string {
      return render().after;
    },
  };
}
