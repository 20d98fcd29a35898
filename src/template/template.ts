/**
 * Template text: `{{ expr }}`, `{% statement %}` and `{# comment #}` in a string, with Jinja2's
 * lexical rules as ansible-core configures them (whitespace control `{%- -%}`, `trim_blocks`:
 * the newline right after a block tag is dropped; one trailing newline of the template dropped)
 * and both statement languages: Jinja's (`if/elif/else`, `for … in … [if …]` with `loop.*`,
 * `set` (also block and namespace forms), `filter`, `macro`, `with`, `raw`) and
 * Liquid's (`elsif`, `unless`, `case/when`, `assign`, `capture`, `comment`, `echo`, `forloop.*`).
 * Every expression inside goes through the one expression parser (./parser.ts).
 */
import type { Expr } from './ast.js';
import { ExprParser } from './parser.js';
import { findClose, JINJA_DELIMITERS, lex, TemplateSyntaxError, type Delimiters, type RawToken } from './template-lexer.js';
import { ExprError } from './values.js';

export { JINJA_DELIMITERS, TemplateSyntaxError, type Delimiters };

/** A template node. `at` is the offset of its tag or expression in the template text. */
export type TNode =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'output'; readonly expr: Expr; readonly at: number; readonly src: string }
  | { readonly type: 'if'; readonly branches: readonly { readonly test: Expr; readonly body: readonly TNode[]; readonly at: number; readonly src: string }[]; readonly otherwise: readonly TNode[] | undefined; readonly negate?: boolean }
  | { readonly type: 'for'; readonly targets: readonly string[]; readonly iter: Expr; readonly filter: Expr | undefined; readonly body: readonly TNode[]; readonly otherwise: readonly TNode[] | undefined; readonly at: number; readonly src: string }
  | { readonly type: 'set'; readonly targets: readonly string[]; readonly attr: string | undefined; readonly expr: Expr; readonly at: number; readonly src: string }
  | { readonly type: 'setblock'; readonly target: string; readonly body: readonly TNode[]; readonly filters: Expr | undefined; readonly at: number; readonly src: string }
  | { readonly type: 'case'; readonly subject: Expr; readonly whens: readonly { readonly values: readonly Expr[]; readonly body: readonly TNode[] }[]; readonly otherwise: readonly TNode[] | undefined; readonly at: number; readonly src: string }
  | { readonly type: 'filterblock'; readonly filter: Expr; readonly body: readonly TNode[]; readonly at: number; readonly src: string }
  | { readonly type: 'macro'; readonly name: string; readonly params: readonly { readonly name: string; readonly def: Expr | undefined }[]; readonly body: readonly TNode[]; readonly at: number; readonly src: string }
  | { readonly type: 'with'; readonly targets: readonly (readonly [string, Expr])[]; readonly body: readonly TNode[]; readonly at: number; readonly src: string }
  /** `{% include name [ignore missing] [with|without context] %}` (a list of names: the first found). */
  | { readonly type: 'include'; readonly expr: Expr; readonly ignoreMissing: boolean; readonly withContext: boolean; readonly at: number; readonly src: string }
  /** `{% import name as alias [with context] %}` and `{% from name import a, b as c [with context] %}` (`names` given). */
  | { readonly type: 'import'; readonly expr: Expr; readonly alias?: string; readonly names?: readonly (readonly [string, string])[]; readonly withContext: boolean; readonly at: number; readonly src: string };

/** Parse an expression that starts at `at` in the template (offsets in errors are template offsets). */
function parseAt<T>(src: string, at: number, fn: (p: ExprParser) => T, rawStrings = false): T {
  try {
    const p = new ExprParser(src, rawStrings);
    const r = fn(p);
    p.expectEnd();
    return r;
  } catch (e) {
    if (e instanceof ExprError) throw new TemplateSyntaxError(e.message, at + (e.offset ?? 0), e.hint);
    throw e;
  }
}

