/**
 * The value model of expressions: JSON-like JavaScript values read with Python's semantics, as
 * Jinja2 under ansible-core sees them.
 *
 * - `null` is `None`; booleans are `True`/`False`; strings, lists (arrays) and dicts (plain maps).
 * - Numbers: an integral JS number is an `int`, a non-integral one a `float`; a float whose value
 *   is integral (`4 / 2`, `2.0`, `'3' | float`) is a {@link PyFloat}, so it prints as `2.0` and
 *   `type_debug` says `float`. {@link toPlain} unboxes it when a value leaves the engine.
 * - Python's ints are unbounded: an int beyond JavaScript's safe range (±(2**53 - 1)) is a
 *   `bigint` (`2 ** 70`, a long literal, `'…' | int`), so arithmetic, comparisons and printing stay
 *   exact; an int that fits is always a number ({@link mkInt}), so the common path stays on
 *   numbers. A bigint leaves the engine ({@link toPlain}) as the nearest JS number (JSON has no
 *   bigger ints); inside a template, text and `to_json` print it exactly.
 * - A missing variable or key is an {@link Undef}: it can be passed on (attribute access, filters
 *   such as `default`, tests such as `defined`) and fails with its message when used.
 */
import { InputError } from '../load/errors.js';

/** A float whose value is integral (`2.0`). Non-integral floats are plain JS numbers. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/**
 * An undefined value (Ansible's `AnsibleUndefined`): a missing variable, key or attribute.
 * Attribute and item access on it yield it again, so `x.y.z | default(1)` works when `x` is
 * undefined; any other use fails with {@link Undef.message}, which names the first missing part.
 */
export class Undef {
  constructor(
    /** What is missing, as Ansible says it: `'x' is undefined`, `object of type 'dict' has no attribute 'y'`. */
    readonly message: string,
    /** The name or path that was read (for hints). */
    readonly name: string,
    /** Offset in the expression source of the access that made it. */
    readonly offset?: number,
    /** Jinja's plain undefined (an inline `if` without `else` that is false): prints as nothing. */
    readonly silent = false,
    /** The error to raise when it is used: a variable whose own template read an undefined value (it keeps that template's position). */
    readonly cause?: Error,
  ) {}
}

/**
 * A Python object that is not JSON-like (`datetime`, `timedelta`): its type name, `str()`,
 * attributes and methods (methods are functions of `(args, kwargs)`), ordering, arithmetic, and
 * the plain value it leaves the engine as.
 */
export abstract class PyObject {
  /** Python's type name (`datetime`). */
  abstract readonly pyType: string;
  /** Python's `str()`. */
  abstract str(): string;
  /** An attribute or method by name; undefined when it has none. */
  abstract attr(name: string): unknown;
  /** The JSON-like value it leaves the engine as (e.g. ISO text). */
  abstract plain(): unknown;
  /** Ordering against `other`, or undefined when they do not compare. */
  compare(_other: unknown): number | undefined {
    return undefined;
  }
  /** `this op other`, or undefined when Python would raise. */
  arith(_op: string, _other: unknown): unknown {
    return undefined;
  }
  /** `this(*args, **kwargs)`; Python's TypeError for objects that are not callable. */
  call(_args: readonly unknown[], _kwargs: Readonly<Record<string, unknown>>): unknown {
    throw new ExprError(`'${this.pyType}' object is not callable`);
  }
}

/**
 * A filter, test or lookup that failed (ansible-core's `CapturedExceptionMarker`): ansible-core
 * does not raise at once but returns a marker holding the error, which flows through the filters
 * after it like an undefined value (`default` keeps it, `type_debug` names it) and raises the
 * plug-in's error when it is used.
 */
export class CapturedError extends Undef {
  constructor(cause: Error, offset?: number) {
    super(cause.message, '', offset, false, cause);
  }
}

/**
 * The error of an inline `!vault` value that could not be decrypted (ansible-core's
 * `UndecryptableVaultError`), raised where the value is used; it carries the ciphertext so that
 * reading the variable gives its {@link VaultMarker} back.
 */
