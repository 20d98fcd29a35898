/**
 * Lookups that make values: `password` (generated, stored in a file as Ansible does, with its
 * `chars`/`length`/`seed` options) and `sequence` (ranges with formats and the `start-end/stride:format` shortcut).
 */
import { randomInt } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Kwargs, PluginContext } from './plugins.js';
import { ExprError, num } from './values.js';
import { text } from './filters/def.js';
import { parseIntPy } from './filters/pynum.js';
import { percentFormat } from './filters/pyformat.js';
import { PyRandom } from './filters/pyrandom.js';
import { rstrip } from './filters/pytext.js';
import { basedir, expandUser } from './lookup-files.js';

/** Python's `string` module constants the password lookup's `chars` may name. */
const CHAR_SETS: Readonly<Record<string, string>> = {
  ascii_letters: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
  ascii_lowercase: 'abcdefghijklmnopqrstuvwxyz',
  ascii_uppercase: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  digits: '0123456789',
  hexdigits: '0123456789abcdefABCDEF',
  octdigits: '01234567',
  punctuation: '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~',
  whitespace: ' \t\n\r\x0b\x0c',
  printable: '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~ \t\n\r\x0b\x0c',
};

/** Ansible's `parse_kv` for the simple `key=value key2="v 2"` forms the password and sequence lookups take. */
export function parseKv(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  const raw: string[] = [];
  for (const m of s.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\S*)|(\S+)/g)) {
    if (m[1] !== undefined) {
      let v = m[2] ?? '';
      if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
      Object.defineProperty(out, m[1], { value: v, enumerable: true, writable: true, configurable: true });
    } else if (m[3] !== undefined) raw.push(m[3]);
  }
  if (raw.length > 0) Object.defineProperty(out, '_raw_params', { value: raw.join(' '), enumerable: true, writable: true, configurable: true });
  return out;
}

