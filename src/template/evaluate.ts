/**
 * The evaluator of expression ASTs, with ansible-core 2.19's semantics: strict undefined (an
 * undefined value passes through attribute access, `default` and `is defined`, and fails with a
 * message naming its first missing part anywhere else), short-circuit `and`/`or`/`if`, Python's
 * operators, truthiness, comparisons and `in`, int/float arithmetic, filters, tests, lookups and
 * the methods of strings, lists and dicts. Sandboxed: own properties only, no mutation, bounded
 * time and sizes.
 */
import type { Args, CompareNode, Expr } from './ast.js';
import type { TNode } from './template.js';
import { BoundMethod, callMethod } from './methods.js';
import type { FilterDef, Kwargs, LookupDef, PluginContext, TestDef } from './plugins.js';
import { cycler, joiner, lipsum, now } from './globals.js';
import { CapturedError, defined, ExprError, isFloat, isInt, isMap, isNumber, iterate, mkFloat, mkInt, fresh, mkTuple, num, OMIT, pyCompare, PyObject, RANGES, pyEq, pyIn, setOwn, truthy, typeName, Undef, UndecryptableError, UndefinedError, UndefinedInputError, VaultMarker } from './values.js';
import { pyStr } from './pyrepr.js';
import { closest } from '../load/suggest.js';
import { arith, getAttr, getItem, sized, sliceOf } from './operators.js';
import { eachExpr } from './walk.js';
import { liquidContains, liquidProperty } from './liquid-forms.js';

/** The filters, tests and lookups an evaluation can call. */
export interface Registry {
  readonly filters: ReadonlyMap<string, FilterDef>;
  /** Liquid's versions of filters, for a filter written with Liquid's argument syntax (`x | default: 3`). */
  readonly liquidFilters: ReadonlyMap<string, FilterDef>;
  readonly tests: ReadonlyMap<string, TestDef>;
  readonly lookups: ReadonlyMap<string, LookupDef>;
}

/** Largest `range()` (Jinja's sandbox limit). */
const MAX_RANGE = 100_000;

/** A scope of variables: template-local names (loop variables, `{% set %}`) over the task's variables. */
export class Scope {
  constructor(
    /** The task's variables (own properties; lazily rendered ones are getters). */
    readonly root: Record<string, unknown>,
    /** Names set inside the template. */
    readonly locals: Map<string, unknown> = new Map(),
    readonly parent?: Scope,
  ) {}

  /** A child scope (a loop body, a block). */
  child(): Scope {
    return new Scope(this.root, new Map(), this);
  }

  /** Whether `name` is defined here. */
  has(name: string): boolean {
    return this.local(name) !== undefined || Object.prototype.hasOwnProperty.call(this.root, name);
  }

  /** The value of `name`, or undefined (JS) when it is not defined. */
  lookup(name: string): unknown {
    const frame = this.local(name);
    if (frame) return frame.get(name);
    return Object.prototype.hasOwnProperty.call(this.root, name) ? this.root[name] : undefined;
  }

  /** Every visible name. */
  names(): string[] {
    const out = new Set(Object.keys(this.root));
    for (const frame of this.frames()) for (const k of frame.keys()) out.add(k);
    return [...out];
  }

  /** The innermost template-local frame holding `name`. */
  private local(name: string): Map<string, unknown> | undefined {
    if (this.locals.has(name)) return this.locals;
    return this.parent?.local(name);
  }

  /** Template-local frames, innermost first. */
  private frames(): Map<string, unknown>[] {
    return [this.locals, ...(this.parent ? this.parent.frames() : [])];
  }
}

/** What an evaluation needs besides the variables. */
export interface EvalEnv {
  readonly registry: Registry;
  /** Plug-in context for the scope being evaluated. */
  readonly plugins: (scope: Scope) => PluginContext;
  /** `Date.now()` after which evaluation fails (bounded render time). */
  readonly deadline: number;
  /** Liquid's properties (`list.size`), the fallback for older kplay playbooks: see {@link LiquidFallback}. */
  readonly liquid: LiquidFallback;
  /**
   * The template `{% include %}`/`{% import %}` name (the first of `names` found), as Jinja's
   * FileSystemLoader finds it on the render's search path; undefined when none is found and
   * `ignoreMissing`, else it throws Jinja's TemplateNotFound text.
   */
  readonly loadTemplate?: (names: readonly string[], scope: Scope, ignoreMissing: boolean) => { name: string; nodes: readonly TNode[] } | undefined;
}

