/**
 * Python's numbers where JavaScript's differ: `repr()` of floats (`2.5e-05`), `int()`/`float()`
 * of strings (`'0x1A'` with base 0, `'1_000'`, `' 42 '`, `'inf'`), `round()` (half to even on the
 * exact binary value), `+` on numbers, strings and lists (`sum`).
 */
import { ExprError, PyFloat, bigOf, isFloat, isNumber, mkFloat, mkInt, num, typeName } from '../values.js';

/** Python's `repr(float)`: shortest round-trip digits, scientific below 1e-4 and from 1e16. */
export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mant = '0', expText = '0'] = n.toExponential().split('e');
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const sign = neg ? '-' : '';
  if (exp >= -4 && exp < 16) {
    if (exp >= digits.length - 1) return `${sign}${digits}${'0'.repeat(exp - digits.length + 1)}.0`;
    if (exp >= 0) return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
    return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** Python's `str()` of an int or float value. */
export function pyNumStr(v: number | PyFloat): string {
  if (v instanceof PyFloat) return pyFloatRepr(v.value);
  return Number.isInteger(v) ? String(v) : pyFloatRepr(v);
}

/** Unicode decimal digits (Python's `int()`/`float()` accept any script's) as ASCII digits. */
export function asciiDigits(s: string): string {
  return s.replace(/\p{Nd}/gu, (d) => {
    let cp = d.codePointAt(0) ?? 48;
    let zero = cp;
    while (zero > 0 && /\p{Nd}/u.test(String.fromCodePoint(zero - 1)) && cp - zero < 9) zero--;
    cp = (cp - zero) % 10;
    return String(cp);
  });
}

// eslint-disable-next-line no-control-regex -- Python's whitespace includes \x1c-\x1f
const SPACE = /^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/g;

/** Python's `int(text, base)` (a bigint beyond 2**53), or null where Python raises ValueError. */
export function parseIntPy(text: string, base = 10): number | bigint | null {
  let s = asciiDigits(text).replace(SPACE, '');
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  let b = base;
  const prefix = /^0([xob])/i.exec(s);
  if (prefix) {
    const pb = { x: 16, o: 8, b: 2 }[(prefix[1] ?? '').toLowerCase() as 'x' | 'o' | 'b'];
    if (b === 0 || b === pb) {
      b = pb;
      s = s.slice(2);
      if (s.startsWith('_')) s = s.slice(1);
    }
  }
  if (b === 0) {
    b = 10;
    if (/^0+[1-9]/.test(s.replace(/_/g, ''))) return null;
  }
  if (b < 2 || b > 36) throw new ExprError('int() base must be >= 2 and <= 36, or 0');
  if (s === '' || s.startsWith('_') || s.endsWith('_') || s.includes('__')) return null;
  const clean = s.replace(/_/g, '');
  let n = 0;
  let big: bigint | undefined;
  for (const ch of clean.toLowerCase()) {
    const d = /[0-9]/.test(ch) ? ch.charCodeAt(0) - 48 : /[a-z]/.test(ch) ? ch.charCodeAt(0) - 87 : 99;
    if (d >= b) return null;
    if (big === undefined && n * b + d > Number.MAX_SAFE_INTEGER) big = BigInt(n);
    if (big === undefined) n = n * b + d;
    else big = big * BigInt(b) + BigInt(d);
  }
  return big === undefined ? sign * n : mkInt(sign < 0 ? -big : big);
}

/** Python's `float(text)`, or null where Python raises ValueError. */
export function parseFloatPy(text: string): number | null {
  const s = asciiDigits(text).replace(SPACE, '');
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s);
  if (special) {
    const v = (special[2] ?? '').toLowerCase() === 'nan' ? NaN : Infinity;
    return special[1] === '-' ? -v : v;
  }
  if (!/^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/.test(s)) return null;
  return Number(s.replace(/_/g, ''));
}

/** Python's `a + b` for the values `sum` adds: numbers (bool as int), strings, lists. */
export function pyAdd(a: unknown, b: unknown): unknown {
  const an = isNumber(a) || typeof a === 'boolean';
  const bn = isNumber(b) || typeof b === 'boolean';
  if (an && bn) {
    const r = num(a) + num(b);
    if (isFloat(a) || isFloat(b)) return mkFloat(r);
    return Number.isSafeInteger(r) ? r : mkInt(bigOf(a) + bigOf(b));
  }
  if (typeof a === 'string' && typeof b === 'string') return a + b;
  if (Array.isArray(a) && Array.isArray(b)) return [...a, ...b];
  if (typeof a === 'string' || Array.isArray(a)) {
    throw new ExprError(`can only concatenate ${typeName(a)} (not "${typeName(b)}") to ${typeName(a)}`);
  }
  throw new ExprError(`unsupported operand type(s) for +: '${typeName(a)}' and '${typeName(b)}'`);
}

/** Round half to even at `ndigits` decimals on the exact binary value (Python's `round(x, n)` for floats). */
export function roundHalfEven(x: number, ndigits: number): number {
  if (!Number.isFinite(x)) return x;
  if (ndigits > 300) return x;
  if (ndigits < 0) {
    const p = 10 ** -ndigits;
    const q = x / p;
    let r = Math.round(q);
    if (Math.abs(q - Math.trunc(q)) === 0.5) r = 2 * Math.round(q / 2);
    return r * p;
  }
  const ax = Math.abs(x);
  if (ndigits > 100 || ax >= 1e21) return x;
  const exact = ax.toFixed(Math.min(100, ndigits + 30));
  const dot = exact.indexOf('.');
  const keep = exact.slice(0, dot + 1 + ndigits);
  const rest = exact.slice(dot + 1 + ndigits);
  let rounded: number;
  if (/^50*$/.test(rest)) {
    // a tie on the exact value: to even
    const lastDigit = Number(keep.replace('.', '').slice(-1));
    rounded = lastDigit % 2 === 0 ? Number(keep) : Number(ax.toFixed(ndigits));
  } else rounded = Number(ax.toFixed(ndigits));
  return x < 0 || Object.is(x, -0) ? -rounded : rounded;
}

/** Python's `int(x)` of a float: truncation, with Python's errors for NaN and infinities. */
export function truncFloat(x: number): number {
  if (Number.isNaN(x)) throw new ExprError('cannot convert float NaN to integer');
  if (!Number.isFinite(x)) throw new ExprError('cannot convert float infinity to integer');
  return Math.trunc(x) + 0;
}

/** `x.toExponential(p)` rounded half to even on the exact binary value (Python's `%.pe`). */
export function toExponentialEven(x: number, p: number): string {
  const exact = x.toPrecision(Math.min(100, p + 1 + 30));
  const [mant = '', exp = '0'] = Number(exact).toExponential(Math.min(100, p + 30)).split('e');
  const digits = mant.replace('-', '').replace('.', '');
  const rest = digits.slice(p + 1);
  if (/^50*$/.test(rest) && Number(digits[p] ?? '0') % 2 === 0) {
    const kept = digits.slice(0, p + 1);
    const m = kept.length > 1 ? `${kept[0]}.${kept.slice(1)}` : kept;
    return `${x < 0 ? '-' : ''}${m}e${Number(exp) < 0 ? '-' : '+'}${Math.abs(Number(exp))}`;
  }
  return x.toExponential(p);
}

/** `x.toFixed(p)` rounded half to even on the exact binary value (Python's `%.pf`). */
export function toFixedEven(x: number, p: number): string {
  if (Math.abs(x) >= 1e21) return x.toFixed(p);
  const r = roundHalfEven(x, p);
  return r.toFixed(p);
}
