import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { setDuplicateKeyMode } from '../../src/load/yaml.js';
import { graph } from '../../src/inventory/graph.js';
import { groupMembers, groupsMap, groupVarLayers, inventoryVars } from '../../src/inventory/host-vars.js';
import { loadInventory } from '../../src/inventory/resolve.js';
import { matchClusters } from '../../src/inventory/patterns.js';
import { inventorySchema } from '../../src/inventory/schema.js';
import type { Inventory } from '../../src/inventory/types.js';

const FIX = fileURLToPath(new URL('../fixtures/inventory/', import.meta.url));
const HOME = '/home/tester';
const ENV: NodeJS.ProcessEnv = { HOME };
const fx = (name: string): string => path.join(FIX, name);
const load = (name: string, env: NodeJS.ProcessEnv = ENV): Promise<Inventory> => loadInventory(name, { cwd: FIX, env });

async function inputError(p: Promise<unknown> | (() => unknown)): Promise<InputError> {
  try {
    if (typeof p === 'function') p();
    else await p;
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError, got success');
}

describe('loadInventory: the issue example', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await load('example.yml');
  });

  it('records source, dir and clusters in file order', () => {
    expect(inv.source).toBe(fx('example.yml'));
    expect(inv.dir).toBe(FIX.replace(/\/$/, ''));
    expect([...inv.clusters.keys()]).toEqual(['prod-eu-1', 'prod-eu-2']);
  });

  it('builds clusters with context, kubeconfig (~ expanded) and vars', () => {
    expect(inv.clusters.get('prod-eu-1')).toEqual({
      name: 'prod-eu-1',
      context: 'prod-eu-1',
      kubeconfig: '/home/tester/.kube/prod.yaml',
      vars: { weight: 50 },
      groups: ['all', 'prod', 'eu'],
    });
    expect(inv.clusters.get('prod-eu-2')?.kubeconfig).toBe('/home/tester/.kube/config');
  });

  it('builds the group graph with depths, parents and direct clusters', () => {
    expect([...inv.groups.keys()]).toEqual(['all', 'ungrouped', 'prod', 'eu']);
    expect(inv.groups.get('all')).toMatchObject({ depth: 0, parents: [], children: ['ungrouped', 'prod'], vars: { team: 'platform' } });
    expect(inv.groups.get('prod')).toMatchObject({ depth: 1, parents: ['all'], children: ['eu'], clusters: [] });
    expect(inv.groups.get('eu')).toMatchObject({ depth: 2, parents: ['prod'], clusters: ['prod-eu-1', 'prod-eu-2'], vars: { region: 'eu-west-1' } });
    expect(inv.groups.get('ungrouped')).toMatchObject({ depth: 1, clusters: [] });
  });

  it('merges inventory vars', () => {
    expect(inventoryVars(inv, 'prod-eu-1')).toEqual({ team: 'platform', replicas: 3, region: 'eu-west-1', weight: 50 });
    expect(inventoryVars(inv, 'prod-eu-2')).toEqual({ team: 'platform', replicas: 3, region: 'eu-west-1' });
    // inline vars of every group (all, then by depth), then the group_vars files of all (inventory, playbook),
    // then of the other groups (inventory, then playbook) — none here — as ansible-core
    expect(groupVarLayers(inv, 'prod-eu-2')).toEqual([{ team: 'platform' }, { replicas: 3 }, { region: 'eu-west-1' }, {}, {}, {}, {}, {}, {}]);
  });

  it('groupsMap lists every group transitively, including all and ungrouped', () => {
    expect(groupsMap(inv)).toEqual({
      all: ['prod-eu-1', 'prod-eu-2'],
      ungrouped: [],
      prod: ['prod-eu-1', 'prod-eu-2'],
      eu: ['prod-eu-1', 'prod-eu-2'],
    });
  });

  it('an unknown cluster in groupVarLayers is an error with a suggestion', async () => {
    const e = await inputError(() => groupVarLayers(inv, 'prod-eu-3'));
    expect(e.message).toContain("unknown cluster 'prod-eu-3'");
    expect(e.hint).toContain("did you mean 'prod-eu-1' or 'prod-eu-2'?");
  });

  it('renders an ansible-inventory --graph like tree', () => {
    expect(graph(inv)).toBe(['@all:', '  |--@ungrouped:', '  |--@prod:', '  |  |--@eu:', '  |  |  |--prod-eu-1', '  |  |  |--prod-eu-2'].join('\n'));
  });
});

