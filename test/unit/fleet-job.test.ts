// kplay fleet job: the generated objects (shapes, bundle layout with subdirectories, the ConfigMap
// size limit, secrets never in the output).
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InputError } from '../../src/load/errors.js';
import { CONFIGMAP_MAX_BYTES } from '../../src/fleet/job-limit.js';
import { fleetJobObjects as objectsLoadedWith, toYaml, type FleetJobOptions } from '../../src/fleet/job.js';
import type { K8sObject } from '../../src/fleet/job-objects.js';
import { loadAll } from '../../src/run/inputs.js';

/** The generator with the run's loader, as `kplay fleet job` calls it. */
const fleetJobObjects = (o: FleetJobOptions): Promise<K8sObject[]> => objectsLoadedWith(o, loadAll);

let dir: string;

function write(rel: string, content: string | Buffer): string {
  const p = path.join(dir, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
  return p;
}

function smallProject(): void {
  write('pb/site.yml', '- hosts: all\n  serial: 2\n  roles: [web]\n');
  write('pb/roles/web/tasks/main.yml', '- name: hi\n  ansible.builtin.debug:\n    msg: "{{ greeting }}"\n');
  write('pb/roles/web/templates/cm.yaml.j2', 'x: {{ y }}\n');
  write('pb/group_vars/all.yml', 'greeting: hello\n');
  write('pb/inventories/fleet.yml', 'all:\n  clusters:\n    store-1: {context: store-1}\n    store-2: {context: store-2}\n');
  write('pb/.git/HEAD', 'ref: refs/heads/main\n');
  write('pb/.kplay/runs/old.json', '{}\n');
  write('pb/node_modules/x/index.js', 'export {};\n');
}

const base = (o: Partial<FleetJobOptions> = {}): FleetJobOptions => ({ playbook: path.join(dir, 'pb/site.yml'), inventory: path.join(dir, 'pb/inventories/fleet.yml'), shards: 3, runId: 'r1', kubeconfigSecrets: ['fleet-kubeconfigs'], ...o });

function byKind(objs: K8sObject[], kind: string, component?: string): K8sObject {
  const o = objs.find((x) => x.kind === kind && (component === undefined || (x.metadata.labels as Record<string, string>)['app.kubernetes.io/component'] === component));
  if (!o) throw new Error(`no ${kind}`);
  return o;
}

type Obj = Record<string, unknown>;
const get = (o: unknown, ...keys: (string | number)[]): unknown => keys.reduce<unknown>((v, k) => (v as Obj | undefined)?.[k as string], o);

async function rejects(p: Promise<unknown>): Promise<InputError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(InputError);
  return e as InputError;
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'fleet-job-'));
  smallProject();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('kplay fleet job: objects', () => {
  it('an Indexed Job, one shard per index, that runs kplay run --shard $(JOB_COMPLETION_INDEX)/N --fleet-run ID with the pass-through flags', async () => {
    const objs = await fleetJobObjects(base({ limit: 'store-*', check: true, extraVars: ['x=1'], tags: ['a'], forks: '5' }));
    expect(objs.map((o) => o.kind)).toEqual(['ConfigMap', 'ConfigMap', 'ConfigMap', 'ServiceAccount', 'Role', 'RoleBinding', 'Job']);
    const job = byKind(objs, 'Job');
    const spec = job.spec as Obj;
    expect(spec).toMatchObject({ completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 0 });
    // a shard that failed is never rerun blindly; without a journal volume an evicted one is not either
    expect(get(spec, 'podFailurePolicy', 'rules')).toEqual([
      { action: 'FailIndex', onExitCodes: { containerName: 'kplay', operator: 'In', values: [1, 2, 3, 4, 5] } },
      { action: 'FailIndex', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    ]);
    const pod = get(spec, 'template', 'spec') as Obj;
    expect(pod.serviceAccountName).toBe('kplay-r1');
    expect(pod.restartPolicy).toBe('Never');
    const c = get(pod, 'containers', 0) as Obj;
    expect(c.image).toBe('kplay:0.1.0');
    expect(c.workingDir).toBe('/kplay/bundle');
    expect(c.args).toEqual(['run', 'site.yml', '-i', 'inventories/fleet.yml', '-e', 'x=1', '--limit', 'store-*', '--check', '--tags', 'a', '--forks', '5', '--shard', '$(JOB_COMPLETION_INDEX)/3', '--fleet-run', 'r1', '--progress', 'plain']);
    // the management cluster: the pod's own ServiceAccount (token and CA files), named apart from KUBECONFIG (the targets')
    expect(c.env).toEqual(expect.arrayContaining([{ name: 'KPLAY_FLEET_KUBECONFIG', value: '/kplay/fleet/kubeconfig' }, { name: 'KPLAY_FLEET_CONTEXT', value: 'in-cluster' }]));
    const fleetKc = parse((byKind(objs, 'ConfigMap', 'fleet-kubeconfig').data as Record<string, string>).kubeconfig ?? '') as Obj;
    expect(fleetKc).toEqual({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'in-cluster',
      clusters: [{ name: 'management', cluster: { server: 'https://kubernetes.default.svc', 'certificate-authority': '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt' } }],
      users: [{ name: 'shard', user: { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' } }],
      contexts: [{ name: 'in-cluster', context: { cluster: 'management', user: 'shard', namespace: 'default' } }],
    });
    expect(c.volumeMounts).toEqual(expect.arrayContaining([{ name: 'fleet', mountPath: '/kplay/fleet', readOnly: true }]));
    // every object is tied to the run
    for (const o of objs) expect((o.metadata.labels as Obj)['kplay.dev/fleet-run']).toBe('r1');
  });

  it('--parallelism, --image, --namespace, --deadline', async () => {
    const objs = await fleetJobObjects(base({ shards: 10, parallelism: 4, image: 'registry.example/kplay:1', namespace: 'windows', deadlineSeconds: 7200 }));
    const job = byKind(objs, 'Job');
    expect(job.spec).toMatchObject({ completions: 10, parallelism: 4, activeDeadlineSeconds: 7200 });
    expect(get(job, 'spec', 'template', 'spec', 'containers', 0, 'image')).toBe('registry.example/kplay:1');
    for (const o of objs) expect(o.metadata.namespace).toBe('windows');
    expect(get(byKind(objs, 'RoleBinding'), 'subjects')).toEqual([{ kind: 'ServiceAccount', name: 'kplay-r1', namespace: 'windows' }]);
  });

  it('the Role grants the coordination verbs on the run\'s own objects only, by name, and never create/list/delete', async () => {
    const objs = await fleetJobObjects(base());
    const rules = get(byKind(objs, 'Role'), 'rules') as Obj[];
    expect(rules).toEqual([{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['kplay-fleet-r1'], verbs: ['get', 'update'] }]);
    // the coordination object exists up front (so shards need no create)
    expect(byKind(objs, 'ConfigMap', 'coordination').metadata.name).toBe('kplay-fleet-r1');
  });

  it('the bundle keeps subdirectories: flat keys, volume items mapping them back to their paths; hidden entries and node_modules left out', async () => {
    write('pb/files/logo.bin', Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    symlinkSync('../..', path.join(dir, 'pb/roles/web/up')); // a symlink back up the tree is not followed round
    const objs = await fleetJobObjects(base());
    const cm = byKind(objs, 'ConfigMap', 'bundle');
    const items = get(byKind(objs, 'Job'), 'spec', 'template', 'spec', 'volumes', 0, 'configMap', 'items') as { key: string; path: string }[];
    expect(items.map((i) => i.path)).toEqual(['files/logo.bin', 'group_vars/all.yml', 'inventories/fleet.yml', 'roles/web/tasks/main.yml', 'roles/web/templates/cm.yaml.j2', 'site.yml']);
    const data = cm.data as Record<string, string>;
    for (const i of items) expect(i.key).toMatch(/^[-._a-zA-Z0-9]+$/);
    const key = (p: string): string => items.find((i) => i.path === p)?.key ?? '';
    expect(data[key('roles/web/tasks/main.yml')]).toContain('{{ greeting }}');
    expect((cm.binaryData as Record<string, string>)[key('files/logo.bin')]).toBe(Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString('base64'));
    expect(cm.immutable).toBe(true);
  });

  it('an inventory and -e @file outside the playbook directory are bundled under _external/ with their group_vars, and the arguments point there', async () => {
    write('inv/prod/hosts.yml', 'all:\n  clusters:\n    store-9: {context: store-9}\n');
    write('inv/prod/group_vars/all.yml', 'greeting: hi\n');
    write('vars/window.yml', 'window: w1\n');
    const objs = await fleetJobObjects(base({ inventory: path.join(dir, 'inv/prod'), extraVars: [`@${path.join(dir, 'vars/window.yml')}`] }));
    const items = get(byKind(objs, 'Job'), 'spec', 'template', 'spec', 'volumes', 0, 'configMap', 'items') as { path: string }[];
    expect(items.map((i) => i.path)).toEqual(expect.arrayContaining(['_external/1-prod/hosts.yml', '_external/1-prod/group_vars/all.yml', '_external/2-window.yml']));
    const args = get(byKind(objs, 'Job'), 'spec', 'template', 'spec', 'containers', 0, 'args') as string[];
    expect(args.slice(0, 6)).toEqual(['run', 'site.yml', '-i', '_external/1-prod', '-e', '@_external/2-window.yml']);
  });

  it('a bundle over the ConfigMap limit (1 MiB of values) is refused, naming the biggest files and suggesting an image; exactly the limit passes', async () => {
    const used = (await fleetJobObjects(base())).length; // the small project alone
    expect(used).toBe(7);
    const cm = byKind(await fleetJobObjects(base()), 'ConfigMap', 'bundle');
    const small = Number((cm.metadata.annotations as Record<string, string>)['kplay.dev/bundle-bytes']);
    write('pb/files/big.txt', 'x'.repeat(CONFIGMAP_MAX_BYTES - small));
    await expect(fleetJobObjects(base())).resolves.toHaveLength(7);
    write('pb/files/big.txt', 'x'.repeat(CONFIGMAP_MAX_BYTES - small + 1));
    const e = await rejects(fleetJobObjects(base()));
    expect(e.message).toContain(`${CONFIGMAP_MAX_BYTES + 1} bytes`);
    expect(e.message).toContain('files/big.txt');
    expect(e.hint).toMatch(/image|OCI/);
  });

  it('--kubeconfig-secret is mounted by reference (KUBECONFIG set to its key); no secret data in the output', async () => {
    const objs = await fleetJobObjects(base({ kubeconfigSecrets: ['fleet-kubeconfigs', 'other/config'], envSecrets: ['window-tokens'] }));
    const pod = get(byKind(objs, 'Job'), 'spec', 'template', 'spec') as Obj;
    expect(get(pod, 'volumes')).toEqual(expect.arrayContaining([
      { name: 'kubeconfig-0', secret: { secretName: 'fleet-kubeconfigs', defaultMode: 0o440 } },
      { name: 'kubeconfig-1', secret: { secretName: 'other', defaultMode: 0o440 } },
    ]));
    expect(get(pod, 'containers', 0, 'env')).toEqual(expect.arrayContaining([{ name: 'KUBECONFIG', value: '/kplay/kubeconfig/fleet-kubeconfigs/kubeconfig' }]));
    expect(get(pod, 'containers', 0, 'envFrom')).toEqual([{ secretRef: { name: 'window-tokens' } }]);
    expect(objs.some((o) => o.kind === 'Secret')).toBe(false);
  });

  it('a secret value in the bundle (a !secret scalar, a password var) or an -e password is refused, and never printed', async () => {
    write('pb/group_vars/all.yml', 'greeting: hello\ndb_password: !secret hunter2-very-secret\n');
    const e1 = await rejects(fleetJobObjects(base()));
    expect(e1.message).toContain('group_vars/all.yml holds a secret value');
    expect(e1.describe()).not.toContain('hunter2-very-secret');
    write('pb/group_vars/all.yml', 'greeting: hello\napi_token: abcd-1234-efgh\n');
    await rejects(fleetJobObjects(base()));
    // a template under a secret-looking name is not a secret value
    write('pb/group_vars/all.yml', "greeting: hello\napi_token: \"{{ lookup('env', 'API_TOKEN') }}\"\n");
    await expect(fleetJobObjects(base())).resolves.toHaveLength(7);
    // a vars file only a play loads at run time (vars_files, include_vars), and an -e @file
    write('pb/group_vars/all.yml', 'greeting: hello\n');
    write('pb/vars/creds.yml', 'registry_user: bot\nregistry_key: !secret k-0123456789\n');
    expect((await rejects(fleetJobObjects(base()))).message).toContain('vars/creds.yml holds a secret value');
    rmSync(path.join(dir, 'pb/vars/creds.yml'));
    write('ext/window.yml', 'db_pass: hunter3-other\n');
    expect((await rejects(fleetJobObjects(base({ extraVars: [`@${path.join(dir, 'ext/window.yml')}`] })))).message).toContain('ext/window.yml holds a secret value');
    const e2 = await rejects(fleetJobObjects(base({ extraVars: ['db_password=s3cr3t-value'] })));
    expect(e2.describe()).not.toContain('s3cr3t-value');
  });

  it('every target cluster must connect through a kubeconfig the pod has (a mounted Secret), else it is refused', async () => {
    const e1 = await rejects(fleetJobObjects(base({ kubeconfigSecrets: [] })));
    expect(e1.message).toBe('cluster store-1 connects through the default kubeconfig, which a shard pod does not have');
    expect(e1.hint).toContain('--kubeconfig-secret NAME');
    write('pb/inventories/fleet.yml', 'all:\n  clusters:\n    store-1: {context: store-1, kubeconfig: ~/.kube/stores.yaml}\n    store-2: {context: store-2, kubeconfig: /kplay/kubeconfig/fleet-kubeconfigs/store-2.yaml}\n');
    const e2 = await rejects(fleetJobObjects(base()));
    expect(e2.message).toMatch(/^cluster store-1 connects through \/.*\/\.kube\/stores\.yaml, a file a shard pod does not have$/);
    expect(e2.hint).toContain('/kplay/kubeconfig/NAME/KEY');
    // store-1 outside the window (--limit) is not checked; store-2 names a file of the mounted Secret
    await expect(fleetJobObjects(base({ limit: 'store-2' }))).resolves.toHaveLength(7);
    // the Secret named in the path must be the one mounted
    expect((await rejects(fleetJobObjects(base({ limit: 'store-2', kubeconfigSecrets: ['other'] })))).message).toContain('store-2 connects through /kplay/kubeconfig/fleet-kubeconfigs/store-2.yaml');
  });

  it('a kubeconfig in the playbook directory is refused (it would go into a ConfigMap)', async () => {
    write('pb/kube/config.yaml', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers:\n- name: admin\n  user: {token: abc}\n');
    const e = await rejects(fleetJobObjects(base()));
    expect(e.message).toContain('looks like a kubeconfig');
    expect(e.hint).toContain('--kubeconfig-secret');
  });

  it('--retries needs --records-pvc; with it a rerun resumes from the shard\'s journal on the volume and an evicted pod is rerun', async () => {
    expect((await rejects(fleetJobObjects(base({ retries: 2 })))).message).toContain('--records-pvc');
    const job = byKind(await fleetJobObjects(base({ retries: 2, recordsPvc: 'kplay-records' })), 'Job');
    expect(get(job, 'spec', 'backoffLimitPerIndex')).toBe(2);
    expect(get(job, 'spec', 'podFailurePolicy', 'rules', 1, 'action')).toBe('Ignore');
    const pod = get(job, 'spec', 'template', 'spec') as Obj;
    expect(get(pod, 'volumes')).toEqual(expect.arrayContaining([{ name: 'records', persistentVolumeClaim: { claimName: 'kplay-records' } }]));
    expect(get(pod, 'containers', 0, 'volumeMounts')).toEqual(expect.arrayContaining([{ name: 'records', mountPath: '/kplay/records', subPathExpr: 'r1/shard-$(JOB_COMPLETION_INDEX)' }]));
    expect(get(pod, 'containers', 0, 'command', 2)).toContain('--resume last');
  });

  it('bad input: run id, shards, a module path outside the playbook directory, a playbook that does not load', async () => {
    expect((await rejects(fleetJobObjects(base({ runId: 'Bad_ID' })))).message).toContain("'Bad_ID' is not a valid name");
    expect((await rejects(fleetJobObjects(base({ shards: 0 })))).message).toContain('--shards');
    write('mods/x.ts', 'export {};\n');
    expect((await rejects(fleetJobObjects(base({ modulePath: [path.join(dir, 'mods')] })))).hint).toContain('next to the playbook');
    write('pb/site.yml', '- hosts: all\n  tasks:\n    - no_such_module: {}\n');
    await rejects(fleetJobObjects(base()));
  });

  it('toYaml: multi-document YAML that parses back to the objects, with how to apply it', async () => {
    const objs = await fleetJobObjects(base());
    const text = toYaml(objs);
    expect(text).toContain('kubectl apply --server-side');
    const docs = parseAllDocuments(text).map((d) => d.toJS() as unknown);
    expect(docs).toEqual(objs);
  });
});
