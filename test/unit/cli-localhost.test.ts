// CLI: Ansible inventories and `hosts: localhost`, with and without -i, on a machine with no
// kubeconfig at all (a debug/set_fact play never contacts a cluster). Spawns the built kplay.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay } from '../helpers/cli.js';

const root = mkdtempSync(path.join(tmpdir(), 'kplay-cli-localhost-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const write = (rel: string, text: string): string => {
  const p = path.join(root, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, text);
  return p;
};

// No kubeconfig anywhere: HOME is empty, KUBECONFIG points nowhere.
const ENV = { HOME: path.join(root, 'home'), KUBECONFIG: path.join(root, 'home/no-such-kubeconfig'), K8S_AUTH_KUBECONFIG: undefined, K8S_AUTH_CONTEXT: undefined, KPLAY_RECORD_DIR: undefined, XDG_CACHE_HOME: path.join(root, 'cache') };
const opts = { cwd: root, env: ENV };

const pb = write(
  'site.yml',
  `- name: on localhost
  hosts: localhost
  tasks:
    - set_fact:
        greeting: "hello from {{ inventory_hostname }} over {{ ansible_connection }}"
    - debug:
        msg: "{{ greeting }}; groups={{ group_names | length }}; team={{ team | default('none') }}"
`,
);
const inv = write(
  'inventory/hosts.yml',
  `all:
  vars:
    team: platform
  children:
    web:
      hosts:
        web1:
        web2: {ansible_host: 10.0.0.2, http_port: 8080}
`,
);
write('inventory/group_vars/web.yml', 'tier: front\n');
write('inventory/host_vars/web1.yml', 'http_port: 80\n');

const debugMsgs = (stdout: string): string[] => jsonEvents(stdout).filter((e) => e.type === 'task_result' && e.module === 'debug').map((e) => String(e.msg));

describe('kplay run: hosts: localhost', () => {
  it('runs without -i on the implicit localhost, saying so once, with no kubeconfig', async () => {
    const r = await kplay(['run', pb, '-o', 'json'], opts);
    expect(r.stderr.match(/No inventory was parsed, only implicit localhost is available/g)).toHaveLength(1);
    expect(r.code).toBe(0);
    expect(debugMsgs(r.stdout)).toEqual(['hello from localhost over local; groups=0; team=none']);
    // nothing needed a cluster: no lock, no record in a cluster, no warning about either
    expect(r.stderr).not.toMatch(/lock|could not write/i);
    const records = readdirSync(path.join(root, '.kplay/runs'));
    expect(records.some((f) => f.endsWith('.journal'))).toBe(true);
  });

  it('runs with an Ansible inventory that has no localhost: it sees the all vars', async () => {
    const r = await kplay(['run', pb, '-i', inv, '-o', 'json'], opts);
    expect(r.stderr).not.toContain('No inventory was parsed');
    expect(r.code).toBe(0);
    expect(debugMsgs(r.stdout)).toEqual(['hello from localhost over local; groups=0; team=platform']);
  });

  it('hosts: all does not include the implicit localhost', async () => {
    const all = write('all.yml', '- hosts: all\n  tasks:\n    - debug: {msg: "{{ inventory_hostname }} {{ http_port }} {{ tier }}"}\n');
    const r = await kplay(['run', all, '-i', inv, '-o', 'json'], opts);
    expect(r.code).toBe(0);
    expect(debugMsgs(r.stdout).sort()).toEqual(['web1 80 front', 'web2 8080 front']);
  });

  it('a task that needs the cluster fails clearly when there is no kubeconfig', async () => {
    const k8s = write('k8s.yml', '- hosts: localhost\n  tasks:\n    - k8s_info: {kind: Namespace, api_version: v1}\n');
    const r = await kplay(['run', k8s, '--no-lock'], opts);
    expect(r.code).toBe(4);
    expect(r.stdout).toContain('localhost');
    expect(r.stdout).toContain(ENV.KUBECONFIG);
  });
});

describe('kplay validate / inventory with Ansible inventories', () => {
  it('validate accepts an Ansible inventory and hosts: localhost', async () => {
    const r = await kplay(['validate', pb, '-i', inv], opts);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`inventory ${inv} (2 clusters + the implicit localhost)`);
  });

  it('inventory --graph and --list show hosts, groups and resolved vars', async () => {
    const g = await kplay(['inventory', '-i', inv, '--graph'], opts);
    expect(g.code).toBe(0);
    expect(g.stdout).toBe(['@all:', '  |--@ungrouped:', '  |--@web:', '  |  |--web1', '  |  |--web2', ''].join('\n'));
    const l = await kplay(['inventory', '-i', inv, '--list'], opts);
    expect(l.code).toBe(0);
    const list = JSON.parse(l.stdout) as { clusters: Record<string, { context: string; vars: Record<string, unknown>; groups: string[] }> };
    expect(list.clusters.web1).toEqual({ context: '', kubeconfig: ENV.KUBECONFIG, groups: ['all', 'web'], vars: { team: 'platform', tier: 'front', http_port: 80 } });
    expect(Object.keys(list.clusters)).toEqual(['web1', 'web2']);
  });

  it('inventory with no -i: the empty inventory and the warning, as ansible-inventory', async () => {
    const g = await kplay(['inventory', '--graph'], opts);
    expect(g.code).toBe(0);
    expect(g.stderr).toContain('No inventory was parsed, only implicit localhost is available');
    expect(g.stdout).toBe('@all:\n  |--@ungrouped:\n');
  });

  it('the --forks default shown is the engine default', async () => {
    const r = await kplay(['run', '--help'], opts);
    expect(r.stdout).toMatch(/clusters worked on in parallel \(default: "10"\)/);
    expect(existsSync(pb)).toBe(true);
  });
});
