/**
 * The expression parser: Jinja2's grammar (precedence climbing exactly as jinja2/parser.py), with
 * Liquid's filter arguments (`x | default: 3, allow_false: true`) and ranges (`(1..5)`) accepted.
 *
 * Precedence, loosest first: `a if c else b` · `or` · `and` · `not` · comparisons (`== != < <= > >=
 * in not in`, chained) · `+ -` · `~` · `* / // %` · `**` (left-associative, as Jinja) · unary `- +` ·
 * primary with postfix (`.attr`, `[key]`, `[a:b]`, `(call)`) · filters and tests (`| f`, `is t`).
 */
import type { Args, CompareOp, Expr } from './ast.js';
import { tokenize, type Token } from './lexer.js';
import { ExprError, PyFloat } from './values.js';

const COMPARE_OPS: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=', '<>']);
/** Names after `is name` that end the test instead of being its argument. */
const NOT_A_TEST_ARG: ReadonlySet<string> = new Set(['else', 'or', 'and', 'if', 'in', 'not', 'is']);
const LITERALS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['true', true], ['True', true], ['false', false], ['False', false], ['none', null], ['None', null], ['nil', null],
]);

/** A parser over the tokens of one expression source. */
export class ExprParser {
  private readonly toks: Token[];
  private i = 0;

  /** @param rawStrings string literals keep their backslashes (the `{{ … }}` of templates: see {@link tokenize}). */
  constructor(
    readonly src: string,
    rawStrings = false,
  ) {
    this.toks = tokenize(src, rawStrings);
  }

  /** Parse the whole source as one expression. */
  static parse(src: string, rawStrings = false): Expr {
    const p = new ExprParser(src, rawStrings);
    const e = p.expression();
    p.expectEnd();
    return e;
  }

  // ---- token helpers (used by the template parser too) ------------------------------------

  /** The current token. */
  peek(offset = 0): Token {
    return this.toks[Math.min(this.i + offset, this.toks.length - 1)] as Token;
  }

  /** Whether the current token is the operator `op`. */
  isOp(op: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && t.value === op;
  }

  /** Whether the current token is the name `name`. */
  isName(name: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'name' && t.value === name;
  }

  /** Consume the current token. */
  next(): Token {
    const t = this.peek();
    if (t.kind !== 'end') this.i++;
    return t;
  }

  /** Consume the operator `op` or fail. */
  expectOp(op: string): Token {
    if (!this.isOp(op)) throw this.unexpected(`"${op}"`);
    return this.next();
  }

  /** Consume a name (a specific one when given) or fail. */
  expectName(name?: string): string {
    const t = this.peek();
    if (t.kind !== 'name' || (name !== undefined && t.value !== name)) throw this.unexpected(name !== undefined ? `"${name}"` : 'a name');
    this.next();
    return t.value;
  }

  /** Fail unless every token was consumed. */
  expectEnd(): void {
    if (this.peek().kind !== 'end') throw this.unexpected('the end of the expression');
  }

  /** Whether every token was consumed. */
  atEnd(): boolean {
    return this.peek().kind === 'end';
  }

  /** An error at the current token. */
  unexpected(expected: string): ExprError {
    const t = this.peek();
    const got = t.kind === 'end' ? 'the end of the expression' : t.kind === 'string' ? `string ${JSON.stringify(t.value)}` : `"${String(t.value)}"`;
    let hint: string | undefined;
    if (t.kind === 'name' && this.peek(-1).kind !== 'op') hint = 'two values without an operator between them: a missing `and`, `or`, `~` or `|`?';
    return new ExprError(`expected ${expected}, got ${got}`, t.at, hint);
  }

  // ---- grammar ---------------------------------------------------------------------------

  /** An expression; `withCond: false` stops before `if` (the `for … in xs if c` filter). */
  expression(withCond = true): Expr {
    return withCond ? this.condExpr() : this.or();
  }

  /** `a, b, c` without brackets (a tuple when there is a comma), as `{% for %}` and `{% set %}` take it. */
  tuple(withCond = true): Expr {
    const at = this.peek().at;
    const first = this.expression(withCond);
    if (!this.isOp(',')) return first;
    const items = [first];
    while (this.isOp(',')) {
      this.next();
      if (this.atEnd() || this.isName('if') || this.isName('in')) break;
      items.push(this.expression(withCond));
    }
    return { type: 'list', items, tuple: true, at };
  }

  private condExpr(): Expr {
    let e = this.or();
    while (this.isName('if')) {
      const at = this.next().at;
      const test = this.or();
      let otherwise: Expr | undefined;
      if (this.isName('else')) {
        this.next();
        otherwise = this.condExpr();
      }
      e = { type: 'cond', test, then: e, otherwise, at };
    }
    return e;
  }

  private or(): Expr {
    let left = this.and();
    while (this.isName('or')) {
      const at = this.next().at;
      left = { type: 'binary', op: 'or', left, right: this.and(), at };
    }
    return left;
  }