describe('loadInventory: clusters in several groups', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await load('multi.yml');
  });

  it('keeps file order of first appearance', () => {
    expect([...inv.clusters.keys()]).toEqual(['lab-1', 'prod-us-1', 'prod-eu-1', 'prod-eu-2', 'stg-eu-1', 'stg-us-1']);
  });

  it('merges memberships and accepts equal repeated definitions', () => {
    const c = inv.clusters.get('prod-eu-1');
    expect(c?.groups).toEqual(['all', 'canary', 'prod', 'eu']);
    expect(c?.context).toBe('ctx-eu-1');
    expect(c?.kubeconfig).toBe(path.join(FIX, 'kube/prod.yaml')); // relative to the inventory's directory
    expect(inv.clusters.get('prod-us-1')?.groups).toEqual(['all', 'prod', 'us']); // under all AND us: not ungrouped
    expect(inv.clusters.get('prod-us-1')?.context).toBe('ctx-us-1'); // the entry with keys wins over the empty one
  });

  it('puts clusters that are in no child group into ungrouped', () => {
    expect(inv.clusters.get('lab-1')?.groups).toEqual(['all', 'ungrouped']);
    expect(inv.groups.get('ungrouped')?.clusters).toEqual(['lab-1']);
    expect(groupsMap(inv).ungrouped).toEqual(['lab-1']);
    expect(groupsMap(inv).empty).toEqual([]);
    expect(groupMembers(inv, 'prod')).toEqual(['prod-eu-1', 'prod-eu-2', 'prod-us-1']); // ansible-core's order: child groups eu, then us
  });

  it('graph shows ungrouped clusters and groups under several parents', () => {
    expect(graph(inv)).toBe(
      [
        '@all:',
        '  |--@ungrouped:',
        '  |  |--lab-1',
        '  |--@prod:',
        '  |  |--@eu:',
        '  |  |  |--prod-eu-1',
        '  |  |  |--prod-eu-2',
        '  |  |--@us:',
        '  |  |  |--prod-us-1',
        '  |--@canary:',
        '  |  |--prod-eu-1',
        '  |--@staging:',
        '  |  |--stg-eu-1',
        '  |  |--stg-us-1',
        '  |--@empty:',
      ].join('\n'),
    );
  });

  it('rejects conflicting repeated definitions, at the second one', async () => {
    const e = await inputError(load('conflict.yml'));
    expect(e.describe()).toMatch(new RegExp(`^${fx('conflict.yml')}:8:22: cluster 'prod-eu-1' is defined again with a different context \\('two' here, 'one' at ${fx('conflict.yml')}:5:22\\)`));
  });
});