export class UndecryptableError extends InputError {
  constructor(
    message: string,
    /** The vault text that could not be decrypted. */
    readonly ciphertext: string,
    hint?: string,
  ) {
    super(message, undefined, hint);
  }
}

/**
 * An inline `!vault` value that could not be decrypted (ansible-core's `VaultExceptionMarker`):
 * a marker like {@link CapturedError} (any use raises its error), except that `unvault` and
 * `is vault_encrypted` read its ciphertext.
 */
export class VaultMarker extends CapturedError {
  constructor(
    readonly error: UndecryptableError,
    offset?: number,
  ) {
    super(error, offset);
  }

  /** The vault text. */
  get ciphertext(): string {
    return this.error.ciphertext;
  }
}

/** An error raised while evaluating an expression (becomes an InputError naming the template). */
export class ExprError extends Error {
  constructor(
    message: string,
    /** Offset in the expression source where the failing construct starts, when known. */
    readonly offset?: number,
    /** What to do next. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** An undefined value was used where a value is needed. */
export class UndefinedError extends ExprError {}

/**
 * A template's error because it used an undefined value, as the engine reports it: reading a
 * variable whose template fails this way gives an undefined value (ansible-core defers it), so
 * `default` and `is defined` work on it; using it raises this error.
 */
export class UndefinedInputError extends InputError {}

/**
 * Lists and dicts the template made itself (literals, filter and method results): the only ones
 * whose methods may change them in place (`{% set _ = acc.append(x) %}`). The variables' own
 * data is never changed: a method that changes a list or dict works on a copy of it.
 */
const FRESH = new WeakSet<object>();

/** Mark a list or dict as made by the template. */
export function fresh<T extends object>(v: T): T {
  FRESH.add(v);
  return v;
}

/** Whether the template made this list or dict (so it may change it). */
export function isFresh(v: object): boolean {
  return FRESH.has(v);
}

/** The value of `omit` (Ansible's Omit): a module argument, list item or dict entry rendered to it is left out. */
class Omit {
  toString(): string {
    return '';
  }
}
export const OMIT: object = Object.freeze(new Omit());

/** Lists made by `range()`: printed as `range(0, 3)`, refused as a whole value (as Python's range objects). */
export const RANGES = new WeakMap<unknown[], [number, number, number]>();

/** Lists made by a tuple literal `(a, b)`: Python tells them from lists (`[1] == (1,)` is false, `'%s' % (a,)` formats its items). */
export const TUPLES = new WeakSet<unknown[]>();

/** Lists that stand for a Python namedtuple (Jinja's groupby `_GroupTuple`): field name → index, for `x.field`. */
export const NAMED_FIELDS = new WeakMap<unknown[], Readonly<Record<string, number>>>();

/** A list whose items are also read as attributes by name (`fields[i]` names item i), as a namedtuple's. */
export function mkNamed(items: unknown[], fields: readonly string[]): unknown[] {
  NAMED_FIELDS.set(items, Object.fromEntries(fields.map((f, i) => [f, i])));
  return items;
}

/** Maps whose values are rendered when read (`hostvars` and its entries): a template's result keeps them as they are. */
const LAZY_VIEWS = new WeakSet<object>();

/**
 * Mark `view` as a lazy view of variables (as ansible-core's HostVars/HostVarsVars): a template
 * whose value is the view (`all_vars: "{{ hostvars[inventory_hostname] }}"`) gets the view itself,
 * and each of its variables is rendered only when read.
 */
export function markLazyView<T extends object>(view: T): T {
  LAZY_VIEWS.add(view);
  return view;
}

/** A tuple: a list marked as made by a tuple literal. */
export function mkTuple(items: unknown[]): unknown[] {
  TUPLES.add(items);
  return items;
}

/** True for `{}`-like maps (not arrays, not class instances). */
export function isMap(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** True for ints and floats (not booleans). */
export function isNumber(v: unknown): v is number | PyFloat | bigint {
  return typeof v === 'number' || v instanceof PyFloat || typeof v === 'bigint';
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

/** An int from a bigint: a JS number when it is within the safe range, the bigint otherwise. */
export function mkInt(b: bigint): number | bigint {
  return b >= MIN_SAFE && b <= MAX_SAFE ? Number(b) : b;
}

/** True for a Python int of any size (an integral number or a bigint; not a bool). */
export function isBigOrInt(v: unknown): v is number | bigint {
  return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));
}

/** The exact bigint of an int, bool or integral float. */
export function bigOf(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return BigInt(num(v));
}

/** Whether a number, bigint or bool has an integral value (so it compares exactly as a bigint). */
function integral(v: unknown): boolean {
  return typeof v === 'bigint' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v)) || (v instanceof PyFloat && Number.isFinite(v.value));
}

