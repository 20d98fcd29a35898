/**
 * Jinja2's builtin filters on sequences and numbers, with ansible-core 2.19's replacements
 * (`default`/`d`, `unique`, `groupby`): `first`, `last`, `length`/`count`, `list`, `join`,
 * `sort`, `reverse`, `min`, `max`, `sum`, `batch`, `slice`, `dictsort`, `items`, `attr`, `abs`,
 * `int`, `float`, `round`.
 */
import type { FilterDef } from '../plugins.js';
import { CapturedError, ExprError, mkInt, mkNamed, NAMED_FIELDS, PyFloat, Undef, isFloat, isMap, isNumber, mkFloat, num, pyCompare, pyEq, truthy, typeName } from '../values.js';
import { attrGetter, ignoreCase, missing, multiAttrGetter } from './access.js';
import { boolArg, exactlyOne, intArg, opt, req } from './args.js';
import { filter, items, pyLength, text, touch } from './def.js';
import { parseFloatPy, parseIntPy, pyAdd, roundHalfEven, truncFloat } from './pynum.js';
import { codePointCompare } from './pyjson.js';

/** Python's ordering of two values (strings by code point), failing on undefined ones. */
export function compare(a: unknown, b: unknown): number {
  const x = touch(a);
  const y = touch(b);
  if (typeof x === 'string' && typeof y === 'string') return codePointCompare(x, y);
  if (Array.isArray(x) && Array.isArray(y)) {
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (!pyEq(touch(x[i]), touch(y[i]))) return compare(x[i], y[i]);
    return x.length - y.length;
  }
  return pyCompare(x, y);
}

/** Python's `sorted(values, key=key, reverse=reverse)`: stable, `<` errors as Python reports them. */
export function pySorted<T>(values: readonly T[], key: (v: T) => unknown, reverse = false): T[] {
  const keyed = values.map((v) => ({ v, k: key(v) }));
  // Python compares neighbours first (timsort's run detection): report its TypeError the same way
  for (let i = 1; i < keyed.length; i++) compare(keyed[i]?.k, keyed[i - 1]?.k);
  keyed.sort((a, b) => (reverse ? -compare(a.k, b.k) : compare(a.k, b.k)));
  return keyed.map((x) => x.v);
}

/** Python's hashability for the value model: lists and dicts are not hashable. */
export function hashable(v: unknown): boolean {
  return !(Array.isArray(v) || isMap(v));
}

/** Jinja's `do_unique` (a set of seen keys): TypeError on unhashable keys. */
function jinjaUnique(values: readonly unknown[], caseSensitive: boolean, attribute: unknown): unknown[] {
  const getter = attrGetter(attribute, caseSensitive ? {} : { postprocess: ignoreCase });
  const seen: unknown[] = [];
  const out: unknown[] = [];
  for (const item of values) {
    const key = touch(getter(item));
    if (!hashable(key)) throw new ExprError(`unhashable type: '${typeName(key)}'`);
    if (!seen.some((s) => pyEq(s, key))) {
      seen.push(key);
      out.push(item);
    }
  }
  return out;
}

/** ansible-core's `unique`: Jinja's, falling back to an order-keeping list version on unhashable items. */
export function ansibleUnique(values: readonly unknown[], caseSensitive: unknown, attribute: unknown): unknown[] {
  try {
    return jinjaUnique(values, Boolean(caseSensitive), attribute);
  } catch (e) {
    if (!(e instanceof ExprError)) throw e;
    if (caseSensitive === false || (attribute !== null && attribute !== undefined)) {
      throw new ExprError(
        `Jinja2's unique filter failed and we cannot fall back to Ansible's version as it does not support the parameters supplied: ${e.message}`,
      );
    }
    const out: unknown[] = [];
    for (const x of values) if (!out.some((y) => pyEq(x, y))) out.push(x);
    return out;
  }
}

