// The Python semantics under the filter library, against Python's own answers
// (test/fixtures/template-plugins/python.json, made by gen_python.py there with the Ansible venv):
// libyaml's dump through Ansible's dumper, `re`, `random.Random(seed)`, CPython's set order, float repr;
// plus argument binding, JSON, printf formatting and text helpers checked case by case.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bind, opt, req } from '../../src/template/filters/args.js';
import { percentFormat } from '../../src/template/filters/pyformat.js';
import { dumps, loads } from '../../src/template/filters/pyjson.js';
import { parseFloatPy, parseIntPy, pyFloatRepr, roundHalfEven } from '../../src/template/filters/pynum.js';
import { PyRandom } from '../../src/template/filters/pyrandom.js';
import { compile, findall, match, search, subn } from '../../src/template/filters/pyregex.js';
import { setDifference, setIntersection, setSymmetricDifference, setUnion } from '../../src/template/filters/pyset.js';
import { center, split, splitlines, strip } from '../../src/template/filters/pytext.js';
import { dumpYaml } from '../../src/template/filters/pyyaml.js';
import { PyFloat, isMap } from '../../src/template/values.js';
import { repoRoot } from '../helpers/cli.js';

interface Fixture {
  yaml: [unknown, Record<string, unknown>, string][];
  regex: { p: string; i: boolean; m: boolean; s: boolean; text: string; search: (string | null)[] | null; match: string | null; findall: unknown[]; sub: string }[];
  random: [unknown, number, number, number, number, string, number[]][];
  sets: [unknown[], unknown[], unknown[], unknown[], unknown[], unknown[]][];
  floats: [unknown, string][];
}

const fx = JSON.parse(readFileSync(path.join(repoRoot, 'test/fixtures/template-plugins/python.json'), 'utf8')) as Fixture;

function dec(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dec);
  if (isMap(v)) {
    if (Object.keys(v).length === 1 && 'f' in v) {
      const t = String(v.f);
      const n = t === 'inf' ? Infinity : t === '-inf' ? -Infinity : t === 'nan' ? NaN : Number(t);
      return Number.isInteger(n) ? new PyFloat(n) : n;
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, dec(x)]));
  }
  return v;
}

describe('to_yaml / to_nice_yaml: the text of yaml.dump(Dumper=AnsibleDumper) with libyaml', () => {
  it.each(fx.yaml.map((c, i) => [i, ...c] as const))('case %i', (_i, value, o, want) => {
    const got = dumpYaml(dec(value), {
      indent: o.indent as number | undefined,
      width: o.width as number | undefined,
      defaultFlowStyle: o.default_flow_style === undefined ? null : (o.default_flow_style as boolean | null),
      sortKeys: (o.sort_keys as boolean | undefined) ?? true,
    });
    expect(got).toBe(want);
  });
  it('explicit start and end markers', () => {
    expect(dumpYaml({ a: 1 }, { explicitStart: true, explicitEnd: true })).toBe('--- {a: 1}\n...\n');
  });
});

describe('Python re over RegExp', () => {
  it.each(fx.regex.map((c) => [c.p, c] as const))('%s', (_p, c) => {
    const rx = compile(c.p, { ignorecase: c.i, multiline: c.m, dotall: c.s });
    const m = search(rx, c.text);
    expect(m ? [...m.m].map((x) => x ?? null) : null).toEqual(c.search);
    expect(match(rx, c.text)?.m[0] ?? null).toBe(c.match);
    expect(findall(rx, c.text)).toEqual(c.findall);
    expect(subn(rx, '<\\g<0>>', c.text)[0]).toBe(c.sub);
  });
  it('reports Python syntax errors and refuses what JavaScript cannot do', () => {
    expect(() => compile('(')).toThrow('missing ), unterminated subpattern at position 0');
    expect(() => compile('a(?i)')).toThrow('global flags not at the start of the expression');
    expect(() => compile('(?i:a)')).toThrow(/scoped inline flags/);
    expect(() => compile('(?>a)')).toThrow(/atomic groups/);
    expect(() => compile('\\q')).toThrow('bad escape \\q');
    expect(() => compile('(a)\\2')).toThrow('invalid group reference 2');
    expect(() => subn(compile('a'), '\\1', 'a')).toThrow('invalid group reference 1');
  });
  it('replacement templates: numbered and named groups, unmatched groups empty, escapes', () => {
    expect(subn(compile('(?P<k>\\w+)=(?P<v>\\w+)'), '\\g<v>=\\g<k>', 'a=b c=d')).toEqual(['b=a d=c', 2]);
    expect(subn(compile('(x)?b'), '[\\1]', 'ab')[0]).toBe('a[]');
    expect(subn(compile('a'), '\\n\\t\\\\', 'a')[0]).toBe('\n\t\\');
    expect(subn(compile('a'), 'b', 'aaa', 2)).toEqual(['bba', 2]);
  });
});

