/**
 * ansible.builtin's data-structure and math filters (ansible-core 2.19 `core.py`, `mathstuff.py`):
 * `combine`, `flatten`, `dict2items`/`items2dict`, `subelements`, `extract`, `zip`/`zip_longest`,
 * `product`/`permutations`/`combinations`, set theory with Python's set order, `rekey_on_member`,
 * `human_readable`/`human_to_bytes`, `log`/`pow`/`root`.
 */
import type { FilterDef } from '../plugins.js';
import { ExprError, isMap, isNumber, mkFloat, num, pyEq, pyIn, typeName } from '../values.js';
import { getItem } from './access.js';
import { intArg, opt, req } from './args.js';
import { dict, filter, items, repr, text, touch } from './def.js';
import { ansibleUnique, hashable } from './jinja-lists.js';
import { hashableNumber, setDifference, setIntersection, setSymmetricDifference, setUnion } from './pyset.js';

const LIST_MERGE = new Set(['replace', 'keep', 'append', 'prepend', 'append_rp', 'prepend_rp']);

/** ansible's `merge_hash(x, y, recursive, list_merge)`: y's keys win; x and y are not modified. */
export function mergeHash(x: unknown, y: unknown, recursive: boolean, listMerge: string): Record<string, unknown> {
  if (!LIST_MERGE.has(listMerge)) {
    throw new ExprError("merge_hash: 'list_merge' argument can only be equal to 'replace', 'keep', 'append', 'prepend', 'append_rp' or 'prepend_rp'");
  }
  if (!isMap(x) || !isMap(y)) throw new ExprError(`failed to combine variables, expected dicts but got a '${typeName(x)}' and a '${typeName(y)}'.`);
  if (Object.keys(x).length === 0 || pyEq(x, y)) return { ...y };
  if (Object.keys(y).length === 0) return x;
  const out = dict(Object.entries(x));
  for (const [key, yv] of Object.entries(y)) {
    if (!Object.prototype.hasOwnProperty.call(out, key)) {
      Object.defineProperty(out, key, { value: yv, enumerable: true, writable: true, configurable: true });
      continue;
    }
    const xv = out[key];
    let v: unknown = yv;
    if (isMap(xv) && isMap(yv)) v = recursive ? mergeHash(xv, yv, recursive, listMerge) : yv;
    else if (Array.isArray(xv) && Array.isArray(yv)) {
      if (listMerge === 'append') v = [...xv, ...yv];
      else if (listMerge === 'prepend') v = [...yv, ...xv];
      else if (listMerge === 'append_rp') v = [...xv.filter((z) => !yv.some((w) => pyEq(w, z))), ...yv];
      else if (listMerge === 'prepend_rp') v = [...yv, ...xv.filter((z) => !yv.some((w) => pyEq(w, z)))];
      else if (listMerge === 'keep') v = xv;
    }
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** ansible's `flatten(mylist, levels, skip_nulls)`. */
export function flatten(list: unknown, levels: number | null, skipNulls: boolean): unknown[] {
  const out: unknown[] = [];
  for (const element of items(list)) {
    if (skipNulls && (element === null || element === 'None' || element === 'null')) continue;
    if (Array.isArray(element)) {
      if (levels === null) out.push(...flatten(element, null, skipNulls));
      else if (levels >= 1) out.push(...flatten(element, levels - 1, skipNulls));
      else out.push(element);
    } else out.push(element);
  }
  return out;
}

function combine(terms: readonly unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
  const { recursive = false, list_merge: listMerge = 'replace', ...rest } = kwargs;
  if (Object.keys(rest).length > 0) throw new ExprError("'recursive' and 'list_merge' are the only valid keyword arguments");
  const dicts = flatten(terms, 1, true);
  if (dicts.length === 0) return {};
  if (dicts.length === 1) return dicts[0];
  let result = dicts[dicts.length - 1];
  for (let i = dicts.length - 2; i >= 0; i--) result = mergeHash(dicts[i], result, Boolean(recursive), text(listMerge));
  return result;
}

function subelements(obj: unknown, sub: unknown, skipMissing: boolean): unknown[] {
  let elements: unknown[];
  if (isMap(obj)) elements = Object.values(obj);
  else if (Array.isArray(obj)) elements = [...obj];
  else throw new ExprError('obj must be a list of dicts or a nested dict');
  let path: unknown[];
  if (Array.isArray(sub)) path = [...sub];
  else if (typeof sub === 'string') path = sub.split('.');
  else throw new ExprError('subelements must be a list or a string');
  const out: unknown[] = [];
  for (const element of elements) {
    let values: unknown = element;
    let skipped = false;
    for (const key of path) {
      if (isMap(values)) {
        if (typeof key === 'string' && Object.prototype.hasOwnProperty.call(values, key)) values = values[key];
        else if (skipMissing) {
          values = [];
          skipped = true;
          break;
        } else throw new ExprError(`could not find ${repr(key)} key in iterated item ${repr(values)}`);
      } else throw new ExprError(`the key ${text(key)} should point to a dictionary, got '${text(values)}'`);
    }
    if (!Array.isArray(values)) throw new ExprError(`the key ${repr(path[path.length - 1])} should point to a list, got ${repr(values)}`);
    if (!skipped) for (const v of values) out.push([element, v]);
  }
  return out;
}

function zipLists(lists: readonly unknown[][], longest: boolean, fill: unknown): unknown[][] {
  const n = lists.length === 0 ? 0 : longest ? Math.max(...lists.map((l) => l.length)) : Math.min(...lists.map((l) => l.length));
  return Array.from({ length: n }, (_, i) => lists.map((l) => (i < l.length ? l[i] : fill)));
}

function product(lists: readonly unknown[][], repeat: number): unknown[][] {
  const pools: unknown[][] = [];
  for (let r = 0; r < repeat; r++) pools.push(...lists);
  let out: unknown[][] = [[]];
  for (const pool of pools) out = out.flatMap((prefix) => pool.map((x) => [...prefix, x]));
  if (out.length > 1_000_000) throw new ExprError('product: too many combinations');
  return out;
}

function permutations(pool: readonly unknown[], r: number): unknown[][] {
  const out: unknown[][] = [];
  if (r > pool.length) return out;
  const rec = (used: boolean[], cur: unknown[]): void => {
    if (out.length > 1_000_000) throw new ExprError('permutations: too many results');
    if (cur.length === r) {
      out.push(cur);
      return;
    }
    pool.forEach((x, i) => {
      if (used[i]) return;
      used[i] = true;
      rec(used, [...cur, x]);
      used[i] = false;
    });
  };
  rec([], []);
  return out;
}

function combinations(pool: readonly unknown[], r: number): unknown[][] {
  const out: unknown[][] = [];
  const rec = (start: number, cur: unknown[]): void => {
    if (out.length > 1_000_000) throw new ExprError('combinations: too many results');
    if (cur.length === r) {
      out.push(cur);
      return;
    }
    for (let i = start; i < pool.length; i++) rec(i + 1, [...cur, pool[i]]);
  };
  if (r >= 0 && r <= pool.length) rec(0, []);
  return out;
}

/** `list(set(a) OP set(b))`, falling back to Ansible's list versions on unhashable items. */
function setOp(op: 'union' | 'intersect' | 'difference' | 'symmetric_difference', a: unknown, b: unknown): unknown[] {
  const xs = items(a).map(touch);
  const ys = items(b).map(touch);
  const all = [...xs, ...ys];
  if (all.every(hashable)) {
    if (all.every(hashableNumber)) {
      if (op === 'union') return setUnion(xs, ys);
      if (op === 'intersect') return setIntersection(xs, ys);
      if (op === 'difference') return setDifference(xs, ys);
      return setSymmetricDifference(xs, ys);
    }
    // strings and None hash randomly in Python: kplay keeps the order items are first met
    const uniq = (l: unknown[]): unknown[] => l.filter((x, i) => l.findIndex((y) => pyEq(x, y)) === i);
    const inY = (x: unknown): boolean => ys.some((y) => pyEq(x, y));
    const inX = (y: unknown): boolean => xs.some((x) => pyEq(x, y));
    if (op === 'union') return uniq(all);
    if (op === 'intersect') return uniq(xs.filter(inY));
    if (op === 'difference') return uniq(xs.filter((x) => !inY(x)));
    return uniq([...xs.filter((x) => !inY(x)), ...ys.filter((y) => !inX(y))]);
  }
  const inList = (x: unknown, l: unknown): boolean => pyIn(x, l);
  if (op === 'union') {
    if (!Array.isArray(a) || !Array.isArray(b)) throw new ExprError(`can only concatenate ${typeName(a)} (not "${typeName(b)}") to ${typeName(a)}`);
    return ansibleUnique([...a, ...b], true, null);
  }
  if (op === 'intersect') return ansibleUnique(xs.filter((x) => inList(x, b)), true, null);
  if (op === 'difference') return ansibleUnique(xs.filter((x) => !inList(x, b)), true, null);
  const isect = setOp('intersect', a, b);
  return setOp('union', a, b).filter((x) => !isect.some((y) => pyEq(x, y)));
}

const SIZE_RANGES: readonly (readonly [string, number])[] = [
  ['Y', 2 ** 80],
  ['Z', 2 ** 70],
  ['E', 2 ** 60],
  ['P', 2 ** 50],
  ['T', 2 ** 40],
  ['G', 2 ** 30],
  ['M', 2 ** 20],
  ['K', 2 ** 10],
  ['B', 1],
];

const VALID_UNITS: Readonly<Record<string, readonly [readonly [string, string], readonly [string, string]]>> = {
  B: [['byte', 'B'], ['bit', 'b']],
  K: [['kilobyte', 'KB'], ['kilobit', 'Kb']],
  M: [['megabyte', 'MB'], ['megabit', 'Mb']],
  G: [['gigabyte', 'GB'], ['gigabit', 'Gb']],
  T: [['terabyte', 'TB'], ['terabit', 'Tb']],
  P: [['petabyte', 'PB'], ['petabit', 'Pb']],
  E: [['exabyte', 'EB'], ['exabit', 'Eb']],
  Z: [['zetabyte', 'ZB'], ['zetabit', 'Zb']],
  Y: [['yottabyte', 'YB'], ['yottabit', 'Yb']],
};

function humanReadable(size: unknown, isbits: boolean, unit: unknown): string {
  if (!isNumber(size) && typeof size !== 'boolean') throw new ExprError('human_readable() failed on bad input');
  const n = num(size);
  const base = isbits ? 'bits' : 'Bytes';
  let suffix = 'B';
  let limit = 1;
  for ([suffix, limit] of SIZE_RANGES) {
    if ((unit === null && n >= limit) || (unit !== null && text(unit).toUpperCase() === suffix[0])) break;
  }
  suffix = limit !== 1 ? suffix + (base[0] ?? '') : base;
  return `${(n / limit).toFixed(2)} ${suffix}`;
}

function humanToBytes(value: unknown, defaultUnit: unknown, isbits: boolean): number {
  const s = text(value);
  const m = /^([0-9]*\.?[0-9]+)(?:\s*([A-Za-z]+))?\s*$/.exec(s);
  const wrap = (msg: string): ExprError => new ExprError(`human_to_bytes() can't interpret the input: ${msg}`);
  if (!m) throw wrap(`human_to_bytes() can't interpret following string: ${s}`);
  const n = Number(m[1]);
  const unit = m[2] ?? (defaultUnit === null ? null : text(defaultUnit));
  if (unit === null) return roundEven(n);
  const rangeKey = (unit[0] ?? '').toUpperCase();
  const limit = SIZE_RANGES.find(([k]) => k === rangeKey)?.[1];
  if (limit === undefined) throw wrap(`human_to_bytes() failed to convert ${s} (unit = ${unit}). The suffix must be one of ${SIZE_RANGES.map(([k]) => k).join(', ')}`);
  const unitClass = isbits ? 'b' : 'B';
  const unitClassName = isbits ? 'bit' : 'byte';
  if (unit.length > 1) {
    const expect = rangeKey === 'B' ? `expect ${unitClass} or ${unitClassName}` : `expect ${rangeKey}${unitClass} or ${rangeKey}`;
    const group = VALID_UNITS[rangeKey];
    const pair = group?.[isbits ? 1 : 0];
    if (!pair || (unit.toLowerCase() !== pair[0] && unit !== pair[1])) throw wrap(`human_to_bytes() failed to convert ${s}. Value is not a valid string (${expect})`);
  }
  return roundEven(n * limit);
}

/** Python's `round(x)`: half to even. */
function roundEven(x: number): number {
  return Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
}

function rekey(data: unknown, key: unknown, duplicates: unknown): Record<string, unknown> {
  if (duplicates !== 'error' && duplicates !== 'overwrite') throw new ExprError(`duplicates parameter to rekey_on_member has unknown value ${repr(duplicates)}`);
  let values: unknown[];
  if (isMap(data)) values = Object.values(data);
  else if (Array.isArray(data)) values = data;
  else throw new ExprError('Type is not a valid list, set, or dict');
  const out: Record<string, unknown> = {};
  for (const item of values) {
    if (!isMap(item)) throw new ExprError('List item is not a valid dict');
    const k = typeof key === 'string' && Object.prototype.hasOwnProperty.call(item, key) ? item[key] : undefined;
    if (k === undefined) throw new ExprError(`Key ${repr(key)} was not found.`);
    const name = text(k);
    if (Object.prototype.hasOwnProperty.call(out, name) && duplicates === 'error') throw new ExprError(`Key ${repr(k)} is not unique, cannot convert to dict.`);
    Object.defineProperty(out, name, { value: item, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function mathArg(name: string, v: unknown): number {
  if (!isNumber(v) && typeof v !== 'boolean') throw new ExprError(`${name}() can only be used on numbers`);
  return num(v);
}

/** The data filters, by short name. */
export const ANSIBLE_DATA_FILTERS: Readonly<Record<string, FilterDef>> = {
  combine: { fn: (v, args, kwargs) => combine([v, ...args], kwargs) },
  flatten: filter({ fn: 'flatten', params: [opt('levels'), opt('skip_nulls', true)] }, (v, a) => {
    const levels = a.get('levels');
    return flatten(v, levels === null ? null : intArg(levels), Boolean(a.get('skip_nulls')));
  }),
  dict2items: filter({ fn: 'dict_to_list_of_dict_key_value_elements', params: [opt('key_name', 'key'), opt('value_name', 'value')] }, (v, a) => {
    if (!isMap(v)) throw new ExprError(`dict2items requires a dictionary, got <class '${typeName(v)}'> instead.`);
    const k = text(a.get('key_name'));
    const val = text(a.get('value_name'));
    // reading the dict's items resolves its values: an undefined or failed one is what the filter gives
    return Object.entries(v).map(([key, x]) => dict([[k, key], [val, touch(x)]]));
  }),
  items2dict: filter({ fn: 'list_of_dict_key_value_elements_to_dict', params: [opt('key_name', 'key'), opt('value_name', 'value')] }, (v, a) => {
    if (!Array.isArray(v)) throw new ExprError(`items2dict requires a list, got <class '${typeName(v)}'> instead.`);
    const k = text(a.get('key_name'));
    const val = text(a.get('value_name'));
    const out: [string, unknown][] = [];
    for (const item of v) {
      if (!isMap(item)) throw new ExprError(`items2dict requires a list of dictionaries, got ${repr(v)} instead.`);
      if (!Object.prototype.hasOwnProperty.call(item, k) || !Object.prototype.hasOwnProperty.call(item, val)) {
        throw new ExprError(`items2dict requires each dictionary in the list to contain the keys '${k}' and '${val}', got ${repr(v)} instead.`);
      }
      const key = item[k];
      if (Array.isArray(key) || isMap(key)) throw new ExprError(`unhashable type: '${typeName(key)}'`);
      out.push([typeof key === 'string' ? key : text(key), item[val]]);
    }
    return dict(out);
  }),
  subelements: filter({ fn: 'subelements', params: [req('subelements'), opt('skip_missing', false)] }, (v, a) =>
    subelements(v, a.get('subelements'), Boolean(a.get('skip_missing'))),
  ),
  extract: filter({ fn: 'extract', params: [req('container'), opt('morekeys')], hidden: 1 }, (v, a) => {
    const more = a.get('morekeys');
    const keys = more === null ? [v] : Array.isArray(more) ? [v, ...more] : [v, more];
    let value = a.get('container');
    for (const key of keys) value = getItem(value, typeof key === 'number' || typeof key === 'string' ? key : text(key));
    return value;
  }),
  zip: { fn: (v, args, kwargs) => {
    if (Object.keys(kwargs).length > 0) throw new ExprError('zip() takes no keyword arguments');
    return zipLists([v, ...args].map((x) => items(x)), false, null);
  } },
  zip_longest: { fn: (v, args, kwargs) => {
    const { fillvalue = null, ...rest } = kwargs;
    if (Object.keys(rest).length > 0) throw new ExprError(`zip_longest() got an unexpected keyword argument '${Object.keys(rest)[0]}'`);
    return zipLists([v, ...args].map((x) => items(x)), true, fillvalue);
  } },
  product: { fn: (v, args, kwargs) => {
    const { repeat = 1, ...rest } = kwargs;
    if (Object.keys(rest).length > 0) throw new ExprError(`product() got an unexpected keyword argument '${Object.keys(rest)[0]}'`);
    return product([v, ...args].map((x) => items(x)), intArg(repeat));
  } },
  permutations: filter({ fn: 'permutations', params: [opt('r')] }, (v, a) => {
    const pool = items(v);
    const r = a.get('r');
    return permutations(pool, r === null ? pool.length : intArg(r));
  }),
  combinations: filter({ fn: 'combinations', params: [req('r')] }, (v, a) => {
    const r = intArg(a.get('r'));
    if (r < 0) throw new ExprError('r must be non-negative');
    return combinations(items(v), r);
  }),
  union: filter({ fn: 'union', params: [req('b')], hidden: 1 }, (v, a) => setOp('union', v, a.get('b'))),
  intersect: filter({ fn: 'intersect', params: [req('b')], hidden: 1 }, (v, a) => setOp('intersect', v, a.get('b'))),
  difference: filter({ fn: 'difference', params: [req('b')], hidden: 1 }, (v, a) => setOp('difference', v, a.get('b'))),
  symmetric_difference: filter({ fn: 'symmetric_difference', params: [req('b')], hidden: 1 }, (v, a) => setOp('symmetric_difference', v, a.get('b'))),
  rekey_on_member: filter({ fn: 'rekey_on_member', params: [req('key'), opt('duplicates', 'error')] }, (v, a) => rekey(v, a.get('key'), a.get('duplicates'))),
  human_readable: filter({ fn: 'human_readable', params: [opt('isbits', false), opt('unit')] }, (v, a) => humanReadable(v, Boolean(a.get('isbits')), a.get('unit'))),
  human_to_bytes: filter({ fn: 'human_to_bytes', params: [opt('default_unit'), opt('isbits', false)] }, (v, a) =>
    humanToBytes(v, a.get('default_unit'), Boolean(a.get('isbits'))),
  ),
  log: filter({ fn: 'logarithm', params: [opt('base', Math.E)] }, (v, a) => {
    const x = mathArg('log', v);
    const base = mathArg('log', a.get('base'));
    if (x <= 0 || base <= 0 || base === 1) throw new ExprError(base === 1 ? 'float division by zero' : 'math domain error');
    return mkFloat(base === 10 ? Math.log10(x) : Math.log(x) / Math.log(base));
  }),
  pow: filter({ fn: 'power', params: [req('y')] }, (v, a) => mkFloat(Math.pow(mathArg('pow', v), mathArg('pow', a.get('y'))))),
  root: filter({ fn: 'inversepower', params: [opt('base', 2)] }, (v, a) => {
    const x = mathArg('root', v);
    const base = mathArg('root', a.get('base'));
    if (base === 2) {
      if (x < 0) throw new ExprError('root() can only be used on numbers');
      return mkFloat(Math.sqrt(x));
    }
    return mkFloat(Math.pow(x, 1 / base));
  }),
};

