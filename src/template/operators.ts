/**
 * Python's operators as Jinja applies them to values: attribute and item access (own properties
 * only, methods first as Jinja's `getattr` does), slicing, and int/float/str/list arithmetic with
 * Python's rules (big ints, floor division and modulo signs, `%` formatting), bounded in size.
 * Used by the evaluator (`evaluate.ts`).
 */
import { BoundMethod, hasMethod } from './methods.js';
import { percentFormat } from './pyformat.js';
import { CapturedError, defined, ExprError, isFloat, isInt, isMap, isNumber, bigOf, mkFloat, mkInt, NAMED_FIELDS, num, PyObject, TUPLES, typeName, Undef } from './values.js';
import { pyStr } from './pyrepr.js';

/** Largest string/list an operator may build. */
export const MAX_SIZE = 10_000_000;

/** `v`, or an error when it is larger than kplay lets a template build. */
export function sized<T extends string | unknown[]>(v: T, at: number): T {
  if (v.length > MAX_SIZE) throw new ExprError(`result too large (${v.length} items): kplay bounds template memory`, at);
  return v;
}

/** `d.items[0]`: Jinja reads `items` as the dict's method, as Python does; say how to reach the key. */
function methodNotData(m: BoundMethod): ExprError {
  return new ExprError(`'builtin_function_or_method' object is not subscriptable: .${m.name} is the ${typeName(m.self)}'s ${m.name}() method`, undefined, `a key named "${m.name}" is read with ['${m.name}'], e.g. result['${m.name}'][0]`);
}

/** Attribute access as Jinja's `getattr`: methods first, then keys (own properties only). */
export function getAttr(obj: unknown, name: string): unknown {
  if (obj instanceof Undef) return obj;
  if (obj instanceof PyObject) {
    const v = obj.attr(name);
    return v === undefined ? new Undef(`object of type '${obj.pyType}' has no attribute '${name}'`, name) : v;
  }
  if (obj instanceof BoundMethod) throw methodNotData(obj);
  if (hasMethod(obj, name)) return new BoundMethod(obj, name);
  if (isMap(obj)) {
    if (Object.prototype.hasOwnProperty.call(obj, name)) return obj[name];
    return new Undef(`object of type 'dict' has no attribute '${name}'`, name);
  }
  if (Array.isArray(obj)) {
    const i = NAMED_FIELDS.get(obj)?.[name];
    if (i !== undefined) return obj[i];
  }
  return new Undef(`object of type '${typeName(obj)}' has no attribute '${name}'`, name);
}

/** Subscript access as Jinja's `getitem`: keys and indexes first, then attributes. */
export function getItem(obj: unknown, key: unknown): unknown {
  if (obj instanceof Undef) return obj;
  if (obj instanceof BoundMethod) throw methodNotData(obj);
  key = defined(key);
  if (isMap(obj)) {
    // keys are strings (YAML and JSON maps): `d[1]` finds no key '1', as in Python
    if (typeof key === 'string' && Object.prototype.hasOwnProperty.call(obj, key)) return obj[key];
    if (typeof key === 'string' && hasMethod(obj, key)) return new BoundMethod(obj, key);
    return new Undef(`object of type 'dict' has no attribute '${pyStr(key)}'`, pyStr(key));
  }
  if (Array.isArray(obj) || typeof obj === 'string') {
    if (isInt(key) || typeof key === 'boolean') {
      let i = num(key);
      if (i < 0) i += obj.length;
      if (i >= 0 && i < obj.length) return obj[i];
      return new Undef(`${typeName(obj)} object has no element ${pyStr(key)}`, pyStr(key));
    }
    if (typeof key === 'string') return getAttr(obj, key);
    if (isNumber(key)) throw new ExprError(`${typeName(obj)} indices must be integers or slices, not float`);
    return new Undef(`${typeName(obj)} object has no element ${pyStr(key)}`, pyStr(key));
  }
  return new Undef(`object of type '${typeName(obj)}' has no attribute '${pyStr(key)}'`, pyStr(key));
}

export function sliceOf(obj: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  const v = defined(obj);
  if (!Array.isArray(v) && typeof v !== 'string') throw new ExprError(`'${typeName(v)}' object is not subscriptable`);
  const items = Array.isArray(v) ? v : [...v];
  const n = items.length;
  const st = step === undefined || step === null ? 1 : num(step);
  if (st === 0) throw new ExprError('slice step cannot be zero');
  const norm = (x: unknown, def: number, lo: number, hi: number): number => {
    if (x === undefined || x === null) return def;
    let i = num(x);
    if (i < 0) i += n;
    return Math.min(Math.max(i, lo), hi);
  };
  const out: unknown[] = [];
  if (st > 0) for (let i = norm(start, 0, 0, n); i < norm(stop, n, 0, n); i += st) out.push(items[i]);
  else for (let i = norm(start, n - 1, -1, n - 1); i > norm(stop, -1, -1, n - 1); i += st) out.push(items[i]);
  return Array.isArray(v) ? out : out.join('');
}

/** The largest int `**` may build, in bits (Python's are unbounded; kplay bounds template memory). */
const MAX_INT_BITS = 1_000_000;

/**
 * Python's int arithmetic (`+ - * // % **` on ints and bools): on JS numbers while the result is
 * exact (within ±(2**53 - 1)), on bigints beyond (results that fit become numbers again).
 */
