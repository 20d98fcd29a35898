/**
 * The templating layer: Liquid (liquidjs) in strict, sandboxed mode.
 *
 * - `{{ expr }}` anywhere in a string; a string that is exactly one `{{ expr }}` keeps the
 *   expression's native type (list, map, number, bool, null).
 * - Conditions are Liquid expressions without braces (`a == 1 and not b`), lists of them (all
 *   must hold) or booleans, with Ansible's grammar on top (see {@link normalizeCondition}):
 *   `not` > `and` > `or`, filters inside comparisons, `in`/`not in`, list literals, Jinja tests
 *   (`is defined`, `is failed`, `is none`, …) and `True`/`False`/`None`.
 * - Strict: undefined variables and filters are errors; `x | default: …` still works on undefined.
 * - Sandboxed: own properties only, no file access (`include`/`render`/`layout` refused),
 *   parse/render/memory limits.
 */
import {
  Context,
  defaultOperators,
  Liquid,
  Tag,
  Tokenizer,
  TokenKind,
  toValue,
  toValueSync,
  Value,
  type FS,
  type Template,
  type TagToken,
  type TopLevelToken,
} from 'liquidjs';
import { InputError, type SourcePos } from '../load/errors.js';
import { copyPos, posOf } from '../load/yaml.js';
import { filterEntries, isPlainMap } from './filters.js';

/** Options of one render call. */
export interface RenderOptions {
  /** Where the template came from (reported in errors). */
  where?: SourcePos;
}

/** Limits and cache size of a {@link Templar} (all optional; defaults suit playbooks). */
export interface TemplarOptions {
  /** Maximum characters parsed per template. @default 4_000_000 */
  parseLimit?: number;
  /** Maximum milliseconds per render / evaluation. @default 5000 */
  renderLimit?: number;
  /** Maximum allocation units per render (Liquid counts range items and string/array sizes). @default 20_000_000 */
  memoryLimit?: number;
  /** Maximum parsed templates kept in the cache. @default 5000 */
  cacheSize?: number;
}

/** Keys whose values are conditions (checked with {@link Templar.checkCondition} by {@link Templar.check}). */
export const CONDITION_KEYS: ReadonlySet<string> = new Set(['when', 'until', 'failed_when', 'changed_when']);

const HINT_UNDEFINED = "define it in vars, inventory or -e, or use '| default: …'";
const HINT_FILTER = 'check the filter name: Liquid filters plus to_json, to_yaml, from_json, from_yaml, b64encode, b64decode, sha256, mandatory, regex_replace, regex_search, regex_findall, quote, bool, int, string, keys, values, dict2items, items2dict, combine, basename, dirname, lower, upper, length';
const HINT_LIMIT = 'the template is too expensive: kplay limits template size, render time and memory';

/** A file system that holds nothing: templates can never read files. */
const NO_FS: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async (file: string) => {
    throw new Error(`templates cannot read files (${file})`);
  },
  readFileSync: (file: string) => {
    throw new Error(`templates cannot read files (${file})`);
  },
  resolve: (_dir: string, file: string) => file,
  contains: async () => false,
  containsSync: () => false,
  sep: '/',
  dirname: () => '/',
};

/** Tags that would read other templates; replaced by tags that fail at parse time. */
const REFUSED_TAGS = ['include', 'render', 'layout'];

/** Output of `{{ }}` inside a longer string: maps and lists as JSON, nil as "". */
function outputText(value: unknown): string {
  const v: unknown = toValue(value);
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v) ?? '';
  return String(v);
}

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

/** `^{{ expr }}$` (whitespace and `-` trim markers allowed) → expr; undefined otherwise. */
function singleExpression(template: string): string | undefined {
  const m = /^\s*\{\{-?([\s\S]*?)-?\}\}\s*$/.exec(template);
  if (!m) return undefined;
  const inner = m[1] ?? '';
  if (/\{\{|\}\}|\{%|%\}/.test(inner) || inner.trim() === '') return undefined;
  return inner;
}

/** A condition written as `{{ cond }}` is accepted: the braces are stripped. */
function stripBraces(cond: string): string {
  return singleExpression(cond) ?? cond;
}

/** `a.b[0]["c"]` → ['a', 'b', 0, 'c']. */
function parsePath(path: string): (string | number)[] {
  const segs: (string | number)[] = [];
  const re = /^[A-Za-z_][\w-]*|\.([A-Za-z_][\w-]*)|\[(\d+)\]|\["([^"]*)"\]|\['([^']*)'\]/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(path)) !== null) {
    if (m.index === 0 && m[0][0] !== '.' && m[0][0] !== '[') segs.push(m[0]);
    else if (m[1] !== undefined) segs.push(m[1]);
    else if (m[2] !== undefined) segs.push(Number(m[2]));
    else segs.push(m[3] ?? m[4] ?? '');
  }
  return segs;
}