/** Python's ordering of two numbers (ints of any size, floats, bools): -1, 0 or 1. */
export function numCompare(a: unknown, b: unknown): number {
  if ((typeof a === 'bigint' || typeof b === 'bigint') && integral(a) && integral(b)) {
    const x = bigOf(a);
    const y = bigOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = num(a);
  const y = num(b);
  return x < y ? -1 : x > y ? 1 : x === y ? 0 : NaN;
}

/** True for a Python float (a non-integral number, NaN, ±inf, or a {@link PyFloat}). */
export function isFloat(v: unknown): boolean {
  return v instanceof PyFloat || (typeof v === 'number' && !Number.isInteger(v));
}

/** True for a Python int (an integral JS number; booleans are not ints here). */
export function isInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v);
}

/** The number behind an int, float or bool (Python's bool is an int). */
export function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  throw new ExprError(`expected a number, got ${typeName(v)}`);
}

/** A float result: boxed when integral so it stays a float. */
export function mkFloat(n: number): number | PyFloat {
  return Number.isInteger(n) ? new PyFloat(n) : n;
}

/** Fail on an undefined value (any use other than passing it on). */
export function defined<T>(v: T | Undef): T {
  if (v instanceof Undef) throw v.cause ?? new UndefinedError(v.message, v.offset);
  return v;
}

/** Python's type name of a value (`type_debug`). */
export function typeName(v: unknown): string {
  if (v instanceof Undef) return 'AnsibleUndefined';
  if (Array.isArray(v) && TUPLES.has(v)) return 'tuple';
  if (Array.isArray(v) && RANGES.has(v)) return 'range';
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'bigint') return 'int';
  if (v instanceof PyFloat) return 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  if (isMap(v)) return 'dict';
  if (v instanceof PyObject) return v.pyType;
  if (v === OMIT) return 'Omit';
  if (typeof v === 'function') return 'builtin_function_or_method';
  return 'object';
}

