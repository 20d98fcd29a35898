// kplay drift against the real sandbox: hand-made additions are drift (k8s_apply and helm_release
// objects alike), attributed to the field manager that made them; controllers, autoscaler-owned
// replicas and drift_ignore rules hide exactly what they name; --repair takes back only the
// drifted objects; the fleet report has a table, JSON and JUnit forms.
//
// The sandbox has no metrics server, so its HPA controller never scales anything: the test writes
// the scale subresource as the HPA controller does (field manager kube-controller-manager), and an
// annotation as a mutating controller would (field manager linkerd-proxy-injector).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kplay, repoRoot } from '../helpers/cli.js';
import { auditSnapshot, kubectl, sandboxEnv, SANDBOX_ADMIN_USER, type SandboxEnv } from '../sandbox/env.js';

const playbook = path.join(repoRoot, 'test/fixtures/drift/fleet.yml');
const ns = `drift-${randomBytes(3).toString('hex')}`;
const records = mkdtempSync(path.join(os.tmpdir(), 'kplay-drift-records-'));
let env: SandboxEnv;

interface Field {
  path: string;
  change: 'changed' | 'added';
  manager?: string;
  kplay_owns: boolean;
}
/** One drifted thing of a cluster (a live object once, whatever the number of tasks managing it). */
interface DriftEntry {
  object: string;
  kind?: string;
  name?: string;
  namespace?: string;
  fields: Field[];
  tasks: { task: string; msg?: string }[];
}
interface Report {
  drift: boolean;
  exit_code: number;
  clusters: Record<string, { state: string; objects: number; drifted_objects: number; drift: DriftEntry[]; hidden: (Field & { rule: string; object: string; tasks: string[] })[] }>;
}

/** helm from the sandbox, with its caches in a temporary directory. */
const helmEnv = (): Record<string, string> => ({ KPLAY_HELM: path.join(env.binDir, 'helm'), HELM_CACHE_HOME: path.join(records, 'helm/cache'), HELM_CONFIG_HOME: path.join(records, 'helm/config'), HELM_DATA_HOME: path.join(records, 'helm/data') });
const kplayRun = (args: string[]): ReturnType<typeof kplay> => kplay(args, { env: helmEnv(), timeoutMs: 180_000 });
const drift = (extra: string[] = []): ReturnType<typeof kplay> =>
  kplayRun(['drift', playbook, '-i', env.inventory, '-e', JSON.stringify({ ns }), '--limit', 'sandbox-1,sandbox-2', '--record-dir', path.join(records, 'runs'), ...extra]);

const fieldsOf = (r: Report, cluster: string, name: string): Field[] => (r.clusters[cluster]?.drift ?? []).filter((o) => o.name === name).flatMap((o) => o.fields);

beforeAll(async () => {
  env = sandboxEnv();
  const r = await kplayRun(['run', playbook, '-i', env.inventory, '-e', JSON.stringify({ ns }), '--limit', 'sandbox-1,sandbox-2', '--no-lock']);
  if (r.code !== 0) throw new Error(`setup run failed (exit ${String(r.code)}):\n${r.stdout}\n${r.stderr}`);
}, 200_000);

afterAll(async () => {
  rmSync(records, { recursive: true, force: true });
  for (const context of ['sandbox-1', 'sandbox-2']) await kubectl(['delete', 'namespace', ns, '--wait=false'], { context, check: false });
});

