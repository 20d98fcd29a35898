// kplay fleet job against the sandbox apiserver: the generated objects are accepted (server-side
// dry-run, also at the ConfigMap size limit), and the shards' RBAC is least privilege — with a
// token of the generated ServiceAccount (TokenRequest), a shard can do exactly the contract's verbs
// on its run's coordination object and nothing else. Also writes docs/fleet-job-example.yaml (the
// README shows its Job, checked here so it cannot go stale).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kplayBin, repoRoot } from '../helpers/cli.js';
import { kubectl, run, sandboxEnv } from '../sandbox/env.js';
import { fleetJobObjects as objectsLoadedWith, toYaml, type FleetJobOptions } from '../../src/fleet/job.js';
import { CONFIGMAP_MAX_BYTES } from '../../src/fleet/job-limit.js';
import { COORDINATION } from '../../src/fleet/job-contract.js';
import { connect } from '../../src/k8s/client.js';
import type { K8sObject } from '../../src/fleet/job-objects.js';
import { loadAll } from '../../src/run/inputs.js';

/** The generator with the run's loader, as `kplay fleet job` calls it. */
const fleetJobObjects = (o: FleetJobOptions): Promise<K8sObject[]> => objectsLoadedWith(o, loadAll);

const ns = `fleetjob-${Math.random().toString(36).slice(2, 8)}`;
const other = `${ns}-other`;
const example = path.join(repoRoot, 'docs/fleet-job-example');
const opts = (o: Partial<FleetJobOptions> = {}): FleetJobOptions => ({
  playbook: path.join(example, 'window.yml'),
  inventory: path.join(example, 'inventories/stores.yml'),
  shards: 2,
  runId: 'stores-2026-11',
  kubeconfigSecrets: ['store-kubeconfigs'],
  ...o,
});
let tmp: string;

/** kubectl with only the ServiceAccount's token (a kubeconfig without the admin's client certificate). */
let asShard: (args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'fleet-job-it-'));
  for (const n of [ns, other]) await kubectl(['create', 'namespace', n]);
});
afterAll(async () => {
  for (const n of [ns, other]) await kubectl(['delete', 'namespace', n, '--wait=false'], { check: false });
  rmSync(tmp, { recursive: true, force: true });
});

