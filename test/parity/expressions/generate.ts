// Generated cases of the differential expression suite: grids of operand values (undefined names, None,
// '', 0, 1, -1, 2.5, 'abc', [], [1, 2], {}, {'a': 1}, nested data, True/False) × operators, filters,
// tests, accesses, guards and renderings, plus random expressions (operator precedence, filter
// chains) from a fixed seed. Deterministic: the same cases, in the same order, on every run.
import type { CaseKind, ExprCase } from './cases.js';

/** Marks a variable that is not defined at all (absent from vars). */
const UNDEF = Symbol('undefined');
type GridValue = unknown;

/** The operand grid: a label (for reading) and a value. */
const GRID: readonly (readonly [string, GridValue])[] = [
  ['undefined', UNDEF],
  ['None', null],
  ["''", ''],
  ['0', 0],
  ['1', 1],
  ['-1', -1],
  ['2.5', 2.5],
  ["'abc'", 'abc'],
  ["'1'", '1'],
  ['[]', []],
  ['[1, 2]', [1, 2]],
  ['{}', {}],
  ["{'a': 1}", { a: 1 }],
  ['nested', { a: { b: { c: 1 } }, l: [{ n: 1, s: 'x' }, { n: 2, s: 'y' }] }],
  ['True', true],
  ['False', false],
];

/** A smaller grid for the two-operand families (every pair is a case). */
const PAIR_GRID = GRID.filter(([label]) => !['nested', "'1'", '{}'].includes(label));

/** mulberry32: a small seeded PRNG (fixed seed: the same cases every run). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(rand: () => number, xs: readonly T[]): T {
  const x = xs[Math.floor(rand() * xs.length)];
  if (x === undefined) throw new Error('pick from an empty list');
  return x;
}

/** Variables from name → grid value (UNDEF names left out). */
function varsOf(entries: Record<string, GridValue>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(entries)) if (v !== UNDEF) out[k] = v;
  return out;
}

/** A Jinja literal for a JSON-like value (as Python writes it). */
export function literal(v: unknown): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${literal(k)}: ${literal(x)}`).join(', ')}}`;
  throw new Error(`no literal for ${String(v)}`);
}

class Family {
  readonly cases: ExprCase[] = [];
  private readonly seen = new Set<string>();
  constructor(private readonly name: string) {}
  /** Add a case (an identical one already there is skipped). */
  add(text: string, vars: Record<string, unknown>, kind: CaseKind = 'template'): void {
    const key = `${kind}\0${text}\0${JSON.stringify(vars)}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const group = `gen/${this.name}`;
    this.cases.push({ id: `${group}#${this.cases.length + 1}`, group, kind, text, vars });
  }
}

const BINARY_OPS = ['+', '-', '*', '/', '//', '%', '**', '~', '==', '!=', '<', '<=', '>', '>=', 'in', 'not in', 'and', 'or'] as const;

/** `{{ a OP b }}` over every pair of the grid, with the operands as variables. */
function binaryOperators(): Family {
  const f = new Family('binary-operators');
  for (const op of BINARY_OPS) {
    for (const [, a] of PAIR_GRID) for (const [, b] of PAIR_GRID) f.add(`{{ a ${op} b }}`, varsOf({ a, b }));
  }
  return f;
}

/** The same operators with literal operands (Jinja folds constants at compile time). */
function literalOperators(): Family {
  const f = new Family('literal-operators');
  const values = [null, '', 0, 1, -1, 2.5, 'abc', [], [1, 2], { a: 1 }, true];
  const rand = prng(0x1173);
  for (const op of BINARY_OPS) {
    for (let i = 0; i < 14; i++) f.add(`{{ ${literal(pick(rand, values))} ${op} ${literal(pick(rand, values))} }}`, {});
  }
  for (const [, a] of GRID) {
    for (const u of ['-', 'not ', '+']) f.add(`{{ ${u}a }}`, varsOf({ a }));
  }
  return f;
}

