// The filter tables beyond the differential cases: names and aliases, undefined values through
// default/mandatory/map/select (as ansible-core 2.19 passes them on), to_datetime values, the
// file tests inside the playbook tree, and Liquid's filters for templates written in Liquid syntax.
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FILTERS, LIQUID_FILTERS, TESTS } from '../../src/template/filters/index.js';
import { PyDatetime, PyTimedelta } from '../../src/template/filters/pytime.js';
import type { Kwargs, PluginContext } from '../../src/template/plugins.js';
import { PyFloat, Undef } from '../../src/template/values.js';

const root = mkdtempSync(path.join(tmpdir(), 'kplay-filters-'));
const outside = mkdtempSync(path.join(tmpdir(), 'kplay-filters-out-'));
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});
mkdirSync(path.join(root, 'dir'));
writeFileSync(path.join(root, 'f.txt'), 'x');
writeFileSync(path.join(root, 'vault.yml'), '$ANSIBLE_VAULT;1.1;AES256\n6162\n');
symlinkSync(path.join(root, 'f.txt'), path.join(root, 'link'));
writeFileSync(path.join(outside, 'o.txt'), 'o');

const ctx: PluginContext = {
  variable: (n) => new Undef(`'${n}' is undefined`, n),
  variableNames: () => [],
  render: (t) => t,
  searchPaths: [root],
  fileRoots: [root],
  env: {},
  addSecret: () => undefined,
};

function f(name: string, value: unknown, args: unknown[] = [], kwargs: Kwargs = {}): unknown {
  const def = FILTERS.get(name);
  if (!def) throw new Error(`no filter ${name}`);
  return def.fn(value, args, kwargs, ctx);
}

function t(name: string, value: unknown, args: unknown[] = [], kwargs: Kwargs = {}): boolean {
  const def = TESTS.get(name);
  if (!def) throw new Error(`no test ${name}`);
  return def.fn(value, args, kwargs, ctx);
}

function l(name: string, value: unknown, args: unknown[] = [], kwargs: Kwargs = {}): unknown {
  const def = LIQUID_FILTERS.get(name);
  if (!def) throw new Error(`no Liquid filter ${name}`);
  return def.fn(value, args, kwargs, ctx);
}

const undef = (name: string): Undef => new Undef(`'${name}' is undefined`, name);

describe('names', () => {
  it('has the filters of issue 29 under short and fully qualified names', () => {
    const names = (
      'default d mandatory bool int float string length count first last join unique sort reverse min max sum map select reject selectattr rejectattr list ' +
      'dict2items items2dict combine flatten zip zip_longest difference union intersect symmetric_difference product permutations combinations subelements lower upper ' +
      'capitalize title replace trim split regex_replace regex_search regex_findall regex_escape to_json to_nice_json from_json to_yaml to_nice_yaml from_yaml ' +
      'from_yaml_all b64encode b64decode hash checksum md5 sha1 basename dirname expanduser realpath relpath splitext quote ternary type_debug strftime to_datetime ' +
      'random shuffle urlencode urlsplit human_readable human_to_bytes abs round center indent wordcount truncate batch slice groupby dictsort attr items pprint tojson'
    ).split(' ');
    for (const n of names) {
      expect(FILTERS.has(n), n).toBe(true);
      expect(FILTERS.get(`ansible.builtin.${n}`), n).toBe(FILTERS.get(n));
    }
    expect(FILTERS.get('community.general.json_query')).toBe(FILTERS.get('json_query'));
    expect(FILTERS.get('kubernetes.core.k8s_config_resource_name')).toBe(FILTERS.get('k8s_config_resource_name'));
    for (const n of ['size', 'upcase', 'downcase', 'plus', 'minus', 'times', 'divided_by', 'modulo', 'append', 'prepend', 'strip', 'where', 'compact', 'concat', 'url_encode', 'date']) {
      expect(FILTERS.has(n), n).toBe(true);
      expect(LIQUID_FILTERS.has(n), n).toBe(true);
    }
  });
  it('has the tests under short, operator and fully qualified names', () => {
    for (const n of 'defined undefined none string number integer float boolean mapping sequence iterable callable sameas lower upper escaped failed failure succeeded success successful changed change skipped skip finished started match search regex version version_compare in contains subset superset any all equalto eq ne lt le gt ge divisibleby even odd truthy falsy vault_encrypted abs exists file directory link nan'.split(' ')) {
      expect(TESTS.has(n), n).toBe(true);
      expect(TESTS.get(`ansible.builtin.${n}`), n).toBe(TESTS.get(n));
    }
    for (const op of ['==', '!=', '<', '<=', '>', '>=']) expect(TESTS.has(op), op).toBe(true);
    expect(t('filter', 'to_json')).toBe(true);
    expect(t('filter', 'no_such_filter')).toBe(false);
    expect(t('test', 'defined')).toBe(true);
  });
});