function apply(objects: K8sObject[], extra: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = path.join(tmp, `objs-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, toYaml(objects));
  return kubectl(['apply', ...extra, '-f', file], { check: false });
}

describe('kplay fleet job: the generated objects in a real apiserver', () => {
  it('are accepted by server-side dry-run (client-side and server-side apply), and the example is written to docs/', async () => {
    const objs = await fleetJobObjects(opts({ namespace: ns }));
    const ssa = await apply(objs, ['--server-side', '--dry-run=server']);
    expect(ssa.stderr).toBe('');
    expect(ssa.code).toBe(0);
    for (const k of ['configmap/kplay-stores-2026-11-bundle', 'configmap/kplay-stores-2026-11-fleet', 'configmap/kplay-fleet-stores-2026-11', 'serviceaccount/kplay-stores-2026-11', 'role.rbac.authorization.k8s.io/kplay-stores-2026-11', 'rolebinding.rbac.authorization.k8s.io/kplay-stores-2026-11', 'job.batch/kplay-stores-2026-11']) {
      expect(ssa.stdout).toContain(`${k} serverside-applied (server dry run)`);
    }
    const csa = await apply(objs, ['--dry-run=server']);
    expect(csa.stderr).toBe('');
    expect(csa.stdout).toContain('job.batch/kplay-stores-2026-11 created (server dry run)');
    // with a records volume and retries (podFailurePolicy Ignore on disruption, subPathExpr per shard)
    const withPvc = await apply(await fleetJobObjects(opts({ namespace: ns, recordsPvc: 'kplay-records', retries: 2, parallelism: 1, deadlineSeconds: 14400, envSecrets: ['store-tokens'] })), ['--server-side', '--dry-run=server']);
    expect(withPvc.stderr).toBe('');
    expect(withPvc.stdout).toContain('job.batch/kplay-stores-2026-11 serverside-applied (server dry run)');

    // the README's example (namespace kplay-fleet), generated here so it cannot go stale
    const docs = toYaml(await fleetJobObjects(opts({ namespace: 'kplay-fleet' })));
    writeFileSync(path.join(repoRoot, 'docs/fleet-job-example.yaml'), docs);
    const jobDoc = stringify((await fleetJobObjects(opts({ namespace: 'kplay-fleet' }))).find((o) => o.kind === 'Job'), { lineWidth: 0 });
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    expect(readme, 'README: paste the Job of docs/fleet-job-example.yaml into "The Job that runs the shards"').toContain(`\`\`\`yaml\n${jobDoc}\`\`\``);
  });

  it('a bundle of exactly the ConfigMap limit is accepted by the apiserver; one byte more is what it refuses', async () => {
    const objs = await fleetJobObjects(opts({ namespace: ns }));
    const cm = objs.find((o) => o.metadata.name === 'kplay-stores-2026-11-bundle');
    if (!cm) throw new Error('no bundle ConfigMap');
    const bytes = Number((cm.metadata.annotations as Record<string, string>)['kplay.dev/bundle-bytes']);
    const fill = (n: number): K8sObject => ({ ...cm, data: { ...(cm.data as Record<string, string>), filler: 'x'.repeat(n) } });
    const atLimit = await apply([fill(CONFIGMAP_MAX_BYTES - bytes)], ['--server-side', '--dry-run=server']);
    expect(atLimit.stderr).toBe('');
    expect(atLimit.code).toBe(0);
    const over = await apply([fill(CONFIGMAP_MAX_BYTES - bytes + 1)], ['--server-side', '--dry-run=server']);
    expect(over.code).not.toBe(0);
    expect(over.stderr).toContain(`may not be more than ${CONFIGMAP_MAX_BYTES} bytes`);
  });

  it('RBAC is least privilege: the ServiceAccount\'s token can do the contract\'s verbs on its coordination object and nothing more', async () => {
    const objs = await fleetJobObjects(opts({ namespace: ns }));
    const real = objs.filter((o) => o.kind !== 'Job');
    const created = await apply(real, ['--server-side']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    // a Secret and a ConfigMap of someone else in the namespace, and the same-named coordination object in another namespace
    await kubectl(['-n', ns, 'create', 'secret', 'generic', 'store-kubeconfigs', '--from-literal=kubeconfig=not-really']);
    await kubectl(['-n', ns, 'create', 'configmap', 'unrelated', '--from-literal=a=b']);
    await kubectl(['-n', other, 'create', 'configmap', 'kplay-fleet-stores-2026-11', '--from-literal=a=b']);

    const token = (await kubectl(['-n', ns, 'create', 'token', 'kplay-stores-2026-11', '--duration', '10m'])).stdout.trim();
    expect(token.split('.')).toHaveLength(3);
    const env = sandboxEnv();
    const view = JSON.parse((await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])).stdout) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
    const cluster = view.clusters[0]?.cluster;
    if (!cluster) throw new Error('no cluster in the sandbox kubeconfig');
    const kc = path.join(tmp, 'shard.kubeconfig');
    writeFileSync(kc, stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'shard',
      clusters: [{ name: 'mgmt', cluster }],
      users: [{ name: 'shard', user: { token } }],
      contexts: [{ name: 'shard', context: { cluster: 'mgmt', user: 'shard', namespace: ns } }],
    }));
    asShard = (args) => run(path.join(env.binDir, 'kubectl'), ['--kubeconfig', kc, ...args], { check: false });

    const whoami = await asShard(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    expect(whoami.stdout).toBe(`system:serviceaccount:${ns}:kplay-stores-2026-11`);

    // what it may do: exactly the contract's rules, by name (besides what every authenticated user has)
    const list = await asShard(['auth', 'can-i', '--list', '-n', ns]);
    expect(list.code).toBe(0);
    const rows = list.stdout.split('\n').slice(1).filter((l) => l.trim() !== '').map((l) => l.trim().split(/\s{2,}/));
    const resourceRows = rows.filter((r) => r[0] !== undefined && !r[0].startsWith('[') && !/^self\w+\.authorization\.k8s\.io$|^selfsubjectreviews\.authentication\.k8s\.io$/.test(r[0]));
    const grant = COORDINATION[0];
    if (!grant) throw new Error('no coordination grant');
    expect(resourceRows).toEqual([[grant.resource, '[]', `[${grant.name('stores-2026-11')}]`, `[${grant.verbs.join(' ')}]`]]);

    // and it really can: read, then update with the resourceVersion precondition (the contract's PUT)
    const got = await asShard(['get', 'configmap', 'kplay-fleet-stores-2026-11', '-o', 'json']);
    expect(got.stderr).toBe('');
    const cm = JSON.parse(got.stdout) as { metadata: { resourceVersion: string }; data?: Record<string, string> };
    const file = path.join(tmp, 'update.json');
    writeFileSync(file, JSON.stringify({ ...cm, data: { ...(cm.data ?? {}), spent: '1' } }));
    const rep = await asShard(['replace', '-f', file]);
    expect(rep.stderr).toBe('');
    expect(rep.stdout).toContain('configmap/kplay-fleet-stores-2026-11 replaced');
    // a stale resourceVersion is a conflict, not a lost update
    const stale = await asShard(['replace', '-f', file]);
    expect(stale.stderr).toMatch(/Conflict|the object has been modified/);

    // kplay's own client with the generated management kubeconfig (the pod's paths moved to this machine) does the same
    const saDir = path.join(tmp, 'serviceaccount');
    mkdirSync(saDir);
    writeFileSync(path.join(saDir, 'token'), token);
    writeFileSync(path.join(saDir, 'ca.crt'), Buffer.from(cluster['certificate-authority-data'], 'base64'));
    const fleetCm = objs.find((o) => o.metadata.name === 'kplay-stores-2026-11-fleet');
    const fleetKc = path.join(tmp, 'fleet.kubeconfig');
    writeFileSync(fleetKc, ((fleetCm?.data as Record<string, string> | undefined)?.kubeconfig ?? '').replaceAll('/var/run/secrets/kubernetes.io/serviceaccount', saDir).replace('https://kubernetes.default.svc', cluster.server));
    const client = await connect({ name: 'management', context: 'in-cluster', kubeconfig: fleetKc });
    const viaKplay = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'kplay-fleet-stores-2026-11', namespace: ns });
    expect(viaKplay?.metadata?.name).toBe('kplay-fleet-stores-2026-11');
    const again = await client.replace({ ...(viaKplay ?? {}), apiVersion: 'v1', kind: 'ConfigMap', data: { ...((viaKplay as { data?: Record<string, string> } | undefined)?.data ?? {}), shards: '2' } } as Parameters<typeof client.replace>[0]);
    expect((again as { data?: Record<string, string> }).data?.shards).toBe('2');

    // and nothing more: every other request is forbidden
    const forbidden: string[][] = [
      ['get', 'configmap', 'unrelated'],
      ['get', 'configmap', 'kplay-stores-2026-11-bundle'],
      ['get', 'configmap', 'kplay-stores-2026-11-fleet'],
      ['get', 'configmaps'],
      ['create', 'configmap', 'new-one', '--from-literal=a=b'],
      ['delete', 'configmap', 'kplay-fleet-stores-2026-11'],
      ['patch', 'configmap', 'kplay-fleet-stores-2026-11', '--type', 'merge', '-p', '{"data":{"spent":"2"}}'],
      ['get', 'configmap', 'kplay-fleet-stores-2026-11', '--watch-only', '--request-timeout', '5s'],
      ['get', 'secret', 'store-kubeconfigs'],
      ['get', 'secrets'],
      ['-n', other, 'get', 'configmap', 'kplay-fleet-stores-2026-11'],
      ['get', 'jobs'],
      ['get', 'pods'],
      ['get', 'leases.coordination.k8s.io'],
      ['get', 'roles'],
      ['create', 'rolebinding', 'escalate', '--role', 'kplay-stores-2026-11', '--serviceaccount', `${ns}:default`],
    ];
    for (const args of forbidden) {
      const r = await asShard(args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).toMatch(/forbidden/i);
    }
  });

  it('the Job controller makes one pod per shard: completion index I in its env, the generated ServiceAccount, the bundle mounted', async () => {
    const jobNs = `${ns}-run`;
    await kubectl(['create', 'namespace', jobNs]);
    try {
      const created = await apply(await fleetJobObjects(opts({ namespace: jobNs, shards: 3 })), ['--server-side']);
      expect(created.stderr).toBe('');
      type Pod = { metadata: { annotations?: Record<string, string> }; spec: { serviceAccountName: string; containers: { env: { name: string; valueFrom?: unknown }[]; args: string[] }[]; volumes: { name: string; configMap?: { name: string } }[] } };
      let pods: Pod[] = [];
      const deadline = Date.now() + 60_000;
      while (pods.length < 3 && Date.now() < deadline) {
        const r = await kubectl(['-n', jobNs, 'get', 'pods', '-l', 'batch.kubernetes.io/job-name=kplay-stores-2026-11', '-o', 'json']);
        pods = (JSON.parse(r.stdout) as { items: Pod[] }).items;
        if (pods.length < 3) await new Promise((res) => setTimeout(res, 250));
      }
      expect(pods.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort()).toEqual(['0', '1', '2']);
      for (const p of pods) {
        expect(p.spec.serviceAccountName).toBe('kplay-stores-2026-11');
        const c = p.spec.containers[0];
        expect(c?.env.map((e) => e.name)).toContain('JOB_COMPLETION_INDEX'); // what $(JOB_COMPLETION_INDEX) in the args and subPathExpr expand from
        expect(c?.args).toContain('$(JOB_COMPLETION_INDEX)/3');
        expect(p.spec.volumes.find((v) => v.name === 'bundle')?.configMap?.name).toBe('kplay-stores-2026-11-bundle');
      }
    } finally {
      await kubectl(['delete', 'namespace', jobNs, '--wait=false'], { check: false });
    }
  });

  it('the pods as local processes: each shard, with exactly the Job\'s arguments, environment, bundle and least-privilege ServiceAccount, runs its part and reports into the coordination object', async () => {
    const env = sandboxEnv();
    const runNs = `${ns}-e2e`;
    await kubectl(['create', 'namespace', runNs]);
    try {
      // a small window over the three sandbox clusters (contexts from KUBECONFIG, as a mounted Secret gives them)
      const project = path.join(tmp, 'e2e');
      mkdirSync(path.join(project, 'roles/hello/tasks'), { recursive: true });
      writeFileSync(path.join(project, 'site.yml'), '- hosts: sandbox\n  serial: 2\n  roles: [hello]\n');
      writeFileSync(path.join(project, 'roles/hello/tasks/main.yml'), '- name: hello\n  ansible.builtin.debug:\n    msg: "hello from {{ inventory_hostname }}"\n');
      writeFileSync(path.join(project, 'inventory.yml'), 'all:\n  children:\n    sandbox:\n      clusters:\n        sandbox-1: {context: sandbox-1}\n        sandbox-2: {context: sandbox-2}\n        sandbox-3: {context: sandbox-3}\n');
      const objs = await fleetJobObjects({ playbook: path.join(project, 'site.yml'), inventory: path.join(project, 'inventory.yml'), shards: 2, runId: 'e2e', namespace: runNs, kubeconfigSecrets: ['sandbox-kubeconfig'] });
      const created = await apply(objs.filter((o) => o.kind !== 'Job'), ['--server-side']);
      expect(created.stderr).toBe('');

      // the pod's file system: the bundle laid out by the volume's items, the fleet kubeconfig with the ServiceAccount's files
      const job = objs.find((o) => o.kind === 'Job');
      const pod = (job?.spec as { template: { spec: { containers: { command: string[]; args: string[]; env: { name: string; value?: string }[] }[]; volumes: { name: string; configMap?: { items?: { key: string; path: string }[] } }[] } } }).template.spec;
      const container = pod.containers[0];
      if (!container) throw new Error('no container');
      const bundleCm = objs.find((o) => o.metadata.name === 'kplay-e2e-bundle');
      const bundleDir = path.join(tmp, 'e2e-bundle');
      for (const item of pod.volumes.find((v) => v.name === 'bundle')?.configMap?.items ?? []) {
        mkdirSync(path.dirname(path.join(bundleDir, item.path)), { recursive: true });
        writeFileSync(path.join(bundleDir, item.path), (bundleCm?.data as Record<string, string>)[item.key] ?? '');
      }
      const saDir = path.join(tmp, 'e2e-sa');
      mkdirSync(saDir);
      writeFileSync(path.join(saDir, 'token'), (await kubectl(['-n', runNs, 'create', 'token', 'kplay-e2e', '--duration', '10m'])).stdout.trim());
      const view = JSON.parse((await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])).stdout) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
      const mgmt = view.clusters[0]?.cluster;
      if (!mgmt) throw new Error('no cluster');
      writeFileSync(path.join(saDir, 'ca.crt'), Buffer.from(mgmt['certificate-authority-data'], 'base64'));
      const fleetKc = path.join(tmp, 'e2e-fleet.kubeconfig');
      const fleetCm = objs.find((o) => o.metadata.name === 'kplay-e2e-fleet');
      writeFileSync(fleetKc, ((fleetCm?.data as Record<string, string>).kubeconfig ?? '').replaceAll('/var/run/secrets/kubernetes.io/serviceaccount', saDir).replace('https://kubernetes.default.svc', mgmt.server));
      // `kplay` on the PATH, as in the image
      const bin = path.join(tmp, 'e2e-bin');
      mkdirSync(bin);
      writeFileSync(path.join(bin, 'kplay'), `#!/bin/sh\nexec "${process.execPath}" "${kplayBin}" "$@"\n`, { mode: 0o755 });

      const shard = (i: number): Promise<{ code: number; stdout: string; stderr: string }> => {
        const records = path.join(tmp, 'e2e-records', `shard-${i}`);
        mkdirSync(records, { recursive: true });
        // the pod's env, with this machine's paths for the mounts
        const podEnv: NodeJS.ProcessEnv = { JOB_COMPLETION_INDEX: String(i), PATH: `${bin}:${process.env.PATH ?? ''}` };
        for (const e of container.env) if (e.value !== undefined) podEnv[e.name] = e.value;
        Object.assign(podEnv, { KPLAY_FLEET_NAMESPACE: runNs, KPLAY_FLEET_KUBECONFIG: fleetKc, KPLAY_RECORD_DIR: records, HOME: tmp, KUBECONFIG: env.kubeconfig });
        const args = container.args.map((a) => a.replace('$(JOB_COMPLETION_INDEX)', String(i)));
        const [sh = '', ...shArgs] = container.command;
        return run(sh, [...shArgs, ...args], { cwd: bundleDir, env: podEnv, check: false, timeoutMs: 120_000 });
      };
      const results = await Promise.all([shard(0), shard(1)]);
      for (const r of results) expect(r.code, r.stdout.slice(-2000) + r.stderr).toBe(0);

      // every cluster ran once, in one shard; both shards reported into the coordination object
      const hellos = results.flatMap((r) => [...r.stdout.matchAll(/hello from (sandbox-\d)/g)].map((m) => m[1]));
      expect([...new Set(hellos)].sort()).toEqual(['sandbox-1', 'sandbox-2', 'sandbox-3']);
      const perShard = results.map((r) => new Set([...r.stdout.matchAll(/hello from (sandbox-\d)/g)].map((m) => m[1])));
      for (const c of ['sandbox-1', 'sandbox-2', 'sandbox-3']) expect(perShard.filter((set) => set.has(c)), c).toHaveLength(1);
      const data = (JSON.parse((await kubectl(['-n', runNs, 'get', 'configmap', 'kplay-fleet-e2e', '-o', 'json'])).stdout) as { data: Record<string, string> }).data;
      expect(data.shards).toBe('2');
      for (const i of [0, 1]) expect(JSON.parse(data[`shard.${i}`] ?? '{}')).toMatchObject({ shard: i, shards: 2, state: 'finished' });

      // a rerun pod of shard 0 finds its journal and resumes instead of starting over
      const again = await shard(0);
      expect(again.stderr).toContain('kplay: resuming shard 0 from its journal');
      expect(again.stderr).toMatch(/^resuming run \S+/m);
      expect(again.code, again.stdout.slice(-2000) + again.stderr).toBe(0);
      expect(again.stdout).not.toContain('hello from'); // its finished clusters are not run again
    } finally {
      await kubectl(['delete', 'namespace', runNs, '--wait=false'], { check: false });
    }
  }, 240_000);
});
