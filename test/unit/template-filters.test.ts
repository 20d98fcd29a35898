import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { parseYaml } from '../../src/load/yaml.js';
import { FILTERS, templar } from '../../src/template/index.js';

const r = (t: string, vars: Record<string, unknown> = {}): Promise<unknown> => templar.render(t, vars);

describe('kplay filters', () => {
  it('are all registered and documented by name', () => {
    for (const name of ['to_yaml', 'to_json', 'from_yaml', 'from_json', 'b64encode', 'b64decode', 'sha256', 'default', 'mandatory', 'regex_replace', 'quote', 'bool', 'int', 'to_int', 'string', 'keys', 'values', 'dict2items', 'items2dict', 'combine', 'regex_search', 'basename', 'dirname', 'lower', 'upper']) {
      expect(typeof FILTERS[name]).toBe('function');
    }
  });

  it('to_json with and without indent', async () => {
    const m = { a: [1, 'x'], b: null };
    expect(await r('{{ m | to_json }}', { m })).toBe('{"a":[1,"x"],"b":null}');
    expect(await r('{{ m | to_json: 2 }}', { m })).toBe('{\n  "a": [\n    1,\n    "x"\n  ],\n  "b": null\n}');
    expect(await r('{{ n | to_json }}', { n: null })).toBe('null');
    expect(await r('{{ "a\\"b" | to_json }}')).toBe('"a\\"b"');
  });

  it('to_yaml / from_yaml round trip', async () => {
    const m = { a: { b: [1, 2] }, s: 'yes' };
    const y = await r('{{ m | to_yaml }}', { m });
    expect(y).toBe('a:\n  b:\n    - 1\n    - 2\ns: "yes"');
    expect(await r('{{ y | from_yaml }}', { y })).toEqual(m);
    expect(await r('{{ m | to_yaml: 4 }}', { m })).toBe('a:\n    b:\n        - 1\n        - 2\ns: "yes"');
  });

  it('from_yaml refuses duplicate keys and reports parse errors', async () => {
    await expect(r('{{ y | from_yaml }}', { y: 'a: 1\na: 2' })).rejects.toThrow(/from_yaml/);
  });

  it('from_json parses and reports errors as InputError', async () => {
    expect(await r('{{ s | from_json }}', { s: '{"a":[1,true]}' })).toEqual({ a: [1, true] });
    const p = r('{{ s | from_json }}', { s: '{bad' });
    await expect(p).rejects.toBeInstanceOf(InputError);
    await expect(r('{{ s | from_json }}', { s: '{bad' })).rejects.toThrow(/template error in .*from_json/);
  });

  it('b64encode / b64decode (UTF-8)', async () => {
    expect(await r('{{ "héllo" | b64encode }}')).toBe('aMOpbGxv');
    expect(await r('{{ "aMOpbGxv" | b64decode }}')).toBe('héllo');
    expect(await r('{{ "admin" | b64encode | b64decode }}')).toBe('admin');
  });

  it('sha256 hex', async () => {
    expect(await r('{{ "abc" | sha256 }}')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('regex_replace with backreferences and flags', async () => {
    expect(await r('{{ "a1b22c" | regex_replace: "\\d+", "#" }}')).toBe('a#b#c');
    expect(await r('{{ "host:8080" | regex_replace: "^(\\w+):(\\d+)$", "\\2/\\1" }}')).toBe('8080/host');
    expect(await r('{{ "host:8080" | regex_replace: "^(\\w+):(\\d+)$", "$2-$1" }}')).toBe('8080-host');
    expect(await r('{{ "ABC abc" | regex_replace: "abc", "x", "i" }}')).toBe('x x');
    expect(await r('{{ "abc" | regex_replace: "b" }}')).toBe('ac');
    await expect(r('{{ "abc" | regex_replace: "(" , "x" }}')).rejects.toThrow(/invalid regular expression/);
    // patterns from variables are used as they are
    expect(await r('{{ s | regex_replace: p, "-" }}', { s: 'a.b.c', p: '\\.' })).toBe('a-b-c');
    // a quote inside a literal pattern
    expect(await r(`{{ s | regex_replace: "\\"", "'" }}`, { s: 'say "hi"' })).toBe("say 'hi'");
    // as written in a double-quoted YAML scalar
    const task = parseYaml('msg: "{{ v | regex_replace: \'^v(\\\\d+)\\\\..*\', \'\\\\1\' }}"\n', 'f.yml').docs[0] as { msg: string };
    expect(task.msg).toBe("{{ v | regex_replace: '^v(\\d+)\\..*', '\\1' }}");
    expect(await r(task.msg, { v: 'v12.3' })).toBe('12');
  });

  it('regex_search and regex_findall', async () => {
    expect(await r('{{ "v1.2.3" | regex_search: "\\d+\\.\\d+" }}')).toBe('1.2');
    expect(await r('{{ "image:1.25" | regex_search: ":(.*)$" }}')).toBe('1.25');
    expect(await r('{{ "abc" | regex_search: "z" }}')).toBeNull();
    expect(await r('{{ "a1b2" | regex_findall: "\\d" }}')).toEqual(['1', '2']);
  });

  it('quote (shell)', async () => {
    expect(await r('{{ "simple-path/x.y" | quote }}')).toBe('simple-path/x.y');
    expect(await r('{{ "two words" | quote }}')).toBe("'two words'");
    expect(await r('{{ s | quote }}', { s: "it's; rm -rf /" })).toBe(`'it'"'"'s; rm -rf /'`);
    expect(await r('{{ "" | quote }}')).toBe("''");
    expect(await r('{{ "$(id)" | quote }}')).toBe("'$(id)'");
  });

  it('bool, int, to_int, string', async () => {
    expect(await r('{{ "yes" | bool }}')).toBe(true);
    expect(await r('{{ "False" | bool }}')).toBe(false);
    expect(await r('{{ 1 | bool }}')).toBe(true);
    expect(await r('{{ "42" | int }}')).toBe(42);
    expect(await r('{{ "4.9" | int }}')).toBe(4);
    expect(await r('{{ "x" | int }}')).toBe(0);
    expect(await r('{{ "7" | to_int }}')).toBe(7);
    expect(await r('{{ 7 | string }}')).toBe('7');
    expect(await r('{{ m | string }}', { m: { a: 1 } })).toBe('{"a":1}');
  });

  it('keys, values, dict2items, items2dict', async () => {
    const m = { a: 1, b: 2 };
    expect(await r('{{ m | keys }}', { m })).toEqual(['a', 'b']);
    expect(await r('{{ m | values }}', { m })).toEqual([1, 2]);
    expect(await r('{{ m | dict2items }}', { m })).toEqual([{ key: 'a', value: 1 }, { key: 'b', value: 2 }]);
    expect(await r('{{ m | dict2items: key_name: "k", value_name: "v" }}', { m })).toEqual([{ k: 'a', v: 1 }, { k: 'b', v: 2 }]);
    expect(await r('{{ m | dict2items | items2dict }}', { m })).toEqual(m);
    expect(await r('{{ l | items2dict: key_name: "name", value_name: "v" }}', { l: [{ name: 'x', v: 1 }] })).toEqual({ x: 1 });
    await expect(r('{{ l | items2dict }}', { l: [{ nokey: 1 }] })).rejects.toThrow(/items2dict/);
  });

  it('combine deep-merges maps (later wins, lists replaced)', async () => {
    const a = { x: { y: 1, z: [1, 2] }, k: 'a' };
    const b = { x: { w: 2, z: [3] }, k: 'b' };
    const c = { extra: true };
    expect(await r('{{ a | combine: b, c }}', { a, b, c })).toEqual({ x: { y: 1, w: 2, z: [3] }, k: 'b', extra: true });
    expect(await r('{{ a | combine: b, recursive: false }}', { a, b })).toEqual({ x: { w: 2, z: [3] }, k: 'b' });
    expect(a).toEqual({ x: { y: 1, z: [1, 2] }, k: 'a' }); // inputs untouched
    const evil = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const out = (await r('{{ a | combine: evil }}', { a, evil })) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    await expect(r('{{ a | combine: 3 }}', { a })).rejects.toThrow(/combine expects maps/);
  });

  it('basename, dirname, lower, upper, length', async () => {
    expect(await r('{{ "/etc/kube/config.yaml" | basename }}')).toBe('config.yaml');
    expect(await r('{{ "/etc/kube/config.yaml" | dirname }}')).toBe('/etc/kube');
    expect(await r('{{ "MiXed" | lower }}')).toBe('mixed');
    expect(await r('{{ "MiXed" | upper }}')).toBe('MIXED');
    expect(await r('{{ l | length }}', { l: [1, 2, 3] })).toBe(3);
    expect(await r('{{ m | length }}', { m: { a: 1 } })).toBe(1);
  });

  it("Liquid's own filters still work", async () => {
    expect(await r('{{ "a b" | upcase | replace: " ", "-" }}')).toBe('A-B');
    expect(await r('{{ l | join: "," }}', { l: [1, 2] })).toBe('1,2');
    expect(await r('{{ l | map: "n" }}', { l: [{ n: 1 }, { n: 2 }] })).toEqual([1, 2]);
    expect(await r('{{ l | where: "on", true | size }}', { l: [{ on: true }, { on: false }] })).toBe(1);
  });
});
