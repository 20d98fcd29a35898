// A run imports only the built-in modules its playbook uses: the build writes an index of the
// bundled modules (dist/modules/_index.json) and the registry registers them by name from it.
// Checked on the build `npm test` makes, and on index files that must not be trusted.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type * as Registry from '../../src/plugins/registry.js';
import { kplay, repoRoot } from '../helpers/cli.js';

/** The registry of the build (its BUILTIN_DIR is dist/modules, where the index is). */
const built = async (): Promise<typeof Registry> => (await import(pathToFileURL(path.join(repoRoot, 'dist/src/plugins/registry.js')).href)) as typeof Registry;

let tmp: string | undefined;
afterEach(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe('built-in modules registered from the build index', () => {
  it('the build writes an index naming every built-in module file', () => {
    const index = JSON.parse(readFileSync(path.join(repoRoot, 'dist/modules/_index.json'), 'utf8')) as Record<string, string>;
    expect(index['k8s_apply.js']).toBe('k8s_apply');
    expect(index['debug.js']).toBe('debug');
    expect(Object.keys(index).length).toBeGreaterThan(30);
  });

  it('a lazy registry knows every module by name and imports one only when it is loaded', async () => {
    const { loadRegistry } = await built();
    const eager = await loadRegistry({});
    const lazy = await loadRegistry({ lazy: true });
    expect(lazy.names()).toEqual(eager.names());
    expect(lazy.has('k8s_apply')).toBe(true);
    expect(lazy.suggest('k8s_aply')).toContain('k8s_apply');
    const loadedNow = (): string[] => lazy.names().filter((n) => { try { return lazy.get(n) !== undefined; } catch { return false; } });
    expect(loadedNow()).toEqual([]);
    expect(() => lazy.get('debug')).toThrow(/module 'debug' was used before it was loaded/);
    const mod = await lazy.load('debug');
    expect(mod?.name).toBe('debug');
    expect(lazy.get('debug')).toBe(mod);
    expect(loadedNow()).toEqual(['debug']);
    expect(await lazy.load('no_such_module')).toBeUndefined();
    // a plan's inputs digest names every module with its file, loaded or not
    expect(lazy.sources().map((s) => s.name)).toEqual(eager.names());
    await lazy.loadAll();
    expect(lazy.list().map((m) => m.module.name)).toEqual(eager.list().map((m) => m.module.name));
  });

  it('an index is used only when it lists exactly the module files present, each with a name', async () => {
    const { builtinIndex } = await built();
    tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-index-'));
    const write = (v: unknown): void => writeFileSync(path.join(tmp ?? '', '_index.json'), typeof v === 'string' ? v : JSON.stringify(v));
    expect(await builtinIndex(tmp, ['a.js', 'b.js'])).toBeUndefined(); // none
    write({ 'a.js': 'a', 'b.js': 'b' });
    expect(await builtinIndex(tmp, ['a.js', 'b.js'])).toEqual({ 'a.js': 'a', 'b.js': 'b' });
    expect(await builtinIndex(tmp, ['a.js', 'b.js', 'c.js'])).toBeUndefined(); // a file it does not know
    expect(await builtinIndex(tmp, ['a.js'])).toBeUndefined(); // a file that is gone
    write({ 'a.js': 'a', 'b.js': 7 });
    expect(await builtinIndex(tmp, ['a.js', 'b.js'])).toBeUndefined();
    write('[1, 2]');
    expect(await builtinIndex(tmp, ['a.js', 'b.js'])).toBeUndefined();
    write('not json');
    expect(await builtinIndex(tmp, ['a.js', 'b.js'])).toBeUndefined();
  });

  it('a run, validate and drift through the lazy registry: module errors and suggestions as before', async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-lazy-'));
    const pb = path.join(tmp, 'pb.yml');
    writeFileSync(pb, '- hosts: localhost\n  gather_facts: false\n  tasks:\n    - debug: {msg: hello}\n    - ansible.builtin.set_fact: {x: 1}\n    - assert: {that: [x == 1]}\n');
    const run = await kplay(['run', pb]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('hello');
    const val = await kplay(['validate', pb]);
    expect(val.code, val.stdout + val.stderr).toBe(0);
    writeFileSync(pb, '- hosts: localhost\n  tasks:\n    - k8s_aply: {src: x.yaml}\n');
    const bad = await kplay(['validate', pb]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown module or keyword 'k8s_aply'.*\n?.*did you mean: k8s_apply/);
    writeFileSync(pb, '- hosts: localhost\n  tasks:\n    - debug: {msg: hi, nope: 1}\n');
    const args = await kplay(['validate', pb]);
    expect(args.code).not.toBe(0);
    expect(args.stderr).toContain('nope');
  });
});
