/**
 * Static analysis of parsed templates: the variable paths they read (for `kplay validate`'s
 * warnings and for secret tainting). Names a template binds itself (loop targets, `set`,
 * macro parameters, `loop`) are not variables of the task.
 */
import type { Expr } from './ast.js';
import type { TNode } from './template.js';

/** Options of a walk. */
export interface WalkOptions {
  /** Leave out names that are only tested with `is defined` / `is undefined`. */
  readonly skipDefinedTests: boolean;
}

type Path = (string | number)[];

/** The constant path of an access chain (`a.b[0]['c']`), or undefined when it starts elsewhere. */
function pathOf(e: Expr): Path | undefined {
  switch (e.type) {
    case 'name':
      return [e.name];
    case 'attr': {
      const p = pathOf(e.obj);
      return p ? [...p, e.name] : undefined;
    }
    case 'item': {
      const p = pathOf(e.obj);
      if (!p) return undefined;
      if (e.key.type === 'literal' && (typeof e.key.value === 'string' || typeof e.key.value === 'number')) return [...p, e.key.value];
      return p;
    }
    default:
      return undefined;
  }
}

/** Variable paths read by an expression (`bound` names excluded). */
export function walkExpr(e: Expr, opts: WalkOptions, bound: ReadonlySet<string> = new Set(), out: Path[] = []): Path[] {
  const visit = (x: Expr | undefined): void => {
    if (x) walkExpr(x, opts, bound, out);
  };
  switch (e.type) {
    case 'literal':
      return out;
    case 'name':
    case 'attr':
    case 'item': {
      const p = pathOf(e);
      if (p) {
        if (!bound.has(String(p[0]))) out.push(p);
        // a dynamic subscript reads variables too (`hostvars[name]`)
        for (let cur: Expr = e; cur.type === 'attr' || cur.type === 'item'; cur = cur.obj) if (cur.type === 'item') visit(cur.key);
        return out;
      }
      if (e.type === 'attr') visit(e.obj);
      else if (e.type === 'item') {
        visit(e.obj);
        visit(e.key);
      }
      return out;
    }
    case 'list':
      e.items.forEach(visit);
      return out;
    case 'dict':
      for (const [k, v] of e.pairs) {
        visit(k);
        visit(v);
      }
      return out;
    case 'slice':
      [e.obj, e.start, e.stop, e.step].forEach(visit);
      return out;
    case 'call':
      // global functions are not variables
      if (e.callee.type !== 'name') visit(e.callee);
      e.args.forEach(visit);
      e.kwargs.forEach(([, v]) => visit(v));
      visit(e.star);
      visit(e.starstar);
      return out;
    case 'filter':
      visit(e.value);
      e.args.forEach(visit);
      e.kwargs.forEach(([, v]) => visit(v));
      return out;
    case 'test':
      if (!(opts.skipDefinedTests && (e.name === 'defined' || e.name === 'undefined'))) visit(e.value);
      e.args.forEach(visit);
      e.kwargs.forEach(([, v]) => visit(v));
      return out;
    case 'unary':
      visit(e.operand);
      return out;
    case 'binary':
      visit(e.left);
      visit(e.right);
      return out;
    case 'compare':
      visit(e.first);
      e.rest.forEach((r) => visit(r.expr));
      return out;
    case 'cond':
      visit(e.test);
      visit(e.then);
      visit(e.otherwise);
      return out;
  }
}

