/**
 * Pure helpers for Helm values: building a values tree from `set` dotted keys, merging values
 * the way helm merges `-f` files, comparing them, summarising what changed, and finding the
 * values that look secret (to register them with the run's masker).
 */
import { MASK, SECRET_NAME } from '../core/mask.js';

/** A Helm values map (what `values.yaml` holds). */
export type Values = { [key: string]: unknown };

/** One step of a key path: a map key or a list index. */
export type PathSegment = string | number;

/** True for a plain (non-array, non-null) object. */
export function isMap(v: unknown): v is Values {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parse a dotted key path as `helm --set` understands it: `a.b.c`, `list[0].name`, and `\.` for a
 * literal dot inside a key (`podAnnotations.prometheus\.io/scrape`).
 * @throws Error on an empty segment or an unclosed/invalid index.
 * @example parseKeyPath('image.tag') // ['image', 'tag']
 * @example parseKeyPath('env[1].value') // ['env', 1, 'value']
 */
export function parseKeyPath(key: string): PathSegment[] {
  const out: PathSegment[] = [];
  let cur = '';
  let curStarted = false;
  const bad = (why: string): never => {
    throw new Error(`invalid key path '${key}': ${why}`);
  };
  const pushKey = (): void => {
    if (!curStarted) return;
    if (cur === '') bad('empty key');
    out.push(cur);
    cur = '';
    curStarted = false;
  };
  for (let i = 0; i < key.length; i++) {
    const ch = key[i];
    if (ch === '\\' && i + 1 < key.length && (key[i + 1] === '.' || key[i + 1] === '[' || key[i + 1] === '\\')) {
      cur += key[i + 1];
      curStarted = true;
      i++;
    } else if (ch === '.') {
      if (!curStarted && (out.length === 0 || typeof out[out.length - 1] !== 'number')) bad('empty key');
      pushKey();
      if (i === key.length - 1) bad('trailing dot');
    } else if (ch === '[') {
      pushKey();
      if (out.length === 0) bad('an index needs a key before it');
      const end = key.indexOf(']', i);
      if (end < 0) bad('unclosed [');
      const idx = key.slice(i + 1, end);
      if (!/^\d+$/.test(idx)) bad(`index '${idx}' is not a non-negative integer`);
      out.push(Number(idx));
      i = end;
      if (i + 1 < key.length && key[i + 1] !== '.' && key[i + 1] !== '[') bad(`unexpected '${key[i + 1]}' after ]`);
    } else {
      cur += ch;
      curStarted = true;
    }
  }
  pushKey();
  if (out.length === 0) bad('empty key');
  return out;
}

/** Set `value` at `segments` inside `tree` (mutates), creating maps and lists on the way. */
export function setPath(tree: Values, segments: PathSegment[], value: unknown): void {
  let node: Values | unknown[] = tree;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as PathSegment;
    const last = i === segments.length - 1;
    const nextIsIndex = !last && typeof segments[i + 1] === 'number';
    if (typeof seg === 'number') {
      if (!Array.isArray(node)) throw new Error('internal: index on a map');
      while (node.length <= seg) node.push(null);
      if (last) node[seg] = value;
      else {
        const child: unknown = node[seg];
        if (nextIsIndex ? !Array.isArray(child) : !isMap(child)) node[seg] = nextIsIndex ? [] : {};
        node = node[seg] as Values | unknown[];
      }
    } else {
      if (Array.isArray(node)) throw new Error('internal: key on a list');
      if (last) node[seg] = value;
      else {
        const child = node[seg];
        if (nextIsIndex ? !Array.isArray(child) : !isMap(child)) node[seg] = nextIsIndex ? [] : {};
        node = node[seg] as Values | unknown[];
      }
    }
  }
}

/**
 * Build a values tree from `set` entries (dotted key → value). Values keep their YAML type
 * (a number stays a number); later keys win over earlier ones at the same path.
 * @example valuesFromSet({ 'image.tag': '6.14.1', replicaCount: 2 }) // { image: { tag: '6.14.1' }, replicaCount: 2 }
 */
export function valuesFromSet(set: Record<string, unknown>): Values {
  const tree: Values = {};
  for (const [k, v] of Object.entries(set)) setPath(tree, parseKeyPath(k), cloneJson(v));
  return tree;
}

function cloneJson<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

/**
 * Merge values like helm merges several `-f` files: maps merge recursively, anything else
 * (scalars, lists, `null`) in `override` replaces what `base` has. Returns a new tree.
 */
