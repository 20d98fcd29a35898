/**
 * The templating engine: one expression language — Jinja2's expressions as ansible-core 2.19
 * evaluates them, with Liquid's filter syntax and tags also accepted — parsed by a grammar
 * (./parser.ts, ./template.ts) and evaluated over an AST (./evaluate.ts, ./render.ts).
 *
 * - `{{ expr }}` anywhere in a string; a template whose output is one value keeps that value's
 *   type (list, map, number, bool, None), as ansible-core's native rendering does.
 * - Conditions (`when`, `until`, `failed_when`, `changed_when`, `assert.that`) are expressions
 *   without braces, or lists of them (all must hold); the result must be a boolean.
 * - Strict: an undefined variable fails where it is used, naming its first missing part; it
 *   passes through attribute access, `default` and `is defined`, and `and`/`or` short-circuit.
 * - Sandboxed: own properties only, no mutation, files found as Ansible finds them,
 *   bounded parse size, render time and result sizes.
 */
import { InputError, type SourcePos } from '../load/errors.js';
import { copyPos, posOf } from '../load/yaml.js';
import type { Expr } from './ast.js';
import { checkPlugins, evaluate, Scope, type EvalEnv } from './evaluate.js';
import { ExprParser } from './parser.js';
import type { PluginContext } from './plugins.js';
import { REGISTRY } from './registry.js';
import { concat, NodeError, renderNodes } from './render.js';
import { findTemplate, jinjaSearchPath, notFound } from './loader.js';
import { parseTemplate, singleExpression, trailingNewlines, type Delimiters, type TNode } from './template.js';
import { ExprError, isMap, OMIT, toPlain, typeName, Undef, UndefinedError, UndefinedInputError } from './values.js';
import { pyStr } from './pyrepr.js';
import { eachExpr, templateExprs, walkExpr, walkNodes } from './walk.js';

/** Where templates run: what lookups may read. Defaults come from the variables (`playbook_dir`, `role_path`). */
export interface TemplateHost {
  /** Directories searched for relative paths of `file`/`template` lookups, in order. */
  searchPaths?: string[];
  /** Roots outside which no file may be read. */
  fileRoots?: string[];
  /** Register a value that must be masked in every output. */
  addSecret?: (value: string) => void;
  /** Cluster reads for the `k8s` lookup. */
  k8s?: PluginContext['k8s'];
}

/** Options of one render call. */
export interface RenderOptions {
  /** Where the template came from (reported in errors). */
  where?: SourcePos;
  /** What lookups may read (defaults from the variables). */
  host?: TemplateHost;
  /**
   * A whole value that resolves to `omit` stays the omit sentinel instead of failing: for a
   * variable read lazily (`kc: "{{ x | default(omit) }}"` then `kubeconfig: "{{ kc }}"`), as
   * ansible-core 2.19 lets omit flow through variables until a module argument drops it.
   */
  keepOmit?: boolean;
  /** Other delimiters than Jinja's (`[[ x ]]`): a template file's options (kubernetes.core's `template:`). */
  delimiters?: Readonly<Delimiters>;
}

/** Limits and cache size of a {@link Templar} (all optional; defaults suit playbooks). */
export interface TemplarOptions {
  /** Maximum characters parsed per template. @default 4_000_000 */
  parseLimit?: number;
  /** Maximum milliseconds per render / evaluation. @default 5000 */
  renderLimit?: number;
  /** Maximum parsed templates kept in the cache. @default 5000 */
  cacheSize?: number;
}

/** Keys whose values are conditions (checked with {@link Templar.checkCondition} by {@link Templar.check}). */
export const CONDITION_KEYS: ReadonlySet<string> = new Set(['when', 'until', 'failed_when', 'changed_when']);

/** ansible-core's message for a template that recurses without end (Python's RecursionError). */
/** V8's message of a stack overflow (compared whole: a regular expression may overflow again). */
const STACK_OVERFLOW = 'Maximum call stack size exceeded';
const RECURSIVE_LOOP = 'Recursive loop detected in template: maximum recursion depth exceeded';
const HINT_UNDEFINED = "define it in vars, inventory or -e, or give a default: '| default(…)'";
const HINT_MISSING_KEY = "check the key's name and the data (a registered result? `debug: var=…` shows it), or give a default: '| default(…)'";

/** A Map with a maximum size (oldest entry evicted first). */
class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.map.get(key);
  }
  set(key: string, value: V): void {
    if (this.map.size >= this.max) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }
}