/**
 * Whether an evaluation reads Liquid's properties where Jinja has no value. An expression is
 * evaluated with Jinja's rules first (`read` false: `l.size` is undefined, so `l.size | default(0)`
 * and `l.size is defined` keep Jinja's values); only when that fails after meeting such a property
 * (`met`) is it evaluated again with `read` true, so a value Jinja defines never changes.
 */
export interface LiquidFallback {
  /** Read Liquid's value where Jinja has none. */
  readonly read: boolean;
  /** Set when the evaluation met a property Jinja has no value for and Liquid has. */
  met: boolean;
}

/** A function defined by a template (`{% macro %}`, `loop.cycle`): called like a global. */
export class TemplateFunction {
  constructor(
    readonly name: string,
    readonly invoke: (args: unknown[], kwargs: Record<string, unknown>) => unknown,
  ) {}
}

/** A `namespace()` object: the one value `{% set ns.x = … %}` may change. */
export const NAMESPACES = new WeakSet<object>();

let steps = 0;

function tick(env: EvalEnv, at: number): void {
  if ((++steps & 1023) === 0 && Date.now() > env.deadline) throw new ExprError('render time limit exceeded', at, 'the template is too expensive: kplay bounds template render time');
}

function compare(node: CompareNode, scope: Scope, env: EvalEnv): boolean {
  let left = evaluate(node.first, scope, env);
  for (const { op, expr, at } of node.rest) {
    const right = evaluate(expr, scope, env);
    let ok: boolean;
    try {
      switch (op) {
        case '==':
          ok = pyEq(defined(left), defined(right));
          break;
        case '!=':
          ok = !pyEq(defined(left), defined(right));
          break;
        case '<':
          ok = pyCompare(left, right, op) < 0;
          break;
        case '<=':
          ok = pyCompare(left, right, op) <= 0;
          break;
        case '>':
          ok = pyCompare(left, right, op) > 0;
          break;
        case '>=':
          ok = pyCompare(left, right, op) >= 0;
          break;
        case 'in':
          ok = undefinedIn(left, right) ?? pyIn(left, right);
          break;
        case 'not in':
          ok = !(undefinedIn(left, right) ?? pyIn(left, right));
          break;
        case 'contains':
          ok = liquidContains(left, right);
          break;
      }
    } catch (e) {
      throw withOffset(e, at);
    }
    if (!ok) return false;
    left = right;
  }
  return true;
}

/** An undefined value is in no list and no dict (it equals nothing, and is hashable). */
function undefinedIn(item: unknown, container: unknown): boolean | undefined {
  // Python compares nothing with an empty container; any comparison with an undefined fails
  const empty = (Array.isArray(container) && container.length === 0) || (isMap(container) && Object.keys(container).length === 0);
  return item instanceof Undef && empty ? false : undefined;
}

function withOffset(e: unknown, at: number): unknown {
  if (e instanceof UndefinedError && e.offset === undefined) return new UndefinedError(e.message, at, e.hint);
  if (e instanceof ExprError && e.offset === undefined) return new ExprError(e.message, at, e.hint);
  return e;
}

/** Evaluate the arguments of a call, filter or test. */
function evalArgs(node: Args, scope: Scope, env: EvalEnv): { args: unknown[]; kwargs: Record<string, unknown> } {
  const args = node.args.map((a) => evaluate(a, scope, env));
  if (node.star) args.push(...iterate(evaluate(node.star, scope, env)));
  const kwargs: Record<string, unknown> = {};
  for (const [k, v] of node.kwargs) setOwn(kwargs, k, evaluate(v, scope, env));
  if (node.starstar) {
    const d = defined(evaluate(node.starstar, scope, env));
    if (!isMap(d)) throw new ExprError(`argument after ** must be a mapping, not ${typeName(d)}`);
    for (const [k, v] of Object.entries(d)) setOwn(kwargs, k, v);
  }
  return { args, kwargs };
}

function noUndefinedArgs(args: unknown[], kwargs: Kwargs): void {
  for (const a of args) defined(a);
  for (const v of Object.values(kwargs)) defined(v);
}

/** The first undefined among a plug-in's input and arguments: ansible-core passes it on instead of calling the plug-in. */
function firstUndef(value: unknown, args: unknown[], kwargs: Kwargs): Undef | undefined {
  if (value instanceof Undef) return value;
  for (const a of args) if (a instanceof Undef) return a;
  for (const v of Object.values(kwargs)) if (v instanceof Undef) return v;
  return undefined;
}

/**
 * Fail on filters and tests that do not exist (Jinja rejects them when compiling a template, so
 * `kplay validate` does too). The error's offset is `base` plus the node's.
 */
