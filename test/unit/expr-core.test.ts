// The expression engine's own contract (grammar, errors, sandbox, template statements, Liquid
// forms, static analysis). Agreement with ansible-core on values and types is proven separately
// by the differential suite in test/parity/expressions/.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { ExprParser } from '../../src/template/parser.js';
import { Templar, templar } from '../../src/template/index.js';

const vars = { replicas: 3, x: { y: 1 }, items: [{ name: 'a' }, { name: 'b' }], name: 'web', env: 'prod', on: true, d: { a: 1, b: 2 } };
const render = (t: string, v: Record<string, unknown> = vars): unknown => templar.renderSync(t, v);
const cond = (c: unknown, v: Record<string, unknown> = vars): boolean => templar.evalConditionSync(c, v);
const fails = (fn: () => unknown): InputError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an error');
};

describe('grammar', () => {
  it('parses into an AST with Jinja precedence', () => {
    const e = ExprParser.parse('a or b and not c == 1 + 2 * 3');
    expect(e.type).toBe('binary');
    if (e.type !== 'binary') return;
    expect(e.op).toBe('or');
    expect(e.right.type).toBe('binary');
    expect(render('{{ 1 + 2 * 3 ** 2 }}')).toBe(19);
    expect(render('{{ 2 ** 3 ** 2 }}')).toBe(64); // Jinja's ** is left-associative
    // `~` binds tighter than `+` in Jinja: 1 + ('2' ~ '3') adds an int and a str
    expect(fails(() => render('{{ 1 + 2 ~ 3 }}', {})).message).toContain("unsupported operand type(s) for +: 'int' and 'str'");
  });

  it('accepts Jinja call syntax and Liquid filter arguments alike', () => {
    expect(render('{{ nope | default(2) }}')).toBe(2);
    expect(render('{{ nope | default: 2 }}')).toBe(2);
    expect(render("{{ items | map(attribute='name') | join(',') }}")).toBe('a,b');
    expect(render("{{ 'a' if on else 'b' }}")).toBe('a');
    expect(render("{{ name ~ '-' ~ env }}")).toBe('web-prod');
  });

  it('reports a syntax error with the column and a caret', () => {
    const e = fails(() => render('{{ x.y +  }}'));
    expect(e.message).toContain('expected a value');
    expect(e.message).toMatch(/\n {4}\{\{ x\.y \+ {2}\}\}\n {4} {10}\^/);
    const e2 = fails(() => templar.check({ when: 'a b' }));
    expect(e2.hint).toMatch(/missing `and`/);
  });

  it('names the nearest filter for a typo, statically', () => {
    const e = fails(() => templar.check('{{ replicas | defualt(1) }}'));
    expect(e.message).toContain("no filter named 'defualt'");
    expect(e.hint).toContain("'default'");
    expect(fails(() => templar.checkCondition('x is definde')).message).toContain("no test named 'definde'");
  });
});

describe('undefined values', () => {
  it('short-circuit guards never read the right side', () => {
    expect(cond('nope is defined and nope.y == 1')).toBe(false);
    expect(cond('nope is not defined or nope.y == 1')).toBe(true);
    expect(cond('x is defined and x.y == 1')).toBe(true);
    expect(cond("hostvars[name].x is defined", { name: 'c1', hostvars: { c1: {} } })).toBe(false);
  });

  it('pass through access and default, and fail where used, naming the first missing part', () => {
    expect(render('{{ nope.y.z | default(7) }}')).toBe(7);
    const e = fails(() => cond('nope.y == 1'));
    expect(e.message).toContain("'nope' is undefined");
    expect(e.message).toMatch(/\n {4}nope\.y == 1\n {4}\^/);
    expect(fails(() => render('{{ x.y.z }}')).message).toContain("object of type 'int' has no attribute 'z'");
    expect(fails(() => render('{{ x.q }}')).hint).toMatch(/default/);
  });
});

