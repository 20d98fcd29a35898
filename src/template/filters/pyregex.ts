/**
 * Python's `re` module over JavaScript's RegExp: a Python pattern is translated to an equivalent
 * JavaScript one (named groups `(?P<n>…)`, `(?P=n)`, inline flags `(?imsx)`, `\A`, `\Z`, Python's
 * `$`, `.` and Unicode `\d \w \s \b`, literal `{`, Python's escapes), and `sub`/`search`/`match`/
 * `findall` keep Python's results (`None`, groups, tuples as lists, `\1`/`\g<name>` templates).
 */
import { ExprError } from '../values.js';

/** Python's `re.I` / `re.M` / `re.S` / `re.X` as booleans. */
export interface PyFlags {
  ignorecase?: boolean;
  multiline?: boolean;
  dotall?: boolean;
  verbose?: boolean;
  ascii?: boolean;
}

/** A compiled Python pattern. */
export interface PyRegex {
  /** The pattern as written (Python syntax). */
  readonly source: string;
  /** The translated JavaScript expression (global; use `lastIndex`). */
  readonly re: RegExp;
  /** Number of capturing groups. */
  readonly groups: number;
  /** Group names → numbers. */
  readonly names: ReadonlyMap<string, number>;
}

const WORD = '\\p{L}\\p{N}_';
const SPACE_CLASS = ' \\t\\n\\r\\f\\v\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const SYNTAX = new Set([...'^$\\.*+?()[]{}|/']);

function fail(pattern: string, why: string, pos?: number): never {
  throw new ExprError(`${why}${pos === undefined ? '' : ` at position ${pos}`}`, undefined, `in the regular expression ${JSON.stringify(pattern)} (Python's re syntax)`);
}

function hex(c: number): string {
  return c <= 0xffff ? `\\u${c.toString(16).padStart(4, '0')}` : `\\u{${c.toString(16)}}`;
}

/** A literal character, escaped for use in a JavaScript (u-mode) pattern, in or out of a class. */
function lit(ch: string, inClass: boolean): string {
  if (SYNTAX.has(ch) || (inClass && ch === '-')) return `\\${ch}`;
  const c = ch.codePointAt(0) ?? 0;
  if (c < 0x20 || c === 0x7f) return hex(c);
  return ch;
}

interface Scan {
  readonly p: string;
  i: number;
  groups: number;
  readonly names: Map<string, number>;
  readonly flags: PyFlags;
}

