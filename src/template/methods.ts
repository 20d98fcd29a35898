/**
 * The methods templates call on strings, lists and dicts (`x.split(',')`, `d.items()`,
 * `'{}'.format(x)`), as Python's. Only these: nothing that mutates (ansible-core's Jinja
 * environment is an immutable sandbox) and nothing that reaches JavaScript internals.
 */
import { percentFormat, strFormat } from './pyformat.js';
import { ExprError, isFresh, isMap, iterate, mkFloat, num, own, pyCompare, pyEq, setOwn, typeName } from './values.js';
import { pyStr, strRepr } from './pyrepr.js';

/** Positional arguments a method needs (Python's signatures). */
const REQUIRED_ARGS: Readonly<Record<string, number>> = { get: 1, startswith: 1, endswith: 1, replace: 2, find: 1, rfind: 1, index: 1, count: 1, join: 1, partition: 1, rpartition: 1, append: 1, extend: 1, insert: 2, remove: 1, setdefault: 1, zfill: 1, center: 1, ljust: 1, rjust: 1, removeprefix: 1, removesuffix: 1 };

/** A method read from a value (`d.items`), called later (`d.items()`). */
export class BoundMethod {
  constructor(
    readonly self: unknown,
    readonly name: string,
  ) {}
}

type Method = (self: never, args: unknown[], kwargs: Readonly<Record<string, unknown>>) => unknown;

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string') throw new ExprError(`${what} must be str, not ${typeName(v)}`);
  return v;
};

const WS = ' \t\n\r\x0b\x0c';
function stripChars(s: string, chars: unknown, left: boolean, right: boolean): string {
  const set = chars === undefined || chars === null ? WS : str(chars, 'strip arg');
  let a = 0;
  let b = s.length;
  if (left) while (a < b && set.includes(s[a] ?? '')) a++;
  if (right) while (b > a && set.includes(s[b - 1] ?? '')) b--;
  return s.slice(a, b);
}