function intArith(op: string, a: unknown, b: unknown, at: number): unknown {
  if (typeof a !== 'bigint' && typeof b !== 'bigint') {
    const x = num(a);
    const y = num(b);
    let r: number;
    switch (op) {
      case '+':
        r = x + y;
        break;
      case '-':
        r = x - y;
        break;
      case '*':
        r = x * y;
        break;
      case '//':
        if (y === 0) throw new ExprError('integer division or modulo by zero', at);
        r = Math.floor(x / y);
        break;
      case '%':
        if (y === 0) throw new ExprError('integer modulo by zero', at);
        r = x - y * Math.floor(x / y);
        break;
      case '**':
        if (x === 0 && y < 0) throw new ExprError('0.0 cannot be raised to a negative power', at);
        if (y < 0) return mkFloat(x ** y);
        r = x ** y;
        break;
      default:
        throw new ExprError(`unsupported operator ${op}`, at);
    }
    // exact when the operands and the result are safe integers (pow of integers is exact in V8 while representable)
    if (Number.isSafeInteger(r) && Number.isSafeInteger(x) && Number.isSafeInteger(y)) return r;
  }
  const x = bigOf(a);
  const y = bigOf(b);
  switch (op) {
    case '+':
      return mkInt(x + y);
    case '-':
      return mkInt(x - y);
    case '*':
      return mkInt(x * y);
    case '//': {
      if (y === 0n) throw new ExprError('integer division or modulo by zero', at);
      const q = x / y;
      return mkInt(x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q);
    }
    case '%': {
      if (y === 0n) throw new ExprError('integer modulo by zero', at);
      const r = x % y;
      return mkInt(r !== 0n && r < 0n !== y < 0n ? r + y : r);
    }
    case '**': {
      if (x === 0n && y < 0n) throw new ExprError('0.0 cannot be raised to a negative power', at);
      if (y < 0n) return mkFloat(Number(x) ** Number(y));
      const bits = x === 0n || x === 1n || x === -1n ? 1 : Number(y) * (x < 0n ? -x : x).toString(2).length;
      if (bits > MAX_INT_BITS) throw new ExprError(`result too large (an int of ~${Math.round(bits)} bits): kplay bounds template memory`, at);
      return mkInt(x ** y);
    }
  }
  throw new ExprError(`unsupported operator ${op}`, at);
}

export function arith(op: string, a: unknown, b: unknown, at: number): unknown {
  if (a instanceof PyObject) {
    const r = a.arith(op, b);
    if (r !== undefined) return r;
  }
  // Python: `'abc' % x` with an undefined x (a mapping-like object) formats nothing
  if (op === '%' && typeof a === 'string' && b instanceof Undef && !(b instanceof CapturedError)) return percentFormat(a, {}, false);
  a = defined(a);
  b = defined(b);
  const an = isNumber(a) || typeof a === 'boolean';
  const bn = isNumber(b) || typeof b === 'boolean';
  if (an && bn) {
    const float = isFloat(a) || isFloat(b);
    if (!float && op !== '/') return intArith(op, a, b, at);
    const x = num(a);
    const y = num(b);
    const result = (n: number): unknown => (float ? mkFloat(n) : n);
    switch (op) {
      case '*':
        return result(x * y);
      case '+':
        return result(x + y);
      case '-':
        return result(x - y);
      case '/':
        if (y === 0) throw new ExprError('division by zero', at);
        return mkFloat(x / y);
      case '//':
        if (y === 0) throw new ExprError('integer division or modulo by zero', at);
        return result(Math.floor(x / y));
      case '%':
        if (y === 0) throw new ExprError('integer modulo by zero', at);
        return result(x - y * Math.floor(x / y));
      case '**':
        if (x === 0 && y < 0) throw new ExprError('0.0 cannot be raised to a negative power', at);
        if (x < 0 && !Number.isInteger(y)) throw new ExprError("Type 'complex' is unsupported for variable storage", at);
        if (!float && y < 0) return mkFloat(x ** y);
        return result(x ** y);
    }
  }
  if (op === '+') {
    if (typeof a === 'string' && typeof b === 'string') return sized(a + b, at);
    if (Array.isArray(a) && Array.isArray(b)) return sized([...a, ...b], at);
    if (typeof a === 'string') throw new ExprError(`can only concatenate str (not "${typeName(b)}") to str`, at);
    if (Array.isArray(a)) throw new ExprError(`can only concatenate list (not "${typeName(b)}") to list`, at);
  }
  if (op === '*') {
    const intLike = (v: unknown): v is number | boolean => isInt(v) || typeof v === 'boolean';
    const [seq, n] = (typeof a === 'string' || Array.isArray(a)) && intLike(b) ? [a, num(b)] : (typeof b === 'string' || Array.isArray(b)) && intLike(a) ? [b, num(a)] : [undefined, 0];
    if (seq !== undefined) {
      if (seq.length * Math.max(n, 0) > MAX_SIZE) throw new ExprError('result too large: kplay bounds template memory', at);
      if (typeof seq === 'string') return seq.repeat(Math.max(n, 0));
      const out: unknown[] = [];
      for (let i = 0; i < n; i++) out.push(...seq);
      return out;
    }
  }
  if (op === '%' && typeof a === 'string') return percentFormat(a, b, Array.isArray(b) && TUPLES.has(b));
  const sym = op === '**' ? '** or pow()' : op;
  throw new ExprError(`unsupported operand type(s) for ${sym}: '${typeName(a)}' and '${typeName(b)}'`, at);
}