/** Translate one escape sequence starting at `s.i` (the backslash). Returns JS source. */
function escape(s: Scan, inClass: boolean): string {
  const { p } = s;
  const start = s.i;
  s.i++;
  const ch = p[s.i];
  if (ch === undefined) fail(p, 'bad escape (end of pattern)', start);
  s.i++;
  const ascii = s.flags.ascii === true;
  switch (ch) {
    case 'd':
      return ascii ? (inClass ? '0-9' : '[0-9]') : '\\p{Nd}';
    case 'D':
      return ascii ? (inClass ? '\\D' : '[^0-9]') : '\\P{Nd}';
    case 'w':
      return ascii ? '\\w' : inClass ? WORD : `[${WORD}]`;
    case 'W':
      return ascii ? '\\W' : inClass ? '\\W' : `[^${WORD}]`;
    case 's':
      return inClass ? SPACE_CLASS : `[${SPACE_CLASS}]`;
    case 'S':
      return inClass ? '\\S' : `[^${SPACE_CLASS}]`;
    case 'b':
      if (inClass) return '\\x08';
      return ascii ? '\\b' : `(?:(?<=[${WORD}])(?![${WORD}])|(?<![${WORD}])(?=[${WORD}]))`;
    case 'B':
      if (inClass) fail(p, 'bad escape \\B', start);
      return ascii ? '\\B' : `(?:(?<=[${WORD}])(?=[${WORD}])|(?<![${WORD}])(?![${WORD}]))`;
    case 'A':
      if (inClass) fail(p, 'bad escape \\A', start);
      return '(?<![\\s\\S])';
    case 'Z':
      if (inClass) fail(p, 'bad escape \\Z', start);
      return '(?![\\s\\S])';
    case 'a':
      return '\\x07';
    case 'f':
      return '\\f';
    case 'n':
      return '\\n';
    case 'r':
      return '\\r';
    case 't':
      return '\\t';
    case 'v':
      return '\\v';
    case 'x': {
      const m = /^[0-9a-fA-F]{2}/.exec(p.slice(s.i));
      if (!m) fail(p, `incomplete escape \\x${p.slice(s.i, s.i + 2)}`, start);
      s.i += 2;
      return hex(parseInt(m[0], 16));
    }
    case 'u':
    case 'U': {
      const n = ch === 'u' ? 4 : 8;
      const m = new RegExp(`^[0-9a-fA-F]{${n}}`).exec(p.slice(s.i));
      if (!m) fail(p, `incomplete escape \\${ch}${p.slice(s.i, s.i + n)}`, start);
      s.i += n;
      const c = parseInt(m[0], 16);
      if (c > 0x10ffff) fail(p, `bad escape \\${ch}${m[0]}`, start);
      return hex(c);
    }
    case '0': {
      const m = /^[0-7]{0,2}/.exec(p.slice(s.i));
      const digits = m?.[0] ?? '';
      s.i += digits.length;
      return hex(parseInt(`0${digits}`, 8));
    }
    default:
      break;
  }
  if (/[1-9]/.test(ch)) {
    // octal escape of three digits, or a back reference (one or two digits)
    const m = /^[0-9]{0,2}/.exec(p.slice(s.i));
    const rest = m?.[0] ?? '';
    if (rest.length === 2 && /^[0-7]$/.test(ch) && /^[0-7]{2}$/.test(rest)) {
      s.i += 2;
      return hex(parseInt(ch + rest, 8));
    }
    if (inClass) fail(p, `bad escape \\${ch}`, start);
    const num = rest.length > 0 && /[0-9]/.test(rest[0] ?? '') ? Number(ch + (rest[0] ?? '')) : Number(ch);
    s.i += String(num).length - 1;
    if (num > s.groups) fail(p, `invalid group reference ${num}`, start + 1);
    return `(?:\\${num})`;
  }
  if (/[A-Za-z]/.test(ch)) fail(p, `bad escape \\${ch}`, start);
  return lit(ch, inClass);
}

/** Translate a character class starting at `s.i` (the `[`). */
function charClass(s: Scan): string {
  const { p } = s;
  const start = s.i;
  s.i++;
  let out = '[';
  if (p[s.i] === '^') {
    out += '^';
    s.i++;
  }
  let first = true;
  let items = 0;
  while (true) {
    const ch = p[s.i];
    if (ch === undefined) fail(p, 'unterminated character set', start);
    if (ch === ']' && !first) {
      s.i++;
      break;
    }
    first = false;
    items++;
    if (ch === '\\') {
      out += escape(s, true);
      continue;
    }
    if (ch === '[') {
      out += '\\[';
      s.i++;
      continue;
    }
    if (ch === ']') {
      out += '\\]';
      s.i++;
      continue;
    }
    if (ch === '-') {
      // a range dash stays; a leading/trailing one is literal
      out += items === 1 || p[s.i + 1] === ']' ? '\\-' : '-';
      s.i++;
      continue;
    }
    const cp = p.codePointAt(s.i) ?? 0;
    const c = String.fromCodePoint(cp);
    out += lit(c, false);
    s.i += c.length;
  }
  return `${out}]`;
}

/** A translated `(…` construct: its JS text and whether it opens a group closed later by `)`. */
interface Open {
  readonly text: string;
  readonly opens: boolean;
}