describe('undefined values', () => {
  it('default/d replace an undefined value; boolean=true also falsy ones; boolean must be a bool', () => {
    expect(FILTERS.get('default')?.acceptsUndefined).toBe(true);
    expect(f('default', undef('x'), [5])).toBe(5);
    expect(f('d', undef('x'))).toBe('');
    expect(f('default', '', ['x', true])).toBe('x');
    expect(f('default', 0, ['x'])).toBe(0);
    expect(() => f('default', 1, [2, 'yes'])).toThrow("The 'boolean' argument must be of type 'bool', not 'str'.");
  });
  it("mandatory names the missing part as Ansible does", () => {
    expect(() => f('mandatory', undef('x'))).toThrow("Mandatory variable 'x' not defined.");
    expect(() => f('mandatory', new Undef("object of type 'dict' has no attribute 'y'", 'y'))).toThrow("Mandatory variable 'y' not defined.");
    expect(() => f('mandatory', new Undef('No first item, sequence was empty.', ''))).toThrow('Mandatory variable not defined.');
    expect(() => f('mandatory', undef('x'), ['custom'])).toThrow(/^custom$/);
    expect(f('mandatory', 3)).toBe(3);
  });
  it('first/last/max of empty sequences give undefined values (default() can replace them)', () => {
    expect(f('first', [])).toBeInstanceOf(Undef);
    expect((f('last', []) as Undef).message).toBe('No last item, sequence was empty.');
    expect((f('max', []) as Undef).message).toBe('No aggregated item, sequence was empty.');
  });
  it('map(attribute=) keeps undefined items lazily; default= replaces them; select("defined") drops them', () => {
    const items = [{ a: 1 }, { b: 2 }];
    const mapped = f('map', items, [], { attribute: 'a' }) as unknown[];
    expect(mapped[0]).toBe(1);
    expect(mapped[1]).toBeInstanceOf(Undef);
    expect((mapped[1] as Undef).message).toBe("object of type 'dict' has no attribute 'a'");
    expect(f('map', items, [], { attribute: 'a', default: 0 })).toEqual([1, 0]);
    expect(f('select', mapped, ['defined'])).toEqual([1]);
    expect(f('map', mapped, ['default', 5])).toEqual([1, 5]);
    // using an undefined item inside a filter makes the filter return it (it fails where used, default() replaces it)
    expect(f('list', mapped)).toBe(mapped[1]);
    expect((f('selectattr', items, ['a', 'equalto', 1]) as Undef).message).toBe("object of type 'dict' has no attribute 'a'");
    expect((f('sort', items, [], { attribute: 'a' }) as Undef).message).toBe("object of type 'dict' has no attribute 'a'");
    expect(f('join', [1, undef('nope')], [','])).toBeInstanceOf(Undef);
    expect(() => f('mandatory', f('join', [1, undef('nope')], [',']))).toThrow("Mandatory variable 'nope' not defined.");
    expect(f('selectattr', items, ['a', 'defined'])).toEqual([{ a: 1 }]);
    expect(f('rejectattr', items, ['a', 'undefined'])).toEqual([{ a: 1 }]);
    expect(() => f('map', [1], ['nosuch'])).toThrow("No filter named 'nosuch'.");
    expect(() => f('select', [1], ['nosuch'])).toThrow("No test named 'nosuch'.");
  });
  it('type_debug of an undefined value', () => {
    expect(f('type_debug', undef('x'))).toBe('UndefinedMarker');
    expect(f('type_debug', new PyFloat(1))).toBe('float');
  });
});

describe('to_datetime', () => {
  it('returns a datetime whose str(), fields and differences are Python’s', () => {
    const a = f('to_datetime', '2020-01-02', ['%Y-%m-%d']) as PyDatetime;
    const b = f('to_datetime', '2020-01-01 12:00:00') as PyDatetime;
    expect(a).toBeInstanceOf(PyDatetime);
    expect(String(b)).toBe('2020-01-01 12:00:00');
    expect(b.year).toBe(2020);
    const d = a.minus(b);
    expect(d).toBeInstanceOf(PyTimedelta);
    expect(d.totalSeconds()).toBe(43200);
    expect(String(d)).toBe('12:00:00');
    expect(String(b.minus(a))).toBe('-1 day, 12:00:00');
    expect(() => f('to_datetime', 'x')).toThrow("time data 'x' does not match format '%Y-%m-%d %H:%M:%S'");
  });
});

describe('password_hash (as ansible-core with passlib; hashes checked against crypt(3))', () => {
  it('sha512 (default rounds 656000), sha256, md5 with a given salt', () => {
    expect(f('password_hash', 'secret', ['sha512', 'mysalt'])).toBe(
      '$6$rounds=656000$mysalt$cDA0t8lm/qt.LT6DzpoHxJ.NwTpx.WTkOPwhseSva8pRixDSH2./ffedCjAMbTX1Uo1QNT7jJPJ6FIzU2i59K/',
    );
    expect(f('password_hash', 'secret', ['sha256', 'mysalt'])).toBe('$5$rounds=535000$mysalt$GnEktJhWXRuwViyPsEWK9s63HYW1GqXFqU5SdKDqol6');
    expect(f('password_hash', 'secret', ['md5', 'mysalt'])).toBe('$1$mysalt$n/EfEiV74OYgBdqhKQzSW/');
    expect(f('password_hash', 'a much longer password that goes past sixty four bytes to test the loops properly', ['sha512', 'abcdefghijklmnopqrstu'], { rounds: 1000 })).toBe(
      '$6$rounds=1000$abcdefghijklmnop$UJ2/XLtAI9.lBMC3AMMu3w0OCbGZvQAZkaIpQjqn7OED/pcvaEsOLfcHRSALHe74Qywi7PcO8rZWGnkcG0.MH/',
    );
  });
  it('a random salt of 16 characters when none is given', () => {
    expect(f('password_hash', 'x', ['sha512'], { rounds: 1000 })).toMatch(/^\$6\$rounds=1000\$[./0-9A-Za-z]{16}\$[./0-9A-Za-z]{86}$/);
    expect(() => f('password_hash', 'x', ['nope'])).toThrow('nope is not in the list of supported passlib algorithms');
  });
});

