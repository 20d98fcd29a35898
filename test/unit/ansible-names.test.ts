// Module names as Ansible resolves them (src/playbook/names.ts) and what the loader does with them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { loadPlaybook } from '../../src/playbook/parse.js';
import { actionGroup, resolveAction } from '../../src/playbook/names.js';
import { moduleDefaultsFor } from '../../src/playbook/keywords.js';
import type { ModuleTask } from '../../src/playbook/types.js';
import { loadRegistry, type ModuleRegistry } from '../../src/plugins/registry.js';

const kplayHas = new Set(['debug', 'command', 'set_fact', 'k8s', 'k8s_info', 'include_tasks', 'meta']);
const known = (s: string): boolean => kplayHas.has(s);

describe('resolveAction', () => {
  it('short names kplay has resolve to themselves', () => {
    expect(resolveAction('debug', known)).toEqual({ kind: 'action', name: 'debug' });
  });
  it('ansible.builtin.X and ansible.legacy.X resolve to X for ansible-core modules and keyword actions', () => {
    expect(resolveAction('ansible.builtin.debug', known)).toEqual({ kind: 'action', name: 'debug', collection: 'ansible.builtin' });
    expect(resolveAction('ansible.legacy.command', known)).toEqual({ kind: 'action', name: 'command', collection: 'ansible.legacy' });
    expect(resolveAction('ansible.builtin.include_tasks', known)).toMatchObject({ kind: 'action', name: 'include_tasks' });
  });
  it('kubernetes.core.X and community.kubernetes.X resolve to X', () => {
    expect(resolveAction('kubernetes.core.k8s', known)).toMatchObject({ kind: 'action', name: 'k8s' });
    expect(resolveAction('community.kubernetes.k8s_info', known)).toMatchObject({ kind: 'action', name: 'k8s_info' });
  });
  it('a name of the wrong collection is not resolved (ansible.builtin has no k8s)', () => {
    expect(resolveAction('ansible.builtin.k8s', known)).toEqual({ kind: 'unknown' });
    expect(resolveAction('kubernetes.core.debug', known)).toEqual({ kind: 'unknown' });
  });
  it('a kubernetes.core module kplay lacks is named with the reason', () => {
    const r = resolveAction('kubernetes.core.k8s_cp', known);
    expect(r.kind).toBe('unsupported');
    if (r.kind === 'unsupported') expect(r.why).toMatch(/kubernetes\.core\.k8s_cp is not supported by kplay: .*running containers/);
    const auth = resolveAction('kubernetes.core.k8s_auth', known);
    if (auth.kind === 'unsupported') expect(auth.why).toMatch(/community\.okd/);
    expect(auth.kind).toBe('unsupported');
  });
  it('the short name of a real module kplay lacks is named too (not "unknown")', () => {
    const r = resolveAction('k8s_cp', known);
    expect(r.kind).toBe('unsupported');
    const apt = resolveAction('apt', known);
    expect(apt.kind).toBe('unsupported');
    if (apt.kind === 'unsupported') expect(apt.why).toMatch(/ansible\.builtin\.apt .*manages a host/);
  });
  it('another collection\'s module is unsupported, naming module and collection', () => {
    const r = resolveAction('operator_sdk.util.k8s_status', known);
    expect(r.kind).toBe('unsupported');
    if (r.kind === 'unsupported') expect(r.why).toMatch(/module 'k8s_status' of collection 'operator_sdk\.util'/);
    expect(resolveAction('community.general.json_patch', known).kind).toBe('unsupported');
  });
  it('a misspelt short name is unknown', () => {
    expect(resolveAction('debgu', known)).toEqual({ kind: 'unknown' });
  });
});

