// helm_release against the real sandbox clusters, through `kplay run` with fixture playbooks and a
// generated inventory (groups with different replica counts). The steps build on each other and
// run in order: install → idempotent rerun → drift (check, then repair) → upgrade → pending lock
// → atomic failure → Ctrl-C during an upgrade → secrets never shown → uninstall.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { jsonEvents, kplay, repoRoot, type KplayResult } from '../helpers/cli.js';
import { HelmCli } from '../../src/helm/cli.js';
import { helm, kubectl, sandboxEnv, type SandboxEnv } from '../sandbox/env.js';

const chart = (v: string): string => path.resolve(repoRoot, 'playbooks/charts', `webapp-${v}`);
const fixtures = path.join(repoRoot, 'test/fixtures/helm');
const suffix = randomBytes(3).toString('hex');
const ns = `hx-${suffix}`;
const release = 'pod';
const deploy = `${release}-webapp`;
// Canaries: must never appear in any kplay output.
const TOKEN_CANARY = `tok-canary-${suffix}-7f3a`; // in `api_token` (a secret-named variable)
const PLAIN_CANARY = `plain-canary-${suffix}-91c2`; // in `canary_plain`, only secret because of the values key `password`

let env: SandboxEnv;
let tmp: string;
let inventory: string;
const outputs: string[] = [];

/** 1.1.0 for every step after the upgrade. */
let chartVars: string[] = [];

beforeAll(() => {
  env = sandboxEnv();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'kplay-helm-it-'));
  inventory = path.join(tmp, 'inventory.yml');
  const inv = {
    all: {
      vars: {
        release,
        ns,
        chart_dir: chart('1.0.0'),
        chart_version: '1.0.0',
        api_token: TOKEN_CANARY,
        canary_plain: PLAIN_CANARY,
        helm_wait: true,
        helm_timeout: 120,
        helm_atomic: false,
        on_pending: 'fail',
        extra_set: {},
      },
      children: {
        blue: { vars: { replicas: 2 }, clusters: { 'sandbox-1': { context: 'sandbox-1', kubeconfig: env.kubeconfig } } },
        green: { vars: { replicas: 1 }, clusters: { 'sandbox-2': { context: 'sandbox-2', kubeconfig: env.kubeconfig } } },
      },
    },
  };
  writeFileSync(inventory, YAML.stringify(inv));
});

afterAll(async () => {
  for (const context of ['sandbox-1', 'sandbox-2']) {
    await helm(['uninstall', release, '-n', ns, '--ignore-not-found'], { context, check: false });
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false'], { context, check: false });
  }
  rmSync(tmp, { recursive: true, force: true });
});