/** Jinja tests accepted after `is` / `is not` (Ansible's names, with their aliases). */
const TESTS = [
  'defined', 'undefined', 'failed', 'failure', 'succeeded', 'success', 'successful', 'changed', 'change',
  'skipped', 'skip', 'none', 'string', 'number', 'integer', 'float', 'boolean', 'mapping', 'sequence',
  'iterable', 'true', 'false', 'even', 'odd',
] as const;
type TestName = (typeof TESTS)[number];

/** Strings are skipped (group 1); `PATH is [not] TEST` is group 2..4. */
const TEST_RE = new RegExp(
  String.raw`("[^"]*"|'[^']*')|(?<![\w.\]])([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\]|\["[^"]*"\]|\['[^']*'\])*)\s+is\s+(not\s+)?(${TESTS.join('|')})\b`,
  'g',
);

/** Value at a path (own properties; `size`/`first`/`last` of lists as in the templates), or `undefined`. */
function valueAt(vars: Record<string, unknown>, path: string): unknown {
  let cur: unknown = vars;
  for (const seg of parsePath(path)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, seg)) {
      if (Array.isArray(cur) && (seg === 'size' || seg === 'first' || seg === 'last')) {
        cur = seg === 'size' ? cur.length : seg === 'first' ? cur[0] : cur[cur.length - 1];
        continue;
      }
      return undefined;
    }
    cur = (cur as Record<string | number, unknown>)[seg];
  }
  return cur;
}

/** Result of a task-result test (`failed`, `changed`, …): Ansible requires a map (a registered result). */
function resultTest(path: string, value: unknown, key: 'failed' | 'changed' | 'skipped'): boolean {
  if (!isPlainMap(value)) {
    const type = value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value;
    throw new Error(`the "${key}" test expects a registered task result (a map), but ${path} is a ${type}: test the result of a task's register`);
  }
  return value[key] === true;
}

/** Apply one Jinja test to the value at `path` (which must be defined unless testing definedness). */
function applyTest(test: TestName, path: string, vars: Record<string, unknown>): boolean {
  const value = valueAt(vars, path);
  if (test === 'defined') return value !== undefined;
  if (test === 'undefined') return value === undefined;
  if (value === undefined) throw new Error(`undefined variable: ${path}`);
  switch (test) {
    case 'failed':
    case 'failure':
      return resultTest(path, value, 'failed');
    case 'succeeded':
    case 'success':
    case 'successful':
      return !resultTest(path, value, 'failed');
    case 'changed':
    case 'change':
      return resultTest(path, value, 'changed');
    case 'skipped':
    case 'skip':
      return resultTest(path, value, 'skipped');
    case 'none':
      return value === null;
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'float':
      return typeof value === 'number' && !Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'mapping':
      return isPlainMap(value);
    case 'sequence':
    case 'iterable':
      return Array.isArray(value) || typeof value === 'string' || isPlainMap(value);
    case 'true':
      return value === true;
    case 'false':
      return value === false;
    case 'even':
    case 'odd':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`the "${test}" test needs an integer, but ${path} is ${JSON.stringify(value)}`);
      return Math.abs(value % 2) === (test === 'odd' ? 1 : 0);
  }
}

/** Jinja tests that take arguments: `x is match("^v1")`, `v is version("1.2", ">=")`, `n is divisibleby(3)`. */
const ARG_TESTS = ['match', 'search', 'regex', 'version', 'version_compare', 'divisibleby'] as const;
type ArgTestName = (typeof ARG_TESTS)[number];
const ARG = String.raw`(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[-\w.]+)`;
const ARG_TEST_RE = new RegExp(
  String.raw`("[^"]*"|'[^']*')|(?<![\w.\]])([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\]|\["[^"]*"\]|\['[^']*'\])*)\s+is\s+(not\s+)?(${ARG_TESTS.join('|')})\s*\(\s*(${ARG}(?:\s*,\s*${ARG})*)?\s*\)`,
  'g',
);

/** The arguments of a test call: quoted strings, numbers, booleans, or variables. */
function testArgs(text: string | undefined, vars: Record<string, unknown>): unknown[] {
  if (!text) return [];
  const out: unknown[] = [];
  for (const m of text.matchAll(new RegExp(ARG, 'g'))) {
    const a = m[0];
    if (a.startsWith('"')) out.push(JSON.parse(a));
    else if (a.startsWith("'")) out.push(a.slice(1, -1).replace(/\\(.)/g, '$1'));
    else if (/^-?\d+(\.\d+)?$/.test(a)) out.push(Number(a));
    else if (a === 'true' || a === 'True' || a === 'false' || a === 'False') out.push(a.toLowerCase() === 'true');
    else {
      const v = valueAt(vars, a);
      if (v === undefined) throw new Error(`undefined variable: ${a}`);
      out.push(v);
    }
  }
  return out;
}