/** Python's str.split (whitespace runs when sep is None; maxsplit). */
export function pySplit(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = maxsplit === undefined || maxsplit === null ? -1 : num(maxsplit);
  if (sep === undefined || sep === null) {
    const out: string[] = [];
    let rest = s.replace(/^[\s]+/, '');
    while (rest !== '') {
      if (max >= 0 && out.length >= max) {
        out.push(rest);
        break;
      }
      const m = /[\s]+/.exec(rest);
      if (!m) {
        out.push(rest);
        break;
      }
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    return out;
  }
  const d = str(sep, 'separator');
  if (d === '') throw new ExprError('empty separator');
  const parts = s.split(d);
  if (max < 0 || parts.length <= max + 1) return parts;
  return [...parts.slice(0, max), parts.slice(max).join(d)];
}

function prefixes(v: unknown): string[] {
  return Array.isArray(v) ? v.map((x) => str(x, 'tuple for startswith must only contain str, not')) : [str(v, 'startswith first arg')];
}

const STR_METHODS: Readonly<Record<string, Method>> = {
  upper: (s: string) => s.toUpperCase(),
  lower: (s: string) => s.toLowerCase(),
  casefold: (s: string) => s.toLowerCase(),
  swapcase: (s: string) => [...s].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join(''),
  capitalize: (s: string) => (s ? (s[0] ?? '').toUpperCase() + s.slice(1).toLowerCase() : s),
  title: (s: string) => s.toLowerCase().replace(/(^|[^A-Za-z])([a-z])/g, (_m, a: string, b: string) => a + b.toUpperCase()),
  strip: (s: string, [c]) => stripChars(s, c, true, true),
  lstrip: (s: string, [c]) => stripChars(s, c, true, false),
  rstrip: (s: string, [c]) => stripChars(s, c, false, true),
  split: (s: string, [sep, max], kw) => pySplit(s, sep ?? kw.sep, max ?? kw.maxsplit),
  rsplit: (s: string, [sep, max], kw) => {
    const m = max ?? kw.maxsplit;
    const limit = m === undefined || m === null ? -1 : num(m);
    const all = pySplit(s, sep ?? kw.sep, -1);
    if (limit < 0 || all.length <= limit + 1) return all;
    const d = sep === undefined || sep === null ? ' ' : String(sep);
    return [all.slice(0, all.length - limit).join(d), ...all.slice(all.length - limit)];
  },
  splitlines: (s: string) => s.split(/\r\n|\r|\n/).filter((_x, i, a) => i < a.length - 1 || a[i] !== ''),
  startswith: (s: string, [p]) => prefixes(p).some((x) => s.startsWith(x)),
  endswith: (s: string, [p]) => prefixes(p).some((x) => s.endsWith(x)),
  replace: (s: string, [a, b, count]) => {
    const from = str(a, 'replace() argument 1');
    const to = str(b, 'replace() argument 2');
    let n = count === undefined ? -1 : num(count);
    if (n < 0) return s.split(from).join(to);
    let out = '';
    let rest = s;
    while (n-- > 0) {
      const k = rest.indexOf(from);
      if (k < 0) break;
      out += rest.slice(0, k) + to;
      rest = rest.slice(k + from.length);
    }
    return out + rest;
  },
  find: (s: string, [x]) => s.indexOf(str(x, 'find arg')),
  rfind: (s: string, [x]) => s.lastIndexOf(str(x, 'rfind arg')),
  index: (s: string, [x]) => {
    const k = s.indexOf(str(x, 'index arg'));
    if (k < 0) throw new ExprError('substring not found');
    return k;
  },
  count: (s: string, [x]) => (str(x, 'count arg') === '' ? s.length + 1 : s.split(String(x)).length - 1),
  join: (s: string, [items]) => iterate(items).map((x) => str(x, 'sequence item')).join(s),
  format: (s: string, args, kw) => strFormat(s, args, kw),
  format_map: (s: string, [m]) => strFormat(s, [], isMap(m) ? m : {}),
  zfill: (s: string, [w]) => {
    const width = num(w);
    const sign = s[0] === '-' || s[0] === '+' ? (s[0] ?? '') : '';
    const body = sign ? s.slice(1) : s;
    return sign + body.padStart(width - sign.length, '0');
  },
  center: (s: string, [w, f]) => {
    const pad = Math.max(0, num(w) - s.length);
    const fill = f === undefined ? ' ' : String(f);
    const left = Math.floor(pad / 2) + (pad % 2 && num(w) % 2 ? 1 : 0);
    return fill.repeat(left) + s + fill.repeat(pad - left);
  },
  ljust: (s: string, [w, f]) => s.padEnd(num(w), f === undefined ? ' ' : String(f)),
  rjust: (s: string, [w, f]) => s.padStart(num(w), f === undefined ? ' ' : String(f)),
  partition: (s: string, [sep]) => {
    const d = str(sep, 'sep');
    const k = s.indexOf(d);
    return k < 0 ? [s, '', ''] : [s.slice(0, k), d, s.slice(k + d.length)];
  },
  rpartition: (s: string, [sep]) => {
    const d = str(sep, 'sep');
    const k = s.lastIndexOf(d);
    return k < 0 ? ['', '', s] : [s.slice(0, k), d, s.slice(k + d.length)];
  },
  removeprefix: (s: string, [p]) => (s.startsWith(str(p, 'prefix')) ? s.slice(String(p).length) : s),
  removesuffix: (s: string, [p]) => (String(p) !== '' && s.endsWith(str(p, 'suffix')) ? s.slice(0, s.length - String(p).length) : s),
  isdigit: (s: string) => /^\d+$/.test(s),
  isnumeric: (s: string) => /^\d+$/.test(s),
  isdecimal: (s: string) => /^\d+$/.test(s),
  isalpha: (s: string) => /^\p{L}+$/u.test(s),
  isalnum: (s: string) => /^[\p{L}\d]+$/u.test(s),
  isspace: (s: string) => /^\s+$/.test(s),
  islower: (s: string) => /[a-z]/.test(s) && s === s.toLowerCase(),
  isupper: (s: string) => /[A-Z]/.test(s) && s === s.toUpperCase(),
  istitle: (s: string) => /[A-Za-z]/.test(s) && s === STR_METHODS.title?.(s as never, [], {}),
  encode: (s: string) => s,
  decode: (s: string) => s,
  __mod__: (s: string, [v]) => percentFormat(s, v, false),
};

const LIST_METHODS: Readonly<Record<string, Method>> = {
  index: (l: unknown[], [x]) => {
    const k = l.findIndex((y) => pyEq(y, x));
    if (k < 0) throw new ExprError(`${pyStr(x)} is not in list`);
    return k;
  },
  count: (l: unknown[], [x]) => l.filter((y) => pyEq(y, x)).length,
  copy: (l: unknown[]) => l.slice(),
};

const DICT_METHODS: Readonly<Record<string, Method>> = {
  items: (d: Record<string, unknown>) => Object.entries(d).map(([k, v]) => [k, v]),
  keys: (d: Record<string, unknown>) => Object.keys(d),
  values: (d: Record<string, unknown>) => Object.values(d),
  get: (d: Record<string, unknown>, [k, def]) => {
    const v = own(d, pyStr(k));
    return v === undefined ? (def ?? null) : v;
  },
  copy: (d: Record<string, unknown>) => ({ ...d }),
};

/** Methods that change a list in place (return None, except pop). */
const LIST_MUTATORS: Readonly<Record<string, Method>> = {
  append: (l: unknown[], [x]) => {
    l.push(x);
    return null;
  },
  extend: (l: unknown[], [xs]) => {
    l.push(...iterate(xs));
    return null;
  },
  insert: (l: unknown[], [i, x]) => {
    let k = num(i);
    if (k < 0) k = Math.max(0, l.length + k);
    l.splice(Math.min(k, l.length), 0, x);
    return null;
  },
  pop: (l: unknown[], [i]) => {
    if (l.length === 0) throw new ExprError('pop from empty list');
    let k = i === undefined ? l.length - 1 : num(i);
    if (k < 0) k += l.length;
    if (k < 0 || k >= l.length) throw new ExprError('pop index out of range');
    return l.splice(k, 1)[0];
  },
  remove: (l: unknown[], [x]) => {
    const k = l.findIndex((y) => pyEq(y, x));
    if (k < 0) throw new ExprError('list.remove(x): x not in list');
    l.splice(k, 1);
    return null;
  },
  reverse: (l: unknown[]) => {
    l.reverse();
    return null;
  },
  sort: (l: unknown[], _a, kw) => {
    l.sort((a, b) => pyCompare(a, b));
    if (kw.reverse === true) l.reverse();
    return null;
  },
  clear: (l: unknown[]) => {
    l.length = 0;
    return null;
  },
};

/** Methods that change a dict in place. */
const DICT_MUTATORS: Readonly<Record<string, Method>> = {
  update: (d: Record<string, unknown>, [other], kw) => {
    for (const src of [isMap(other) ? other : {}, kw]) for (const [k, v] of Object.entries(src)) setOwn(d, k, v);
    return null;
  },
  setdefault: (d: Record<string, unknown>, [k, def]) => {
    const key = pyStr(k);
    if (!Object.prototype.hasOwnProperty.call(d, key)) setOwn(d, key, def ?? null);
    return d[key];
  },
  pop: (d: Record<string, unknown>, [k, def]) => {
    const key = pyStr(k);
    if (Object.prototype.hasOwnProperty.call(d, key)) {
      const v = d[key];
      delete d[key];
      return v;
    }
    if (def === undefined) throw new ExprError(`KeyError: ${strRepr(key)}`);
    return def;
  },
  clear: (d: Record<string, unknown>) => {
    for (const k of Object.keys(d)) delete d[k];
    return null;
  },
};

/** The method table of a value's type, or undefined for types without methods. */
function table(self: unknown): Readonly<Record<string, Method>> | undefined {
  if (typeof self === 'string') return STR_METHODS;
  if (Array.isArray(self)) return { ...LIST_METHODS, ...LIST_MUTATORS };
  if (isMap(self)) return { ...DICT_METHODS, ...DICT_MUTATORS };
  return undefined;
}

const MUTATORS: ReadonlySet<string> = new Set([...Object.keys(LIST_MUTATORS), ...Object.keys(DICT_MUTATORS)]);

/** Whether `self.name` is a method (Jinja reads attributes before keys: `d.items` is the method). */
export function hasMethod(self: unknown, name: string): boolean {
  if (name.startsWith('__')) return false;
  if (typeof self === 'string') return Object.prototype.hasOwnProperty.call(STR_METHODS, name);
  if (Array.isArray(self)) return Object.prototype.hasOwnProperty.call(LIST_METHODS, name) || Object.prototype.hasOwnProperty.call(LIST_MUTATORS, name);
  if (isMap(self)) return Object.prototype.hasOwnProperty.call(DICT_METHODS, name) || Object.prototype.hasOwnProperty.call(DICT_MUTATORS, name);
  return false;
}

/** Call a bound method. */
export function callMethod(m: BoundMethod, args: unknown[], kwargs: Readonly<Record<string, unknown>>): unknown {
  const t = table(m.self);
  const fn = t && Object.prototype.hasOwnProperty.call(t, m.name) ? t[m.name] : undefined;
  if (!fn) throw new ExprError(`'${typeName(m.self)}' object has no attribute '${m.name}'`);
  const need = REQUIRED_ARGS[m.name];
  if (need !== undefined && args.length < need) throw new ExprError(`${typeName(m.self)}.${m.name}() missing ${need - args.length} required positional argument${need - args.length > 1 ? 's' : ''}`);
  // the variables' own data is never changed: a changing method on it works on a copy
  let self = m.self;
  if (MUTATORS.has(m.name) && !isFresh(self as object)) self = Array.isArray(self) ? self.slice() : { ...(self as Record<string, unknown>) };
  const out = fn(self as never, args, kwargs);
  return typeof out === 'number' && !Number.isInteger(out) ? mkFloat(out) : out;
}
