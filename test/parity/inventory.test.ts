// kplay's loader vs real `ansible-inventory` (the venv test/bench/install.sh makes) on Ansible
// YAML inventories: every host's merged vars (`--list` _meta.hostvars), every group's direct hosts
// and children, and the `--graph` tree, for several inventories (ranges and ports, nesting and
// ungrouped, var precedence with group_vars/ and host_vars/ files and directories, also next to
// the playbook (--playbook-dir),
// ansible_group_priority, a directory of inventory files, repeated hosts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { graph } from '../../src/inventory/graph.js';
import { inventoryVars } from '../../src/inventory/host-vars.js';
import { loadInventory } from '../../src/inventory/resolve.js';

const VENV = process.env.KPLAY_BENCH_VENV ?? path.join(os.homedir(), '.cache/kplay-bench/venv');
const ANSIBLE_INVENTORY = path.join(VENV, 'bin/ansible-inventory');

const root = mkdtempSync(path.join(os.tmpdir(), 'kplay-inventory-parity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tree(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const ENV = { ...process.env, ANSIBLE_HOME: path.join(root, '.ansible'), ANSIBLE_LOCAL_TEMP: path.join(root, '.tmp'), ANSIBLE_NOCOLOR: '1' };
function ansibleInventory(ref: string, cwd: string, mode: '--list' | '--graph', playbookDir?: string): string {
  return execFileSync(ANSIBLE_INVENTORY, ['-i', ref, mode, ...(playbookDir ? ['--playbook-dir', playbookDir] : [])], { cwd, env: ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

interface AnsibleList {
  _meta: { hostvars: Record<string, Record<string, unknown>> };
  [group: string]: { hosts?: string[]; children?: string[] } | AnsibleList['_meta'];
}

const CASES: { name: string; ref: string; files: Record<string, string>; playbookDir?: string }[] = [
  {
    name: 'playbook-dir-vars',
    ref: 'inventories/prod',
    playbookDir: '.',
    files: {
      'inventories/prod/hosts.yml': 'all:\n  vars: {a: inline-all}\n  children:\n    web:\n      vars: {b: inline-web}\n      hosts: {w1: {h: inline-host}, w2: }\n',
      'inventories/prod/group_vars/all.yml': 'a: inv-file-all\nc: inv-file-all\nd: inv-file-all\n',
      'inventories/prod/group_vars/web.yml': 'e: inv-file-web\nf: inv-file-web\n',
      'group_vars/all.yml': 'c: pb-file-all\nb: pb-file-all\ne: pb-file-all\n',
      'group_vars/web/main.yml': 'f: pb-file-web\n',
      'group_vars/not-here.yml': 'x: 1\n',
      'host_vars/w1.yml': 'h: pb-host\n',
    },
  },
  {
    name: 'ranges-and-nesting',
    ref: 'hosts.yml',
    files: {
      'hosts.yml': `all:
  hosts:
    zed:
    alpha: {ansible_host: 10.0.0.1}
  children:
    web:
      hosts:
        w2:
        w1: {x: 1}
      children:
        canary:
          hosts: {w2: }
    db:
      hosts:
        "d[1:2]:5432":
        "db-[a:b]":
    aaa:
`,
    },
  },
  {
    name: 'precedence',
    ref: 'inventory/hosts.yml',
    files: {
      'inventory/hosts.yml': `all:
  vars: {v_all: inline-all, v_file: inline-all, shared: all, nested: {a: 1, b: 2}}
  children:
    prod:
      vars: {shared: prod, v_prod: inline-prod, v_file: inline-prod}
      children:
        eu:
          vars: {shared: eu, nested: {a: 10}}
          hosts:
            prod-eu-1: {shared: host, v_host: inline-host}
            prod-eu-2:
        zz:
          vars: {same: zz}
          hosts: {prod-eu-1: }
        aa:
          vars: {same: aa, ansible_group_priority: 5}
          hosts: {prod-eu-1: }
    staging:
      vars: {shared: staging}
      hosts:
        prod-eu-2:
        stg-1: {shared: stg-host}
`,
      'inventory/group_vars/all/main.yml': 'v_file: file-all\nfrom_all_dir: yes\n',
      'inventory/group_vars/all/zz-last.yaml': 'from_all_dir: last\n',
      'inventory/group_vars/prod.yml': 'v_prod: file-prod\n',
      'inventory/group_vars/eu': 'eu_file: 1\n',
      'inventory/host_vars/prod-eu-1.yml': 'v_host: file-host\n',
      'inventory/host_vars/stg-1.json': '{"port": 8080}',
    },
  },
  {
    name: 'directory',
    ref: 'inv',
    files: {
      'inv/01-web.yml': 'web:\n  hosts:\n    w1:\n  vars: {role: web}\n',
      'inv/02-more.yaml': 'all:\n  children:\n    web:\n      hosts: {w2: {role: special}}\n    db:\n      hosts: {d1: , w1: }\n',
      'inv/README.md': '# not an inventory\n',
      'inv/group_vars/db.yml': 'port: 5432\n',
    },
  },
  {
    name: 'repeated-hosts',
    ref: 'hosts.yaml',
    files: {
      'hosts.yaml': `all:
  children:
    a:
      hosts:
        h1: {x: 1, y: 1}
    b:
      hosts:
        h1: {x: 2}
        h2:
      children: c
    c:
      hosts: h3
`,
    },
  },
  {
    name: 'explicit-ungrouped',
    ref: 'hosts.yml',
    files: { 'hosts.yml': 'ungrouped:\n  hosts: {u1: , u2: }\n  vars: {only: ungrouped}\nweb:\n  hosts: {u2: , w1: }\n' },
  },
  {
    name: 'ini',
    ref: 'inventory/hosts',
    files: {
      'inventory/hosts': `# an INI inventory (no extension, as in most ops repos)
solo ansible_host=10.0.0.9
[web]
web[01:03].example.com http_port=80 tls=True
web-special ansible_port=2222 motd="hello world" tags='["a", "b"]' ratio=1.5 flag=true # a comment
bastion:2200

[web:vars]
tier=front
quoted="x y"
nums=[1, 2]

[db]
db1

[prod:children]
web
db

[prod:vars]
env=prod
tier=prod
[all:vars]
team=platform

[empty]
`,
      'inventory/group_vars/web.yml': 'from_file: web\n',
    },
  },
  {
    name: 'ini-dir-mixed-with-yaml',
    ref: 'inv',
    files: {
      'inv/hosts.ini': '[web]\nw1\n[web:vars]\nrole=web\n',
      'inv/more.yml': 'all:\n  children:\n    db:\n      hosts: {d1: {port: 5432}}\n    web:\n      hosts: {w2: }\n',
    },
  },
];

describe('inventories: kplay vs ansible-inventory', () => {
  it('the venv is installed', () => {
    expect(existsSync(ANSIBLE_INVENTORY), `${ANSIBLE_INVENTORY} missing: run bash test/bench/install.sh`).toBe(true);
  });

  for (const c of CASES) {
    it(`${c.name}: host vars, groups and the graph are ansible-inventory's`, async () => {
      const dir = tree(c.name, c.files);
      const pbDir = c.playbookDir === undefined ? undefined : path.join(dir, c.playbookDir);
      const list = JSON.parse(ansibleInventory(c.ref, dir, '--list', pbDir)) as AnsibleList;
      const inv = await loadInventory(c.ref, { cwd: dir, env: { HOME: path.join(root, 'home') }, playbookDir: pbDir });

      const hosts = new Set<string>();
      for (const [g, v] of Object.entries(list)) if (g !== '_meta') for (const h of (v as { hosts?: string[] }).hosts ?? []) hosts.add(h);
      expect([...inv.clusters.keys()].sort()).toEqual([...hosts].sort());
      for (const h of hosts) expect({ host: h, vars: inventoryVars(inv, h) }).toEqual({ host: h, vars: list._meta.hostvars[h] ?? {} });

      for (const [name, g] of inv.groups) {
        const theirs = (list[name] ?? {}) as { hosts?: string[]; children?: string[] };
        expect({ group: name, children: g.children }).toEqual({ group: name, children: theirs.children ?? [] });
        if (name !== 'all') expect({ group: name, hosts: g.clusters }).toEqual({ group: name, hosts: theirs.hosts ?? [] });
      }
      expect(Object.keys(list).filter((k) => k !== '_meta').every((g) => inv.groups.has(g))).toBe(true);

      expect(`${graph(inv)}\n`).toBe(ansibleInventory(c.ref, dir, '--graph', pbDir));
    });
  }
});
