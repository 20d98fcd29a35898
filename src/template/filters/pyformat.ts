/**
 * Python's printf-style `%` formatting (Jinja's `format` filter: `'%s-%03d' | format(a, b)`), and
 * the pieces of `pprint.pformat` and `textwrap.wrap` that Jinja's `pprint`/`wordwrap` use.
 */
import { ExprError, isMap, isNumber, num, typeName } from '../values.js';
import { repr, strRepr, text } from './def.js';
import { toExponentialEven, toFixedEven, truncFloat } from './pynum.js';
import { isSpace } from './pytext.js';

function expText(x: number, prec: number, upper: boolean): string {
  const s = toExponentialEven(x, Math.min(prec, 100));
  const [m = '', e = '0'] = s.split('e');
  const en = Number(e);
  const out = `${m}e${en < 0 ? '-' : '+'}${String(Math.abs(en)).padStart(2, '0')}`;
  return upper ? out.toUpperCase() : out;
}

function fixedText(x: number, prec: number): string {
  if (Math.abs(x) < 1e21) return toFixedEven(x, Math.min(prec, 100));
  return BigInt(Math.round(x)).toString() + (prec > 0 ? `.${'0'.repeat(prec)}` : '');
}

function generalText(x: number, precIn: number, alt: boolean, upper: boolean): string {
  const p = precIn === 0 ? 1 : precIn;
  if (x === 0) return alt ? `0.${'0'.repeat(p - 1)}` : '0';
  const exp = Number(x.toExponential(p - 1).split('e')[1]);
  let out = exp >= -4 && exp < p ? fixedText(x, p - 1 - exp) : expText(x, p - 1, upper);
  if (!alt) {
    out = out.replace(/(\.\d*?)0+(e|E|$)/, '$1$2').replace(/\.(e|E|$)/, '$1');
  }
  return out;
}

function special(x: number, upper: boolean): string | null {
  if (Number.isNaN(x)) return upper ? 'NAN' : 'nan';
  if (!Number.isFinite(x)) return (x > 0 ? 'inf' : '-inf')[upper ? 'toUpperCase' : 'toString']();
  return null;
}

function asInt(conv: string, v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (conv === 'd' || conv === 'i' || conv === 'u') {
    if (isNumber(v)) return truncFloat(num(v));
    throw new ExprError(`%${conv} format: a real number is required, not ${typeName(v)}`);
  }
  throw new ExprError(`%${conv} format: an integer is required, not ${typeName(v)}`);
}

function asFloat(v: unknown): number {
  if (isNumber(v) || typeof v === 'boolean') return num(v);
  throw new ExprError(`must be real number, not ${typeName(v)}`);
}

/** Python's `fmt % args` (`args` a list of positional values, or a dict for `%(name)s`). */
export function percentFormat(fmt: string, args: readonly unknown[] | Record<string, unknown>): string {
  const mapping = isMap(args) ? args : null;
  const list = Array.isArray(args) ? args : [];
  let next = 0;
  const take = (): unknown => {
    if (mapping) throw new ExprError('format requires a mapping');
    if (next >= list.length) throw new ExprError('not enough arguments for format string');
    return list[next++];
  };
  const re = /%(?:\(([^)]*)\))?([-#0 +]*)(\*|\d+)?(?:\.(\*|\d+))?[hlL]?(.?)/gs;
  let out = '';
  let last = 0;
  for (let m = re.exec(fmt); m; m = re.exec(fmt)) {
    out += fmt.slice(last, m.index);
    last = re.lastIndex;
    const [, key, flags = '', widthText, precText, conv = ''] = m;
    if (conv === '%' && key === undefined && !flags && !widthText && !precText) {
      out += '%';
      continue;
    }
    if (conv === '') throw new ExprError('incomplete format');
    let value: unknown;
    const width = widthText === '*' ? asInt('*', take()) : widthText ? Number(widthText) : 0;
    const prec = precText === '*' ? asInt('*', take()) : precText !== undefined ? Number(precText) : null;
    if (key !== undefined) {
      if (!mapping) throw new ExprError('format requires a mapping');
      if (!Object.prototype.hasOwnProperty.call(mapping, key)) throw new ExprError(`'${key}'`);
      value = mapping[key];
    } else if (conv !== '%') value = take();
    let body: string;
    let sign = '';
    const numeric = 'diuoxXeEfFgGc'.includes(conv) && conv !== 'c';
    switch (conv) {
      case 's':
        body = text(value);
        break;
      case 'r':
      case 'a':
        body = typeof value === 'string' ? strRepr(value) : repr(value);
        break;
      case 'c':
        if (typeof value === 'string') {
          if ([...value].length !== 1) throw new ExprError('%c requires an int or a unicode character, not a string of length ' + [...value].length);
          body = value;
        } else body = String.fromCodePoint(asInt('c', value));
        break;
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        const n = typeof value === 'bigint' ? value : asInt(conv, value);
        const base = conv === 'o' ? 8 : conv === 'x' || conv === 'X' ? 16 : 10;
        body = (n < 0 ? -n : n).toString(base);
        if (conv === 'X') body = body.toUpperCase();
        if (prec !== null) body = body.padStart(prec, '0');
        if (flags.includes('#') && base !== 10) body = (conv === 'o' ? '0o' : conv === 'x' ? '0x' : '0X') + body;
        sign = n < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        const x = asFloat(value);
        const upper = conv === 'E' || conv === 'F' || conv === 'G';
        const p = prec ?? 6;
        const ax = Math.abs(x);
        body =
          special(ax, upper) ??
          (conv === 'e' || conv === 'E' ? expText(ax, p, upper) : conv === 'f' || conv === 'F' ? fixedText(ax, p) : generalText(ax, p, flags.includes('#'), upper));
        if (flags.includes('#') && (conv === 'f' || conv === 'F') && p === 0) body += '.';
        sign = x < 0 || Object.is(x, -0) ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
        break;
      }
      default:
        throw new ExprError(`unsupported format character '${conv}' (0x${(conv.codePointAt(0) ?? 0).toString(16)}) at index ${m.index + m[0].length - 1}`);
    }
    if ((conv === 's' || conv === 'r' || conv === 'a') && prec !== null) body = [...body].slice(0, prec).join('');
    const len = [...(sign + body)].length;
    if (width > len) {
      if (flags.includes('-')) out += sign + body + ' '.repeat(width - len);
      else if (flags.includes('0') && numeric) {
        const prefix = /^0[xXo]/.test(body) ? body.slice(0, 2) : '';
        out += sign + prefix + '0'.repeat(width - len) + body.slice(prefix.length);
      } else out += ' '.repeat(width - len) + sign + body;
    } else out += sign + body;
  }
  out += fmt.slice(last);
  if (!mapping && next < list.length) throw new ExprError('not all arguments converted during string formatting');
  return out;
}