describe('action groups and module_defaults', () => {
  it('group/kubernetes.core.k8s and group/k8s are kubernetes.core\'s k8s group', () => {
    expect(actionGroup('group/kubernetes.core.k8s')).toContain('k8s_info');
    expect(actionGroup('group/k8s')).toEqual(actionGroup('group/kubernetes.core.k8s'));
    expect(actionGroup('group/kubernetes.core.helm')).toContain('helm');
    expect(actionGroup('group/amazon.aws.aws')).toBeUndefined();
  });
  it('maps merge key by key (inner wins), then groups apply, then the module\'s own entry', () => {
    const play = { 'group/k8s': { kubeconfig: 'a', context: 'x' }, k8s_info: { namespace: 'p' } };
    const task = { k8s_info: { namespace: 't' } };
    expect(moduleDefaultsFor([play, task], 'k8s_info')).toEqual([{ kubeconfig: 'a', context: 'x' }, { namespace: 't' }]);
    expect(moduleDefaultsFor([play], 'debug')).toBeUndefined();
    expect(moduleDefaultsFor([], 'k8s')).toBeUndefined();
  });
});

describe('the loader resolves names', () => {
  let dir: string;
  let registry: ModuleRegistry;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-names-'));
    registry = await loadRegistry();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const load = (name: string, yaml: string): Promise<unknown> => {
    const file = path.join(dir, name);
    writeFileSync(file, yaml);
    return loadPlaybook(file, { registry });
  };
  const error = async (name: string, yaml: string): Promise<InputError> => {
    try {
      await load(name, yaml);
    } catch (e) {
      if (e instanceof InputError) return e;
      throw e;
    }
    throw new Error('expected an InputError');
  };

  it('ansible.builtin.debug and action:/local_action: forms become the short module key', async () => {
    const pb = (await load('fqcn.yml', [
      '- hosts: all',
      '  gather_facts: no',
      '  tasks:',
      '    - ansible.builtin.debug: { msg: hi }',
      '    - action: debug msg=there',
      '    - local_action: { module: ansible.legacy.debug, msg: x }',
      '    - ansible.builtin.include_tasks: other.yml',
      '',
    ].join('\n')).catch((e: unknown) => e)) as unknown;
    // other.yml does not exist: the include was recognised as include_tasks (its file is checked)
    expect(String(pb)).toMatch(/other\.yml/);
    writeFileSync(path.join(dir, 'other.yml'), '- debug: { msg: inner }\n');
    const loaded = (await load('fqcn.yml', [
      '- hosts: all',
      '  gather_facts: no',
      '  tasks:',
      '    - ansible.builtin.debug: { msg: hi }',
      '    - action: debug msg=there',
      '    - local_action: { module: ansible.legacy.debug, msg: x }',
      '    - ansible.builtin.include_tasks: other.yml',
      '',
    ].join('\n'))) as { plays: { tasks: ModuleTask[] }[] };
    const tasks = loaded.plays[0]?.tasks ?? [];
    expect(tasks.map((t) => t.kind === 'task' ? [t.module, t.args] : [t.kind])).toEqual([
      ['debug', { msg: 'hi' }],
      ['debug', { msg: 'there' }],
      ['debug', { msg: 'x' }],
      ['include'],
    ]);
  });

  it('a kubernetes.core module kplay lacks fails at load with file:line:col and the reason', async () => {
    const e = await error('exec.yml', '- hosts: all\n  tasks:\n    - name: copy into a pod\n      kubernetes.core.k8s_cp: { namespace: x, pod: y, remote_path: /tmp/a, content: b }\n');
    expect(e.message).toMatch(/kubernetes\.core\.k8s_cp is not supported by kplay/);
    expect(e.pos).toMatchObject({ file: path.join(dir, 'exec.yml'), line: 4, col: 7 });
  });

  it('another collection\'s module names the collection', async () => {
    const e = await error('other.yml.yml', '- hosts: all\n  tasks:\n    - operator_sdk.util.k8s_status: { name: x }\n');
    expect(e.message).toMatch(/collection 'operator_sdk\.util'/);
    expect(e.pos).toMatchObject({ line: 3, col: 7 });
  });

  it('an unknown short module still suggests the nearest name', async () => {
    const e = await error('typo.yml', '- hosts: all\n  tasks:\n    - debgu: { msg: x }\n');
    expect(e.message).toMatch(/unknown module or keyword 'debgu'/);
    expect(e.hint).toMatch(/debug/);
    expect(e.pos).toMatchObject({ line: 3, col: 7 });
  });
});
