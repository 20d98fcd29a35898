// Ansible's play and task keywords as the loader reads them (src/playbook/keywords.ts, parse.ts, tasks.ts, nodes/):
// accepted keywords, YAML 1.1 booleans, templated values, and errors that name the key, its
// file:line:col and the nearest known key.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { parseKv, yaml11Bool } from '../../src/playbook/keywords.js';
import { loadPlaybook } from '../../src/playbook/parse.js';
import type { ModuleTask, Playbook, TaskNode } from '../../src/playbook/types.js';
import { dateTimeFact, gatherFacts } from '../../src/executor/facts.js';
import { loadRegistry, type ModuleRegistry } from '../../src/plugins/registry.js';

describe('yaml11Bool', () => {
  it('reads PyYAML\'s boolean spellings and nothing else', () => {
    for (const t of ['yes', 'Yes', 'YES', 'on', 'On', 'true', 'True', true]) expect(yaml11Bool(t)).toBe(true);
    for (const f of ['no', 'No', 'NO', 'off', 'OFF', 'false', 'False', false]) expect(yaml11Bool(f)).toBe(false);
    for (const x of ['y', 'n', '1', 'yES', '{{ x }}', 1, null]) expect(yaml11Bool(x)).toBeUndefined();
  });
});

describe('parseKv', () => {
  it('splits key=value pairs, keeping quotes and templates whole', () => {
    expect(parseKv('msg="hello world" var=x')).toEqual({ kv: { msg: 'hello world', var: 'x' }, rest: '' });
    expect(parseKv('msg={{ a ~ " b" }} other')).toEqual({ kv: { msg: '{{ a ~ " b" }}' }, rest: 'other' });
  });
  it('reads key=value as ansible-core 2.19 parse_kv does (values printed by it)', () => {
    // each expectation is what ansible.parsing.splitter.parse_kv returns for the string
    const cases: [string, Record<string, string>][] = [
      [`a=b c="{{ v }} x" d='q r'`, { a: 'b', c: '{{ v }} x', d: 'q r' }],
      ['{{ k }}={{ v }}', { '{{ k }}': '{{ v }}' }],
      ['msg="a=b"', { msg: 'a=b' }],
      ['x\\=y=1', { 'x\\=y': '1' }],
      ['a="1\\n2"', { a: '1\n2' }],
      ['a=b  c = d', { a: 'b', _raw_params: 'c = d' }],
      ['inc.yml', { _raw_params: 'inc.yml' }],
      [`k="{{ a | default('x y') }}"`, { k: "{{ a | default('x y') }}" }],
      ['a= b', { a: '', _raw_params: 'b' }],
      ['=x', { _raw_params: '=x' }],
      [`a='it''s'`, { a: "it''s" }],
      ['a="x\\"y"', { a: 'x"y' }],
    ];
    for (const [s, want] of cases) {
      const { kv, rest } = parseKv(s);
      expect(rest === '' ? kv : { ...kv, _raw_params: rest }, s).toEqual(want);
    }
  });
  it('takes only the keys asked for; the rest stays as written', () => {
    expect(parseKv('echo a=b chdir=/tmp', (k) => k === 'chdir')).toEqual({ kv: { chdir: '/tmp' }, rest: 'echo a=b' });
  });
});

describe('facts', () => {
  it('date_time has ansible-core\'s keys, all strings', () => {
    const d = dateTimeFact(new Date('2026-11-26T12:29:41.466Z'));
    expect(Object.keys(d).sort()).toEqual(['date', 'day', 'epoch', 'epoch_int', 'hour', 'iso8601', 'iso8601_basic', 'iso8601_basic_short', 'iso8601_micro', 'minute', 'month', 'second', 'time', 'tz', 'tz_dst', 'tz_offset', 'weekday', 'weekday_number', 'weeknumber', 'year']);
    expect(d.iso8601).toBe('2026-11-26T12:29:41Z');
    expect(d.iso8601_micro).toBe('2026-11-26T12:29:41.466000Z');
    expect(d.epoch).toBe('1795696181');
    for (const v of Object.values(d)) expect(typeof v).toBe('string');
  });
  it('are injected as ansible_facts.X and ansible_X', () => {
    const { vars } = gatherFacts();
    expect((vars.ansible_facts as Record<string, unknown>).hostname).toBe(vars.ansible_hostname);
    expect(vars.ansible_env).toMatchObject({ PATH: process.env.PATH });
  });
});