describe('kplay drift', () => {
  it('reports every cluster in sync after a run, with a table', async () => {
    const r = await drift();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^CLUSTER\s+STATE\s+OBJECTS\s+DRIFTED\s+HIDDEN$/m);
    expect(r.stdout).toMatch(/^sandbox-1\s+in sync\s+\d+\s+0\s+0$/m);
    expect(r.stdout).toMatch(/^sandbox-2\s+in sync\s+\d+\s+0\s+0$/m);
  });

  it('reports hand-made additions and edits with their manager; hides controllers, the autoscaler and drift_ignore matches', async () => {
    const k = (args: string[]): ReturnType<typeof kubectl> => kubectl(['-n', ns, ...args]);
    await k(['set', 'env', 'deployment/web', 'FOO=bar']); // addition on a k8s_apply object
    await k(['label', 'deployment/rel-webapp', 'handedit=yes']); // addition on a helm_release object
    await k(['label', 'deployment/web', 'team=payments']); // hidden by the playbook's drift_ignore
    await k(['scale', 'deployment/web', '--replicas=3']); // a changed field kplay applies
    await k(['annotate', 'deployment/web', '--field-manager=linkerd-proxy-injector', 'linkerd.io/inject=enabled']); // a controller
    await k(['patch', 'deployment/auto', '--subresource=scale', '--field-manager=kube-controller-manager', '--type=merge', '-p', '{"spec":{"replicas":4}}']); // as the HPA does

    const r = await drift(['--output', 'json']);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.clusters['sandbox-2']?.state).toBe('in sync');
    expect(report.clusters['sandbox-1']?.state).toBe('drifted');

    const web = fieldsOf(report, 'sandbox-1', 'web');
    expect(web).toContainEqual(expect.objectContaining({ path: '.spec.template.spec.containers[name=web].env[name=FOO]', change: 'added', manager: 'kubectl-set', kplay_owns: false }));
    expect(web).toContainEqual(expect.objectContaining({ path: '.spec.replicas', change: 'changed', manager: 'kubectl', kplay_owns: false }));
    expect(web.map((f) => f.path).sort()).toEqual(['.spec.replicas', '.spec.template.spec.containers[name=web].env[name=FOO]']);
    expect(fieldsOf(report, 'sandbox-1', 'rel-webapp')).toEqual([expect.objectContaining({ path: '.metadata.labels.handedit', change: 'added', manager: 'kubectl-label' })]);
    expect(fieldsOf(report, 'sandbox-1', 'auto')).toEqual([]);

    const hidden = report.clusters['sandbox-1']?.hidden ?? [];
    const rule = (p: string): string | undefined => hidden.find((h) => h.path === p)?.rule;
    expect(rule('.metadata.labels.team')).toMatch(/^drift_ignore: kind=Deployment name=web path=\.metadata\.labels\.team/);
    expect(rule('.metadata.annotations["linkerd.io/inject"]')).toMatch(/manager linkerd-proxy-injector is a controller/);
    expect(rule('.spec.replicas')).toMatch(/autoscaler \(kube-controller-manager through the scale subresource\)/);
    expect(hidden).toHaveLength(3);
  });

  it('explains in text, and gives JUnit for CI', async () => {
    const text = await drift(['--explain', '--no-diff']);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('+ .spec.template.spec.containers[name=web].env[name=FOO]  added by kubectl-set');
    expect(text.stdout).toContain('~ .spec.replicas  changed by kubectl (Update); kplay no longer owns it');
    expect(text.stdout).toMatch(/Deployment drift-\w+\/web \.metadata\.labels\.team \(added by kubectl-label\): drift_ignore: .*\(the platform sets team labels\)/);
    expect(text.stdout).toMatch(/^sandbox-1\s+drifted\s+\d+\s+2\s+3$/m);
    const junit = await drift(['--output', 'junit']);
    expect(junit.code).toBe(3);
    expect(junit.stdout).toMatch(/^<\?xml/);
    expect(junit.stdout).toMatch(/<testsuite name="sandbox-1" tests="2" failures="2" errors="0">/);
    expect(junit.stdout).toMatch(/<testsuite name="sandbox-2" tests="1" failures="0" errors="0">/);
  });

  it('--repair takes back only the drifted objects, under a run record; the next check is clean', async () => {
    const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const audit2 = auditSnapshot(env.cluster('sandbox-2').auditLog);
    const r = await drift(['--repair', '--no-diff']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/repairing sandbox-1 \(/);
    expect(r.stdout).toContain('drift repaired on 1 cluster(s)');
    await audit.settle();
    const writes = audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns }).filter((e) => !e.requestURI.includes('dryRun=') && e.resource === 'deployments');
    expect([...new Set(writes.map((e) => e.name))].sort()).toEqual(['rel-webapp', 'web']);
    expect(audit2.events({ user: SANDBOX_ADMIN_USER, namespace: ns }).filter((e) => !e.requestURI.includes('dryRun='))).toEqual([]);

    const web = JSON.parse((await kubectl(['-n', ns, 'get', 'deployment', 'web', '-o', 'json'])).stdout) as { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: { replicas: number; template: { spec: { containers: { env?: unknown }[] } } } };
    expect(web.spec.replicas).toBe(2);
    expect(web.spec.template.spec.containers[0]?.env).toBeUndefined();
    expect(web.metadata.labels.team).toBe('payments'); // hidden: never written back
    expect(web.metadata.annotations['linkerd.io/inject']).toBe('enabled');
    const relLabels = (await kubectl(['-n', ns, 'get', 'deployment', 'rel-webapp', '-o', 'jsonpath={.metadata.labels}'])).stdout;
    expect(relLabels).not.toContain('handedit');
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'auto', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('4');
    expect(readdirSync(path.join(records, 'runs')).length).toBeGreaterThan(0);

    const again = await drift();
    expect(again.code, again.stdout).toBe(0);
  });

  it('a normal run leaves the autoscaler\'s replicas alone and changes nothing', async () => {
    const r = await kplayRun(['run', playbook, '-i', env.inventory, '-e', JSON.stringify({ ns }), '--limit', 'sandbox-1', '--no-lock']);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/sandbox-1\s+: ok=2\s+changed=0/);
    expect((await kubectl(['-n', ns, 'get', 'deployment', 'auto', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('4');
  });

  it('history verify: the in-cluster records are intact, and an edited one fails naming it', async () => {
    const verify = (): ReturnType<typeof kplay> => kplayRun(['history', 'verify', '-i', env.inventory, '--cluster', 'sandbox-1', '--record-dir', path.join(records, 'runs')]);
    const ok = await verify();
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/cluster sandbox-1: \d+ record\(s\), chain intact/);
    // the repair's record: edit what it says, as someone covering their tracks would
    const list = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'json'])).stdout) as { items: { metadata: { name: string }; data: Record<string, string> }[] };
    const newest = list.items.sort((a, b) => b.metadata.name.localeCompare(a.metadata.name))[0];
    if (!newest) throw new Error('no in-cluster record');
    const original = newest.data['record.json'] ?? '';
    expect(original).toContain('"prev":');
    const edited = original.replace(/"user":"[^"]*"/, '"user":"nobody"');
    expect(edited).not.toBe(original);
    await kubectl(['-n', 'kplay-system', 'patch', 'configmap', newest.metadata.name, '--type=merge', '-p', JSON.stringify({ data: { 'record.json': edited } })]);
    try {
      const bad = await verify();
      expect(bad.code, bad.stdout).toBe(3);
      expect(bad.stdout).toContain(`EDITED: cluster sandbox-1: ConfigMap kplay-system/${newest.metadata.name} in sandbox-1: record of run`);
      expect(bad.stdout).toContain('the audit trail was tampered with (exit 3)');
    } finally {
      await kubectl(['-n', 'kplay-system', 'patch', 'configmap', newest.metadata.name, '--type=merge', '-p', JSON.stringify({ data: { 'record.json': original } })]);
    }
    expect((await verify()).code).toBe(0);
  });

  it('rejects a malformed drift_ignore naming the entry', async () => {
    const r = await kplayRun(['drift', playbook, '-i', env.inventory, '-e', JSON.stringify({ ns, drift_ignore: [{ paht: '.spec' }] }), '--limit', 'sandbox-1']);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('drift_ignore[0]: unknown key "paht" (known: kind, name, namespace, path, manager, reason)');
  });
});