/** Filters applied to every grid value: `{{ a | F }}`. */
const FILTERS = [
  'default', "default('D')", "default('D', true)", "d('D')", 'default(omit) is string', 'bool', 'int', 'float', 'string', 'length', 'count', 'first', 'last',
  'list', 'unique', 'sort', 'reverse | list', 'min', 'max', 'sum', 'join', "join(',')", 'lower', 'upper', 'capitalize', 'title', 'trim',
  'to_json', 'to_nice_json', 'to_yaml', 'to_nice_yaml', 'b64encode', 'type_debug', 'mandatory', 'dict2items', 'items2dict', 'flatten',
  'abs', 'round', 'int + 1', "ternary('yes', 'no')", "regex_replace('a', 'X')", "regex_search('b')", "regex_findall('.')", 'quote', 'hash',
  "hash('md5')", 'checksum', 'basename', 'dirname', 'combine({})', 'items', 'map("string") | list', 'select | list', 'reject | list',
  'batch(2) | list', 'wordcount', 'tojson', 'string | length', 'bool | ternary(1, 0)', 'from_json', 'from_yaml', 'split', 'urlencode', 'center(7)',
] as const;

function filtersOnValues(): Family {
  const f = new Family('filters');
  for (const filter of FILTERS) for (const [, a] of GRID) f.add(`{{ a | ${filter} }}`, varsOf({ a }));
  return f;
}

/** Tests applied to every grid value: `{{ a is T }}` (and some `is not`). */
const TESTS = [
  'defined', 'undefined', 'none', 'not none', 'string', 'number', 'integer', 'float', 'boolean', 'mapping', 'sequence', 'iterable',
  'true', 'false', 'truthy', 'falsy', 'even', 'odd', 'divisibleby(2)', 'in([1, 2])', "in('abc')", 'contains(1)', "contains('a')",
  'equalto(1)', 'eq 1', 'sameas true', 'lower', 'upper', "match('a')", "search('b')", "regex('^a')", "version('1.0', '>=')",
  'subset([1, 2, 3])', 'superset([1])', 'failed', 'succeeded', 'changed', 'skipped', 'not defined', 'callable',
] as const;

function testsOnValues(): Family {
  const f = new Family('tests');
  for (const test of TESTS) for (const [, a] of GRID) f.add(`{{ a is ${test} }}`, varsOf({ a }));
  return f;
}

/** Conditions (`when:`) on single values: what counts as true, and what Ansible refuses. */
function truthiness(): Family {
  const f = new Family('truthiness');
  const conds = ['a', 'not a', 'a | bool', 'a | length > 0', 'a == a', 'a != None', 'a is none or a', 'not not a', 'a and True', 'a or False', '(a | default(false)) | bool', 'a | default(0) | int > 0'];
  for (const c of conds) for (const [, a] of GRID) f.add(c, varsOf({ a }), 'cond');
  return f;
}

/** Guards over a possibly undefined / partial `x`. */
function guards(): Family {
  const f = new Family('guards');
  const xs: GridValue[] = [UNDEF, null, {}, { y: 1 }, { y: 2 }, { y: { z: 1 } }, { y: null }, 'str', [], [1], { z: 1 }];
  const exprs = [
    'x is defined and x.y == 1', 'x is not defined or x.y == 1', 'x is defined and x.y is defined and x.y == 1', 'x.y is defined',
    'x.y is not defined', 'x.y | default(0) == 1', 'x.y.z is defined', 'x is defined and x.y is defined and x.y.z is defined',
    '(x.y | default({})).z | default(3) == 3', 'x | default({}) | length > 0', "x.y is defined and x.y", 'x.y == 1 if x is defined else false',
    "'y' in x", "x is mapping and 'y' in x", 'x.y is none', 'x is defined and x', 'not x is defined', 'x is undefined',
    'x.y | default(none) is none', "x['y'] | default(1) == 1", 'x is defined and x.y | int > 0', "x.get('y') == 1",
  ];
  for (const e of exprs) {
    for (const x of xs) {
      f.add(e, varsOf({ x }), 'cond');
      f.add(`{{ ${e} }}`, varsOf({ x }));
    }
  }
  return f;
}

