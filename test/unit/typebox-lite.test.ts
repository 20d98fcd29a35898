// The SDK's `Type` builds the common constructors without loading TypeBox; every one must give
// exactly TypeBox's object: same keys in the same order (the generated schemas and docs depend on
// it), same symbols, same values. The rest is TypeBox's own.
import { Type as TypeBox, Kind, OptionalKind } from '@sinclair/typebox';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kplayBin } from '../helpers/cli.js';
import { Type } from '../../src/core/typebox-lite.js';
import { Default, StringEnum } from '../../src/core/args.js';

/** Keys (strings and symbols, in order) and values, recursively. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (typeof v !== 'object' || v === null) return v;
  return Reflect.ownKeys(v).map((k) => [String(k), shape((v as Record<string | symbol, unknown>)[k])]);
}

const same = (a: unknown, b: unknown): void => {
  expect(shape(a)).toStrictEqual(shape(b));
  expect(a).toStrictEqual(b);
};

describe('SDK Type (TypeBox without loading it)', () => {
  const opts = { description: 'd', default: 'x', examples: ['e'] };
  const cases: [string, (T: typeof TypeBox) => unknown][] = [
    ['String', (T) => T.String()],
    ['String with options', (T) => T.String({ ...opts, minLength: 1, pattern: '^a' })],
    ['Number', (T) => T.Number({ exclusiveMinimum: 0 })],
    ['Integer', (T) => T.Integer({ minimum: 1, maximum: 65535, description: 'port' })],
    ['Boolean', (T) => T.Boolean({ default: false })],
    ['Null', (T) => T.Null()],
    ['Unknown', (T) => T.Unknown({ description: 'anything' })],
    ['Never', (T) => T.Never()],
    ['Never with options', (T) => T.Never({ description: 'n' })],
    ['Literal string', (T) => T.Literal('present', { description: 'x' })],
    ['Literal number and boolean', (T) => T.Union([T.Literal(1), T.Literal(true)])],
    ['Unsafe', (T) => T.Unsafe<string>({ enum: ['a', 'b'], description: 'x' })],
    ['Unsafe without options', (T) => T.Unsafe()],
    ['Optional', (T) => T.Optional(T.String({ description: 'x' }))],
    ['Object with required and optional properties', (T) => T.Object({ a: T.String(), b: T.Optional(T.Integer()), c: T.Array(T.String()) }, { additionalProperties: false, description: 'o' })],
    ['Object of optional properties only', (T) => T.Object({ a: T.Optional(T.String()) })],
    ['empty Object', (T) => T.Object({})],
    ['Array', (T) => T.Array(T.Object({ name: T.String() }), { minItems: 1 })],
    ['Union of two', (T) => T.Union([T.String(), T.Array(T.String())], { description: 'one or many' })],
    ['Union of one', (T) => T.Union([T.String({ description: 'only' })])],
    ['Union of one with options', (T) => T.Union([T.String()], { description: 'u' })],
    ['Union of none', (T) => T.Union([])],
    ['Record of strings', (T) => T.Record(T.String(), T.Unknown(), { description: 'map' })],
    ['Record without options', (T) => T.Record(T.String(), T.String())],
    ['Record keyed by a pattern', (T) => T.Record(T.String({ pattern: '^[a-z]+$' }), T.Number())],
    ['Record keyed by a union of literals', (T) => T.Record(T.Union([T.Literal('a'), T.Literal('b')]), T.Number())],
    ['Optional(x, false)', (T) => T.Optional(T.Optional(T.String()), false)],
    ['a constructor not built here (Intersect)', (T) => T.Intersect([T.Object({ a: T.String() }), T.Object({ b: T.Number() })])],
    ['a constructor not built here (Partial)', (T) => T.Partial(T.Object({ a: T.String() }))],
  ];
  it.each(cases)('%s is built exactly as TypeBox builds it', (_name, build) => {
    same(build(Type), build(TypeBox));
  });

  it('keeps TypeBox markers that ajv and JSON ignore', () => {
    const s = Type.Optional(Type.String());
    expect((s as unknown as Record<symbol, unknown>)[Kind]).toBe('String');
    expect((s as unknown as Record<symbol, unknown>)[OptionalKind]).toBe('Optional');
    expect(JSON.parse(JSON.stringify(s))).toStrictEqual({ type: 'string' });
  });

  it('Default and StringEnum mark properties as TypeBox would', () => {
    same(Type.Object({ a: Default(Type.Integer(), 3), b: StringEnum(['x', 'y']) }), TypeBox.Object({ a: TypeBox.Optional({ ...TypeBox.Integer(), default: 3 }), b: TypeBox.Unsafe({ enum: ['x', 'y'] }) }));
  });

  it('is never loaded by a validate or a run of the built CLI (each load of TypeBox costs every command ~0.15-0.4 s)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'typebox-lite-'));
    // reports every CommonJS load of TypeBox (typebox-lite loads it that way when it must)
    writeFileSync(path.join(dir, 'hook.cjs'), "const M = require('module'); const load = M._load; M._load = function (req, ...rest) { if (String(req).includes('@sinclair/typebox')) process.stderr.write('TYPEBOX LOADED\\n'); return load.call(this, req, ...rest); };\n");
    writeFileSync(path.join(dir, 'inventory.yml'), 'all:\n  clusters:\n    local: {}\n');
    writeFileSync(path.join(dir, 'other.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: other }\n');
    writeFileSync(path.join(dir, 'site.yml'), '- import_playbook: other.yml\n- hosts: all\n  tasks:\n    - set_fact: { a: 1 }\n    - debug: { msg: "{{ a }}" }\n');
    for (const args of [['validate', 'site.yml', '-i', 'inventory.yml'], ['run', 'site.yml', '-i', 'inventory.yml', '--no-lock', '--record-dir', path.join(dir, 'records')]]) {
      const r = spawnSync(process.execPath, ['-r', path.join(dir, 'hook.cjs'), kplayBin, ...args], { cwd: dir, encoding: 'utf8' });
      expect(r.status, `${args[0]}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stderr).not.toContain('TYPEBOX LOADED');
    }
  });
});
