// Plain scalars of Ansible-side YAML resolve as PyYAML's YAML 1.1 resolver resolves them
// (src/load/yaml11.ts): through `yaml` and through the js-yaml fast path of src/load/yaml.ts, in
// kubernetes.core's `src` files, and in the from_yaml filter. The expected values are PyYAML 6's
// `yaml.safe_load('k: <scalar>')` (its type in the comment); `STR`: the scalar itself, a string;
// `DATE`: a timestamp, a `datetime.date` in PyYAML and its text in kplay. kplay's own manifests
// keep YAML 1.2 (kubectl's rules).
import { describe, expect, it } from 'vitest';
import { parseYaml } from '../../src/load/yaml.js';
import { fastLoadAll } from '../../src/load/fast-yaml.js';
import { resolvePlain } from '../../src/load/yaml11.js';
import { loadAllDocuments } from '../../src/k8s/kcore.js';
import { parseManifests } from '../../src/k8s/manifests.js';
import { loadYamlAll } from '../../src/template/filters/ansible-text.js';
import { PyFloat } from '../../src/template/values.js';

type Expected = null | boolean | number | 'STR' | 'DATE' | 'NaN' | 'Infinity' | '-Infinity';

const pyyaml: [string, Expected][] = [
  ['', null], // NoneType
  ['~', null], // NoneType
  ['null', null], // NoneType
  ['Null', null], // NoneType
  ['NULL', null], // NoneType
  ['nULL', 'STR'], // str
  ['true', true], // bool
  ['True', true], // bool
  ['TRUE', true], // bool
  ['tRUE', 'STR'], // str
  ['false', false], // bool
  ['yes', true], // bool
  ['Yes', true], // bool
  ['YES', true], // bool
  ['yES', 'STR'], // str
  ['no', false], // bool
  ['No', false], // bool
  ['NO', false], // bool
  ['on', true], // bool
  ['On', true], // bool
  ['ON', true], // bool
  ['off', false], // bool
  ['Off', false], // bool
  ['OFF', false], // bool
  ['y', 'STR'], // str
  ['n', 'STR'], // str
  ['Y', 'STR'], // str
  ['N', 'STR'], // str
  ['0', 0], // int
  ['-0', 0], // int
  ['+0', 0], // int
  ['+1', 1], // int
  ['-17', -17], // int
  ['007', 7], // int
  ['08', 'STR'], // str
  ['010', 8], // int
  ['0755', 493], // int
  ['-010', -8], // int
  ['0o17', 'STR'], // str
  ['0O17', 'STR'], // str
  ['0x1F', 31], // int
  ['0X1F', 'STR'], // str
  ['0x_1F', 31], // int
  ['0xg', 'STR'], // str
  ['0b101', 5], // int
  ['-0b11', -3], // int
  ['0b2', 'STR'], // str
  ['1_000', 1000], // int
  ['1__0', 10], // int
  ['_1', 'STR'], // str
  ['1,000', 'STR'], // str
  ['1.5', 1.5], // float
  ['.5', 0.5], // float
  ['5.', 5.0], // float
  ['-.5', 'STR'], // str
  ['+.5', 'STR'], // str
  ['1e3', 'STR'], // str
  ['1E-3', 'STR'], // str
  ['1.0e+3', 1000.0], // float
  ['1.0e3', 'STR'], // str
  ['1e', 'STR'], // str
  ['.e3', 'STR'], // str
  ['6.02e+23', 6.02e+23], // float
  ['1.', 1.0], // float
  ['0.', 0.0], // float
  ['00.5', 0.5], // float
  ['1_0.5', 10.5], // float
  ['.inf', 'Infinity'], // float
  ['+.inf', 'Infinity'], // float
  ['-.Inf', '-Infinity'], // float
  ['.INF', 'Infinity'], // float
  ['.nan', 'NaN'], // float
  ['.NaN', 'NaN'], // float
  ['.NAN', 'NaN'], // float
  ['inf', 'STR'], // str
  ['nan', 'STR'], // str
  ['Infinity', 'STR'], // str
  ['NaN', 'STR'], // str
  ['12:30:00', 45000], // int
  ['1:30', 90], // int
  ['1:30.5', 90.5], // float
  ['-1:30', -90], // int
  ['1:60', 'STR'], // str
  ['0:30', 'STR'], // str
  ['2001-12-14', 'DATE'], // date
  ['0.5Gi', 'STR'], // str
  ['500m', 'STR'], // str
  ['1.2.3', 'STR'], // str
  ['v1', 'STR'], // str
  ['+', 'STR'], // str
  ['.', 'STR'], // str
  ['9007199254740993', 9007199254740992.0], // int
  ['a b c', 'STR'], // str
];