describe('keywords in playbooks', () => {
  let dir: string;
  let registry: ModuleRegistry;
  let n = 0;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-keywords-'));
    registry = await loadRegistry();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (yaml: string): string => {
    const f = path.join(dir, `pb${n++}.yml`);
    writeFileSync(f, yaml);
    return f;
  };
  const load = (yaml: string): Promise<Playbook> => loadPlaybook(file(yaml), { registry });
  const error = async (yaml: string): Promise<InputError> => {
    const f = file(yaml);
    try {
      await loadPlaybook(f, { registry });
    } catch (e) {
      if (e instanceof InputError) return e;
      throw e;
    }
    throw new Error('expected an InputError');
  };
  it("an invalid `register` is refused when the playbook loads, in ansible-core's words (Task._validate_register)", async () => {
    const e = await error('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      register: 200\n');
    expect(e.message).toBe("Invalid 'register' specified: Invalid variable name '200' of type 'int'.");
    expect(e.pos?.line).toBe(4);
    expect((await error('- hosts: all\n  tasks:\n    - include_tasks: x.yml\n      register: a-b\n')).message).toBe("Invalid 'register' specified: Invalid variable name 'a-b'.");
  });
  const firstTask = (pb: Playbook): ModuleTask => {
    const t = pb.plays[0]?.tasks[0] as TaskNode;
    if (t.kind !== 'task') throw new Error(`not a module task: ${t.kind}`);
    return t;
  };

  it('accepts the play keywords Ansible playbooks carry (gather_facts: no, become, connection, collections, …)', async () => {
    const pb = await load([
      '- name: p',
      '  hosts: localhost',
      '  gather_facts: no',
      '  connection: local',
      '  become: yes',
      '  become_user: root',
      '  collections: [kubernetes.core]',
      '  strategy: free',
      '  order: sorted',
      '  force_handlers: true',
      '  remote_user: x',
      '  port: 22',
      '  environment: { A: "1" }',
      '  module_defaults: { group/k8s: { namespace: x } }',
      '  vars_prompt:',
      '    - { name: who, prompt: "Who?", default: world, private: no }',
      '  tasks:',
      '    - debug: { msg: "{{ who }}" }',
      '',
    ].join('\n'));
    const play = pb.plays[0];
    expect(play?.gatherFacts).toBe(false);
    expect(play?.order).toBe('sorted');
    expect(play?.vars.who).toBe('world');
    expect(play?.noEffect).toEqual(expect.arrayContaining(['become', 'connection', 'strategy']));
    const t = firstTask(pb);
    expect(t.environment).toEqual([{ A: '1' }]);
    expect(t.moduleDefaults).toEqual([{ 'group/k8s': { namespace: 'x' } }]);
  });

  it('an unknown play key is reported as that, at its file:line:col, with the nearest key', async () => {
    const e = await error('- hosts: all\n  gather_fact: no\n  tasks: []\n');
    expect(e.message).toBe("play: unknown key 'gather_fact'");
    expect(e.pos).toMatchObject({ line: 2, col: 3 });
    expect(e.hint).toBe("did you mean 'gather_facts'?");
  });

  it('a task keyword put on a play says so', async () => {
    const e = await error('- hosts: all\n  register: x\n');
    expect(e.message).toMatch(/play: unknown key 'register' \(a task keyword/);
  });

  it('a play without hosts says that, not "missing import_playbook"', async () => {
    const e = await error('- name: x\n  tasks: []\n');
    expect(e.message).toBe("play: missing required key 'hosts'");
  });

  it('a misspelt block key names the nearest one', async () => {
    const e = await error('- hosts: all\n  tasks:\n    - block: []\n      resuce: []\n');
    expect(e.message).toBe("block: unknown key 'resuce'");
    expect(e.hint).toBe("did you mean 'rescue'?");
    expect(e.pos).toMatchObject({ line: 4, col: 7 });
  });

  it('block keywords are inherited by the tasks inside (no_log, check_mode, environment, module_defaults)', async () => {
    const pb = await load([
      '- hosts: all',
      '  environment: { A: "1" }',
      '  tasks:',
      '    - block:',
      '        - debug: { msg: x }',
      '          environment: { B: "2" }',
      '      no_log: on',
      '      check_mode: "{{ dry }}"',
      '      module_defaults: { debug: { verbosity: 0 } }',
      '',
    ].join('\n'));
    const block = pb.plays[0]?.tasks[0];
    if (block?.kind !== 'block') throw new Error('expected a block');
    const t = block.block[0] as ModuleTask;
    expect(t.noLog).toBe(true);
    expect(t.checkMode).toBe('{{ dry }}');
    expect(t.environment).toEqual([{ A: '1' }, { B: '2' }]);
    expect(t.moduleDefaults).toEqual([{ debug: { verbosity: 0 } }]);
  });

  it('no_log and ignore_errors may be templates; a non-boolean non-template is an error at the key', async () => {
    const t = firstTask(await load('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      no_log: "{{ hide }}"\n      ignore_errors: "{{ lenient }}"\n'));
    expect(t.noLog).toBe('{{ hide }}');
    expect(t.ignoreErrors).toBe('{{ lenient }}');
    const e = await error('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      no_log: maybe\n');
    expect(e.message).toMatch(/no_log: expected a boolean/);
    expect(e.pos).toMatchObject({ line: 4, col: 7 });
  });

  it('with_<lookup> is a loop through that lookup; an unknown lookup names the nearest', async () => {
    const t = firstTask(await load('- hosts: all\n  tasks:\n    - debug: { msg: "{{ item }}" }\n      with_items: [[1, 2], 3]\n'));
    expect(t.loop).toEqual([[1, 2], 3]);
    expect(t.loopLookup).toBe('items');
    const e = await error('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      with_itemz: [1]\n');
    expect(e.message).toMatch(/with_itemz: there is no lookup 'itemz'/);
    expect(e.hint).toMatch(/with_items/);
    const both = await error('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      loop: [1]\n      with_items: [1]\n');
    expect(both.message).toMatch(/both `loop` and `with_items`/);
  });

  it('retries without until is accepted (ansible-core retries a failed result), and may be templated', async () => {
    const t = firstTask(await load('- hosts: all\n  tasks:\n    - command: "true"\n      retries: "{{ n }}"\n      delay: 0\n'));
    expect(t.retries).toBe('{{ n }}');
    expect(t.until).toBeUndefined();
  });

  it('delegate_to localhost is accepted; another host is refused clearly', async () => {
    await load('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      delegate_to: localhost\n      run_once: yes\n');
    const e = await error('- hosts: all\n  tasks:\n    - debug: { msg: x }\n      delegate_to: db1\n');
    expect(e.message).toMatch(/delegate_to: 'db1' is not supported/);
    expect(e.pos).toMatchObject({ line: 4, col: 7 });
  });

  it('debugger and strategy: debug are refused', async () => {
    expect((await error('- hosts: all\n  debugger: on_failed\n  tasks: []\n')).message).toMatch(/debugger is not supported/);
    expect((await error('- hosts: all\n  strategy: debug\n  tasks: []\n')).message).toMatch(/strategy: 'debug'/);
  });

  it('module_defaults naming an unknown module is an error; another collection\'s group is accepted', async () => {
    const e = await error('- hosts: all\n  module_defaults: { debgu: { msg: x } }\n  tasks: []\n');
    expect(e.message).toMatch(/module_defaults: unknown module 'debgu'/);
    await load('- hosts: all\n  module_defaults: { group/amazon.aws.aws: { region: x }, ansible.builtin.apt: { update_cache: true } }\n  tasks: []\n');
  });

  it('module_defaults fill required arguments the task leaves out', async () => {
    // fail needs nothing; assert needs `that`: given by module_defaults, the task loads
    const t = firstTask(await load('- hosts: all\n  module_defaults: { ansible.builtin.assert: { that: [true] } }\n  tasks:\n    - assert: {}\n'));
    expect(t.module).toBe('assert');
  });

  it('key=value free-form arguments become arguments', async () => {
    const t = firstTask(await load('- hosts: all\n  tasks:\n    - debug: msg="hello world"\n'));
    expect(t.args).toEqual({ msg: 'hello world' });
    const c = firstTask(await load('- hosts: all\n  tasks:\n    - command: ls -l chdir=/tmp\n'));
    expect(c.args).toMatchObject({ chdir: '/tmp' });
  });

  it('vars_prompt encrypt is refused', async () => {
    const e = await error('- hosts: all\n  vars_prompt:\n    - { name: pw, prompt: "pw?", encrypt: sha512_crypt }\n  tasks: []\n');
    expect(e.message).toMatch(/encrypt/);
  });
});

describe('Ansible boolean spellings in module arguments', () => {
  it('turn into booleans where the schema declares a boolean (nested too), nowhere else', async () => {
    const { ansibleBooleans } = await import('../../src/playbook/booleans.js');
    const schema = {
      type: 'object',
      properties: {
        wait: { type: 'boolean' },
        name: { type: 'string' },
        either: { anyOf: [{ type: 'boolean' }, { type: 'string' }] },
        opts: { type: 'object', properties: { force: { type: 'boolean' } } },
        list: { type: 'array', items: { type: 'object', properties: { on: { type: 'boolean' } } } },
      },
    };
    expect(ansibleBooleans(schema, { wait: 'yes', name: 'no', either: 'no', opts: { force: 'Off' }, list: [{ on: 'y' }, { on: 'maybe' }] })).toEqual({ wait: true, name: 'no', either: 'no', opts: { force: false }, list: [{ on: true }, { on: 'maybe' }] });
    const same = { wait: true };
    expect(ansibleBooleans(schema, same)).toBe(same);
  });
});

describe('loop variables', () => {
  it('extended: ansible_loop as Ansible sets it', async () => {
    const { loopVars } = await import('../../src/executor/loops.js');
    const v = loopVars({ loopVar: 'x', indexVar: 'i', extended: true }, ['a', 'b', 'c'], 1);
    expect(v).toMatchObject({ x: 'b', i: 1, ansible_loop_var: 'x', ansible_index_var: 'i' });
    expect(v.ansible_loop).toEqual({ allitems: ['a', 'b', 'c'], index: 2, index0: 1, revindex: 2, revindex0: 1, first: false, last: false, length: 3, previtem: 'a', nextitem: 'c' });
    expect(loopVars({ loopVar: 'item' }, ['a'], 0).ansible_loop).toBeUndefined();
  });
});

describe('role entries', () => {
  it('keywords of a `roles:` entry pass on to the role\'s tasks; other keys are parameters', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-role-kw-'));
    try {
      const { mkdirSync } = await import('node:fs');
      mkdirSync(path.join(dir, 'roles/r/tasks'), { recursive: true });
      writeFileSync(path.join(dir, 'roles/r/tasks/main.yml'), '- debug: { msg: "{{ http_port }}" }\n');
      writeFileSync(path.join(dir, 'pb.yml'), '- hosts: all\n  roles:\n    - { role: r, http_port: 80, become: yes, no_log: on, environment: { A: "1" } }\n');
      const pb = await loadPlaybook(path.join(dir, 'pb.yml'), { registry: await loadRegistry() });
      const block = pb.plays[0]?.tasks[0];
      if (block?.kind !== 'block') throw new Error('expected the role\'s block');
      expect(block.role?.params).toEqual({ http_port: 80 }); // `port` would be the keyword, as in Ansible
      const t = block.block[0] as ModuleTask;
      expect(t.noLog).toBe(true);
      expect(t.environment).toEqual([{ A: '1' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with_X with no value is an error at the key, as in Ansible; a keyword with no value is unset', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-null-kw-'));
    try {
      writeFileSync(path.join(dir, 'a.yml'), '- hosts: all\n  tasks:\n    - debug: { msg: x }\n      with_items:\n');
      await expect(loadPlaybook(path.join(dir, 'a.yml'), { registry: await loadRegistry() })).rejects.toThrow(/you must specify a value when using with_items/);
      writeFileSync(path.join(dir, 'b.yml'), '- hosts: all\n  gather_facts:\n  environment:\n  become:\n  tasks:\n    - debug: { msg: x }\n      no_log:\n      environment:\n      check_mode:\n');
      const pb = await loadPlaybook(path.join(dir, 'b.yml'), { registry: await loadRegistry() });
      const t = pb.plays[0]?.tasks[0] as ModuleTask;
      expect(pb.plays[0]?.gatherFacts).toBe(false);
      expect(t.noLog).toBeUndefined();
      expect(t.environment).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('connection', () => {
  it('kubernetes.core.kubectl (tasks inside containers) is refused at the key; local is accepted', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-conn-'));
    try {
      const registry = await loadRegistry();
      writeFileSync(path.join(dir, 'a.yml'), '- hosts: all\n  connection: kubernetes.core.kubectl\n  tasks: []\n');
      const e = await loadPlaybook(path.join(dir, 'a.yml'), { registry }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).message).toMatch(/connection: 'kubernetes\.core\.kubectl' is not supported by kplay: .*running containers/);
      expect((e as InputError).pos).toMatchObject({ line: 2, col: 3 });
      writeFileSync(path.join(dir, 'b.yml'), '- hosts: all\n  connection: local\n  tasks:\n    - debug: { msg: x }\n      connection: local\n');
      await loadPlaybook(path.join(dir, 'b.yml'), { registry });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
