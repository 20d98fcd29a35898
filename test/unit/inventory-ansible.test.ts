// Ansible's YAML inventory format (hosts:, top-level groups, ranges, host_vars/, group_vars/<dir>/),
// mixed with kplay's clusters:, how Ansible hosts connect, and the implicit localhost.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { graph } from '../../src/inventory/graph.js';
import { emptyInventory, loadInventory } from '../../src/inventory/resolve.js';
import { groupsMap, inventoryVars } from '../../src/inventory/host-vars.js';
import { withImplicitLocalhost } from '../../src/inventory/localhost.js';
import { matchClusters } from '../../src/inventory/patterns.js';
import { expandHostEntry } from '../../src/inventory/hostrange.js';
import { InputError } from '../../src/load/errors.js';

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

/** A temp directory with these files (path → content). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'kplay-inv-ansible-'));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}

const HOME = '/home/tester';
const load = (root: string, ref: string, env: NodeJS.ProcessEnv = { HOME }) => loadInventory(ref, { cwd: root, env });

async function inputError(p: Promise<unknown>): Promise<InputError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error('expected an InputError, got success');
}

const KUBECONFIG = `apiVersion: v1
kind: Config
current-context: sandbox-1
contexts:
  - name: sandbox-1
    context: {cluster: c1, user: u1}
  - name: other
    context: {cluster: c1, user: u1}
clusters: [{name: c1, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u1, user: {token: x}}]
`;

describe('Ansible YAML inventory: forms', () => {
  it('null hosts, string sections, host vars, children, group vars, ungrouped', async () => {
    const root = tree({
      'hosts.yml': `all:
  vars:
    team: platform
  hosts:
    lonely:
  children:
    web:
      hosts:
        web1:
        web2: {http_port: 8080, ansible_host: 10.0.0.2}
      vars: {tier: front}
    db:
      hosts: db1
    empty:
    nothing: ~
`,
    });
    const inv = await load(root, 'hosts.yml');
    expect([...inv.clusters.keys()]).toEqual(['lonely', 'web1', 'web2', 'db1']);
    expect(inv.groups.get('ungrouped')?.clusters).toEqual(['lonely']);
    expect(inv.clusters.get('web2')?.groups).toEqual(['all', 'web']);
    expect(inventoryVars(inv, 'web2')).toEqual({ team: 'platform', tier: 'front', http_port: 8080, ansible_host: '10.0.0.2' });
    expect(inventoryVars(inv, 'db1')).toEqual({ team: 'platform' });
    expect(groupsMap(inv)).toEqual({ all: ['lonely', 'web1', 'web2', 'db1'], ungrouped: ['lonely'], web: ['web1', 'web2'], db: ['db1'], empty: [], nothing: [] });
    expect(graph(inv)).toBe(['@all:', '  |--@ungrouped:', '  |  |--lonely', '  |--@web:', '  |  |--web1', '  |  |--web2', '  |--@db:', '  |  |--db1', '  |--@empty:', '  |--@nothing:'].join('\n'));
  });

  it('top-level groups other than all are children of all; a group under another is not', async () => {
    const root = tree({
      'hosts.yml': `webservers:
  hosts: {w1: }
  children: {canary: }
canary:
  hosts: {w2: }
`,
    });
    const inv = await load(root, 'hosts.yml');
    expect(inv.groups.get('all')?.children).toEqual(['ungrouped', 'webservers']);
    expect(inv.groups.get('canary')?.parents).toEqual(['webservers']);
    expect(inv.clusters.get('w2')?.groups).toEqual(['all', 'webservers', 'canary']);
  });

  it('expands host ranges and a :port (ansible_port), as ansible-core', async () => {
    expect(expandHostEntry('web[01:03].example.com')).toEqual({ names: ['web01.example.com', 'web02.example.com', 'web03.example.com'] });
    expect(expandHostEntry('db[a:c]')).toEqual({ names: ['dba', 'dbb', 'dbc'] });
    expect(expandHostEntry('n[0:10:5]-[1:2]')).toEqual({ names: ['n0-1', 'n0-2', 'n5-1', 'n5-2', 'n10-1', 'n10-2'] });
    expect(expandHostEntry('bastion:2222')).toEqual({ names: ['bastion'], port: 2222 });
    expect(expandHostEntry('web[1:2]:22')).toEqual({ names: ['web1', 'web2'], port: 22 });
    expect(() => expandHostEntry('web[01:3]')).toThrow('equal-length');
    expect(() => expandHostEntry('web[3]')).toThrow('begin:end');
    const root = tree({ 'hosts.yml': 'all:\n  hosts:\n    "web[1:2]:2222":\n      role: web\n' });
    const inv = await load(root, 'hosts.yml');
    expect(inventoryVars(inv, 'web2')).toEqual({ ansible_port: 2222, role: 'web' });
  });

  it('a bad range is an error at the host, with a hint', async () => {
    const root = tree({ 'hosts.yml': 'all:\n  hosts:\n    web[01:3]:\n' });
    const e = await inputError(load(root, 'hosts.yml'));
    expect(e.describe()).toBe(`${path.join(root, 'hosts.yml')}:3:5: host 'web[01:3]': host range must specify equal-length begin and end formats\n  hint: ranges are [start:end] or [start:end:step], e.g. web[01:10].example.com`);
  });

  it('a host entry that is not a map of vars is an error naming it', async () => {
    const root = tree({ 'hosts.yml': 'all:\n  hosts:\n    web1: [a, b]\n' });
    const e = await inputError(load(root, 'hosts.yml'));
    expect(e.describe()).toMatch(new RegExp(`^${path.join(root, 'hosts.yml')}:3:\\d+: inventory.all.hosts.web1: must be object,null`));
  });

  it('a host listed again merges its vars, the later value winning (Ansible), kplay clusters stay strict', async () => {
    const root = tree({
      'hosts.yml': `all:
  children:
    a: {hosts: {h1: {x: 1, y: 1}}}
    b: {hosts: {h1: {x: 2}}}
`,
      'strict.yml': `all:
  children:
    a: {clusters: {c1: {vars: {x: 1}}}}
    b: {clusters: {c1: {vars: {x: 2}}}}
`,
    });
    const inv = await load(root, 'hosts.yml');
    expect(inv.clusters.get('h1')?.vars).toEqual({ x: 2, y: 1 });
    expect(inv.clusters.get('h1')?.groups).toEqual(['all', 'a', 'b']);
    const e = await inputError(load(root, 'strict.yml'));
    expect(e.message).toContain("cluster 'c1' sets var 'x' again with a different value");
  });

  it('mixes clusters: and hosts: (even in one group)', async () => {
    const root = tree({
      'hosts.yml': `all:
  children:
    prod:
      clusters:
        prod-eu-1: {context: ctx-eu}
      hosts:
        prod-us-1: {kplay_context: ctx-us}
`,
    });
    const inv = await load(root, 'hosts.yml');
    expect(inv.groups.get('prod')?.clusters).toEqual(['prod-eu-1', 'prod-us-1']);
    expect(inv.clusters.get('prod-eu-1')?.context).toBe('ctx-eu');
    expect(inv.clusters.get('prod-us-1')?.context).toBe('ctx-us');
    expect(matchClusters(inv, 'prod')).toEqual(['prod-eu-1', 'prod-us-1']);
  });

  it('plugin configuration files and top-level sections are errors saying what to do', async () => {
    const root = tree({ 'aws_ec2.yml': 'plugin: amazon.aws.aws_ec2\nregions: [eu-west-1]\n', 'flat.yml': 'children:\n  web: {}\n' });
    expect((await inputError(load(root, 'aws_ec2.yml'))).message).toBe('inventory plugin configuration files are not supported');
    expect((await inputError(load(root, 'flat.yml'))).message).toBe("the top level of an inventory holds groups; 'children' is a section of a group");
  });
});

describe('Ansible inventory: var files and precedence', () => {
  it('host_vars/, group_vars/<group>/ directories and extension-less files, next to an inventory file', async () => {
    const root = tree({
      'inv/hosts.yml': `all:
  vars: {v: inline-all, w: inline-all}
  children:
    web:
      vars: {v: inline-web, u: inline-web}
      hosts:
        web1: {h: inline-host}
`,
      'inv/group_vars/all/10-main.yml': 'v: file-all\n',
      'inv/group_vars/all/20-more.yaml': 'x: file-all-2\n',
      'inv/group_vars/all/README.md': 'not vars',
      'inv/group_vars/web': 'u: file-web\n',
      'inv/group_vars/other-inventory-group.yml': 'z: 1\n',
      'inv/host_vars/web1.json': '{"h": "file-host"}',
    });
    const inv = await load(root, 'inv/hosts.yml');
    // Ansible: every inline group var < group_vars/all < group_vars/<group> < inline host vars < host_vars/
    expect(inventoryVars(inv, 'web1')).toEqual({ v: 'file-all', w: 'inline-all', u: 'file-web', x: 'file-all-2', h: 'file-host' });
  });

  it('a group_vars file of a parent beats an inline var of a deeper group (ansible-core order)', async () => {
    const root = tree({
      'inv/hosts.yml': 'all:\n  children:\n    deep:\n      vars: {z: inline-deep}\n      hosts: {h2: }\n',
      'inv/group_vars/all.yml': 'z: file-all\n',
    });
    expect(inventoryVars(await load(root, 'inv/hosts.yml'), 'h2')).toEqual({ z: 'file-all' });
  });

  it('ansible_group_priority orders groups of the same depth', async () => {
    const root = tree({
      'hosts.yml': `all:
  children:
    a: {vars: {v: a, ansible_group_priority: 10}, hosts: {h: }}
    b: {vars: {v: b}, hosts: {h: }}
`,
    });
    const inv = await load(root, 'hosts.yml');
    expect(inv.clusters.get('h')?.groups).toEqual(['all', 'b', 'a']);
    expect(inventoryVars(inv, 'h').v).toBe('a');
  });

  it('a directory inventory reads every inventory file in it, and its var files must match', async () => {
    const root = tree({
      'inv/01-web.yml': 'web:\n  hosts: {w1: }\n',
      'inv/02-db.yaml': 'db:\n  hosts: {d1: }\n',
      'inv/notes.md': 'ignored',
      'inv/group_vars/db.yml': 'port: 5432\n',
      'bad/hosts.yml': 'all:\n  hosts: {h: }\n',
      'bad/host_vars/hh.yml': 'x: 1\n',
    });
    const inv = await load(root, 'inv');
    expect(inv.source).toBe(path.join(root, 'inv'));
    expect([...inv.clusters.keys()]).toEqual(['w1', 'd1']);
    expect(inventoryVars(inv, 'd1')).toEqual({ port: 5432 });
    const e = await inputError(load(root, 'bad'));
    expect(e.message).toBe("host_vars/hh: there is no cluster named 'hh' in the inventory");
    expect(e.hint).toBe("did you mean 'h'?");
  });

  it('an ansible-vault file without a vault password is an error that says so (test/unit/vault.test.ts decrypts them)', async () => {
    const root = tree({ 'inv/hosts.yml': 'all:\n  hosts: {h: }\n', 'inv/group_vars/all.yml': '$ANSIBLE_VAULT;1.1;AES256\n6162\n' });
    const e = await inputError(load(root, 'inv/hosts.yml'));
    expect(e.message).toBe(`Attempting to decrypt but no vault secrets found on ${path.join(root, 'inv/group_vars/all.yml')}`);
    expect(e.hint).toContain('--vault-password-file');
  });
});

describe('Ansible hosts: the kubeconfig context', () => {
  const root = tree({
    'kube/config': KUBECONFIG,
    'hosts.yml': `all:
  children:
    prod:
      vars: {kplay_kubeconfig: kube/config}
      hosts:
        web1:
        web2: {kplay_context: other}
  hosts:
    elsewhere:
  clusters:
    named:
`,
  });

  it('kplay_context, else the current context of the kubeconfig (kplay_kubeconfig, relative to the inventory); never the host name', async () => {
    const inv = await load(root, 'hosts.yml');
    expect(inv.clusters.get('web1')).toMatchObject({ context: 'sandbox-1', kubeconfig: path.join(root, 'kube/config') });
    expect(inv.clusters.get('web2')).toMatchObject({ context: 'other', kubeconfig: path.join(root, 'kube/config') });
    // no kubeconfig at ~/.kube/config: no current context
    expect(inv.clusters.get('elsewhere')).toMatchObject({ context: '', kubeconfig: '/home/tester/.kube/config' });
    // kplay's clusters: entries keep their name as the default context
    expect(inv.clusters.get('named')).toMatchObject({ context: 'named', kubeconfig: '/home/tester/.kube/config' });
  });

  it('$KUBECONFIG, then $K8S_AUTH_KUBECONFIG / $K8S_AUTH_CONTEXT, as kubernetes.core', async () => {
    const kc = path.join(root, 'kube/config');
    const viaKubeconfig = await load(root, 'hosts.yml', { HOME, KUBECONFIG: kc });
    expect(viaKubeconfig.clusters.get('elsewhere')).toMatchObject({ context: 'sandbox-1', kubeconfig: kc });
    const viaAuth = await load(root, 'hosts.yml', { HOME, K8S_AUTH_KUBECONFIG: kc, K8S_AUTH_CONTEXT: 'other' });
    expect(viaAuth.clusters.get('elsewhere')).toMatchObject({ context: 'other', kubeconfig: kc });
    expect(viaAuth.clusters.get('named')).toMatchObject({ context: 'named', kubeconfig: '/home/tester/.kube/config' });
  });

  it('a templated kplay_context is an error (it is read when the inventory loads)', async () => {
    const r = tree({ 'hosts.yml': 'all:\n  hosts:\n    h: {kplay_context: "{{ ctx }}"}\n' });
    const e = await inputError(load(r, 'hosts.yml'));
    expect(e.message).toBe("h: kplay_context is read when the inventory loads, before templates can be rendered: '{{ ctx }}'");
  });
});

describe('the implicit localhost', () => {
  const root = tree({
    'kube/config': KUBECONFIG,
    'inv/hosts.yml': 'all:\n  vars: {x: inline-all, y: inline-all}\n  hosts: {h1: }\n',
    'inv/group_vars/all.yml': 'x: file-all\n',
  });
  const env = { HOME, KUBECONFIG: path.join(root, 'kube/config') };

  it('is added only for a pattern naming localhost or 127.0.0.1, outside all, with the all vars and ansible_connection local', async () => {
    const inv = await load(root, 'inv/hosts.yml', env);
    expect(withImplicitLocalhost(inv, ['all', 'h1'], { cwd: root, env })).toBe(inv);
    const withLocal = withImplicitLocalhost(inv, ['all', 'localhost'], { cwd: root, env });
    expect(withLocal.clusters.get('localhost')).toEqual({
      name: 'localhost',
      context: 'sandbox-1',
      kubeconfig: path.join(root, 'kube/config'),
      vars: { ansible_connection: 'local', ansible_python_interpreter: '/usr/bin/python3' },
      groups: [],
      implicit: true,
    });
    expect(inv.clusters.has('localhost')).toBe(false); // the loaded inventory is not changed
    // seen as in ansible-playbook: all vars with group_vars/all winning, not a member of all
    expect(inventoryVars(withLocal, 'localhost')).toEqual({ x: 'file-all', y: 'inline-all', ansible_connection: 'local', ansible_python_interpreter: '/usr/bin/python3' });
    expect(matchClusters(withLocal, 'all')).toEqual(['h1']);
    expect(matchClusters(withLocal, '*')).toEqual(['h1']);
    expect(matchClusters(withLocal, '!h1:localhost')).toEqual(['localhost']);
    expect(matchClusters(withLocal, 'localhost')).toEqual(['localhost']);
    expect(matchClusters(withLocal, '127.0.0.1')).toEqual(['localhost']);
    expect(groupsMap(withLocal).all).toEqual(['h1']);
    expect(withImplicitLocalhost(inv, ['127.0.0.1'], { cwd: root, env }).clusters.get('localhost')?.implicit).toBe(true);
  });

  it('an inventory host named localhost is used instead (also for 127.0.0.1)', async () => {
    const r = tree({ 'hosts.yml': 'all:\n  hosts:\n    localhost: {kplay_context: mine}\n' });
    const inv = await load(r, 'hosts.yml');
    expect(withImplicitLocalhost(inv, ['localhost', '127.0.0.1'], { cwd: r, env: { HOME } })).toBe(inv);
    expect(matchClusters(inv, '127.0.0.1')).toEqual(['localhost']);
    expect(matchClusters(inv, 'all')).toEqual(['localhost']);
  });

  it('with no inventory: only the implicit localhost; all matches nothing and says why', async () => {
    const inv = withImplicitLocalhost(emptyInventory({ cwd: root, env }), ['localhost'], { cwd: root, env });
    expect([...inv.clusters.keys()]).toEqual(['localhost']);
    expect(inv.source).toBe('');
    expect(inv.clusters.get('localhost')?.context).toBe('sandbox-1');
    let err: unknown;
    try {
      matchClusters(inv, 'all');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).hint).toBe("known groups: all, ungrouped; known clusters: (none; the implicit localhost is matched only by 'localhost', not by 'all')");
  });
});

describe('Ansible INI inventories', () => {
  it('reads hosts, ranges, ports, Python-literal values, [g:vars], [g:children], ungrouped', async () => {
    const root = tree({
      'hosts': `solo
[web]
web[1:2] http_port=80 tls=True name="a b" list='[1, "x"]' flag=true
bastion:2200 # comment
[web:vars]
tier=front
[prod:children]
web
[all:vars]
team=platform
`,
    });
    const inv = await load(root, 'hosts');
    expect([...inv.clusters.keys()]).toEqual(['solo', 'web1', 'web2', 'bastion']);
    expect(inv.groups.get('ungrouped')?.clusters).toEqual(['solo']);
    expect(inv.clusters.get('web2')?.groups).toEqual(['all', 'prod', 'web']);
    expect(inventoryVars(inv, 'web1')).toEqual({ team: 'platform', tier: 'front', http_port: 80, tls: true, name: 'a b', list: [1, 'x'], flag: 'true' });
    expect(inventoryVars(inv, 'bastion')).toEqual({ team: 'platform', tier: 'front', ansible_port: 2200 });
  });

  it('__proto__ is an ordinary host and variable name', async () => {
    const root = tree({ 'inv.ini': "[web]\n__proto__ __proto__=1 x=2\n[web:vars]\n__proto__={'__proto__': 3}\n" });
    const inv = await load(root, 'inv.ini');
    expect([...inv.clusters.keys()]).toEqual(['__proto__']);
    const vars = inventoryVars(inv, '__proto__');
    expect(Object.getPrototypeOf(vars)).toBe(Object.prototype);
    expect(Object.entries(vars)).toEqual([['__proto__', 1], ['x', 2]]);
    expect(Object.entries(inv.groups.get('web')?.vars ?? {})).toEqual([['__proto__', JSON.parse('{"__proto__": 3}')]]);
  });

  it('errors name the file and line, as ansible-core words them', async () => {
    const cases: [string, string][] = [
      ['[web:hosts2]\n', 'section [web:hosts2] has unknown type: hosts2'],
      ['[web]\nw1\n[prod:children]\nweb\ndb\n', "section [prod:children] includes undefined group 'db'"],
      ['[db:vars]\nport=1\n', "section [db:vars] not valid for undefined group 'db'"],
      ['[web]\nw1 ; nope\n', 'expected key=value host variable assignment, got: ;'],
      ['[web]\nw1 x="open\n', `error parsing host definition 'w1 x="open': No closing quotation`],
      ['[web x]\n', "invalid section entry: '[web x]'"],
    ];
    for (const [text, msg] of cases) {
      const root = tree({ 'inv.ini': text });
      const e = await inputError(load(root, 'inv.ini'));
      expect(e.message).toBe(msg);
      expect(e.pos?.file).toBe(path.join(root, 'inv.ini'));
      expect(e.pos?.line).toBeGreaterThan(0);
    }
  });
});

describe("ansible-core's host_list source (`-i host1,host2`)", () => {
  it('a comma-separated list that is not a path is those hosts, ungrouped', async () => {
    const root = tree({ 'x.yml': 'all: {}\n' });
    const inv = await load(root, 'host1, host2:2222,');
    expect([...inv.clusters.keys()]).toEqual(['host1', 'host2']);
    expect(matchClusters(inv, 'ungrouped')).toEqual(['host1', 'host2']);
  });
  it('an existing file whose name has a comma is still a file', async () => {
    const root = tree({ 'a,b.yml': 'all:\n  hosts:\n    h3: {}\n' });
    const inv = await load(root, 'a,b.yml');
    expect([...inv.clusters.keys()]).toEqual(['h3']);
  });
});