const shorten = (text: string, max = 80): string => JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The line of `text` holding offset `at`, and a caret under it. */
function caret(text: string, at: number): string {
  const start = text.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
  let end = text.indexOf('\n', at);
  if (end < 0) end = text.length;
  let line = text.slice(start, end);
  let col = Math.max(0, at - start);
  if (line.length > 100) {
    const from = Math.max(0, col - 50);
    line = (from > 0 ? '…' : '') + line.slice(from, from + 100);
    col = col - from + (from > 0 ? 1 : 0);
  }
  const lineNo = text.slice(0, start).split('\n').length;
  const prefix = text.includes('\n') ? `line ${lineNo}: ` : '';
  return `\n    ${prefix}${line}\n    ${' '.repeat(prefix.length + col)}^`;
}

export class Templar {
  private readonly parseLimit: number;
  private readonly renderLimit: number;
  /** The host of the render under way (set by a render given one): lazily read variables render with it. */
  private ambientHost: TemplateHost | undefined;
  private readonly templates: BoundedCache<TNode[]>;
  private readonly conditions: BoundedCache<{ expr: Expr; at: number }>;

  constructor(opts: TemplarOptions = {}) {
    this.parseLimit = opts.parseLimit ?? 4_000_000;
    this.renderLimit = opts.renderLimit ?? 5_000;
    const size = opts.cacheSize ?? 5000;
    this.templates = new BoundedCache(size);
    this.conditions = new BoundedCache(size);
  }

  /** True when the value is a string holding a template (`{{`, `{%` or `{#`). */
  static isTemplated(value: unknown): boolean {
    return typeof value === 'string' && (value.includes('{{') || value.includes('{%') || value.includes('{#'));
  }