describe('random.Random(seed)', () => {
  it.each(fx.random.map((r) => [JSON.stringify(r[0]), r] as const))('seed %s', (_s, row) => {
    const [seed, a, b, c, d, e, shuffled] = row;
    const r = new PyRandom(dec(seed));
    expect([r.randrange(0, 60, 1), r.randrange(0, 1000, 1), r.randrange(5, 100, 7), r.randrange(0, 2 ** 40, 1), r.choice(['a', 'b', 'c', 'd', 'e'])]).toEqual([a, b, c, d, e]);
    const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    new PyRandom(dec(seed)).shuffle(xs);
    expect(xs).toEqual(shuffled);
  });
});

describe("CPython's set order for numbers", () => {
  it.each(fx.sets.map((s) => [JSON.stringify(s[0]), JSON.stringify(s[1]), s] as const))('%s with %s', (_a, _b, s) => {
    const [a, b, u, i, d, x] = s.map(dec) as unknown[][];
    expect(setUnion(a ?? [], b ?? [])).toEqual(u);
    expect(setIntersection(a ?? [], b ?? [])).toEqual(i);
    expect(setDifference(a ?? [], b ?? [])).toEqual(d);
    expect(setSymmetricDifference(a ?? [], b ?? [])).toEqual(x);
  });
});

describe('numbers', () => {
  it.each(fx.floats.map((f) => [f[1], f] as const))('repr %s', (want, f) => {
    const v = dec(f[0]);
    expect(pyFloatRepr(v instanceof PyFloat ? v.value : (v as number))).toBe(want);
  });
  it("int()/float() of text as Python reads it", () => {
    expect(parseIntPy(' 42 ')).toBe(42);
    expect(parseIntPy('1_000')).toBe(1000);
    expect(parseIntPy('0x1A', 0)).toBe(26);
    expect(parseIntPy('0x1A', 16)).toBe(26);
    expect(parseIntPy('010', 0)).toBeNull();
    expect(parseIntPy('1__0')).toBeNull();
    expect(parseIntPy('١٢')).toBe(12);
    expect(parseFloatPy('1e3')).toBe(1000);
    expect(parseFloatPy('-Infinity')).toBe(-Infinity);
    expect(parseFloatPy('1_0.5')).toBe(10.5);
    expect(parseFloatPy('e3')).toBeNull();
  });
  it('round() halves to even on the exact binary value', () => {
    expect(roundHalfEven(2.5, 0)).toBe(2);
    expect(roundHalfEven(3.5, 0)).toBe(4);
    expect(roundHalfEven(2.675, 2)).toBe(2.67);
    expect(roundHalfEven(0.125, 2)).toBe(0.12);
    expect(roundHalfEven(0.375, 2)).toBe(0.38);
    expect(roundHalfEven(-2.5, 0)).toBe(-2);
  });
});

