// The YAML boundary: positions, duplicate keys, alias bombs, deep nesting, !secret, and schema
// errors positioned at the offending node.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { validateOrThrow } from '../../src/load/schema.js';
import { loadYamlDoc, parseYaml, posOf, posOfPath, setDuplicateKeyMode, setYamlWarningSink } from '../../src/load/yaml.js';

const describeErr = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e.describe();
    throw e;
  }
  throw new Error('expected an InputError');
};

describe('parseYaml', () => {
  it('records file:line:col of keys and list items', () => {
    const { docs } = parseYaml('a: 1\nlist:\n  - x: 1\n  - y: 2\n', 'f.yml');
    expect(posOf(docs[0], 'list')).toEqual({ file: 'f.yml', line: 2, col: 1 });
    expect(posOfPath(docs[0], ['list', 1, 'y'])).toEqual({ file: 'f.yml', line: 4, col: 5 });
  });

  it('a duplicate key: ansible-core\'s warning and the last value (its default `warn`); `error` rejects it at the duplicate; `ignore` says nothing', () => {
    const said: string[] = [];
    const previous = setYamlWarningSink((m) => said.push(m));
    try {
      const { docs } = parseYaml('a: 1\nb: 2\na:\n  x: 3\n', 'd.yml');
      expect(docs[0]).toEqual({ a: { x: 3 }, b: 2 });
      expect(posOf(docs[0], 'a')).toEqual({ file: 'd.yml', line: 3, col: 1 });
      expect(posOfPath(docs[0], ['a', 'x'])).toEqual({ file: 'd.yml', line: 4, col: 3 });
      expect(said).toEqual(["d.yml:3:1: Found duplicate mapping key 'a'. Using last defined value only."]);
      setDuplicateKeyMode('error');
      expect(describeErr(() => parseYaml('a: 1\nb: 2\na: 3\n', 'd.yml'))).toMatch(/^d\.yml:3:1: YAML error: duplicate key "a" \(first defined at line 1, column 1\)/);
      setDuplicateKeyMode('ignore');
      expect(parseYaml('a: 1\na: 3\n', 'd.yml').docs[0]).toEqual({ a: 3 });
      expect(said).toHaveLength(1);
    } finally {
      setDuplicateKeyMode(undefined);
      setYamlWarningSink(previous);
    }
  });

  it('caps alias expansion (billion laughs)', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
    expect(describeErr(() => parseYaml(lines.join('\n'), 'bomb.yml'))).toMatch(/bomb\.yml:\d+:\d+: YAML error: .*alias/i);
  });

  it('caps nesting depth', () => {
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    expect(describeErr(() => parseYaml(`x: ${deep}\n`, 'deep.yml'))).toMatch(/deep\.yml:\d+:\d+: YAML nesting deeper than the limit of 64 levels/);
  });

  it('refuses nesting deep enough to overflow the parser with file:line, the limit and how to raise it (no stack trace)', () => {
    const text = `a: 1\nb:\n  c: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const msg = describeErr(() => parseYaml(text, 'bomb.yml'));
    expect(msg).toMatch(/^bomb\.yml:3:\d+: YAML nesting 500\d levels deep, more than the limit of 64/);
    expect(msg).toContain('KPLAY_MAX_YAML_DEPTH');
    expect(msg).not.toMatch(/call stack/);
  });

  it('refuses an input file over the size cap before reading it, naming the limit and --max-input-bytes', async () => {
    const { loadYamlFile, setMaxInputBytes, getMaxInputBytes, DEFAULT_MAX_INPUT_BYTES } = await import('../../src/load/yaml.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-size-'));
    try {
      const file = path.join(dir, 'big.yml');
      writeFileSync(file, `x: "${'a'.repeat(2000)}"\n`);
      expect(getMaxInputBytes()).toBe(DEFAULT_MAX_INPUT_BYTES);
      setMaxInputBytes(1000);
      const err = await loadYamlFile(file).then(() => undefined, (e: unknown) => e);
      expect(err instanceof InputError ? err.describe() : String(err)).toMatch(/big\.yml:1:1: .*big\.yml is 2006 bytes, more than the input limit of 1000 bytes[\s\S]*--max-input-bytes/);
      setMaxInputBytes(10_000);
      expect((await loadYamlFile(file)).docs).toHaveLength(1);
    } finally {
      setMaxInputBytes(DEFAULT_MAX_INPUT_BYTES);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('collects !secret values', () => {
    const { docs, secrets } = parseYaml('pw: !secret hunter22\n', 's.yml');
    expect(docs[0]).toEqual({ pw: 'hunter22' });
    expect(secrets).toEqual(['hunter22']);
  });

  it('a missing file is a clear error', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-yaml-'));
    await expect(loadYamlDoc(path.join(dir, 'nope.yml'))).rejects.toThrow(/nope\.yml: file not found/);
    writeFileSync(path.join(dir, 'two.yml'), 'a: 1\n---\nb: 2\n');
    await expect(loadYamlDoc(path.join(dir, 'two.yml'))).rejects.toThrow(/single YAML document/);
  });
});

describe('validateOrThrow', () => {
  const schema = { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' }, replicas: { type: 'integer' } } };
  it('positions an unknown key at the key', () => {
    const { docs } = parseYaml('name: web\nreplcas: 3\n', 'v.yml');
    expect(describeErr(() => validateOrThrow(schema, docs[0], 'task'))).toBe("v.yml:2:1: task: unknown key 'replcas'");
  });
  it('positions a wrong type at the value', () => {
    const { docs } = parseYaml('name: web\nreplicas: three\n', 'v.yml');
    expect(describeErr(() => validateOrThrow(schema, docs[0], 'task'))).toBe('v.yml:2:1: task.replicas: must be integer');
  });
  it('names a missing required key', () => {
    const { docs } = parseYaml('replicas: 3\n', 'v.yml');
    expect(describeErr(() => validateOrThrow(schema, docs[0], 'task'))).toBe("v.yml:1:1: task: missing required key 'name'");
  });
});

describe('validateArgs (module arguments)', () => {
  it('keeps valid arguments as they are, even under anyOf with a string branch', async () => {
    const { validateArgs } = await import('../../src/load/schema.js');
    const schema = { type: 'object', additionalProperties: false, properties: { weight: { anyOf: [{ type: 'string', pattern: '%$' }, { type: 'integer' }] } } };
    expect(validateArgs(schema, { weight: 10 })).toEqual({ ok: true, value: { weight: 10 } });
    expect(validateArgs(schema, { weight: '50%' })).toEqual({ ok: true, value: { weight: '50%' } });
    // A templated "10" becomes 10, on a copy.
    const args = { weight: '10' };
    expect(validateArgs(schema, args)).toEqual({ ok: true, value: { weight: 10 } });
    expect(args.weight).toBe('10');
    expect(validateArgs(schema, { weight: 'ten' }).ok).toBe(false);
  });
});
