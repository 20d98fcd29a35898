// k8s_apply against the real sandbox clusters, through the built CLI (`kplay run`).
// Runs use --no-lock: these tests are about the k8s modules, and other engineers' concurrent runs hold the cluster lock.
// Every test uses its own namespace (k8s-apply-<random>) and only deletes what it created.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at, jsonEvents, kplay, repoRoot } from '../helpers/cli.js';
import { auditSnapshot, kubectl, sandboxEnv, SANDBOX_ADMIN_USER, type AuditEvent, type SandboxEnv } from '../sandbox/env.js';

const fixtures = path.join(repoRoot, 'test/fixtures/k8s');
const rand = (): string => randomBytes(3).toString('hex');
let env: SandboxEnv;
const created: { context: string; args: string[] }[] = [];

/** Writes that really changed something (dry-run requests are audited as patch/create too). */
const realWrites = (events: AuditEvent[]): AuditEvent[] => events.filter((e) => !e.requestURI.includes('dryRun='));

function run(playbook: string, vars: Record<string, unknown>, extra: string[] = [], inventory?: string): ReturnType<typeof kplay> {
  return kplay(['run', path.join(fixtures, playbook), '-i', inventory ?? env.inventory, '-e', JSON.stringify(vars), '--no-lock', ...extra]);
}

beforeAll(() => {
  env = sandboxEnv();
});

afterAll(async () => {
  for (const c of created.reverse()) await kubectl(c.args, { context: c.context, check: false });
});