/** Loose version ordering (as Ansible's `version` test): numbers compare as numbers, the rest as text. */
function compareVersions(a: string, b: string): number {
  const parts = (v: string): (number | string)[] => (v.match(/\d+|[a-z]+/gi) ?? []).map((p) => (/^\d+$/.test(p) ? Number(p) : p.toLowerCase()));
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    if (typeof x === 'number') return 1;
    if (typeof y === 'number') return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}

const VERSION_OPS: Readonly<Record<string, (c: number) => boolean>> = {
  '<': (c) => c < 0, lt: (c) => c < 0, '<=': (c) => c <= 0, le: (c) => c <= 0,
  '>': (c) => c > 0, gt: (c) => c > 0, '>=': (c) => c >= 0, ge: (c) => c >= 0,
  '==': (c) => c === 0, '=': (c) => c === 0, eq: (c) => c === 0,
  '!=': (c) => c !== 0, '<>': (c) => c !== 0, ne: (c) => c !== 0,
};

/** Apply a test with arguments to the value at `path`. */
function applyArgTest(test: ArgTestName, path: string, args: unknown[], vars: Record<string, unknown>): boolean {
  const value = valueAt(vars, path);
  if (value === undefined) throw new Error(`undefined variable: ${path}`);
  switch (test) {
    case 'match':
    case 'search':
    case 'regex': {
      const [pattern, ignorecase, multiline] = args;
      if (typeof pattern !== 'string') throw new Error(`the "${test}" test needs a pattern string, e.g. ${path} is ${test}("^v1")`);
      const anchored = test === 'match' || (test === 'regex' && args[3] === 'match');
      const flags = `${ignorecase === true ? 'i' : ''}${multiline === true ? 'm' : ''}`;
      return new RegExp(anchored ? `^(?:${pattern})` : pattern, flags).test(String(value));
    }
    case 'version':
    case 'version_compare': {
      const [other, op = 'eq'] = args;
      const cmp = VERSION_OPS[String(op)];
      if (other === undefined || !cmp) throw new Error(`the "version" test needs a version and an operator (${Object.keys(VERSION_OPS).join(' ')}), e.g. ${path} is version("1.2", ">=")`);
      return cmp(compareVersions(String(value), String(other)));
    }
    case 'divisibleby': {
      const [n] = args;
      if (typeof value !== 'number' || typeof n !== 'number' || n === 0) throw new Error(`the "divisibleby" test needs numbers, e.g. ${path} is divisibleby(3)`);
      return value % n === 0;
    }
  }
}

/**
 * Replace Jinja tests (`x is defined`, `r is failed`, `x is not none`, …) by `true`/`false`
 * (with `vars`) or by `true` (static check), returning the rewritten condition and the paths tested.
 */
function rewriteTests(cond: string, vars: Record<string, unknown> | undefined): { text: string; tested: string[] } {
  const tested: string[] = [];
  if (!/\bis\s/.test(cond)) return { text: cond, tested };
  const withArgs = cond.replace(ARG_TEST_RE, (all: string, quoted: string | undefined, path: string, not: string | undefined, test: ArgTestName, args: string | undefined) => {
    if (quoted !== undefined) return all;
    tested.push(path);
    if (!vars) return 'true';
    return String(applyArgTest(test, path, testArgs(args, vars), vars) !== (not !== undefined));
  });
  const text = withArgs.replace(TEST_RE, (all: string, quoted: string | undefined, path: string, not: string | undefined, test: TestName) => {
    if (quoted !== undefined) return all;
    tested.push(path);
    if (!vars) return 'true';
    return String(applyTest(test, path, vars) !== (not !== undefined));
  });
  return { text, tested };
}

/** A token of a condition: its text and whether whitespace preceded it in the source. */
interface CondToken {
  text: string;
  space: boolean;
}

/** Tokens of a condition: quoted strings, list literals, parentheses, comparison operators, `|`, words/others. */
function conditionTokens(text: string): CondToken[] {
  const out: CondToken[] = [];
  const re = /(\s*)("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\[(?:[^\]"']|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')*\]|\(|\)|==|!=|<=|>=|<|>|\||[^\s()"'=!<>|]+|[=!])/gy;
  let m: RegExpExecArray | null;
  let last = 0;
  while ((m = re.exec(text)) !== null) {
    out.push({ text: m[2] ?? '', space: (m[1] ?? '') !== '' });
    last = re.lastIndex;
  }
  if (text.slice(last).trim() !== '') throw new Error('unbalanced quotes');
  return out;
}

