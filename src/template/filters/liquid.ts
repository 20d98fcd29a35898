/**
 * Liquid's standard filters with Liquid's semantics (as liquidjs runs them), for templates written
 * with Liquid's argument syntax (`x | default: 3`, `s | split: ","`, `n | divided_by: 2`), plus the
 * few kplay filters that predate the Jinja2 library (`sha256`, `keys`, `values`, `to_int`).
 *
 * Names that Jinja2/Ansible also have (`default`, `join`, `split`, `truncate`, `slice`, `map`, …)
 * mean different things in Liquid: the engine looks a filter written as `name: args` up here first
 * ({@link LIQUID_FILTERS}), and in the Jinja2/Ansible table otherwise. Liquid-only names (`size`,
 * `upcase`, `plus`, …) are in both.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Liquid } from 'liquidjs';
import type * as LiquidModule from 'liquidjs';
import type { FilterDef } from '../plugins.js';
import { ExprError, PyFloat, Undef, isMap, isNumber, num, pyEq } from '../values.js';
import { attrGetter } from './access.js';
import { htmlEscape } from './jinja-strings.js';
import { compare } from './jinja-lists.js';

/** Liquid's `stringify`: nil is '', lists and maps as JSON-ish text. */
function str(v: unknown): string {
  if (v === null || v === undefined || v instanceof Undef) return '';
  if (typeof v === 'string') return v;
  if (v instanceof PyFloat) return String(v.value);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (Array.isArray(v)) return v.map(str).join('');
  return JSON.stringify(v, jsonSafe);
}

/** JSON.stringify's replacer for values JSON cannot hold: an int beyond 2**53 as the nearest number. */
function jsonSafe(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? Number(v) : v;
}

/** Liquid's number coercion. */
function n(v: unknown): number {
  if (isNumber(v)) return num(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  const x = Number(str(v));
  return Number.isNaN(x) ? 0 : x;
}

function list(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v === null || v === undefined) return [];
  return [v];
}

/** Liquid's falsy: nil and false only. */
function liquidFalsy(v: unknown): boolean {
  return v === null || v === undefined || v === false || v instanceof Undef;
}

const def = (fn: (v: unknown, args: unknown[], kwargs: Readonly<Record<string, unknown>>) => unknown, acceptsUndefined = false): FilterDef => ({
  fn: (v, args, kwargs) => fn(v, args, kwargs),
  acceptsUndefined,
});

let dateLiquid: Liquid | undefined;
/** liquidjs, required by the first `date` filter rather than bundled (~170 KB of code every start-up otherwise). */
let liquidModule: typeof LiquidModule | undefined;
const requireLazy = createRequire(import.meta.url);

/** liquidjs's `date` filter (Ruby strftime directives), with kplay's fixed locale. */
function liquidDate(v: unknown, format: unknown, tz: unknown): unknown {
  liquidModule ??= requireLazy('liquidjs') as typeof LiquidModule;
  const liquidFilters = liquidModule.filters;
  dateLiquid ??= new liquidModule.Liquid({ locale: 'en-US' });
  const self = { context: { opts: dateLiquid.options, memoryLimit: { use: (): void => undefined } } };
  const out: unknown = (liquidFilters.date as (this: unknown, ...a: unknown[]) => unknown).call(self, v instanceof PyFloat ? v.value : v, format, tz);
  return out;
}

function sliceOf(v: unknown, begin: number, length: number): unknown {
  const items = typeof v === 'string' ? [...v] : list(v);
  const start = begin < 0 ? Math.max(0, items.length + begin) : begin;
  const out = items.slice(start, start + length);
  return typeof v === 'string' ? out.join('') : out;
}

function truncate(s: string, l: number, ending: string): string {
  if ([...s].length <= l) return s;
  const len = Math.max(l, [...ending].length);
  return [...s].slice(0, len - [...ending].length).join('') + ending;
}

function where(v: unknown, prop: unknown, expected: unknown, hasExpected: boolean): unknown[] {
  const get = attrGetter(prop);
  return list(v).filter((item) => {
    const got = get(item);
    if (got instanceof Undef) return false;
    return hasExpected ? pyEq(got, expected) : !liquidFalsy(got);
  });
}

