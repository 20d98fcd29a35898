/**
 * Python's `fnmatch.fnmatchcase` as a RegExp — one translation of shell-style patterns for every
 * place kplay takes one: host patterns (`hosts:`, `--limit`; ansible-core compiles
 * `fnmatch.translate`), the `fileglob` lookup (Python's `glob`, one path segment at a time) and
 * the modules that take patterns (`find`, `setup`).
 *
 * A port of CPython 3.11's `fnmatch.translate`: `*`, `?`, `[seq]`, `[!seq]` over the whole name
 * (newlines, dots and slashes included); `[` without a closing `]` is a literal `[`; a `]` right
 * after `[` or `[!` belongs to the set; `[^x]` is the set of `^` and `x` (Python negates with `!`
 * only); reversed ranges (`[z-a]`) are dropped as Python drops them, so a set left empty never
 * matches and a negated one (`[!z-a]`) matches any one character. There is no escape character (`\` is literal).
 * Characters are code points (the RegExp has the `u` flag).
 */

/** A run of `*` (Python compresses consecutive stars into one). */
const STAR = Symbol('star');

/** Escape a code point for use outside a character class. */
function escapeChar(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** Escape text for use inside a character class (`\`, `]` and, unless it makes a range, `-`). */
function escapeInSet(s: string, hyphens: boolean): string {
  let out = s.replace(/\\/g, '\\\\').replace(/]/g, '\\]');
  if (hyphens) out = out.replace(/-/g, '\\-');
  return out;
}

/**
 * The body of the set `[...]` whose content (between `[` and `]`, code points) is `pat.slice(i, j)`,
 * as a RegExp fragment; Python's rules for `-` and empty ranges.
 */
function translateSet(pat: readonly string[], i: number, j: number): string {
  let stuff: string;
  if (!pat.slice(i, j).includes('-')) {
    stuff = escapeInSet(pat.slice(i, j).join(''), false);
  } else {
    const chunks: string[][] = [];
    let k = pat[i] === '!' ? i + 2 : i + 1;
    for (;;) {
      k = pat.indexOf('-', k);
      if (k < 0 || k >= j) break;
      chunks.push(pat.slice(i, k));
      i = k + 1;
      k = k + 3;
    }
    const last = pat.slice(i, j);
    if (last.length > 0) chunks.push(last);
    else chunks[chunks.length - 1]?.push('-');
    // Remove empty ranges (`z-a`): invalid in a RegExp, and Python drops them.
    for (let n = chunks.length - 1; n > 0; n--) {
      const prev = chunks[n - 1] ?? [];
      const cur = chunks[n] ?? [];
      const a = prev[prev.length - 1] ?? '';
      const b = cur[0] ?? '';
      if ((a.codePointAt(0) ?? 0) > (b.codePointAt(0) ?? 0)) {
        chunks[n - 1] = [...prev.slice(0, -1), ...cur.slice(1)];
        chunks.splice(n, 1);
      }
    }
    stuff = chunks.map((c) => escapeInSet(c.join(''), true)).join('-');
  }
  if (stuff === '') return '(?!)'; // an empty set never matches
  if (stuff === '!') return '.'; // a negated empty set matches any character
  if (stuff.startsWith('!')) return `[^${stuff.slice(1)}]`;
  if (stuff.startsWith('^') || stuff.startsWith('[')) return `[\\${stuff}]`;
  return `[${stuff}]`;
}

/**
 * The RegExp source (without anchors) of a shell pattern, as Python's `fnmatch.translate` builds
 * it. Like Python, an interior `*fixed` matches as little as it can, atomically (here a lookahead
 * and a back-reference), so patterns like `*a*a*a*b` cannot backtrack exponentially.
 */
export function fnmatchSource(glob: string): string {
  const pat = [...glob];
  const parts: (string | typeof STAR)[] = [];
  let i = 0;
  while (i < pat.length) {
    const c = pat[i] ?? '';
    i++;
    if (c === '*') {
      if (parts[parts.length - 1] !== STAR) parts.push(STAR);
    } else if (c === '?') parts.push('.');
    else if (c === '[') {
      let j = i;
      if (pat[j] === '!') j++;
      if (pat[j] === ']') j++;
      while (j < pat.length && pat[j] !== ']') j++;
      if (j >= pat.length) parts.push('\\[');
      else {
        parts.push(translateSet(pat, i, j));
        i = j + 1;
      }
    } else parts.push(escapeChar(c));
  }
  let out = '';
  let k = 0;
  while (k < parts.length && parts[k] !== STAR) out += parts[k++] as string;
  let group = 0;
  while (k < parts.length) {
    k++; // a STAR
    let fixed = '';
    while (k < parts.length && parts[k] !== STAR) fixed += parts[k++] as string;
    if (k === parts.length) out += `.*${fixed}`;
    else out += `(?=(.*?${fixed}))\\${++group}`;
  }
  return out;
}

/**
 * Python's `fnmatch.fnmatchcase(name, glob)` as an anchored RegExp (case-sensitive).
 * @example fnmatchRegex('ansible_*_mb').test('ansible_memtotal_mb') // true
 */
export function fnmatchRegex(glob: string): RegExp {
  return new RegExp(`^(?:${fnmatchSource(glob)})$`, 'su');
}