/** Join tokens keeping the source's spacing (`hostvars['c1'].x` stays one path). */
function joinTokens(toks: CondToken[]): string {
  return toks.map((t, i) => (i > 0 && t.space ? ` ${t.text}` : t.text)).join('');
}

/** Jinja's literals as Liquid writes them (`True` → `true`, `None`/`none` → `nil`). */
const JINJA_LITERALS: Readonly<Record<string, string>> = { True: 'true', False: 'false', None: 'nil', none: 'nil' };

/** One item of a list literal: a quoted string, a number, a boolean or null (Jinja and YAML spellings). */
const LIST_ITEM_RE = /\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|true|false|True|False|None|none|null)\s*(,|$)/y;

/** Parse a list literal of a condition (`['prod', 'staging']`, `[1, 2]`); only constants are allowed. */
function parseListLiteral(text: string): unknown[] {
  const body = text.slice(1, -1);
  const out: unknown[] = [];
  if (body.trim() === '') return out;
  LIST_ITEM_RE.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (LIST_ITEM_RE.lastIndex < body.length && (m = LIST_ITEM_RE.exec(body)) !== null) {
    const raw = m[1] ?? '';
    if (raw.startsWith('"')) out.push(JSON.parse(raw));
    else if (raw.startsWith("'")) out.push(raw.slice(1, -1).replace(/\\(.)/g, '$1'));
    else if (/^-?\d/.test(raw)) out.push(Number(raw));
    else out.push(raw === 'true' || raw === 'True' ? true : raw === 'false' || raw === 'False' ? false : null);
    if (m[2] === '') break;
  }
  if (LIST_ITEM_RE.lastIndex !== body.length && body.slice(LIST_ITEM_RE.lastIndex).trim() !== '') {
    throw new Error(`list literal ${text} may hold only quoted strings, numbers, booleans and None; put a list of variables in vars`);
  }
  return out;
}

/** Binary comparison operators of a condition (Jinja's, plus Liquid's `contains`). */
const COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', 'contains']);

/**
 * Give a condition Ansible/Jinja's grammar on top of Liquid expressions: `not` binds tighter than
 * `and`, `and` tighter than `or` (Liquid: one precedence, grouped from the right), parentheses
 * group, filters bind tighter than comparisons (`x | length > 0` is `(x | length) > 0`), and
 * `a not in b` is `not (a in b)`. `f and t or t` becomes `(f and t) or t`. Returns the text
 * unchanged when it cannot be tokenised (unbalanced quotes or parentheses): the parser then
 * reports it.
 */
export function groupBooleans(text: string): string {
  return normalizeCondition(text).expr;
}

/** A condition rewritten for Liquid: the expression, and the values of its list literals by variable name. */
export interface NormalizedCondition {
  expr: string;
  lists: Record<string, unknown[]>;
}

/** {@link groupBooleans}, with list literals (`x in ['a', 'b']`) replaced by variables whose values are returned. */
export function normalizeCondition(text: string): NormalizedCondition {
  const lists: Record<string, unknown[]> = {};
  if (!/\b(and|or|not|in|True|False|None|none)\b|\||\[/.test(text)) return { expr: text, lists };
  let toks: CondToken[];
  try {
    toks = conditionTokens(text);
  } catch {
    return { expr: text, lists };
  }
  let i = 0;
  const peek = (): string | undefined => toks[i]?.text;
  // liquidjs does not accept `not` right after `(`; a `not` expression needs no parentheses
  // anyway: in liquidjs too `not` binds tighter than `and`/`or` (and looser than comparisons).
  const wrap = (p: string): string => (p.startsWith('not ') ? p : `(${p})`);
  const parseOr = (): string => {
    const parts = [parseAnd()];
    while (peek() === 'or') {
      i++;
      parts.push(parseAnd());
    }
    return parts.length === 1 ? (parts[0] ?? '') : parts.map(wrap).join(' or ');
  };
  const parseAnd = (): string => {
    const parts = [parseNot()];
    while (peek() === 'and') {
      i++;
      parts.push(parseNot());
    }
    return parts.length === 1 ? (parts[0] ?? '') : parts.map(wrap).join(' and ');
  };
  const parseNot = (): string => {
    if (peek() === 'not') {
      i++;
      return `not (${parseNot()})`;
    }
    return parseAtom();
  };
  // an operand: its tokens, parenthesised when it applies filters
  const operand = (segment: CondToken[]): string => {
    const s = joinTokens(segment).trim();
    return segment.some((t) => t.text === '|') ? `(${s})` : s;
  };
  const parseAtom = (): string => {
    const segments: CondToken[][] = [[]];
    const ops: string[] = [];
    while (i < toks.length && peek() !== 'and' && peek() !== 'or' && peek() !== ')') {
      const tok = toks[i] as CondToken;
      const cur = segments[segments.length - 1] as CondToken[];
      if (tok.text === '(') {
        i++;
        const inner = parseOr();
        if (peek() !== ')') throw new Error('unbalanced parentheses');
        i++;
        cur.push({ text: wrap(inner), space: tok.space });
      } else if (tok.text === 'not' && toks[i + 1]?.text === 'in' && cur.length > 0) {
        i += 2;
        ops.push('not in');
        segments.push([]);
      } else if (COMPARISONS.has(tok.text) && cur.length > 0) {
        i++;
        ops.push(tok.text);
        segments.push([]);
      } else if (tok.text.startsWith('[')) {
        const name = `__kplay_list_${Object.keys(lists).length}`;
        lists[name] = parseListLiteral(tok.text);
        cur.push({ text: name, space: tok.space });
        i++;
      } else {
        const literal = JINJA_LITERALS[tok.text];
        cur.push(literal !== undefined ? { text: literal, space: tok.space } : tok);
        i++;
      }
    }
    if (ops.length === 0) return joinTokens(segments[0] ?? []).trim();
    if (ops.length === 1 && ops[0] === 'not in') return `not (${operand(segments[0] ?? [])} in ${operand(segments[1] ?? [])})`;
    if (ops.includes('not in')) throw new Error('`not in` cannot be chained with other comparisons: add parentheses');
    return segments.map((seg, k) => (k === 0 ? operand(seg) : `${ops[k - 1] ?? ''} ${operand(seg)}`)).join(' ');
  };
  let out: string;
  try {
    out = parseOr();
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('list literal')) throw e;
    return { expr: text, lists };
  }
  return i === toks.length ? { expr: out, lists } : { expr: text, lists: {} };
}