/** Attribute, subscript, slice and method access on every grid value. */
function access(): Family {
  const f = new Family('access');
  const forms = [
    'a.a', "a['a']", 'a[0]', 'a[-1]', 'a[1:]', 'a[:1]', 'a[::-1]', 'a.a.b', "a.a.b.c", "a['l'][0]['n']", "a.l[1].s", 'a.a | default(\'D\')',
    "a.get('a')", "a.get('a', 'D')", 'a.keys() | list', 'a.values() | list', 'a.items() | list', 'a.upper()', 'a.split()', "a.startswith('a')",
    'a.length', 'a.size', 'a.0', 'a[a]', 'a.missing', 'a.missing | default(7)', "a['missing'] | default(7)",
  ];
  for (const form of forms) for (const [, a] of GRID) f.add(`{{ ${form} }}`, varsOf({ a }));
  return f;
}

/** How values render: alone (native type), inside a longer string (Python str()), in literals. */
function rendering(): Family {
  const f = new Family('rendering');
  const forms = ['v={{ a }}', '{{ a }} and {{ a }}', '{{ [a] }}', "{{ {'k': a} }}", '{{ a }}{{ a }}', ' {{ a }}', '{{ a }}\n', '{{ a }} ', "{{ a | string }}", '[{{ a }}]', '{% if a %}T{% else %}F{% endif %}', "{{ a ~ '' }}", '{{ (a,) }}', '{{ a | to_json }}'];
  for (const form of forms) for (const [, a] of GRID) f.add(form, varsOf({ a }));
  return f;
}

/** String methods over a few strings. */
function stringMethods(): Family {
  const f = new Family('string-methods');
  const strings = ['', 'abc', ' A b ', 'a,b,,c', 'ABC', "it's", '1.5', 'x{}y', 'Hello World', 'a-b_c'];
  const methods = [
    'upper()', 'lower()', 'strip()', 'lstrip()', 'rstrip()', 'split()', "split(',')", "split(',', 1)", "startswith('a')", "endswith('c')",
    "replace('a', 'b')", 'title()', 'capitalize()', "find('b')", "count('a')", 'isdigit()', "format(1)", "join(['1', '2'])", 'splitlines()',
    "rsplit('-', 1)", 'swapcase()', "zfill(5)", "center(9, '*')", "ljust(6, '.')", "partition(',')", "index('a')", 'isupper()', 'islower()',
  ];
  for (const m of methods) for (const s of strings) f.add(`{{ s.${m} }}`, { s });
  return f;
}

/** Random arithmetic / boolean expressions over small literals: precedence and associativity. */
function precedence(): Family {
  const f = new Family('precedence');
  const rand = prng(0x9e3779b9);
  // mostly numbers: a few strings/None, so that most expressions have a value (errors are in other families too)
  const atom = (): string => pick(rand, ['0', '1', '2', '3', '5', '7', '-1', '2.5', '0.5', 'True', 'False', 'n', 'm', 'n', 'm', 'None', "'a'"]);
  const expr = (depth: number, top = false): string => {
    if (depth === 0 || (!top && rand() < 0.25)) return atom();
    const r = rand();
    if (r < 0.55) return `${expr(depth - 1)} ${pick(rand, ['+', '-', '*', '/', '//', '%', '==', '!=', '<', '>=', 'and', 'or', '~', 'in'])} ${expr(depth - 1)}`;
    if (r < 0.62) return `${expr(depth - 1)} ** ${pick(rand, ['0', '1', '2', '3', '-1'])}`;
    if (r < 0.7) return `not ${expr(depth - 1)}`;
    if (r < 0.76) return `-${expr(depth - 1)}`;
    if (r < 0.86) return `(${expr(depth - 1)})`;
    if (r < 0.93) return `${expr(depth - 1)} if ${expr(depth - 1)} else ${expr(depth - 1)}`;
    return `[${expr(depth - 1)}, ${expr(depth - 1)}] | ${pick(rand, ['first', 'last', 'length', 'max', 'sum', 'unique | list', 'sort | first'])}`;
  };
  for (let i = 0; i < 360; i++) f.add(`{{ ${expr(3, true)} }}`, { n: 4, m: 0.5 });
  for (let i = 0; i < 80; i++) f.add(expr(3, true), { n: 4, m: 0.5 }, 'cond');
  return f;
}

