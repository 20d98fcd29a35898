/** Python's `repr()` and `str()` of expression values (ints, floats, strings, lists, dicts, tuples), as Jinja2 prints them. */
import { ExprError, OMIT, PyFloat, PyObject, RANGES, Undef, UndefinedError, isMap } from './values.js';

/** Python's `repr()` of a float. */
export function floatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (n === Infinity) return 'inf';
  if (n === -Infinity) return '-inf';
  if (Object.is(n, -0)) return '-0.0';
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return `${n}.0`;
  const s = String(n);
  // JS: 1e+21, 1e-7 → Python: 1e+21, 1e-07
  const m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(s);
  if (m) return `${m[1]}e${m[2]}${(m[3] ?? '').padStart(2, '0')}`;
  if (Math.abs(n) >= 1e16) return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return s;
}

/** Python's `repr()` of a string (single quotes unless the text holds one and no double quote). */
export function strRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === q) out += `\\${q}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + q;
}

/** Python's `repr()` (lists and dicts show their items' reprs). */
export function pyRepr(v: unknown, depth = 0): string {
  if (depth > 100) return '...';
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v) && !RANGES.has(v)) {
    const items = v.filter((x) => x !== OMIT).map((x) => pyRepr(x, depth + 1));
    // a tuple prints as a list: ansible-core turns it into one when a template's value is finalized
    return `[${items.join(', ')}]`;
  }
  if (isMap(v)) return `{${Object.entries(v).filter(([, x]) => x !== OMIT).map(([k, x]) => `${strRepr(k)}: ${pyRepr(x, depth + 1)}`).join(', ')}}`;
  return pyStr(v);
}

/** Python's `str()` of an int held in a JS number (all digits, also beyond 1e21). */
export function intStr(n: number): string {
  return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
}

/** Python's `str()`: what `{{ x }}` prints inside a longer string. */
export function pyStr(v: unknown): string {
  if (v instanceof Undef) throw v.cause ?? new UndefinedError(v.message);
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? intStr(v) : floatRepr(v);
  if (typeof v === 'bigint') return String(v);
  if (v instanceof PyFloat) return floatRepr(v.value);
  if (Array.isArray(v) && RANGES.has(v)) {
    const [a, b, c] = RANGES.get(v) ?? [0, 0, 1];
    return c === 1 ? `range(${a}, ${b})` : `range(${a}, ${b}, ${c})`;
  }
  if (Array.isArray(v) || isMap(v)) return pyRepr(v);
  if (v instanceof PyObject) return v.str();
  if (v === OMIT) return '';
  throw new ExprError(`Type '${typeof v === 'object' && v !== null ? 'method' : typeof v}' is unsupported for variable storage`, undefined, 'call it: `x.items()`, not `x.items`');
}