export function mergeValues(base: Values, override: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(override)) {
    const b = out[k];
    out[k] = isMap(b) && isMap(v) ? mergeValues(b, v) : cloneJson(v);
  }
  return out;
}

/** Canonical JSON (sorted keys) of a JSON-like value, for equality tests. */
export function canonicalValuesJson(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (isMap(x)) {
      const o: Values = {};
      for (const k of Object.keys(x).sort()) if (x[k] !== undefined) o[k] = sort(x[k]);
      return o;
    }
    return x;
  };
  return JSON.stringify(sort(v)) ?? 'null';
}

/** Whether two values trees are equal (key order ignored; `{}` and a missing map are NOT equal). */
export function valuesEqual(a: Values, b: Values): boolean {
  return canonicalValuesJson(a) === canonicalValuesJson(b);
}

/**
 * Dotted paths of the leaves that differ between two values trees (added, removed or changed),
 * sorted. Lists are compared as a whole.
 * @example changedValueKeys({ a: { b: 1 } }, { a: { b: 2, c: 3 } }) // ['a.b', 'a.c']
 */
export function changedValueKeys(before: Values, after: Values, prefix = ''): string[] {
  const out: string[] = [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const k of keys) {
    const p = prefix ? `${prefix}.${escapeKey(k)}` : escapeKey(k);
    const a = before[k];
    const b = after[k];
    if (isMap(a) && isMap(b)) out.push(...changedValueKeys(a, b, p));
    else if (!(k in before) || !(k in after) || canonicalValuesJson(a) !== canonicalValuesJson(b)) out.push(p);
  }
  return out;
}

function escapeKey(k: string): string {
  return k.replace(/\./g, '\\.');
}

/**
 * Whether a values key names a secret: the run's secret-name rule (`password`, `token`,
 * `secret`, `apiKey`, …) plus keys ending in `Key`/`_key`/`-key` (`accessKey`, `secret_key`).
 * A bare `key` (as in tolerations or selectors) is not a secret.
 */
export function isSecretKey(k: string): boolean {
  return SECRET_NAME.test(k) || /(?:[a-z0-9]Key|[_-]key)$/.test(k);
}

/**
 * True for a `{name: SECRET_LOOKING, value: …}` pair, the shape of container env entries
 * (`extraEnvs: [{name: API_TOKEN, value: …}]`): its `value` is a secret.
 */
function isSecretNamePair(m: Values): boolean {
  return typeof m.name === 'string' && isSecretKey(m.name) && 'value' in m;
}

/**
 * Every string/number value under a secret-looking key (at any depth, inside lists too), and the
 * `value` of `{name: SECRET_LOOKING, value}` entries; a map or list under such a key contributes
 * all of its leaves.
 */
export function secretValues(values: unknown, underSecret = false, depth = 0, out: string[] = []): string[] {
  if (depth > 64) return out;
  if (typeof values === 'string' || typeof values === 'number') {
    if (underSecret) out.push(String(values));
    return out;
  }
  if (Array.isArray(values)) {
    for (const v of values) secretValues(v, underSecret, depth + 1, out);
    return out;
  }
  if (isMap(values)) {
    const pair = isSecretNamePair(values);
    for (const [k, v] of Object.entries(values)) secretValues(v, underSecret || isSecretKey(k) || (pair && k === 'value'), depth + 1, out);
  }
  return out;
}

/** What a changed secret shows in an "after" text. */
export const MASK_CHANGED = `${MASK} (changed)`;

/**
 * A copy of `values` with every value {@link secretValues} finds replaced by `********`. With
 * `previous` (the values before a change), a secret that differs from the previous value at the
 * same place shows as `******** (changed)`, so a diff still says that it changed.
 */
export function maskSecretValues(values: unknown, previous?: unknown, underSecret = false, depth = 0): unknown {
  if (depth > 64) return values;
  if (Array.isArray(values)) return values.map((v, i) => maskSecretValues(v, Array.isArray(previous) ? previous[i] : undefined, underSecret, depth + 1));
  if (isMap(values)) {
    const pair = isSecretNamePair(values);
    const prev = isMap(previous) ? previous : undefined;
    const o: Values = {};
    for (const [k, v] of Object.entries(values)) o[k] = maskSecretValues(v, prev?.[k], underSecret || isSecretKey(k) || (pair && k === 'value'), depth + 1);
    return o;
  }
  if (underSecret && values !== null && values !== undefined && values !== '') {
    return previous !== undefined && canonicalValuesJson(previous) !== canonicalValuesJson(values) ? MASK_CHANGED : MASK;
  }
  return values;
}
