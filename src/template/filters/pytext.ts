/**
 * Python's `str` methods where JavaScript's differ: whitespace as `str.isspace()` sees it,
 * `split()`/`strip()`/`splitlines()`/`capitalize()`/`center()`/`islower()`/`isupper()`.
 */
import { ExprError } from '../values.js';

/** Characters Python's `str.isspace()` accepts (and `str.split()`/`strip()` use by default). */
const SPACE = new Set([
  '\t', '\n', '\v', '\f', '\r', '\x1c', '\x1d', '\x1e', '\x1f', ' ', '\x85', '\xa0', '\u1680',
  '\u2000', '\u2001', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007', '\u2008', '\u2009', '\u200a',
  '\u2028', '\u2029', '\u202f', '\u205f', '\u3000',
]);

/** Python's `c.isspace()` for one character. */
export function isSpace(c: string): boolean {
  return SPACE.has(c);
}

function stripSet(chars: string | null | undefined): (c: string) => boolean {
  if (chars === null || chars === undefined) return isSpace;
  const set = new Set([...chars]);
  return (c) => set.has(c);
}

/** Python's `s.strip(chars)`. */
export function strip(s: string, chars?: string | null): string {
  return rstrip(lstrip(s, chars), chars);
}

/** Python's `s.lstrip(chars)`. */
export function lstrip(s: string, chars?: string | null): string {
  const test = stripSet(chars);
  const cs = [...s];
  let i = 0;
  while (i < cs.length && test(cs[i] ?? '')) i++;
  return cs.slice(i).join('');
}

/** Python's `s.rstrip(chars)`. */
export function rstrip(s: string, chars?: string | null): string {
  const test = stripSet(chars);
  const cs = [...s];
  let j = cs.length;
  while (j > 0 && test(cs[j - 1] ?? '')) j--;
  return cs.slice(0, j).join('');
}

/** Python's `s.split(sep, maxsplit)`: on runs of whitespace when `sep` is None. */
export function split(s: string, sep: string | null = null, maxsplit = -1): string[] {
  if (sep === null) {
    const out: string[] = [];
    const cs = [...s];
    let i = 0;
    while (i < cs.length) {
      while (i < cs.length && isSpace(cs[i] ?? '')) i++;
      if (i >= cs.length) break;
      if (maxsplit >= 0 && out.length === maxsplit) {
        out.push(rstrip(cs.slice(i).join('')));
        return out;
      }
      let j = i;
      while (j < cs.length && !isSpace(cs[j] ?? '')) j++;
      out.push(cs.slice(i, j).join(''));
      i = j;
    }
    return out;
  }
  if (sep === '') throw new ExprError('empty separator');
  const out: string[] = [];
  let rest = s;
  while (maxsplit < 0 || out.length < maxsplit) {
    const at = rest.indexOf(sep);
    if (at < 0) break;
    out.push(rest.slice(0, at));
    rest = rest.slice(at + sep.length);
  }
  out.push(rest);
  return out;
}

/** Python's `s.rsplit(sep, maxsplit)`. */
export function rsplit(s: string, sep: string | null = null, maxsplit = -1): string[] {
  if (maxsplit < 0) return split(s, sep, -1);
  const rev = (x: string): string => [...x].reverse().join('');
  return split(rev(s), sep === null ? null : rev(sep), maxsplit).map(rev).reverse();
}

/** Line boundaries of Python's `str.splitlines()`. */
// eslint-disable-next-line no-control-regex -- Python's line boundaries include \x1c-\x1e
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Python's `s.splitlines(keepends)`. */
export function splitlines(s: string, keepends = false): string[] {
  const out: string[] = [];
  let rest = s;
  while (rest.length > 0) {
    const m = LINE_BREAK.exec(rest);
    if (!m) {
      out.push(rest);
      break;
    }
    out.push(rest.slice(0, keepends ? m.index + m[0].length : m.index));
    rest = rest.slice(m.index + m[0].length);
  }
  return out;
}

/** Python's `s.capitalize()`: the first character in title case, the rest lowercase. */
export function capitalize(s: string): string {
  const cs = [...s];
  if (cs.length === 0) return s;
  return (cs[0] ?? '').toUpperCase() + cs.slice(1).join('').toLowerCase();
}

/** Python's `s.center(width, fill)`. */
export function center(s: string, width: number, fill = ' '): string {
  const len = [...s].length;
  if (width <= len) return s;
  const marg = width - len;
  const left = Math.floor(marg / 2) + (marg & width & 1);
  return fill.repeat(left) + s + fill.repeat(marg - left);
}

function isCased(c: string): boolean {
  return c.toLowerCase() !== c.toUpperCase();
}

/** Python's `s.islower()`: some cased character and no uppercase one. */
export function isLower(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (!isCased(c)) continue;
    if (c !== c.toLowerCase()) return false;
    cased = true;
  }
  return cased;
}

/** Python's `s.isupper()`: some cased character and no lowercase one. */
export function isUpper(s: string): boolean {
  let cased = false;
  for (const c of s) {
    if (!isCased(c)) continue;
    if (c !== c.toUpperCase()) return false;
    cased = true;
  }
  return cased;
}

/** Python's `s.replace(old, new, count)` (count < 0: all). */
export function replace(s: string, old: string, rep: string, count = -1): string {
  if (count === 0) return s;
  if (old === '') {
    const cs = [...s];
    const out: string[] = [];
    let n = 0;
    for (let i = 0; i <= cs.length; i++) {
      if (count < 0 || n < count) {
        out.push(rep);
        n++;
      }
      if (i < cs.length) out.push(cs[i] ?? '');
    }
    return out.join('');
  }
  if (count < 0) return s.split(old).join(rep);
  const parts = split(s, old, count);
  return parts.join(rep);
}

/** Python's `len(s)`: code points, not UTF-16 units. */
export function pyLen(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
