/**
 * Helpers shared by the filter tables: declaring a filter with a Python signature, and reading
 * inputs as Python does (`str(x)`, `iter(x)`, `len(x)`).
 */
import type { FilterDef, Kwargs, PluginContext } from '../plugins.js';
import { ExprError, PyFloat, Undef, UndefinedError, isMap, iterate, typeName } from '../values.js';
import { pyStr } from '../pyrepr.js';
import { bind, type Bound, type Signature } from './args.js';
import { pyNumStr } from './pynum.js';
import { pyLen } from './pytext.js';

/** A filter implementation over bound arguments. */
export type Impl = (value: unknown, a: Bound, ctx: PluginContext) => unknown;

/** A filter with a Python signature: arguments are bound (and checked) before `impl` runs. */
export function filter(sig: Signature, impl: Impl, acceptsUndefined = false): FilterDef {
  return {
    fn: (value: unknown, args: unknown[], kwargs: Kwargs, ctx: PluginContext) => impl(value, bind(sig, args, kwargs), ctx),
    acceptsUndefined,
  };
}

/** Python's `str(x)` (floats as Python prints them). */
export function text(v: unknown): string {
  if (v instanceof Undef) throw new UndefinedError(v.message);
  if (typeof v === 'number' || v instanceof PyFloat) return pyNumStr(v);
  if (Array.isArray(v) || isMap(v)) return repr(v);
  return pyStr(v);
}

/** Characters Python's `str.isprintable()` rejects (escaped by `repr`): controls, format, separators except space, unassigned. */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python's `repr()` of a string. */
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
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      out += c <= 0xff ? `\\x${c.toString(16).padStart(2, '0')}` : c <= 0xffff ? `\\u${c.toString(16).padStart(4, '0')}` : `\\U${c.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + q;
}

/** Python's `repr(x)` (lists and dicts show their items' reprs). */
export function repr(v: unknown, depth = 0): string {
  if (v instanceof Undef) throw new UndefinedError(v.message);
  if (depth > 100) return '...';
  if (typeof v === 'string') return strRepr(v);
  if (Array.isArray(v)) return `[${v.map((x) => repr(x, depth + 1)).join(', ')}]`;
  if (isMap(v)) return `{${Object.entries(v).map(([k, x]) => `${strRepr(k)}: ${repr(x, depth + 1)}`).join(', ')}}`;
  if (typeof v === 'number' || v instanceof PyFloat) return pyNumStr(v);
  return pyStr(v);
}

/** Python's `list(x)`: items of a list, characters of a string, keys of a dict. */
export function items(v: unknown): unknown[] {
  return iterate(v);
}

/** Python's `len(x)`. */
export function pyLength(v: unknown): number {
  if (typeof v === 'string') return pyLen(v);
  if (Array.isArray(v)) return v.length;
  if (isMap(v)) return Object.keys(v).length;
  throw new ExprError(`object of type '${typeName(v)}' has no len()`);
}

/** Fail on an undefined item (what touching an undefined list item does in Ansible). */
export function touch(v: unknown): unknown {
  if (v instanceof Undef) throw new UndefinedError(v.message);
  return v;
}

/** A dict value built safely (keys such as `__proto__` stay plain own keys). */
export function dict(entries: Iterable<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}