/** The JavaScript value kplay must load for a row. */
function want(s: string, e: Expected): unknown {
  if (e === 'STR' || e === 'DATE') return s;
  if (e === 'NaN') return NaN;
  if (e === 'Infinity') return Infinity;
  if (e === '-Infinity') return -Infinity;
  return e;
}

const load = (text: string, fast: boolean): unknown[] => parseYaml(text, 'x.yml', { fast }).docs;

describe('YAML 1.1 plain scalars (PyYAML) in what Ansible reads', () => {
  it.each(pyyaml)('%j as PyYAML reads it, as a value and a list item, both parsers', (s, e) => {
    const v = want(s, e);
    for (const fast of [true, false]) {
      expect(load(`k: ${s}\n`, fast), `fast=${fast}`).toStrictEqual([{ k: v }]);
      expect(load(`- ${s}\n- [${s}]\n`, fast), `fast=${fast}`).toStrictEqual([[v, s === '' ? [] : s === '1,000' ? [1, 0] : [v]]]);
    }
    expect(loadAllDocuments(`k: ${s}\n`, 'src'), 'kubernetes.core src').toStrictEqual([{ k: v }]);
    const f = (loadYamlAll(`k: ${s}\n`)[0] as Record<string, unknown>).k;
    expect(f instanceof PyFloat ? f.value : f, 'from_yaml').toStrictEqual(v);
  });

  it.each(pyyaml)('%j as a key: both parsers agree', (s) => {
    if (s === '' || resolvePlain(s) === 'null') return; // a null key is left to `yaml`
    expect(load(`${s}: v\n`, true)).toStrictEqual(load(`${s}: v\n`, false));
  });

  it('resolves PyYAML types by name', () => {
    expect(['yes', 'Off', '0b1', '1:30', '1.5', '1e3', '~', '2024-01-01', '<<', '=', 'y'].map(resolvePlain)).toStrictEqual(['bool', 'bool', 'int', 'int', 'float', 'str', 'null', 'timestamp', 'merge', 'value', 'str']);
  });

  it('keeps quoted and explicitly tagged scalars strings, and kplay tags working', () => {
    const text = 'a: "yes"\nb: \'010\'\nc: !!str on\nd: !secret no\ne: !!int "010"\nf: !!bool "off"\n';
    const { docs, secrets } = parseYaml(text, 'x.yml');
    expect(docs).toStrictEqual([{ a: 'yes', b: '010', c: 'on', d: 'no', e: 8, f: false }]);
    expect(secrets).toStrictEqual(['no']);
  });

  it('keeps merge keys and nested forms', () => {
    for (const fast of [true, false]) {
      expect(load('a: [yes, no, 017, n]\nb: {on: off}\nc: |\n  yes\n', fast)).toStrictEqual([{ a: [true, false, 15, 'n'], b: { true: false }, c: 'yes\n' }]);
    }
    expect(load('base: &b {x: on}\nm:\n  <<: *b\n  y: 0x10\n', false)).toStrictEqual([{ base: { x: true }, m: { x: true, y: 16 } }]);
  });

  it('leaves kplay manifests on YAML 1.2 core (kubectl)', () => {
    const objs = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: yes, b: 010, c: 1e3}\n', 'm.yml');
    expect(objs[0]?.data).toStrictEqual({ a: 'yes', b: 10, c: 1000 });
    expect(fastLoadAll('a: yes\nb: 010\n')).toStrictEqual([{ a: 'yes', b: 10 }]);
    expect(fastLoadAll('a: yes\nb: 010\n', 'yaml11')).toStrictEqual([{ a: true, b: 8 }]);
  });
});

describe('a file that is JSON', () => {
  it('is read with JSON numbers, as ansible-core reads it (json.loads first)', () => {
    for (const fast of [true, false]) expect(load('{"a": 1e3, "b": 1.5E+3, "c": [10, "yes", true]}', fast), `fast=${fast}`).toStrictEqual([{ a: 1000, b: 1500, c: [10, 'yes', true] }]);
    // not JSON (`yes` is no JSON value): YAML 1.1
    expect(load('{"a": 1e3, "b": yes}', false)).toStrictEqual([{ a: '1e3', b: true }]);
  });
});
