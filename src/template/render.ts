/**
 * Rendering template nodes (./template.ts) with the evaluator (./evaluate.ts). The result is
 * what ansible-core 2.19's native concatenation gives: no output → None; exactly one output
 * part → that value with its own type (`{{ replicas }}` stays an int, `{% if x %}{{ l }}{% endif %}`
 * a list); several → their `str()`s joined (None parts left out).
 */
import { evaluate, NAMESPACES, Scope, TemplateFunction, type EvalEnv } from './evaluate.js';
import type { TNode } from './template.js';
import { defined, ExprError, isMap, iterate, pyEq, setOwn, truthy, Undef, UndefinedError } from './values.js';
import { pyStr } from './pyrepr.js';

/** An error inside a template node, with the node's offset and source for the message. */
export class NodeError extends Error {
  constructor(
    override readonly cause: unknown,
    /** Offset of the failing expression in the template text. */
    readonly at: number,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

function guard<T>(at: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof NodeError) throw e;
    throw new NodeError(e, at + (e instanceof ExprError ? (e.offset ?? 0) : 0));
  }
}

/** Render nodes into `parts` (None outputs are left out, as ansible-core does). */
export function renderNodes(nodes: readonly TNode[], scope: Scope, env: EvalEnv, parts: unknown[]): void {
  for (const node of nodes) {
    switch (node.type) {
      case 'text':
        if (node.text !== '') parts.push(node.text);
        break;
      case 'output': {
        // a silent undefined (an inline if without else) prints as nothing beside other output, and fails alone (see concat)
        const v = guard(node.at, () => {
          const r = evaluate(node.expr, scope, env);
          return r instanceof Undef && r.silent ? r : defined(r);
        });
        if (v !== null && v !== undefined) parts.push(v);
        break;
      }
      case 'if': {
        let done = false;
        for (const b of node.branches) {
          const t = guard(b.at, () => truthy(evaluate(b.test, scope, env)));
          if (t !== (node.negate === true)) {
            renderNodes(b.body, scope, env, parts);
            done = true;
            break;
          }
        }
        if (!done && node.otherwise) renderNodes(node.otherwise, scope, env, parts);
        break;
      }
      case 'for':
        renderFor(node, scope, env, parts);
        break;
      case 'set': {
        const value = guard(node.at, () => evaluate(node.expr, scope, env));
        guard(node.at, () => assign(scope, node.targets, node.attr, value));
        break;
      }
      case 'setblock': {
        const inner: unknown[] = [];
        renderNodes(node.body, scope.child(), env, inner);
        let value: unknown = inner.map(pyStr).join('');
        if (node.filters) {
          const filters = node.filters;
          value = guard(node.at, () => {
            const s = scope.child();
            s.locals.set(node.target, value);
            return evaluate(filters, s, env);
          });
        }
        scope.locals.set(node.target, value);
        break;
      }
      case 'case': {
        const subject = guard(node.at, () => evaluate(node.subject, scope, env));
        const hit = node.whens.find((w) => w.values.some((v) => guard(node.at, () => pyEq(defined(subject), defined(evaluate(v, scope, env))))));
        if (hit) renderNodes(hit.body, scope, env, parts);
        else if (node.otherwise) renderNodes(node.otherwise, scope, env, parts);
        break;
      }
      case 'filterblock': {
        const inner: unknown[] = [];
        renderNodes(node.body, scope.child(), env, inner);
        const s = scope.child();
        s.locals.set('__filter_input__', inner.map(pyStr).join(''));
        const v = guard(node.at, () => defined(evaluate(node.filter, s, env)));
        if (v !== null) parts.push(v);
        break;
      }
      case 'macro':
        scope.locals.set(node.name, macro(node, scope, env));
        break;
      case 'with': {
        const s = scope.child();
        for (const [k, e] of node.targets) s.locals.set(k, guard(node.at, () => evaluate(e, scope, env)));
        renderNodes(node.body, s, env, parts);
        break;
      }
      case 'include': {
        const t = loaded(node, scope, env, node.ignoreMissing);
        if (t) inFile(node.at, t.name, () => renderNodes(t.nodes, node.withContext ? scope.child() : new Scope({}), env, parts));
        break;
      }
      case 'import': {
        const t = loaded(node, scope, env, false);
        if (!t) break;
        // Jinja's template module: the top-level names the file sets (macros, `set`), not those starting with `_`
        const s = node.withContext ? scope.child() : new Scope({});
        inFile(node.at, t.name, () => renderNodes(t.nodes, s, env, []));
        const exported: Record<string, unknown> = {};
        for (const [k, v] of s.locals) if (!k.startsWith('_')) exported[k] = v;
        if (node.alias !== undefined) scope.locals.set(node.alias, exported);
        for (const [n, as] of node.names ?? []) {
          scope.locals.set(as, Object.prototype.hasOwnProperty.call(exported, n) ? exported[n] : new Undef(`the template '${t.name}' does not export the requested name '${n}'`, n));
        }
        break;
      }
    }
  }
}