/** Parse the construct at `s.i` (the `(`): a group opening, or a whole construct (flags, comment, `(?P=name)`). */
function groupOpen(s: Scan): Open {
  const open = (text: string): Open => ({ text, opens: true });
  const whole = (text: string): Open => ({ text, opens: false });
  const { p } = s;
  const start = s.i;
  s.i++;
  if (p[s.i] !== '?') {
    s.groups++;
    return open('(');
  }
  s.i++;
  const c = p[s.i];
  if (c === 'P') {
    s.i++;
    if (p[s.i] === '<') {
      const end = p.indexOf('>', s.i);
      if (end < 0) fail(p, 'missing >, unterminated name', s.i + 1);
      const name = p.slice(s.i + 1, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(p, `bad character in group name '${name}'`, s.i + 1);
      if (s.names.has(name)) fail(p, `redefinition of group name '${name}' as group ${s.groups + 1}; was group ${s.names.get(name)}`, s.i + 1);
      s.groups++;
      s.names.set(name, s.groups);
      s.i = end + 1;
      return open(`(?<${name}>`);
    }
    if (p[s.i] === '=') {
      const end = p.indexOf(')', s.i);
      if (end < 0) fail(p, 'missing ), unterminated name', s.i + 1);
      const name = p.slice(s.i + 1, end);
      if (!s.names.has(name)) fail(p, `unknown group name '${name}'`, s.i + 1);
      s.i = end + 1;
      return whole(`(?:\\k<${name}>)`);
    }
    fail(p, `unknown extension ?P${p[s.i] ?? ''}`, start + 1);
  }
  if (c === ':' || c === '=' || c === '!') {
    s.i++;
    return open(`(?${c}`);
  }
  if (c === '<') {
    const d = p[s.i + 1];
    if (d === '=' || d === '!') {
      s.i += 2;
      return open(`(?<${d}`);
    }
    fail(p, `unknown extension ?<${d ?? ''}`, start + 1);
  }
  if (c === '#') {
    const end = p.indexOf(')', s.i);
    if (end < 0) fail(p, 'missing ), unterminated comment', start);
    s.i = end + 1;
    return whole('');
  }
  if (c === '>') fail(p, 'atomic groups (?>…) are not supported by kplay', start);
  if (c === '(') fail(p, 'conditional groups (?(…)…) are not supported by kplay', start);
  // inline flags: (?aiLmsux) global, or (?i:…) / (?-i:…) scoped
  const m = /^([aiLmsux]*)(?:-([imsx]*))?([:)])/.exec(p.slice(s.i));
  if (!m) fail(p, `unknown extension ?${c ?? ''}`, start + 1);
  const [all, on = '', off = '', end] = m;
  if (end === ':') fail(p, `scoped inline flags (?${on}${off ? `-${off}` : ''}:…) are not supported by kplay: use a global flag at the start, or the filter's ignorecase/multiline arguments`, start);
  if (start !== 0 && !isAllFlagsBefore(p, start)) fail(p, 'global flags not at the start of the expression', start);
  s.i += all.length;
  return whole('');
}

function isAllFlagsBefore(p: string, pos: number): boolean {
  return /^(?:\(\?[aiLmsux]+\))*$/.test(p.slice(0, pos));
}

/** Global inline flags written at the start of a pattern (`(?i)`, `(?ms)`). */
function leadingFlags(p: string): PyFlags {
  const f: PyFlags = {};
  const lead = /^(?:\(\?[aiLmsux]+\))+/.exec(p)?.[0] ?? '';
  for (const m of lead.matchAll(/\(\?([aiLmsux]+)\)/g)) {
    for (const c of m[1] ?? '') {
      if (c === 'i') f.ignorecase = true;
      if (c === 'm') f.multiline = true;
      if (c === 's') f.dotall = true;
      if (c === 'x') f.verbose = true;
      if (c === 'a') f.ascii = true;
    }
  }
  return f;
}

/** Quantifier `{…}` at `s.i`: translated, or null when Python reads the brace literally. */
function braces(s: Scan): string | null {
  const m = /^\{(\d*)(?:(,)(\d*))?\}/.exec(s.p.slice(s.i));
  if (!m) return null;
  const [all, lo = '', comma, hi = ''] = m;
  if (!comma && lo === '') return null;
  if (comma && lo === '' && hi === '') return null;
  s.i += all.length;
  if (comma && lo !== '' && hi !== '' && Number(hi) < Number(lo)) fail(s.p, 'min repeat greater than max repeat', s.i - all.length);
  return comma ? `{${lo || '0'},${hi}}` : `{${lo}}`;
}

const cache = new Map<string, PyRegex>();