describe('values and types', () => {
  it('keeps the native type of a single output and prints Python values in text', () => {
    expect(render('{{ replicas }}')).toBe(3);
    expect(render('{{ items | map(attribute="name") | list }}')).toEqual(['a', 'b']);
    expect(render('{% if on %}{{ d }}{% endif %}')).toEqual({ a: 1, b: 2 });
    expect(render('n={{ 4 / 2 }} {{ [1, "a"] }} {{ none }} {{ on }} {{ d }}')).toBe("n=2.0 [1, 'a']  True {'a': 1, 'b': 2}");
    expect(templar.renderTyped('{{ 4 / 2 }}', {})).toEqual({ value: 2, type: 'float' });
    expect(templar.renderTyped('{{ 7 // 2 }}', {})).toEqual({ value: 3, type: 'int' });
  });

  it('keeps ints beyond 2**53 exact inside a template and hands them out as JSON-safe numbers', () => {
    expect(render('v={{ 2 ** 70 + 1 }}')).toBe('v=1180591620717411303425');
    expect(render('{{ (2 ** 70 + 1) | to_json }}')).toBe('1180591620717411303425');
    expect(render('{{ 2 ** 70 + 1 - 2 ** 70 }}')).toBe(1);
    // a whole value leaves the engine as the nearest JS number: JSON can carry it
    const big = render('{{ {"n": 2 ** 70 + 1} }}');
    expect(big).toEqual({ n: 2 ** 70 });
    expect(JSON.stringify(big)).toBe('{"n":1.1805916207174113e+21}');
    expect(templar.renderTyped('{{ 2 ** 70 + 1 }}', {})).toEqual({ value: 2n ** 70n + 1n, type: 'int' });
    expect(fails(() => render('{{ 3 ** 10000000 }}')).message).toContain('kplay bounds template memory');
  });

  it('gives ansible-core 2.19 plug-in failures as markers that later filters pass on', () => {
    expect(render("{{ ['a'] | sum(start=1) | type_debug }}")).toBe('CapturedExceptionMarker');
    expect(fails(() => render("{{ ['a'] | sum(start=1) | default(0) }}")).message).toContain("unsupported operand type(s) for +: 'int' and 'str'");
  });

  it('has Jinja\'s cycler, joiner and lipsum, and now() as a datetime', () => {
    expect(render("{% set c = cycler('a', 'b') %}{% for x in [1, 2, 3] %}{{ c.next() }}{% endfor %}")).toBe('aba');
    expect(render("{% set j = joiner('+') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}")).toBe('1+2+3');
    const words = String(render('{{ lipsum(2, false, 10, 11) }}')).split('\n\n');
    expect(words.map((p) => p.split(' ').length)).toEqual([10, 10]);
    expect(words.every((p) => /^[A-Z].*\.$/.test(p))).toBe(true);
    expect(render('{{ now(utc=true) | type_debug }}')).toBe('datetime');
    expect(render("{{ now(true, '%Y') }}")).toBe(String(new Date().getUTCFullYear()));
  });

  it('keeps trailing newlines of a string result, as ansible-core', () => {
    expect(render('{{ name }}\n')).toBe('web\n');
    expect(render('{{ replicas }}\n')).toBe(3);
    expect(render('{{ replicas }}\n\n')).toBe('3\n\n');
  });

  it('leaves out module arguments rendered to omit', () => {
    expect(templar.renderValueSync({ a: '{{ omit }}', b: ['{{ omit }}', 1], c: '{{ nope | default(omit) }}' }, vars)).toEqual({ b: [1] });
  });

  it('formats strings as Python', () => {
    expect(render('{{ "%s-%02d" % ("a", 5) }}')).toBe('a-05');
    expect(render('{{ "{}-{:>3}".format("a", 5) }}')).toBe('a-  5');
    expect(render("{{ '%.1f' % 2.25 }}")).toBe('2.2');
  });
});

