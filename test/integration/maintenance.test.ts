// The maintenance window end to end (issue 7), on the sandbox: playbooks/upgrade.yml with real
// helm, real HAProxy and the stand-in ingresses, through the built CLI. Also run records,
// `kplay history`, `kplay drift`, cluster locks and Ctrl-C.
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv } from '../sandbox/env.js';
import { sandboxInventory } from '../demo/inventory.mjs';
import { clientLoop, freePort, startHaproxy } from '../demo/lb.mjs';
import { startStandin } from '../demo/standin.mjs';

const CLUSTERS = ['sandbox-1', 'sandbox-2', 'sandbox-3'];
const ns = `e2e-${Math.random().toString(36).slice(2, 8)}`;
const work = mkdtempSync(path.join(os.tmpdir(), 'kplay-e2e-'));
const recordDir = path.join(work, 'runs');
const inventory = path.join(work, 'inventory.yml');
const playbook = path.join(repoRoot, 'playbooks/upgrade.yml');

interface Standin {
  close: () => Promise<void>;
  setBroken: (b: boolean) => void;
}
let standins: Record<string, Standin> = {};
let haproxy: { stop: () => Promise<void> } | undefined;
let frontendPort = 0;
let adminPort = 0;

function env(): Record<string, string> {
  const sb = sandboxEnv();
  return { KPLAY_HELM: path.join(sb.binDir, 'helm'), KPLAY_RECORD_DIR: recordDir };
}

function run(args: string[], extra: Partial<Parameters<typeof kplay>[1]> = {}): Promise<KplayResult> {
  return kplay([...args], { env: env(), timeoutMs: 600_000, ...extra });
}

const upgrade = (...args: string[]): Promise<KplayResult> => run(['run', playbook, '-i', inventory, '-e', `release_namespace=${ns}`, ...args]);

type Ev = Record<string, unknown>;
function recap(stdout: string): Record<string, Record<string, number>> {
  const r = jsonEvents(stdout).find((e: Ev) => e.type === 'recap');
  if (!r) throw new Error(`no recap in output:\n${stdout.slice(-3000)}`);
  return r.clusters as Record<string, Record<string, number>>;
}
const totalChanged = (stdout: string): number => Object.values(recap(stdout)).reduce((n, s) => n + (s.changed ?? 0), 0);

async function revision(cluster: string): Promise<number> {
  const r = await helm(['status', 'webapp', '-n', ns, '-o', 'json'], { context: cluster });
  return (JSON.parse(r.stdout) as { version: number }).version;
}