/** Compile a Python pattern with flags into a {@link PyRegex} (cached). */
export function compile(pattern: string, flags: PyFlags = {}): PyRegex {
  const key = `${flags.ignorecase ? 'i' : ''}${flags.multiline ? 'm' : ''}${flags.dotall ? 's' : ''}${flags.verbose ? 'x' : ''}${flags.ascii ? 'a' : ''}:${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const inline = leadingFlags(pattern);
  const f: PyFlags = {
    ignorecase: flags.ignorecase === true || inline.ignorecase === true,
    multiline: flags.multiline === true || inline.multiline === true,
    dotall: flags.dotall === true || inline.dotall === true,
    verbose: flags.verbose === true || inline.verbose === true,
    ascii: flags.ascii === true || inline.ascii === true,
  };
  const s: Scan = { p: pattern, i: 0, groups: 0, names: new Map(), flags: f };
  let out = '';
  let depth = 0;
  // whether the previous token can take a quantifier (Python: "nothing to repeat" otherwise)
  while (s.i < pattern.length) {
    const ch = pattern[s.i] ?? '';
    if (f.verbose) {
      if (isVerboseSpace(ch)) {
        s.i++;
        continue;
      }
      if (ch === '#') {
        const nl = pattern.indexOf('\n', s.i);
        s.i = nl < 0 ? pattern.length : nl + 1;
        continue;
      }
    }
    switch (ch) {
      case '\\':
        out += escape(s, false);
        break;
      case '[':
        out += charClass(s);
        break;
      case '(': {
        const open = groupOpen(s);
        out += open.text;
        if (open.opens) depth++;
        break;
      }
      case ')':
        if (depth === 0) fail(pattern, 'unbalanced parenthesis', s.i);
        depth--;
        out += ')';
        s.i++;
        break;
      case '.':
        out += f.dotall ? '[\\s\\S]' : '[^\\n]';
        s.i++;
        break;
      case '^':
        out += f.multiline ? '(?<![^\\n])' : '(?<![\\s\\S])';
        s.i++;
        break;
      case '$':
        out += f.multiline ? '(?=\\n|(?![\\s\\S]))' : '(?=\\n?(?![\\s\\S]))';
        s.i++;
        break;
      case '{': {
        const q = braces(s);
        if (q === null) {
          out += '\\{';
          s.i++;
        } else out += q;
        break;
      }
      case '}':
        out += '\\}';
        s.i++;
        break;
      case '|':
        out += '|';
        s.i++;
        break;
      case '*':
      case '+':
      case '?': {
        out += ch;
        s.i++;
        if (pattern[s.i] === '+') fail(pattern, 'possessive quantifiers are not supported by kplay', s.i);
        break;
      }
      default: {
        const cp = pattern.codePointAt(s.i) ?? 0;
        const c = String.fromCodePoint(cp);
        out += ch === '/' ? '\\/' : lit(c, false);
        s.i += c.length;
      }
    }
  }
  if (depth > 0) fail(pattern, 'missing ), unterminated subpattern', pattern.lastIndexOf('('));
  let re: RegExp;
  try {
    re = new RegExp(out, `gu${f.ignorecase ? 'i' : ''}`);
  } catch (e) {
    fail(pattern, e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e));
  }
  const compiled: PyRegex = { source: pattern, re, groups: s.groups, names: s.names };
  if (cache.size > 500) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

function isVerboseSpace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f' || ch === '\v';
}

/** A match: `group(i)` is null for a group that did not take part. */
export interface PyMatch {
  readonly m: RegExpExecArray;
  readonly rx: PyRegex;
}

function execAt(rx: PyRegex, s: string, from: number, sticky: boolean): RegExpExecArray | null {
  const re = sticky ? new RegExp(rx.re.source, `${rx.re.flags.replace('g', '')}y`) : rx.re;
  re.lastIndex = from;
  return re.exec(s);
}

/** `re.search(pattern, s)`. */
export function search(rx: PyRegex, s: string): PyMatch | null {
  const m = execAt(rx, s, 0, false);
  return m ? { m, rx } : null;
}

/** `re.match(pattern, s)`: anchored at the start. */
export function match(rx: PyRegex, s: string): PyMatch | null {
  const m = execAt(rx, s, 0, true);
  return m ? { m, rx } : null;
}

/** `re.fullmatch(pattern, s)`. */
export function fullmatch(rx: PyRegex, s: string): PyMatch | null {
  const whole = compileWrapped(rx);
  const m = execAt(whole, s, 0, true);
  return m ? { m, rx } : null;
}

function compileWrapped(rx: PyRegex): PyRegex {
  return { ...rx, re: new RegExp(`(?:${rx.re.source})(?![\\s\\S])`, rx.re.flags) };
}

/** `m.group(g)` by number or name: the text, or null when the group did not take part. */
export function group(pm: PyMatch, g: number | string): string | null {
  let n: number;
  if (typeof g === 'string' && !/^\d+$/.test(g)) {
    const found = pm.rx.names.get(g);
    if (found === undefined) throw new ExprError('no such group');
    n = found;
  } else n = Number(g);
  if (n < 0 || n > pm.rx.groups) throw new ExprError('no such group');
  const v = pm.m[n];
  return v === undefined ? null : v;
}

/** `re.findall`: whole matches, the one group, or a list (tuple) of groups per match. */
export function findall(rx: PyRegex, s: string): unknown[] {
  const out: unknown[] = [];
  rx.re.lastIndex = 0;
  for (const m of s.matchAll(rx.re)) {
    if (rx.groups === 0) out.push(m[0]);
    else if (rx.groups === 1) out.push(m[1] ?? '');
    else out.push(Array.from({ length: rx.groups }, (_, i) => m[i + 1] ?? ''));
  }
  return out;
}

type TemplatePart = string | number;

/** Parse a Python replacement template (`\1`, `\g<name>`, `\n`, …) into literal text and group numbers. */
function parseTemplate(rx: PyRegex, repl: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = '';
  const flush = (): void => {
    if (text) parts.push(text);
    text = '';
  };
  for (let i = 0; i < repl.length; i++) {
    const ch = repl[i] ?? '';
    if (ch !== '\\') {
      text += ch;
      continue;
    }
    const n = repl[i + 1];
    if (n === undefined) throw new ExprError('bad escape (end of pattern) in the replacement');
    if (n === 'g') {
      const m = /^<([^>]*)>/.exec(repl.slice(i + 2));
      if (!m) throw new ExprError('missing <, or missing >, unterminated name in the replacement');
      const name = m[1] ?? '';
      let num: number;
      if (/^\d+$/.test(name)) num = Number(name);
      else {
        const found = rx.names.get(name);
        if (found === undefined) throw new ExprError(`unknown group name '${name}'`);
        num = found;
      }
      if (num > rx.groups) throw new ExprError(`invalid group reference ${num}`);
      flush();
      parts.push(num);
      i += 1 + m[0].length;
      continue;
    }
    if (n === '0') {
      const m = /^[0-7]{1,3}/.exec(repl.slice(i + 1));
      text += String.fromCharCode(parseInt(m?.[0] ?? '0', 8));
      i += m?.[0].length ?? 1;
      continue;
    }
    if (/[1-9]/.test(n)) {
      const m = /^[0-9]{1,3}/.exec(repl.slice(i + 1)) ?? ['0'];
      const d = m[0];
      if (d.length === 3 && /^[0-7]{3}$/.test(d)) {
        text += String.fromCharCode(parseInt(d, 8));
        i += 3;
        continue;
      }
      const num = Number(d.slice(0, 2).length === 2 && /\d\d/.test(d.slice(0, 2)) ? d.slice(0, 2) : d.slice(0, 1));
      if (num > rx.groups) throw new ExprError(`invalid group reference ${num}`);
      flush();
      parts.push(num);
      i += String(num).length;
      continue;
    }
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\' };
    const known = simple[n];
    if (known !== undefined) {
      text += known;
      i++;
      continue;
    }
    if (/[A-Za-z]/.test(n)) throw new ExprError(`bad escape \\${n}`);
    text += `\\${n}`;
    i++;
  }
  flush();
  return parts;
}

/** `re.subn(pattern, repl, s, count)`: the new text and the number of replacements. */
export function subn(rx: PyRegex, repl: string, s: string, count = 0): [string, number] {
  const parts = parseTemplate(rx, repl);
  let n = 0;
  const re = new RegExp(rx.re.source, rx.re.flags);
  const out = s.replace(re, (...args: unknown[]) => {
    if (count > 0 && n >= count) return String(args[0]);
    n++;
    return parts.map((p) => (typeof p === 'number' ? (typeof args[p] === 'string' ? (args[p] as string) : '') : p)).join('');
  });
  return [out, n];
}

/** Python's `re.escape`. */
export function reEscape(s: string): string {
  let out = '';
  for (const ch of s) out += '()[]{}?*+-|^$\\.&~# \t\n\r\v\f'.includes(ch) ? `\\${ch}` : ch;
  return out;
}