  /** Render a string; a template whose output is one value keeps its native type. */
  async render(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<unknown> {
    return this.renderSync(template, vars, opts);
  }

  /** Render to a string always. */
  async renderString(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<string> {
    return this.renderStringSync(template, vars, opts);
  }

  /**
   * Recursively render every string in a JSON-like value (maps, lists), returning a new value.
   * Keys are not rendered; entries rendered to `omit` are left out. Error positions come from
   * the YAML loader (`posOf(parent, key)`) when known, else `opts.where`.
   */
  async renderValue(value: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<unknown> {
    return this.renderValueSync(value, vars, opts);
  }

  /** Evaluate a condition (string | string[] | boolean); all list entries must hold. */
  async evalCondition(cond: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<boolean> {
    return this.evalConditionSync(cond, vars, opts);
  }

  /**
   * Render and report the value with its Python type name as Ansible would see it (`int`,
   * `float`, `str`, `bool`, `NoneType`, `list`, `dict`): the differential suite against
   * ansible-core's templar compares both.
   */
  renderTyped(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): { value: unknown; type: string } {
    if (!Templar.isTemplated(template)) return { value: template, type: 'str' };
    const raw = this.renderRaw(template, vars, opts);
    const type = typeName(raw);
    // a tuple leaves the engine as a list, as ansible-core's finalized values do
    // ints beyond 2**53 stay exact (bigint) here: the suite compares them digit for digit
    return { value: toPlain(raw, 0, true), type: type === 'tuple' ? 'list' : type };
  }

  /** Synchronous {@link render}. */
  renderSync(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): unknown {
    if (!Templar.isTemplated(template)) return template;
    return this.plain(this.renderRaw(template, vars, opts), template, opts.where);
  }

  /** Synchronous {@link renderString}. */
  renderStringSync(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): string {
    if (!opts.delimiters && !Templar.isTemplated(template)) return template;
    const v = this.renderRaw(template, vars, opts);
    if (typeof v === 'string') return v;
    return v === null ? '' : pyStr(v);
  }

  /** Synchronous {@link renderValue} (e.g. for lazily rendered variables behind getters). */
  renderValueSync(value: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): unknown {
    const out = this.renderValueAt(value, vars, opts.where, opts.host);
    // omit leaves out an argument, an item or an entry; a whole value cannot be omitted
    if (out === OMIT) return opts.keepOmit === true ? OMIT : this.plain(OMIT, typeof value === 'string' ? value : '', opts.where);
    return out;
  }

  /** Synchronous {@link evalCondition}. */
  evalConditionSync(cond: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): boolean {
    if (!opts.host) return this.evalConditionIn(cond, vars, opts);
    // variables read lazily while the condition is evaluated use the same host
    const outer = this.ambientHost;
    this.ambientHost = opts.host;
    try {
      return this.evalConditionIn(cond, vars, opts);
    } finally {
      this.ambientHost = outer;
    }
  }

  private evalConditionIn(cond: unknown, vars: Record<string, unknown>, opts: RenderOptions): boolean {
    if (Array.isArray(cond)) {
      for (let i = 0; i < cond.length; i++) {
        if (!this.evalOne(cond[i], vars, posOf(cond, i) ?? opts.where, opts.host)) return false;
      }
      return true;
    }
    return this.evalOne(cond, vars, opts.where, opts.host);
  }

  /**
   * Evaluate one expression (no braces) to its value, e.g. a module argument that takes an
   * expression. Undefined values fail.
   */
  evalExpression(expr: string, vars: Record<string, unknown>, opts: RenderOptions = {}): unknown {
    const parsed = this.parseCondition(expr, opts.where, 'expression');
    try {
      return this.evaluating(opts.host, (env) => toPlain(evaluate(parsed.expr, new Scope(vars), env)));
    } catch (e) {
      throw this.error('expression', expr, e, parsed.at, opts.where, false);
    }
  }

  /**
   * Static check without variables: parse every template string (and every condition under
   * the keys in {@link CONDITION_KEYS} and `assert.that`) under value. Throws InputError at the
   * string's position.
   */
  check(value: unknown, opts: RenderOptions = {}): void {
    this.checkWalk(value, opts.where, undefined);
  }

  /** Statically check a condition (string | string[] | boolean): syntax and refused tags. */
  checkCondition(cond: unknown, opts: RenderOptions = {}): void {
    if (Array.isArray(cond)) {
      cond.forEach((c, i) => this.checkOneCondition(c, posOf(cond, i) ?? opts.where));
      return;
    }
    this.checkOneCondition(cond, opts.where);
  }

  /** Top-level variable names a template reads (names it sets itself excluded), best effort. */
  variablesOf(template: string): string[] {
    return [...new Set(this.variablePathsOf(template).map((p) => String(p[0])))];
  }

  /**
   * Variable paths a template reads (`hostvars['c1'].mine` → `['hostvars', 'c1', 'mine']`; a
   * dynamic segment ends the path), best effort: `[]` when it cannot be parsed.
   */
  variablePathsOf(template: string): (string | number)[][] {
    if (!Templar.isTemplated(template)) return [];
    try {
      return walkNodes(this.parseTemplate(template, undefined), { skipDefinedTests: false });
    } catch {
      return [];
    }
  }

  /** Variable names a condition reads (top-level; those only tested with `is defined` excluded), best effort. */
  variablesOfCondition(cond: unknown): string[] {
    const out = new Set<string>();
    for (const c of Array.isArray(cond) ? cond : [cond]) {
      if (typeof c !== 'string') continue;
      try {
        const parsed = this.parseCondition(c, undefined, 'condition');
        for (const p of walkExpr(parsed.expr, { skipDefinedTests: true })) out.add(String(p[0]));
      } catch {
        // a syntax error is reported by checkCondition
      }
    }
    return [...out];
  }

  /**
   * The `lookup()`/`query()`/`q()` calls of `names` (e.g. the k8s lookup, whose answers must be
   * read from the cluster before the synchronous render) in every template under `value`, with
   * their arguments evaluated against `vars` — also when the plug-in's name is a variable.
   * Calls whose arguments cannot be evaluated yet are left out (the render reports them).
   */
  lookupCalls(value: unknown, vars: Record<string, unknown>, names: ReadonlySet<string>): { name: string; terms: unknown[]; kwargs: Record<string, unknown> }[] {
    const out: { name: string; terms: unknown[]; kwargs: Record<string, unknown> }[] = [];
    const env = this.env(undefined);
    const scope = new Scope(vars);
    const visit = (v: unknown, depth: number): void => {
      if (depth > 64) return;
      if (typeof v === 'string') {
        if (!Templar.isTemplated(v) || !/\b(lookup|query|q)\s*\(/.test(v)) return;
        let nodes: TNode[];
        try {
          nodes = this.parseTemplate(v, undefined);
        } catch {
          return;
        }
        for (const { expr } of templateExprs(nodes)) {
          eachExpr(expr, (e) => {
            if (e.type !== 'call' || e.callee.type !== 'name' || !['lookup', 'query', 'q'].includes(e.callee.name) || e.args.length === 0) return;
            try {
              const [first, ...rest] = e.args.map((a) => toPlain(evaluate(a, scope, env)));
              if (typeof first !== 'string' || !names.has(first)) return;
              const kwargs: Record<string, unknown> = {};
              for (const [k, x] of e.kwargs) kwargs[k] = toPlain(evaluate(x, scope, env));
              out.push({ name: first, terms: rest, kwargs });
            } catch {
              // arguments that depend on loop variables or fail: the render says why
            }
          });
        }
      } else if (Array.isArray(v)) v.forEach((x) => visit(x, depth + 1));
      else if (isMap(v)) Object.values(v).forEach((x) => visit(x, depth + 1));
    };
    visit(value, 0);
    return out;
  }

  // ---- internals -------------------------------------------------------------------------

  private env(given: TemplateHost | undefined, readLiquid = false): EvalEnv {
    const deadline = Date.now() + this.renderLimit;
    const host = given ?? this.ambientHost;
    let searchPath: string[] | undefined;
    return {
      registry: REGISTRY,
      deadline,
      plugins: (scope) => this.pluginContext(scope, host),
      liquid: { read: readLiquid, met: false },
      loadTemplate: (names, scope, ignoreMissing) => {
        // one search path for the render, as a Jinja environment's loader (nested includes use it too)
        searchPath ??= jinjaSearchPath(scope);
        const found = findTemplate(names, searchPath);
        if (!found) {
          if (ignoreMissing) return undefined;
          throw notFound(names, searchPath);
        }
        return { name: found.name, nodes: this.parseTemplate(found.text, undefined) };
      },
    };
  }

  /**
   * Run one evaluation with Jinja's rules; when it fails after meeting a Liquid property Jinja has
   * no value for (`list.size`), run it again reading Liquid's properties (older kplay playbooks).
   */
  private evaluating<T>(host: TemplateHost | undefined, run: (env: EvalEnv) => T): T {
    const env = this.env(host);
    try {
      return run(env);
    } catch (e) {
      if (!env.liquid.met) throw e;
      return run(this.env(host, true));
    }
  }

  private pluginContext(scope: Scope, host: TemplateHost | undefined): PluginContext {
    const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
    const dirs = (): string[] => {
      // ansible-core's lookups search `ansible_search_path` (the role, the task file's directory, the playbook's)
      const sp = scope.has('ansible_search_path') ? toPlain(scope.lookup('ansible_search_path')) : undefined;
      if (Array.isArray(sp) && sp.length > 0 && sp.every((d): d is string => typeof d === 'string')) return sp;
      const out: string[] = [];
      for (const k of ['role_path', 'playbook_dir']) {
        const d = str(scope.has(k) ? scope.lookup(k) : undefined);
        if (d) out.push(d);
      }
      if (out.length === 0) out.push(process.cwd());
      return out;
    };
    return {
      variable: (name) => (scope.has(name) ? scope.lookup(name) : new Undef(`'${name}' is undefined`, name)),
      variableNames: () => scope.names(),
      render: (template, extra, delimiters) => {
        const s = extra ? scope.child() : scope;
        if (extra) for (const [k, v] of Object.entries(extra)) s.locals.set(k, v);
        return toPlain(this.renderInScope(template, s, host, undefined, delimiters));
      },
      searchPaths: host?.searchPaths ?? dirs(),
      inRole: str(scope.has('role_path') ? scope.lookup('role_path') : undefined) !== undefined,
      fileRoots: host?.fileRoots ?? [...dirs(), ...[str(scope.has('inventory_dir') ? scope.lookup('inventory_dir') : undefined)].filter((d): d is string => d !== undefined)],
      env: process.env,
      addSecret: host?.addSecret ?? (() => undefined),
      ...(host?.k8s ? { k8s: host.k8s } : {}),
    };
  }

  /** Render to the internal value (PyFloat kept). */
  private renderRaw(template: string, vars: Record<string, unknown>, opts: RenderOptions): unknown {
    if (!opts.host) return this.renderInScope(template, new Scope(vars), undefined, opts.where, opts.delimiters);
    // variables read lazily during this render (their own templates) use the same host
    const outer = this.ambientHost;
    this.ambientHost = opts.host;
    try {
      return this.renderInScope(template, new Scope(vars), opts.host, opts.where, opts.delimiters);
    } finally {
      this.ambientHost = outer;
    }
  }

  private renderInScope(template: string, scope: Scope, host: TemplateHost | undefined, where: SourcePos | undefined, delimiters?: Readonly<Delimiters>): unknown {
    const nodes = this.parseTemplate(template, where, delimiters);
    let parts: unknown[] = [];
    try {
      this.evaluating(host, (env) => {
        parts = [];
        renderNodes(nodes, scope, env, parts);
      });
    } catch (e) {
      if (e instanceof NodeError) throw this.error('template', template, e.cause, e.at, where, true);
      throw this.error('template', template, e, undefined, where, true);
    }
    const result = concat(parts);
    if (typeof result === 'string') {
      const missing = trailingNewlines(template) - trailingNewlines(result);
      if (missing > 0) return result + '\n'.repeat(missing);
    }
    return result;
  }

  /** Unbox floats of a rendered value; an undefined deep inside fails here. */
  private plain(v: unknown, template: string, where: SourcePos | undefined): unknown {
    try {
      return toPlain(v);
    } catch (e) {
      throw this.error('template', template, e, undefined, where, true);
    }
  }

  private renderValueAt(value: unknown, vars: Record<string, unknown>, where: SourcePos | undefined, host: TemplateHost | undefined): unknown {
    if (typeof value === 'string') {
      if (!Templar.isTemplated(value)) return value;
      const raw = this.renderRaw(value, vars, { where, ...(host ? { host } : {}) });
      return raw === OMIT ? OMIT : this.plain(raw, value, where);
    }
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      value.forEach((item, i) => {
        const r = this.renderValueAt(item, vars, posOf(value, i) ?? where, host);
        if (r !== OMIT) out.push(r);
      });
      copyPos(value, out);
      return out;
    }
    if (isMap(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const r = this.renderValueAt(v, vars, posOf(value, k) ?? where, host);
        if (r === OMIT) continue;
        Object.defineProperty(out, k, { value: r, enumerable: true, writable: true, configurable: true });
      }
      copyPos(value, out);
      return out;
    }
    return value;
  }

  private evalOne(cond: unknown, vars: Record<string, unknown>, where: SourcePos | undefined, host: TemplateHost | undefined): boolean {
    if (typeof cond === 'boolean') return cond;
    if (typeof cond !== 'string') throw this.badCondition(cond, where);
    // `when: "{{ x }}"`: x's value decides; a string value is evaluated again as an expression (as ansible-core)
    const braced = Templar.isTemplated(cond) && singleExpression(cond.trim()) !== undefined;
    const parsed = this.parseCondition(cond, where, 'condition');
    let result: unknown;
    try {
      result = this.evaluating(host, (env) => toPlain(evaluate(parsed.expr, new Scope(vars), env)));
    } catch (e) {
      throw this.error('condition', cond, e, parsed.at, where, false);
    }
    if (braced && typeof result === 'string' && result.trim() !== '') {
      const again = this.parseCondition(result, where, 'condition');
      try {
        result = this.evaluating(host, (env) => toPlain(evaluate(again.expr, new Scope(vars), env)));
      } catch (e) {
        throw this.error('condition', result as string, e, again.at, where, false);
      }
    }
    if (typeof result === 'boolean') return result;
    // As ansible-core 2.19: a condition must decide with a boolean, not with the truthiness of a
    // list, string, number or None (an empty list would otherwise run the task).
    const type = typeName(result);
    const shown = JSON.stringify(result) ?? String(result);
    throw new InputError(
      `condition ${shorten(cond)} has a ${type} result (${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown}), not a boolean: conditions must have a boolean result`,
      where,
      type === 'list' || type === 'dict' ? 'test it explicitly, e.g. `x | length > 0`' : type === 'str' ? 'compare it (`x == "yes"`) or cast it with `x | bool`' : 'compare it explicitly, e.g. `x != 0` or `x is not none`',
    );
  }

  private checkOneCondition(cond: unknown, where: SourcePos | undefined): void {
    if (typeof cond === 'boolean') return;
    if (typeof cond !== 'string') throw this.badCondition(cond, where);
    this.parseCondition(cond, where, 'condition');
  }

  private badCondition(cond: unknown, where: SourcePos | undefined): InputError {
    const what = cond === null ? 'null' : Array.isArray(cond) ? 'a nested list' : typeof cond;
    return new InputError(`invalid condition: expected a string, a list of strings or a boolean, got ${what}`, where, 'write a condition such as: env == "prod" and not skip');
  }

  private checkWalk(value: unknown, where: SourcePos | undefined, parentKey: string | undefined): void {
    if (typeof value === 'string') {
      if (Templar.isTemplated(value)) this.parseTemplate(value, where);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.checkWalk(item, posOf(value, i) ?? where, undefined));
      return;
    }
    if (isMap(value)) {
      for (const [k, v] of Object.entries(value)) {
        const at = posOf(value, k) ?? where;
        if (CONDITION_KEYS.has(k) || (k === 'that' && parentKey === 'assert')) {
          if (Array.isArray(v)) v.forEach((c, i) => this.checkOneCondition(c, posOf(v, i) ?? at));
          else this.checkOneCondition(v, at);
        } else {
          this.checkWalk(v, at, k);
        }
      }
    }
  }

  private parseTemplate(template: string, where: SourcePos | undefined, delimiters?: Readonly<Delimiters>): TNode[] {
    // other delimiters: the same text is another template
    const key = delimiters ? `${JSON.stringify(delimiters)}\0${template}` : template;
    const hit = this.templates.get(key);
    if (hit) return hit;
    if (template.length > this.parseLimit) throw new InputError(`template error in ${shorten(template)}: the template is longer than ${this.parseLimit} characters`, where, 'kplay limits template size');
    let nodes: TNode[];
    try {
      nodes = parseTemplate(template, delimiters);
      for (const { expr, at } of templateExprs(nodes)) checkPlugins(expr, at, REGISTRY);
    } catch (e) {
      throw this.error('template', template, e, undefined, where, false);
    }
    this.templates.set(key, nodes);
    return nodes;
  }

  /** A condition's expression (a `{{ … }}` around it is accepted and stripped). */
  private parseCondition(cond: string, where: SourcePos | undefined, kind: 'condition' | 'expression'): { expr: Expr; at: number } {
    const hit = this.conditions.get(cond);
    if (hit) return hit;
    const single = singleExpression(cond.trim());
    const lead = cond.length - cond.trimStart().length;
    const src = single ? single.src : cond;
    const at = single ? lead + single.at : 0;
    let parsed: { expr: Expr; at: number };
    if (!single && /\{\{|\{%/.test(cond)) {
      const k = cond.search(/\{\{|\{%/);
      throw this.error(kind, cond, new ExprError('template delimiters are not supported in expressions', undefined, `write the expression without {{ }}, e.g. ${JSON.stringify(cond.replace(/\{\{\s*|\s*\}\}/g, ''))}`), k, where, true);
    }
    try {
      parsed = { expr: ExprParser.parse(src), at };
      checkPlugins(parsed.expr, 0, REGISTRY);
    } catch (e) {
      throw this.error(kind, cond, e, at, where, false);
    }
    this.conditions.set(cond, parsed);
    return parsed;
  }

  /**
   * Turn anything thrown while parsing or evaluating into an InputError naming the template, with
   * a caret: at `at` when `absolute`, else at `at` (the expression's start) plus the error's own offset.
   */
  private error(kind: 'template' | 'condition' | 'expression', template: string, e: unknown, at: number | undefined, where: SourcePos | undefined, absolute: boolean): InputError {
    // an InputError raised while reading a variable (a lazily rendered var that failed) keeps its own message and position
    if (e instanceof InputError) return e;
    const undefinedUse = e instanceof UndefinedError;
    // JavaScript's stack overflow is Python's RecursionError: ansible-core's message
    const msg = e instanceof RangeError && e.message === STACK_OVERFLOW ? RECURSIVE_LOOP : e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e);
    const own = e instanceof ExprError ? e.offset : undefined;
    const offset = absolute ? (at ?? own) : own !== undefined || at !== undefined ? (at ?? 0) + (own ?? 0) : undefined;
    const hint = e instanceof ExprError && e.hint ? e.hint : e instanceof UndefinedError ? (/ is undefined$/.test(msg) ? HINT_UNDEFINED : HINT_MISSING_KEY) : undefined;
    const pointer = offset !== undefined ? caret(template, offset) : '';
    const Err = undefinedUse ? UndefinedInputError : InputError;
    return new Err(`${kind} error in ${shorten(template)}: ${msg}${pointer}`, where, hint);
  }
}

/** The shared engine. */
export const templar = new Templar();