/** `kplay run` of a fixture playbook against the generated inventory (no cluster lock: other suites share the sandbox). */
async function run(playbook: string, args: string[] = [], onSpawn?: (c: ChildProcess) => void): Promise<KplayResult> {
  const r = await kplay(['run', path.join(fixtures, playbook), '-i', inventory, '--no-lock', ...args], {
    env: {
      KPLAY_HELM: path.join(env.binDir, 'helm'),
      HELM_CACHE_HOME: path.join(tmp, 'helm/cache'),
      HELM_CONFIG_HOME: path.join(tmp, 'helm/config'),
      HELM_DATA_HOME: path.join(tmp, 'helm/data'),
      KPLAY_RECORD_DIR: path.join(tmp, 'records'),
    },
    timeoutMs: 230_000,
    onSpawn,
  });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** The helm_release task results of a `-o json` run, by cluster. */
function results(r: KplayResult): Record<string, { status: string; msg?: string; data?: Record<string, unknown>; diff?: { label: string; before: string; after: string }[] }> {
  const out: Record<string, { status: string; msg?: string; data?: Record<string, unknown> }> = {};
  for (const e of jsonEvents(r.stdout)) {
    if (e.type === 'task_result' && e.task === 'webapp' || e.type === 'task_result' && e.task === 'uninstall') {
      out[String(e.cluster)] = e as { status: string; msg?: string; data?: Record<string, unknown> };
    }
  }
  return out;
}

async function status(context = 'sandbox-1'): Promise<{ status: string; revision: number } | undefined> {
  const r = await helm(['status', release, '-n', ns, '-o', 'json'], { context, check: false });
  if (r.code !== 0) return undefined;
  const j = JSON.parse(r.stdout) as { info: { status: string }; version: number };
  return { status: j.info.status, revision: j.version };
}

async function history(context = 'sandbox-1'): Promise<{ revision: number; status: string; description: string }[]> {
  const r = await helm(['history', release, '-n', ns, '-o', 'json'], { context });
  return JSON.parse(r.stdout) as { revision: number; status: string; description: string }[];
}

interface Deployment {
  metadata: { generation: number; annotations?: Record<string, string> };
  spec: { replicas: number; template: { metadata: { annotations?: Record<string, string> }; spec: { nodeSelector?: Record<string, string>; containers: { image: string; env?: { name: string; value?: string }[]; resources?: { limits?: Record<string, string> } }[] } } };
  status: { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
}

async function deployment(context = 'sandbox-1'): Promise<Deployment> {
  const r = await kubectl(['get', 'deployment', deploy, '-n', ns, '-o', 'json'], { context });
  return JSON.parse(r.stdout) as Deployment;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sandbox workaround: when the apiserver is slow (a loaded machine), the node lifecycle controller
 * marks the kwok node's pods NotReady and kwok never makes Running pods Ready again. Delete such
 * pods (their ReplicaSet recreates them, and kwok makes new pods Ready) and wait for availability,
 * so steps that wait on existing pods (rollbacks) test helm_release, not the sandbox.
 */
async function healPods(context = 'sandbox-1'): Promise<void> {
  const r = await kubectl(['get', 'pods', '-n', ns, '-o', 'json'], { context });
  const pods = (JSON.parse(r.stdout) as { items: { metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string; conditions?: { type: string; status: string }[] } }[] }).items;
  const stuck = pods.filter((p) => !p.metadata.deletionTimestamp && p.status.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status !== 'True'));
  if (stuck.length) await kubectl(['delete', 'pod', '-n', ns, '--wait=false', ...stuck.map((p) => p.metadata.name)], { context });
  const deadline = Date.now() + 90_000;
  for (;;) {
    const d = await deployment(context);
    if (d.status.readyReplicas === d.spec.replicas && d.status.observedGeneration === d.metadata.generation) return;
    if (Date.now() > deadline) throw new Error(`deployment ${deploy} not available after healing pods`);
    await sleep(500);
  }
}

describe('helm_release', () => {
  it('installs 1.0.0 with per-group values from the inventory (changed)', async () => {
    // check mode first: reports the install with the objects it would create, creates nothing
    const check = await run('release.yml', ['-l', 'sandbox-1', '--check', '--diff']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/changed: \[sandbox-1\] => would install .*install webapp 1\.0\.0/);
    expect(check.stdout).toContain(`+++ after: Deployment ${ns}/${deploy}`);
    expect(check.stdout).toContain('+  replicas: 2');
    expect(await status('sandbox-1')).toBeUndefined();
    expect((await kubectl(['get', 'namespace', ns], { check: false })).code).not.toBe(0);

    const r = await run('release.yml', ['-o', 'json']);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const res = results(r);
    expect(res['sandbox-1']?.status).toBe('changed');
    expect(res['sandbox-2']?.status).toBe('changed');
    expect(res['sandbox-1']?.data).toMatchObject({ name: release, namespace: ns, revision: 1, chart: 'webapp', chart_version: '1.0.0', app_version: '1.0.0', status: 'deployed' });
    expect(res['sandbox-1']?.data?.objects).toEqual(expect.arrayContaining([{ kind: 'Deployment', name: deploy, namespace: ns }, { kind: 'Service', name: deploy, namespace: ns }]));
    const d1 = await deployment('sandbox-1');
    const d2 = await deployment('sandbox-2');
    expect(d1.spec.replicas).toBe(2);
    expect(d2.spec.replicas).toBe(1);
    // values_files are rendered with the cluster's variables
    expect(d1.spec.template.metadata.annotations?.['kplay.test/cluster']).toBe('sandbox-1');
    expect(d2.spec.template.metadata.annotations?.['kplay.test/cluster']).toBe('sandbox-2');
    expect(d1.status.readyReplicas).toBe(2); // wait: true
    expect(await status('sandbox-1')).toEqual({ status: 'deployed', revision: 1 });
  });

  it('reruns as ok without running helm upgrade (revision unchanged)', async () => {
    const r = await run('release.yml', ['-o', 'json']);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const res = results(r);
    expect(res['sandbox-1']?.status).toBe('ok');
    expect(res['sandbox-2']?.status).toBe('ok');
    expect(res['sandbox-1']?.msg).toMatch(/up to date/);
    for (const c of ['sandbox-1', 'sandbox-2']) {
      expect(await status(c)).toEqual({ status: 'deployed', revision: 1 });
      expect(await history(c)).toHaveLength(1);
    }
  });

  it('check mode shows live drift (kubectl scale / set env) and changes nothing; the next run repairs it', async () => {
    await kubectl(['scale', 'deployment', deploy, '-n', ns, '--replicas', '4'], { context: 'sandbox-1' });
    await kubectl(['set', 'env', `deployment/${deploy}`, '-n', ns, 'PODINFO_LEVEL=debug'], { context: 'sandbox-1' });
    const check = await run('release.yml', ['-l', 'sandbox-1', '--check', '--diff']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/changed: \[sandbox-1\] => would upgrade .*live drift: Deployment/);
    expect(check.stdout).toContain('-  replicas: 4');
    expect(check.stdout).toContain('+  replicas: 2');
    expect(check.stdout).toMatch(/-\s+value: debug/);
    expect(check.stdout).toMatch(/\+\s+value: info/);
    let d = await deployment();
    expect(d.spec.replicas).toBe(4);
    expect(await status()).toEqual({ status: 'deployed', revision: 1 });

    const fix = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json']);
    expect(fix.code, fix.stdout.slice(-3000)).toBe(0);
    expect(results(fix)['sandbox-1']?.status).toBe('changed');
    expect(results(fix)['sandbox-1']?.msg).toMatch(/live drift/);
    d = await deployment();
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'PODINFO_LEVEL')?.value).toBe('info');
    expect(await status()).toEqual({ status: 'deployed', revision: 2 });

    const again = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json']);
    expect(results(again)['sandbox-1']?.status).toBe('ok');
  });

  it('upgrades to 1.1.0 and waits for the rollout', async () => {
    await healPods();
    chartVars = ['-e', `chart_dir=${chart('1.1.0')}`, '-e', 'chart_version=1.1.0'];
    const r = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json', ...chartVars]);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const res = results(r)['sandbox-1'];
    expect(res?.status).toBe('changed');
    expect(res?.msg).toMatch(/chart webapp 1\.0\.0 → webapp 1\.1\.0/);
    expect(res?.data).toMatchObject({ revision: 3, chart_version: '1.1.0', app_version: '1.1.0', status: 'deployed' });
    const d = await deployment();
    expect(d.spec.template.spec.containers[0]?.image).toMatch(/:6\.14\.1$/);
    expect(d.status.observedGeneration).toBe(d.metadata.generation);
    expect(d.status.updatedReplicas).toBe(2);
    expect(d.status.readyReplicas).toBe(2);
  });

  it('refuses a release left pending-upgrade (on_pending: fail) and recovers it (on_pending: rollback)', async () => {
    await healPods();
    // A helm upgrade that waits forever (pods can never be scheduled), killed with SIGKILL mid-wait.
    const values = path.join(tmp, 'stuck.yaml');
    writeFileSync(values, 'replicaCount: 2\nnodeSelector:\n  kplay.test/nowhere: "true"\n');
    const child = spawn(path.join(env.binDir, 'helm'), ['upgrade', release, chart('1.1.0'), '-n', ns, '-f', values, '--wait=watcher', '--timeout', '300s', '--kubeconfig', env.kubeconfig, '--kube-context', 'sandbox-1'], {
      stdio: 'ignore',
      env: { ...process.env, HELM_CACHE_HOME: path.join(tmp, 'helm/cache'), HELM_CONFIG_HOME: path.join(tmp, 'helm/config'), HELM_DATA_HOME: path.join(tmp, 'helm/data') },
    });
    const exited = new Promise((r) => child.on('close', r));
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const s = await status();
        const d = await deployment();
        if (s?.status === 'pending-upgrade' && d.spec.template.spec.nodeSelector) break;
        if (Date.now() > deadline) throw new Error(`release never became pending-upgrade: ${JSON.stringify(s)}`);
        await sleep(200);
      }
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(await status()).toEqual({ status: 'pending-upgrade', revision: 4 });

    const refused = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json', ...chartVars]);
    expect(refused.code).not.toBe(0);
    const f = results(refused)['sandbox-1'];
    expect(f?.status).toBe('failed');
    expect(f?.msg).toMatch(/pending-upgrade/);
    expect(f?.msg).toMatch(/on_pending: rollback/);
    expect((await status())?.status).toBe('pending-upgrade');

    const recovered = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json', ...chartVars, '-e', 'on_pending=rollback']);
    expect(recovered.code, recovered.stdout).toBe(0);
    const ok = results(recovered)['sandbox-1'];
    expect(ok?.status).toBe('changed');
    expect(ok?.msg).toMatch(/rolled back pending revision 4 to revision 3/);
    const s = await status();
    // revision 5 is the rollback to 3; the rolled-back release already matches, so no upgrade after it
    expect(s).toEqual({ status: 'deployed', revision: 5 });
    expect(ok?.msg).toMatch(/is up to date/);
    const d = await deployment();
    expect(d.spec.template.spec.nodeSelector).toBeUndefined();
    // the recovered release is up to date: a plain rerun is ok
    const rerun = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json', ...chartVars]);
    expect(results(rerun)['sandbox-1']?.status).toBe('ok');
    expect((await status())?.revision).toBe(s?.revision);
  });

  it('atomic: a failing upgrade is rolled back', async () => {
    // A cpu limit that is not a quantity renders fine but cannot be applied: the upgrade fails at
    // once, reliably (under kwok every pod becomes Ready, so "never ready" images do not fail).
    await healPods();
    const before = await status();
    const r = await run('release.yml', ['-l', 'sandbox-1', '-o', 'json', ...chartVars, '-e', JSON.stringify({ helm_atomic: true, extra_set: { 'resources.limits.cpu': 'bogus' } })]);
    expect(r.code).not.toBe(0);
    const res = results(r)['sandbox-1'];
    expect(res?.status).toBe('failed');
    expect(res?.msg).toMatch(/Error: UPGRADE FAILED/);
    expect(res?.msg).toMatch(/quantities must match/);
    expect(res?.msg).toMatch(/atomic: release .* is now deployed/);
    const after = await status();
    expect(after?.status).toBe('deployed');
    expect(after?.revision).toBe((before?.revision ?? 0) + 2); // the failed upgrade, then the rollback
    const h = await history();
    expect(h[h.length - 2]?.status).toBe('failed');
    expect(h[h.length - 1]?.description).toMatch(/Rollback to/);
    // the failed upgrade changed the cluster (two revisions, as the history says): the task is
    // changed, names them, and the run is recorded in the cluster (issue 51 item 3)
    const failed = jsonEvents(r.stdout).find((e) => e.type === 'task_result' && e.task === 'webapp');
    expect(failed?.changed).toBe(true);
    const record = (n: number): string => `sh.helm.release.v1.${release}.v${n}`;
    const from = before?.revision ?? 0;
    expect((res?.data?.written as { name: string; action: string; kind: string }[] | undefined)?.map((w) => `${w.action} ${w.kind} ${w.name}`)).toEqual([`created Secret ${record(from + 1)}`, `created Secret ${record(from + 2)}`]);
    expect(res?.msg).toMatch(/written before the failure \(2\)/);
    const runId = String(jsonEvents(r.stdout).find((e) => e.type === 'run_start')?.run_id ?? '');
    const cm = JSON.parse((await kubectl(['-n', 'kplay-system', 'get', 'configmap', `kplay-run-${runId}`.toLowerCase(), '-o', 'json'], { context: 'sandbox-1' })).stdout) as { data: Record<string, string> };
    const rec = JSON.parse(cm.data['record.json'] ?? '{}') as { tasks: { task: string; cluster: string; status: string; changed: boolean }[] };
    expect(rec.tasks.find((t) => t.task === 'webapp' && t.cluster === 'sandbox-1')).toMatchObject({ status: 'failed', changed: true });
    expect((await deployment()).spec.template.spec.containers[0]?.resources?.limits?.cpu).toBeUndefined();
  });

  it('Ctrl-C during an upgrade stops helm with SIGTERM and waits: the release ends failed, not pending', async () => {
    await healPods();
    let child: ChildProcess | undefined;
    const running = run('release.yml', ['-l', 'sandbox-1', ...chartVars, '-e', JSON.stringify({ extra_set: { 'nodeSelector.kplay\\.test/nowhere': 'true' } })], (c) => (child = c));
    const deadline = Date.now() + 60_000;
    for (;;) {
      if ((await status())?.status === 'pending-upgrade') break;
      if (Date.now() > deadline) throw new Error('the upgrade never started');
      await sleep(200);
    }
    await sleep(1000); // helm is now waiting for pods that cannot be scheduled
    child?.kill('SIGINT');
    const r = await running;
    expect(r.code).toBe(130);
    expect(r.stdout).toMatch(/interrupted: helm was stopped \(SIGTERM\) and has exited; release .* is now failed/);
    expect((await status())?.status).toBe('failed');
  });

  it('never shows secret values (text --diff -v, and --output json)', async () => {
    const NEW_PLAIN = `plain-canary2-${suffix}-5d1e`;
    const NEW_TOKEN = `tok-canary2-${suffix}-0b9d`;
    // (no healPods: the interrupted upgrade left pods that cannot be scheduled; this upgrade replaces them)
    // a real upgrade whose diff contains the changed secret values
    const text = await run('release.yml', ['-l', 'sandbox-1', '--diff', '-v', ...chartVars, '-e', `canary_plain=${NEW_PLAIN}`, '-e', `api_token=${NEW_TOKEN}`]);
    expect(text.code, text.stdout.slice(-3000)).toBe(0);
    expect(text.stdout).toMatch(/values changed: .*auth\.password/);
    expect(text.stdout).toContain('********');
    const json = await run('release.yml', ['-l', 'sandbox-1', '--check', '--diff', '-o', 'json', ...chartVars, '-e', `canary_plain=${PLAIN_CANARY}`, '-e', `api_token=${TOKEN_CANARY}`]);
    expect(json.code, json.stdout.slice(-3000)).toBe(0);
    expect(results(json)['sandbox-1']?.status).toBe('changed');
    const diffText = JSON.stringify(results(json)['sandbox-1']?.diff);
    expect(diffText).toContain('helm release');
    expect(diffText).toContain('******** (changed)'); // a changed secret is shown as changed, never in clear
    // run records too: local JSON lines and the in-cluster record ConfigMaps
    const recordDir = path.join(tmp, 'records');
    expect(existsSync(recordDir)).toBe(true);
    for (const f of readdirSync(recordDir)) outputs.push(readFileSync(path.join(recordDir, f), 'utf8'));
    outputs.push((await kubectl(['get', 'configmaps', '-A', '-o', 'json'], { context: 'sandbox-1' })).stdout);
    for (const out of outputs) {
      for (const canary of [TOKEN_CANARY, PLAIN_CANARY, NEW_PLAIN, NEW_TOKEN]) {
        expect(out.includes(canary), `canary ${canary} leaked`).toBe(false);
        expect(out.includes(Buffer.from(canary).toString('base64')), `base64 of ${canary} leaked`).toBe(false);
      }
    }
  });

  it('uninstalls, and uninstalling again is ok', async () => {
    const r = await run('uninstall.yml', ['-o', 'json']);
    expect(r.code, r.stdout.slice(-3000)).toBe(0);
    const res = results(r);
    expect(res['sandbox-1']?.status).toBe('changed');
    expect(res['sandbox-2']?.status).toBe('changed');
    expect(await status('sandbox-1')).toBeUndefined();
    expect(await status('sandbox-2')).toBeUndefined();
    const again = await run('uninstall.yml', ['-o', 'json']);
    expect(again.code, again.stdout.slice(-3000)).toBe(0);
    expect(results(again)['sandbox-1']?.status).toBe('ok');
    expect(results(again)['sandbox-2']?.status).toBe('ok');
  });
});