/** `with context` / `without context` at the end of an include or import (else `dflt`). */
function contextOf(p: ExprParser, dflt: boolean): boolean {
  if ((p.isName('with') || p.isName('without')) && p.isName('context', 1)) {
    const w = p.next().value === 'with';
    p.next();
    return w;
  }
  return dflt;
}

/** Names of a `for`/`set` target list (`x`, `k, v`, `(k, v)`). */
function targetNames(p: ExprParser): string[] {
  const names: string[] = [];
  const paren = p.isOp('(');
  if (paren) p.next();
  do {
    if (names.length > 0) p.next();
    names.push(p.expectName());
  } while (p.isOp(','));
  if (paren) p.expectOp(')');
  return names;
}

/** The template parser over raw tokens. */
class BlockParser {
  private i = 0;
  constructor(private readonly toks: RawToken[]) {}

  /** Parse nodes until one of the `ends` block names (returned) or the end of input. */
  body(ends: readonly string[]): { nodes: TNode[]; end: Extract<RawToken, { kind: 'block' }> | undefined } {
    const nodes: TNode[] = [];
    while (this.i < this.toks.length) {
      const t = this.toks[this.i++] as RawToken;
      if (t.kind === 'text') nodes.push({ type: 'text', text: t.text });
      else if (t.kind === 'output') nodes.push({ type: 'output', expr: parseAt(t.src, t.at, (p) => p.tuple(), true), at: t.at, src: t.src });
      else if (ends.includes(t.name)) return { nodes, end: t };
      else nodes.push(this.statement(t));
    }
    if (ends.length > 0) throw new TemplateSyntaxError(`missing {% ${ends[ends.length - 1] ?? ''} %}: the template ended inside a block`, this.toks.length ? this.lastAt() : 0, `close the block with {% ${ends[ends.length - 1] ?? ''} %}`);
    return { nodes, end: undefined };
  }

  private lastAt(): number {
    for (let k = this.toks.length - 1; k >= 0; k--) {
      const t = this.toks[k];
      if (t && t.kind !== 'text') return t.at;
    }
    return 0;
  }

  private until(endName: string, alsoAllowed: readonly string[], open: Extract<RawToken, { kind: 'block' }>): { nodes: TNode[]; end: Extract<RawToken, { kind: 'block' }> } {
    const r = this.body([...alsoAllowed, endName]);
    if (!r.end) throw new TemplateSyntaxError(`{% ${open.name} %} is not closed with {% ${endName} %}`, open.at);
    return { nodes: r.nodes, end: r.end };
  }