/** The Liquid-only filters (no Jinja2/Ansible filter of that name). */
export const LIQUID_ONLY_FILTERS: Readonly<Record<string, FilterDef>> = {
  size: def((v) => (typeof v === 'string' ? [...v].length : Array.isArray(v) ? v.length : isMap(v) ? Object.keys(v).length : 0)),
  upcase: def((v) => str(v).toUpperCase()),
  downcase: def((v) => str(v).toLowerCase()),
  plus: def((v, [b]) => n(v) + n(b)),
  minus: def((v, [b]) => n(v) - n(b)),
  times: def((v, [b]) => n(v) * n(b)),
  divided_by: def((v, [b, integer]) => {
    if (n(b) === 0) throw new ExprError('divided_by: division by zero');
    return integer === true ? Math.floor(n(v) / n(b)) : n(v) / n(b);
  }),
  modulo: def((v, [b]) => {
    if (n(b) === 0) throw new ExprError('modulo: division by zero');
    return n(v) % n(b);
  }),
  ceil: def((v) => Math.ceil(n(v))),
  floor: def((v) => Math.floor(n(v))),
  at_least: def((v, [b]) => Math.max(n(v), n(b))),
  at_most: def((v, [b]) => Math.min(n(v), n(b))),
  append: def((v, [b]) => str(v) + str(b)),
  prepend: def((v, [b]) => str(b) + str(v)),
  lstrip: def((v, [chars]) => (chars === undefined ? str(v).replace(/^\s+/, '') : str(v).replace(new RegExp(`^[${str(chars).replace(/[\]\\^-]/g, '\\$&')}]+`), ''))),
  rstrip: def((v, [chars]) => (chars === undefined ? str(v).replace(/\s+$/, '') : str(v).replace(new RegExp(`[${str(chars).replace(/[\]\\^-]/g, '\\$&')}]+$`), ''))),
  strip: def((v, [chars]) => (chars === undefined ? str(v).trim() : str(v).replace(new RegExp(`^[${str(chars).replace(/[\]\\^-]/g, '\\$&')}]+|[${str(chars).replace(/[\]\\^-]/g, '\\$&')}]+$`, 'g'), ''))),
  strip_newlines: def((v) => str(v).replace(/\r?\n/g, '')),
  newline_to_br: def((v) => str(v).replace(/\r?\n/g, '<br />\n')),
  strip_html: def((v) => str(v).replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>|<[^>]*>|<!--[\s\S]*?-->/g, '')),
  escape_once: def((v) => htmlEscape(str(v).replace(/&(amp|lt|gt|#39|#34|quot);/g, (m, e: string) => ({ amp: '&', lt: '<', gt: '>', '#39': "'", '#34': '"', quot: '"' })[e] ?? m))),
  remove: def((v, [s]) => str(v).split(str(s)).join('')),
  remove_first: def((v, [s]) => str(v).replace(str(s), '')),
  remove_last: def((v, [s]) => {
    const t = str(v);
    const i = t.lastIndexOf(str(s));
    return i < 0 ? t : t.slice(0, i) + t.slice(i + str(s).length);
  }),
  replace_first: def((v, [a, b]) => str(v).replace(str(a), () => str(b))),
  replace_last: def((v, [a, b]) => {
    const t = str(v);
    const i = t.lastIndexOf(str(a));
    return i < 0 ? t : t.slice(0, i) + str(b) + t.slice(i + str(a).length);
  }),
  truncatewords: def((v, [words = 15, ending = '...']) => {
    const ws = str(v).split(/\s+/).filter((w) => w !== '');
    const k = Math.max(1, n(words));
    return ws.length <= k ? ws.join(' ') : ws.slice(0, k).join(' ') + str(ending);
  }),
  number_of_words: def((v) => str(v).split(/\s+/).filter((w) => w !== '').length),
  squish: def((v) => str(v).trim().split(/\s+/).join(' ')),
  url_encode: def((v) => encodeURIComponent(str(v)).replace(/%20/g, '+')),
  url_decode: def((v) => decodeURIComponent(str(v).replace(/\+/g, ' '))),
  compact: def((v, [prop]) => {
    const get = prop === undefined ? (x: unknown): unknown => x : attrGetter(prop);
    return list(v).filter((x) => {
      const y = get(x);
      return y !== null && y !== undefined && !(y instanceof Undef);
    });
  }),
  concat: def((v, [b]) => [...list(v), ...list(b)]),
  uniq: def((v) => list(v).filter((x, i, all) => all.findIndex((y) => pyEq(x, y)) === i)),
  where: def((v, args) => where(v, args[0], args[1], args.length > 1)),
  sort_natural: def((v, [prop]) => {
    const get = prop === undefined ? (x: unknown): unknown => x : attrGetter(prop);
    return [...list(v)].sort((a, b) => str(get(a)).toLowerCase().localeCompare(str(get(b)).toLowerCase(), 'en-US'));
  }),
  push: def((v, [x]) => [...list(v), x]),
  pop: def((v) => list(v).slice(0, -1)),
  shift: def((v) => list(v).slice(1)),
  unshift: def((v, [x]) => [x, ...list(v)]),
  date: def((v, [format, tz]) => liquidDate(v, format, tz)),
  jsonify: def((v) => JSON.stringify(v instanceof PyFloat ? v.value : v, jsonSafe)),
  json: def((v, [space]) => JSON.stringify(v instanceof PyFloat ? v.value : v, jsonSafe, space === undefined ? undefined : n(space))),
  base64_encode: def((v) => Buffer.from(str(v), 'utf8').toString('base64')),
  base64_decode: def((v) => Buffer.from(str(v), 'base64').toString('utf8')),
  sha256: def((v) => createHash('sha256').update(str(v), 'utf8').digest('hex')),
  to_integer: def((v) => Math.trunc(n(v))),
  to_int: def((v) => {
    const x = typeof v === 'number' ? Math.trunc(v) : parseInt(str(v), 10);
    return Number.isFinite(x) ? x : 0;
  }),
  keys: def((v) => (isMap(v) ? Object.keys(v) : [])),
  values: def((v) => (isMap(v) ? Object.values(v) : [])),
};

/** Liquid's versions of filters whose Jinja2/Ansible namesakes behave differently (used for `name: args`). */
export const LIQUID_FILTERS: Readonly<Record<string, FilterDef>> = {
  ...LIQUID_ONLY_FILTERS,
  default: def((v, args, kwargs) => {
    const [dflt = '', mode] = args;
    // kplay's extension: a second argument `true` also replaces 0 and {} (Ansible's default(d, true)), `false` only nil
    if (mode === true) {
      const empty = liquidFalsy(v) || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isMap(v) && Object.keys(v).length === 0);
      return empty ? dflt : v;
    }
    if (mode === false) return v === null || v === undefined || v instanceof Undef ? dflt : v;
    if (Array.isArray(v) || typeof v === 'string') return v.length ? v : dflt;
    if (v === false && kwargs.allow_false === true) return false;
    return liquidFalsy(v) ? dflt : v;
  }, true),
  join: def((v, [sep = ' ']) => list(v).map(str).join(str(sep))),
  split: def((v, [sep]) => {
    const parts = str(v).split(str(sep));
    while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
    return parts;
  }),
  first: def((v) => (typeof v === 'string' ? ([...v][0] ?? '') : Array.isArray(v) ? (v[0] ?? null) : null)),
  last: def((v) => (typeof v === 'string' ? ([...v].pop() ?? '') : Array.isArray(v) ? (v[v.length - 1] ?? null) : null)),
  reverse: def((v) => [...list(v)].reverse()),
  sort: def((v, [prop]) => {
    const get = prop === undefined ? (x: unknown): unknown => x : attrGetter(prop);
    return [...list(v)].sort((a, b) => compare(get(a), get(b)));
  }),
  map: def((v, [prop]) => list(v).map((x) => {
    const y = attrGetter(prop)(x);
    return y instanceof Undef ? null : y;
  })),
  sum: def((v, [prop]) => list(v).reduce<number>((acc, x) => acc + n(prop === undefined ? x : attrGetter(prop)(x)), 0)),
  slice: def((v, [begin, length = 1]) => sliceOf(v, n(begin), n(length))),
  truncate: def((v, [l = 50, ending = '...']) => truncate(str(v), n(l), str(ending))),
  replace: def((v, [a, b]) => str(v).split(str(a)).join(str(b))),
  escape: def((v) => htmlEscape(str(v))),
  capitalize: def((v) => {
    const s = str(v);
    return s.charAt(0).toUpperCase() + s.slice(1).toLowerCase();
  }),
  abs: def((v) => Math.abs(n(v))),
  round: def((v, [digits = 0]) => {
    const p = 10 ** n(digits);
    return Math.round(n(v) * p) / p;
  }),
};