/** `pprint.pformat(value)` as Jinja's `pprint` shows Ansible's values: their `repr`, long strings split. */
export function pformat(value: unknown): string {
  const rep = repr(value);
  if (typeof value !== 'string' || [...rep].length <= 80 || value.length === 0) return rep;
  const width = 80;
  const indent = 1;
  const allowance = 1;
  const chunks: string[] = [];
  const lines = value.split(/(?<=\n)/);
  let maxWidth1 = width - indent;
  const maxWidth = width - indent;
  let lastRep = rep;
  lines.forEach((line, i) => {
    lastRep = strRepr(line);
    if (i === lines.length - 1) maxWidth1 -= allowance;
    if ([...lastRep].length <= maxWidth1) {
      chunks.push(lastRep);
      return;
    }
    const parts = line.match(/\S*\s*/g) ?? [];
    if (parts[parts.length - 1] === '') parts.pop();
    let maxWidth2 = maxWidth;
    let current = '';
    parts.forEach((part, j) => {
      const candidate = current + part;
      if (j === parts.length - 1 && i === lines.length - 1) maxWidth2 -= allowance;
      if ([...strRepr(candidate)].length > maxWidth2) {
        if (current) chunks.push(strRepr(current));
        current = part;
      } else current = candidate;
    });
    if (current) chunks.push(strRepr(current));
  });
  if (chunks.length === 1) return lastRep;
  return `(${chunks.join(`\n${' '.repeat(indent)}`)})`;
}

/** `textwrap.wrap(text, width, expand_tabs=False, replace_whitespace=False, …)` (Jinja's `wordwrap`). */
export function textwrap(textIn: string, width: number, breakLongWords: boolean, breakOnHyphens: boolean): string[] {
  if (width <= 0) throw new ExprError(`invalid width ${width} (must be > 0)`);
  // chunks: runs of whitespace, and words (split after hyphens between letters when asked)
  const raw = textIn.split(/(\s+)/).filter((c) => c !== '');
  const chunks: string[] = [];
  for (const c of raw) {
    if (!breakOnHyphens || isSpace(c[0] ?? '')) chunks.push(c);
    else chunks.push(...c.split(/(?<=[^\W\d_]-)(?=[^\W\d_])/u).filter((x) => x !== ''));
  }
  chunks.reverse();
  const lines: string[] = [];
  const len = (s: string): number => [...s].length;
  while (chunks.length > 0) {
    const cur: string[] = [];
    let curLen = 0;
    if (lines.length > 0 && (chunks[chunks.length - 1] ?? '').trim() === '') chunks.pop();
    while (chunks.length > 0) {
      const l = len(chunks[chunks.length - 1] ?? '');
      if (curLen + l <= width) {
        cur.push(chunks.pop() ?? '');
        curLen += l;
      } else break;
    }
    if (chunks.length > 0 && len(chunks[chunks.length - 1] ?? '') > width) {
      const spaceLeft = width < 1 ? 1 : width - curLen;
      const top = chunks[chunks.length - 1] ?? '';
      if (breakLongWords) {
        let end = spaceLeft;
        if (breakOnHyphens && len(top) > spaceLeft) {
          const hyphen = [...top].slice(0, spaceLeft).join('').lastIndexOf('-');
          if (hyphen > 0 && [...top].slice(0, hyphen).some((c) => c !== '-')) end = hyphen + 1;
        }
        cur.push([...top].slice(0, end).join(''));
        chunks[chunks.length - 1] = [...top].slice(end).join('');
      } else if (cur.length === 0) cur.push(chunks.pop() ?? '');
    }
    if (cur.length > 0 && (cur[cur.length - 1] ?? '').trim() === '') cur.pop();
    if (cur.length > 0) lines.push(cur.join(''));
  }
  return lines;
}
