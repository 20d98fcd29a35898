// The playbook's static schemas compiled at build time (ajv standalone) must validate exactly
// as the run-time compilation does, and the build must actually use them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Ajv, type ValidateFunction } from 'ajv';
import YAML from 'yaml';
import { moduleValidatorsSource } from '../../src/build/module-validators.js';
import { ajvInstance, ajvOptions, DOC_KEYWORDS, variantOf } from '../../src/load/schema.js';
import type { AnyModule } from '../../src/core/module.js';
import { MODULE_VARIANTS, moduleFingerprint } from '../../src/plugins/precompiled.js';
import { loadRegistry } from '../../src/plugins/registry.js';
import { precompiledSource } from '../../src/build/static-validators.js';
import { PRECOMPILED, schemaHash } from '../../src/playbook/validators.js';
import { repoRoot } from '../helpers/cli.js';

/** A temporary directory inside node_modules, where generated code's require('ajv/dist/runtime/…') resolves. */
function genDir(): string {
  const cache = path.join(repoRoot, 'node_modules/.cache');
  mkdirSync(cache, { recursive: true });
  return mkdtempSync(path.join(cache, 'kplay-validators-'));
}

const samples: unknown[] = [
  [{ hosts: 'all', tasks: [{ debug: { msg: 'x' } }] }],
  [{ hosts: 'all', gather_facts: 'no', serial: [1, '50%'], vars: { a: 1 }, roles: ['r', { role: 'x', vars: {} }] }],
  [{ import_playbook: 'other.yml', when: 'x' }],
  [{ tasks: [] }],
  [{ hosts: 'all', unknown_play_key: 1 }],
  [{ hosts: 3, tasks: 'nope' }],
  { hosts: 'all' },
  [{ name: 'n', when: ['a', 'b'], register: 'r', loop: [1, 2], loop_control: { loop_var: 'i' }, tags: 'x', retries: 'three' }],
  [{ name: 'n', until: 'x', delay: 1, become: true }],
  { all: { vars: { a: 1 }, clusters: { 'prod-1': { context: 'prod-1', kubeconfig: '~/.kube/config' } }, children: { eu: { clusters: { 'eu-1': {} } } } } },
  { all: { clusters: { 'bad name!': 3 }, hosts: {} } },
  { prod: { clusters: [] } },
];

describe('precompiled playbook validators', () => {
  it('give the same verdicts and errors as ajv at run time', async () => {
    const dir = genDir();
    const file = path.join(dir, 'validators.gen.mjs');
    writeFileSync(file, precompiledSource());
    const gen = (await import(pathToFileURL(file).href)) as Record<string, ValidateFunction>;
    expect(Object.keys(PRECOMPILED).length).toBeGreaterThan(0);
    for (const [name, schema] of Object.entries(PRECOMPILED)) {
      const compiled = ajvInstance().compile(schema());
      const built = gen[name];
      expect(typeof built, name).toBe('function');
      for (const s of samples) {
        const value = name === 'taskKeywords' && Array.isArray(s) ? s[0] : s;
        expect(built?.(value), `${name} ${JSON.stringify(value)}`).toBe(compiled(value));
        expect(built?.errors ?? null).toStrictEqual(compiled.errors ?? null);
      }
    }
  });

  it('are used by the build (npm run build generates them from the same schemas)', async () => {
    // that the built CLI compiles none of them at run time: test/unit/bundle.test.ts
    const built = (await import(pathToFileURL(path.join(repoRoot, 'dist/src/playbook/validators.gen.js')).href)) as { hash: string };
    expect(built.hash).toBe(schemaHash());
  });
});

describe('precompiled built-in module validators', () => {
  /** Argument samples of a module: its documented examples' arguments, nothing, and wrong types. */
  const samplesOf = (mod: AnyModule): unknown[] => {
    const fromExamples = mod.examples.flatMap((ex) => {
      const tasks = YAML.parse(ex.yaml) as unknown;
      return (Array.isArray(tasks) ? tasks : [tasks]).map((t) => (t && typeof t === 'object' ? (t as Record<string, unknown>)[mod.name] : undefined)).filter((a) => a !== undefined);
    });
    return [...fromExamples, {}, null, 'text', { unknown_key: 1 }, { timeout: 'ten' }, { name: 3, namespace: true, state: 'nope' }];
  };

  it('validate, fill in defaults and coerce exactly as run-time compilation does', async () => {
    const reg = await loadRegistry({});
    const dir = genDir();
    let checked = 0;
    for (const { module: mod } of reg.list()) {
      const file = path.join(dir, `${mod.name}.mjs`);
      writeFileSync(file, moduleValidatorsSource(mod));
      const gen = (await import(pathToFileURL(file).href)) as Record<string, ValidateFunction | string>;
      expect(gen.hash, mod.name).toBe(moduleFingerprint(mod));
      for (const [name, v] of Object.entries(MODULE_VARIANTS)) {
        const built = gen[name];
        if (typeof built !== 'function') throw new Error(`${mod.name}: no ${name} validator`);
        const runtime = new Ajv(ajvOptions(variantOf(v.opts)));
        for (const k of DOC_KEYWORDS) runtime.addKeyword({ keyword: k });
        const compiled = runtime.compile(mod[v.schema]);
        for (const s of v.schema === 'result' ? [{}, { changed: 'no' }, null] : samplesOf(mod)) {
          const a = structuredClone(s);
          const b = structuredClone(s);
          expect(built(a), `${mod.name} ${name} ${JSON.stringify(s)}`).toBe(compiled(b));
          expect(built.errors ?? null).toStrictEqual(compiled.errors ?? null);
          expect(a, 'defaults and coercion applied alike').toStrictEqual(b);
          checked++;
        }
      }
    }
    rmSync(dir, { recursive: true, force: true });
    expect(checked).toBeGreaterThan(100);
  });
});