describe('k8s_apply', () => {
  const ns = `k8s-apply-${rand()}`;
  const canary = `Canary-${rand()}-Zq9`;
  const vars = { ns, canary, with_extra: true };
  beforeAll(() => {
    created.push({ context: 'sandbox-1', args: ['delete', 'namespace', ns, '--wait=false'] });
  });

  it('creates everything, then a second run changes nothing and sends no write', async () => {
    const first = await run('app.yml', vars);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/changed: \[sandbox-1\] => 6 created, 0 unchanged/);
    const audit = auditSnapshot(env.cluster('sandbox-1').auditLog);
    const second = await run('app.yml', vars);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toMatch(/ok: \[sandbox-1\] => 0 unchanged|6 unchanged/);
    expect(second.stdout).toMatch(/sandbox-1\s+: ok=2\s+changed=0/);
    await audit.settle();
    const mine = audit.events({ user: SANDBOX_ADMIN_USER, namespace: ns });
    // the dry-runs are there (proof the filter sees kplay's requests), but no real write
    expect(mine.length).toBeGreaterThan(0);
    expect(realWrites(mine)).toEqual([]);
    expect(realWrites(audit.events({ user: SANDBOX_ADMIN_USER, resource: 'namespaces' })).filter((e) => e.name === ns)).toEqual([]);
  });

  it('shows a kubectl scale in --check --diff and takes it back on the next run (a manual edit is drift)', async () => {
    await kubectl(['-n', ns, 'scale', 'deployment', 'web', '--replicas=5']);
    const check = await run('app.yml', vars, ['--check', '--diff']);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain('1 would be configured');
    expect(check.stdout).toMatch(/-\s+replicas: 5/);
    expect(check.stdout).toMatch(/\+\s+replicas: 3/);
    // check mode wrote nothing
    expect((await kubectl(['-n', ns, 'get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('5');

    const fix = await run('app.yml', vars);
    expect(fix.code, fix.stdout).toBe(0);
    expect(fix.stdout).toMatch(/1 configured, 5 unchanged/);
    expect(fix.stdout).toContain('took back from manual edits: kubectl: .spec.replicas');
    expect((await kubectl(['-n', ns, 'get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('3');
  });

  it('fails on a conflict with another applier, naming it and the field; force_conflicts takes the field over', async () => {
    const other = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  namespace: ${ns}\ndata:\n  LOG_LEVEL: debug\n`;
    await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=team-other', '-f', '-'], { input: other });
    const check = await run('app.yml', { ...vars, force: true }, ['--check', '--diff']);
    expect(check.stdout).toMatch(/-\s+LOG_LEVEL: debug/);
    expect(check.stdout).toMatch(/\+\s+LOG_LEVEL: info/);
    const noForce = await run('app.yml', vars);
    expect(noForce.code).toBe(2);
    expect(noForce.stdout).toContain('conflict with "team-other"');
    expect(noForce.stdout).toContain('.data.LOG_LEVEL');
    expect(noForce.stdout).toContain('ConfigMap ' + ns + '/web-config');
    expect(noForce.stdout).toContain('force_conflicts: true');
    expect((await kubectl(['-n', ns, 'get', 'cm', 'web-config', '-o', 'jsonpath={.data.LOG_LEVEL}'])).stdout).toBe('debug');
    const fix = await run('app.yml', { ...vars, force: true });
    expect(fix.code).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'cm', 'web-config', '-o', 'jsonpath={.data.LOG_LEVEL}'])).stdout).toBe('info');
  });

  it('never shows a Secret value (plain or base64) in diffs, verbose logs or JSON output', async () => {
    const newCanary = `Canary-${rand()}-Xk7`;
    const b64 = Buffer.from(newCanary).toString('base64');
    const oldB64 = Buffer.from(canary).toString('base64');
    const text = await run('app.yml', { ...vars, canary: newCanary, force: true }, ['--check', '--diff', '-vv']);
    const json = await run('app.yml', { ...vars, canary: newCanary, force: true }, ['--diff', '-v', '--output', 'json']);
    expect(text.code, text.stdout).toBe(0);
    expect(json.code, json.stdout).toBe(0);
    expect(text.stdout).toContain('******** (changed)');
    expect(jsonEvents(json.stdout).length).toBeGreaterThan(0);
    for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) {
      for (const secret of [newCanary, b64, canary, oldB64]) expect(out).not.toContain(secret);
    }
    // the value really was applied
    const stored = (await kubectl(['-n', ns, 'get', 'secret', 'web-secret', '-o', 'jsonpath={.data.password}'])).stdout;
    expect(stored).toBe(b64);
    // restore the original value for later tests
    expect((await run('app.yml', { ...vars, force: true })).code).toBe(0);
  });

  it('prunes an object removed from the source, shows it in the diff, and leaves unlabelled objects alone', async () => {
    const pv = { ...vars, prune: true, force: true };
    const labelled = await run('app.yml', pv);
    expect(labelled.code, labelled.stdout).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'cm', 'web-extra', '-o', 'jsonpath={.metadata.labels}'])).stdout).toContain('kplay.dev/owner');
    await kubectl(['-n', ns, 'create', 'configmap', 'not-mine', '--from-literal=x=y']);
    const again = await run('app.yml', pv);
    expect(again.stdout).toMatch(/sandbox-1\s+: ok=2\s+changed=0/);

    const pruned = await run('app.yml', { ...pv, with_extra: false }, ['--diff']);
    expect(pruned.code, pruned.stdout).toBe(0);
    expect(pruned.stdout).toContain('1 deleted');
    expect(pruned.stdout).toMatch(/--- before: ConfigMap [^\n]*\/web-extra/);
    expect(pruned.stdout).toMatch(/-\s+EXTRA: "?yes"?/);
    expect((await kubectl(['-n', ns, 'get', 'cm', 'web-extra'], { check: false })).code).not.toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'cm', 'not-mine'])).code).toBe(0);
    expect((await kubectl(['-n', ns, 'get', 'deploy', 'web'])).code).toBe(0);
    const idem = await run('app.yml', { ...pv, with_extra: false });
    expect(idem.stdout).toMatch(/sandbox-1\s+: ok=2\s+changed=0/);
  });

  it('rolls out with wait: true (all 4 replicas ready and updated when the task ends)', async () => {
    const r = await run('app.yml', { ...vars, force: true, replicas: 4, wait: true });
    expect(r.code, r.stdout).toBe(0);
    const ready = (await kubectl(['-n', ns, 'get', 'deploy', 'web', '-o', 'jsonpath={.status.readyReplicas}/{.status.updatedReplicas}'])).stdout;
    expect(ready).toBe('4/4');
  });
});

describe('k8s_apply CRD + CR + Namespace', () => {
  it('applies a shuffled file on a cluster without the CRD, first time, and check mode explains the pending CR', async () => {
    const id = rand();
    const ns = `k8s-apply-crd-${id}`;
    const group = `k8sapply${id}.kplay.test`;
    created.push({ context: 'sandbox-2', args: ['delete', 'crd', `gadgets.${group}`, '--wait=false'] });
    created.push({ context: 'sandbox-2', args: ['delete', 'namespace', ns, '--wait=false'] });
    const inv = inventoryFor(['sandbox-2']);
    const check = await run('crd.yml', { ns, group }, ['--check', '--diff'], inv);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain('CRD gadgets.' + group + ' created in the same task');
    expect((await kubectl(['get', 'crd', `gadgets.${group}`], { context: 'sandbox-2', check: false })).code).not.toBe(0);

    const r = await run('crd.yml', { ns, group }, [], inv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('3 created');
    const size = await kubectl(['-n', ns, 'get', `gadgets.${group}`, 'first', '-o', 'jsonpath={.spec.size}'], { context: 'sandbox-2' });
    expect(size.stdout).toBe('3');
    const again = await run('crd.yml', { ns, group }, [], inv);
    expect(again.stdout).toContain('3 unchanged');
  });
});

describe('k8s_apply order and reads', () => {
  it('registers a webhook after the objects it guards, creates objects that cannot exist yet without reading them, then no-ops', async () => {
    const id = rand();
    const ns = `k8s-apply-hook-${id}`;
    const group = `k8shook${id}.kplay.test`;
    created.push({ context: 'sandbox-3', args: ['delete', 'crd', `gizmos.${group}`, '--wait=false'] });
    created.push({ context: 'sandbox-3', args: ['delete', 'namespace', ns, '--wait=false'] });
    // cleaned up first (the list runs in reverse): while it exists, guarded objects cannot be written
    created.push({ context: 'sandbox-3', args: ['delete', 'validatingwebhookconfiguration', `guard.${group}`, '--ignore-not-found'] });
    const inv = inventoryFor(['sandbox-3']);
    const statsFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'kplay-stats-')), 'stats.jsonl');
    const r = await kplay(['run', path.join(fixtures, 'webhook.yml'), '-i', inv, '-e', JSON.stringify({ ns, group }), '--no-lock'], { env: { KPLAY_STATS_FILE: statsFile } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('7 created');
    // Everything but the namespace, the CRD and the webhook lives in the namespace or is of the
    // CRD this run creates, so it is created without being read: 3 reads answer 404 (a 4th: the
    // run record's kplay-system namespace, on a cluster that has none yet). Reading each one
    // first would add 4 (the ConfigMap, Service, Deployment and Gizmo).
    const stats = readFileSync(statsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { notFound: number; byVerb: Record<string, number> }).filter((s) => 'byVerb' in s);
    expect(stats.reduce((a, s) => a + s.notFound, 0)).toBeLessThanOrEqual(4);
    expect(stats.reduce((a, s) => a + (s.byVerb.apply ?? 0), 0)).toBeGreaterThanOrEqual(7);
    const guarded = await kubectl(['-n', ns, 'get', 'configmap', 'settings', '-o', 'jsonpath={.data.level}'], { context: 'sandbox-3' });
    expect(guarded.stdout).toBe('info');
    // the webhook is live: a guarded write now fails, so the no-op below must not write
    const refused = await kubectl(['-n', ns, 'label', 'configmap', 'settings', 'touched=yes'], { context: 'sandbox-3', check: false });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/guard\./);
    const again = await kplay(['run', path.join(fixtures, 'webhook.yml'), '-i', inv, '-e', JSON.stringify({ ns, group }), '--no-lock']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain('7 unchanged');
  });
});

describe('unreachable cluster', () => {
  it('exits 4 when one inventory cluster points at a closed port, while the others succeed', async () => {
    const port = await closedPort();
    const kc = YAML.parse(readFileSync(env.kubeconfig, 'utf8')) as { clusters: { name: string; cluster: Record<string, unknown> }[]; contexts: { name: string; context: Record<string, unknown> }[] };
    const base = kc.clusters.find((c) => c.name === 'sandbox-1');
    if (!base) throw new Error('no sandbox-1 cluster in the sandbox kubeconfig');
    kc.clusters.push({ name: 'dead', cluster: { ...base.cluster, server: `https://127.0.0.1:${port}` } });
    const ctx1 = kc.contexts.find((c) => c.name === 'sandbox-1');
    kc.contexts.push({ name: 'dead', context: { ...(ctx1?.context ?? {}), cluster: 'dead' } });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-k8s-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, YAML.stringify(kc));
    const inv = path.join(dir, 'inventory.yaml');
    // two entries on the dead cluster share one connection attempt; each failure names its entry
    writeFileSync(inv, YAML.stringify({ all: { clusters: { 'sandbox-1': { context: 'sandbox-1', kubeconfig }, dead: { context: 'dead', kubeconfig }, 'dead-too': { context: 'dead', kubeconfig } } } }));
    const ns = `k8s-apply-unr-${rand()}`;
    created.push({ context: 'sandbox-1', args: ['delete', 'namespace', ns, '--wait=false'] });
    const r = await run('cm.yml', { ns }, [], inv);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toMatch(/\[dead\][^\n]*cluster dead unreachable at https:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    expect(r.stdout).toMatch(/\[dead-too\][^\n]*cluster dead-too unreachable at https:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED/);
    expect(r.stdout).toMatch(/changed: \[sandbox-1\]/);
    expect((await kubectl(['-n', ns, 'get', 'cm', 'cm'])).code).toBe(0);
  });
});

describe('inventory entries on one cluster', () => {
  it('share one probe and one discovery, each with its own client', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-k8s-'));
    const inv = path.join(dir, 'inventory.yaml');
    writeFileSync(inv, YAML.stringify({ all: { clusters: { 'sandbox-2': { context: 'sandbox-2', kubeconfig: env.kubeconfig }, 'team-b': { context: 'sandbox-2', kubeconfig: env.kubeconfig } } } }));
    const ns = `k8s-apply-shared-${rand()}`;
    created.push({ context: 'sandbox-2', args: ['delete', 'namespace', ns, '--wait=false'] });
    const statsFile = path.join(dir, 'stats.jsonl');
    const r = await kplay(['run', path.join(fixtures, 'cm.yml'), '-i', inv, '-e', JSON.stringify({ ns }), '--no-lock', '--forks', '1'], { env: { KPLAY_STATS_FILE: statsFile } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    // the first entry creates them; the second finds them as they are
    expect(r.stdout).toMatch(/changed: \[sandbox-2\]/);
    expect(r.stdout).toMatch(/ok: \[team-b\]/);
    const stats = (file: string): { cluster?: string; byVerb?: Record<string, number> }[] => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cluster?: string; byVerb?: Record<string, number> }).filter((l) => l.byVerb);
    const discovery = (file: string): number => stats(file).reduce((n, l) => n + (l.byVerb?.discovery ?? 0), 0);
    expect(stats(statsFile).map((l) => l.cluster).sort()).toEqual(['sandbox-2', 'team-b']);
    // Namespaces and ConfigMaps need no discovery: one GET /version for both entries (2 with nothing shared)
    expect(discovery(statsFile)).toBe(1);
    // a kind kplay does not know without discovery (a PodTemplate) does: GET /version once, /api and /apis once (6 with nothing shared)
    const pdb = path.join(dir, 'pdb.yml');
    writeFileSync(pdb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'pod template', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'tpl', namespace: '{{ ns }}' }, template: { spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } } }] } }] }]));
    const statsFile2 = path.join(dir, 'stats2.jsonl');
    const r2 = await kplay(['run', pdb, '-i', inv, '-e', JSON.stringify({ ns }), '--no-lock', '--forks', '1'], { env: { KPLAY_STATS_FILE: statsFile2 } });
    expect(r2.code, r2.stdout + r2.stderr).toBe(0);
    expect(discovery(statsFile2)).toBe(3);
  });
});