/**
 * Jinja's `in`: an item of a list (deep equality), a key of a map, a substring of a string.
 * Anything else on the right is an error (Python: "argument of type 'int' is not iterable").
 */
function inOperator(l: unknown, r: unknown): boolean {
  const item: unknown = toValue(l);
  const container: unknown = toValue(r);
  if (Array.isArray(container)) return container.some((x) => deepEqual(x, item));
  if (typeof container === 'string') return typeof item === 'string' && container.includes(item);
  if (isPlainMap(container)) return (typeof item === 'string' || typeof item === 'number') && Object.prototype.hasOwnProperty.call(container, String(item));
  const type = container === null || container === undefined ? 'null' : typeof container;
  throw new Error(`"in" needs a list, map or string on its right, got a ${type}`);
}

/** Structural equality of JSON-like values (Python's == on lists and dicts). */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, k) => deepEqual(x, b[k]));
  if (isPlainMap(a) && isPlainMap(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function shorten(text: string, max = 80): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}

/** Check the operator/operand structure of a parsed expression (liquidjs silently ignores extra operands). */
function checkExpressionShape(initial: unknown): string | undefined {
  const postfix = (initial as { postfix?: unknown }).postfix;
  if (!Array.isArray(postfix)) return undefined;
  let depth = 0;
  for (const tok of postfix as { kind?: unknown; operator?: unknown; getText?: () => string }[]) {
    if (tok.kind === TokenKind.Operator) {
      const need = tok.operator === 'not' ? 1 : 2;
      if (depth < need) return `operator "${String(tok.operator)}" is missing an operand`;
      depth -= need - 1;
    } else {
      depth++;
    }
  }
  return depth > 1 ? 'two values without an operator between them (missing and/or/==?)' : undefined;
}

/**
 * The template engine. One instance is shared (see {@link templar}); it holds a liquidjs
 * instance and a bounded cache of parsed templates and expressions.
 */
export class Templar {
  private readonly liquid: Liquid;
  private readonly templates: BoundedCache<Template[]>;
  private readonly values: BoundedCache<Value>;

  /** Create an engine; `opts` only tunes limits (the sandbox and strictness are fixed). */
  constructor(opts: TemplarOptions = {}) {
    this.liquid = new Liquid({
      strictVariables: true,
      strictFilters: true,
      lenientIf: true,
      ownPropertyOnly: true,
      groupedExpressions: true,
      operators: { ...defaultOperators, in: inOperator },
      jsTruthy: false,
      fs: NO_FS,
      root: [],
      partials: [],
      layouts: [],
      relativeReference: false,
      dynamicPartials: false,
      cache: false,
      // Set, so liquidjs does not ask Intl for the machine's locale (~25 ms at start-up), and
      // dates print the same on every machine (like Ansible's strftime under the C locale).
      locale: 'en-US',
      outputEscape: outputText,
      parseLimit: opts.parseLimit ?? 4_000_000,
      renderLimit: opts.renderLimit ?? 5_000,
      memoryLimit: opts.memoryLimit ?? 20_000_000,
    });
    for (const [name, impl] of filterEntries()) this.liquid.registerFilter(name, impl);
    for (const name of REFUSED_TAGS) {
      this.liquid.registerTag(
        name,
        class extends Tag {
          constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
            super(token, remain, liquid);
            throw new Error(`the "${name}" tag is not allowed: templates cannot read files`);
          }
          *render(): Generator<unknown, void, unknown> {
            // never reached: construction fails
          }
        },
      );
    }
    const size = opts.cacheSize ?? 5000;
    this.templates = new BoundedCache(size);
    this.values = new BoundedCache(size);
  }

  /** True when the value (string) contains `{{` or `{%`. */
  static isTemplated(value: unknown): boolean {
    return typeof value === 'string' && (value.includes('{{') || value.includes('{%'));
  }

  /** Render a string; native type kept for single-expression strings. */
  async render(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<unknown> {
    return this.renderSync(template, vars, opts);
  }

  /** Render to string always. */
  async renderString(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<string> {
    return this.renderStringSync(template, vars, opts);
  }

  /**
   * Recursively render every string in a JSON-like value (maps, lists), returning a new value.
   * Keys are not rendered. Error positions come from the YAML loader (`posOf(parent, key)`) when
   * known, else `opts.where`. Loader positions are copied to the new maps and lists.
   */
  async renderValue(value: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<unknown> {
    return this.renderValueSync(value, vars, opts);
  }

  /** Evaluate a condition (string | string[] | boolean); all list entries must hold. */
  async evalCondition(cond: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): Promise<boolean> {
    return this.evalConditionSync(cond, vars, opts);
  }

  /**
   * Render and report the value with its Python type name as Ansible would see it (`int`, `float`,
   * `str`, `bool`, `NoneType`, `list`, `dict`): the differential suite against ansible-core's
   * templar compares both.
   */
  renderTyped(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): { value: unknown; type: string } {
    const value = this.renderAt(template, vars, opts.where);
    const type = value === null || value === undefined ? 'NoneType' : typeof value === 'boolean' ? 'bool' : typeof value === 'number' ? (Number.isInteger(value) ? 'int' : 'float') : typeof value === 'string' ? 'str' : Array.isArray(value) ? 'list' : 'dict';
    return { value, type };
  }

  /** Synchronous {@link render} (templates never do I/O, so rendering is synchronous inside). */
  renderSync(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): unknown {
    return this.renderAt(template, vars, opts.where);
  }

  /** Synchronous {@link renderString}. */
  renderStringSync(template: string, vars: Record<string, unknown>, opts: RenderOptions = {}): string {
    if (!Templar.isTemplated(template)) return template;
    return this.renderTemplateAt(template, vars, opts.where);
  }

  /** Synchronous {@link renderValue} (e.g. for lazily rendered variables behind getters). */
  renderValueSync(value: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): unknown {
    return this.renderValueAt(value, vars, opts.where);
  }

  /** Synchronous {@link evalCondition}. */
  evalConditionSync(cond: unknown, vars: Record<string, unknown>, opts: RenderOptions = {}): boolean {
    if (Array.isArray(cond)) {
      for (let i = 0; i < cond.length; i++) {
        if (!this.evalOne(cond[i], vars, posOf(cond, i) ?? opts.where)) return false;
      }
      return true;
    }
    return this.evalOne(cond, vars, opts.where);
  }

  /**
   * Static check without variables: parse every template string (and every condition under the
   * keys in {@link CONDITION_KEYS} and `assert.that`, via {@link checkCondition}) under value.
   * Throws InputError at the string's position.
   */
  check(value: unknown, opts: RenderOptions = {}): void {
    this.checkWalk(value, opts.where, undefined);
  }

  /** Statically check a condition (string | string[] | boolean): syntax, filters, refused tags. */
  checkCondition(cond: unknown, opts: RenderOptions = {}): void {
    if (Array.isArray(cond)) {
      cond.forEach((c, i) => this.checkOneCondition(c, posOf(cond, i) ?? opts.where));
      return;
    }
    this.checkOneCondition(cond, opts.where);
  }

  /** Variable names referenced by a template string (top-level names), best effort — used by `validate` to warn. */
  variablesOf(template: string): string[] {
    if (!Templar.isTemplated(template)) return [];
    try {
      const single = singleExpression(template);
      const tpl = single !== undefined ? this.liquid.parse(`{{${single}}}`) : this.parseTemplate(template, undefined);
      return [...new Set(this.liquid.globalVariablesSync(tpl))];
    } catch {
      return [];
    }
  }

  /**
   * Variable paths referenced by a template string (`hostvars['c1'].mine` → `['hostvars', 'c1',
   * 'mine']`; a dynamic segment ends the path), best effort: `[]` when it cannot be parsed.
   */
  variablePathsOf(template: string): (string | number)[][] {
    if (!Templar.isTemplated(template)) return [];
    try {
      const single = singleExpression(template);
      const tpl = single !== undefined ? this.liquid.parse(`{{${single}}}`) : this.parseTemplate(template, undefined);
      return this.liquid.globalVariableSegmentsSync(tpl).map((segs) => {
        const out: (string | number)[] = [];
        for (const s of segs) {
          if (typeof s !== 'string' && typeof s !== 'number') break;
          out.push(s);
        }
        return out;
      });
    } catch {
      return [];
    }
  }

  /** Variable names referenced by a condition (top-level names; `x is defined` tests excluded), best effort. */
  variablesOfCondition(cond: unknown): string[] {
    const list = Array.isArray(cond) ? cond : [cond];
    const out = new Set<string>();
    for (const c of list) {
      if (typeof c !== 'string') continue;
      const { text } = rewriteTests(stripBraces(c), undefined);
      try {
        const { expr, lists } = normalizeCondition(text);
        for (const v of this.liquid.globalVariablesSync(`{% if ${expr} %}{% endif %}`)) if (!(v in lists)) out.add(v);
      } catch {
        // a syntax error is reported by checkCondition
      }
    }
    return [...out];
  }

  // ---- internals -------------------------------------------------------------------------

  private context(vars: Record<string, unknown>): Context {
    // vars are looked up as globals: never copied, and `{% assign %}`/`{% increment %}` write to
    // the context's own scopes, so the caller's object is never modified.
    return new Context(Object.create(null) as object, this.liquid.options, { sync: true, globals: vars }, { liquid: this.liquid });
  }

  private renderAt(template: string, vars: Record<string, unknown>, where: SourcePos | undefined): unknown {
    if (!Templar.isTemplated(template)) return template;
    const single = singleExpression(template);
    if (single === undefined) return this.renderTemplateAt(template, vars, where);
    const value = this.parseExpression(single, template, where, 'template');
    try {
      return toValue(toValueSync(value.value(this.context(vars), false))) ?? null;
    } catch (e) {
      throw this.error('template', template, e, where);
    }
  }

  private renderTemplateAt(template: string, vars: Record<string, unknown>, where: SourcePos | undefined): string {
    const tpl = this.parseTemplate(template, where);
    try {
      return String(this.liquid.renderSync(tpl, this.context(vars)));
    } catch (e) {
      throw this.error('template', template, e, where);
    }
  }

  private renderValueAt(value: unknown, vars: Record<string, unknown>, where: SourcePos | undefined): unknown {
    if (typeof value === 'string') return this.renderAt(value, vars, where);
    if (Array.isArray(value)) {
      const out = value.map((item, i) => this.renderValueAt(item, vars, posOf(value, i) ?? where));
      copyPos(value, out);
      return out;
    }
    if (isPlainMap(value)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        Object.defineProperty(out, k, {
          value: this.renderValueAt(v, vars, posOf(value, k) ?? where),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      copyPos(value, out);
      return out;
    }
    return value;
  }

  private evalOne(cond: unknown, vars: Record<string, unknown>, where: SourcePos | undefined): boolean {
    if (typeof cond === 'boolean') return cond;
    if (typeof cond !== 'string') throw this.badCondition(cond, where);
    let text: string;
    try {
      text = rewriteTests(stripBraces(cond), vars).text;
    } catch (e) {
      throw this.error('condition', cond, e, where);
    }
    let norm: NormalizedCondition;
    try {
      norm = normalizeCondition(text);
    } catch (e) {
      throw this.error('condition', cond, e, where);
    }
    const value = this.parseExpression(norm.expr, cond, where, 'condition');
    let result: unknown;
    try {
      const ctx = this.context(vars);
      if (Object.keys(norm.lists).length > 0) ctx.push(norm.lists);
      result = toValue(toValueSync(value.value(ctx, false)));
    } catch (e) {
      throw this.error('condition', cond, e, where);
    }
    if (typeof result === 'boolean') return result;
    // As ansible-core 2.19: a condition must decide with a boolean, not with the truthiness of a
    // list, string, number or null (an empty list would otherwise run the task).
    const type = result === null || result === undefined ? 'null' : Array.isArray(result) ? 'list' : typeof result === 'object' ? 'map' : typeof result;
    throw new InputError(
      `condition ${shorten(cond)} has a ${type} result (${clip(JSON.stringify(result) ?? String(result), 40)}), not a boolean: conditions must have a boolean result`,
      where,
      type === 'list' || type === 'map' ? 'test it explicitly, e.g. `x | size > 0`' : type === 'string' ? 'compare it (`x == "yes"`) or cast it with `x | bool`' : 'compare it explicitly, e.g. `x != 0` or `x != nil`',
    );
  }

  private checkOneCondition(cond: unknown, where: SourcePos | undefined): void {
    if (typeof cond === 'boolean') return;
    if (typeof cond !== 'string') throw this.badCondition(cond, where);
    const { text } = rewriteTests(stripBraces(cond), undefined);
    let norm: NormalizedCondition;
    try {
      norm = normalizeCondition(text);
    } catch (e) {
      throw this.error('condition', cond, e, where);
    }
    this.parseExpression(norm.expr, cond, where, 'condition');
  }

  private badCondition(cond: unknown, where: SourcePos | undefined): InputError {
    const what = cond === null ? 'null' : Array.isArray(cond) ? 'a nested list' : typeof cond;
    return new InputError(
      `invalid condition: expected a string, a list of strings or a boolean, got ${what}`,
      where,
      'write a Liquid condition such as: env == "prod" and not skip',
    );
  }

  private checkWalk(value: unknown, where: SourcePos | undefined, parentKey: string | undefined): void {
    if (typeof value === 'string') {
      if (!Templar.isTemplated(value)) return;
      const single = singleExpression(value);
      if (single !== undefined) this.parseExpression(single, value, where, 'template');
      else this.parseTemplate(value, where);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, i) => this.checkWalk(item, posOf(value, i) ?? where, undefined));
      return;
    }
    if (isPlainMap(value)) {
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

  private parseTemplate(template: string, where: SourcePos | undefined): Template[] {
    const hit = this.templates.get(template);
    if (hit) return hit;
    let tpl: Template[];
    try {
      tpl = this.liquid.parse(template);
    } catch (e) {
      throw this.error('template', template, e, where);
    }
    this.templates.set(template, tpl);
    return tpl;
  }

  /** Parse a bare expression (with filters), requiring the whole text to be consumed. */
  private parseExpression(expr: string, original: string, where: SourcePos | undefined, kind: 'template' | 'condition'): Value {
    const hit = this.values.get(expr);
    if (hit) return hit;
    let value: Value;
    try {
      const opts = this.liquid.options;
      const tokenizer = new Tokenizer(expr, opts.operators, undefined, undefined, opts.groupedExpressions);
      const token = tokenizer.readFilteredValue();
      tokenizer.skipBlank();
      if (!tokenizer.end()) throw new Error(`unexpected text ${shorten(expr.slice(tokenizer.p), 30)}`);
      const shape = checkExpressionShape(token.initial);
      if (shape) throw new Error(shape);
      value = new Value(token, this.liquid);
    } catch (e) {
      throw this.error(kind, original, e, where);
    }
    this.values.set(expr, value);
    return value;
  }

  /** Turn anything thrown by liquidjs or a filter into an InputError naming the template. */
  private error(kind: 'template' | 'condition', template: string, e: unknown, where: SourcePos | undefined): InputError {
    // An InputError raised while reading a variable (a lazily rendered var that failed) keeps its
    // own message and position: liquidjs wraps it as an UndefinedVariableError/RenderError.
    for (let cur: unknown = e, n = 0; cur && n < 10; n++) {
      if (cur instanceof InputError) return cur;
      cur = (cur as { originalError?: unknown }).originalError;
    }
    const raw = e instanceof Error ? e.message : String(e);
    let msg = raw.split('\n')[0] ?? '';
    let line: number | undefined;
    const posm = /, (?:file:[^,]*, )?line:(\d+), col:(\d+)$/.exec(msg);
    if (posm) {
      msg = msg.slice(0, posm.index);
      line = Number(posm[1]);
    }
    let hint: string | undefined;
    const undef = /^undefined variable: (.+)$/.exec(msg);
    if (undef) {
      const token = (e as { token?: { input?: unknown; end?: unknown } }).token;
      const after = typeof token?.input === 'string' && typeof token.end === 'number' ? token.input.slice(token.end) : '';
      if (/^\s*\|\s*mandatory\b/.test(after)) {
        msg = `mandatory variable "${undef[1]}" is not set`;
        hint = 'define it in vars, inventory or -e';
      } else {
        hint = HINT_UNDEFINED;
      }
    } else if (/^undefined filter: /.test(msg)) {
      hint = HINT_FILTER;
    } else if (/limit exceeded$/.test(msg)) {
      hint = HINT_LIMIT;
    }
    const lineInfo = line !== undefined && template.includes('\n') ? ` (line ${line} of the template)` : '';
    return new InputError(`${kind} error in ${shorten(template)}: ${msg}${lineInfo}`, where, hint);
  }
}

/** The shared engine. */
export const templar = new Templar();