  private statement(t: Extract<RawToken, { kind: 'block' }>): TNode {
    const src = t.args;
    const at = t.argsAt;
    switch (t.name) {
      case 'if':
      case 'unless': {
        const branches: { test: Expr; body: TNode[]; at: number; src: string }[] = [];
        let test = parseAt(src, at, (p) => p.expression());
        let testAt = at;
        let testSrc = src;
        let otherwise: TNode[] | undefined;
        const endName = t.name === 'if' ? 'endif' : 'endunless';
        for (;;) {
          const r = this.until(endName, ['elif', 'elsif', 'else'], t);
          branches.push({ test, body: r.nodes, at: testAt, src: testSrc });
          if (r.end.name === 'else') {
            otherwise = this.until(endName, [], t).nodes;
            break;
          }
          if (r.end.name === endName) break;
          test = parseAt(r.end.args, r.end.argsAt, (p) => p.expression());
          testAt = r.end.argsAt;
          testSrc = r.end.args;
        }
        return { type: 'if', branches, otherwise, ...(t.name === 'unless' ? { negate: true } : {}) };
      }
      case 'for': {
        const { targets, iter, filter } = parseAt(src, at, (p) => {
          const names = targetNames(p);
          p.expectName('in');
          const it = p.tuple(false);
          let f: Expr | undefined;
          if (p.isName('if')) {
            p.next();
            f = p.expression();
          }
          if (p.isName('recursive') || p.isName('reversed')) throw new ExprError(`"${String(p.peek().value)}" loops are not supported`, p.peek().at, 'sort or reverse the list with a filter instead');
          return { targets: names, iter: it, filter: f };
        });
        const r = this.until('endfor', ['else'], t);
        const otherwise = r.end.name === 'else' ? this.until('endfor', [], t).nodes : undefined;
        return { type: 'for', targets, iter, filter, body: r.nodes, otherwise, at, src };
      }
      case 'set':
      case 'assign': {
        if (!src.includes('=') || /^\s*[\w.]+\s*(\|.*)?$/.test(src)) {
          if (t.name === 'assign') throw new TemplateSyntaxError('assign needs a value: {% assign x = … %}', at);
          const { name, filters } = parseAt(src, at, (p) => {
            const n = p.expectName();
            let f: Expr | undefined;
            if (p.isOp('|')) f = p.unary(true);
            return { name: n, filters: f };
          });
          const r = this.until('endset', [], t);
          return { type: 'setblock', target: name, body: r.nodes, filters, at, src };
        }
        const eq = findClose(src, 0, '=');
        const lhs = src.slice(0, eq);
        const { targets, attr } = parseAt(lhs, at, (p) => {
          const first = p.expectName();
          if (p.isOp('.')) {
            p.next();
            return { targets: [first], attr: p.expectName() };
          }
          const names = [first];
          while (p.isOp(',')) {
            p.next();
            names.push(p.expectName());
          }
          return { targets: names, attr: undefined };
        });
        const expr = parseAt(src.slice(eq + 1), at + eq + 1, (p) => p.tuple());
        return { type: 'set', targets, attr, expr, at, src };
      }
      case 'capture': {
        const name = parseAt(src, at, (p) => p.expectName());
        const r = this.until('endcapture', [], t);
        return { type: 'setblock', target: name, body: r.nodes, filters: undefined, at, src };
      }
      case 'echo':
        return { type: 'output', expr: parseAt(src, at, (p) => p.expression()), at, src };
      case 'case': {
        const subject = parseAt(src, at, (p) => p.expression());
        // text between {% case %} and the first {% when %} is ignored, as Liquid does
        let r = this.until('endcase', ['when', 'else'], t);
        const whens: { values: Expr[]; body: TNode[] }[] = [];
        let otherwise: TNode[] | undefined;
        while (r.end.name === 'when') {
          const end = r.end;
          const values = parseAt(end.args, end.argsAt, (p) => {
            const vs = [p.expression()];
            while (p.isOp(',') || p.isName('or')) {
              p.next();
              vs.push(p.expression());
            }
            return vs;
          });
          r = this.until('endcase', ['when', 'else'], t);
          whens.push({ values, body: r.nodes });
        }
        if (r.end.name === 'else') otherwise = this.until('endcase', [], t).nodes;
        return { type: 'case', subject, whens, otherwise, at, src };
      }
      case 'comment':
        this.until('endcomment', [], t);
        return { type: 'text', text: '' };
      case 'filter': {
        const filter = parseAt(`__filter_input__ | ${src}`, at - '__filter_input__ | '.length, (p) => p.expression());
        const r = this.until('endfilter', [], t);
        return { type: 'filterblock', filter, body: r.nodes, at, src };
      }
      case 'macro': {
        const { name, params } = parseAt(src, at, (p) => {
          const n = p.expectName();
          p.expectOp('(');
          const ps: { name: string; def: Expr | undefined }[] = [];
          while (!p.isOp(')')) {
            if (ps.length) p.expectOp(',');
            const pn = p.expectName();
            let def: Expr | undefined;
            if (p.isOp('=')) {
              p.next();
              def = p.expression();
            }
            ps.push({ name: pn, def });
          }
          p.expectOp(')');
          return { name: n, params: ps };
        });
        const r = this.until('endmacro', [], t);
        return { type: 'macro', name, params, body: r.nodes, at, src };
      }
      case 'with': {
        const targets = parseAt(src, at, (p) => {
          const out: [string, Expr][] = [];
          while (!p.atEnd()) {
            if (out.length) p.expectOp(',');
            const n = p.expectName();
            p.expectOp('=');
            out.push([n, p.expression()]);
          }
          return out;
        });
        const r = this.until('endwith', [], t);
        return { type: 'with', targets, body: r.nodes, at, src };
      }
      case 'include': {
        const parsed = parseAt(src, at, (p) => {
          const expr = p.expression();
          let ignoreMissing = false;
          if (p.isName('ignore') && p.isName('missing', 1)) {
            p.next();
            p.next();
            ignoreMissing = true;
          }
          return { expr, ignoreMissing, withContext: contextOf(p, true) };
        });
        return { type: 'include', ...parsed, at, src };
      }
      case 'import': {
        const parsed = parseAt(src, at, (p) => {
          const expr = p.expression();
          p.expectName('as');
          const alias = p.expectName();
          return { expr, alias, withContext: contextOf(p, false) };
        });
        return { type: 'import', ...parsed, at, src };
      }
      case 'from': {
        const parsed = parseAt(src, at, (p) => {
          const expr = p.expression();
          p.expectName('import');
          const names: [string, string][] = [];
          while (!p.atEnd() && !((p.isName('with') || p.isName('without')) && p.isName('context', 1))) {
            if (names.length) {
              p.expectOp(',');
              if (p.atEnd() || ((p.isName('with') || p.isName('without')) && p.isName('context', 1))) break;
            }
            const n = p.expectName();
            let as = n;
            if (p.isName('as')) {
              p.next();
              as = p.expectName();
            }
            names.push([n, as]);
          }
          if (names.length === 0) throw new ExprError('expected the names to import after "import"');
          return { expr, names, withContext: contextOf(p, false) };
        });
        return { type: 'import', ...parsed, at, src };
      }
      case 'extends':
      case 'block':
      case 'render':
      case 'layout':
        throw new TemplateSyntaxError(`the "${t.name}" tag is not supported by kplay`, t.at, "put what is shared in a file and {% include %} it, or share macros with {% import 'macros.j2' as m %}");
      default:
        throw new TemplateSyntaxError(`unknown tag "${t.name}"`, t.at, t.name.startsWith('end') ? `there is no open block for {% ${t.name} %}` : 'Jinja tags: if/elif/else, for, set, with, filter, macro, raw; Liquid tags: unless, case/when, assign, capture, comment, echo');
    }
  }
}