function passwordChars(spec: unknown): string {
  let specs: string[];
  if (typeof spec === 'string') {
    specs = [];
    if (spec.includes(',,')) specs.push(',');
    specs.push(...spec.replace(/,,/g, ',').split(',').filter((c) => c !== ''));
  } else if (Array.isArray(spec)) specs = spec.map((x) => text(x));
  else specs = ['ascii_letters', 'digits', '.,:-_'];
  return specs
    .map((s) => CHAR_SETS[s] ?? s)
    .join('')
    .replace(/["']/g, '');
}

export function password(term: string, kwargs: Kwargs, ctx: PluginContext): string {
  const [first = '', rest] = [term.split(' ', 1)[0], term.includes(' ') ? term.slice(term.indexOf(' ') + 1) : undefined];
  let relpath = first;
  const params: Record<string, unknown> = { ...kwargs };
  if (rest !== undefined) {
    const kv = parseKv(rest);
    if (kv._raw_params !== undefined) {
      relpath = `${relpath} ${kv._raw_params}`;
      delete kv._raw_params;
      if (!term.startsWith(relpath)) throw new ExprError('Unrecognized value after key=value parameters given to password lookup');
    }
    Object.assign(params, kv);
  }
  const invalid = Object.keys(params).filter((k) => !['length', 'encrypt', 'chars', 'ident', 'seed'].includes(k));
  if (invalid.length > 0) throw new ExprError(`Unrecognized parameter(s) given to password lookup: ${invalid.join(', ')}`);
  if (params.encrypt !== undefined && params.encrypt !== null && params.encrypt !== '') {
    throw new ExprError('the password lookup with encrypt= is not supported by kplay', undefined, 'use the plaintext password, or hash it with a module on the target');
  }
  const length = params.length === undefined ? 20 : Number(typeof params.length === 'string' ? params.length : num(params.length));
  if (!Number.isInteger(length) || length < 0) throw new ExprError(`the password lookup's length must be an integer, got ${text(params.length)}`);
  const chars = passwordChars(params.chars);
  if (chars.length === 0) throw new ExprError('Cannot choose from an empty sequence');
  const devNull = relpath === '/dev/null';
  const file = path.resolve(basedir(ctx), expandUser(relpath));
  let plain: string | undefined;
  if (!devNull && existsSync(file)) {
    const content = rstrip(readFileSync(file, 'utf8'));
    const salt = content.lastIndexOf(' salt=');
    plain = salt >= 0 ? content.slice(0, salt) : content;
  }
  if (plain === undefined) {
    const seed = params.seed;
    // the seed option is a string in ansible-core (seed=42 seeds with '42')
    const gen = seed === undefined || seed === null ? null : new PyRandom(text(seed));
    plain = Array.from({ length }, () => (gen ? gen.choice([...chars]) : chars[randomInt(chars.length)])).join('');
    if (!devNull) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const fd = openSync(file, 'w', 0o600);
      try {
        chmodSync(file, 0o600);
        writeSync(fd, `${plain}\n`);
      } finally {
        closeSync(fd);
      }
    }
  }
  ctx.addSecret(plain);
  return plain;
}

const SEQ_SHORTCUT = /^((0?x?[0-9a-f]+)-)?(0?x?[0-9a-f]+)(\/(0?x?[0-9a-f]+))?(:(.+))?$/i;

function seqInt(v: unknown, field: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const s = text(v);
  // ansible-core 2.19 types the options as integers: decimal only (hex/octal forms are refused)
  const n = parseIntPy(s, 10);
  if (n === null) throw new ExprError(`Config '${field}' for 'sequence' lookup plugin from 'Direct' has an invalid value: Invalid value provided for 'integer': '${s}'`);
  if (typeof n === 'bigint') throw new ExprError(`the sequence lookup's '${field}' is too large: ${s}`, undefined, 'kplay bounds template memory');
  return n;
}

export function sequence(terms: readonly unknown[], kwargs: Kwargs): string[] {
  const list = terms.length === 0 && Object.keys(kwargs).length > 0 ? [''] : terms;
  const out: string[] = [];
  for (const termIn of list) {
    const term = text(termIn);
    const opts: Record<string, unknown> = { start: 1, stride: 1, format: '%d', count: null, end: null, ...kwargs };
    const m = SEQ_SHORTCUT.exec(term);
    if (m) {
      if (m[2] !== undefined) opts.start = m[2];
      opts.end = m[3];
      if (m[5] !== undefined) opts.stride = m[5];
      if (m[7] !== undefined) opts.format = m[7];
    } else {
      const kv = parseKv(term);
      const unknown = Object.keys(kv).filter((k) => !['start', 'end', 'stride', 'count', 'format'].includes(k));
      if (unknown.length > 0) throw new ExprError(`unrecognized arguments to with_sequence: [${unknown.map((k) => `'${k}'`).join(', ')}]`);
      Object.assign(opts, kv);
    }
    const start = seqInt(opts.start, 'start');
    const stride = seqInt(opts.stride, 'stride');
    const format = text(opts.format);
    let end: number;
    if (opts.count === null && opts.end === null) throw new ExprError('must specify count or end in with_sequence');
    if (opts.count !== null && opts.end !== null) throw new ExprError("can't specify both count and end in with_sequence");
    if (opts.count !== null) {
      const count = seqInt(opts.count, 'count');
      if (count === 0) continue;
      end = start + count * stride - 1;
    } else end = seqInt(opts.end, 'end');
    if (stride > 0 && end < start) throw new ExprError('to count backwards make stride negative');
    if (stride < 0 && end > start) throw new ExprError("to count forward don't make stride negative");
    if (stride === 0) continue;
    if ((format.match(/%/g) ?? []).length !== 1) throw new ExprError(`bad formatting string: ${format}`);
    const adjust = stride >= 0 ? 1 : -1;
    for (let i = start; stride > 0 ? i < end + adjust : i > end + adjust; i += stride) {
      try {
        out.push(percentFormat(format, [i]));
      } catch {
        throw new ExprError(`problem formatting ${i} with '${format}'`);
      }
      if (out.length > 1_000_000) throw new ExprError('with_sequence: more than 1,000,000 items');
    }
  }
  return out;
}