/** What a value in a filter chain is (which stages apply to it). */
type Shape = 'records' | 'strings' | 'numbers' | 'lists' | 'dict' | 'scalar';

/**
 * Filter stages by the shape they take and the shape they give. Set operations are followed by `sort`:
 * their order is Python's set order, random per process for strings.
 */
const STAGES: readonly (readonly [Shape, string, Shape])[] = [
  ['records', "selectattr('ready')", 'records'], ['records', "rejectattr('ready')", 'records'],
  ['records', "selectattr('phase', 'equalto', 'Running')", 'records'], ['records', "selectattr('restarts', '>', 0)", 'records'],
  ['records', "selectattr('labels.tier', 'defined')", 'records'], ['records', "rejectattr('labels.app', 'in', ['web'])", 'records'],
  ['records', "sort(attribute='name')", 'records'], ['records', "sort(attribute='restarts,name', reverse=true)", 'records'],
  ['records', 'reverse | list', 'records'], ['records', "json_query('[?ready]')", 'records'], ['records', "unique(attribute='phase')", 'records'],
  ['records', "map(attribute='name')", 'strings'], ['records', "map(attribute='phase')", 'strings'],
  ['records', "map(attribute='labels.app', default='none')", 'strings'], ['records', "json_query('[].name')", 'strings'],
  ['records', "json_query('[?restarts > `0`].labels.app')", 'strings'], ['records', "map(attribute='restarts')", 'numbers'],
  ['records', "map(attribute='ports')", 'lists'], ['records', "json_query('[].ports')", 'lists'],
  ['records', "items2dict(key_name='name', value_name='phase')", 'dict'], ['records', 'first', 'dict'], ['records', 'last', 'dict'],
  ['records', "groupby('phase') | map('first') | list", 'strings'], ['records', 'length', 'scalar'], ['records', "json_query('length(@)')", 'scalar'],
  ['records', "map(attribute='labels') | combine", 'dict'], ['records', "sum(attribute='restarts')", 'scalar'], ['records', "max(attribute='restarts')", 'dict'],
  ['lists', 'flatten', 'numbers'], ['lists', 'flatten(1)', 'numbers'], ['lists', 'map("length") | list', 'numbers'], ['lists', 'first', 'numbers'],
  ['strings', 'unique', 'strings'], ['strings', 'sort', 'strings'], ['strings', "map('upper')", 'strings'], ['strings', "reject('equalto', 'a')", 'strings'],
  ['strings', "select('match', 'w')", 'strings'], ['strings', "select('search', 'b')", 'strings'], ['strings', "difference(['a', 'web']) | sort", 'strings'],
  ['strings', "union(['z']) | sort", 'strings'], ['strings', "intersect(['a', 'c', 'web', 'db']) | sort", 'strings'], ['strings', 'reverse | list', 'strings'],
  ['strings', "map('regex_replace', '^(.).*$', '\\1')", 'strings'], ['strings', "map('length') | list", 'numbers'], ['strings', "zip([1, 2, 3]) | list", 'lists'],
  ['strings', "join(',')", 'scalar'], ['strings', 'length', 'scalar'], ['strings', 'first', 'scalar'], ['strings', 'last', 'scalar'], ['strings', 'min', 'scalar'],
  ['strings', 'max', 'scalar'], ['strings', 'community.general.counter', 'dict'], ['strings', 'to_json', 'scalar'], ['strings', "select('in', ['a', 'b'])", 'strings'],
  ['numbers', 'unique', 'numbers'], ['numbers', 'sort', 'numbers'], ['numbers', 'sort(reverse=true)', 'numbers'], ['numbers', "map('int')", 'numbers'],
  ['numbers', "select('odd')", 'numbers'], ['numbers', "reject('even')", 'numbers'], ['numbers', 'difference([3]) | sort', 'numbers'], ['numbers', "select('gt', 1)", 'numbers'],
  ['numbers', "map('string')", 'strings'], ['numbers', 'sum', 'scalar'], ['numbers', 'min', 'scalar'], ['numbers', 'max', 'scalar'], ['numbers', 'length', 'scalar'],
  ['numbers', 'first', 'scalar'], ['numbers', "join('-')", 'scalar'], ['numbers', 'sum(start=10)', 'scalar'], ['numbers', 'batch(2) | list', 'lists'],
  ['dict', "combine({'replicas': 3})", 'dict'], ['dict', "combine({'image': {'tag': 'x'}}, recursive=true)", 'dict'],
  ['dict', "combine({'env': ['B=2']}, list_merge='append')", 'dict'], ['dict', 'dict2items', 'records'], ['dict', 'list', 'strings'],
  ['dict', 'to_json', 'scalar'], ['dict', 'length', 'scalar'], ['dict', "dict2items | map(attribute='key') | list", 'strings'],
  ['dict', 'to_nice_yaml', 'scalar'], ['dict', "json_query('image.tag')", 'scalar'],
  ['scalar', 'string', 'scalar'], ['scalar', 'to_json', 'scalar'], ['scalar', 'type_debug', 'scalar'], ['scalar', "default('D')", 'scalar'],
  ['scalar', 'string | length', 'scalar'],
];