/**
 * Parse template text into nodes. Line breaks are read as Jinja's lexer reads them: `\r\n` and a
 * lone `\r` are `\n` (its `newline_sequence`, as ansible-core sets it), so a template saved with
 * Windows line endings renders with `\n` — text, tags, comments and string literals alike.
 */
export function parseTemplate(text: string, delimiters: Readonly<Delimiters> = JINJA_DELIMITERS): TNode[] {
  return new BlockParser(lex(text.replace(/\r\n?/g, '\n'), delimiters)).body([]).nodes;
}

/** `^{{ expr }}$` → the expression's source and its offset; undefined when the text is more than one expression. */
export function singleExpression(text: string): { src: string; at: number } | undefined {
  const m = /^\{\{(-?)([\s\S]*?)(-?)\}\}$/.exec(text);
  if (!m) return undefined;
  const src = m[2] ?? '';
  // the first `}}` must be the last: `{{ a }} {{ b }}` is two outputs
  if (findClose(text, 2 + (m[1]?.length ?? 0), '}}') !== text.length - 2 - (m[3]?.length ?? 0)) return undefined;
  if (src.trim() === '') return undefined;
  return { src, at: 2 + (m[1]?.length ?? 0) };
}

/**
 * The number of newlines the template text ends with: a string result gets back what Jinja dropped
 * (ansible-core's preserve_trailing_newlines). Counted as ansible-core counts them, `\n` alone:
 * `a\r\n\r\n` ends with one.
 */
export function trailingNewlines(text: string): number {
  const m = /\n*$/.exec(text);
  return m ? m[0].length : 0;
}
