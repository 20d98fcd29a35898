// helm_release `state: rollback` against real helm on the sandbox (sandbox-1), through `kplay run`:
// install 1.0.0 → upgrade 1.1.0 → roll back (live objects back to 1.0.0) → rerun is ok with no new
// revision → roll back to a given revision → check mode writes nothing → missing release and
// unknown revision fail with a clear message → a release left pending-upgrade by a killed helm is
// refused (on_pending: fail) or recovered first (on_pending: rollback). The steps build on each other and run in order.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { helm, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const suffix = randomBytes(3).toString('hex');
const ns = `rollback-${suffix}`;
const release = 'web';
const context = 'sandbox-1';

let env: SandboxEnv;
let tmp: string;
let inventory: string;
let playbook: string;

beforeAll(() => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-rollback-it-'));
  inventory = path.join(tmp, 'inventory.yml');
  writeFileSync(inventory, YAML.stringify({ all: { clusters: { [context]: { context, kubeconfig: env.kubeconfig } } } }));
  playbook = path.join(tmp, 'release.yml');
  writeFileSync(
    playbook,
    YAML.stringify([
      {
        name: 'rollback test',
        hosts: 'all',
        vars: { st: 'present', rev: 0, v: '1.0.0', rel: release, onp: 'fail' },
        tasks: [
          {
            name: 'webapp',
            helm_release: {
              name: '{{ rel }}',
              namespace: ns,
              create_namespace: true,
              chart: `${path.join(repoRoot, 'playbooks/charts')}/webapp-{{ v }}`,
              state: '{{ st }}',
              revision: '{{ rev }}',
              wait: true,
              timeout: 120,
              on_pending: '{{ onp }}',
            },
          },
        ],
      },
    ]),
  );
});

afterAll(async () => {
  await helm(['uninstall', release, '-n', ns, '--ignore-not-found'], { context, check: false });
  await helm(['uninstall', 'webcm', '-n', ns, '--ignore-not-found'], { context, check: false, env: { HELM_DRIVER: 'configmap' } });
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context, check: false });
  rmSync(tmp, { recursive: true, force: true });
});

interface TaskResult {
  status: string;
  msg?: string;
  data?: { revision?: number; rolled_back_to?: number; rolled_back_from?: number; chart_version?: string; status?: string };
}