describe('json.dumps / json.loads', () => {
  it('writes as Python does', () => {
    expect(dumps({ b: [1, new PyFloat(2), null, true], a: {} })).toBe('{"b": [1, 2.0, null, true], "a": {}}');
    expect(dumps('é\u2028<\x7f')).toBe('"\\u00e9\\u2028<\\u007f"');
    expect(dumps('é', { ensureAscii: false })).toBe('"é"');
    expect(dumps({ b: [1], a: 'x' }, { indent: 2 })).toBe('{\n  "b": [\n    1\n  ],\n  "a": "x"\n}');
    expect(dumps({ b: 1, a: 2 }, { sortKeys: true, separators: [',', ':'] })).toBe('{"a":2,"b":1}');
    expect(dumps([NaN, Infinity, 2.5e-5])).toBe('[NaN, Infinity, 2.5e-05]');
    expect(() => dumps(NaN, { allowNan: false })).toThrow('Out of range float values are not JSON compliant: nan');
  });
  it('reads as Python does, with its messages', () => {
    expect(loads('{"a": 1.0, "b": 1e2, "c": 1}')).toEqual({ a: new PyFloat(1), b: new PyFloat(100), c: 1 });
    expect(loads('[1, NaN, -Infinity]')).toEqual([1, NaN, -Infinity]);
    expect(() => loads('x')).toThrow('Expecting value: line 1 column 1 (char 0)');
    expect(() => loads('{"a": 1,}')).toThrow('Expecting property name enclosed in double quotes: line 1 column 9 (char 8)');
    expect(() => loads('[1,]')).toThrow('Expecting value: line 1 column 4 (char 3)');
    expect(() => loads('{"a" 1}')).toThrow("Expecting ':' delimiter: line 1 column 6 (char 5)");
    expect(() => loads('{"a":1 "b":2}')).toThrow("Expecting ',' delimiter: line 1 column 8 (char 7)");
    expect(() => loads('[1, 2')).toThrow("Expecting ',' delimiter: line 1 column 6 (char 5)");
    expect(() => loads('{"a": 1} x')).toThrow('Extra data: line 1 column 10 (char 9)');
    expect(() => loads('"\\q"')).toThrow('Invalid \\escape: line 1 column 2 (char 1)');
  });
});

describe('argument binding with Python messages', () => {
  const sig = { fn: 'do_int', params: [opt('default', 0), opt('base', 10)] };
  it('binds positional and keyword arguments', () => {
    const a = bind(sig, [5], { base: 16 });
    expect(a.get('default')).toBe(5);
    expect(a.get('base')).toBe(16);
    expect(a.given('base')).toBe(true);
  });
  it('raises TypeError messages as CPython words them', () => {
    expect(() => bind(sig, [], { foo: 1 })).toThrow("do_int() got an unexpected keyword argument 'foo'");
    expect(() => bind(sig, [1, 2, 3, 4], {})).toThrow('do_int() takes from 1 to 3 positional arguments but 5 were given');
    expect(() => bind(sig, [3], { default: 1 })).toThrow("do_int() got multiple values for argument 'default'");
    expect(() => bind({ fn: 'do_lower', params: [] }, [1], {})).toThrow('do_lower() takes 1 positional argument but 2 were given');
    expect(() => bind({ fn: 'f', params: [req('a'), req('b')] }, [], {})).toThrow("f() missing 2 required positional arguments: 'a' and 'b'");
  });
});

describe("printf-style formatting ('%' operator)", () => {
  it('matches Python', () => {
    expect(percentFormat('%s-%d-%05.2f-%x-%r-%%', ['a', 3, 2.5, 255, 'q'])).toBe("a-3-02.50-ff-'q'-%");
    expect(percentFormat('%(a)s=%(b)04d', { a: 'x', b: 7 })).toBe('x=0007');
    expect(percentFormat('%-5s|%+d|% d|%e|%g|%G|%o|%X|%c|%i|%u', ['ab', 5, 5, 12345.678, 0.00001234, new PyFloat(1e20), 8, 255, 65, 3.9, 7])).toBe(
      'ab   |+5| 5|1.234568e+04|1.234e-05|1E+20|10|FF|A|3|7',
    );
    expect(percentFormat('%.3s|%5.1f|%-8.3e|%#x|%#o', ['abcdef', 3.14159, 1234.5, 255, 8])).toBe('abc|  3.1|1.234e+03|0xff|0o10');
    expect(() => percentFormat('%d', ['x'])).toThrow('%d format: a real number is required, not str');
    expect(() => percentFormat('%s %s', [1])).toThrow('not enough arguments for format string');
    expect(() => percentFormat('%s', [1, 2])).toThrow('not all arguments converted during string formatting');
  });
});

describe('str methods', () => {
  it('split/strip/splitlines/center as Python', () => {
    expect(split(' a  b ')).toEqual(['a', 'b']);
    expect(split('a,b,,c', ',')).toEqual(['a', 'b', '', 'c']);
    expect(split('a b c', null, 1)).toEqual(['a', 'b c']);
    expect(() => split('a', '')).toThrow('empty separator');
    expect(strip('\t\n x \x1c')).toBe('x');
    expect(strip('\ufeffx')).toBe('\ufeffx');
    expect(splitlines('a\r\nb\x0bc\n')).toEqual(['a', 'b', 'c']);
    expect(center('abc', 8)).toBe('  abc   ');
    expect(center('abc', 9)).toBe('   abc   ');
  });
});