/** Variable paths read by template nodes (names the template binds excluded). */
export function walkNodes(nodes: readonly TNode[], opts: WalkOptions, bound: Set<string> = new Set(['loop', 'forloop', 'omit', 'vars']), out: Path[] = []): Path[] {
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        break;
      case 'output':
        walkExpr(n.expr, opts, bound, out);
        break;
      case 'with':
        for (const [, e] of n.targets) walkExpr(e, opts, bound, out);
        walkNodes(n.body, opts, new Set([...bound, ...n.targets.map(([k]) => k)]), out);
        break;
      case 'if':
        for (const b of n.branches) {
          walkExpr(b.test, opts, bound, out);
          walkNodes(b.body, opts, bound, out);
        }
        if (n.otherwise) walkNodes(n.otherwise, opts, bound, out);
        break;
      case 'for': {
        walkExpr(n.iter, opts, bound, out);
        const inner = new Set([...bound, ...n.targets]);
        if (n.filter) walkExpr(n.filter, opts, inner, out);
        walkNodes(n.body, opts, inner, out);
        if (n.otherwise) walkNodes(n.otherwise, opts, bound, out);
        break;
      }
      case 'set':
        walkExpr(n.expr, opts, bound, out);
        if (n.attr === undefined) for (const t of n.targets) bound.add(t);
        break;
      case 'setblock':
        walkNodes(n.body, opts, bound, out);
        if (n.filters) walkExpr(n.filters, opts, new Set([...bound, n.target]), out);
        bound.add(n.target);
        break;
      case 'case':
        walkExpr(n.subject, opts, bound, out);
        for (const w of n.whens) {
          w.values.forEach((v) => walkExpr(v, opts, bound, out));
          walkNodes(w.body, opts, bound, out);
        }
        if (n.otherwise) walkNodes(n.otherwise, opts, bound, out);
        break;
      case 'filterblock':
        walkNodes(n.body, opts, bound, out);
        walkExpr(n.filter, opts, new Set([...bound, '__filter_input__']), out);
        break;
      case 'include':
        walkExpr(n.expr, opts, bound, out);
        break;
      case 'import':
        walkExpr(n.expr, opts, bound, out);
        if (n.alias !== undefined) bound.add(n.alias);
        for (const [, as] of n.names ?? []) bound.add(as);
        break;
      case 'macro':
        bound.add(n.name);
        walkNodes(n.body, opts, new Set([...bound, ...n.params.map((p) => p.name), 'varargs', 'kwargs']), out);
        break;
    }
  }
  return out;
}

/** The sub-expressions of an expression. */
function children(e: Expr): (Expr | undefined)[] {
  switch (e.type) {
    case 'literal':
    case 'name':
      return [];
    case 'list':
      return [...e.items];
    case 'dict':
      return e.pairs.flatMap(([k, v]) => [k, v]);
    case 'attr':
      return [e.obj];
    case 'item':
      return [e.obj, e.key];
    case 'slice':
      return [e.obj, e.start, e.stop, e.step];
    case 'call':
      return [e.callee, ...e.args, ...e.kwargs.map(([, v]) => v), e.star, e.starstar];
    case 'filter':
    case 'test':
      return [e.value, ...e.args, ...e.kwargs.map(([, v]) => v), e.star, e.starstar];
    case 'unary':
      return [e.operand];
    case 'binary':
      return [e.left, e.right];
    case 'compare':
      return [e.first, ...e.rest.map((r) => r.expr)];
    case 'cond':
      return [e.test, e.then, e.otherwise];
  }
}

/** Call `fn` on every node of an expression (pre-order). */
export function eachExpr(e: Expr, fn: (e: Expr) => void): void {
  fn(e);
  for (const c of children(e)) if (c) eachExpr(c, fn);
}

/** Every expression of template nodes, with the offset its source starts at in the template. */
export function templateExprs(nodes: readonly TNode[], out: { expr: Expr; at: number }[] = []): { expr: Expr; at: number }[] {
  for (const n of nodes) {
    switch (n.type) {
      case 'text':
        break;
      case 'with':
        for (const [, e] of n.targets) out.push({ expr: e, at: n.at });
        templateExprs(n.body, out);
        break;
      case 'output':
      case 'set':
      case 'include':
      case 'import':
        out.push({ expr: n.expr, at: n.at });
        break;
      case 'if':
        for (const b of n.branches) {
          out.push({ expr: b.test, at: b.at });
          templateExprs(b.body, out);
        }
        if (n.otherwise) templateExprs(n.otherwise, out);
        break;
      case 'for':
        out.push({ expr: n.iter, at: n.at });
        if (n.filter) out.push({ expr: n.filter, at: n.at });
        templateExprs(n.body, out);
        if (n.otherwise) templateExprs(n.otherwise, out);
        break;
      case 'setblock':
        if (n.filters) out.push({ expr: n.filters, at: n.at });
        templateExprs(n.body, out);
        break;
      case 'case':
        out.push({ expr: n.subject, at: n.at });
        for (const w of n.whens) {
          for (const v of w.values) out.push({ expr: v, at: n.at });
          templateExprs(w.body, out);
        }
        if (n.otherwise) templateExprs(n.otherwise, out);
        break;
      case 'filterblock':
        out.push({ expr: n.filter, at: n.at });
        templateExprs(n.body, out);
        break;
      case 'macro':
        for (const p of n.params) if (p.def) out.push({ expr: p.def, at: n.at });
        templateExprs(n.body, out);
        break;
    }
  }
  return out;
}