export function checkPlugins(expr: Expr, base: number, registry: Registry): void {
  eachExpr(expr, (e) => {
    if (e.type === 'filter' && !registry.filters.has(e.name) && !(e.liquid && registry.liquidFilters.has(e.name))) throw unknownPlugin('filter', e.name, registry.filters.keys(), base + e.at);
    if (e.type === 'test' && !registry.tests.has(e.name)) throw unknownPlugin('test', e.name, registry.tests.keys(), base + e.at);
  });
}

function unknownPlugin(kind: string, name: string, names: Iterable<string>, at: number): ExprError {
  const near = closest(name, names);
  return new ExprError(`no ${kind} named '${name}'`, at, near.length ? `did you mean '${near.join("' or '")}'?` : undefined);
}

/** Run a lookup as `lookup()` (joined to a string unless `wantlist=True`) or `query()` (a list). */
function runLookup(args: unknown[], kwargs: Record<string, unknown>, asList: boolean, scope: Scope, env: EvalEnv, at: number): unknown {
  const [nameV, ...terms] = args;
  const name = defined(nameV);
  if (typeof name !== 'string') throw new ExprError(`the lookup name must be a string, not ${typeName(name)}`, at);
  const def = env.registry.lookups.get(name) ?? env.registry.lookups.get(name.replace(/^ansible\.builtin\./, ''));
  if (!def) throw unknownPlugin('lookup plugin', name, env.registry.lookups.keys(), at);
  const { wantlist, errors, ...rest } = kwargs;
  noUndefinedArgs(terms, rest);
  let result: unknown[];
  try {
    result = def.fn(terms, rest, env.plugins(scope));
  } catch (e) {
    if (errors === 'ignore' || errors === 'warn') return asList || wantlist === true ? [] : null;
    return capture(withOffset(e, at));
  }
  if (asList || wantlist === true) return result;
  // as ansible-core's lookup(): a list of strings is joined with commas, one item is returned as is
  if (result.length === 1) return result[0];
  if (result.length > 0 && result.every((x) => typeof x === 'string')) return result.join(',');
  return result;
}

function rangeOf(args: unknown[], at: number): number[] {
  const ns = args.map((a) => {
    const v = defined(a);
    if (!isInt(v) && typeof v !== 'boolean') throw new ExprError(`'${typeName(v)}' object cannot be interpreted as an integer`, at);
    return num(v);
  });
  const [start, stop, step] = ns.length === 1 ? [0, ns[0] ?? 0, 1] : [ns[0] ?? 0, ns[1] ?? 0, ns[2] ?? 1];
  if (step === 0) throw new ExprError('range() arg 3 must not be zero', at);
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > MAX_RANGE) throw new ExprError(`Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`, at);
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(start + i * step);
  return out;
}

/** The global functions (`lookup`, `query`/`q`, `range`, `dict`, `namespace`, `undef`, `now`, `cycler`, `joiner`, `lipsum`). */
function callGlobal(name: string, args: unknown[], kwargs: Record<string, unknown>, scope: Scope, env: EvalEnv, at: number): unknown {
  switch (name) {
    case 'lookup':
      return runLookup(args, kwargs, false, scope, env, at);
    case 'query':
    case 'q':
      return runLookup(args, kwargs, true, scope, env, at);
    case 'range': {
      const r = rangeOf(args, at);
      const [a, b, c] = args.length === 1 ? [0, num(args[0]), 1] : [num(args[0]), num(args[1]), args.length > 2 ? num(args[2]) : 1];
      RANGES.set(r, [a, b, c]);
      return r;
    }
    case 'dict': {
      const out: Record<string, unknown> = {};
      for (const a of args) {
        const v = defined(a);
        if (isMap(v)) for (const [k, x] of Object.entries(v)) setOwn(out, k, x);
        else for (const pair of iterate(v)) {
          const p = iterate(pair);
          if (p.length !== 2) throw new ExprError('dictionary update sequence element has length ' + String(p.length) + '; 2 is required', at);
          setOwn(out, pyStr(p[0]), p[1]);
        }
      }
      for (const [k, v] of Object.entries(kwargs)) setOwn(out, k, defined(v));
      return fresh(out);
    }
    case 'namespace': {
      const ns: Record<string, unknown> = {};
      for (const a of args) if (isMap(a)) for (const [k, v] of Object.entries(a)) setOwn(ns, k, v);
      for (const [k, v] of Object.entries(kwargs)) setOwn(ns, k, v);
      NAMESPACES.add(ns);
      return ns;
    }
    case 'undef':
      return new Undef(typeof args[0] === 'string' && args[0] ? args[0] : 'Mandatory variable has not been overridden', 'undef');
    case 'now':
      return now(args, kwargs);
    case 'cycler':
      return cycler(args, kwargs);
    case 'joiner':
      return joiner(args, kwargs);
    case 'lipsum':
      return lipsum(args, kwargs);
  }
  return undefined;
}