function minOrMax(value: unknown, isMax: boolean, caseSensitive: unknown, attribute: unknown): unknown {
  const values = items(value);
  if (values.length === 0) return new Undef('No aggregated item, sequence was empty.', '');
  const key = attrGetter(attribute, caseSensitive ? {} : { postprocess: ignoreCase });
  let best = values[0];
  let bestKey = key(best);
  for (const item of values.slice(1)) {
    const k = key(item);
    if (isMax ? pyCompare(touch(k), touch(bestKey), '>') > 0 : pyCompare(touch(k), touch(bestKey), '<') < 0) {
      best = item;
      bestKey = k;
    }
  }
  touch(bestKey);
  return best;
}

/** Python's `int(x)` of a finite float: truncated, exact also beyond 2**53 (`1e20 | int`). */
function floatToInt(x: number): number | bigint {
  const t = truncFloat(x);
  return Number.isSafeInteger(t) ? t : mkInt(BigInt(t));
}

function pyInt(value: unknown, dflt: unknown, base: unknown): unknown {
  const b = intArg(base);
  if (typeof value === 'string') {
    const n = parseIntPy(value, b);
    if (n !== null) return n;
  } else if (typeof value === 'boolean') return value ? 1 : 0;
  else if (typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))) return value;
  else if (isNumber(value)) {
    const x = num(value);
    return Number.isFinite(x) ? floatToInt(x) : dflt;
  }
  // "42.23" | int gives 42: int(float(value))
  if (typeof value === 'string') {
    const f = parseFloatPy(value);
    if (f !== null && Number.isFinite(f)) return floatToInt(f);
  }
  return dflt;
}

function pyFloat(value: unknown, dflt: unknown): unknown {
  if (typeof value === 'boolean') return new PyFloat(value ? 1 : 0);
  if (isNumber(value)) return mkFloat(num(value));
  if (typeof value === 'string') {
    const f = parseFloatPy(value);
    if (f !== null) return mkFloat(f);
  }
  return dflt;
}

function pyRound(value: unknown, precision: number, method: unknown): unknown {
  if (method !== 'common' && method !== 'ceil' && method !== 'floor') throw new ExprError('method must be common, ceil or floor');
  if (!isNumber(value) && typeof value !== 'boolean') throw new ExprError(`type ${typeName(value)} doesn't define __round__ method`);
  if (typeof value === 'bigint' && precision >= 0 && method === 'common') return value;
  const x = num(value);
  if (method === 'common') {
    if (!isFloat(value)) {
      if (precision >= 0) return x;
      const p = 10 ** -precision;
      const q = x / p;
      const r = Math.abs(q - Math.trunc(q)) === 0.5 ? 2 * Math.round(q / 2) : Math.round(q);
      return r * p;
    }
    return mkFloat(roundHalfEven(x, precision));
  }
  const f = method === 'ceil' ? Math.ceil : Math.floor;
  return mkFloat(f(x * 10 ** precision) / 10 ** precision);
}

function batch(value: unknown, linecount: number, fill: unknown): unknown[][] {
  const out: unknown[][] = [];
  let tmp: unknown[] = [];
  for (const item of items(value)) {
    if (tmp.length === linecount) {
      out.push(tmp);
      tmp = [];
    }
    tmp.push(item);
  }
  if (tmp.length > 0) {
    if (fill !== null && tmp.length < linecount) tmp.push(...Array<unknown>(linecount - tmp.length).fill(fill));
    out.push(tmp);
  }
  return out;
}

function slices(value: unknown, count: number, fill: unknown): unknown[][] {
  const seq = items(value);
  if (count === 0) throw new ExprError('integer division or modulo by zero');
  const per = Math.floor(seq.length / count);
  const extra = seq.length % count;
  const out: unknown[][] = [];
  let offset = 0;
  for (let n = 0; n < count; n++) {
    const start = offset + n * per;
    if (n < extra) offset++;
    const end = offset + (n + 1) * per;
    const tmp = seq.slice(start, end);
    if (fill !== null && n >= extra) tmp.push(fill);
    out.push(tmp);
  }
  return out;
}

