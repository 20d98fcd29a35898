/**
 * Python-style argument binding for filters, tests and lookups: positional and keyword arguments
 * are matched to a parameter list as Python matches them, with Python's `TypeError` messages
 * (`do_int() got an unexpected keyword argument 'foo'`), so errors read as ansible-core's do.
 */
import { ExprError, typeName } from '../values.js';
import type { Kwargs } from '../plugins.js';

/** A parameter: its name and, when optional, its default value. */
export interface Param {
  /** The Python parameter name (also its keyword). */
  readonly name: string;
  /** Whether the parameter may be left out. */
  readonly optional: boolean;
  /** The value when left out. */
  readonly default?: unknown;
}

/** A required parameter. */
export function req(name: string): Param {
  return { name, optional: false };
}

/** An optional parameter with its default. */
export function opt(name: string, dflt: unknown = null): Param {
  return { name, optional: true, default: dflt };
}

/** How a Python function takes its arguments. */
export interface Signature {
  /** The Python function name used in messages (`do_int`). */
  readonly fn: string;
  /** Parameters after the input value (which always counts as the first positional one). */
  readonly params: readonly Param[];
  /** Accepts extra positional arguments (`*args`). */
  readonly varargs?: boolean;
  /** Accepts extra keyword arguments (`**kwargs`). */
  readonly varkw?: boolean;
  /** Leading parameters Python counts that the template never passes (Jinja's environment/context). */
  readonly hidden?: number;
}

/** The bound arguments: by name, plus extra positional and keyword ones when the signature takes them. */
export interface Bound {
  /** Each declared parameter's value (default when not given). */
  readonly get: (name: string) => unknown;
  /** Whether a parameter was given by the caller. */
  readonly given: (name: string) => boolean;
  /** Extra positional arguments (`*args`). */
  readonly rest: readonly unknown[];
  /** Extra keyword arguments (`**kwargs`). */
  readonly extra: Readonly<Record<string, unknown>>;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Bind `args`/`kwargs` to a signature as Python does (the input value is the first positional
 * argument), raising Python's TypeError messages.
 */
export function bind(sig: Signature, args: readonly unknown[], kwargs: Kwargs): Bound {
  const hidden = sig.hidden ?? 0;
  const values = new Map<string, unknown>();
  const { params } = sig;
  const total = params.length + 1 + hidden;
  if (args.length > params.length && !sig.varargs) {
    const required = params.filter((p) => !p.optional).length + 1 + hidden;
    const takes = required === total ? `${total}` : `from ${required} to ${total}`;
    const given = args.length + 1 + hidden;
    throw new ExprError(
      `${sig.fn}() takes ${takes} positional argument${total === 1 && required === total ? '' : 's'} but ${given} ${given === 1 ? 'was' : 'were'} given`,
    );
  }
  for (let i = 0; i < Math.min(args.length, params.length); i++) {
    const p = params[i];
    if (p) values.set(p.name, args[i]);
  }
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(kwargs)) {
    const p = params.find((x) => x.name === k);
    if (p) {
      if (values.has(k)) throw new ExprError(`${sig.fn}() got multiple values for argument '${k}'`);
      values.set(k, v);
    } else if (sig.varkw) {
      Object.defineProperty(extra, k, { value: v, enumerable: true, writable: true, configurable: true });
    } else {
      throw new ExprError(`${sig.fn}() got an unexpected keyword argument '${k}'`);
    }
  }
  const missing = params.filter((p) => !p.optional && !values.has(p.name)).map((p) => `'${p.name}'`);
  if (missing.length > 0) {
    const list = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(', ')} and ${missing[missing.length - 1]}`;
    throw new ExprError(`${sig.fn}() missing ${plural(missing.length, 'required positional argument')}: ${list}`);
  }
  const rest = args.slice(params.length);
  return {
    get: (name) => (values.has(name) ? values.get(name) : params.find((p) => p.name === name)?.default),
    given: (name) => values.has(name),
    rest,
    extra,
  };
}

/** A builtin taking exactly one argument, as `len()` says it: `len() takes exactly one argument (2 given)`. */
export function exactlyOne(fn: string, args: readonly unknown[], kwargs: Kwargs): void {
  if (Object.keys(kwargs).length > 0) throw new ExprError(`${fn}() takes no keyword arguments`);
  if (args.length > 0) throw new ExprError(`${fn}() takes exactly one argument (${args.length + 1} given)`);
}

/** Python's bool check of an argument that must be a bool (Ansible's `validate_arg_type`). */
export function boolArg(name: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new ExprError(`The '${name}' argument must be of type 'bool', not '${typeName(v)}'.`);
  return v;
}

/** Python's `operator.index()` for an argument used as an int (bools are ints). */
export function intArg(v: unknown, what = 'integer'): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new ExprError(`'${typeName(v)}' object cannot be interpreted as an ${what}`);
}
