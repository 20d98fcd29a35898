// The playbook's static schemas compiled at build time (ajv standalone) must validate exactly
// as the run-time compilation does, and the build must actually use them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ValidateFunction } from 'ajv';
import { ajv } from '../../src/load/schema.js';
import { precompiledSource } from '../../src/playbook/precompile.js';
import { PRECOMPILED, schemaHash } from '../../src/playbook/validators.js';
import { repoRoot } from '../helpers/cli.js';

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
];

describe('precompiled playbook validators', () => {
  it('give the same verdicts and errors as ajv at run time', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-precompiled-'));
    const file = path.join(dir, 'validators.gen.mjs');
    writeFileSync(file, precompiledSource());
    const gen = (await import(pathToFileURL(file).href)) as Record<string, ValidateFunction>;
    expect(Object.keys(PRECOMPILED).length).toBeGreaterThan(0);
    for (const [name, schema] of Object.entries(PRECOMPILED)) {
      const compiled = ajv.compile(schema());
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
    const built = (await import(pathToFileURL(path.join(repoRoot, 'dist/src/playbook/validators.gen.js')).href)) as { hash: string };
    expect(built.hash).toBe(schemaHash());
    const { usePrecompiled } = (await import(pathToFileURL(path.join(repoRoot, 'dist/src/playbook/validators.js')).href)) as { usePrecompiled: () => Promise<boolean> };
    expect(await usePrecompiled()).toBe(true);
  });
});
