/**
 * Item access as Jinja's `environment.getitem` does it under ansible-core 2.19, for filters that
 * take an `attribute=` (`map`, `sort`, `selectattr`, `sum`, `groupby`, …): dotted paths, integer
 * parts as list indexes, and an undefined value (with Ansible's message) for what is missing.
 */
import { NAMED_FIELDS, Undef, isMap, typeName } from '../values.js';

/** One part of an attribute path: a key, or an index when the part is all digits. */
export type Part = string | number;

/** The undefined value for a missing `part` of `obj` (`object of type 'dict' has no attribute 'x'`). */
export function missing(obj: unknown, part: Part): Undef {
  const shown = typeof part === 'string' ? `'${part}'` : String(part);
  return new Undef(`object of type '${typeName(obj)}' has no attribute ${shown}`, String(part));
}

/** `obj[part]` as Jinja reads it: own keys of dicts, indexes (negative too) of lists and strings; otherwise an {@link Undef}. */
export function getItem(obj: unknown, part: Part): unknown {
  if (obj instanceof Undef) return obj;
  if (typeof part === 'number') {
    if (Array.isArray(obj) || typeof obj === 'string') {
      const items: readonly unknown[] = typeof obj === 'string' ? [...obj] : obj;
      const i = part < 0 ? items.length + part : part;
      return i >= 0 && i < items.length ? items[i] : missing(obj, part);
    }
    // dicts of JSON-like data have string keys: an integer part never matches (as in Ansible)
    return missing(obj, part);
  }
  if (isMap(obj) && Object.prototype.hasOwnProperty.call(obj, part)) return obj[part];
  const field = Array.isArray(obj) ? NAMED_FIELDS.get(obj)?.[part] : undefined;
  if (field !== undefined && Array.isArray(obj)) return obj[field];
  return missing(obj, part);
}

/** Jinja's `_prepare_attribute_parts`: `'a.0.b'` → `['a', 0, 'b']`. */
export function attrParts(attribute: unknown): Part[] {
  if (attribute === null || attribute === undefined) return [];
  if (typeof attribute === 'string') return attribute.split('.').map((x) => (/^[0-9]+$/.test(x) ? Number(x) : x));
  if (typeof attribute === 'number') return [attribute];
  if (typeof attribute === 'boolean') return [attribute ? 1 : 0];
  return [String(attribute)];
}

/** Lowercase strings, leave the rest (Jinja's `ignore_case`). */
export function ignoreCase(v: unknown): unknown {
  return typeof v === 'string' ? v.toLowerCase() : v;
}

/** Options of {@link attrGetter}. */
export interface GetterOptions {
  /** Applied to the value found (e.g. {@link ignoreCase}). */
  readonly postprocess?: (v: unknown) => unknown;
  /** Replaces an undefined value met along the path (Jinja's `default=`; `None` means none). */
  readonly default?: unknown;
}

/** Jinja's `make_attrgetter`: a function reading a dotted path of each item. */
export function attrGetter(attribute: unknown, options: GetterOptions = {}): (item: unknown) => unknown {
  const parts = attrParts(attribute);
  const dflt = options.default;
  return (item) => {
    let v = item;
    for (const part of parts) {
      v = getItem(v, part);
      if (dflt !== null && dflt !== undefined && v instanceof Undef) v = dflt;
    }
    return options.postprocess ? options.postprocess(v) : v;
  };
}

/** Jinja's `make_multi_attrgetter`: `'age,name'` reads several paths, giving a list. */
export function multiAttrGetter(attribute: unknown, postprocess?: (v: unknown) => unknown): (item: unknown) => unknown[] {
  const split: unknown[] = typeof attribute === 'string' ? attribute.split(',') : [attribute];
  const getters = split.map((a) => attrParts(a));
  return (item) =>
    getters.map((parts) => {
      let v = item;
      for (const part of parts) v = getItem(v, part);
      return postprocess ? postprocess(v) : v;
    });
}