const GLOBALS: ReadonlySet<string> = new Set(['lookup', 'query', 'q', 'range', 'dict', 'namespace', 'undef', 'now', 'cycler', 'joiner', 'lipsum']);

/** An undefined value made by the access at `at` remembers where (an undefined base keeps its own place). */
function located(v: unknown, at: number): unknown {
  return v instanceof Undef && v.offset === undefined ? new Undef(v.message, v.name, at) : v;
}

/** Jinja's value of `obj.key`, or where Jinja has none, Liquid's property when `env` reads them (noting that one was met). */
function orLiquid(jinja: unknown, obj: unknown, key: unknown, env: EvalEnv): unknown {
  if (!(jinja instanceof Undef) || typeof key !== 'string') return jinja;
  const liquid = liquidProperty(obj, key);
  if (liquid === undefined) return jinja;
  env.liquid.met = true;
  return env.liquid.read ? liquid : jinja;
}

/** Evaluate an expression to an internal value (may be an {@link Undef} or a {@link PyFloat}). */
export function evaluate(node: Expr, scope: Scope, env: EvalEnv): unknown {
  tick(env, node.at);
  switch (node.type) {
    case 'literal':
      return node.value;
    case 'name': {
      if (scope.has(node.name)) {
        let v: unknown;
        try {
          v = scope.lookup(node.name);
        } catch (e) {
          // a variable whose own template used an undefined value is undefined (ansible-core defers the error)
          if (e instanceof UndefinedInputError) return new Undef(e.message, node.name, node.at, false, e);
          // an undecryptable inline vault value is a marker: `unvault` and `is vault_encrypted` read it
          if (e instanceof UndecryptableError) return new VaultMarker(e, node.at);
          throw e;
        }
        // a JavaScript caller's `undefined` is an undefined variable, not None
        if (v !== undefined) return v;
      }
      if (node.name === 'omit') return OMIT;
      if (node.name === 'vars') return scope.root;
      return new Undef(`'${node.name}' is undefined`, node.name, node.at);
    }
    case 'list': {
      const items = node.items.map((i) => evaluate(i, scope, env));
      return fresh(node.tuple ? mkTuple(items) : items);
    }
    case 'dict': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of node.pairs) {
        const key = defined(evaluate(k, scope, env));
        setOwn(out, typeof key === 'string' ? key : pyStr(key), evaluate(v, scope, env));
      }
      return fresh(out);
    }
    case 'attr': {
      const obj = evaluate(node.obj, scope, env);
      return located(orLiquid(getAttr(obj, node.name), obj, node.name, env), node.at);
    }
    case 'item': {
      try {
        const obj = evaluate(node.obj, scope, env);
        const key = evaluate(node.key, scope, env);
        return located(orLiquid(getItem(obj, key), obj, key, env), node.at);
      } catch (e) {
        throw withOffset(e, node.at);
      }
    }
    case 'slice': {
      const part = (e: Expr | undefined): unknown => (e ? defined(evaluate(e, scope, env)) : undefined);
      try {
        return sliceOf(evaluate(node.obj, scope, env), part(node.start), part(node.stop), part(node.step));
      } catch (e) {
        throw withOffset(e, node.at);
      }
    }
    case 'call':
      return evalCall(node, scope, env);
    case 'filter':
      return evalFilter(node, scope, env);
    case 'test':
      return evalTest(node, scope, env);
    case 'unary': {
      const v = evaluate(node.operand, scope, env);
      try {
        if (node.op === 'not') return !truthy(v);
        const d = defined(v);
        if (!isNumber(d) && typeof d !== 'boolean') throw new ExprError(`bad operand type for unary ${node.op}: '${typeName(d)}'`);
        if (typeof d === 'bigint') return node.op === '-' ? mkInt(-d) : d;
        const n = node.op === '-' ? -num(d) : num(d);
        return isFloat(d) ? mkFloat(n) : n === 0 ? 0 : n;
      } catch (e) {
        throw withOffset(e, node.at);
      }
    }
    case 'binary': {
      if (node.op === 'and' || node.op === 'or') {
        const left = evaluate(node.left, scope, env);
        let t: boolean;
        try {
          t = truthy(left);
        } catch (e) {
          throw withOffset(e, node.left.at);
        }
        if (node.op === 'and' ? !t : t) return left;
        return evaluate(node.right, scope, env);
      }
      const left = evaluate(node.left, scope, env);
      const right = evaluate(node.right, scope, env);
      try {
        if (node.op === '~') return sized(pyStr(left) + pyStr(right), node.at);
        return arith(node.op, left, right, node.at);
      } catch (e) {
        throw withOffset(e, node.at);
      }
    }
    case 'compare':
      return compare(node, scope, env);
    case 'cond': {
      let t: boolean;
      try {
        t = truthy(evaluate(node.test, scope, env));
      } catch (e) {
        throw withOffset(e, node.test.at);
      }
      if (t) return evaluate(node.then, scope, env);
      if (node.otherwise) return evaluate(node.otherwise, scope, env);
      return new Undef('the inline if-expression evaluated to false and no else section was defined', 'if', node.at, true);
    }
  }
}