/** Python's `getattr(v, name)` for a named tuple's field; any other attribute is undefined. */
function namedField(v: unknown, name: string): unknown {
  const i = Array.isArray(v) ? NAMED_FIELDS.get(v)?.[name] : undefined;
  return Array.isArray(v) && i !== undefined ? v[i] : missing(v, name);
}

/** ansible-core's `groupby` (Jinja's `_GroupTuple`s: lists `[grouper, items]` also read as `.grouper`/`.list`; a missing attribute fails even with `default`). */
function groupby(value: unknown, attribute: unknown, caseSensitive: boolean): unknown[][] {
  const values = items(value);
  const key = attrGetter(attribute, caseSensitive ? {} : { postprocess: ignoreCase });
  const sorted = pySorted(values, (v) => touch(key(v)));
  const groups: { k: unknown; items: unknown[] }[] = [];
  for (const v of sorted) {
    const k = key(v);
    const last = groups[groups.length - 1];
    if (last && pyEq(last.k, k)) last.items.push(v);
    else groups.push({ k, items: [v] });
  }
  const real = attrGetter(attribute);
  return groups.map((g) => mkNamed([caseSensitive ? g.k : real(g.items[0]), g.items], ['grouper', 'list']));
}

/** The sequence and number filters, by Jinja name. */
export const JINJA_LIST_FILTERS: Readonly<Record<string, FilterDef>> = {
  default: filter(
    { fn: 'ansible_default', params: [opt('default_value', ''), opt('boolean', false)] },
    (v, a) => {
      const boolean = boolArg('boolean', a.get('boolean'));
      // a failed plug-in's marker is not undefined: it stays (and raises when used)
      if (v instanceof CapturedError) return v;
      if (v instanceof Undef) return a.get('default_value');
      if (boolean && !truthy(v)) return a.get('default_value');
      return v;
    },
    true,
  ),
  unique: filter({ fn: 'unique', params: [opt('case_sensitive'), opt('attribute')], hidden: 1 }, (v, a) =>
    ansibleUnique(items(v), a.get('case_sensitive'), a.get('attribute')),
  ),
  first: filter({ fn: 'sync_do_first', params: [], hidden: 1 }, (v) => {
    const xs = items(v);
    return xs.length > 0 ? xs[0] : new Undef('No first item, sequence was empty.', '');
  }),
  last: filter({ fn: 'do_last', params: [], hidden: 1 }, (v) => {
    if (typeof v !== 'string' && !Array.isArray(v) && !isMap(v)) throw new ExprError(`'${typeName(v)}' object is not reversible`);
    const xs = items(v);
    return xs.length > 0 ? xs[xs.length - 1] : new Undef('No last item, sequence was empty.', '');
  }),
  length: { fn: (v, args, kwargs) => (exactlyOne('len', args, kwargs), pyLength(v)) },
  count: { fn: (v, args, kwargs) => (exactlyOne('len', args, kwargs), pyLength(v)) },
  list: filter({ fn: 'sync_do_list', params: [] }, (v) => items(v).map(touch)),
  join: filter({ fn: 'sync_do_join', params: [opt('d', ''), opt('attribute')], hidden: 1 }, (v, a) => {
    const attr = a.get('attribute');
    const xs = items(v);
    const get = attr === null ? (x: unknown) => x : attrGetter(attr);
    return xs.map((x) => text(get(x))).join(text(a.get('d')));
  }),
  sort: filter({ fn: 'do_sort', params: [opt('reverse', false), opt('case_sensitive', false), opt('attribute')], hidden: 1 }, (v, a) => {
    const key = multiAttrGetter(a.get('attribute'), a.get('case_sensitive') ? undefined : ignoreCase);
    return pySorted(items(v), key, Boolean(a.get('reverse')));
  }),
  reverse: filter({ fn: 'do_reverse', params: [] }, (v) => {
    if (typeof v === 'string') return [...v].reverse().join('');
    if (Array.isArray(v) || isMap(v)) return [...items(v)].reverse();
    throw new ExprError('argument must be iterable');
  }),
  min: filter({ fn: 'do_min', params: [opt('case_sensitive', false), opt('attribute')], hidden: 1 }, (v, a) =>
    minOrMax(v, false, a.get('case_sensitive'), a.get('attribute')),
  ),
  max: filter({ fn: 'do_max', params: [opt('case_sensitive', false), opt('attribute')], hidden: 1 }, (v, a) =>
    minOrMax(v, true, a.get('case_sensitive'), a.get('attribute')),
  ),
  sum: filter({ fn: 'sync_do_sum', params: [opt('attribute'), opt('start', 0)], hidden: 1 }, (v, a) => {
    const attr = a.get('attribute');
    const get = attr === null ? (x: unknown) => x : attrGetter(attr);
    let total = a.get('start');
    if (typeof total === 'string') throw new ExprError("sum() can't sum strings [use ''.join(seq) instead]");
    for (const x of items(v)) total = pyAdd(touch(total), touch(get(x)));
    return total;
  }),
  batch: filter({ fn: 'do_batch', params: [req('linecount'), opt('fill_with')] }, (v, a) => batch(v, intArg(a.get('linecount')), a.get('fill_with'))),
  slice: filter({ fn: 'sync_do_slice', params: [req('slices'), opt('fill_with')] }, (v, a) => slices(v, intArg(a.get('slices')), a.get('fill_with'))),
  dictsort: filter({ fn: 'do_dictsort', params: [opt('case_sensitive', false), opt('by', 'key'), opt('reverse', false)] }, (v, a) => {
    const by = a.get('by');
    if (by !== 'key' && by !== 'value') throw new ExprError('You can only sort by either "key" or "value"');
    if (!isMap(v)) throw new ExprError(`'${typeName(v)}' object has no attribute 'items'`);
    const pos = by === 'key' ? 0 : 1;
    const cs = Boolean(a.get('case_sensitive'));
    return pySorted(
      Object.entries(v).map(([k, x]) => [k, x]),
      (p) => (cs ? p[pos] : ignoreCase(p[pos])),
      Boolean(a.get('reverse')),
    );
  }),
  groupby: filter({ fn: 'sync_do_groupby', params: [req('attribute'), opt('default'), opt('case_sensitive', false)], hidden: 1 }, (v, a) =>
    groupby(v, a.get('attribute'), Boolean(a.get('case_sensitive'))),
  ),
  items: filter(
    { fn: 'do_items', params: [] },
    (v) => {
      if (v instanceof Undef) return [];
      if (!isMap(v)) throw new ExprError('Can only get item pairs from a mapping.');
      return Object.entries(v).map(([k, x]) => [k, x]);
    },
  ),
  // a named tuple's field (groupby's `grouper`/`list`) is an attribute; a dict's keys are not
  attr: filter({ fn: 'do_attr', params: [req('name')], hidden: 1 }, (v, a) => namedField(v, text(a.get('name')))),
  abs: {
    fn: (v, args, kwargs) => {
      exactlyOne('abs', args, kwargs);
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (!isNumber(v)) throw new ExprError(`bad operand type for abs(): '${typeName(v)}'`);
      if (typeof v === 'bigint') return v < 0n ? -v : v;
      return v instanceof PyFloat ? new PyFloat(Math.abs(v.value)) : Math.abs(v);
    },
  },
  int: filter({ fn: 'do_int', params: [opt('default', 0), opt('base', 10)] }, (v, a) => pyInt(v, a.get('default'), a.get('base'))),
  float: filter({ fn: 'do_float', params: [opt('default', new PyFloat(0))] }, (v, a) => pyFloat(v, a.get('default'))),
  round: filter({ fn: 'do_round', params: [opt('precision', 0), opt('method', 'common')] }, (v, a) => pyRound(v, intArg(a.get('precision')), a.get('method'))),
};