async function run(vars: Record<string, string | number>, extra: string[] = [], extraEnv: Record<string, string> = {}): Promise<{ r: KplayResult; task: TaskResult }> {
  const r = await kplay(['run', playbook, '-i', inventory, '--no-lock', '-o', 'json', ...Object.entries(vars).flatMap(([k, v]) => ['-e', `${k}=${v}`]), ...extra], {
    env: {
      KPLAY_HELM: path.join(env.binDir, 'helm'),
      HELM_CACHE_HOME: path.join(tmp, 'helm/cache'),
      HELM_CONFIG_HOME: path.join(tmp, 'helm/config'),
      HELM_DATA_HOME: path.join(tmp, 'helm/data'),
      KPLAY_RECORD_DIR: path.join(tmp, 'records'),
      ...extraEnv,
    },
    timeoutMs: 230_000,
  });
  const task = jsonEvents(r.stdout).find((e) => e.type === 'task_result' && e.task === 'webapp') as TaskResult | undefined;
  if (!task) throw new Error(`no task result (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  return { r, task };
}

async function history(name = release, env: Record<string, string> = {}): Promise<{ revision: number; status: string; chart: string; description: string }[]> {
  const r = await helm(['history', name, '-n', ns, '-o', 'json'], { context, env });
  return JSON.parse(r.stdout) as { revision: number; status: string; chart: string; description: string }[];
}

/** The live Deployment's image and the ConfigMap's cache-seconds: what 1.0.0 and 1.1.0 differ in. */
async function live(): Promise<{ image: string; cacheSeconds: string }> {
  const d = JSON.parse((await kubectl(['get', 'deployment', `${release}-webapp`, '-n', ns, '-o', 'json'], { context })).stdout) as { spec: { template: { spec: { containers: { image: string }[] } } } };
  const cm = JSON.parse((await kubectl(['get', 'configmap', `${release}-webapp`, '-n', ns, '-o', 'json'], { context })).stdout) as { data: Record<string, string> };
  return { image: d.spec.template.spec.containers[0]?.image ?? '', cacheSeconds: cm.data['cache-seconds'] ?? '' };
}

describe('helm_release state: rollback', () => {
  it('installs 1.0.0 and upgrades to 1.1.0', async () => {
    expect((await run({ v: '1.0.0' })).task.status).toBe('changed');
    expect((await run({ v: '1.1.0' })).task.status).toBe('changed');
    expect((await history()).map((h) => h.chart)).toEqual(['webapp-1.0.0', 'webapp-1.1.0']);
    expect((await live()).image).toMatch(/:6\.14\.1$/);
  });

  it('rolls back to the previous revision: the live objects are 1.0.0 again', async () => {
    const { r, task } = await run({ st: 'rollback' });
    expect(r.code).toBe(0);
    expect(task.status).toBe('changed');
    expect(task.msg).toMatch(/rolled back .* from revision 2 .* to revision 1/);
    expect(task.data).toMatchObject({ rolled_back_to: 1, rolled_back_from: 2, revision: 3, chart_version: '1.0.0', status: 'deployed' });
    const h = await history();
    expect(h.map((e) => e.revision)).toEqual([1, 2, 3]);
    expect(h[2]).toMatchObject({ chart: 'webapp-1.0.0', status: 'deployed', description: 'Rollback to 1' });
    expect(await live()).toEqual({ image: expect.stringMatching(/:6\.13\.0$/) as unknown as string, cacheSeconds: '30' });
  });

  it('a rerun is ok and writes no revision', async () => {
    const { r, task } = await run({ st: 'rollback' });
    expect(r.code).toBe(0);
    expect(task.status).toBe('ok');
    expect(task.msg).toMatch(/already has revision 1's chart and values/);
    expect(task.data).toMatchObject({ revision: 3, rolled_back_to: 1 });
    expect((await history()).length).toBe(3);
  });

  it('rolls back to a given revision, then a rerun is ok', async () => {
    const { task } = await run({ st: 'rollback', rev: 2 });
    expect(task.status).toBe('changed');
    expect(task.data).toMatchObject({ rolled_back_to: 2, rolled_back_from: 3, revision: 4, chart_version: '1.1.0' });
    expect(await live()).toEqual({ image: expect.stringMatching(/:6\.14\.1$/) as unknown as string, cacheSeconds: '60' });
    const again = await run({ st: 'rollback', rev: 2 });
    expect(again.task.status).toBe('ok');
    expect((await history()).length).toBe(4);
  });

  it('check mode reports the rollback and writes nothing', async () => {
    const { r, task } = await run({ st: 'rollback', rev: 1 }, ['--check', '--diff']);
    expect(r.code).toBe(0);
    expect(task.status).toBe('changed');
    expect(task.msg).toMatch(/would roll back .* from revision 4 .* to revision 1/);
    expect(task.data).toMatchObject({ rolled_back_to: 1, rolled_back_from: 4, revision: 4 });
    expect((await history()).length).toBe(4);
    expect((await live()).image).toMatch(/:6\.14\.1$/);
    const diff = (task as { diff?: { label: string; before: string; after: string }[] }).diff ?? [];
    expect(diff.some((d) => /6\.14\.1/.test(d.before) && /6\.13\.0/.test(d.after))).toBe(true);
  });

  it('a revision not in the history fails with what to do next', async () => {
    const { r, task } = await run({ st: 'rollback', rev: 99 });
    expect(r.code).not.toBe(0);
    expect(task.status).toBe('failed');
    expect(task.msg).toContain(`revision 99 of release ${ns}/${release} is not in its history on cluster ${context}`);
    expect(task.msg).toContain('revisions kept: 1, 2, 3, 4');
    expect((await history()).length).toBe(4);
  });

  it('a release left pending-upgrade is refused, or recovered with on_pending: rollback', async () => {
    // A helm upgrade that waits forever (its pods can never be scheduled), killed with SIGKILL mid-wait.
    const values = path.join(tmp, 'stuck.yaml');
    writeFileSync(values, 'nodeSelector:\n  kplay.test/nowhere: "true"\n');
    const child = spawn(path.join(env.binDir, 'helm'), ['upgrade', release, path.join(repoRoot, 'playbooks/charts/webapp-1.1.0'), '-n', ns, '-f', values, '--wait=watcher', '--timeout', '300s', '--kubeconfig', env.kubeconfig, '--kube-context', context], {
      stdio: 'ignore',
      env: { ...process.env, HELM_CACHE_HOME: path.join(tmp, 'helm/cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm/config'), HELM_DATA_HOME: path.join(tmp, 'helm/data') },
    });
    const exited = new Promise((r) => child.on('close', r));
    try {
      const deadline = Date.now() + 60_000;
      while ((await history()).find((h) => h.revision === 5)?.status !== 'pending-upgrade') {
        if (Date.now() > deadline) throw new Error('the release never became pending-upgrade');
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const refused = await run({ st: 'rollback' });
    expect(refused.task.status).toBe('failed');
    expect(refused.task.msg).toMatch(/is pending-upgrade \(revision 5\).*on_pending: rollback/s);
    expect((await history()).length).toBe(5);

    const { r, task } = await run({ st: 'rollback', onp: 'rollback' });
    expect(r.code, r.stdout).toBe(0);
    expect(task.status).toBe('changed');
    // the pending revision 5 is rolled back to 4 (revision 6): that already is the rollback asked for
    expect(task.msg).toMatch(/rolled back pending revision 5 to revision 4; release .* already has revision 4's chart and values/);
    expect(task.data).toMatchObject({ revision: 6, rolled_back_to: 4, status: 'deployed' });
    const h = await history();
    // (helm rollback leaves the killed revision's record as it was)
    expect(h.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(h[5]).toMatchObject({ status: 'deployed', description: 'Rollback to 4', chart: 'webapp-1.1.0' });
    expect((await run({ st: 'rollback' })).task.status).toBe('ok');
  });

  it('a revision with state: present fails instead of being ignored', async () => {
    const { task } = await run({ st: 'present', v: '1.1.0', rev: 2 });
    expect(task.status).toBe('failed');
    expect(task.msg).toContain('revision: 2 is only used with state: rollback (state is present)');
    expect((await history()).length).toBe(6);
  });

  it('a release that is not installed fails with the release and cluster named', async () => {
    const { r, task } = await run({ st: 'rollback', rel: 'nosuch' });
    expect(r.code).not.toBe(0);
    expect(task.status).toBe('failed');
    expect(task.msg).toContain(`release ${ns}/nosuch is not installed on cluster ${context}: nothing to roll back`);
    expect(task.msg).toContain(`helm list -n ${ns}`);
  });
});

describe('helm_release state: rollback with HELM_DRIVER=configmap', () => {
  const cm = { HELM_DRIVER: 'configmap' };
  it('reads the revisions from the ConfigMap records: rolls back, then a rerun is ok', async () => {
    expect((await run({ v: '1.0.0', rel: 'webcm' }, [], cm)).task.status).toBe('changed');
    expect((await run({ v: '1.1.0', rel: 'webcm' }, [], cm)).task.status).toBe('changed');
    const { task } = await run({ st: 'rollback', rel: 'webcm' }, [], cm);
    expect(task.status).toBe('changed');
    expect(task.data).toMatchObject({ rolled_back_to: 1, rolled_back_from: 2, revision: 3, chart_version: '1.0.0' });
    expect((await run({ st: 'rollback', rel: 'webcm' }, [], cm)).task.status).toBe('ok');
    const h = await history('webcm', cm);
    expect(h.map((e) => `${e.revision}:${e.chart}:${e.status}`)).toEqual(['1:webapp-1.0.0:superseded', '2:webapp-1.1.0:superseded', '3:webapp-1.0.0:deployed']);
    // stored as ConfigMaps, not Secrets
    const cms = await kubectl(['get', 'configmaps', '-n', ns, '-l', 'owner=helm,name=webcm', '-o', 'name'], { context });
    expect(cms.stdout.trim().split('\n')).toHaveLength(3);
  });
});