  private and(): Expr {
    let left = this.not();
    while (this.isName('and')) {
      const at = this.next().at;
      left = { type: 'binary', op: 'and', left, right: this.not(), at };
    }
    return left;
  }

  private not(): Expr {
    if (this.isName('not')) {
      const at = this.next().at;
      return { type: 'unary', op: 'not', operand: this.not(), at };
    }
    return this.compare();
  }

  private compare(): Expr {
    const first = this.math1();
    const rest: { op: CompareOp; expr: Expr; at: number }[] = [];
    for (;;) {
      const t = this.peek();
      let op: CompareOp | undefined;
      if (t.kind === 'op' && COMPARE_OPS.has(t.value)) {
        this.next();
        op = t.value === '<>' ? '!=' : (t.value as CompareOp);
      } else if (this.isName('in') || this.isName('contains')) {
        this.next();
        op = t.value as CompareOp;
      } else if (this.isName('not') && this.isName('in', 1)) {
        this.next();
        this.next();
        op = 'not in';
      } else {
        break;
      }
      rest.push({ op, expr: this.math1(), at: t.at });
    }
    return rest.length === 0 ? first : { type: 'compare', first, rest, at: first.at };
  }

  private math1(): Expr {
    let left = this.concat();
    while (this.isOp('+') || this.isOp('-')) {
      const t = this.next();
      left = { type: 'binary', op: t.value as '+' | '-', left, right: this.concat(), at: t.at };
    }
    return left;
  }

  private concat(): Expr {
    let left = this.math2();
    while (this.isOp('~')) {
      const at = this.next().at;
      left = { type: 'binary', op: '~', left, right: this.math2(), at };
    }
    return left;
  }