describe('values handed to helm', () => {
  it('keep their types: strings YAML 1.1 would read as booleans, dates or nulls stay strings', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-helm-types-'));
    try {
      mkdirSync(path.join(dir, 'templates'), { recursive: true });
      writeFileSync(path.join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: types\nversion: 0.1.0\n');
      const keys = ['yes', 'on', 'off', 'upper', 'date', 'tilde', 'octal', 'num', 'flag', 'nested'];
      writeFileSync(path.join(dir, 'templates/cm.yaml'), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: types\ndata:\n${keys.map((k) => `  ${k}: {{ kindOf .Values.${k} | quote }}`).join('\n')}\n  inner: {{ .Values.nested.v | quote }}\n`);
      const cli = await HelmCli.detect({ binary: path.join(env.binDir, 'helm'), target: { kubeContext: 'sandbox-1', kubeconfig: env.kubeconfig }, env: { ...process.env, HELM_CACHE_HOME: path.join(dir, 'hc'), HELM_CONFIG_HOME: path.join(dir, 'hcfg'), HELM_DATA_HOME: path.join(dir, 'hd') } });
      const values = { yes: 'yes', on: 'on', off: 'OFF', upper: 'NO', date: '2001-12-14', tilde: '~', octal: '0777', num: 3, flag: true, nested: { v: 'y' } };
      const out = await cli.template('types', 'default', { chart: dir }, values, { isUpgrade: false, skipCrds: false, dependencyUpdate: false });
      const cm = YAML.parse(out) as { data: Record<string, string> };
      expect(cm.data).toEqual({ yes: 'string', on: 'string', off: 'string', upper: 'string', date: 'string', tilde: 'string', octal: 'string', num: 'float64', flag: 'bool', nested: 'map', inner: 'y' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("helm's own work that kplay does cheaper, with the same outcome", () => {
  // kplay's helm behind a wrapper that logs each command line, so the flags are visible.
  let dir: string;
  let calls: string;
  let wrapper: string;
  const chartDir = (): string => path.join(dir, 'chart');
  const writeChart = (templates: Record<string, string>, version = '0.1.0'): void => {
    rmSync(chartDir(), { recursive: true, force: true });
    mkdirSync(path.join(chartDir(), 'templates'), { recursive: true });
    writeFileSync(path.join(chartDir(), 'Chart.yaml'), `apiVersion: v2\nname: checks\nversion: ${version}\n`);
    writeFileSync(path.join(chartDir(), 'values.yaml'), 'greeting: hi\n');
    for (const [f, text] of Object.entries(templates)) writeFileSync(path.join(chartDir(), 'templates', f), text);
  };
  const cm = (name: string, extra = ''): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n${extra}`;
  const nsOf = (tag: string): string => `hc-${suffix}-${tag}`;
  const play = (namespace: string, greeting = 'hi'): string => {
    const f = path.join(dir, `play-${namespace}-${greeting}.yml`);
    writeFileSync(f, `- hosts: all\n  tasks:\n    - name: checks\n      helm_release:\n        name: checks\n        namespace: ${namespace}\n        create_namespace: true\n        chart: ${chartDir()}\n        values:\n          greeting: ${greeting}\n`);
    return f;
  };
  const runPlay = async (file: string): Promise<{ status: string; msg: string; helm: string[] }> => {
    const before = existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0;
    const inv = path.join(dir, 'inv.yml');
    writeFileSync(inv, YAML.stringify({ all: { clusters: { 'sandbox-1': { context: 'sandbox-1', kubeconfig: env.kubeconfig } } } }));
    const r = await kplay(['run', file, '-i', inv, '--no-lock', '-o', 'json'], {
      env: { KPLAY_HELM: wrapper, HELM_CACHE_HOME: path.join(dir, 'hc'), HELM_CONFIG_HOME: path.join(dir, 'hcfg'), HELM_DATA_HOME: path.join(dir, 'hd'), KPLAY_RECORD_DIR: path.join(dir, 'records') },
      timeoutMs: 120_000,
    });
    const res = jsonEvents(r.stdout).find((e) => e.type === 'task_result' && e.task === 'checks') as { status: string; msg: string } | undefined;
    if (!res) throw new Error(`no task result:\n${r.stdout}\n${r.stderr}`);
    const helmLines = readFileSync(calls, 'utf8').split('\n').filter(Boolean).slice(before);
    return { status: res.status, msg: res.msg, helm: helmLines.filter((l) => l.startsWith('upgrade ')) };
  };
  const configMaps = async (namespace: string): Promise<string[]> => {
    const r = await kubectl(['get', 'configmaps', '-n', namespace, '-o', 'jsonpath={.items[*].metadata.name}'], { context: 'sandbox-1', check: false });
    return r.stdout.split(' ').filter((n) => n && n !== 'kube-root-ca.crt').sort();
  };

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'kplay-helm-checks-'));
    calls = path.join(dir, 'calls.log');
    wrapper = path.join(dir, 'helm.sh');
    writeFileSync(wrapper, `#!/bin/sh\necho "$*" >> "${calls}"\nexec "${path.join(env.binDir, 'helm')}" "$@"\n`, { mode: 0o755 });
  });
  afterAll(async () => {
    for (const tag of ['a', 'b', 'c']) await kubectl(['delete', 'namespace', nsOf(tag), '--ignore-not-found', '--wait=false'], { context: 'sandbox-1', check: false });
    rmSync(dir, { recursive: true, force: true });
  });

  it('skips the client-side OpenAPI check where the server checks every field: an unknown field is still refused, naming it', async () => {
    const ns1 = nsOf('a');
    writeChart({ 'good.yaml': cm('good'), 'z-bad.yaml': cm('bad', 'bogus: 1\n') });
    const bad = await runPlay(play(ns1));
    expect(bad.status).toBe('failed');
    expect(bad.msg).toMatch(/bogus: field not declared in schema/);
    expect(bad.helm).toHaveLength(1);
    expect(bad.helm[0]).toContain('--disable-openapi-validation');
    // kplay made the namespace as helm 4 does (server-side apply by `helm`, label name), so helm was not asked to.
    expect(bad.helm[0]).not.toContain('--create-namespace');
    const nsObj = JSON.parse((await kubectl(['get', 'namespace', ns1, '-o', 'json', '--show-managed-fields'], { context: 'sandbox-1' })).stdout) as { metadata: { labels: Record<string, string>; managedFields: { manager: string; operation: string }[] } };
    expect(nsObj.metadata.labels.name).toBe(ns1);
    expect(nsObj.metadata.managedFields.map((m) => `${m.manager}/${m.operation}`)).toContain('helm/Apply');
    // The fixed chart: an upgrade of the failed (server-side applied) release, checked by the server too.
    writeChart({ 'good.yaml': cm('good'), 'z-bad.yaml': cm('bad') }, '0.1.1');
    const fixed = await runPlay(play(ns1));
    expect(fixed.status).toBe('changed');
    expect(fixed.helm[0]).toContain('--disable-openapi-validation');
    expect(await configMaps(ns1)).toEqual(['bad', 'good']);
    expect((await runPlay(play(ns1))).helm).toEqual([]);
  });

  it("keeps helm's check where it checks something: a List document (its items are checked before anything is applied)", async () => {
    const ns2 = nsOf('b');
    writeChart({ 'a-good.yaml': cm('good'), 'list.yaml': `apiVersion: v1\nkind: List\nitems:\n  - ${cm('bad', 'bogus: 1\n').trimEnd().split('\n').join('\n    ')}\n` });
    const r = await runPlay(play(ns2));
    expect(r.status).toBe('failed');
    expect(r.msg).toMatch(/unknown field "bogus"/);
    expect(r.helm[0]).not.toContain('--disable-openapi-validation');
    expect(await configMaps(ns2)).toEqual([]);
  });

  it('keeps it for a release helm applied client-side (csa), whose upgrades send no fieldValidation=Strict', async () => {
    const ns3 = nsOf('c');
    writeChart({ 'good.yaml': cm('good') });
    await helm(['install', 'checks', chartDir(), '-n', ns3, '--create-namespace', '--server-side=false'], { context: 'sandbox-1', env: { HELM_CACHE_HOME: path.join(dir, 'hc'), HELM_CONFIG_HOME: path.join(dir, 'hcfg'), HELM_DATA_HOME: path.join(dir, 'hd') } });
    const r = await runPlay(play(ns3, 'hello'));
    expect(r.status, r.msg).toBe('changed');
    expect(r.helm).toHaveLength(1);
    expect(r.helm[0]).not.toContain('--disable-openapi-validation');
    // helm 4 upgrades such a release client-side, where --force-conflicts is refused; its
    // three-way merge repairs live drift by itself.
    expect(r.helm[0]).not.toContain('--force-conflicts');
    const greeting = async (): Promise<string> => (await kubectl(['get', 'configmap', 'good', '-n', ns3, '-o', 'jsonpath={.data.greeting}'], { context: 'sandbox-1' })).stdout;
    expect(await greeting()).toBe('hello');
    await kubectl(['patch', 'configmap', 'good', '-n', ns3, '--type', 'merge', '-p', '{"data":{"greeting":"drifted"}}'], { context: 'sandbox-1' });
    const repaired = await runPlay(play(ns3, 'hello'));
    expect(repaired.status, repaired.msg).toBe('changed');
    expect(repaired.msg).toMatch(/live drift/);
    expect(await greeting()).toBe('hello');
    expect((await runPlay(play(ns3, 'hello'))).status).toBe('ok');
  });
});