describe('in-cluster run records', () => {
  it('one per changing run, linked to the one before, the newest --keep-records kept; two writes at the end of a run (head, record)', async () => {
    // the first run makes kplay-system itself
    await kubectl(['delete', 'namespace', 'kplay-system', '--ignore-not-found', '--wait=true', '--timeout=60s'], { context: 'sandbox-3' });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-rec-'));
    const ns = `k8s-rec-${rand()}`;
    created.push({ context: 'sandbox-3', args: ['delete', 'namespace', ns, '--wait=false'] });
    const pb = path.join(dir, 'play.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'sandbox-3', tasks: [{ name: 'cm', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns }, data: { v: '{{ v }}' } }] } }] }]));
    const records = async (): Promise<{ name: string; runId: string; prev: string | undefined }[]> => {
      const list = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'json'], { context: 'sandbox-3' })).stdout) as { items: { metadata: { name: string; labels: Record<string, string> }; data: Record<string, string> }[] };
      return list.items
        .map((cm) => ({ name: cm.metadata.name, runId: cm.metadata.labels['kplay.dev/run-id'] ?? '', prev: (JSON.parse(cm.data['record.json'] ?? '{}') as { prev?: { run_id?: string } | null }).prev?.run_id }))
        .sort((a, b) => b.name.localeCompare(a.name));
    };
    for (const v of ['1', '2', '3']) {
      const audit = auditSnapshot(env.cluster('sandbox-3').auditLog);
      const r = await kplay(['run', pb, '-i', env.inventory, '-e', JSON.stringify({ v }), '--keep-records', '2', '--record-dir', path.join(dir, 'runs'), ...(v === '3' ? [] : ['--no-lock'])]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      await audit.settle();
      const recordWrites = realWrites(audit.events({ user: SANDBOX_ADMIN_USER, namespace: 'kplay-system' })).filter((e) => e.resource === 'configmaps' && e.verb !== 'delete');
      // one write that moved the chain's head and one that stored the record; on the first run,
      // before them, one refused for want of kplay-system
      const ok = recordWrites.filter((e) => (e.code ?? 0) < 400);
      const seen = JSON.stringify(recordWrites.map((e) => `${e.code} ${e.verb} ${e.requestURI}`));
      expect(ok.filter((e) => e.name === 'kplay-run-head').map((e) => e.verb), seen).toEqual([v === '1' ? 'create' : 'patch']);
      expect(ok.filter((e) => e.name !== 'kplay-run-head').length, seen).toBe(1);
      expect(recordWrites.filter((e) => e.code === 404).length).toBe(v === '1' ? 1 : 0);
    }
    const kept = await records();
    expect(kept.length).toBe(2);
    const [newest, before] = [at(kept, 0), at(kept, 1)];
    expect(newest.prev).toBe(before.runId);
    const verify = await kplay(['history', 'verify', '-i', env.inventory, '--cluster', 'sandbox-3', '--record-dir', path.join(dir, 'runs')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('inventory entries that reach the same cluster share one record of the run, each listed with its own tasks', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-rec2-'));
    const ns = `k8s-rec2-${rand()}`;
    created.push({ context: 'sandbox-3', args: ['delete', 'namespace', ns, '--wait=false'] });
    const inv = path.join(dir, 'inv.yml');
    writeFileSync(inv, YAML.stringify({ all: { clusters: { blue: { context: 'sandbox-3', kubeconfig: env.kubeconfig }, green: { context: 'sandbox-3', kubeconfig: env.kubeconfig } } } }));
    const pb = path.join(dir, 'play.yml');
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'cm', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '{{ cluster_name }}', namespace: ns }, data: { v: '1' } }] } }] }]));
    const r = await kplay(['run', pb, '-i', inv, '--no-lock', '--record-dir', path.join(dir, 'runs'), '-o', 'json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const runId = String(jsonEvents(r.stdout).find((e) => e.type === 'run_start')?.run_id ?? '');
    expect(runId).not.toBe('');
    const cm = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmap', `kplay-run-${runId}`.toLowerCase(), '-o', 'json'], { context: 'sandbox-3' })).stdout) as { data: Record<string, string> };
    const rec = JSON.parse(cm.data['record.json'] ?? '{}') as { tasks: { cluster: string }[]; recap: Record<string, unknown> };
    expect(rec.tasks.map((t) => t.cluster).sort()).toEqual(['blue', 'green']);
    expect(Object.keys(rec.recap).sort()).toEqual(['blue', 'green']);
    const show = await kplay(['history', 'show', runId, '-i', inv, '-o', 'json', '--record-dir', path.join(dir, 'none')]);
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout) as { clusters: Record<string, { tasks: { cluster: string }[] }> };
    expect(Object.keys(shown.clusters).sort()).toEqual(['blue', 'green']);
    for (const [name, c] of Object.entries(shown.clusters)) expect(c.tasks.map((t) => t.cluster)).toEqual([name]);
    const verify = await kplay(['history', 'verify', '-i', inv, '--record-dir', path.join(dir, 'runs')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
  it('a run reads the cluster\'s run records once (under the lock as its first write goes out) and writes its record once; a no-op run reads none', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-rec3-'));
    const ns = `k8s-rec3-${rand()}`;
    created.push({ context: 'sandbox-3', args: ['delete', 'namespace', ns, '--wait=false'] });
    const inv = inventoryFor(['sandbox-3']);
    const pb = path.join(dir, 'play.yml');
    // two objects: planned with a GET each, so every LIST a run sends is a read of run records
    writeFileSync(pb, YAML.stringify([{ hosts: 'all', tasks: [{ name: 'cm', k8s_apply: { definition: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: ns }, data: { v: '{{ v }}' } }] } }] }]));
    const statsOf = (file: string): { list: number; apply: number } => {
      const out = { list: 0, apply: 0 };
      for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
        const o = JSON.parse(line) as { byVerb?: Record<string, number> };
        out.list += o.byVerb?.list ?? 0;
        out.apply += o.byVerb?.apply ?? 0;
      }
      return out;
    };
    const audit = auditSnapshot(env.cluster('sandbox-3').auditLog);
    const runs: { id: string; stats: { list: number; apply: number } }[] = [];
    // with the cluster lock (its Lease writes come before the first change and read nothing), then without
    for (const [i, v, lock] of [[1, '1', []], [2, '1', []], [3, '2', ['--no-lock']], [4, '2', ['--no-lock']]] as const) {
      const statsFile = path.join(dir, `stats-${i}.jsonl`);
      const r = await kplay(['run', pb, '-i', inv, '-e', `v=${v}`, '--record-dir', path.join(dir, 'runs'), '-o', 'json', ...lock], { env: { KPLAY_STATS_FILE: statsFile } });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      runs.push({ id: String(jsonEvents(r.stdout).find((e) => e.type === 'run_start')?.run_id ?? ''), stats: statsOf(statsFile) });
    }
    await audit.settle();
    const recordWrites = audit.events({ namespace: 'kplay-system' }).filter((e) => e.userAgent.startsWith('kplay') && e.resource === 'configmaps');
    // runs 1 and 3 changed the cluster: one LIST of the records each, one write of their record
    expect(runs.map((x) => x.stats.list)).toEqual([1, 0, 1, 0]);
    expect(recordWrites.filter((e) => e.verb === 'patch' && e.name !== 'kplay-run-head').map((e) => e.name)).toEqual([runs[0]?.id, runs[2]?.id].map((id) => `kplay-run-${id ?? ''}`.toLowerCase()));
    // and the chain of records links run 3 to run 1
    const verify = await kplay(['history', 'verify', '-i', inv, '--record-dir', path.join(dir, 'runs')]);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const cm = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmap', `kplay-run-${runs[2]?.id ?? ''}`.toLowerCase(), '-o', 'json'], { context: 'sandbox-3' })).stdout) as { data: Record<string, string> };
    expect((JSON.parse(cm.data['record.json'] ?? '{}') as { prev?: { run_id?: string } }).prev?.run_id).toBe(runs[0]?.id);
  });
});