  private math2(): Expr {
    let left = this.pow();
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const t = this.next();
      left = { type: 'binary', op: t.value as '*' | '/' | '//' | '%', left, right: this.pow(), at: t.at };
    }
    return left;
  }

  private pow(): Expr {
    let left = this.unary(true);
    while (this.isOp('**')) {
      const at = this.next().at;
      left = { type: 'binary', op: '**', left, right: this.unary(true), at };
    }
    return left;
  }

  /** A unary expression; with `withFilter`, followed by its filters and tests. */
  unary(withFilter: boolean): Expr {
    const t = this.peek();
    let node: Expr;
    if (this.isOp('-') || this.isOp('+')) {
      this.next();
      node = { type: 'unary', op: t.value as '-' | '+', operand: this.unary(false), at: t.at };
    } else {
      node = this.primary();
    }
    node = this.postfix(node);
    return withFilter ? this.filterExpr(node) : node;
  }

  private primary(): Expr {
    const t = this.peek();
    switch (t.kind) {
      case 'name': {
        this.next();
        if (LITERALS.has(t.value)) return { type: 'literal', value: LITERALS.get(t.value), at: t.at };
        return { type: 'name', name: t.value, at: t.at };
      }
      case 'string': {
        let value = t.value;
        this.next();
        for (let s = this.peek(); s.kind === 'string'; s = this.peek()) {
          value += s.value;
          this.next();
        }
        return { type: 'literal', value, at: t.at };
      }
      case 'int':
      case 'float':
        this.next();
        return { type: 'literal', value: t.kind === 'float' ? floatLiteral(t.value) : t.value, at: t.at };
      case 'op':
        if (t.value === '(') return this.parenthesised();
        if (t.value === '[') return this.listLiteral();
        if (t.value === '{') return this.dictLiteral();
        break;
      case 'end':
        break;
    }
    throw this.unexpected('a value');
  }

  private parenthesised(): Expr {
    const at = this.expectOp('(').at;
    if (this.isOp(')')) {
      this.next();
      return { type: 'list', items: [], tuple: true, at };
    }
    const first = this.expression();
    if (this.isOp('..')) {
      // Liquid's range (1..5): both ends included
      this.next();
      const last = this.expression();
      this.expectOp(')');
      const stop: Expr = { type: 'binary', op: '+', left: last, right: { type: 'literal', value: 1, at }, at };
      return { type: 'call', callee: { type: 'name', name: 'range', at }, args: [first, stop], kwargs: [], at };
    }
    if (!this.isOp(',')) {
      this.expectOp(')');
      return first;
    }
    const items = [first];
    while (this.isOp(',')) {
      this.next();
      if (this.isOp(')')) break;
      items.push(this.expression());
    }
    this.expectOp(')');
    return { type: 'list', items, tuple: true, at };
  }

  private listLiteral(): Expr {
    const at = this.expectOp('[').at;
    const items: Expr[] = [];
    while (!this.isOp(']')) {
      if (items.length > 0) this.expectOp(',');
      if (this.isOp(']')) break;
      items.push(this.expression());
    }
    this.expectOp(']');
    return { type: 'list', items, at };
  }

  private dictLiteral(): Expr {
    const at = this.expectOp('{').at;
    const pairs: [Expr, Expr][] = [];
    while (!this.isOp('}')) {
      if (pairs.length > 0) this.expectOp(',');
      if (this.isOp('}')) break;
      const key = this.expression();
      this.expectOp(':');
      pairs.push([key, this.expression()]);
    }
    this.expectOp('}');
    return { type: 'dict', pairs, at };
  }

  private postfix(node: Expr): Expr {
    for (;;) {
      if (this.isOp('.')) {
        const dot = this.next();
        const t = this.peek();
        if (t.kind === 'name') {
          this.next();
          node = { type: 'attr', obj: node, name: t.value, at: dot.at };
        } else if (t.kind === 'int') {
          this.next();
          node = { type: 'item', obj: node, key: { type: 'literal', value: t.value, at: t.at }, at: dot.at };
        } else {
          throw this.unexpected('an attribute name after "."');
        }
      } else if (this.isOp('[')) {
        node = this.subscript(node);
      } else if (this.isOp('(')) {
        const at = this.peek().at;
        node = { type: 'call', callee: node, ...this.callArgs(), at };
      } else {
        return node;
      }
    }
  }

  private subscript(obj: Expr): Expr {
    const at = this.expectOp('[').at;
    const part = (): Expr | undefined => (this.isOp(':') || this.isOp(']') ? undefined : this.expression());
    const start = part();
    if (!this.isOp(':')) {
      if (start === undefined) throw this.unexpected('an index');
      this.expectOp(']');
      return { type: 'item', obj, key: start, at };
    }
    this.next();
    const stop = part();
    let step: Expr | undefined;
    if (this.isOp(':')) {
      this.next();
      step = part();
    }
    this.expectOp(']');
    return { type: 'slice', obj, start, stop, step, at };
  }

  /** `(a, b, k=v, *l, **d)`. */
  private callArgs(): Args {
    this.expectOp('(');
    const args: Expr[] = [];
    const kwargs: [string, Expr][] = [];
    let star: Expr | undefined;
    let starstar: Expr | undefined;
    while (!this.isOp(')')) {
      if (args.length + kwargs.length + (star ? 1 : 0) + (starstar ? 1 : 0) > 0) this.expectOp(',');
      if (this.isOp(')')) break;
      if (this.isOp('**')) {
        this.next();
        starstar = this.expression();
      } else if (this.isOp('*')) {
        this.next();
        star = this.expression();
      } else if (this.peek().kind === 'name' && this.isOp('=', 1)) {
        const name = this.expectName();
        this.next();
        kwargs.push([name, this.expression()]);
      } else {
        if (kwargs.length > 0) throw new ExprError('a positional argument cannot follow a keyword argument', this.peek().at);
        args.push(this.expression());
      }
    }
    this.expectOp(')');
    return { args, kwargs, ...(star ? { star } : {}), ...(starstar ? { starstar } : {}) };
  }

  /** Liquid's arguments: `: a, b, key: value` (values without filters). */
  private liquidArgs(): Args {
    this.expectOp(':');
    const args: Expr[] = [];
    const kwargs: [string, Expr][] = [];
    do {
      if (args.length + kwargs.length > 0) this.expectOp(',');
      if (this.peek().kind === 'name' && this.isOp(':', 1)) {
        const name = this.expectName();
        this.next();
        kwargs.push([name, this.unary(false)]);
      } else {
        args.push(this.unary(false));
      }
    } while (this.isOp(','));
    return { args, kwargs };
  }

  private dottedName(): string {
    let name = this.expectName();
    while (this.isOp('.') && this.peek(1).kind === 'name') {
      this.next();
      name += `.${this.expectName()}`;
    }
    return name;
  }

  private filterExpr(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) {
        this.next();
        const at = this.peek().at;
        const name = this.dottedName();
        const liquid = this.isOp(':');
        const args: Args = this.isOp('(') ? this.callArgs() : liquid ? this.liquidArgs() : { args: [], kwargs: [] };
        node = { type: 'filter', value: node, name, ...args, ...(liquid ? { liquid } : {}), at };
      } else if (this.isName('is')) {
        this.next();
        let negated = false;
        if (this.isName('not')) {
          this.next();
          negated = true;
        }
        const at = this.peek().at;
        const name = this.dottedName();
        let args: Args = { args: [], kwargs: [] };
        const t = this.peek();
        if (this.isOp('(')) args = this.callArgs();
        else if ((t.kind === 'string' || t.kind === 'int' || t.kind === 'float' || (t.kind === 'name' && !NOT_A_TEST_ARG.has(t.value)) || this.isOp('[') || this.isOp('{')) && t.kind !== 'end') {
          args = { args: [this.postfix(this.primary())], kwargs: [] };
        }
        node = { type: 'test', value: node, name, negated, ...args, at };
      } else {
        return node;
      }
    }
  }
}

/** A float literal: integral values are boxed so `2.0` stays a float. */
function floatLiteral(n: number): unknown {
  return Number.isInteger(n) ? new PyFloat(n) : n;
}