/** Random filter chains over the data shapes Kubernetes playbooks handle (a few on the wrong shape). */
function filterChains(): Family {
  const f = new Family('filter-chains');
  const rand = prng(0x5eed);
  const vars = {
    pods: [
      { name: 'web-1', phase: 'Running', ready: true, restarts: 0, labels: { app: 'web', tier: 'front' }, ports: [80, 443] },
      { name: 'web-2', phase: 'Pending', ready: false, restarts: 3, labels: { app: 'web' }, ports: [80] },
      { name: 'db-0', phase: 'Running', ready: true, restarts: 1, labels: { app: 'db', tier: 'back' }, ports: [5432] },
      { name: 'job-x', phase: 'Succeeded', ready: false, restarts: 0, labels: {}, ports: [] },
    ],
    names: ['b', 'a', 'c', 'a'],
    nums: [3, 1, 2, 3, 10],
    conf: { replicas: 2, image: { repo: 'nginx', tag: '1.25' }, env: ['A=1'] },
  };
  const sources: readonly (readonly [string, Shape])[] = [['pods', 'records'], ['names', 'strings'], ['nums', 'numbers'], ['conf', 'dict']];
  for (let i = 0; i < 460; i++) {
    let [text, shape] = pick(rand, sources);
    const n = 1 + Math.floor(rand() * 4);
    for (let k = 0; k < n; k++) {
      const fits = STAGES.filter(([from]) => from === shape);
      // one stage in 12 ignores the shape: the error paths must agree too
      const [, stage, to] = rand() < 1 / 12 || fits.length === 0 ? pick(rand, STAGES) : pick(rand, fits);
      text += ` | ${stage}`;
      shape = to;
    }
    f.add(`{{ ${text} }}`, vars);
  }
  return f;
}

/** Every generated case (≥ 2,000), family by family. */
export function generateCases(): ExprCase[] {
  return [binaryOperators(), literalOperators(), filtersOnValues(), testsOnValues(), truthiness(), guards(), access(), rendering(), stringMethods(), precedence(), filterChains()].flatMap((f) => f.cases);
}