describe('k8s_apply: what the apiserver says about a manifest', () => {
  const ns = `k8s-apply-warn-${rand()}`;
  const runOn2 = (playbook: string, name: string): ReturnType<typeof kplay> =>
    kplay(['run', path.join(fixtures, playbook), '-i', inventoryFor(['sandbox-2']), '-e', JSON.stringify({ ns, name }), '--no-lock']);
  beforeAll(() => {
    created.push({ context: 'sandbox-2', args: ['delete', 'namespace', ns, '--wait=false'] });
  });

  it('reports a warning (a deprecated field) on the object, registers it; an unchanged object is not asked again', async () => {
    const warning = `Deployment ${ns}/web: spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`;
    const first = await runOn2('deprecated-field.yml', 'web');
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain(`[sandbox-2] ${warning}`);
    expect(first.stdout).toContain(`warnings=${JSON.stringify([warning])}`);
    const again = await runOn2('deprecated-field.yml', 'web');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toMatch(/ok: \[sandbox-2\] => 2 unchanged/);
    expect(again.stdout).not.toContain('deprecated since');
    expect(again.stdout).toContain('warnings="none"');
  });

  it('fails on a field the kind does not declare, naming the object and the field and what to do; nothing is created', async () => {
    const r = await runOn2('undeclared-field.yml', 'web-typo');
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toContain(`${ns}/web-typo`);
    expect(r.stdout).toContain('.spec.replica: field not declared in schema');
    expect(r.stdout).toContain('correct the manifest');
    const got = await kubectl(['-n', ns, 'get', 'deploy', 'web-typo'], { context: 'sandbox-2', check: false });
    expect(got.code).not.toBe(0);
    expect(got.stderr).toMatch(/NotFound|not found/);
  });
});