/** Python's truthiness. An undefined value fails. */
export function truthy(v: unknown): boolean {
  if (v instanceof Undef) throw v.cause ?? new UndefinedError(v.message, v.offset);
  if (v === null || v === undefined || v === false) return false;
  if (v === true) return true;
  if (typeof v === 'number') return v !== 0;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'string' || Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

/** Python's `==` (1 == 1.0 == True; lists and dicts by value). */
export function pyEq(a: unknown, b: unknown): boolean {
  if (a instanceof Undef || b instanceof Undef) return a instanceof Undef && b instanceof Undef;
  if (a === b) return true;
  if (a instanceof PyObject) return a.compare(b) === 0;
  const an = isNumber(a) || typeof a === 'boolean';
  const bn = isNumber(b) || typeof b === 'boolean';
  if (an && bn) return typeof a === 'bigint' || typeof b === 'bigint' ? numCompare(a, b) === 0 : num(a) === num(b);
  if (Array.isArray(a) && Array.isArray(b)) return TUPLES.has(a) === TUPLES.has(b) && a.length === b.length && a.every((x, i) => pyEq(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && pyEq(a[k], b[k]));
  }
  return false;
}

const OP_NAME: Readonly<Record<string, string>> = { '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

/** Python's ordering: numbers (and bools), strings by code point, lists item by item; otherwise a TypeError as Python raises. */
export function pyCompare(a: unknown, b: unknown, op = '<'): number {
  a = defined(a);
  b = defined(b);
  const an = isNumber(a) || typeof a === 'boolean';
  const bn = isNumber(b) || typeof b === 'boolean';
  if (an && bn) {
    if (typeof a === 'bigint' || typeof b === 'bigint') return numCompare(a, b);
    const x = num(a);
    const y = num(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof PyObject) {
    const c = a.compare(b);
    if (c !== undefined) return c;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (!pyEq(a[i], b[i])) return pyCompare(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  throw new ExprError(`'${OP_NAME[op] ?? op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python's `x in container`: list items, dict keys, substrings. */
export function pyIn(item: unknown, container: unknown): boolean {
  item = defined(item);
  container = defined(container);
  // comparing with an undefined item fails, as in ansible-core (`s in [1, u]`)
  if (Array.isArray(container)) return container.some((x) => pyEq(defined(x), item));
  if (typeof container === 'string') {
    if (typeof item !== 'string') throw new ExprError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (isMap(container)) {
    if (Array.isArray(item) || isMap(item)) throw new ExprError(`unhashable type: '${typeName(item)}'`);
    return typeof item === 'string' && Object.prototype.hasOwnProperty.call(container, item);
  }
  throw new ExprError(`argument of type '${typeName(container)}' is not iterable`);
}

/** The items of an iterable as Python iterates them (dict → keys, string → characters). */
export function iterate(v: unknown): unknown[] {
  v = defined(v);
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isMap(v)) return Object.keys(v);
  throw new ExprError(`'${typeName(v)}' object is not iterable`);
}

/**
 * Deep copy of a value with every {@link PyFloat} unboxed: what leaves the engine. An int beyond
 * 2**53 becomes the nearest JS number, unless `exactInts` (then it stays a bigint).
 */
export function toPlain(v: unknown, depth = 0, exactInts = false): unknown {
  if (v instanceof PyFloat) return v.value;
  if (typeof v === 'bigint') return exactInts ? v : Number(v);
  if (v instanceof PyObject) return v.plain();
  if (typeof v === 'function') throw new ExprError("Type 'builtin_function_or_method' is unsupported for variable storage", undefined, 'call it: `x.items()`, not `x.items`');
  if (v === OMIT) throw new ExprError('A template was resolved to an Omit scalar.', undefined, 'omit leaves out a module argument or an item of a list or dict; it cannot be a whole value');
  if (Array.isArray(v) && RANGES.has(v)) throw new ExprError("Type 'range' is unsupported for variable storage", undefined, 'make a list of it: `range(3) | list`');
  if (v instanceof Undef) throw v.cause ?? new UndefinedError(v.message, v.offset);
  if (depth > 200 || v === null || typeof v !== 'object' || LAZY_VIEWS.has(v)) return v;
  if (!Array.isArray(v) && !isMap(v)) throw new ExprError("Type 'method' is unsupported for variable storage", undefined, 'call it: `x.items()`, not `x.items`');
  if (Array.isArray(v)) {
    // omitted items are left out, as ansible-core does when a value is finalized
    if (v.includes(OMIT)) return v.filter((x) => x !== OMIT).map((x) => toPlain(x, depth + 1, exactInts));
    let copy: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const p = toPlain(x, depth + 1, exactInts);
      if (p !== x) (copy ??= v.slice())[i] = p;
    }
    return copy ?? v;
  }
  if (isMap(v)) {
    let copy: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(v)) {
      if (x === OMIT) {
        copy ??= { ...v };
        delete copy[k];
        continue;
      }
      const p = toPlain(x, depth + 1, exactInts);
      if (p !== x) {
        copy ??= { ...v };
        Object.defineProperty(copy, k, { value: p, enumerable: true, writable: true, configurable: true });
      }
    }
    return copy ?? v;
  }
  return v;
}

/** Set an own property safely (also for a key named `__proto__`). */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Own property of a map, or undefined. */
export function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}
