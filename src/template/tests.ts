/**
 * The tests of the expression language (`x is name(args)`): Jinja2's builtin tests and
 * ansible.builtin's (ansible-core 2.19 `plugins/test/core.py`, `mathstuff.py`, `files.py`), by
 * short name and as `ansible.builtin.name`. Each behaves as in ansible-core, errors included.
 */
import { existsSync, lstatSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import path from 'node:path';
import { expandUser } from './lookup-files.js';
import type { Kwargs, PluginContext, TestDef } from './plugins.js';
import { wasVaulted } from '../core/vault.js';
import { defined, ExprError, PyFloat, Undef, VaultMarker, bigOf, isFloat, isInt, isMap, isNumber, num, pyCompare, pyEq, pyIn, truthy, typeName } from './values.js';
import { bind, opt, req, type Signature } from './filters/args.js';
import { items, text } from './filters/def.js';
import { hashable } from './filters/jinja-lists.js';
import { isLower, isUpper } from './filters/pytext.js';
import { compile, match as reMatch, search as reSearch, fullmatch as reFullmatch } from './filters/pyregex.js';
import { VERSION_TYPES } from './filters/pyversion.js';

type Impl = (value: unknown, a: ReturnType<typeof bind>, ctx: PluginContext) => boolean;

function test(sig: Signature, impl: Impl, acceptsUndefined = false): TestDef {
  return { fn: (value: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext) => impl(value, bind(sig, args, kwargs), ctx), acceptsUndefined };
}

const one = (fn: string, f: (v: unknown) => boolean, acceptsUndefined = false): TestDef => test({ fn, params: [] }, (v) => f(v), acceptsUndefined);
const two = (fn: string, name: string, f: (v: unknown, other: unknown) => boolean): TestDef => test({ fn, params: [req(name)] }, (v, a) => f(v, a.get(name)));

function expectDict(name: string, v: unknown): Record<string, unknown> {
  if (!isMap(v)) throw new ExprError(`The '${name}' test expects a dictionary`);
  return v;
}

function get(d: Record<string, unknown>, k: string): unknown {
  return Object.prototype.hasOwnProperty.call(d, k) ? d[k] : undefined;
}

function failed(v: unknown): boolean {
  return truthy(get(expectDict('failed', v), 'failed') ?? null);
}

function changed(v: unknown): boolean {
  const d = expectDict('changed', v);
  if (Object.prototype.hasOwnProperty.call(d, 'changed')) return truthy(d.changed);
  const results = get(d, 'results');
  if (Array.isArray(results)) {
    if (results.length === 0) throw new ExprError('list index out of range');
    if (isMap(results[0])) return results.some((r) => isMap(r) && truthy(get(r, 'changed') ?? null));
  }
  return false;
}

function asyncState(name: 'started' | 'finished', v: unknown): boolean {
  const d = expectDict(name, v);
  return Object.prototype.hasOwnProperty.call(d, name) ? truthy(d[name]) : true;
}

function regexTest(value: unknown, pattern: unknown, ignorecase: unknown, multiline: unknown, matchType: unknown): boolean {
  const rx = compile(text(pattern), { ignorecase: Boolean(ignorecase), multiline: Boolean(multiline) });
  const s = text(value);
  if (matchType === 'match') return reMatch(rx, s) !== null;
  if (matchType === 'fullmatch') return reFullmatch(rx, s) !== null;
  if (matchType === 'search') return reSearch(rx, s) !== null;
  if (matchType === 'findall') return reSearch(rx, s) !== null;
  if (matchType === 'split' || matchType === 'finditer' || matchType === 'scanner') return true;
  // Ansible calls getattr(re, match_type, 'search'): an unknown name gives the string 'search'
  throw new ExprError("'str' object is not callable");
}

const OPS: Readonly<Record<string, string>> = { '==': 'eq', '=': 'eq', eq: 'eq', '<': 'lt', lt: 'lt', '<=': 'le', le: 'le', '>': 'gt', gt: 'gt', '>=': 'ge', ge: 'ge', '!=': 'ne', '<>': 'ne', ne: 'ne' };

function versionCompare(value: unknown, version: unknown, operator: unknown, strict: unknown, versionType: unknown): boolean {
  if (strict !== null && versionType !== null) throw new ExprError("Cannot specify both 'strict' and 'version_type'");
  if (!truthy(value)) throw new ExprError('Input version value cannot be empty');
  if (!truthy(version)) throw new ExprError('Version parameter to compare against cannot be empty');
  let cmp = VERSION_TYPES.loose;
  if (truthy(strict)) cmp = VERSION_TYPES.strict;
  else if (versionType !== null && truthy(versionType)) {
    const found = VERSION_TYPES[text(versionType)];
    if (!found) throw new ExprError(`Invalid version type (${text(versionType)}). Must be one of 'loose', 'strict', 'semver', 'semantic', 'pep440'`);
    cmp = found;
  }
  const op = OPS[text(operator)];
  if (!op) throw new ExprError(`Invalid operator type (${text(operator)}). Must be one of ${Object.keys(OPS).map((k) => `'${k}'`).join(', ')}`);
  let c: number;
  try {
    c = (cmp ?? VERSION_TYPES.loose ?? (() => 0))(text(value), text(version));
  } catch (e) {
    throw new ExprError(`Version comparison failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  return { eq: c === 0, ne: c !== 0, lt: c < 0, le: c <= 0, gt: c > 0, ge: c >= 0 }[op as 'eq'];
}

const BOOL_TRUE = new Set(['y', 'yes', 'on', '1', 'true', 't']);
const BOOL_FALSE = new Set(['n', 'no', 'off', '0', 'false', 'f']);

/** ansible's `convert_bool.boolean` (strict), or null where it raises TypeError. */
function convertBool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const s = v.toLowerCase().trim();
    if (BOOL_TRUE.has(s)) return true;
    if (BOOL_FALSE.has(s)) return false;
    return null;
  }
  if (isNumber(v)) {
    if (num(v) === 1) return true;
    if (num(v) === 0) return false;
  }
  return null;
}

function truthyTest(v: unknown, convert: unknown): boolean {
  if (truthy(convert)) {
    const b = convertBool(v);
    if (b !== null) return b;
  }
  return truthy(v);
}

function toSet(v: unknown): unknown[] {
  const xs = items(v);
  for (const x of xs) if (!hashable(x)) throw new ExprError(`unhashable type: '${typeName(x)}'`);
  return xs;
}

function pyMod(a: unknown, b: unknown): number {
  if ((typeof a === 'bigint' || typeof b === 'bigint') && !isFloat(a) && !isFloat(b)) {
    const y = bigOf(b);
    if (y === 0n) throw new ExprError('integer modulo by zero');
    const r = bigOf(a) % y;
    return Number(r !== 0n && r < 0n !== y < 0n ? r + y : r);
  }
  const x = num(a);
  const y = num(b);
  if (y === 0) throw new ExprError(isFloat(a) || isFloat(b) ? 'float modulo' : 'integer modulo by zero');
  return x - y * Math.floor(x / y);
}

/** Resolve a path for the file tests as Ansible does: `~` expanded, relative to the playbook directory. */
function safePath(p: unknown, ctx: PluginContext, _name: string): string {
  const s = text(p);
  const base = ctx.searchPaths[ctx.searchPaths.length - 1] ?? ctx.fileRoots[0] ?? process.cwd();
  return path.resolve(base, expandUser(s));
}

function statOf(p: string, follow: boolean): ReturnType<typeof statSync> | undefined {
  try {
    return follow ? statSync(p) : lstatSync(p);
  } catch {
    return undefined;
  }
}

const cmpTest = (fn: string, op: '<' | '<=' | '>' | '>='): TestDef =>
  test({ fn, params: [req('b')] }, (v, a) => {
    const c = pyCompare(v, a.get('b'), op);
    return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
  });

/** Python's `is` for the value model: the same object, or the same singleton/primitive. */
function sameas(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof PyFloat || b instanceof PyFloat) return false;
  return false;
}

const BASE: Record<string, TestDef> = {
  // Jinja2
  odd: one('test_odd', (v) => pyMod(v, 2) === 1),
  even: one('test_even', (v) => pyMod(v, 2) === 0),
  divisibleby: two('test_divisibleby', 'num', (v, n) => pyMod(v, n) === 0),
  defined: one('test_defined', (v) => !(v instanceof Undef), true),
  undefined: one('test_undefined', (v) => v instanceof Undef, true),
  none: one('test_none', (v) => v === null),
  boolean: one('test_boolean', (v) => typeof v === 'boolean'),
  false: one('test_false', (v) => v === false),
  true: one('test_true', (v) => v === true),
  integer: one('test_integer', (v) => isInt(v) || typeof v === 'bigint'),
  float: one('test_float', (v) => isNumber(v) && isFloat(v)),
  lower: one('test_lower', (v) => isLower(text(v))),
  upper: one('test_upper', (v) => isUpper(text(v))),
  string: one('test_string', (v) => typeof v === 'string'),
  mapping: one('test_mapping', (v) => isMap(v)),
  number: one('test_number', (v) => isNumber(v) || typeof v === 'boolean'),
  sequence: one('test_sequence', (v) => typeof v === 'string' || Array.isArray(v) || isMap(v)),
  iterable: one('test_iterable', (v) => typeof v === 'string' || Array.isArray(v) || isMap(v)),
  callable: one('callable', () => false),
  sameas: two('test_sameas', 'other', sameas),
  escaped: one('test_escaped', () => false),
  in: two('test_in', 'seq', (v, seq) => pyIn(v, seq)),
  eq: two('eq', 'b', pyEq),
  equalto: two('eq', 'b', pyEq),
  ne: two('ne', 'b', (a, b) => !pyEq(a, b)),
  lt: cmpTest('lt', '<'),
  lessthan: cmpTest('lt', '<'),
  le: cmpTest('le', '<='),
  gt: cmpTest('gt', '>'),
  greaterthan: cmpTest('gt', '>'),
  ge: cmpTest('ge', '>='),
  // ansible.builtin core
  failed: one('failed', failed),
  failure: one('failed', failed),
  succeeded: one('success', (v) => !failed(v)),
  success: one('success', (v) => !failed(v)),
  successful: one('success', (v) => !failed(v)),
  unreachable: one('unreachable', (v) => truthy(get(expectDict('unreachable', v), 'unreachable') ?? null)),
  reachable: one('reachable', (v) => !truthy(get(expectDict('unreachable', v), 'unreachable') ?? null)),
  timedout: one('timedout', (v) => {
    const t = get(expectDict('timedout', v), 'timedout');
    return truthy(t ?? null) && isMap(t) && truthy(get(t, 'period') ?? null);
  }),
  changed: one('changed', changed),
  change: one('changed', changed),
  skipped: one('skipped', (v) => truthy(get(expectDict('skipped', v), 'skipped') ?? null)),
  skip: one('skipped', (v) => truthy(get(expectDict('skipped', v), 'skipped') ?? null)),
  finished: one('finished', (v) => asyncState('finished', v)),
  started: one('started', (v) => asyncState('started', v)),
  match: test({ fn: 'match', params: [opt('pattern', ''), opt('ignorecase', false), opt('multiline', false)] }, (v, a) =>
    regexTest(v, a.get('pattern'), a.get('ignorecase'), a.get('multiline'), 'match'),
  ),
  search: test({ fn: 'search', params: [opt('pattern', ''), opt('ignorecase', false), opt('multiline', false)] }, (v, a) =>
    regexTest(v, a.get('pattern'), a.get('ignorecase'), a.get('multiline'), 'search'),
  ),
  regex: test({ fn: 'regex', params: [opt('pattern', ''), opt('ignorecase', false), opt('multiline', false), opt('match_type', 'search')] }, (v, a) =>
    regexTest(v, a.get('pattern'), a.get('ignorecase'), a.get('multiline'), a.get('match_type')),
  ),
  version: test({ fn: 'version_compare', params: [req('version'), opt('operator', 'eq'), opt('strict'), opt('version_type')] }, (v, a) =>
    versionCompare(v, a.get('version'), a.get('operator'), a.get('strict'), a.get('version_type')),
  ),
  version_compare: test({ fn: 'version_compare', params: [req('version'), opt('operator', 'eq'), opt('strict'), opt('version_type')] }, (v, a) =>
    versionCompare(v, a.get('version'), a.get('operator'), a.get('strict'), a.get('version_type')),
  ),
  any: one('any', (v) => items(v).some((x) => truthy(x))),
  all: one('all', (v) => items(v).every((x) => truthy(x))),
  truthy: test({ fn: 'truthy', params: [opt('convert_bool', false)] }, (v, a) => truthyTest(v, a.get('convert_bool'))),
  falsy: test({ fn: 'falsy', params: [opt('convert_bool', false)] }, (v, a) => !truthyTest(v, a.get('convert_bool'))),
  // true for a value that came from an inline `!vault` scalar (ansible-core's EncryptedString), false for any other, a vault text included
  // as ansible-core: true for a vaulted value, decrypted or not; any other marker raises
  vault_encrypted: { ...one('vault_encrypted', (v) => v instanceof VaultMarker || wasVaulted(defined(v)), true), acceptsVaultMarker: true },
  vaulted_file: test({ fn: 'vaulted_file', params: [] }, (v, _a, ctx) => {
    const p = safePath(v, ctx, 'vaulted_file');
    let fd: number;
    try {
      fd = openSync(p, 'r');
    } catch {
      throw new ExprError(`Cannot test if the file ${JSON.stringify(text(v))} is a vault.`);
    }
    try {
      const buf = Buffer.alloc(14);
      readSync(fd, buf, 0, 14, 0);
      return buf.toString('latin1') === '$ANSIBLE_VAULT';
    } finally {
      closeSync(fd);
    }
  }),
  // mathstuff
  subset: two('issubset', 'b', (a, b) => {
    const xs = toSet(a);
    const ys = toSet(b);
    return xs.every((x) => ys.some((y) => pyEq(x, y)));
  }),
  superset: two('issuperset', 'b', (a, b) => {
    const xs = toSet(a);
    const ys = toSet(b);
    return ys.every((y) => xs.some((x) => pyEq(x, y)));
  }),
  contains: two('contains', 'value', (seq, v) => pyIn(v, seq)),
  nan: one('isnotanumber', (v) => isNumber(v) && Number.isNaN(num(v))),
  // files (inside the playbook's directory tree only)
  directory: test({ fn: 'isdir', params: [] }, (v, _a, ctx) => statOf(safePath(v, ctx, 'directory'), true)?.isDirectory() ?? false),
  file: test({ fn: 'isfile', params: [] }, (v, _a, ctx) => statOf(safePath(v, ctx, 'file'), true)?.isFile() ?? false),
  link: test({ fn: 'islink', params: [] }, (v, _a, ctx) => statOf(safePath(v, ctx, 'link'), false)?.isSymbolicLink() ?? false),
  exists: test({ fn: 'exists', params: [] }, (v, _a, ctx) => existsSync(safePath(v, ctx, 'exists'))),
  link_exists: test({ fn: 'lexists', params: [] }, (v, _a, ctx) => statOf(safePath(v, ctx, 'link_exists'), false) !== undefined),
  abs: one('isabs', (v) => text(v).startsWith('/')),
  same_file: test({ fn: 'samefile', params: [req('f2')] }, (v, a, ctx) => {
    const s1 = statOf(safePath(v, ctx, 'same_file'), true);
    const s2 = statOf(safePath(a.get('f2'), ctx, 'same_file'), true);
    if (!s1 || !s2) throw new ExprError(`[Errno 2] No such file or directory: ${JSON.stringify(text(s1 ? a.get('f2') : v))}`);
    return s1.ino === s2.ino && s1.dev === s2.dev;
  }),
  mount: test({ fn: 'ismount', params: [] }, (v, _a, ctx) => {
    const p = safePath(v, ctx, 'mount');
    const s = statOf(p, false);
    const parent = statOf(path.dirname(p), false);
    if (!s || !parent || s.isSymbolicLink()) return false;
    return s.dev !== parent.dev || s.ino === parent.ino;
  }),
};

const ALIASES: Readonly<Record<string, string>> = {
  '==': 'eq',
  '!=': 'ne',
  '<': 'lt',
  '<=': 'le',
  '>': 'gt',
  '>=': 'ge',
  issubset: 'subset',
  issuperset: 'superset',
  isnan: 'nan',
  is_dir: 'directory',
  is_file: 'file',
  is_link: 'link',
  is_abs: 'abs',
  is_same_file: 'same_file',
  is_mount: 'mount',
};

let filterNames: (name: string) => boolean = () => false;

/** Let the `filter` test see the filter table (called by ./filters/index.ts, which owns it). */
export function linkFilterNames(has: (name: string) => boolean): void {
  filterNames = has;
}

function build(): Map<string, TestDef> {
  const m = new Map<string, TestDef>();
  const add = (name: string, def: TestDef): void => {
    m.set(name, def);
    if (!/^[!=<>]/.test(name)) m.set(`ansible.builtin.${name}`, def);
  };
  for (const [k, v] of Object.entries(BASE)) add(k, v);
  for (const [alias, target] of Object.entries(ALIASES)) {
    const def = BASE[target];
    if (def) add(alias, def);
  }
  // a name that is not a string makes ansible-core's plugin lookup fail, which its `in` reads as "present"
  add('filter', one('test_filter', (v) => typeof v !== 'string' || filterNames(v)));
  add('test', one('test_test', (v) => typeof v !== 'string' || m.has(v)));
  return m;
}

/** Every test by name: short (`defined`), operator aliases (`==`) and `ansible.builtin.defined`. */
export const TESTS: ReadonlyMap<string, TestDef> = build();