describe('module docs', () => {
  it('documents every argument of k8s_apply, k8s_info and wait_for, with examples', async () => {
    for (const [name, argsList] of [
      ['k8s_apply', ['definition', 'src', 'template', 'namespace', 'state', 'field_manager', 'force_conflicts', 'prune', 'prune_id', 'wait', 'wait_timeout']],
      ['k8s_info', ['kind', 'api_version', 'namespace', 'name', 'label_selector', 'field_selector', 'wait', 'wait_condition', 'wait_timeout']],
      ['wait_for', ['kind', 'api_version', 'name', 'namespace', 'label_selector', 'state', 'condition', 'that', 'timeout']],
    ] as const) {
      const r = await kplay(['modules', name]);
      expect(r.code, r.stderr).toBe(0);
      for (const a of argsList) expect(r.stdout, `${name}.${a}`).toMatch(new RegExp(`\\| \`${a}\` \\|[^\\n]*\\|[^\\n]*\\|[^\\n]*\\| \\S[^\\n]{10,} \\|`));
      expect(r.stdout).toContain('```yaml');
    }
  });
});

/** An inventory with only some sandbox clusters. */
function inventoryFor(names: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-k8s-'));
  const file = path.join(dir, 'inventory.yaml');
  const clusters: Record<string, unknown> = {};
  for (const n of names) clusters[n] = { context: n, kubeconfig: env.kubeconfig };
  writeFileSync(file, YAML.stringify({ all: { clusters } }));
  return file;
}

/** A TCP port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}