/** The file an include or import names (a name, or a list of names: the first found). */
function loaded(node: Extract<TNode, { type: 'include' | 'import' }>, scope: Scope, env: EvalEnv, ignoreMissing: boolean): { name: string; nodes: readonly TNode[] } | undefined {
  return guard(node.at, () => {
    const v = defined(evaluate(node.expr, scope, env));
    const names = Array.isArray(v) ? v.map((x) => pyStr(x)) : [pyStr(v)];
    if (!env.loadTemplate) throw new ExprError(`cannot read the template ${names.join(', ')}: this template has no search path`);
    return env.loadTemplate(names, scope, ignoreMissing);
  });
}

/** Render an included file's nodes: an error inside points at the include tag and names the file. */
function inFile(at: number, name: string, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    const cause = e instanceof NodeError ? e.cause : e;
    const msg = cause instanceof Error ? cause.message : String(cause);
    const err = new ExprError(`${msg} (in '${name}')`);
    throw new NodeError(cause instanceof UndefinedError ? new UndefinedError(err.message) : err, at);
  }
}

function assign(scope: Scope, targets: readonly string[], attr: string | undefined, value: unknown): void {
  if (attr !== undefined) {
    const ns = scope.lookup(targets[0] ?? '');
    if (!isMap(ns) || !NAMESPACES.has(ns)) throw new ExprError(`cannot assign attribute on non-namespace object: only namespace() objects can be changed ({% set ${targets[0] ?? ''}.${attr} = … %})`);
    setOwn(ns, attr, value);
    return;
  }
  if (targets.length === 1) {
    scope.locals.set(targets[0] ?? '', value);
    return;
  }
  const items = iterate(value);
  if (items.length !== targets.length) throw new ExprError(`cannot unpack ${items.length} values into ${targets.length} names`);
  targets.forEach((t, i) => scope.locals.set(t, items[i]));
}

function renderFor(node: Extract<TNode, { type: 'for' }>, scope: Scope, env: EvalEnv, parts: unknown[]): void {
  let items = guard(node.at, () => iterate(evaluate(node.iter, scope, env)));
  const bind = (s: Scope, item: unknown): void => {
    if (node.targets.length === 1) s.locals.set(node.targets[0] ?? '', item);
    else guard(node.at, () => assign(s, node.targets, undefined, item));
  };
  if (node.filter) {
    const filter = node.filter;
    items = items.filter((item) => {
      const s = scope.child();
      bind(s, item);
      return guard(node.at, () => truthy(evaluate(filter, s, env)));
    });
  }
  if (items.length === 0) {
    if (node.otherwise) renderNodes(node.otherwise, scope, env, parts);
    return;
  }
  const n = items.length;
  for (let i = 0; i < n; i++) {
    const s = scope.child();
    bind(s, items[i]);
    const loop: Record<string, unknown> = {
      index: i + 1, index0: i, revindex: n - i, revindex0: n - i - 1, first: i === 0, last: i === n - 1, length: n, depth: 1, depth0: 0,
      previtem: i > 0 ? items[i - 1] : new Undef("there is no previous item", 'previtem'),
      nextitem: i < n - 1 ? items[i + 1] : new Undef("there is no next item", 'nextitem'),
      cycle: new TemplateFunction('cycle', (args) => {
        if (args.length === 0) throw new ExprError('no items for cycling given');
        return args[i % args.length];
      }),
      changed: new TemplateFunction('changed', () => true),
    };
    s.locals.set('loop', loop);
    // Liquid's forloop
    s.locals.set('forloop', { index: i + 1, index0: i, rindex: n - i, rindex0: n - i - 1, first: i === 0, last: i === n - 1, length: n });
    renderNodes(node.body, s, env, parts);
  }
}

function macro(node: Extract<TNode, { type: 'macro' }>, scope: Scope, env: EvalEnv): TemplateFunction {
  return new TemplateFunction(node.name, (args, kwargs) => {
    const s = scope.child();
    node.params.forEach((p, i) => {
      const v = i < args.length ? args[i] : Object.prototype.hasOwnProperty.call(kwargs, p.name) ? kwargs[p.name] : p.def ? evaluate(p.def, scope, env) : new Undef(`'${p.name}' is undefined`, p.name);
      s.locals.set(p.name, v);
    });
    s.locals.set('varargs', args.slice(node.params.length));
    s.locals.set('kwargs', Object.fromEntries(Object.entries(kwargs).filter(([k]) => !node.params.some((p) => p.name === k))));
    const out: unknown[] = [];
    renderNodes(node.body, s, env, out);
    return out.map(pyStr).join('');
  });
}

/** ansible-core's concatenation of rendered parts. */
export function concat(parts: unknown[]): unknown {
  if (parts.length === 0) return null;
  if (parts.length === 1) {
    const only = parts[0];
    if (only instanceof Undef) throw new ExprError("Type 'Undefined' is unsupported for variable storage", only.offset, 'give the inline if an else: `a if c else b`');
    return only;
  }
  return parts.map((p) => (p instanceof Undef ? '' : pyStr(p))).join('');
}