describe('template statements', () => {
  it('runs Jinja blocks with loop variables, set and whitespace control', () => {
    expect(render('{% for k, v in d.items() %}{{ k }}={{ v }}{% if not loop.last %},{% endif %}{% endfor %}')).toBe('a=1,b=2');
    expect(render('{% set z = replicas * 2 %}{{ z }}')).toBe(6);
    expect(render('{% for i in [1, 2, 3] if i > 1 %}{{ loop.index }}:{{ i }} {% else %}none{% endfor %}')).toBe('1:2 2:3 ');
    expect(render('{% set ns = namespace(n=0) %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}')).toBe(6);
    expect(render('a\n{% if on %}\nb\n{%- endif %}\nc')).toBe('a\nbc'); // trim_blocks drops the newline after each tag
    expect(render('{# note #}{{ 1 }}')).toBe(1);
    expect(render('{% raw %}{{ x }}{% endraw %}')).toBe('{{ x }}');
    expect(render('{% macro m(a, b=2) %}{{ a }}+{{ b }}{% endmacro %}{{ m(1) }}')).toBe('1+2');
  });

  it('keeps Liquid statements working', () => {
    expect(render('{% assign a = replicas | plus: 1 %}{{ a }}')).toBe(4);
    expect(render('{% if replicas > 5 %}big{% elsif replicas > 1 %}mid{% else %}small{% endif %}')).toBe('mid');
    expect(render('{% unless on %}off{% else %}on{% endunless %}')).toBe('on');
    expect(render('{% case env %}{% when "dev", "test" %}low{% when "prod" %}high{% endcase %}')).toBe('high');
    expect(render('{% for i in (1..3) %}{{ forloop.index }}{% endfor %}')).toBe('123');
    expect(render('{% capture c %}x{{ name }}{% endcapture %}{{ c }}')).toBe('xweb');
  });

  it('reads other files only on a search path: outside a run an include finds none', async () => {
    // (inside a run, the template action's, the template lookup's and the playbook's search paths: test/parity/cases/template-include.yml)
    expect(() => templar.check('{% include "x.j2" %}')).not.toThrow();
    await expect(templar.render('{% include "x.j2" %}', {})).rejects.toThrow(/'x\.j2' not found in search paths/);
  });
});