function evalCall(node: Extract<Expr, { type: 'call' }>, scope: Scope, env: EvalEnv): unknown {
  const { args, kwargs } = evalArgs(node, scope, env);
  try {
    if (node.callee.type === 'name' && !scope.has(node.callee.name) && GLOBALS.has(node.callee.name)) {
      return callGlobal(node.callee.name, args, kwargs, scope, env, node.at);
    }
    const callee = evaluate(node.callee, scope, env);
    if (callee instanceof TemplateFunction) return callee.invoke(args, kwargs);
    if (typeof callee === 'function') {
      noUndefinedArgs(args, kwargs);
      return (callee as (a: unknown[], k: Record<string, unknown>) => unknown)(args, kwargs);
    }
    if (callee instanceof PyObject) {
      noUndefinedArgs(args, kwargs);
      return callee.call(args, kwargs);
    }
    if (callee instanceof BoundMethod) {
      noUndefinedArgs(args, kwargs);
      const r = callMethod(callee, args, kwargs);
      return Array.isArray(r) || isMap(r) ? fresh(r) : r;
    }
    if (callee instanceof Undef) throw callee.cause ?? new UndefinedError(callee.message, node.callee.at);
    throw new ExprError(`'${typeName(callee)}' object is not callable`, node.at);
  } catch (e) {
    throw withOffset(e, node.at);
  }
}

function evalFilter(node: Extract<Expr, { type: 'filter' }>, scope: Scope, env: EvalEnv): unknown {
  const def = (node.liquid ? env.registry.liquidFilters.get(node.name) : undefined) ?? env.registry.filters.get(node.name);
  if (!def) throw unknownPlugin('filter', node.name, env.registry.filters.keys(), node.at);
  const value = evaluate(node.value, scope, env);
  const { args, kwargs } = evalArgs(node, scope, env);
  if (!def.acceptsUndefined) {
    const u = firstUndef(value, args, kwargs);
    if (u) return u;
  } else if (value instanceof Undef && value.silent) {
    throw new ExprError("Type 'Undefined' is unsupported for variable storage", node.at, 'give the inline if an else: `a if c else b`');
  }
  try {
    const r = def.fn(value, args, kwargs, env.plugins(scope));
    return (Array.isArray(r) || isMap(r)) && r !== value ? fresh(r) : r;
  } catch (e) {
    return capture(withOffset(e, node.at));
  }
}

/**
 * A plug-in's error as ansible-core 2.19 handles it: not raised at once but returned as a marker
 * ({@link CapturedError}) that the filters after it pass on and any other use raises. Errors about
 * undefined values and kplay's own bounds are raised.
 */
function capture(e: unknown): CapturedError {
  const bound = e instanceof ExprError && (e.message.includes('kplay bounds') || e.message === 'render time limit exceeded');
  if (e instanceof ExprError && !(e instanceof UndefinedError) && !bound) return new CapturedError(e, e.offset);
  throw e;
}

function evalTest(node: Extract<Expr, { type: 'test' }>, scope: Scope, env: EvalEnv): unknown {
  const def = env.registry.tests.get(node.name);
  if (!def) throw unknownPlugin('test', node.name, env.registry.tests.keys(), node.at);
  const value = evaluate(node.value, scope, env);
  const { args, kwargs } = evalArgs(node, scope, env);
  if (!def.acceptsUndefined) {
    const u = firstUndef(value, args, kwargs);
    if (u) return u;
  }
  // a failed plug-in's marker: `is defined` gives it back (it raises when used); a test that reads vault markers is given it
  if (value instanceof CapturedError && !(value instanceof VaultMarker && def.acceptsVaultMarker)) return value;
  try {
    const r = def.fn(value, args, kwargs, env.plugins(scope));
    return node.negated ? !r : r;
  } catch (e) {
    return capture(withOffset(e, node.at));
  }
}