describe('loadInventory: precedence of group and cluster vars', () => {
  it('all < parent < child (deeper wins) < same depth by name < cluster vars; replace, not deep merge', async () => {
    const inv = await load('precedence.yml');
    expect(inv.clusters.get('c1')?.groups).toEqual(['all', 'prod', 'zz', 'canary', 'eu']);
    expect(inv.groups.get('zz')?.depth).toBe(1);
    expect(inv.groups.get('canary')?.depth).toBe(2);
    expect(inventoryVars(inv, 'c1')).toEqual({
      v_all: 'all',
      v_parent: 'zz', // depth 1: prod < zz by name
      v_child: 'eu', // depth 2 beats depth 1 (zz), eu > canary by name
      v_same: 'eu',
      v_cluster: 'c1',
      nested: { a: 10 }, // replaced as a whole
    });
  });

  it('a group under several parents takes its deepest depth', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(
        path.join(dir, 'hosts.yml'),
        ['all:', '  children:', '    a:', '      children:', '        b:', '          children:', '            x:', '    x:', '      clusters:', '        c1:', ''].join('\n'),
      );
      const inv = await loadInventory(dir, { cwd: '/', env: ENV });
      expect(inv.groups.get('x')).toMatchObject({ depth: 3, parents: ['b', 'all'] });
      expect(inv.clusters.get('c1')?.groups).toEqual(['all', 'a', 'b', 'x']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('loadInventory: directory inventories', () => {
  it('applies group_vars and cluster_vars (files win over inline vars)', async () => {
    const inv = await load('dir');
    expect(inv.source).toBe(fx('dir/hosts.yml'));
    expect(inv.dir).toBe(fx('dir'));
    expect(inv.groups.get('all')?.vars).toEqual({ team: 'platform', from_file: 'group_vars-all' });
    expect(inv.groups.get('prod')?.vars).toEqual({ replicas: 3, tier: 'gold', db_password: 's3cr3t-pw' });
    expect(inventoryVars(inv, 'prod-eu-1')).toEqual({
      team: 'platform',
      from_file: 'group_vars-all',
      replicas: 3,
      tier: 'gold',
      db_password: 's3cr3t-pw',
      weight: 70,
      zone: 'a',
    });
    expect(inv.secrets).toEqual(['s3cr3t-pw']);
  });

  it('a var file for an unknown group is an error naming the file', async () => {
    const e = await inputError(load('bad-vars-dir'));
    expect(e.describe()).toContain(fx('bad-vars-dir/group_vars/prdo.yml'));
    expect(e.message).toContain("there is no group named 'prdo'");
    expect(e.hint).toBe("did you mean 'prod'?");
  });

  it('a var file must be a map', async () => {
    const e = await inputError(load('bad-cluster-vars-dir'));
    expect(e.describe()).toBe(`${fx('bad-cluster-vars-dir/cluster_vars/c1.yml')}:1:1: cluster_vars/c1.yml must be a map of variables (name: value), not a list`);
  });

  it('a directory without inventory files is an error', async () => {
    const e = await inputError(load('project'));
    expect(e.message).toContain('has no inventory file');
  });
});

describe('loadInventory: finding the inventory', () => {
  const project = fx('project');

  it('looks up a bare name next to the playbook first, then in cwd', async () => {
    const pb = await loadInventory('staging', { cwd: project, playbookDir: path.join(project, 'playbooks'), env: ENV });
    expect(pb.source).toBe(path.join(project, 'playbooks/inventories/staging.yaml'));
    const cwd = await loadInventory('staging', { cwd: project, env: ENV });
    expect(cwd.source).toBe(path.join(project, 'inventories/staging.yml'));
    expect([...cwd.clusters.keys()]).toEqual(['stg-1']);
  });

  it('finds a bare-name directory inventory', async () => {
    const inv = await loadInventory('lab', { cwd: project, playbookDir: path.join(project, 'playbooks'), env: ENV });
    expect(inv.source).toBe(path.join(project, 'inventories/lab/hosts.yaml'));
    expect(inv.dir).toBe(path.join(project, 'inventories/lab'));
    expect(inventoryVars(inv, 'lab-1')).toEqual({ lab: true });
  });

  it('lists the places tried when nothing is found', async () => {
    const e = await inputError(loadInventory('nope', { cwd: project, playbookDir: path.join(project, 'playbooks'), env: ENV }));
    expect(e.message).toBe(
      [
        "inventory 'nope' not found; tried:",
        `    ${path.join(project, 'nope')}`,
        `    ${path.join(project, 'playbooks/inventories/nope.yml')}`,
        `    ${path.join(project, 'playbooks/inventories/nope.yaml')}`,
        `    ${path.join(project, 'playbooks/inventories/nope')}/`,
        `    ${path.join(project, 'inventories/nope.yml')}`,
        `    ${path.join(project, 'inventories/nope.yaml')}`,
        `    ${path.join(project, 'inventories/nope')}/`,
      ].join('\n'),
    );
  });

  it('does not do the bare-name lookup for paths', async () => {
    const e = await inputError(loadInventory('inventories/nope.yml', { cwd: project, env: ENV }));
    expect(e.message).toBe(`inventory 'inventories/nope.yml' not found; tried:\n    ${path.join(project, 'inventories/nope.yml')}`);
  });
});

describe('loadInventory: kubeconfig defaults and expansion', () => {
  it('defaults to the first path of $KUBECONFIG (relative to cwd, ~ expanded)', async () => {
    const inv = await loadInventory('example.yml', { cwd: FIX, env: { HOME, KUBECONFIG: `~/kc/one.yaml${path.delimiter}/etc/two.yaml` } });
    expect(inv.clusters.get('prod-eu-2')?.kubeconfig).toBe('/home/tester/kc/one.yaml');
    expect(inv.clusters.get('prod-eu-1')?.kubeconfig).toBe('/home/tester/.kube/prod.yaml'); // explicit wins
    const rel = await loadInventory(fx('example.yml'), { cwd: '/work/dir', env: { HOME, KUBECONFIG: 'conf/kc.yaml' } });
    expect(rel.clusters.get('prod-eu-2')?.kubeconfig).toBe('/work/dir/conf/kc.yaml');
  });

  it('falls back to ~/.kube/config when $KUBECONFIG is unset or empty', async () => {
    const inv = await loadInventory('example.yml', { cwd: FIX, env: { HOME, KUBECONFIG: '' } });
    expect(inv.clusters.get('prod-eu-2')?.kubeconfig).toBe('/home/tester/.kube/config');
  });

  it('expands $VAR and ${VAR}, resolves relative paths against the inventory directory', async () => {
    const inv = await load('kubeconfig-env.yml', { HOME, KP_KUBE_DIR: '/srv/kube' });
    expect([...inv.clusters.values()].map((c) => c.kubeconfig)).toEqual([
      '/srv/kube/a.yaml',
      '/srv/kube/b.yaml',
      path.join(FIX, 'rel/c.yaml'),
      '/home/tester/.kube/config',
    ]);
  });

  it('an unset $VAR is an error at the kubeconfig key', async () => {
    const e = await inputError(load('kubeconfig-unset.yml'));
    expect(e.describe()).toBe(`${fx('kubeconfig-unset.yml')}:3:10: cluster 'a': kubeconfig environment variable $KP_NOT_SET_ANYWHERE is not set`);
  });
});

describe('loadInventory: errors', () => {
  it('an unknown cluster key is an error at its file:line:col, with a suggestion', async () => {
    const e = await inputError(load('unknown-key.yml'));
    expect(e.describe()).toBe(
      `${fx('unknown-key.yml')}:7:11: inventory.all.children.prod.clusters.prod-eu-1: unknown key 'kubeconifg'\n  hint: did you mean 'kubeconfig'?`,
    );
  });

  it('Ansible `hosts:` are accepted (they were an unknown key before)', async () => {
    const inv = await load('unknown-group-key.yml');
    expect(inv.clusters.get('prod-eu-1')).toMatchObject({ name: 'prod-eu-1', groups: ['all', 'prod'], vars: {} });
  });

  it('a duplicate key is an error at the duplicate with duplicate_dict_key=error (the default warns, as ansible-core)', async () => {
    setDuplicateKeyMode('error');
    try {
      const e = await inputError(load('duplicate-key.yml'));
      expect(e.describe()).toMatch(new RegExp(`^${fx('duplicate-key.yml')}:4:5: YAML error: duplicate key .* \\(first defined at line \\d+, column 5\\)`));
    } finally {
      setDuplicateKeyMode(undefined);
    }
  });

  it('a top-level group other than all is a child of all (Ansible)', async () => {
    const inv = await load('bad-top.yml');
    expect(inv.groups.get('all')?.children).toEqual(['ungrouped', 'prod']);
    expect(inv.clusters.get('prod-eu-1')?.groups).toEqual(['all', 'prod']);
  });

  it('a section at the top level is an error: the all: line is missing', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(path.join(dir, 'h.yml'), 'hosts:\n  web1:\n');
      const e = await inputError(loadInventory('h.yml', { cwd: dir, env: ENV }));
      expect(e.describe()).toBe(`${path.join(dir, 'h.yml')}:1:1: the top level of an inventory holds groups; 'hosts' is a section of a group\n  hint: put it under the group 'all':\n    all:\n      hosts: ...`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an empty inventory is an error saying what is expected', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(path.join(dir, 'empty.yml'), '# nothing\n');
      const e = await inputError(loadInventory('empty.yml', { cwd: dir, env: ENV }));
      expect(e.message).toContain('expected a top-level `all:` group');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a wrong type is positioned', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(path.join(dir, 'h.yml'), 'all:\n  clusters:\n    a: { context: 12 }\n');
      const e = await inputError(loadInventory('h.yml', { cwd: dir, env: ENV }));
      expect(e.describe()).toBe(`${path.join(dir, 'h.yml')}:3:10: inventory.all.clusters.a.context: must be string`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('detects cycles in children', async () => {
    const e = await inputError(load('cycle.yml'));
    expect(e.describe()).toBe(
      `${fx('cycle.yml')}:10:9: group cycle: a -> b -> c -> a\n  hint: a group cannot be its own ancestor; remove 'a' from the children of 'c'`,
    );
    const self = await inputError(load('self-cycle.yml'));
    expect(self.describe()).toMatch(new RegExp(`^${fx('self-cycle.yml')}:5:9: group cycle: a -> a`));
  });

  it('rejects a recursive YAML alias', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(path.join(dir, 'h.yml'), 'all:\n  children:\n    a: &a\n      children:\n        b: *a\n');
      const e = await inputError(loadInventory('h.yml', { cwd: dir, env: ENV }));
      expect(e.describe()).toMatch(/h\.yml:5:9: recursive YAML alias: group 'b' contains itself$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a group and a cluster cannot share a name', async () => {
    const e = await inputError(load('name-clash.yml'));
    expect(e.describe()).toMatch(new RegExp(`^${fx('name-clash.yml')}:5:9: 'web' is both a group \\(at ${fx('name-clash.yml')}:6:5\\) and a cluster`));
  });

  it('rejects bad names', async () => {
    const e = await inputError(load('bad-name.yml'));
    expect(e.describe()).toBe(`${fx('bad-name.yml')}:3:5: invalid cluster name 'prod eu 1'\n  hint: names may only contain letters, digits, _, . and -`);
  });

  it('rejects all/ungrouped as child groups', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(path.join(dir, 'h.yml'), 'all:\n  children:\n    ungrouped:\n      clusters: { a: }\n');
      const e = await inputError(loadInventory('h.yml', { cwd: dir, env: ENV }));
      expect(e.describe()).toMatch(/h\.yml:3:5: 'ungrouped' cannot be a child group/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects magic variable names in inventory vars', async () => {
    const e = await inputError(load('magic-var.yml'));
    expect(e.describe()).toMatch(new RegExp(`^${fx('magic-var.yml')}:5:9: group 'prod': 'cluster_name' is a magic variable`));
  });

  it('rejects a repeated group with a conflicting var', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kplay-inv-'));
    try {
      await writeFile(
        path.join(dir, 'h.yml'),
        ['all:', '  children:', '    a:', '      children:', '        x: { vars: { v: 1 } }', '    b:', '      children:', '        x: { vars: { v: 2 } }', ''].join('\n'),
      );
      const e = await inputError(loadInventory('h.yml', { cwd: dir, env: ENV }));
      expect(e.describe()).toMatch(/h\.yml:8:22: group 'x' sets var 'v' again with a different value \(first set at .*h\.yml:5:22\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('loadInventory: secrets', () => {
  it('collects !secret values and values under secret-looking keys', async () => {
    const inv = await load('secrets.yml');
    expect([...inv.secrets].sort()).toEqual(['hunter2hunter2', 'k-123456', 'open-sesame', 'tok-abcdef'].sort());
    expect(inv.groups.get('all')?.vars.banner).toBe('open-sesame');
  });
});

describe('inventory schema', () => {
  it('schemas/inventory.schema.json is the published copy of inventorySchema', async () => {
    const file = fileURLToPath(new URL('../../schemas/inventory.schema.json', import.meta.url));
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(inventorySchema);
  });

  it('has a description on every property', () => {
    const missing: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (node === null || typeof node !== 'object') return;
      const rec = node as Record<string, unknown>;
      for (const key of ['properties', 'definitions'] as const) {
        const props = rec[key];
        if (props && typeof props === 'object') {
          for (const [name, sub] of Object.entries(props)) {
            if (!(sub as Record<string, unknown>).description) missing.push(`${at}/${key}/${name}`);
            walk(sub, `${at}/${key}/${name}`);
          }
        }
      }
    };
    walk(inventorySchema, '#');
    expect(missing).toEqual([]);
    expect(inventorySchema.$id).toBe('https://kplay.dev/schemas/inventory.schema.json');
  });
});

describe('matchClusters', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await load('multi.yml');
  });

  const cases: [string | string[], string[]][] = [
    // ansible-core's order (each expectation checked against InventoryManager.get_hosts on the same
    // inventory written with `hosts:`): a group's own clusters, then its child groups' level by level
    ['all', ['lab-1', 'prod-us-1', 'prod-eu-1', 'stg-eu-1', 'stg-us-1', 'prod-eu-2']],
    ['*', ['lab-1', 'prod-us-1', 'prod-eu-1', 'stg-eu-1', 'stg-us-1', 'prod-eu-2']],
    ['prod-eu-2', ['prod-eu-2']],
    ['eu', ['prod-eu-1', 'prod-eu-2']],
    ['prod', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
    ['ungrouped', ['lab-1']],
    ['prod-*', ['prod-us-1', 'prod-eu-1', 'prod-eu-2']],
    ['*-eu-?', ['prod-eu-1', 'prod-eu-2', 'stg-eu-1']],
    ['stg-[eu]?-1', ['stg-eu-1', 'stg-us-1']],
    ['stg-[!u]*', ['stg-eu-1']],
    ['stag*', ['stg-eu-1', 'stg-us-1']], // a glob matching a group name selects its members
    ['staging:eu', ['stg-eu-1', 'stg-us-1', 'prod-eu-1', 'prod-eu-2']], // pattern order, as ansible-core
    ['staging,eu', ['stg-eu-1', 'stg-us-1', 'prod-eu-1', 'prod-eu-2']],
    [['staging', 'eu'], ['stg-eu-1', 'stg-us-1', 'prod-eu-1', 'prod-eu-2']],
    [['staging:eu', 'lab-1'], ['stg-eu-1', 'stg-us-1', 'prod-eu-1', 'prod-eu-2', 'lab-1']],
    ['eu:eu:prod-eu-1', ['prod-eu-1', 'prod-eu-2']], // deduplicated
    ['prod:&canary', ['prod-eu-1']],
    ['all:&*-eu-*', ['prod-eu-1', 'stg-eu-1', 'prod-eu-2']],
    ['prod:!eu', ['prod-us-1']],
    ['all:!prod:!staging', ['lab-1']],
    ['all:!typo-is-fine-here', ['lab-1', 'prod-us-1', 'prod-eu-1', 'stg-eu-1', 'stg-us-1', 'prod-eu-2']],
    // Ansible order: unions first, then intersections, then exclusions — wherever they are written
    ['!prod-eu-2:eu:&prod:staging', ['prod-eu-1']],
    ['&prod:!eu', ['prod-us-1']], // no plain term: start from all
    ['!prod', ['lab-1', 'stg-eu-1', 'stg-us-1']],
    [' prod : !eu ', ['prod-us-1']],
    // split as ansible-core's split_host_pattern: empty terms dropped, white space separates, ~regex
    ['prod::eu', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
    ['prod:', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
    [',prod', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
    ['prod eu', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
    ['~prod.*', ['prod-eu-1', 'prod-eu-2', 'prod-us-1']],
  ];

  it.each(cases)('%j → %j', (pattern, expected) => {
    expect(matchClusters(inv, pattern)).toEqual(expected);
  });

  it('an empty match is an error naming the pattern and listing known names', async () => {
    const where = { file: 'site.yml', line: 3, col: 10 };
    const e = await inputError(() => matchClusters(inv, 'prod:&staging', where));
    expect(e.describe()).toBe(
      "site.yml:3:10: host pattern 'prod:&staging' matches no clusters\n" +
        '  hint: known groups: all, ungrouped, prod, eu, us, canary, staging, empty; known clusters: lab-1, prod-us-1, prod-eu-1, prod-eu-2, stg-eu-1, stg-us-1',
    );
    const g = await inputError(() => matchClusters(inv, 'empty'));
    expect(g.message).toBe("host pattern 'empty' matches no clusters");
    const l = await inputError(() => matchClusters(inv, ['eu', '!eu']));
    expect(l.message).toBe("host pattern '[eu, !eu]' matches no clusters");
  });

  it('a typo is an error naming the term with a suggestion', async () => {
    const e = await inputError(() => matchClusters(inv, 'prdo:staging'));
    expect(e.message).toBe("host pattern 'prdo:staging': no cluster or group named 'prdo'");
    expect(e.hint).toBe("did you mean 'prod'?");
    const c = await inputError(() => matchClusters(inv, 'prod-eu1'));
    expect(c.hint).toBe("did you mean 'prod-eu-1'?");
    const i = await inputError(() => matchClusters(inv, 'all:&stagin'));
    expect(i.message).toContain("no cluster or group named 'stagin'");
    expect(i.hint).toBe("did you mean 'staging'?");
    const far = await inputError(() => matchClusters(inv, 'zzzzzz'));
    expect(far.hint).toMatch(/^known groups: /);
  });

  it('a glob matching nothing is an error', async () => {
    const e = await inputError(() => matchClusters(inv, 'dev-*'));
    expect(e.message).toBe("host pattern 'dev-*': 'dev-*' matches no cluster or group name");
  });

  it.each([
    ['', /empty host pattern/],
    ['prod:&', /'&' must be followed by a cluster or group name/],
    ['&', /'&' must be followed by a cluster or group name/],
    ['!', /'!' must be followed by a cluster or group name/],
    ['prod:&!eu', /no cluster or group named '!eu'/],
    ['~prod(', /Invalid host list pattern: ~prod\(/],
  ])('bad pattern %j is a clear error', async (pattern, re) => {
    const e = await inputError(() => matchClusters(inv, pattern));
    expect(e.message).toMatch(re);
  });

  it('rejects an empty list and non-string items', async () => {
    expect((await inputError(() => matchClusters(inv, []))).message).toBe('empty host pattern');
    expect((await inputError(() => matchClusters(inv, [3] as unknown as string[]))).message).toMatch(/every item must be a string/);
  });
});