describe('Liquid forms of older kplay playbooks: a fallback where Jinja has no value', () => {
  const lv = { l: ['c1', 'c2', 'c3'], s: 'héllo', d: { a: 1, b: 2 }, keyed: { size: 'large', first: 'one', last: 'omega' }, e: [], n: null, i: 5 };
  const r = (t: string): unknown => render(t, lv);
  const c = (t: string): boolean => cond(t, lv);

  it('reads size of a list, string and mapping, first and last of a list, in {{ }} and in conditions', () => {
    expect([r('{{ l.size }}'), r('{{ l.first }}'), r('{{ l.last }}'), r("{{ l['size'] }}")]).toEqual([3, 'c1', 'c3', 3]);
    expect([r('{{ s.size }}'), r('{{ d.size }}'), r('{{ e.size }}')]).toEqual([5, 2, 0]); // code points, as `| length`
    expect(r('{{ l.size + 1 }} {{ l.first | upper }}')).toBe('4 C1');
    expect(r('{% if l.size == 3 %}three{% endif %}')).toBe('three');
    expect(c('l.size == 3')).toBe(true);
    expect(c('d.size == 2 and s.size > 4 and l.last == "c3"')).toBe(true);
    expect(c('l.size == 4')).toBe(false);
  });

  it('never changes a value Jinja defines: a key wins, and default / is defined see Jinja\'s undefined', () => {
    expect([r('{{ keyed.size }}'), r('{{ keyed.first }}'), r('{{ keyed.last }}'), r("{{ keyed['size'] }}")]).toEqual(['large', 'one', 'omega', 'large']);
    expect(c('keyed.size == "large"')).toBe(true);
    expect(r("{{ l.size | default('none') }}")).toBe('none');
    expect(r('{{ l.first is defined }}')).toBe(false);
    expect(c('l.size is undefined')).toBe(true);
    expect(c('(d.size | default(0)) == 0')).toBe(true);
  });

  it('an undefined value, and what Liquid has no property for, still fail as in Jinja', () => {
    expect(fails(() => r('{{ missing.size }}')).message).toContain("'missing' is undefined");
    expect(fails(() => c('missing.size == 3')).message).toContain("'missing' is undefined");
    expect(fails(() => r('{{ s.first }}')).message).toContain("object of type 'str' has no attribute 'first'");
    expect(fails(() => r('{{ i.size }}')).message).toContain("has no attribute 'size'");
    expect(fails(() => r('{{ e.first }}')).message).toContain('the list is empty: it has no first item');
    // the second reading makes the other undefined part the error, not the Liquid property
    expect(fails(() => c('l.size == missing')).message).toContain("'missing' is undefined");
  });

  it('`a contains b`: substring, list item, mapping key; false on nil; undefined fails', () => {
    expect([c('l contains "c2"'), c('l contains "c9"'), c('s contains "ll"'), c('d contains "a"'), c('n contains "x"'), c("'v1.29' contains 29")]).toEqual([true, false, true, true, false, true]);
    expect(c('not (l contains "c9") and l.size == 3')).toBe(true);
    expect(r('{% if s contains "é" %}yes{% endif %}')).toBe('yes');
    expect(fails(() => c('missing contains "x"')).message).toContain("'missing' is undefined");
  });

  it('gives the values Liquid (liquidjs, kplay\'s earlier engine) gives', async () => {
    const { Liquid } = await import('liquidjs');
    const liquid = new Liquid();
    const grid = { l: [1, 'b', 3], s: 'abc1', d: { a: 1 }, keyed: { size: 'S', first: 'F', last: 'L' }, e: [], n: null, i: 5 };
    const kplay = (t: string): unknown => {
      try {
        return render(`{{ ${t} }}`, grid) ?? undefined;
      } catch {
        return undefined; // Liquid's nil
      }
    };
    for (const v of Object.keys(grid)) for (const p of ['size', 'first', 'last']) expect(kplay(`${v}.${p}`), `${v}.${p}`).toEqual(liquid.evalValueSync(`${v}.${p}`, grid) ?? undefined);
    // (a mapping's keys: Shopify's Liquid and Python's `in` find them, liquidjs does not; kplay finds them)
    for (const [a, b] of [['l', '1'], ['l', "'1'"], ['l', "'b'"], ['s', "'bc'"], ['s', '1'], ['s', "'x'"], ['n', '1'], ['i', '5']]) {
      expect(cond(`${a} contains ${b}`, grid), `${a} contains ${b}`).toBe(liquid.evalValueSync(`${a} contains ${b}`, grid));
    }
  });
});

describe('sandbox', () => {
  it('reads own properties only and changes nothing', () => {
    expect(cond('x.constructor is defined')).toBe(false);
    expect(cond('x.__proto__ is defined')).toBe(false);
    expect(fails(() => render('{{ x.constructor }}')).message).toContain("has no attribute 'constructor'");
    // changing methods work on the template's own lists (as in Ansible), never on the variables' data
    const list = [1];
    expect(render('{% set _ = l.append(2) %}{{ l }}', { l: list })).toEqual([1]);
    expect(render('{% set acc = [] %}{% for x in l %}{% set _ = acc.append(x * 2) %}{% endfor %}{{ acc }}', { l: list })).toEqual([2]);
    expect(list).toEqual([1]);
  });

  it('bounds ranges and sizes', () => {
    expect(fails(() => render('{{ range(200000) | length }}')).message).toContain('Range too big');
    expect(fails(() => render("{{ 'x' * 100000000 }}")).message).toContain('too large');
    const slow = new Templar({ renderLimit: 1 });
    expect(() => slow.renderSync('{% for i in range(100000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}', {})).toThrow(/render time limit/);
  });
});

describe('static analysis', () => {
  it('lists the variables a template reads, not those it binds', () => {
    expect(templar.variablesOf('{{ a.b }} {{ c | default(d) }}{% set z = 1 %}{{ z }}{% for i in list %}{{ i }}{% endfor %}').sort()).toEqual(['a', 'c', 'd', 'list']);
    expect(templar.variablePathsOf("{{ hostvars['c1'].mine }}")).toEqual([['hostvars', 'c1', 'mine']]);
    expect(templar.variablesOfCondition(['env == "prod" and not skip', 'x is defined']).sort()).toEqual(['env', 'skip']);
  });
});
