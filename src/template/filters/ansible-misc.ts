/**
 * ansible.builtin's remaining filters (ansible-core 2.19 `core.py`): `bool`, `ternary`,
 * `mandatory`, `type_debug`, `random`/`shuffle` (Python's generator when seeded), `strftime`/
 * `to_datetime`, and the POSIX path filters.
 */
import { homedir } from 'node:os';
import { posix } from 'node:path';
import { realpathSync } from 'node:fs';
import type { FilterDef } from '../plugins.js';
import { CapturedError, ExprError, Undef, isMap, isNumber, num, truthy, typeName } from '../values.js';
import { intArg, opt, req } from './args.js';
import { filter, items, text } from './def.js';
import { parseFloatPy } from './pynum.js';
import { passwordHash } from './pycrypt.js';
import { PyRandom, systemRandbelow } from './pyrandom.js';
import { PyDatetime, strftime, strptime, tmOf } from './pytime.js';

const TRUE = new Set(['yes', 'on', 'true', '1']);
const FALSE = new Set(['no', 'off', 'false', '0']);

/** ansible's `to_bool`: well-known strings and ints; anything else is `== 1` (deprecated in Ansible). */
export function toBool(v: unknown): boolean {
  let check: unknown = v;
  if (typeof v === 'string') check = v.toLowerCase();
  else if (typeof v === 'boolean') check = v ? 'true' : 'false';
  else if (typeof v === 'number' && Number.isInteger(v)) check = String(v);
  if (typeof check === 'string' && TRUE.has(check)) return true;
  if (typeof check === 'string' && FALSE.has(check)) return false;
  return isNumber(check) && num(check) === 1;
}

function randomFilter(end: unknown, start: unknown, step: unknown, seed: unknown): unknown {
  const seeded = seed === null ? null : new PyRandom(seed);
  if (typeof end === 'number' && Number.isInteger(end)) {
    const s = start ? num(start) : 0;
    const st = step ? num(step) : 1;
    if (seeded) return seeded.randrange(s, end, st);
    const width = end - s;
    const n = st === 1 ? width : st > 0 ? Math.floor((width + st - 1) / st) : Math.floor((width + st + 1) / st);
    if (st === 0) throw new ExprError('zero step for randrange()');
    if (n <= 0) throw new ExprError(`empty range for randrange() (${s}, ${end}, ${width})`);
    return s + st * systemRandbelow(n);
  }
  if (typeof end === 'string' || Array.isArray(end) || isMap(end)) {
    if (start || step) throw new ExprError('start and step can only be used with integer values');
    if (isMap(end)) {
      const n = Object.keys(end).length;
      if (n === 0) throw new ExprError('Cannot choose from an empty sequence');
      // Python indexes the dict with an int: a KeyError naming the index
      throw new ExprError(String(seeded ? seeded.randbelow(n) : systemRandbelow(n)));
    }
    const seq = items(end);
    if (seq.length === 0) throw new ExprError('Cannot choose from an empty sequence');
    return seeded ? seeded.choice(seq) : seq[systemRandbelow(seq.length)];
  }
  throw new ExprError('random can only be used on sequences and integers');
}

