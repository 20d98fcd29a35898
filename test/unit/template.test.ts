import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { InputError } from '../../src/load/errors.js';
import { parseYaml, posOf } from '../../src/load/yaml.js';
import { Templar, templar } from '../../src/template/index.js';

const where = { file: 'play.yml', line: 7, col: 3 };

/** The InputError thrown by `fn` (fails the test if nothing or something else is thrown). */
async function inputError(fn: () => Promise<unknown> | unknown): Promise<InputError> {
  let thrown: unknown;
  try {
    await fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(InputError);
  return thrown as InputError;
}

describe('Templar.isTemplated', () => {
  it('detects {{, {% and {#', () => {
    expect(Templar.isTemplated('a {{ b }}')).toBe(true);
    expect(Templar.isTemplated('a {# note #}')).toBe(true);
    expect(Templar.isTemplated('{% if a %}x{% endif %}')).toBe(true);
    expect(Templar.isTemplated('plain')).toBe(false);
    expect(Templar.isTemplated(3)).toBe(false);
    expect(Templar.isTemplated(null)).toBe(false);
  });
});

describe('render: native types', () => {
  const vars = { list: [1, 'two', { three: 3 }], map: { a: { b: [1, 2] } }, n: 42, f: 1.5, t: true, no: false, nothing: null, s: 'text' };

  it('keeps lists, maps, numbers, booleans and null for a single expression', async () => {
    expect(await templar.render('{{ list }}', vars)).toEqual([1, 'two', { three: 3 }]);
    expect(await templar.render('{{ map }}', vars)).toEqual({ a: { b: [1, 2] } });
    expect(await templar.render('{{ map.a.b }}', vars)).toEqual([1, 2]);
    expect(await templar.render('{{ n }}', vars)).toBe(42);
    expect(await templar.render('{{ f }}', vars)).toBe(1.5);
    expect(await templar.render('{{ t }}', vars)).toBe(true);
    expect(await templar.render('{{ no }}', vars)).toBe(false);
    expect(await templar.render('{{ nothing }}', vars)).toBeNull();
    expect(await templar.render('{{ s }}', vars)).toBe('text');
  });

  it('keeps the type with trim markers and one trailing newline; text around makes a string (as ansible-core)', async () => {
    expect(await templar.render('{{- list -}}', vars)).toEqual([1, 'two', { three: 3 }]);
    expect(await templar.render('{{ n }}\n', vars)).toBe(42);
    expect(await templar.render('  {{ n }}\n', vars)).toBe('  42\n');
  });

  it('applies filters keeping the native type (Jinja and Liquid argument syntax)', async () => {
    expect(await templar.render('{{ n | plus: 1 }}', vars)).toBe(43);
    expect(await templar.render('{{ list | size }}', vars)).toBe(3);
    expect(await templar.render('{{ list | length }}', vars)).toBe(3);
    expect(await templar.render('{{ "a,b" | split: "," }}', vars)).toEqual(['a', 'b']);
    expect(await templar.render('{{ "a,b".split(",") }}', vars)).toEqual(['a', 'b']);
    expect(await templar.render('{{ map | to_json }}', vars)).toBe('{"a": {"b": [1, 2]}}');
  });

  it('renders to a string when there is text around or several expressions', async () => {
    expect(await templar.render('n={{ n }}', vars)).toBe('n=42');
    expect(await templar.render('{{ n }}{{ n }}', vars)).toBe('4242');
    expect(await templar.render('{{ n }} and {{ s }}', vars)).toBe('42 and text');
    expect(await templar.render('x: {{ map.a }}', vars)).toBe("x: {'b': [1, 2]}");
    expect(await templar.render('{% if t %}yes{% else %}no{% endif %}', vars)).toBe('yes');
    expect(await templar.render('{% for i in list %}[{{ i }}]{% endfor %}', vars)).toBe("[1][two][{'three': 3}]");
    expect(await templar.render('t={{ t }} none={{ nothing }}', vars)).toBe('t=True none=');
  });

  it('returns non-templated strings unchanged', async () => {
    expect(await templar.render('plain text', vars)).toBe('plain text');
    expect(await templar.render('', vars)).toBe('');
  });

  it('renderString always returns a string', async () => {
    expect(await templar.renderString('{{ n }}', vars)).toBe('42');
    expect(await templar.renderString('{{ list }}', vars)).toBe("[1, 'two', {'three': 3}]");
    expect(await templar.renderString('{{ nothing }}', vars)).toBe('');
    expect(await templar.renderString('static', vars)).toBe('static');
  });

  it('does not re-render values that contain template syntax', async () => {
    expect(await templar.render('{{ s }}', { s: '{{ secret }}' })).toBe('{{ secret }}');
    expect(await templar.render('a {{ s }}', { s: '{{ secret }}' })).toBe('a {{ secret }}');
  });

  it('does not modify the vars (set/assign/capture and changing methods work on a private scope)', async () => {
    const v: Record<string, unknown> = { a: 1, l: [1] };
    expect(await templar.render('{% set a = 5 %}{% assign b = 6 %}{% capture c %}x{% endcapture %}{% set _ = l.append(2) %}{{ a }}{{ b }}{{ c }}', v)).toBe('56x');
    expect(v).toEqual({ a: 1, l: [1] });
  });
});

describe('strict variables and default', () => {
  it('an undefined variable is an error naming it, with a hint', async () => {
    const err = await inputError(() => templar.render('{{ foo }}', {}, { where }));
    expect(err.message).toBe('template error in "{{ foo }}": \'foo\' is undefined\n    {{ foo }}\n       ^');
    expect(err.pos).toEqual(where);
    expect(err.hint).toMatch(/define it in vars, inventory or -e, or give a default: '\| default\(…\)'/);
    expect(err.describe()).toMatch(/^play\.yml:7:3: template error/);
  });

  it('an undefined nested property is an error naming the path', async () => {
    const err = await inputError(() => templar.render('x {{ a.b.c }}', { a: { b: {} } }));
    expect(err.message).toContain("object of type 'dict' has no attribute 'c'");
    expect(err.message).toMatch(/\n {4}x \{\{ a\.b\.c \}\}\n {4} {8}\^$/);
  });

  it('reports the line inside multi-line templates', async () => {
    const err = await inputError(() => templar.render('line1\nline2 {{ missing }}', {}));
    expect(err.message).toContain("'missing' is undefined\n    line 2: line2 {{ missing }}");
  });

  it('default works with undefined variables and undefined nested paths', async () => {
    expect(await templar.render('{{ x | default: 3 }}', {})).toBe(3);
    expect(await templar.render('{{ a.b.c | default: "z" }}', {})).toBe('z');
    expect(await templar.render('{{ a.b.c | default: "z" }}', { a: {} })).toBe('z');
    expect(await templar.render('{{ a.b.c | default: "z" }}', { a: { b: { c: 'set' } } })).toBe('set');
    expect(await templar.render('v={{ x | default: "d" }}', {})).toBe('v=d');
    expect(await templar.render('{{ x | default: y }}', { y: [1] })).toEqual([1]);
    expect(await templar.render('{{ x | default(3) }}', {})).toBe(3);
    expect(await templar.render('{{ a.b.c | d("z") }}', {})).toBe('z');
  });

  it('default only shields the variable it is applied to', async () => {
    const err = await inputError(() => templar.render('{{ x | default: y }}', {}));
    expect(err.message).toContain("'y' is undefined");
  });

  it('default replaces only undefined values, and with true also falsy ones (as Ansible)', async () => {
    const v = { e: '', z: 0, f: false, m: {}, l: [], n: null, val: 'v' };
    expect(await templar.render('{{ e | default("d") }}', v)).toBe('');
    expect(await templar.render('{{ l | default("d") }}', v)).toEqual([]);
    expect(await templar.render('{{ f | default("d") }}', v)).toBe(false);
    expect(await templar.render('{{ n | default("d") }}', v)).toBeNull();
    expect(await templar.render('{{ z | default("d", true) }}', v)).toBe('d');
    expect(await templar.render('{{ m | default("d", true) }}', v)).toBe('d');
    expect(await templar.render('{{ n | default("d", true) }}', v)).toBe('d');
    expect(await templar.render('{{ val | default("d", true) }}', v)).toBe('v');
    expect(await templar.render('{{ x | default("d", false) }}', v)).toBe('d');
  });

  it('an if on an undefined variable is an error, as in ansible-core', async () => {
    const err = await inputError(() => templar.render('{% if x %}a{% else %}b{% endif %}', {}));
    expect(err.message).toContain("'x' is undefined");
    expect(await templar.render('{% if x is defined and x %}a{% else %}b{% endif %}', {})).toBe('b');
  });

  it('an undefined filter is an error naming it', async () => {
    const err = await inputError(() => templar.render('{{ 1 | nosuchfilter }}', {}, { where }));
    expect(err.message).toContain("no filter named 'nosuchfilter'");
    expect(err.pos).toEqual(where);
    const err2 = await inputError(() => templar.render('a {{ 1 | nosuchfilter }}', {}));
    expect(err2.message).toContain("no filter named 'nosuchfilter'");
  });
});

describe('mandatory', () => {
  it('passes values through, None included (as Ansible)', async () => {
    expect(await templar.render('{{ x | mandatory }}', { x: [1] })).toEqual([1]);
    expect(await templar.render('{{ x | mandatory }}', { x: null })).toBeNull();
  });
  it('names an undefined variable', async () => {
    const err = await inputError(() => templar.render('{{ x | mandatory }}', {}));
    expect(err.message).toContain("Mandatory variable 'x' not defined.");
    const err2 = await inputError(() => templar.render('a: {{ app.version | mandatory }}', { app: {} }));
    expect(err2.message).toContain('Mandatory variable');
  });
  it('accepts a custom message', async () => {
    const err = await inputError(() => templar.render('{{ x | mandatory("set x with -e x=…") }}', {}));
    expect(err.message).toContain('set x with -e x=…');
  });
});

describe('renderValue', () => {
  it('renders nested strings, keeps keys and non-strings, returns a new value', async () => {
    const value = { name: '{{ app }}', '{{ key }}': 'k', replicas: '{{ n }}', list: ['a', '{{ n }}-x', { deep: '{{ flags }}' }], num: 3, nul: null };
    const vars = { app: 'web', n: 2, flags: { on: true }, key: 'nope' };
    const out = await templar.renderValue(value, vars);
    expect(out).toEqual({ name: 'web', '{{ key }}': 'k', replicas: 2, list: ['a', '2-x', { deep: { on: true } }], num: 3, nul: null });
    expect(out).not.toBe(value);
    expect(value.name).toBe('{{ app }}');
  });

  it('reports file:line:col of the failing string (YAML positions)', async () => {
    const text = ['- name: demo', '  debug:', '    msg: "ok"', '    other:', '      - fine', '      - "{{ nope }}"', ''].join('\n');
    const task = (parseYaml(text, 'site.yml').docs[0] as unknown[])[0];
    const err = await inputError(() => templar.renderValue(task, {}, { where: { file: 'site.yml', line: 1, col: 3 } }));
    expect(err.describe()).toMatch(/^site\.yml:6:9: template error in "\{\{ nope \}\}": 'nope' is undefined/);
  });

  it('falls back to opts.where for values without positions', async () => {
    const err = await inputError(() => templar.renderValue({ a: ['{{ nope }}'] }, {}, { where }));
    expect(err.pos).toEqual(where);
  });

  it('copies YAML positions to the rendered value', async () => {
    const doc = parseYaml('a:\n  b: "{{ x }}"\n', 'f.yml').docs[0];
    const out = await templar.renderValue(doc, { x: 1 });
    expect(posOf(out, 'a')).toEqual({ file: 'f.yml', line: 1, col: 1 });
  });
});

describe('conditions', () => {
  const vars = { env: 'prod', skip: false, list: ['a', 'b'], text: 'abc', result: { rc: 2, stdout: 'ok' }, n: 5, nothing: null, zero: 0 };
  const cases: [string, boolean][] = [
    ['env == "prod"', true],
    ['env != "prod"', false],
    ['env == "prod" and not skip', true],
    ['env == "dev" or skip', false],
    ['env == "dev" or not skip', true],
    ['not skip', true],
    ['not env == "prod"', false],
    ['list contains "a"', true],
    ['list contains "z"', false],
    ['text contains "bc"', true],
    ['"a" in list and "bc" in text', true],
    ['result.rc != 0', true],
    ['result.rc > 1 and result.rc < 3', true],
    ['n >= 5 and n <= 5', true],
    ['true', true],
    ['false', false],
    ['skip', false],
    ['nothing == nil', true],
    ['nothing == None and nothing is none', true],
    ['{{ env == "prod" }}', true],
    ['{{ skip }}', false],
    ['list | length == 2', true],
    ['x | default: false', false],
    ['x | default(false)', false],
    ['(x | default: 3) == 3', true],
    ['x is defined', false],
    ['x is not defined', true],
    ['x is undefined', true],
    ['result.rc is defined and result.rc == 2', true],
    ['nothing is defined', true],
    ['result.missing is defined', false],
    ['list[1] is defined', true],
    ['list[5] is defined', false],
    ['env == "x is defined"', false],
  ];
  for (const [cond, expected] of cases) {
    it(`${cond} → ${expected}`, async () => {
      expect(await templar.evalCondition(cond, vars)).toBe(expected);
    });
  }

  it('a condition whose result is not a boolean is an error naming its type and a fix (as ansible-core 2.19)', async () => {
    await expect(templar.evalCondition('nothing', vars)).rejects.toThrow(/condition "nothing" has a NoneType result .*not a boolean/);
    await expect(templar.evalCondition('zero', vars)).rejects.toThrow(/has a int result \(0\)/);
    await expect(templar.evalCondition('list', vars)).rejects.toMatchObject({ message: expect.stringMatching(/has a list result/), hint: expect.stringContaining('x | length > 0') });
    await expect(templar.evalCondition('text', vars)).rejects.toMatchObject({ message: expect.stringContaining('has a str result ("abc")'), hint: expect.stringContaining('x | bool') });
    expect(await templar.evalCondition('text | bool', vars)).toBe(false);
  });

  it('booleans and lists of conditions (all must hold)', async () => {
    expect(await templar.evalCondition(true, vars)).toBe(true);
    expect(await templar.evalCondition(false, vars)).toBe(false);
    expect(await templar.evalCondition(['env == "prod"', 'not skip'], vars)).toBe(true);
    expect(await templar.evalCondition(['env == "prod"', 'skip'], vars)).toBe(false);
    expect(await templar.evalCondition([true, 'n > 1'], vars)).toBe(true);
    expect(await templar.evalCondition([], vars)).toBe(true);
  });

  it('an undefined variable in a condition is an error naming it', async () => {
    const err = await inputError(() => templar.evalCondition('app_version == "1"', vars, { where }));
    expect(err.message).toBe('condition error in "app_version == \\"1\\"": \'app_version\' is undefined\n    app_version == "1"\n    ^');
    expect(err.pos).toEqual(where);
    const err2 = await inputError(() => templar.evalCondition('env == "prod" and missing', vars));
    expect(err2.message).toContain("'missing' is undefined");
  });

  it('list entries report their own YAML position', async () => {
    const doc = parseYaml('when:\n  - env == "prod"\n  - bogus > 1\n', 'p.yml').docs[0] as { when: unknown };
    const err = await inputError(() => templar.evalCondition(doc.when, vars, { where }));
    expect(err.describe()).toMatch(/^p\.yml:3:5: condition error/);
  });

  it('rejects invalid condition types and junk', async () => {
    await inputError(() => templar.evalCondition(3, vars));
    await inputError(() => templar.evalCondition(null, vars));
    await inputError(() => templar.evalCondition([['a']], vars));
    const err = await inputError(() => templar.evalCondition('env == "prod" skip', vars));
    expect(err.message).toMatch(/condition error/);
    await inputError(() => templar.evalCondition('env ==', vars));
  });
});

describe('security', () => {
  const vars = { x: { a: 1 }, s: 'str', list: [1] };
  const tricks = [
    '{{ x.constructor }}',
    '{{ x.__proto__ }}',
    '{{ x["constructor"] }}',
    '{{ s.constructor }}',
    '{{ list.constructor }}',
    '{{ x.constructor.constructor }}',
    '{{ x.hasOwnProperty }}',
    '{{ x.toString }}',
    '{{ 1 | valueOf }}',
    '{{ "a" | constructor }}',
    '{{ x | __proto__ }}',
    '{{ x | hasOwnProperty }}',
    '{{ constructor }}',
    '{{ __proto__ }}',
    'a {{ x.constructor }}',
  ];
  for (const t of tricks) {
    it(`blocks ${t}`, async () => {
      const err = await inputError(() => templar.render(t, vars));
      expect(err.message).toMatch(/has no attribute|is undefined|no filter named/);
    });
  }

  it('blocks prototype access in conditions', async () => {
    await inputError(() => templar.evalCondition('x.constructor', vars));
    await inputError(() => templar.evalCondition('x.__proto__ == nil', vars));
  });

  it('own properties still work, even with prototype-like names', async () => {
    const v = JSON.parse('{"m": {"constructor": "own", "__proto__": "p"}}') as Record<string, unknown>;
    expect(await templar.render('{{ m.constructor }}', v)).toBe('own');
    expect(await templar.render('{{ m.__proto__ }}', v)).toBe('p');
  });

  for (const t of ['{% render "x" %}', '{% layout "x" %}x', '{% extends "x" %}']) {
    it(`refuses ${t}`, async () => {
      const err = await inputError(() => templar.render(t, {}));
      expect(err.message).toMatch(/tag is not supported by kplay/);
      expect(() => templar.check(t)).toThrow(InputError);
    });
  }

  // as Jinja's FileSystemLoader: a name is read under the search path only (#49)
  for (const t of ['{% include "/etc/passwd" %}', '{% include "../../../../../../etc/passwd" %}', '{%- include "package.json" -%}']) {
    it(`reads no file outside the search path: ${t}`, async () => {
      const err = await inputError(() => templar.render(t, { playbook_dir: path.join(repoRoot, 'test/parity/cases') }));
      expect(err.message).toMatch(/not found in search path: '.*test\/parity\/cases'/);
      expect(err.message).not.toMatch(/root:/);
    });
  }

  it('reads no file for an include without a playbook directory', async () => {
    const err = await inputError(() => templar.render('{% include "package.json" %}', {}));
    expect(err.message).toMatch(/'package.json' not found in search paths: $/m);
  });

  it('stops a huge loop with a limit error instead of hanging', async () => {
    const t0 = Date.now();
    const err = await inputError(() => templar.render('{% for i in (1..100000000) %}{{ i }}{% endfor %}', {}));
    expect(err.message).toMatch(/Range too big/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('stops a long nested loop with the render time limit', async () => {
    const quick = new Templar({ renderLimit: 200 });
    const t0 = Date.now();
    const err = await inputError(() =>
      quick.render('{% for i in (1..5000) %}{% for j in (1..5000) %}{{ j }}{% endfor %}{% endfor %}', {}),
    );
    expect(err.message).toMatch(/render time limit exceeded/);
    expect(err.hint).toMatch(/too expensive/);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('enforces the parse limit', async () => {
    const small = new Templar({ parseLimit: 100 });
    const err = await inputError(() => small.render(`{{ x }}${'a'.repeat(200)}`, { x: 1 }));
    expect(err.message).toMatch(/the template is longer than 100 characters/);
  });
});

describe('syntax errors and check()', () => {
  it('render reports syntax errors with the caller position', async () => {
    const err = await inputError(() => templar.render('a {{ foo', {}, { where }));
    expect(err.message).toMatch(/^template error in "a \{\{ foo": output opened here is not closed with "\}\}"/);
    expect(err.pos).toEqual(where);
    await inputError(() => templar.render('{% if x %}no end', { x: 1 }));
  });

  it('check walks a loaded YAML value and reports the string position', () => {
    const text = [
      '- name: "{{ greeting }}"',
      '  when: env == "prod"',
      '  debug:',
      '    msg: "{{ x | to_json }}"',
      '    bad: "{% if x %}"',
      '',
    ].join('\n');
    const doc = parseYaml(text, 'c.yml').docs[0];
    let err: unknown;
    try {
      templar.check(doc);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).describe()).toMatch(/^c\.yml:5:5: template error in "\{% if x %\}": missing \{% endif %\}/);
  });

  it('check reports undefined filters statically', () => {
    const doc = parseYaml('a:\n  b: "{{ x | nope }}"\n', 'd.yml').docs[0];
    expect(() => templar.check(doc)).toThrow(/no filter named 'nope'/);
    try {
      templar.check(doc);
    } catch (e) {
      expect((e as InputError).describe()).toMatch(/^d\.yml:2:3:/);
    }
  });

  it('check validates conditions under when/until/failed_when/changed_when and assert.that', () => {
    const ok = parseYaml('- when: x is defined and x > 1\n  assert:\n    that: ["a == 1", "b contains \\"c\\""]\n', 'e.yml').docs[0];
    expect(() => templar.check(ok)).not.toThrow();
    const bad = parseYaml('- until: "a == "\n', 'e.yml').docs[0];
    expect(() => templar.check(bad)).toThrow(/^condition error/);
    const bad2 = parseYaml('- assert:\n    that:\n      - a == 1\n      - b | nofilter\n', 'e.yml').docs[0];
    try {
      templar.check(bad2);
      expect.unreachable();
    } catch (e) {
      expect((e as InputError).describe()).toMatch(/^e\.yml:4:9: condition error in "b \| nofilter": no filter named 'nofilter'/);
    }
    // plain strings under other keys are not conditions
    expect(() => templar.check({ msg: 'a == ' })).not.toThrow();
  });

  it('checkCondition accepts booleans, lists and braces; rejects junk', () => {
    expect(() => templar.checkCondition(true)).not.toThrow();
    expect(() => templar.checkCondition(['a', '{{ b }}', 'not c'])).not.toThrow();
    expect(() => templar.checkCondition('a b')).toThrow(InputError);
    expect(() => templar.checkCondition('a and')).toThrow(InputError);
    expect(() => templar.checkCondition(5, { where })).toThrow(/invalid condition/);
  });
});

describe('variablesOf', () => {
  it('lists top-level names, not locals', () => {
    expect(templar.variablesOf('{{ a.b }} {{ c | default: d }}{% assign z = 1 %}{{ z }}{% for i in list %}{{ i }}{% endfor %}').sort()).toEqual(['a', 'c', 'd', 'list']);
    expect(templar.variablesOf('{{ app.version }}')).toEqual(['app']);
    expect(templar.variablesOf('plain')).toEqual([]);
    expect(templar.variablesOf('{{ broken')).toEqual([]);
  });
  it('variablesOfCondition lists names, excluding is-defined tests', () => {
    expect(templar.variablesOfCondition(['env == "prod" and not skip', 'x is defined']).sort()).toEqual(['env', 'skip']);
  });
});

describe('cache', () => {
  it('stays correct with a tiny cache', async () => {
    const t = new Templar({ cacheSize: 2 });
    for (let i = 0; i < 5; i++) {
      expect(await t.render(`{{ v${i % 3} }}`, { v0: 0, v1: 1, v2: 2 })).toBe(i % 3);
      expect(await t.render(`x{{ v${i % 3} }}`, { v0: 0, v1: 1, v2: 2 })).toBe(`x${i % 3}`);
    }
  });
  it('renders thousands of templates quickly', async () => {
    const vars = { a: { b: 1 }, list: Array.from({ length: 1000 }, (_, i) => i) };
    const t0 = Date.now();
    for (let i = 0; i < 5000; i++) await templar.render('v-{{ a.b }}-{{ list | size }}', vars);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });
});

describe('sync API and lazy (getter) variables', () => {
  it('sync variants match the async ones', () => {
    const vars = { n: 1, l: [1] };
    expect(templar.renderSync('{{ l }}', vars)).toEqual([1]);
    expect(templar.renderStringSync('{{ n }}', vars)).toBe('1');
    expect(templar.renderValueSync({ a: ['{{ n }}'] }, vars)).toEqual({ a: [1] });
    expect(templar.evalConditionSync(['n == 1', 'l contains 1'], vars)).toBe(true);
    expect(() => templar.renderSync('{{ nope }}', vars, { where })).toThrow(InputError);
  });

  it('reads variables defined as getters, and keeps an InputError thrown by one', async () => {
    const inner = { file: 'vars.yml', line: 2, col: 1 };
    let reads = 0;
    const scope: Record<string, unknown> = {};
    Object.defineProperty(scope, 'lazy', { enumerable: true, get: () => (reads++, 'v') });
    Object.defineProperty(scope, 'broken', {
      enumerable: true,
      get: () => {
        throw new InputError('template error in "{{ b }}": undefined variable: b', inner);
      },
    });
    expect(await templar.render('{{ lazy }}-x', scope)).toBe('v-x');
    expect(await templar.evalCondition('lazy is defined and lazy == "v"', scope)).toBe(true);
    expect(reads).toBeGreaterThan(0);
    const err = await inputError(() => templar.render('{{ broken }}', scope, { where }));
    expect(err.pos).toEqual(inner);
    expect(err.message).toBe('template error in "{{ b }}": undefined variable: b');
    const err2 = await inputError(() => templar.render('x {{ broken | default: 1 }}', scope, { where }));
    expect(err2.pos).toEqual(inner);
  });
});

describe('condition precedence (as Ansible: not > and > or, parentheses group)', () => {
  const vars = { f: false, t: true, env: 'prod', ticket: undefined };
  it.each([
    ['f and t or t', true],
    ['t or t and f', true],
    ['f and (t or t)', false],
    ['not f and t', true],
    ['not (f or t)', false],
    ['not f and not f or f', true],
    ['env == "prod" and ticket is not defined or f', true],
    ['env == "x or y" or f', false],
  ])('%s → %s', async (cond, want) => {
    expect(await templar.evalCondition(cond, vars)).toBe(want);
  });
});

describe('Jinja operators and tests in conditions (in, not in, is failed…, filters, literals)', () => {
  const vars = {
    l: [1, 2, [3]],
    m: { a: 1 },
    s: 'hello',
    n: null,
    ok_: { changed: false, failed: false },
    bad: { changed: true, failed: true },
    skip: { skipped: true, changed: false },
    out: { stdout_lines: ['a', 'b'] },
    hostvars: { c1: { x: 5 } },
  };
  it.each([
    ['2 in l', true],
    ['4 in l', false],
    ['4 not in l', true],
    ['not 2 in l', false],
    ['"a" in m and "b" not in m', true],
    ['"ell" in s', true],
    ["s in ['hello', 'x']", true],
    ['3 in [1, 2]', false],
    ['n in [None, 1]', true],
    ['out.stdout_lines | length > 1', true],
    ['out.stdout_lines|length>2', false],
    ["s | upper == 'HELLO' and l | size == 3", true],
    ['(l | first) == 1', true],
    ['bad is failed and ok_ is succeeded and ok_ is not failed', true],
    ['bad is changed and ok_ is not changed', true],
    ['skip is skipped and bad is not skipped', true],
    ['bad is failure and ok_ is success and bad is change and skip is skip', true],
    ['n is none and s is string and m is mapping and l is sequence and l is not string', true],
    ['n == None and (s == "x") == False and True', true],
    ["hostvars['c1'].x in [5, 6] and hostvars['c1'].x > 3", true],
    ['nope is defined or "x" in s', false],
  ])('%s → %s', async (cond, want) => {
    expect(await templar.evalCondition(cond, vars)).toBe(want);
  });

  it.each([
    ["ver is version('1.9', '>') and ver is version(\"1.10.2\") and ver is not version('2.0', '>=')", true],
    ["ver is version(min, 'ge')", true],
    ["name is match('web-') and name is not match('01') and name is search('01')", true],
    ["name is regex('WEB', true)", true],
    ['n is divisibleby(3) and n is odd and n is not even', true],
  ])('with arguments: %s → %s', async (cond, want) => {
    expect(await templar.evalCondition(cond, { ver: '1.10.2', min: '1.9', name: 'web-01', n: 9 })).toBe(want);
  });

  it('explains misuse: a result test on a non-result, `in` on a number, a list literal of variables, an undefined result', async () => {
    expect((await inputError(() => templar.evalCondition('s is failed', vars, { where }))).describe()).toMatch(/^play\.yml:7:3: condition error in "s is failed": The 'failed' test expects a dictionary/);
    expect((await inputError(() => templar.evalCondition('1 in 5', vars, { where }))).message).toContain("argument of type 'int' is not iterable");
    expect((await inputError(() => templar.evalCondition('s in [a, b]', vars, { where }))).message).toContain("'a' is undefined");
    expect((await inputError(() => templar.evalCondition('r is changed', vars, { where }))).message).toContain("'r' is undefined");
    expect((await inputError(() => templar.evalCondition("s is version('1.2', 'bogus')", vars, { where }))).message).toContain('Invalid operator type (bogus)');
    expect((await inputError(() => templar.evalCondition('s is odd', vars, { where }))).message).toMatch(/^condition error in "s is odd"/);
  });

  it('validate accepts them statically and names their variables', () => {
    expect(() => templar.checkCondition(["x in ['a']", 'r is failed', 'y | length > 0', 'a not in b'], { where })).not.toThrow();
    expect(templar.variablesOfCondition("x in ['a'] and y | length > 0 and a not in b").sort()).toEqual(['a', 'b', 'x', 'y']);
  });
});

describe('other delimiters (a template file\'s options, as kubernetes.core sets them)', () => {
  const d = { variableStart: '[[', variableEnd: ']]', blockStart: '[%', blockEnd: '%]', commentStart: '[#', commentEnd: '#]' };
  it('renders [[ ]] and [% %], leaves Jinja\'s own delimiters as text', async () => {
    const out = await templar.renderString("name: '[[ n ]]'\n[% for i in l %]- [[ i[0] ]]\n[% endfor %]keep: {{ x }} [# note #]", { n: 'pod-4', l: [['a'], ['b']] }, { delimiters: d });
    expect(out).toBe("name: 'pod-4'\n- a\n- b\nkeep: {{ x }} ");
  });
  it('a text without Jinja delimiters is still rendered; the same text with Jinja\'s is another template (cache)', async () => {
    expect(await templar.renderString('[[ a ]]', { a: 1 }, { delimiters: d })).toBe('1');
    expect(await templar.renderString('[[ a ]]', { a: 1 })).toBe('[[ a ]]');
  });
  it('an output not closed names the delimiter', async () => {
    const e = await inputError(() => templar.renderString('[[ a ', { a: 1 }, { delimiters: d }));
    expect(e.message).toContain('not closed with "]]"');
  });
});