describe('kplay drift --repair with a module only a run-time include uses', () => {
  const dynNs = `drift-dyn-${randomBytes(3).toString('hex')}`;
  const dynPlaybook = path.join(repoRoot, 'test/fixtures/drift/dynamic-include.yml');
  const dynArgs = (): string[] => ['-i', env.inventory, '-e', JSON.stringify({ ns: dynNs }), '--limit', 'sandbox-1', '--record-dir', path.join(records, 'dyn-runs')];

  afterAll(async () => {
    await kubectl(['delete', 'namespace', dynNs, '--wait=false'], { context: 'sandbox-1', check: false });
  });

  it('runs that module for real: the include is not loaded before the repair, and its object is written', async () => {
    const first = await kplayRun(['run', dynPlaybook, ...dynArgs(), '--no-lock']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    // the include ran outside check mode: its object exists; remove it, and edit the static task's object
    await kubectl(['-n', dynNs, 'delete', 'configmap', 'marker']);
    await kubectl(['-n', dynNs, 'patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"mode":"green"}}']);

    const drifted = await kplayRun(['drift', dynPlaybook, ...dynArgs()]);
    expect(drifted.code, drifted.stdout + drifted.stderr).toBe(3);
    const r = await kplayRun(['drift', dynPlaybook, ...dynArgs(), '--repair', '--no-diff']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/only [^\n]*\bk8s\b[^\n]* tasks change anything/);
    expect((await kubectl(['-n', dynNs, 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.mode}'])).stdout).toBe('blue');
    // before the fix the included task ran in check mode and the marker stayed absent
    expect((await kubectl(['-n', dynNs, 'get', 'configmap', 'marker', '-o', 'jsonpath={.data.written}'])).stdout).toBe('yes');
  });
});