async function serverState(server: string): Promise<string> {
  // HAProxy runtime API over TCP: srv_admin_state is a bit field (0 = ready, 1/8 = maint/drain...).
  const net = await import('node:net');
  const text = await new Promise<string>((resolve, reject) => {
    const s = net.connect(adminPort, '127.0.0.1', () => s.end('show servers state be_webapp\n'));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
  const lines = text.trim().split('\n');
  const header = (lines[1] ?? '').replace(/^#\s*/, '').split(/\s+/);
  const row = lines.slice(2).map((l) => l.split(/\s+/)).find((f) => f[header.indexOf('srv_name')] === server);
  if (!row) throw new Error(`no server ${server} in ${text}`);
  const admin = Number(row[header.indexOf('srv_admin_state')]);
  return admin === 0 ? 'ready' : admin & 0x08 ? 'drain' : 'maint';
}

async function records(cluster: string): Promise<string[]> {
  const r = await kubectl(['-n', 'kplay-system', 'get', 'configmaps', '-l', 'kplay.dev/record=run', '-o', 'jsonpath={.items[*].metadata.labels.kplay\\.dev/run-id}'], { context: cluster, check: false });
  return r.stdout.split(/\s+/).filter(Boolean);
}

beforeAll(async () => {
  const sb = sandboxEnv();
  frontendPort = await freePort();
  adminPort = await freePort();
  const endpointPorts: Record<string, number> = {};
  for (const c of CLUSTERS) endpointPorts[c] = await freePort();
  writeFileSync(inventory, sandboxInventory({ kubeconfig: sb.kubeconfig, adminPort, frontendPort, endpointPorts }));
  standins = {};
  for (const c of CLUSTERS) standins[c] = await startStandin({ cluster: c, context: c, kubeconfig: sb.kubeconfig, port: endpointPorts[c] ?? 0, namespace: ns });
  haproxy = await startHaproxy({ dir: path.join(work, 'haproxy'), frontendPort, adminPort, servers: CLUSTERS.map((c) => ({ name: c, port: endpointPorts[c] ?? 0 })) });
});

afterAll(async () => {
  await haproxy?.stop();
  await Promise.all(Object.values(standins).map((s) => s.close()));
  for (const c of CLUSTERS) await kubectl(['delete', 'namespace', ns, '--wait=false'], { context: c, check: false });
});

describe('playbooks/upgrade.yml on 3 clusters', () => {
  it('installs 1.0.0 everywhere, then upgrades one cluster at a time while clients see no error', async () => {
    const install = await upgrade('-e', 'web_version=1.0.0', '-o', 'json');
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    for (const c of CLUSTERS) expect(await revision(c)).toBe(1);

    const loop = clientLoop(frontendPort, 25);
    const up = await upgrade('-o', 'json');
    const stats = await loop.stop();
    expect(up.code).toBe(0);
    const ev = jsonEvents(up.stdout);
    // One cluster per batch, in inventory order.
    expect(ev.filter((e: Ev) => e.type === 'play_start').map((e: Ev) => e.clusters)).toEqual(CLUSTERS.map((c) => [c]));
    for (const c of CLUSTERS) expect(await revision(c)).toBe(2);
    // Traffic flowed through HAProxy the whole time, and never reached a cluster mid-upgrade.
    expect(stats.failures).toEqual([]);
    expect(stats.ok).toBeGreaterThan(50);
    expect(Object.keys(stats.versions).some((k) => k.endsWith('@1.1.0'))).toBe(true);
    for (const c of CLUSTERS) expect(await serverState(c)).toBe('ready');
    // Run record: local JSON lines and one ConfigMap per touched cluster.
    const runId = String(ev.find((e: Ev) => e.type === 'run_start')?.run_id);
    const local = readFileSync(path.join(recordDir, `${runId}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Ev);
    expect(local[0]).toMatchObject({ type: 'run', run_id: runId, extra_var_names: ['release_namespace'], check: false, lock: true });
    expect(local.some((l) => l.type === 'task' && l.cluster === 'sandbox-2' && l.changed === true)).toBe(true);
    for (const c of CLUSTERS) expect(await records(c)).toContain(runId);
    const hist = await run(['history', '-i', inventory, '-o', 'json']);
    expect(hist.code).toBe(0);
    expect((JSON.parse(hist.stdout) as Ev[]).filter((r) => r.run_id === runId).map((r) => r.cluster).sort()).toEqual(CLUSTERS);
    const show = await run(['history', 'show', runId, '-i', inventory, '--record-dir', path.join(work, 'none')]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`run_id: ${runId}`);
  });

  it('a second run changes nothing, drains nothing, and writes no in-cluster record', async () => {
    const again = await upgrade('-o', 'json');
    expect(again.code).toBe(0);
    expect(totalChanged(again.stdout)).toBe(0);
    const drained = jsonEvents(again.stdout).filter((e: Ev) => e.type === 'task_result' && String(e.task).startsWith('Drain'));
    expect(drained.every((e: Ev) => e.status === 'skipped')).toBe(true);
    for (const c of CLUSTERS) expect(await revision(c)).toBe(2);
    const runId = String(jsonEvents(again.stdout).find((e: Ev) => e.type === 'run_start')?.run_id);
    for (const c of CLUSTERS) expect(await records(c)).not.toContain(runId);
    // ...but a local record of the run exists.
    expect(readdirSync(recordDir)).toContain(`${runId}.jsonl`);
  });

  it('kplay drift: exit 0 when in sync, 3 after a manual scale, naming the field', async () => {
    const clean = await run(['drift', playbook, '-i', inventory, '-e', `release_namespace=${ns}`]);
    expect(clean.stdout).toContain('no drift');
    expect(clean.code).toBe(0);
    await kubectl(['-n', ns, 'scale', 'deployment', 'webapp', '--replicas=5'], { context: 'sandbox-2' });
    const drift = await run(['drift', playbook, '-i', inventory, '-e', `release_namespace=${ns}`, '-o', 'json']);
    expect(drift.code).toBe(3);
    const out = JSON.parse(drift.stdout) as { drift: boolean; clusters: Record<string, { objects: number; drifted_objects: number; drift: { object: string; kind?: string; fields: { path: string }[]; tasks: { task: string }[]; diff: unknown[] }[] }> };
    expect(out.drift).toBe(true);
    expect(out.clusters['sandbox-1']?.drift).toEqual([]);
    // The plan task (check mode) and the upgrade it guards manage the same release: one drifted
    // object, reported once with both tasks, one diff, counted once.
    const two = out.clusters['sandbox-2'];
    expect(two?.drift.filter((d) => d.kind !== undefined).map((d) => [d.object, d.fields.map((f) => f.path), d.tasks.map((t) => t.task), d.diff.length])).toEqual([
      [`Deployment ${ns}/webapp`, ['.spec.replicas'], ['Plan the webapp release on sandbox-2', 'Upgrade webapp to 1.1.0'], 1],
    ]);
    expect(two?.drifted_objects).toBe(1);
    expect(two?.objects).toBe(out.clusters['sandbox-1']?.objects);
    const text = await run(['drift', playbook, '-i', inventory, '-e', `release_namespace=${ns}`, '--limit', 'sandbox-2']);
    expect(text.code).toBe(3);
    expect(text.stdout).toMatch(/^sandbox-2: DRIFT in 1 object\(s\), reported by 2 task\(s\)$/m);
    expect(text.stdout.split(`--- before: Deployment ${ns}/webapp`)).toHaveLength(2);
    expect(text.stdout).toMatch(/^sandbox-2\s+drifted\s+3\s+1\s+0$/m);
    // The next run repairs it (only on sandbox-2).
    const fix = await upgrade('-o', 'json');
    expect(fix.code).toBe(0);
    expect(recap(fix.stdout)['sandbox-2']?.changed).toBeGreaterThan(0);
    expect(recap(fix.stdout)['sandbox-1']?.changed).toBe(0);
    const replicas = await kubectl(['-n', ns, 'get', 'deployment', 'webapp', '-o', 'jsonpath={.spec.replicas}'], { context: 'sandbox-2' });
    expect(replicas.stdout).toBe('3');
  });

  it('a broken health check on cluster 2 stops the run: cluster 3 untouched, cluster 2 back in the LB', async () => {
    standins['sandbox-2']?.setBroken(true);
    try {
      const r = await upgrade('-e', 'web_version=1.0.0', '-e', 'health_retries=1', '-o', 'json');
      expect(r.code).toBe(2);
      const rc = recap(r.stdout);
      expect(rc['sandbox-2']?.failed, r.stdout.slice(-4000)).toBe(1);
      expect(rc['sandbox-3']).toBeUndefined();
      expect(await revision('sandbox-3')).toBe(2); // not downgraded
      expect(await serverState('sandbox-2')).toBe('ready');
      expect(r.stdout).toContain('The clusters after it were not touched');
      // Leave it drained when asked to.
      const r2 = await upgrade('-e', 'web_version=1.1.0', '-e', 'ui_message=changed', '-e', 'health_retries=1', '-e', '{leave_drained_on_failure: true}', '--limit', 'sandbox-2', '-o', 'json');
      expect(r2.code).toBe(2);
      expect(await serverState('sandbox-2')).toBe('drain');
    } finally {
      standins['sandbox-2']?.setBroken(false);
    }
    const heal = await upgrade('-o', 'json');
    expect(heal.code).toBe(0);
    for (const c of CLUSTERS) expect(await serverState(c)).toBe('ready');
  });
});

describe('cluster locks and Ctrl-C', () => {
  const lockPlaybook = path.join(work, 'hold.yml');
  beforeAll(() => {
    writeFileSync(
      lockPlaybook,
      [
        '- name: hold the lock',
        '  hosts: sandbox-1',
        '  tasks:',
        '    - name: change something',
        '      k8s_apply:',
        `        definition: { apiVersion: v1, kind: ConfigMap, metadata: { name: "hold-{{ run_id | downcase }}", namespace: ${ns} }, data: { a: "1" } }`,
        '    - name: hold',
        '      pause: { seconds: 60 }',
        '',
      ].join('\n'),
    );
  });

  it('a second run waits for the lock, then fails naming the holder; Ctrl-C releases the lock', async () => {
    let firstId = '';
    const first = run(['run', lockPlaybook, '-i', inventory, '-o', 'json'], {
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          const m = /"run_id":"([^"]+)"/.exec(seen);
          if (m?.[1]) firstId = m[1];
          if (seen.includes('"task":"hold"') && !seen.includes('second-started')) {
            seen += 'second-started';
            void (async () => {
              const second = await run(['run', lockPlaybook, '-i', inventory, '--lock-timeout', '3']);
              expect(second.code).toBe(2);
              expect(second.stdout).toContain(`locked by run ${firstId}`);
              expect(second.stdout).toContain('gave up after waiting 3s');
              child.kill('SIGINT');
            })();
          }
        });
      },
    });
    const r = await first;
    expect(r.code).toBe(130);
    const lease = await kubectl(['-n', 'kplay-system', 'get', 'lease', 'kplay-lock', '-o', 'jsonpath={.spec.holderIdentity}'], { context: 'sandbox-1' });
    expect(lease.stdout).toBe('');
  });

  it('the lock of a run killed with kill -9 on this host is taken over at once (its pid is gone)', async () => {
    const quick = path.join(work, 'quick.yml');
    writeFileSync(quick, readFileSync(lockPlaybook, 'utf8').replace(/\n {4}- name: hold\n {6}pause: \{ seconds: 60 \}\n/, '\n'));
    const first = run(['run', lockPlaybook, '-i', inventory, '-o', 'json'], {
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('"task":"hold"') && !seen.includes('killed')) {
            seen += 'killed';
            child.kill('SIGKILL');
          }
        });
      },
    });
    await first;
    const holder = await kubectl(['-n', 'kplay-system', 'get', 'lease', 'kplay-lock', '-o', 'jsonpath={.spec.holderIdentity}'], { context: 'sandbox-1' });
    expect(holder.stdout).not.toBe(''); // the killed run could not release it
    const started = Date.now();
    const second = await run(['run', quick, '-i', inventory, '--lock-timeout', '30']);
    expect(second.code, second.stdout).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`took over the cluster lock of run ${holder.stdout} .*: pid \\d+ on this host \\(.+\\) is gone`));
    expect(Date.now() - started).toBeLessThan(20_000); // not the 60 s lease expiry
  });

  it('Ctrl-C during a helm upgrade leaves no release pending and releases the lock', async () => {
    // The new pods can never be scheduled (a nodeSelector no node matches), so `helm upgrade
    // --wait` is still waiting when Ctrl-C comes: the interruption always lands mid-upgrade, with
    // the release pending-upgrade (a kwok rollout is otherwise over within a fraction of a second).
    const dir = path.join(work, 'stuck');
    for (const d of ['tasks', 'charts']) cpSync(path.join(repoRoot, 'playbooks', d), path.join(dir, d), { recursive: true });
    const stuck = path.join(dir, 'upgrade.yml');
    const text = readFileSync(playbook, 'utf8');
    const values = '          ui:\n            message: "{{ ui_message }}"\n';
    expect(text).toContain(values);
    writeFileSync(stuck, text.replace(values, `${values}          nodeSelector:\n            kplay.dev/no-such-node: "true"\n`));
    const r = await run(['run', stuck, '-i', inventory, '-e', `release_namespace=${ns}`, '-e', 'ui_message=interrupted', '--limit', 'sandbox-3'], {
      onSpawn: (child) => {
        let seen = '';
        child.stdout?.on('data', (d: Buffer) => {
          seen += d.toString();
          if (seen.includes('TASK [Upgrade webapp') && !seen.includes('(sent)')) {
            seen += '(sent)';
            void (async () => {
              // SIGINT once helm has marked the release pending-upgrade
              for (let i = 0; i < 300; i++) {
                const s = await helm(['status', 'webapp', '-n', ns, '-o', 'json'], { context: 'sandbox-3', check: false });
                if (/"status":"pending-upgrade"/.test(s.stdout)) break;
                await new Promise((res) => setTimeout(res, 100));
              }
              child.kill('SIGINT');
            })();
          }
        });
      },
    });
    expect(r.code, r.stdout.slice(-3000) + r.stderr).toBe(130);
    const status = await helm(['status', 'webapp', '-n', ns, '-o', 'json'], { context: 'sandbox-3' });
    const st = (JSON.parse(status.stdout) as { info: { status: string } }).info.status;
    expect(st).not.toMatch(/^pending/);
    const lease = await kubectl(['-n', 'kplay-system', 'get', 'lease', 'kplay-lock', '-o', 'jsonpath={.spec.holderIdentity}'], { context: 'sandbox-3' });
    expect(lease.stdout).toBe('');
  });
});
