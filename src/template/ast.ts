/**
 * The abstract syntax tree of expressions (Jinja2's expression grammar as Ansible uses it, plus
 * Liquid's filter-argument form). Every node records `at`, its offset in the expression source,
 * for errors with a caret.
 */

/** A literal: string, number, boolean, None. */
export interface LiteralNode {
  readonly type: 'literal';
  readonly value: unknown;
  readonly at: number;
}

/** A variable name. */
export interface NameNode {
  readonly type: 'name';
  readonly name: string;
  readonly at: number;
}

/** `[a, b]` (list) or `(a, b)` (tuple: a list marked as a tuple). */
export interface ListNode {
  readonly type: 'list';
  readonly items: readonly Expr[];
  readonly tuple?: boolean;
  readonly at: number;
}

/** `{k: v, …}`. */
export interface DictNode {
  readonly type: 'dict';
  readonly pairs: readonly (readonly [Expr, Expr])[];
  readonly at: number;
}

/** `obj.name` (also `obj.0`). */
export interface AttrNode {
  readonly type: 'attr';
  readonly obj: Expr;
  readonly name: string;
  readonly at: number;
}

/** `obj[key]`. */
export interface ItemNode {
  readonly type: 'item';
  readonly obj: Expr;
  readonly key: Expr;
  readonly at: number;
}

/** `obj[start:stop:step]`. */
export interface SliceNode {
  readonly type: 'slice';
  readonly obj: Expr;
  readonly start: Expr | undefined;
  readonly stop: Expr | undefined;
  readonly step: Expr | undefined;
  readonly at: number;
}

/** Arguments of a call, filter or test. */
export interface Args {
  readonly args: readonly Expr[];
  readonly kwargs: readonly (readonly [string, Expr])[];
  /** `*list` */
  readonly star?: Expr;
  /** `**dict` */
  readonly starstar?: Expr;
}

/** `callee(args)`: a global function (`lookup`, `range`, …) or a method (`x.items()`). */
export interface CallNode extends Args {
  readonly type: 'call';
  readonly callee: Expr;
  readonly at: number;
}

/** `value | name(args)` (or Liquid's `value | name: a, b`). */
export interface FilterNode extends Args {
  readonly type: 'filter';
  readonly value: Expr;
  readonly name: string;
  /** Written with Liquid's argument syntax: Liquid's filter of that name applies, where it has one. */
  readonly liquid?: boolean;
  readonly at: number;
}

/** `value is [not] name(args)`. */
export interface TestNode extends Args {
  readonly type: 'test';
  readonly value: Expr;
  readonly name: string;
  readonly negated: boolean;
  readonly at: number;
}

/** `not x`, `-x`, `+x`. */
export interface UnaryNode {
  readonly type: 'unary';
  readonly op: 'not' | '-' | '+';
  readonly operand: Expr;
  readonly at: number;
}

/** Arithmetic, concatenation and the short-circuit boolean operators. */
export interface BinaryNode {
  readonly type: 'binary';
  readonly op: '+' | '-' | '*' | '/' | '//' | '%' | '**' | '~' | 'and' | 'or';
  readonly left: Expr;
  readonly right: Expr;
  readonly at: number;
}

/** A comparison operator (Jinja's, plus Liquid's `contains`). */
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in' | 'contains';

/** `a < b < c` (chained as Python: each pair, left to right, stopping at the first false). */
export interface CompareNode {
  readonly type: 'compare';
  readonly first: Expr;
  readonly rest: readonly { readonly op: CompareOp; readonly expr: Expr; readonly at: number }[];
  readonly at: number;
}

/** `then if test else otherwise` (`else` optional: undefined). */
export interface CondNode {
  readonly type: 'cond';
  readonly test: Expr;
  readonly then: Expr;
  readonly otherwise: Expr | undefined;
  readonly at: number;
}

/** An expression. */
export type Expr =
  | LiteralNode
  | NameNode
  | ListNode
  | DictNode
  | AttrNode
  | ItemNode
  | SliceNode
  | CallNode
  | FilterNode
  | TestNode
  | UnaryNode
  | BinaryNode
  | CompareNode
  | CondNode;