describe('file tests stay inside the playbook tree', () => {
  it('answers for paths under the roots, relative to the playbook directory', () => {
    expect(t('file', 'f.txt')).toBe(true);
    expect(t('directory', 'dir')).toBe(true);
    expect(t('exists', 'nope')).toBe(false);
    expect(t('link', 'link')).toBe(true);
    expect(t('link', 'f.txt')).toBe(false);
    expect(t('same_file', 'link', ['f.txt'])).toBe(true);
    expect(t('vaulted_file', 'vault.yml')).toBe(true);
    expect(t('vaulted_file', 'f.txt')).toBe(false);
    expect(t('abs', '/x')).toBe(true);
  });
  it('tests paths anywhere, as Ansible', () => {
    expect(t('exists', path.join(outside, 'o.txt'))).toBe(true);
    expect(t('file', '../' + path.basename(outside) + '/o.txt')).toBe(true);
    expect(t('exists', path.join(outside, 'none.txt'))).toBe(false);
  });
});

describe("Liquid's filters (for `name: args`)", () => {
  it('keeps Liquid semantics where Jinja2 differs', () => {
    expect(l('default', null, [3])).toBe(3);
    expect(l('default', false, [3])).toBe(3);
    expect(l('default', false, [3], { allow_false: true })).toBe(false);
    expect(l('default', '', [3])).toBe(3);
    expect(l('default', [], [3])).toBe(3);
    expect(l('default', 0, [3])).toBe(0);
    expect(l('default', 0, [3, true])).toBe(3);
    expect(l('default', undef('x'), [3])).toBe(3);
    expect(l('join', ['a', 'b'])).toBe('a b');
    expect(l('split', 'a,b,,', [','])).toEqual(['a', 'b']);
    expect(l('truncate', 'hello world', [8])).toBe('hello...');
    expect(l('slice', 'hello', [1, 3])).toBe('ell');
    expect(l('slice', [1, 2, 3], [-2])).toEqual([2]);
    expect(l('map', [{ n: 'a' }, { m: 1 }], ['n'])).toEqual(['a', null]);
    expect(l('first', [])).toBe(null);
    expect(l('capitalize', 'hELLO')).toBe('Hello');
    expect(l('round', 2.567, [2])).toBe(2.57);
  });
  it('has the Liquid-only filters', () => {
    expect(l('size', [1, 2])).toBe(2);
    expect(l('size', 'héllo')).toBe(5);
    expect(l('size', { a: 1 })).toBe(1);
    expect(l('upcase', 'ab')).toBe('AB');
    expect(l('plus', 2, ['3'])).toBe(5);
    expect(l('minus', 5, [2])).toBe(3);
    expect(l('times', 2, [new PyFloat(1.5)])).toBe(3);
    expect(l('divided_by', 10, [4])).toBe(2.5);
    expect(l('divided_by', 10, [4, true])).toBe(2);
    expect(() => l('divided_by', 1, [0])).toThrow('divided_by: division by zero');
    expect(l('modulo', 10, [4])).toBe(2);
    expect(l('append', 'a', ['b'])).toBe('ab');
    expect(l('prepend', 'a', ['b'])).toBe('ba');
    expect(l('strip', '  a  ')).toBe('a');
    expect(l('where', [{ s: 'up' }, { s: 'down' }, { x: 1 }], ['s', 'up'])).toEqual([{ s: 'up' }]);
    expect(l('where', [{ on: true }, { on: false }], ['on'])).toEqual([{ on: true }]);
    expect(l('compact', [1, null, 2])).toEqual([1, 2]);
    expect(l('concat', [1], [[2, 3]])).toEqual([1, 2, 3]);
    expect(l('uniq', [1, 1, 2])).toEqual([1, 2]);
    expect(l('url_encode', 'a b&c')).toBe('a+b%26c');
    expect(l('escape', '<a>')).toBe('&lt;a&gt;');
    expect(l('date', '2024-01-02T13:04:05', ['%Y/%m/%d %H:%M'], {})).toBe('2024/01/02 13:04');
    expect(l('sha256', 'x')).toBe('2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881');
    expect(l('keys', { a: 1, b: 2 })).toEqual(['a', 'b']);
    expect(l('to_int', '42abc')).toBe(42);
  });
});