function shuffle(value: unknown, seed: unknown): unknown[] {
  let list: unknown[];
  try {
    list = [...items(value)];
  } catch {
    return value as unknown[];
  }
  if (seed !== null && truthy(seed)) new PyRandom(seed).shuffle(list);
  else {
    for (let i = list.length - 1; i > 0; i--) {
      const j = systemRandbelow(i + 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
  }
  return list;
}

/** `os.path` functions take only strings: Python's TypeError otherwise. */
function pathArg(v: unknown): string {
  if (typeof v !== 'string') throw new ExprError(`expected str, bytes or os.PathLike object, not ${typeName(v)}`);
  return v;
}

/** Python's `os.path.splitext`. */
function splitext(p: string): [string, string] {
  const base = posix.basename(p);
  const dot = base.lastIndexOf('.');
  if (dot <= 0 || /^\.+$/.test(base.slice(0, dot + 1))) return [p, ''];
  const cut = p.length - (base.length - dot);
  return [p.slice(0, cut), p.slice(cut)];
}

/** Python's `os.path.basename` / `dirname` (no trailing-slash stripping, unlike Node's). */
function pyBasename(p: string, sep = '/'): string {
  return p.slice(p.lastIndexOf(sep) + 1);
}

function pyDirname(p: string): string {
  const i = p.lastIndexOf('/') + 1;
  let head = p.slice(0, i);
  if (head && head !== '/'.repeat(head.length)) head = head.replace(/\/+$/, '');
  return head;
}

/** Python's `os.path.normpath` (POSIX). */
export function normpath(p: string): string {
  if (p === '') return '.';
  const initial = p.startsWith('/') ? (p.startsWith('//') && !p.startsWith('///') ? 2 : 1) : 0;
  const out: string[] = [];
  for (const comp of p.split('/')) {
    if (comp === '' || comp === '.') continue;
    if (comp !== '..' || (!initial && out.length === 0) || (out.length > 0 && out[out.length - 1] === '..')) out.push(comp);
    else if (out.length > 0) out.pop();
  }
  const joined = '/'.repeat(initial) + out.join('/');
  return joined || '.';
}

function pathJoin(parts: readonly string[]): string {
  let out = '';
  for (const p of parts) {
    if (p.startsWith('/')) out = p;
    else if (out === '' || out.endsWith('/')) out += p;
    else out += `/${p}`;
  }
  return out;
}

function winSplitdrive(p: string): [string, string] {
  const norm = p.replace(/\//g, '\\');
  if (norm.startsWith('\\\\') && norm[2] !== '\\') {
    const i = norm.indexOf('\\', 2);
    const j = i < 0 ? -1 : norm.indexOf('\\', i + 1);
    if (i < 0) return [p, ''];
    const end = j < 0 ? p.length : j;
    return [p.slice(0, end), p.slice(end)];
  }
  if (p[1] === ':') return [p.slice(0, 2), p.slice(2)];
  return ['', p];
}

/** Python's `ntpath.split`: (head, tail). */
function winSplit(p: string): [string, string] {
  const [drive, rest] = winSplitdrive(p);
  let i = rest.length;
  while (i > 0 && rest[i - 1] !== '\\' && rest[i - 1] !== '/') i--;
  const tail = rest.slice(i);
  let head = rest.slice(0, i);
  const stripped = head.replace(/[\\/]+$/, '');
  if (stripped) head = stripped;
  return [drive + head, tail];
}

/** The miscellaneous filters, by short name. */
export const ANSIBLE_MISC_FILTERS: Readonly<Record<string, FilterDef>> = {
  bool: filter({ fn: 'to_bool', params: [] }, (v) => toBool(v)),
  ternary: filter({ fn: 'ternary', params: [req('true_val'), req('false_val'), opt('none_val')] }, (v, a) => {
    if (v === null && a.get('none_val') !== null) return a.get('none_val');
    return truthy(v) ? a.get('true_val') : a.get('false_val');
  }),
  mandatory: filter(
    { fn: 'mandatory', params: [opt('msg')] },
    (v, a) => {
      if (!(v instanceof Undef) || v instanceof CapturedError) return v;
      const msg = a.get('msg');
      if (msg !== null) throw new ExprError(text(msg));
      throw new ExprError(`Mandatory variable ${v.name ? `'${v.name}' ` : ''}not defined.`);
    },
    true,
  ),
  type_debug: filter({ fn: 'type_debug', params: [] }, (v) => (v instanceof CapturedError ? 'CapturedExceptionMarker' : v instanceof Undef ? 'UndefinedMarker' : typeName(v)), true),
  random: filter({ fn: 'rand', params: [opt('start'), opt('step'), opt('seed')], hidden: 1 }, (v, a) => randomFilter(v, a.get('start'), a.get('step'), a.get('seed'))),
  shuffle: filter({ fn: 'randomize_list', params: [opt('seed')] }, (v, a) => shuffle(v, a.get('seed'))),
  strftime: filter({ fn: 'strftime', params: [opt('second'), opt('utc', false)] }, (v, a) => {
    const s = a.get('second');
    let epoch = Date.now() / 1000;
    if (s !== null) {
      const f = typeof s === 'string' ? parseFloatPy(s) : isNumber(s) || typeof s === 'boolean' ? num(s) : null;
      if (f === null || !Number.isFinite(f)) throw new ExprError(`Invalid value for epoch value (${text(s)})`);
      epoch = f;
    }
    return strftime(text(v), tmOf(epoch, Boolean(a.get('utc'))));
  }),
  to_datetime: filter({ fn: 'to_datetime', params: [opt('format', '%Y-%m-%d %H:%M:%S')] }, (v, a): PyDatetime => {
    if (typeof v !== 'string') throw new ExprError(`strptime() argument 1 must be str, not ${typeName(v)}`);
    return strptime(v, text(a.get('format')));
  }),
  password_hash: filter(
    { fn: 'get_encrypted_password', params: [opt('hashtype', 'sha512'), opt('salt'), opt('salt_size'), opt('rounds'), opt('ident')] },
    (v, a) => {
      const salt = a.get('salt');
      const size = a.get('salt_size');
      const rounds = a.get('rounds');
      return passwordHash(text(v), text(a.get('hashtype')), salt === null ? null : text(salt), size === null ? null : intArg(size), rounds === null ? null : intArg(rounds));
    },
  ),
  basename: filter({ fn: 'basename', params: [] }, (v) => pyBasename(pathArg(v))),
  dirname: filter({ fn: 'dirname', params: [] }, (v) => pyDirname(pathArg(v))),
  expanduser: filter({ fn: 'expanduser', params: [] }, (v) => {
    const p = pathArg(v);
    if (p === '~' || p.startsWith('~/')) return (process.env.HOME ?? homedir()).replace(/\/$/, '') + p.slice(1) || '/';
    return p;
  }),
  expandvars: filter({ fn: 'expandvars', params: [] }, (v) =>
    pathArg(v).replace(/\$(\w+)|\$\{([^}]*)\}/g, (m, a: string | undefined, b: string | undefined) => process.env[a ?? b ?? ''] ?? m),
  ),
  realpath: filter({ fn: 'realpath', params: [] }, (v) => {
    const p = posix.resolve(pathArg(v));
    try {
      return realpathSync(p);
    } catch {
      return normpath(p);
    }
  }),
  relpath: filter({ fn: 'relpath', params: [opt('start')] }, (v, a) => {
    const start = a.get('start');
    return posix.relative(posix.resolve(start === null ? '.' : text(start)), posix.resolve(pathArg(v))) || '.';
  }),
  splitext: filter({ fn: 'splitext', params: [] }, (v) => splitext(pathArg(v))),
  normpath: filter({ fn: 'normpath', params: [] }, (v) => normpath(pathArg(v))),
  path_join: filter({ fn: 'path_join', params: [] }, (v) => {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return pathJoin(v.map((x) => text(x)));
    throw new ExprError(`|path_join expects string or sequence, got <class '${typeName(v)}'> instead.`);
  }),
  commonpath: filter({ fn: 'commonpath', params: [] }, (v) => {
    if (!Array.isArray(v)) throw new ExprError(`|commonpath expects sequence, got <class '${typeName(v)}'> instead.`);
    const paths = v.map((x) => text(x));
    if (paths.length === 0) throw new ExprError('commonpath() arg is an empty sequence');
    const abs = paths.map((p) => p.startsWith('/'));
    if (abs.some((x) => x !== abs[0])) throw new ExprError("Can't mix absolute and relative paths");
    const split = paths.map((p) => p.split('/').filter((c) => c !== '' && c !== '.'));
    const common: string[] = [];
    for (let i = 0; ; i++) {
      const c = split[0]?.[i];
      if (c === undefined || split.some((s) => s[i] !== c)) break;
      common.push(c);
    }
    return (abs[0] ? '/' : '') + common.join('/');
  }),
  win_basename: filter({ fn: 'win_basename', params: [] }, (v) => winSplit(pathArg(v))[1]),
  win_dirname: filter({ fn: 'win_dirname', params: [] }, (v) => winSplit(pathArg(v))[0]),
  win_splitdrive: filter({ fn: 'win_splitdrive', params: [] }, (v) => winSplitdrive(pathArg(v))),
};
